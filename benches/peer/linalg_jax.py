"""JAX's side of benches/linalg.rs: milliseconds per jitted decomposition, the same rows.

Run: python benches/peer/linalg_jax.py   (needs `pip install jax==0.10.2`)
Prints one `name: <ms per call>` line per row (best of 3 rounds); the Rust bench parses them.
Inputs are the bench's: a positive definite `x xᵀ / n + I` (cholesky, solve, eigh) or a
general `x` (svd, qr), x uniform in [-0.5, 0.5).
"""
import os
import sys
import time

os.environ["JAX_PLATFORMS"] = "cpu"
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

OPS = {
    "cholesky": lambda a, b: jnp.linalg.cholesky(a),
    "solve": lambda a, b: jnp.linalg.solve(a, b),
    "eigh": lambda a, b: jnp.linalg.eigh(a),
    "svd": lambda a, b: jnp.linalg.svd(a, full_matrices=False),
    "qr": lambda a, b: jnp.linalg.qr(a),
}


def best_ms(f, args, calls):
    jax.block_until_ready(f(*args))
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(calls):
            jax.block_until_ready(f(*args))
        best = min(best, (time.perf_counter() - t) / calls * 1e3)
    return best


def inputs(batch, n, dtype, positive):
    rng = np.random.default_rng(n)
    x = rng.uniform(-0.5, 0.5, batch + (n, n))
    if positive:
        x = x @ np.swapaxes(x, -1, -2) / n + np.eye(n)
    b = rng.uniform(-0.5, 0.5, batch + (n, 1))
    return jnp.asarray(x, dtype), jnp.asarray(b, dtype)


def main():
    for name, op in OPS.items():
        for n in (256, 1024):
            for dtype in ("float32", "float64"):
                a, b = inputs((), n, dtype, name in ("cholesky", "solve", "eigh"))
                calls = 10 if n == 256 else 2
                print(f"{name}_{n}_{dtype}: {best_ms(jax.jit(op), (a, b), calls):.4f}",
                      flush=True)
    for dtype in ("float32", "float64"):
        a, b = inputs((512,), 64, dtype, True)
        print(f"cholesky_512x64_{dtype}: {best_ms(jax.jit(OPS['cholesky']), (a, b), 10):.4f}",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
