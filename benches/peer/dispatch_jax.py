"""JAX's side of benches/dispatch.rs: microseconds per cached call of the same tiny function.

Run: python benches/peer/dispatch_jax.py [calls]   (needs `pip install jax==0.10.2`)
Prints one line per measurement, `name: <µs per call>`; the Rust bench parses them.

`dispatch_jax.py startup` instead measures this fresh process's `import jax` and then
`jax.devices()` (the client's creation: JAX loads its XLA library, libjax_common.so, during the
import), and `dispatch_jax.py dlopen` only the loading of libjax_common.so, in milliseconds.
"""
import sys
import time

if __name__ == "__main__" and sys.argv[1:2] == ["startup"]:
    _start = time.perf_counter()
    import jax

    _imported = time.perf_counter()
    jax.devices()
    _ready = time.perf_counter()
    print(f"jax_import_ms: {(_imported - _start) * 1e3:.3f}")
    print(f"jax_devices_ms: {(_ready - _imported) * 1e3:.3f}")
    sys.exit(0)

if __name__ == "__main__" and sys.argv[1:2] == ["dlopen"]:
    import ctypes
    import importlib.util
    import os

    _lib = os.path.join(
        os.path.dirname(importlib.util.find_spec("jaxlib").origin), "libjax_common.so"
    )
    _start = time.perf_counter()
    ctypes.CDLL(_lib)
    print(f"jax_dlopen_alone_ms: {(time.perf_counter() - _start) * 1e3:.3f}")
    sys.exit(0)

import jax
import jax.numpy as jnp
import numpy as np


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    f = jax.jit(lambda x: x + 1.0)
    x = jnp.arange(4, dtype=jnp.float32)
    f(x).block_until_ready()  # compile
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            f(x).block_until_ready()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    print(f"jax_call_block_until_ready_us: {best:.3f}")
    # Eager (op-by-op) dispatch: an array plus an array, and an array times a Python scalar.
    y = jnp.ones(4, dtype=jnp.float32)
    for name, op in (("add", lambda z: z + y), ("mul_scalar", lambda z: z * 1.0001)):
        z = op(x)
        best = float("inf")
        for _ in range(5):
            z = x
            t0 = time.perf_counter()
            for _ in range(calls):
                z = op(z)
            z.block_until_ready()
            best = min(best, (time.perf_counter() - t0) / calls * 1e6)
        print(f"jax_eager_{name}_us: {best:.3f}")
    # Read-back of a ready array. A jax.Array keeps its host copy after the first read, so a
    # repeated float(x) of one array measures that cache ("_cached"); the main figure reads
    # each of `n` fresh ready arrays once, as jaxrs (which keeps no host copy) always does.
    n = min(calls, 2000)
    double = jax.jit(lambda v: v * 2.0)
    for name, make, read in (
        ("float_ready_scalar", lambda i: double(jnp.full((), i, jnp.float32)), float),
        ("asarray_ready_f32_1000", lambda i: double(jnp.arange(1000, dtype=jnp.float32) + i),
         np.asarray),
    ):
        best = float("inf")
        for _ in range(5):
            xs = [make(i) for i in range(n)]
            for a in xs:
                a.block_until_ready()
            t0 = time.perf_counter()
            for a in xs:
                read(a)
            best = min(best, (time.perf_counter() - t0) / n * 1e6)
        print(f"jax_{name}_us: {best:.3f}")
        a = make(0)
        read(a)
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(calls):
                read(a)
            best = min(best, (time.perf_counter() - t0) / calls * 1e6)
        print(f"jax_{name}_us_cached: {best:.3f}")
    print(f"jax_version: {jax.__version__}")


if __name__ == "__main__":
    main()
