#!/usr/bin/env python3
"""Golden dtypes for jaxrs's promotion rule: JAX 0.10.2 with `jax_enable_x64` on.

Usage (from the repository root):

    pip install jax==0.10.2 numpy        # CPU jax is enough; ml_dtypes comes with jax
    python tests/golden/gen_promotion.py # rewrites tests/golden/promotion.json

Three sections, read by tests/promotion.rs:

- `pairs`: for every ordered pair of the 13 dtypes, each operand weak or strong (26 x 26
  cases), the dtype and weak type of `jnp.add(a, b)` and of `jnp.result_type(a, b)` (with
  `return_weak_type_flag`). A weak operand is a 0-d array converted with `weak_type=True`, as a
  Python scalar is (jaxrs: a Rust scalar, or a weakly typed array).
- `literals`: a Python int or float meeting an integer array, or filling one: JAX wraps an int
  into the array's dtype (`uint8 [250, 2] + 300` is `[38, 46]`) and converts a float by
  truncation toward zero, saturating, NaN to 0.
- `reductions`: the dtype and values of sum, prod, cumsum, cumprod, mean, var and std of each
  dtype (`sum` of four int8 100s is 400, in int64).

Deterministic: no random inputs.
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"

import numpy as np  # noqa: E402
import jax  # noqa: E402

JAX_VERSION = "0.10.2"
if jax.__version__ != JAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"gen_promotion.py: expected jax=={JAX_VERSION}, found {jax.__version__} "
             "(pass --any-jax-version to run anyway)")

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
from jax._src import dtypes as jdtypes  # noqa: E402
from jax._src.lax.lax import _convert_element_type  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

DTYPES = {
    "bool": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float16": np.dtype(np.float16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "complex64": np.dtype(np.complex64),
    "complex128": np.dtype(np.complex128),
}
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def name_of(dt):
    for k, v in DTYPES.items():
        if v == np.dtype(dt):
            return k
    raise ValueError(f"unsupported dtype {dt}")


def operand(name, weak):
    return _convert_element_type(np.array(1, DTYPES[name]), DTYPES[name], weak_type=weak)


def json_value(v, dt):
    if dt == "bool":
        return bool(v)
    if dt in INTS:
        return int(v)
    return float(v)


def arr(x):
    x = np.asarray(x)
    dt = name_of(x.dtype)
    return {"dtype": dt, "shape": list(x.shape),
            "data": [json_value(v, dt) for v in x.reshape(-1)]}


def gen_pairs():
    cases = []
    for a in DTYPES:
        for aw in (False, True):
            for b in DTYPES:
                for bw in (False, True):
                    x, y = operand(a, aw), operand(b, bw)
                    s = jnp.add(x, y)
                    rt, rt_weak = jdtypes.result_type(x, y, return_weak_type_flag=True)
                    cases.append({
                        "a": [a, aw], "b": [b, bw],
                        "add": [name_of(s.dtype), bool(s.weak_type)],
                        "result_type": [name_of(rt), bool(rt_weak)],
                    })
    return cases


def gen_literals():
    """A Python scalar meeting (or filling) an integer array."""
    cases = []
    ops = {
        "add": lambda x, s: x + s,
        "mul": lambda x, s: x * s,
        "maximum": lambda x, s: jnp.maximum(x, s),
        "where": lambda x, s: jnp.where(x > 100, x, s),
        "at_set": lambda x, s: x.at[0].set(s),
    }
    scalars = [300, -1, 70000, -70000, 2**40 + 3, -(2**40) - 5, 2**63 - 1, -(2**63)]
    for dt in INTS:
        base = np.array([120 if dt == "int8" else 250, 2], DTYPES[dt])
        for op, f in ops.items():
            for s in scalars:
                out = f(jnp.asarray(base), s)
                assert out.dtype == DTYPES[dt], (dt, op, s, out.dtype)
                cases.append({"op": op, "x": arr(base), "scalar": s, "output": arr(out)})
    # A float filling an integer array: truncation toward zero, saturation, NaN to 0.
    floats = [7.9, -7.9, 300.7, -1.5, 1e10, -1e10, 1e30, float("inf"), float("-inf"),
              float("nan")]
    for dt in INTS + ("bool",):
        for v in floats:
            out = jnp.full((2,), v, DTYPES[dt])
            cases.append({"op": "full", "value": "nan" if v != v else
                          ("inf" if v == float("inf") else
                           ("-inf" if v == float("-inf") else v)),
                          "dtype": dt, "output": arr(out)})
    return cases


def gen_reductions():
    cases = []
    values = {
        "bool": [True, False, True, True],
        "int8": [100, 100, 100, 100],
        "int16": [30000, 30000, -7, 2],
        "int32": [2**30, 2**30, 2**30, 3],
        "int64": [2**40, 5, -3, 7],
        "uint8": [200, 200, 3, 1],
        "uint16": [60000, 60000, 5, 2],
        "uint32": [2**31, 2**31, 7, 1],
        "uint64": [2**40, 5, 3, 7],
        "bfloat16": [0.5, 1.5, 2.0, -1.0],
        "float16": [0.5, 1.5, 2.0, -1.0],
        "float32": [0.5, 1.5, 2.0, -1.0],
        "float64": [0.5, 1.5, 2.0, -1.0],
    }
    ops = {
        "sum": lambda x: jnp.sum(x),
        "prod": lambda x: jnp.prod(x),
        "cumsum": lambda x: jnp.cumsum(x),
        "cumprod": lambda x: jnp.cumprod(x),
        "max": lambda x: jnp.max(x),
        "mean": lambda x: jnp.mean(x),
        "var": lambda x: jnp.var(x),
        "std": lambda x: jnp.std(x),
    }
    for dt, v in values.items():
        x = np.array(v, DTYPES[dt])
        for op, f in ops.items():
            out = f(jnp.asarray(x))
            cases.append({"op": op, "x": arr(x), "output": arr(out)})
    return cases


def main():
    sections = {"pairs": gen_pairs(), "literals": gen_literals(),
                "reductions": gen_reductions()}
    parts = []
    for key, cases in sections.items():
        lines = ",\n".join(json.dumps(c, allow_nan=False) for c in cases)
        parts.append(f'"{key}": [\n{lines}\n]')
    text = '{"jax_version": "%s",\n%s}\n' % (jax.__version__, ",\n".join(parts))
    path = os.path.join(HERE, "promotion.json")
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}: " + ", ".join(f"{len(c)} {k}" for k, c in sections.items()))


if __name__ == "__main__":
    main()
