"""JAX's side of benches/fft.rs: milliseconds per jitted transform, the same rows.

Run: python benches/peer/fft_jax.py   (needs `pip install jax==0.10.2`)
Prints one `name: <ms per call>` line per row (best of 3 rounds); the Rust bench parses them.
The signal is the bench's: `sin(377 t) + 0.5 cos(1021 t) + t` for `t = i / n`.
"""
import os
import sys
import time

os.environ["JAX_PLATFORMS"] = "cpu"
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def best_ms(f, x, calls):
    jax.block_until_ready(f(x))
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(calls):
            jax.block_until_ready(f(x))
        best = min(best, (time.perf_counter() - t) / calls * 1e3)
    return best


def main():
    n = 1 << 20
    t = np.arange(n) / n
    signal = np.sin(t * 377.0) + 0.5 * np.cos(t * 1021.0) + t
    for dtype in ("complex64", "complex128"):
        x = jnp.asarray(signal, dtype)
        print(f"fft_1m_{dtype}: {best_ms(jax.jit(jnp.fft.fft), x, 5):.4f}", flush=True)
    x = jnp.asarray(signal, "float32")
    print(f"rfft_1m_float32: {best_ms(jax.jit(jnp.fft.rfft), x, 5):.4f}", flush=True)
    x = jnp.asarray(signal.reshape(1024, 1024), "complex64")
    print(f"fft2_1024_complex64: {best_ms(jax.jit(jnp.fft.fft2), x, 5):.4f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
