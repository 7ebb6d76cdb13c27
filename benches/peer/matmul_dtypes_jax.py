"""JAX's side of benches/matmul_dtypes.rs: a dense layer's matmul at LLM shapes, per dtype.

Run: python benches/peer/matmul_dtypes_jax.py   (needs jax==0.10.2)
Prints one `name: <us per call>` line per row (best of rounds, each call awaited); the Rust
bench parses them. Rows are `<kind>_<m>` for activations `[m, 768]` and a kernel
`[768, 3072]`, m in 1, 8, 32 (decode) and 512 (prefill):

- `f32`: `x @ w` in f32.
- `bf16`: `x @ w` with both in bf16, as a JAX user writes it (jaxlib's XLA upcasts the
  operands to f32 on CPU).
- `bf16_pf32`: `lax.dot_general(x, w, preferred_element_type=f32)` in bf16, rounded to bf16:
  the form that reaches XLA's bf16 kernels (what jaxrs lowers a bf16 dot to).
- `int8`: weight-only int8, as JAX users write it: `(x @ w_q.astype(f32)) * scale`.
- `int8_dyn`: the activations quantized per row on the fly, `s8 x s8 -> s32`, rescaled (the
  form jaxrs's `Dense` int8 layer runs).
"""
import os
import sys
import time

os.environ["JAX_PLATFORMS"] = "cpu"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

K, N = 768, 3072
MS = (1, 8, 32, 512)
DN = (((1,), (0,)), ((), ()))


def int8_dyn(x, wq, scale):
    amax = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    xs = jnp.where(amax == 0, 1.0, amax / 127.0)
    xq = jnp.round(x / xs).astype(jnp.int8)
    acc = lax.dot_general(xq, wq, DN, preferred_element_type=jnp.int32)
    return acc.astype(jnp.float32) * xs * scale


KINDS = {
    "f32": lambda x, w, wq, s: x @ w,
    "bf16": lambda x, w, wq, s: x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16),
    "bf16_pf32": lambda x, w, wq, s: lax.dot_general(
        x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), DN,
        preferred_element_type=jnp.float32).astype(jnp.bfloat16),
    "int8": lambda x, w, wq, s: (x @ wq.astype(jnp.float32)) * s,
    "int8_dyn": lambda x, w, wq, s: int8_dyn(x, wq, s),
}


def best_us(f, args, calls, rounds=5):
    jax.block_until_ready(f(*args))
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            jax.block_until_ready(f(*args))
        best = min(best, (time.perf_counter() - t) / calls * 1e6)
    return best


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else None
    rng = np.random.default_rng(0)
    w = rng.uniform(-0.05, 0.05, (K, N)).astype(np.float32)
    scale = np.abs(w).max(axis=0) / 127.0
    wq = np.round(w / scale).astype(np.int8)
    for m in MS:
        x = rng.uniform(-1.0, 1.0, (m, K)).astype(np.float32)
        for kind, f in KINDS.items():
            row = f"{kind}_{m}"
            if only and only not in row:
                continue
            # Operands already in the row's dtype on the device: only the product is timed.
            xs = jnp.asarray(x, jnp.bfloat16 if kind.startswith("bf16") else jnp.float32)
            ws = jnp.asarray(w, jnp.bfloat16 if kind.startswith("bf16") else jnp.float32)
            args = (xs, ws, jnp.asarray(wq), jnp.asarray(scale))
            calls = 10 if m == 512 else 50
            print(f"{row}: {best_us(jax.jit(f), args, calls):.1f}", flush=True)


if __name__ == "__main__":
    main()
