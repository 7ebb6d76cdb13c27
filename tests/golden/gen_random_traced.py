#!/usr/bin/env python3
"""Golden values for keys made from traced integers: `jax.random.key`/`PRNGKey` and
`jax.random.fold_in` on Python ints and on integer arrays, eagerly, under `jit` and inside
`lax.scan`.

Usage (from the repository root):

    python tests/golden/gen_random_traced.py   # rewrites tests/golden/random_traced.json

Run with `jax_enable_x64` (jaxrs's rule) on the CPU backend. Keys are raw `uint32[2]` arrays;
float draws are stored as the integers of their float32 bit patterns.
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

JAX_VERSION = "0.10.2"
if jax.__version__ != JAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"expected jax {JAX_VERSION}, found {jax.__version__} (--any-jax-version to override)")
jax.config.update("jax_enable_x64", True)

DTYPES = {"int32": jnp.int32, "int64": jnp.int64, "uint32": jnp.uint32, "int8": jnp.int8,
          "uint8": jnp.uint8}


def words(x):
    return [int(v) for v in np.asarray(x, dtype=np.uint32).reshape(-1)]


def f32_bits(x):
    return [int(v) for v in np.asarray(x, dtype=np.float32).view(np.uint32).reshape(-1)]


# `PRNGKey(seed)` for a Python int (jaxrs: a Rust integer).
KEY_INT = [{"seed": s, "key": words(jax.random.PRNGKey(s))}
           for s in [0, 42, -1, -5, 7 + (1 << 32), 3 + (1 << 40)]]

# `PRNGKey(seed)` for a 0-d integer array (jaxrs: an `Array`, eagerly and under `jit`).
KEY_ARRAY = []
for dtype, seeds in [("int32", [0, 7, -5]), ("int64", [-5, 3 + (1 << 40)]),
                     ("uint32", [7, 4000000000]), ("int8", [-3]), ("uint8", [200])]:
    for s in seeds:
        seed = jnp.asarray(s, DTYPES[dtype])
        KEY_ARRAY.append({"dtype": dtype, "seed": s, "key": words(jax.random.PRNGKey(seed)),
                          "jit": words(jax.jit(jax.random.PRNGKey)(seed))})

BASE = jax.random.PRNGKey(3)

# `fold_in(PRNGKey(3), data)` for a Python int.
FOLD_INT = [{"data": d, "key": words(jax.random.fold_in(BASE, d))}
            for d in [0, 1, 7, 0xDEADBEEF, (1 << 32) - 1]]

# ... and for a 0-d integer array.
FOLD_ARRAY = []
for dtype, data in [("int32", [5, -1]), ("int64", [5 + (1 << 32)]), ("uint32", [4000000000]),
                    ("uint8", [250])]:
    for d in data:
        x = jnp.asarray(d, DTYPES[dtype])
        FOLD_ARRAY.append({"dtype": dtype, "data": d, "key": words(jax.random.fold_in(BASE, x)),
                           "jit": words(jax.jit(jax.random.fold_in)(BASE, x))})


# A jitted training step that folds its (traced) step count into the key and draws.
@jax.jit
def step(key, t):
    return jax.random.uniform(jax.random.fold_in(key, t), (3,), jnp.float32)


STEPS = [{"t": t, "bits": f32_bits(step(BASE, jnp.int32(t)))} for t in range(5)]


# A scan body that makes keys from its index: `fold_in(key, i)` and `key(i)`, and draws.
def body(carry, i):
    k = jax.random.fold_in(BASE, i)
    return carry, (k, jax.random.PRNGKey(i), jax.random.normal(k, (2,), jnp.float32))


_, (fold_keys, index_keys, draws) = jax.lax.scan(body, None, jnp.arange(6, dtype=jnp.int32))
SCAN = {"n": 6, "fold_in": words(fold_keys), "key": words(index_keys), "normal": f32_bits(draws)}

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random_traced.json")
with open(path, "w") as f:
    json.dump({"jax_version": jax.__version__, "base_seed": 3, "key_int": KEY_INT,
               "key_array": KEY_ARRAY, "fold_int": FOLD_INT, "fold_array": FOLD_ARRAY,
               "steps": STEPS, "scan": SCAN}, f, indent=1)
print(f"wrote {path}")
