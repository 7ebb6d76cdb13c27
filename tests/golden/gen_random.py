#!/usr/bin/env python3
"""Golden values for `jaxrs::random`: JAX 0.10.2's `jax.random` on raw threefry2x32 keys.

Usage (from the repository root):

    python tests/golden/gen_random.py      # rewrites tests/golden/random.json

JAX's defaults (x64 disabled, jax_threefry_partitionable=True, the CPU backend). Every sample is
stored bit for bit: keys and u32 bits as integers, floats as the integer of their bit pattern
(u32 for float32, u16 for bfloat16/float16), integers as integers, bools as 0/1. Each case
names the function, the seed of its key (`jax.random.PRNGKey(seed)`), the function's
arguments and the output's dtype and shape. `vmap` cases map the function over a batch of
keys, one per seed, with `jax.vmap`.
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
assert jax.config.jax_threefry_partitionable, "JAX's default is the partitionable threefry"

DTYPES = {"float64": jnp.float64, "float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16,
          "int32": jnp.int32, "uint32": jnp.uint32, "int8": jnp.int8, "uint8": jnp.uint8,
          "int16": jnp.int16, "uint16": jnp.uint16, "int64": jnp.int64, "uint64": jnp.uint64}


def bits_of(x):
    x = np.asarray(x)
    if x.dtype == np.float64:
        return x.view(np.int64).ravel().tolist()
    if x.dtype == np.float32:
        return x.view(np.uint32).ravel().tolist()
    if x.dtype in (jnp.bfloat16, np.float16):
        return x.view(np.uint16).ravel().tolist()
    if x.dtype == np.bool_:
        return x.astype(np.int64).ravel().tolist()
    return x.astype(np.int64).ravel().tolist()


def sample(fn, args, key):
    d = args
    dt = DTYPES.get(d.get("dtype"))
    shape = tuple(d.get("shape", ()))
    if fn == "key":
        return key
    if fn == "split":
        return jax.random.split(key, d["n"])
    if fn == "fold_in":
        return jax.random.fold_in(key, d["data"])
    if fn == "uniform":
        return jax.random.uniform(key, shape, dt)
    if fn == "uniform_range":
        return jax.random.uniform(key, shape, dt, d["minval"], d["maxval"])
    if fn == "normal":
        return jax.random.normal(key, shape, dt)
    if fn == "truncated_normal":
        return jax.random.truncated_normal(key, d["lower"], d["upper"], shape, dt)
    if fn == "bernoulli":
        return jax.random.bernoulli(key, d["p"], shape)
    if fn == "categorical":
        logits = jnp.asarray(np.array(d["logits"], np.float32).reshape(d["logits_shape"]))
        return jax.random.categorical(key, logits, d["axis"])
    if fn == "permutation":
        return jax.random.permutation(key, d["n"])
    if fn == "randint":
        return jax.random.randint(key, shape, d["minval"], d["maxval"], dt)
    raise ValueError(fn)


CASES = []


def case(fn, seeds, vmap=False, **args):
    if args.get("dtype") == "float64":
        # float64 samples need x64 (jaxrs has it always); the other cases are JAX's defaults.
        jax.config.update("jax_enable_x64", True)
        try:
            return case_of(fn, seeds, vmap, **args)
        finally:
            jax.config.update("jax_enable_x64", False)
    return case_of(fn, seeds, vmap, **args)


def case_of(fn, seeds, vmap=False, **args):
    if vmap:
        keys = jnp.stack([jax.random.PRNGKey(s) for s in seeds])
        out = jax.jit(jax.vmap(lambda k: sample(fn, args, k)))(keys)
    else:
        assert len(seeds) == 1
        out = sample(fn, args, jax.random.PRNGKey(seeds[0]))
    out = np.asarray(out)
    CASES.append({
        "name": f"{fn}{'_vmap' if vmap else ''}_{len(CASES)}",
        "fn": fn, "seeds": seeds, "vmap": vmap, "args": args,
        "dtype": str(out.dtype), "shape": list(out.shape), "bits": bits_of(out),
    })


SEEDS = [0, 1, 42, 123456789, 2**31 - 1, 2**32 - 1]
for s in SEEDS:
    case("key", [s])
    for n in (1, 2, 3, 5):
        case("split", [s], n=n)
    for data in (0, 1, 7, 0xDEADBEEF):
        case("fold_in", [s], data=data)
for s in (0, 42, 2**32 - 1):
    for shape in ([], [1], [3], [7], [2, 3], [1000], [4, 5, 6]):
        case("uniform", [s], shape=shape, dtype="float32")
        case("normal", [s], shape=shape, dtype="float32")
    for dt in ("bfloat16", "float16"):
        case("uniform", [s], shape=[257], dtype=dt)
        case("normal", [s], shape=[257], dtype=dt)
    case("uniform", [s], shape=[257], dtype="float64")
    case("normal", [s], shape=[257], dtype="float64")
    case("uniform_range", [s], shape=[64], dtype="float64", minval=-3.0, maxval=3.0)
    case("truncated_normal", [s], shape=[100], dtype="float64", lower=-1.0, upper=2.5)
    case("uniform_range", [s], shape=[100], dtype="float32", minval=-3.0, maxval=5.5)
    case("uniform_range", [s], shape=[64], dtype="bfloat16", minval=2.0, maxval=3.0)
    case("truncated_normal", [s], shape=[500], dtype="float32", lower=-2.0, upper=2.0)
    case("truncated_normal", [s], shape=[3, 7], dtype="float32", lower=-0.5, upper=1.5)
    case("truncated_normal", [s], shape=[200], dtype="bfloat16", lower=-2.0, upper=2.0)
    case("bernoulli", [s], shape=[300], p=0.3)
    case("bernoulli", [s], shape=[2, 5], p=0.5)
    rng = np.random.default_rng(s % 1000)
    logits = rng.normal(size=(4, 10)).astype(np.float32)
    case("categorical", [s], logits=logits.ravel().tolist(), logits_shape=[4, 10], axis=-1)
    case("categorical", [s], logits=logits.ravel().tolist(), logits_shape=[4, 10], axis=0)
    case("categorical", [s], logits=[0.0, 1.0, 2.0], logits_shape=[3], axis=0)
    for n in (1, 2, 10, 100, 1625, 1626, 3000):
        case("permutation", [s], n=n)
    case("randint", [s], shape=[200], dtype="int32", minval=0, maxval=10)
    case("randint", [s], shape=[3, 4], dtype="int32", minval=-1000, maxval=12345)
    case("randint", [s], shape=[50], dtype="int32", minval=-(2**31), maxval=2**31 - 1)
    case("randint", [s], shape=[20], dtype="int32", minval=5, maxval=5)
    case("randint", [s], shape=[64], dtype="uint8", minval=0, maxval=256)
    case("randint", [s], shape=[64], dtype="int8", minval=-100, maxval=100)
    case("randint", [s], shape=[30], dtype="uint32", minval=3, maxval=1000)

BATCH = [0, 1, 42, 7]
case("split", BATCH, vmap=True, n=3)
case("fold_in", BATCH, vmap=True, data=99)
case("uniform", BATCH, vmap=True, shape=[5], dtype="float32")
case("normal", BATCH, vmap=True, shape=[2, 3], dtype="float32")
case("truncated_normal", BATCH, vmap=True, shape=[6], dtype="float32", lower=-1.0, upper=2.0)
case("bernoulli", BATCH, vmap=True, shape=[9], p=0.7)
case("categorical", BATCH, vmap=True, logits=[0.5, -1.0, 2.0, 0.0], logits_shape=[4], axis=0)
case("permutation", BATCH, vmap=True, n=20)
case("randint", BATCH, vmap=True, shape=[8], dtype="int32", minval=-5, maxval=17)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random.json")
with open(path, "w") as f:
    json.dump({"jax_version": jax.__version__, "cases": CASES}, f, separators=(",", ":"))
    f.write("\n")
print(f"{len(CASES)} cases -> {path}")
