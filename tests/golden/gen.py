#!/usr/bin/env python3
"""Golden-value generator for jaxrs: runs JAX on small inputs and writes the results as JSON.

Usage (from the repository root):

    pip install jax==0.10.2 numpy      # CPU jax is enough; ml_dtypes comes with jax
    python tests/golden/gen.py         # rewrites tests/golden/ops_*.json

Generated with JAX 0.10.2 on the CPU backend (the script forces JAX_PLATFORMS=cpu and refuses
another JAX version unless given --any-jax-version). Output is deterministic: every case draws its
inputs from numpy's default_rng seeded with the crc32 of the case name, so running the script twice
gives byte-identical files.

x64 is enabled (jax_enable_x64), as jaxrs's rule is JAX's with x64: float64/int64 cases are
exact, every case computes in its own explicit dtype (a float32 case has float32 inputs and a
float32 output; the script asserts the output dtype of every case), and the weak-scalar cases
promote as x64 JAX does (a Python float meeting an int32 array gives a weak float64).

The file format is described in tests/golden/README.md.
"""

import json
import math
import os
import sys
import zlib

os.environ["JAX_PLATFORMS"] = "cpu"

import numpy as np  # noqa: E402

import jax  # noqa: E402

JAX_VERSION = "0.10.2"
if jax.__version__ != JAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"gen.py: expected jax=={JAX_VERSION}, found {jax.__version__} "
             "(pass --any-jax-version to run anyway)")

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
import ml_dtypes  # noqa: E402

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
}
FLOATS = ("bfloat16", "float16", "float32", "float64")
INTS = ("int8", "int32", "int64", "uint8", "uint32")


def dname(dt):
    dt = np.dtype(dt)
    for k, v in DTYPES.items():
        if v == dt:
            return k
    raise ValueError(f"unsupported dtype {dt}")


# ---------------------------------------------------------------------------------------------
# Tolerances: (rtol, atol); a value passes when |got - want| <= atol + rtol * |want|.

TOL = {
    # correctly rounded arithmetic (add, mul, div, ...), one or two roundings
    "arith": {"float32": (1e-6, 1e-6), "float64": (1e-12, 1e-12),
              "float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2)},
    # transcendental functions (exp, log, tanh, erf, pow, gelu, ...)
    "transc": {"float32": (2e-5, 2e-6), "float64": (1e-11, 1e-12),
               "float16": (5e-3, 1e-3), "bfloat16": (3e-2, 1e-2)},
    # reductions, softmax, matmul (summation order may differ)
    "reduce": {"float32": (1e-5, 1e-5), "float64": (1e-11, 1e-11),
               "float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)},
}


def tol(kind, dtype):
    """Tolerance for a case of this kind whose output has this dtype (exact for ints/bools)."""
    if kind == "exact" or dtype not in FLOATS:
        return (0.0, 0.0)
    return TOL[kind][dtype]


# ---------------------------------------------------------------------------------------------
# Encoding


def enc_value(x, dt):
    if dt == "bool":
        return bool(x)
    if dt in INTS:
        return int(x)
    f = float(x)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def enc(a):
    a = np.asarray(a)
    dt = dname(a.dtype)
    return {"dtype": dt, "shape": list(a.shape),
            "data": [enc_value(x, dt) for x in a.reshape(-1)]}


class Scalar:
    """A weakly typed Python scalar operand (a Rust scalar literal)."""

    def __init__(self, v):
        self.v = v


# ---------------------------------------------------------------------------------------------
# Case collection

FAMILIES = {k: [] for k in ("elementwise", "reduce", "shape", "index", "linalg", "misc",
                            "numeric", "sort", "scatter", "einsum")}
NAMES = set()


def case(family, name, op, params, inputs, fn, kind="arith", out_dtype=None, out_weak=None):
    """Runs fn on the inputs (numpy arrays or Scalar) and records the case.

    out_dtype: the dtype the output must have (default: that of the first array input).
    """
    assert name not in NAMES, f"duplicate case name {name}"
    NAMES.add(name)
    args = [x.v if isinstance(x, Scalar) else jnp.asarray(x) for x in inputs]
    for x, a in zip(inputs, args):
        if not isinstance(x, Scalar):
            assert a.dtype == x.dtype, (name, a.dtype, x.dtype)
    out = fn(*args)
    if out_dtype is None:
        out_dtype = next(dname(x.dtype) for x in inputs if not isinstance(x, Scalar))
    got = dname(out.dtype)
    assert got == out_dtype, f"{name}: output dtype {got}, expected {out_dtype}"
    rtol, atol = tol(kind, out_dtype)
    c = {"name": name, "op": op, "params": params,
         "inputs": [{"scalar": x.v} if isinstance(x, Scalar) else enc(x) for x in inputs],
         "output": enc(out), "rtol": rtol, "atol": atol}
    if out_weak is not None:
        assert bool(out.weak_type) == out_weak, (name, out.weak_type)
        c["output_weak_type"] = out_weak
    FAMILIES[family].append(c)


def rng_for(name, salt=0):
    return np.random.default_rng(zlib.crc32(name.encode()) + salt)


def uniform(rng, shape, dt, lo=-3.0, hi=3.0):
    return np.asarray(rng.uniform(lo, hi, size=tuple(shape))).astype(DTYPES[dt])


def ints(rng, shape, dt, lo=-20, hi=20):
    return np.asarray(rng.integers(lo, hi + 1, size=tuple(shape))).astype(DTYPES[dt])


def bools(rng, shape):
    return np.asarray(rng.integers(0, 2, size=tuple(shape))).astype(np.bool_)


def nonzero_ints(rng, shape, dt, lo=1, hi=6):
    mag = rng.integers(lo, hi + 1, size=tuple(shape))
    sign = rng.choice([-1, 1], size=tuple(shape))
    return np.asarray(mag * sign).astype(DTYPES[dt])


def away_from_zero(rng, shape, dt, lo=0.5, hi=2.0):
    mag = rng.uniform(lo, hi, size=tuple(shape))
    sign = rng.choice([-1.0, 1.0], size=tuple(shape))
    return np.asarray(mag * sign).astype(DTYPES[dt])


def with_specials(rng, specials, n, dt, lo, hi):
    """A 1-D array: the special values first, then uniform(lo, hi) up to n elements."""
    rest = rng.uniform(lo, hi, size=max(0, n - len(specials)))
    return np.asarray(list(specials) + list(rest)).astype(DTYPES[dt])


def shp(s):
    return "x".join(map(str, s)) if s else "0d"


def arr(values, dt):
    return np.asarray(values).astype(DTYPES[dt])


# ---------------------------------------------------------------------------------------------
# Elementwise


def lax_bcast(f):
    """A lax binary op (no implicit broadcasting) applied with numpy broadcasting."""
    def g(x, y):
        x, y = jnp.broadcast_arrays(x, y)
        return f(x, y)
    return g


def true_divide(x, y):
    """`jnp.true_divide` as with x64 disabled, the promotion jaxrs follows: integers divide as
    float32 (int64, which needs x64, as float64). This script enables x64, under which
    `jnp.true_divide` would make every integer float64."""
    if jnp.issubdtype(x.dtype, jnp.integer):
        f = jnp.float64 if x.dtype == jnp.int64 else jnp.float32
        return lax_bcast(lax.div)(x.astype(f), y.astype(f))
    return jnp.true_divide(x, y)


INT_DIV_DTYPE = {"int8": "float32", "int32": "float32", "uint8": "float32", "uint32": "float32",
                 "int64": "float64"}


def out_dtype_of(op, dt):
    return INT_DIV_DTYPE[dt] if op == "div" and dt in INT_DIV_DTYPE else None


BINARY = {
    "add": (jnp.add, "arith"),
    "sub": (jnp.subtract, "arith"),
    "mul": (jnp.multiply, "arith"),
    "div": (lambda x, y: true_divide(x, y), "arith"),  # `/`: integers true-divide
    "floor_divide": (jnp.floor_divide, "arith"),       # `//`
    "rem": (jnp.remainder, "arith"),                   # `%`: the sign of the divisor
    "fmod": (jnp.fmod, "arith"),                       # C fmod: the sign of the dividend
    "pow": (jnp.power, "transc"),
    "maximum": (jnp.maximum, "exact"),
    "minimum": (jnp.minimum, "exact"),
}
COMPARE = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less, "le": jnp.less_equal,
           "gt": jnp.greater, "ge": jnp.greater_equal}
LOGICAL = {"logical_and": jnp.logical_and, "logical_or": jnp.logical_or}

SHAPES_FULL = [
    ("0d", [], []),
    ("1d_5", [5], [5]),
    ("2d_3x4", [3, 4], [3, 4]),
    ("3d_2x3x4", [2, 3, 4], [2, 3, 4]),
    ("bcast_3x1_4", [3, 1], [4]),
    ("bcast_2x1x3_1x4x1", [2, 1, 3], [1, 4, 1]),
    ("bcast_0d_2x3", [], [2, 3]),
    ("size1_1x5", [1, 5], [1, 5]),
    ("size0_0x3", [0, 3], [0, 3]),
    ("size0_bcast_0x3_3", [0, 3], [3]),
]
SHAPES_FEW = [
    ("1d_6", [6], [6]),
    ("2d_3x4", [3, 4], [3, 4]),
    ("bcast_3x1_4", [3, 1], [4]),
]


DIVISIONS = ("div", "floor_divide", "rem", "fmod")


def binary_inputs(op, dt, rng, sa, sb):
    if dt in INTS:
        if op in DIVISIONS:
            return ints(rng, sa, dt, -20, 20), nonzero_ints(rng, sb, dt)
        return ints(rng, sa, dt), ints(rng, sb, dt)
    if op in ("div", "floor_divide"):
        return uniform(rng, sa, dt), away_from_zero(rng, sb, dt)
    if op in ("rem", "fmod"):
        return uniform(rng, sa, dt, -5, 5), away_from_zero(rng, sb, dt)
    if op == "pow":
        return uniform(rng, sa, dt, 0.2, 3.0), uniform(rng, sb, dt, -2.0, 2.0)
    return uniform(rng, sa, dt), uniform(rng, sb, dt)


def gen_binary():
    fam = "elementwise"
    for op, (fn, kind) in BINARY.items():
        dts = ["float32", "bfloat16", "float16", "float64"] + ([] if op == "pow" else ["int32"])
        for dt in dts:
            for sname, sa, sb in (SHAPES_FULL if dt == "float32" else SHAPES_FEW):
                name = f"{op}/{dt}/{sname}"
                x, y = binary_inputs(op, dt, rng_for(name), sa, sb)
                case(fam, name, op, {}, [x, y], fn, kind, out_dtype=out_dtype_of(op, dt))
    # other integer dtypes
    for op in ("add", "sub", "mul", "maximum", "minimum") + DIVISIONS:
        for dt, lo, hi in (("int8", -10, 10), ("uint8", 0, 15), ("uint32", 0, 1000),
                           ("int64", -10**12, 10**12)):
            name = f"{op}/{dt}/1d_5"
            r = rng_for(name)
            x = ints(r, [5], dt, lo, hi)
            if op in DIVISIONS:
                y = ints(r, [5], dt, 1, 7) if dt.startswith("u") else nonzero_ints(r, [5], dt, 1, 7)
            elif op == "sub" and dt.startswith("u"):
                x = ints(r, [5], dt, hi // 2, hi)
                y = ints(r, [5], dt, lo, hi // 2)
            elif op == "mul":
                x = ints(r, [5], dt, lo // 2, hi // 2) if dt != "int64" else ints(r, [5], dt, -10**5, 10**5)
                y = ints(r, [5], dt, 0, 3) if dt.startswith("u") else ints(r, [5], dt, -3, 3)
            else:
                y = ints(r, [5], dt, lo, hi)
            case(fam, name, op, {}, [x, y], BINARY[op][0], "arith" if op == "div" else "exact",
                 out_dtype=out_dtype_of(op, dt))
    # integer edge cases (XLA semantics, identical on CPU and GPU)
    case(fam, "add/int32/overflow_wraps", "add", {},
         [arr([2**31 - 1, -2**31, 2**30], "int32"), arr([1, -1, 2**30], "int32")], jnp.add, "exact")
    case(fam, "add/uint8/overflow_wraps", "add", {},
         [arr([250, 255, 0], "uint8"), arr([10, 1, 0], "uint8")], jnp.add, "exact")
    case(fam, "sub/uint8/underflow_wraps", "sub", {},
         [arr([0, 3, 200], "uint8"), arr([1, 5, 100], "uint8")], jnp.subtract, "exact")
    trunc_x = arr([7, -7, 7, -7, 1, -1, 0], "int32")
    trunc_y = arr([2, 2, -2, -2, 3, 3, 5], "int32")
    zero_x, zero_y = arr([7, -7, 0, -2**31], "int32"), arr([0, 0, 0, -1], "int32")
    case(fam, "div/int32/true_divides", "div", {}, [trunc_x, trunc_y], BINARY["div"][0],
         "arith", out_dtype="float32")
    case(fam, "div/int32/by_zero_and_min_over_minus1", "div", {}, [zero_x, zero_y],
         BINARY["div"][0], "arith", out_dtype="float32")
    case(fam, "floor_divide/int32/floors", "floor_divide", {}, [trunc_x, trunc_y],
         jnp.floor_divide, "exact")
    case(fam, "floor_divide/int32/by_zero_and_min_over_minus1", "floor_divide", {},
         [zero_x, zero_y], jnp.floor_divide, "exact")
    sign_x = arr([7, -7, 7, -7, 6, -6], "int32")
    sign_y = arr([3, 3, -3, -3, 3, -3], "int32")
    by_zero = [arr([7, -7, 0], "int32"), arr([0, 0, 0], "int32")]
    float_x = arr([5.5, -5.5, 5.5, -5.5, 6.0, -0.0, 1.0, -1.0], "float32")
    float_y = arr([2.0, 2.0, -2.0, -2.0, 3.0, 1.0, "inf", "inf"], "float32")
    case(fam, "rem/int32/sign_of_divisor", "rem", {}, [sign_x, sign_y], jnp.remainder, "exact")
    case(fam, "rem/int32/by_zero", "rem", {}, by_zero, jnp.remainder, "exact")
    case(fam, "rem/float32/sign_of_divisor", "rem", {}, [float_x, float_y], jnp.remainder,
         "arith")
    case(fam, "fmod/int32/sign_of_dividend", "fmod", {}, [sign_x, sign_y], jnp.fmod, "exact")
    case(fam, "fmod/int32/by_zero", "fmod", {}, by_zero, jnp.fmod, "exact")
    case(fam, "fmod/float32/sign_of_dividend", "fmod", {}, [float_x, float_y], jnp.fmod,
         "arith")
    case(fam, "floor_divide/float32/signs_and_specials", "floor_divide", {},
         [arr([7.0, -7.0, 7.0, -7.0, 0.0, 5.0, 1.0, -1.0, 3.0, -3.0], "float32"),
          arr([2.0, 2.0, -2.0, -2.0, 0.0, 0.0, 0.0, 0.0, "inf", "inf"], "float32")],
         jnp.floor_divide, "arith")
    # float specials
    nan, inf = float("nan"), float("inf")
    case(fam, "div/float32/specials", "div", {},
         [arr([1.0, -1.0, 0.0, inf, 1.0], "float32"), arr([0.0, 0.0, 0.0, 2.0, inf], "float32")],
         BINARY["div"][0], "arith")
    case(fam, "pow/float32/negative_base_integer_exponent", "pow", {},
         [arr([-2.0, -2.0, -3.0, -0.5, 0.0, 0.0, 2.0, -1.5], "float32"),
          arr([2.0, 3.0, -1.0, -2.0, 0.0, 2.0, 0.0, 0.0], "float32")], jnp.power, "transc")
    case(fam, "pow/float32/specials", "pow", {},
         [arr([4.0, 9.0, 2.0, 0.0, 1.0, inf], "float32"),
          arr([0.5, -0.5, 10.0, -1.0, inf, -1.0], "float32")], jnp.power, "transc")
    for op in ("maximum", "minimum"):
        case(fam, f"{op}/float32/nan_propagates", op, {},
             [arr([1.0, nan, nan, -inf, 2.0], "float32"), arr([nan, 2.0, nan, 3.0, inf], "float32")],
             BINARY[op][0], "exact")


def gen_compare_logical():
    fam = "elementwise"
    for op, fn in COMPARE.items():
        for dt in ("float32", "int32", "bfloat16", "float64", "bool"):
            shapes = SHAPES_FULL if dt == "float32" else SHAPES_FEW
            for sname, sa, sb in shapes:
                name = f"{op}/{dt}/{sname}"
                r = rng_for(name)
                if dt == "bool":
                    x, y = bools(r, sa), bools(r, sb)
                else:
                    # small integer values so that ties occur
                    x = ints(r, sa, "int32", -2, 2).astype(DTYPES[dt])
                    y = ints(r, sb, "int32", -2, 2).astype(DTYPES[dt])
                case(fam, name, op, {}, [x, y], fn, "exact", out_dtype="bool")
        nan, inf = float("nan"), float("inf")
        case(fam, f"{op}/float32/nan_inf_signed_zero", op, {},
             [arr([nan, nan, 1.0, inf, -inf, 0.0, -0.0], "float32"),
              arr([nan, 1.0, nan, inf, inf, -0.0, 0.0], "float32")], fn, "exact", out_dtype="bool")
    for op, fn in LOGICAL.items():
        for sname, sa, sb in SHAPES_FULL:
            name = f"{op}/bool/{sname}"
            r = rng_for(name)
            case(fam, name, op, {}, [bools(r, sa), bools(r, sb)], fn, "exact")


INF = float("inf")
NAN = float("nan")

# op: (fn, tolerance kind, (lo, hi) random domain, special values)
UNARY = {
    "neg": (jnp.negative, "exact", (-3, 3), [0.0, -0.0, INF, -INF, NAN]),
    "exp": (jnp.exp, "transc", (-5, 5), [0.0, INF, -INF, -100.0]),
    "log": (jnp.log, "transc", (0.05, 10), [1.0, 0.0, INF]),
    "log1p": (jnp.log1p, "transc", (-0.9, 5), [0.0, 1e-3, -1.0, INF]),
    "expm1": (jnp.expm1, "transc", (-3, 3), [0.0, 1e-3, -INF, INF]),
    "tanh": (jnp.tanh, "transc", (-4, 4), [0.0, INF, -INF, 20.0, -20.0]),
    "logistic": (jax.nn.sigmoid, "transc", (-6, 6), [0.0, INF, -INF, 50.0, -50.0]),
    "sin": (jnp.sin, "transc", (-4, 4), [0.0, 1.5]),
    "cos": (jnp.cos, "transc", (-4, 4), [0.0, 1.5]),
    "sqrt": (jnp.sqrt, "transc", (0.01, 10), [0.0, 4.0, INF]),
    "rsqrt": (lax.rsqrt, "transc", (0.01, 10), [0.0, 4.0, INF]),
    "abs": (jnp.abs, "exact", (-3, 3), [0.0, -0.0, INF, -INF, NAN]),
    "sign": (jnp.sign, "exact", (-3, 3), [0.0, -0.0, INF, -INF, NAN, 2.0, -2.0]),
    "floor": (jnp.floor, "exact", (-3, 3), [0.5, -0.5, -1.0, 2.0, -0.0, INF, -INF]),
    "ceil": (jnp.ceil, "exact", (-3, 3), [0.5, -0.5, -1.0, 2.0, -0.0, INF, -INF]),
    "round": (jnp.round, "exact", (-3, 3), [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 0.49, -0.0]),
    "erf": (jax.scipy.special.erf, "transc", (-3, 3), [0.0, INF, -INF]),
    "relu": (jax.nn.relu, "exact", (-3, 3), [0.0, -0.0, INF, -INF]),
    "gelu_tanh": (lambda x: jax.nn.gelu(x, approximate=True), "transc", (-4, 4), [0.0, 10.0, -10.0]),
    "gelu_exact": (lambda x: jax.nn.gelu(x, approximate=False), "transc", (-4, 4), [0.0, 10.0, -10.0]),
}


def gen_unary():
    fam = "elementwise"
    for op, (fn, kind, (lo, hi), specials) in UNARY.items():
        for dt in ("float32", "float64", "bfloat16", "float16"):
            name = f"{op}/{dt}/1d_specials"
            n = 10 if dt == "float32" else 8
            x = with_specials(rng_for(name), specials, max(n, len(specials) + 3), dt, lo, hi)
            case(fam, name, op, {}, [x], fn, kind)
        for sname, s in (("0d", []), ("2d_3x4", [3, 4]), ("3d_2x2x3", [2, 2, 3]),
                         ("size1_1x4", [1, 4]), ("size0_0x3", [0, 3])):
            name = f"{op}/float32/{sname}"
            case(fam, name, op, {}, [uniform(rng_for(name), s, "float32", lo, hi)], fn, kind)
    for op in ("neg", "abs", "sign"):
        for dt in ("int32", "int8", "int64"):
            name = f"{op}/{dt}/1d_7"
            x = arr([0, 1, -1, 5, -7, 100, -100], dt)
            case(fam, name, op, {}, [x], UNARY[op][0], "exact")
    for sname, s in (("0d", []), ("1d_5", [5]), ("2d_3x4", [3, 4]), ("size0_0x3", [0, 3])):
        name = f"logical_not/bool/{sname}"
        case(fam, name, "logical_not", {}, [bools(rng_for(name), s)], jnp.logical_not, "exact")


def gen_integer_pow():
    fam = "elementwise"
    for n in (-2, 0, 1, 2, 3):
        f = (lambda n: lambda x: lax.integer_pow(x, n))(n)
        for dt in ("float32", "float64", "bfloat16", "float16"):
            name = f"integer_pow/{dt}/n{n}/1d_6"
            x = away_from_zero(rng_for(name), [6], dt, 0.3, 2.5)
            case(fam, name, "integer_pow", {"n": n}, [x], f, "arith")
        for sname, s in (("0d", []), ("2d_2x3", [2, 3]), ("size0_0x3", [0, 3])):
            name = f"integer_pow/float32/n{n}/{sname}"
            x = away_from_zero(rng_for(name), s, "float32", 0.3, 2.5)
            case(fam, name, "integer_pow", {"n": n}, [x], f, "arith")
        if n >= 0:
            name = f"integer_pow/int32/n{n}/1d_6"
            case(fam, name, "integer_pow", {"n": n}, [arr([0, 1, -1, 3, -4, 7], "int32")], f, "exact")
    f = lambda x: lax.integer_pow(x, 2)  # noqa: E731
    case(fam, "integer_pow/float32/n2/specials", "integer_pow", {"n": 2},
         [arr([0.0, -0.0, INF, -INF, NAN, -3.0], "float32")], f, "arith")
    f = lambda x: lax.integer_pow(x, -2)  # noqa: E731
    case(fam, "integer_pow/float32/n-2/zero_and_inf", "integer_pow", {"n": -2},
         [arr([0.0, -0.0, INF, -INF], "float32")], f, "arith")


def gen_where():
    fam = "elementwise"
    shapes = [
        ("0d", [], [], []),
        ("1d_5", [5], [5], [5]),
        ("2d_3x4", [3, 4], [3, 4], [3, 4]),
        ("bcast_c3x1_x4_y0d", [3, 1], [4], []),
        ("bcast_c2x1x3_x1x4x1_y2x4x3", [2, 1, 3], [1, 4, 1], [2, 4, 3]),
        ("bcast_c0d_x2x3_y2x3", [], [2, 3], [2, 3]),
        ("size0_0x3", [0, 3], [0, 3], [3]),
    ]
    for dt in ("float32", "int32", "bool", "bfloat16", "float64"):
        for sname, sc, sx, sy in (shapes if dt == "float32" else shapes[1:4]):
            name = f"where/{dt}/{sname}"
            r = rng_for(name)
            c = bools(r, sc)
            if dt == "bool":
                x, y = bools(r, sx), bools(r, sy)
            elif dt == "int32":
                x, y = ints(r, sx, dt), ints(r, sy, dt)
            else:
                x, y = uniform(r, sx, dt), uniform(r, sy, dt)
            case(fam, name, "where", {}, [c, x, y], jnp.where, "exact", out_dtype=dt)


def gen_promote():
    """Strong (array-array) promotion between different dtypes."""
    fam = "elementwise"
    pairs = [("float32", "bfloat16", "float32"), ("bfloat16", "float16", "float32"),
             ("float16", "float32", "float32"), ("float32", "float64", "float64"),
             ("int32", "float16", "float16"), ("int32", "bfloat16", "bfloat16"),
             ("int32", "float32", "float32"), ("bool", "float32", "float32"),
             ("bool", "int32", "int32"), ("uint8", "int32", "int32"), ("int8", "int32", "int32"),
             ("uint8", "uint32", "uint32"), ("int32", "int64", "int64"),
             ("uint32", "int32", "int64"), ("uint8", "float16", "float16")]
    for a, b, want in pairs:
        name = f"add/promote/{a}_{b}"
        r = rng_for(name)

        def mk(dt):
            if dt == "bool":
                return bools(r, [4])
            if dt in INTS:
                return ints(r, [4], dt, 0 if dt.startswith("u") else -8, 8)
            return uniform(r, [4], dt)
        case(fam, name, "add", {}, [mk(a), mk(b)], jnp.add, "arith", out_dtype=want)


def gen_weak_scalar():
    """Array (op) Python scalar, promoted as JAX with x64 promotes it."""
    fam = "elementwise"
    assert jax.config.jax_enable_x64
    r = np.random.default_rng(1234)
    f16 = uniform(r, [4], "float16")
    bf16 = uniform(r, [4], "bfloat16")
    f32 = uniform(r, [4], "float32")
    i32 = ints(r, [4], "int32", -10, 10)
    i8 = ints(r, [4], "int8", -10, 10)
    u8 = ints(r, [4], "uint8", 0, 100)
    b = arr([True, False, True, False], "bool")
    S = Scalar
    specs = [
        # name, op, inputs, fn, expected dtype, expected weak type
        ("mul/weak/float16_times_float", "mul", [f16, S(2.0)], jnp.multiply, "float16", False),
        ("mul/weak/float16_times_int", "mul", [f16, S(2)], jnp.multiply, "float16", False),
        ("mul/weak/bfloat16_times_float", "mul", [bf16, S(0.5)], jnp.multiply, "bfloat16", False),
        ("mul/weak/int32_times_float", "mul", [i32, S(2.5)], jnp.multiply, "float64", True),
        ("add/weak/int32_plus_int", "add", [i32, S(3)], jnp.add, "int32", False),
        ("add/weak/int8_plus_int", "add", [i8, S(3)], jnp.add, "int8", False),
        ("add/weak/uint8_plus_int", "add", [u8, S(3)], jnp.add, "uint8", False),
        ("add/weak/bool_plus_int", "add", [b, S(1)], jnp.add, "int64", True),
        ("add/weak/bool_plus_float", "add", [b, S(0.5)], jnp.add, "float64", True),
        ("mul/weak/float32_times_int", "mul", [f32, S(3)], jnp.multiply, "float32", False),
        ("sub/weak/float_minus_float32", "sub", [S(1.0), f32], jnp.subtract, "float32", False),
        ("div/weak/float_over_float16", "div", [S(1.0), f16], jnp.divide, "float16", False),
        ("div/weak/int32_over_int", "div", [i32, S(2)], jnp.divide, "float32", False),
        ("div/weak/int32_over_float", "div", [i32, S(2.0)], jnp.divide, "float64", True),
        ("floor_divide/weak/int32_over_int", "floor_divide", [i32, S(-3)], jnp.floor_divide,
         "int32", False),
        ("rem/weak/int32_mod_int", "rem", [i32, S(-3)], jnp.remainder, "int32", False),
        ("maximum/weak/float32_and_zero", "maximum", [f32, S(0.0)], jnp.maximum, "float32", False),
        ("pow/weak/float32_pow_float", "pow", [abs(f32) + np.float32(0.5), S(2.0)], jnp.power,
         "float32", False),
        ("lt/weak/float16_lt_float", "lt", [f16, S(0.5)], jnp.less, "bool", False),
        ("gt/weak/int32_gt_float", "gt", [i32, S(0.5)], jnp.greater, "bool", True),
        ("where/weak/float16_else_float", "where", [b, f16, S(0.0)], jnp.where, "float16", False),
        ("where/weak/both_scalars_float", "where", [b, S(1.0), S(0.0)], jnp.where, "float64", True),
    ]
    for name, op, inputs, fn, want, weak in specs:
        kind = "exact" if op in ("maximum", "lt", "gt", "where") else (
            "transc" if op == "pow" else "arith")
        case(fam, name, op, {}, inputs, fn, kind, out_dtype=want, out_weak=weak)


# ---------------------------------------------------------------------------------------------
# Reductions


def jnp_reduce(f):
    def g(axes, keepdims):
        def h(x):
            ax = None if axes is None else tuple(axes)
            return f(x, axis=ax, keepdims=keepdims)
        return h
    return g


REDUCE = {
    "sum": jnp_reduce(jnp.sum),
    "mean": jnp_reduce(jnp.mean),
    "max": jnp_reduce(jnp.max),
    "min": jnp_reduce(jnp.min),
    "prod": jnp_reduce(jnp.prod),
    "logsumexp": jnp_reduce(jax.nn.logsumexp),
}


def red_out_dtype(op, dt):
    """With x64, jnp.sum and jnp.prod of int32 count in int64 (`promote_integers`)."""
    return "int64" if op in ("sum", "prod") and dt == "int32" else None

RED_CONFIGS = [
    ("0d/all", [], None, False),
    ("1d_5/all", [5], None, False),
    ("1d_5/axis0_keep", [5], [0], True),
    ("2d_3x4/all_keep", [3, 4], None, True),
    ("2d_3x4/axis0", [3, 4], [0], False),
    ("2d_3x4/axis-1_keep", [3, 4], [-1], True),
    ("3d_2x3x4/axes0_2", [2, 3, 4], [0, 2], False),
    ("3d_2x3x4/axes-1_0_keep", [2, 3, 4], [-1, 0], True),
    ("3d_2x3x4/axis1", [2, 3, 4], [1], False),
    ("3d_2x3x4/all", [2, 3, 4], None, False),
    ("3d_2x3x4/no_axes", [2, 3, 4], [], False),
    ("2d_1x4/axis0", [1, 4], [0], False),
]


def red_input(op, dt, rng, s):
    if dt in INTS:
        if op == "prod":
            return ints(rng, s, dt, -3, 3)
        return ints(rng, s, dt, -20, 20)
    if op == "prod":
        return away_from_zero(rng, s, dt, 0.5, 1.5)
    return uniform(rng, s, dt)


def gen_reduce():
    fam = "reduce"
    for op, mk in REDUCE.items():
        for sname, s, axes, kd in RED_CONFIGS:
            name = f"{op}/float32/{sname}"
            x = red_input(op, "float32", rng_for(name), s)
            case(fam, name, op, {"axes": axes, "keepdims": kd}, [x], mk(axes, kd), "reduce")
        others = [("float64", "2d_3x4/axis1", [3, 4], [1], False),
                  ("bfloat16", "2d_3x4/axis1", [3, 4], [1], False),
                  ("float16", "2d_3x4/axis0_keep", [3, 4], [0], True)]
        if op in ("sum", "max", "min", "prod"):
            others += [("int32", "2d_3x4/axis1", [3, 4], [1], False),
                       ("int32", "3d_2x3x4/all", [2, 3, 4], None, False),
                       ("int32", "3d_2x3x4/axes0_2_keep", [2, 3, 4], [0, 2], True)]
        for dt, sname, s, axes, kd in others:
            name = f"{op}/{dt}/{sname}"
            x = red_input(op, dt, rng_for(name), s)
            case(fam, name, op, {"axes": axes, "keepdims": kd}, [x], mk(axes, kd), "reduce",
                 out_dtype=red_out_dtype(op, dt))
    # mean of int32 gives float32 (JAX's default float; same with and without x64)
    name = "mean/int32/2d_3x4/axis1"
    case(fam, name, "mean", {"axes": [1], "keepdims": False}, [ints(rng_for(name), [3, 4], "int32")],
         REDUCE["mean"]([1], False), "reduce", out_dtype="float32")
    # reductions over a size-0 dimension
    for op in ("sum", "prod"):
        for dt in ("float32", "int32"):
            for sname, s, axes, kd in (("size0_0x3/axis0", [0, 3], [0], False),
                                       ("size0_0x3/all", [0, 3], None, False),
                                       ("size0_3x0/axis1_keep", [3, 0], [1], True),
                                       ("size0_0x3/axis1", [0, 3], [1], False)):
                name = f"{op}/{dt}/{sname}"
                x = np.zeros(s, DTYPES[dt])
                case(fam, name, op, {"axes": axes, "keepdims": kd}, [x], REDUCE[op](axes, kd),
                     "reduce", out_dtype=red_out_dtype(op, dt))
    for op in ("max", "min", "mean", "logsumexp"):
        name = f"{op}/float32/size0_0x3/axis1"
        case(fam, name, op, {"axes": [1], "keepdims": False}, [np.zeros([0, 3], np.float32)],
             REDUCE[op]([1], False), "reduce")
    # specials
    case(fam, "logsumexp/float32/large_values", "logsumexp", {"axes": [-1], "keepdims": False},
         [arr([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -999.0]], "float32")],
         REDUCE["logsumexp"]([-1], False), "reduce")
    case(fam, "logsumexp/float32/neg_inf_entries", "logsumexp", {"axes": [1], "keepdims": True},
         [arr([[-INF, 0.0, 1.0], [-INF, -INF, 2.0], [-INF, -INF, -INF]], "float32")],
         REDUCE["logsumexp"]([1], True), "reduce")
    case(fam, "max/float32/nan_and_inf", "max", {"axes": [1], "keepdims": False},
         [arr([[1.0, NAN, 3.0], [-INF, -INF, -INF], [INF, 1.0, 2.0]], "float32")],
         REDUCE["max"]([1], False), "exact")
    case(fam, "min/float32/nan_and_inf", "min", {"axes": [1], "keepdims": False},
         [arr([[1.0, NAN, 3.0], [INF, INF, INF], [-INF, 1.0, 2.0]], "float32")],
         REDUCE["min"]([1], False), "exact")
    case(fam, "sum/float32/inf_nan", "sum", {"axes": [1], "keepdims": False},
         [arr([[1.0, INF, 3.0], [INF, -INF, 0.0], [NAN, 1.0, 2.0]], "float32")],
         REDUCE["sum"]([1], False), "reduce")
    # with x64, an int32 sum counts in int64: no wrap at 2**31
    case(fam, "sum/int32/past_int32_max", "sum", {"axes": None, "keepdims": False},
         [arr([2**31 - 1, 1, 5], "int32")], REDUCE["sum"](None, False), "exact",
         out_dtype="int64")


def gen_arg():
    fam = "reduce"
    for op, f in (("argmax", jnp.argmax), ("argmin", jnp.argmin)):
        def mk(axis, kd, f=f):
            return lambda x: f(x, axis=axis, keepdims=kd).astype(jnp.int32)
        configs = [
            ("float32", "1d_6_ties", [6], 0, False),
            ("float32", "2d_3x4/axis1", [3, 4], 1, False),
            ("float32", "2d_3x4/axis0_keep", [3, 4], 0, True),
            ("float32", "2d_3x4/axis-1_keep", [3, 4], -1, True),
            ("float32", "3d_2x3x4/axis1", [2, 3, 4], 1, False),
            ("float32", "2d_1x5/axis0", [1, 5], 0, False),
            ("float32", "size0_0x3/axis1", [0, 3], 1, False),
            ("int32", "2d_3x4/axis1_ties", [3, 4], 1, False),
            ("int32", "3d_2x3x4/axis2_keep", [2, 3, 4], 2, True),
            ("float64", "2d_3x4/axis1", [3, 4], 1, False),
            ("bfloat16", "2d_3x4/axis0", [3, 4], 0, False),
        ]
        for dt, sname, s, axis, kd in configs:
            name = f"{op}/{dt}/{sname}"
            # small integer-valued entries so that ties are common (first index wins)
            x = ints(rng_for(name), s, "int32", -2, 2).astype(DTYPES[dt])
            case(fam, name, op, {"axis": axis, "keepdims": kd}, [x], mk(axis, kd), "exact",
                 out_dtype="int32")
        case(fam, f"{op}/float32/explicit_ties", op, {"axis": 1, "keepdims": False},
             [arr([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [0.0, -1.0, 5.0, -1.0]], "float32")],
             mk(1, False), "exact", out_dtype="int32")
        case(fam, f"{op}/float32/nan_wins", op, {"axis": 1, "keepdims": False},
             [arr([[1.0, NAN, 5.0, NAN], [INF, 1.0, -INF, 0.0], [-INF, -INF, INF, INF]], "float32")],
             mk(1, False), "exact", out_dtype="int32")


def gen_softmax():
    fam = "reduce"
    for op, f in (("softmax", jax.nn.softmax), ("log_softmax", jax.nn.log_softmax)):
        def mk(axis, f=f):
            return lambda x: f(x, axis=axis)
        configs = [
            ("float32", "1d_5/axis0", [5], 0),
            ("float32", "2d_3x4/axis-1", [3, 4], -1),
            ("float32", "2d_3x4/axis0", [3, 4], 0),
            ("float32", "3d_2x3x4/axis1", [2, 3, 4], 1),
            ("float32", "2d_3x1/axis1", [3, 1], 1),
            ("float32", "size0_0x3/axis1", [0, 3], 1),
            ("float64", "2d_3x4/axis1", [3, 4], 1),
            ("bfloat16", "2d_3x4/axis1", [3, 4], 1),
            ("float16", "2d_3x4/axis1", [3, 4], 1),
        ]
        for dt, sname, s, axis in configs:
            name = f"{op}/{dt}/{sname}"
            case(fam, name, op, {"axis": axis}, [uniform(rng_for(name), s, dt)], mk(axis), "reduce")
        case(fam, f"{op}/float32/large_values", op, {"axis": 1},
             [arr([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]], "float32")], mk(1),
             "reduce")
        case(fam, f"{op}/float32/neg_inf_mask", op, {"axis": 1},
             [arr([[0.0, -INF, 1.0], [-INF, 2.0, -INF]], "float32")], mk(1), "reduce")


# ---------------------------------------------------------------------------------------------
# Linear algebra


def gen_linalg():
    fam = "linalg"
    mm = [
        ("1d_x_1d", [3], [3]),
        ("1d_x_2d", [3], [3, 4]),
        ("2d_x_1d", [3, 4], [4]),
        ("2d_x_2d", [3, 4], [4, 5]),
        ("3d_x_3d_batched", [2, 3, 4], [2, 4, 5]),
        ("bcast_batch_2x1x3x4_5x4x2", [2, 1, 3, 4], [5, 4, 2]),
        ("3d_x_2d", [2, 3, 4], [4, 2]),
        ("1d_x_3d", [4], [2, 4, 3]),
        ("size0_0x3_x_3x4", [0, 3], [3, 4]),
        ("size0_contract_3x0_x_0x4", [3, 0], [0, 4]),
    ]
    for dt in ("float32", "float64", "bfloat16", "float16", "int32"):
        for sname, sa, sb in (mm if dt == "float32" else mm[3:5]):
            name = f"matmul/{dt}/{sname}"
            r = rng_for(name)
            if dt == "int32":
                x, y = ints(r, sa, dt, -5, 5), ints(r, sb, dt, -5, 5)
            else:
                x, y = uniform(r, sa, dt, -1, 1), uniform(r, sb, dt, -1, 1)
            case(fam, name, "matmul", {}, [x, y], jnp.matmul, "reduce")
    dg = [
        # name, lhs shape, rhs shape, contracting, batch
        ("matmul_3x4_4x5", [3, 4], [4, 5], [[1], [0]], [[], []]),
        ("lhs_transposed_4x3_4x5", [4, 3], [4, 5], [[0], [0]], [[], []]),
        ("both_transposed_4x3_5x4", [4, 3], [5, 4], [[0], [1]], [[], []]),
        ("outer_3_4", [3], [4], [[], []], [[], []]),
        ("inner_5_5", [5], [5], [[0], [0]], [[], []]),
        ("batched_2x3x4_2x4x5", [2, 3, 4], [2, 4, 5], [[2], [1]], [[0], [0]]),
        ("batch_not_leading_3x2x4_4x2x5", [3, 2, 4], [4, 2, 5], [[2], [0]], [[1], [1]]),
        ("two_contracting_2x3x4_3x4x5", [2, 3, 4], [3, 4, 5], [[1, 2], [0, 1]], [[], []]),
        ("batch_only_2x3_2x4", [2, 3], [2, 4], [[], []], [[0], [0]]),
        ("two_batch_2x3x2x2_2x3x2x3", [2, 3, 2, 2], [2, 3, 2, 3], [[3], [2]], [[0, 1], [0, 1]]),
        ("size0_contract_3x0_0x4", [3, 0], [0, 4], [[1], [0]], [[], []]),
    ]
    for dt in ("float32", "float64", "bfloat16", "int32"):
        for sname, sa, sb, contr, batch in (dg if dt == "float32" else dg[5:7]):
            name = f"dot_general/{dt}/{sname}"
            r = rng_for(name)
            if dt == "int32":
                x, y = ints(r, sa, dt, -5, 5), ints(r, sb, dt, -5, 5)
            else:
                x, y = uniform(r, sa, dt, -1, 1), uniform(r, sb, dt, -1, 1)
            dn = ((tuple(contr[0]), tuple(contr[1])), (tuple(batch[0]), tuple(batch[1])))
            f = (lambda dn: lambda a, b: lax.dot_general(a, b, dn))(dn)
            case(fam, name, "dot_general", {"contracting": contr, "batch": batch}, [x, y], f,
                 "reduce")


# ---------------------------------------------------------------------------------------------
# Shape ops


def sample(dt, name, s):
    r = rng_for(name)
    if dt == "bool":
        return bools(r, s)
    if dt in INTS:
        return ints(r, s, dt, -50, 50)
    return uniform(r, s, dt)


def gen_shape():
    fam = "shape"
    E = "exact"
    for dt, sname, s, new in [
        ("float32", "2x3x4_to_6x4", [2, 3, 4], [6, 4]),
        ("float32", "2x3x4_to_-1", [2, 3, 4], [-1]),
        ("float32", "2x3x4_to_4x-1", [2, 3, 4], [4, -1]),
        ("float32", "2x12_to_2x3x4", [2, 12], [2, 3, 4]),
        ("float32", "0d_to_1x1", [], [1, 1]),
        ("float32", "1_to_0d", [1], []),
        ("float32", "1x1_to_-1", [1, 1], [-1]),
        ("float32", "0x3_to_3x0", [0, 3], [3, 0]),
        ("float32", "0x3_to_-1", [0, 3], [-1]),
        ("int32", "3x4_to_2x6", [3, 4], [2, 6]),
        ("bool", "6_to_3x2", [6], [3, 2]),
        ("bfloat16", "2x3_to_3x2", [2, 3], [3, 2]),
    ]:
        name = f"reshape/{dt}/{sname}"
        f = (lambda new: lambda x: jnp.reshape(x, new))(new)
        case(fam, name, "reshape", {"shape": new}, [sample(dt, name, s)], f, E)

    for dt, sname, s, perm in [
        ("float32", "2x3_10", [2, 3], [1, 0]),
        ("float32", "2x3x4_201", [2, 3, 4], [2, 0, 1]),
        ("float32", "2x3x4_120", [2, 3, 4], [1, 2, 0]),
        ("float32", "2x3x4_012", [2, 3, 4], [0, 1, 2]),
        ("float32", "2x1x3x2_3102", [2, 1, 3, 2], [3, 1, 0, 2]),
        ("float32", "0d", [], []),
        ("float32", "0x3_10", [0, 3], [1, 0]),
        ("int32", "3x4_10", [3, 4], [1, 0]),
        ("bool", "2x3x2_210", [2, 3, 2], [2, 1, 0]),
    ]:
        name = f"transpose/{dt}/{sname}"
        f = (lambda perm: lambda x: jnp.transpose(x, perm))(perm)
        case(fam, name, "transpose", {"perm": perm}, [sample(dt, name, s)], f, E)

    for dt, sname, s, new in [
        ("float32", "3_to_2x3", [3], [2, 3]),
        ("float32", "3x1_to_3x4", [3, 1], [3, 4]),
        ("float32", "0d_to_2x2", [], [2, 2]),
        ("float32", "1x3_to_2x4x3", [1, 3], [2, 4, 3]),
        ("float32", "2x1x3_to_2x4x3", [2, 1, 3], [2, 4, 3]),
        ("float32", "3_to_0x3", [3], [0, 3]),
        ("float32", "2x3_same", [2, 3], [2, 3]),
        ("int32", "1x4_to_3x4", [1, 4], [3, 4]),
        ("bool", "2x1_to_2x3", [2, 1], [2, 3]),
    ]:
        name = f"broadcast_to/{dt}/{sname}"
        f = (lambda new: lambda x: jnp.broadcast_to(x, new))(new)
        case(fam, name, "broadcast_to", {"shape": new}, [sample(dt, name, s)], f, E)

    for dt, sname, s, axis in [
        ("float32", "0d_axis0", [], 0),
        ("float32", "2x3_axis0", [2, 3], 0),
        ("float32", "2x3_axis1", [2, 3], 1),
        ("float32", "2x3_axis2", [2, 3], 2),
        ("float32", "2x3_axis-1", [2, 3], -1),
        ("float32", "2x3_axis-3", [2, 3], -3),
        ("int32", "4_axis1", [4], 1),
    ]:
        name = f"expand_dims/{dt}/{sname}"
        f = (lambda axis: lambda x: jnp.expand_dims(x, axis))(axis)
        case(fam, name, "expand_dims", {"axis": axis}, [sample(dt, name, s)], f, E)

    for dt, sname, s, axes in [
        ("float32", "1x3_axes0", [1, 3], [0]),
        ("float32", "3x1_axes-1", [3, 1], [-1]),
        ("float32", "1x3x1_axes0_2", [1, 3, 1], [0, 2]),
        ("float32", "1x1_axes0_1", [1, 1], [0, 1]),
        ("float32", "2x1x3_axes1", [2, 1, 3], [1]),
        ("float32", "1x0_axes0", [1, 0], [0]),
        ("int32", "1x4_axes0", [1, 4], [0]),
    ]:
        name = f"squeeze/{dt}/{sname}"
        f = (lambda axes: lambda x: jnp.squeeze(x, tuple(axes)))(axes)
        case(fam, name, "squeeze", {"axes": axes}, [sample(dt, name, s)], f, E)

    for dt, sname, shapes, axis in [
        ("float32", "2x3_4x3_axis0", [[2, 3], [4, 3]], 0),
        ("float32", "2x3_2x1_2x2_axis1", [[2, 3], [2, 1], [2, 2]], 1),
        ("float32", "2x3_2x2_axis-1", [[2, 3], [2, 2]], -1),
        ("float32", "1d_3_2_4_axis0", [[3], [2], [4]], 0),
        ("float32", "3d_2x1x2_2x3x2_axis1", [[2, 1, 2], [2, 3, 2]], 1),
        ("float32", "with_size0_0x3_2x3_axis0", [[0, 3], [2, 3]], 0),
        ("int32", "2x2_2x3_axis1", [[2, 2], [2, 3]], 1),
        ("bool", "2_3_axis0", [[2], [3]], 0),
    ]:
        name = f"concatenate/{dt}/{sname}"
        xs = [sample(dt, f"{name}#{i}", s) for i, s in enumerate(shapes)]
        f = (lambda axis: lambda *a: jnp.concatenate(a, axis=axis))(axis)
        case(fam, name, "concatenate", {"axis": axis}, xs, f, E)

    for dt, sname, s, n, axis in [
        ("float32", "0d_x3_axis0", [], 3, 0),
        ("float32", "3_x2_axis0", [3], 2, 0),
        ("float32", "3_x2_axis1", [3], 2, 1),
        ("float32", "2x3_x3_axis1", [2, 3], 3, 1),
        ("float32", "2x3_x2_axis-1", [2, 3], 2, -1),
        ("float32", "0x2_x2_axis0", [0, 2], 2, 0),
        ("int32", "2x2_x2_axis2", [2, 2], 2, 2),
    ]:
        name = f"stack/{dt}/{sname}"
        xs = [sample(dt, f"{name}#{i}", s) for i in range(n)]
        f = (lambda axis: lambda *a: jnp.stack(a, axis=axis))(axis)
        case(fam, name, "stack", {"axis": axis}, xs, f, E)

    for dt, sname, s, start, limit, strides in [
        ("float32", "1d_8_1to6", [8], [1], [6], [1]),
        ("float32", "1d_8_stride3", [8], [0], [8], [3]),
        ("float32", "1d_8_1to7_stride2", [8], [1], [7], [2]),
        ("float32", "2d_4x5", [4, 5], [1, 0], [3, 5], [1, 1]),
        ("float32", "2d_4x5_strides2x2", [4, 5], [0, 1], [4, 5], [2, 2]),
        ("float32", "3d_2x3x4", [2, 3, 4], [1, 0, 1], [2, 3, 4], [1, 2, 2]),
        ("float32", "empty_result", [4, 5], [2, 0], [2, 5], [1, 1]),
        ("float32", "0d", [], [], [], []),
        ("int32", "2d_3x4", [3, 4], [0, 1], [3, 3], [2, 1]),
    ]:
        name = f"slice/{dt}/{sname}"
        f = (lambda a, b, c: lambda x: lax.slice(x, a, b, c))(start, limit, strides)
        case(fam, name, "slice", {"start": start, "limit": limit, "strides": strides},
             [sample(dt, name, s)], f, E)

    for dt, sname, s, low, high, interior, value in [
        ("float32", "1d_5_lo1_hi2", [5], [1], [2], [0], 0.0),
        ("float32", "1d_5_interior1", [5], [0], [0], [1], -1.0),
        ("float32", "1d_5_neg_low", [5], [-2], [1], [0], 9.0),
        ("float32", "1d_5_neg_high", [5], [1], [-3], [0], 9.0),
        ("float32", "1d_5_neg_low_interior", [5], [-1], [2], [1], -1.0),
        ("float32", "1d_5_neg_both_interior2", [5], [-3], [-2], [2], 7.0),
        ("float32", "2d_2x3", [2, 3], [1, 0], [0, 2], [0, 1], 0.5),
        ("float32", "2d_2x3_mixed_neg", [2, 3], [-1, 2], [1, -1], [1, 0], -2.0),
        ("float32", "3d_2x2x2", [2, 2, 2], [0, 1, 1], [1, 0, 1], [0, 0, 1], 3.0),
        ("float32", "0x3_pad_both", [0, 3], [1, 0], [1, 1], [0, 0], 4.0),
        ("float32", "1d_5_neg_to_empty", [5], [-3], [-2], [0], 0.0),
        ("float32", "0d", [], [], [], [], 0.0),
        ("int32", "2d_2x3", [2, 3], [1, 1], [1, 1], [0, 0], 7),
        ("bfloat16", "1d_4", [4], [1], [1], [1], 0.25),
    ]:
        name = f"pad/{dt}/{sname}"
        cfg = list(zip(low, high, interior))
        f = (lambda cfg, v, dt: lambda x: lax.pad(x, jnp.asarray(v, DTYPES[dt]), cfg))(cfg, value, dt)
        case(fam, name, "pad", {"low": low, "high": high, "interior": interior, "value": value},
             [sample(dt, name, s)], f, E)

    for dt, sname, s, axis in [
        ("float32", "1d_6", [6], 0),
        ("float32", "2d_3x4_axis0", [3, 4], 0),
        ("float32", "2d_3x4_axis1", [3, 4], 1),
        ("float32", "2d_3x4_axis-1", [3, 4], -1),
        ("float32", "3d_2x3x4_axis1", [2, 3, 4], 1),
        ("float32", "size0_0x3_axis0", [0, 3], 0),
        ("float64", "2d_3x4_axis1", [3, 4], 1),
        ("int32", "1d_6", [6], 0),
        ("int32", "2d_3x4_axis0", [3, 4], 0),
        ("int32", "3d_2x3x4_axis2", [2, 3, 4], 2),
    ]:
        name = f"cumsum/{dt}/{sname}"
        f = (lambda axis: lambda x: jnp.cumsum(x, axis=axis, dtype=x.dtype))(axis)
        case(fam, name, "cumsum", {"axis": axis}, [sample(dt, name, s)], f, "reduce")


# ---------------------------------------------------------------------------------------------
# Index ops


def i32(v):
    return np.asarray(v, np.int32)


def gen_index():
    fam = "index"
    E = "exact"
    for dt, sname, s, starts, sizes in [
        ("float32", "1d_10_at2", [10], [2], [3]),
        ("float32", "1d_10_clamped_high", [10], [9], [3]),
        ("float32", "1d_10_clamped_very_high", [10], [100], [4]),
        ("float32", "1d_10_negative_start_wraps", [10], [-2], [3]),
        ("float32", "1d_10_negative_start_wraps_then_clamps", [10], [-1], [3]),
        ("float32", "1d_10_very_negative_clamps_to_0", [10], [-100], [3]),
        ("float32", "2d_4x5", [4, 5], [1, 2], [2, 2]),
        ("float32", "2d_4x5_clamped", [4, 5], [3, 4], [2, 3]),
        ("float32", "3d_2x3x4", [2, 3, 4], [1, 0, 2], [1, 3, 2]),
        ("float32", "full_size", [3, 4], [1, 1], [3, 4]),
        ("float32", "size0_slice", [3, 4], [1, 2], [0, 2]),
        ("int32", "2d_3x4", [3, 4], [1, 1], [2, 2]),
    ]:
        name = f"dynamic_slice/{dt}/{sname}"
        f = (lambda sizes: lambda x, *st: lax.dynamic_slice(x, st, sizes))(sizes)
        case(fam, name, "dynamic_slice", {"sizes": sizes},
             [sample(dt, name, s)] + [i32(v) for v in starts], f, E)

    for dt, sname, s, us, starts in [
        ("float32", "1d_10_at3", [10], [3], [3]),
        ("float32", "1d_10_clamped_high", [10], [3], [9]),
        ("float32", "1d_10_negative_start_wraps", [10], [2], [-3]),
        ("float32", "1d_10_very_negative_clamps_to_0", [10], [2], [-50]),
        ("float32", "2d_4x5", [4, 5], [2, 2], [1, 2]),
        ("float32", "2d_4x5_clamped", [4, 5], [2, 3], [5, 5]),
        ("float32", "3d_2x3x4", [2, 3, 4], [1, 2, 2], [1, 1, 1]),
        ("float32", "full_size", [2, 3], [2, 3], [0, 0]),
        ("float32", "size0_update", [2, 3], [0, 3], [1, 0]),
        ("int32", "2d_3x4", [3, 4], [1, 2], [2, 1]),
    ]:
        name = f"dynamic_update_slice/{dt}/{sname}"
        x = sample(dt, name, s)
        u = sample(dt, name + "#update", us)
        case(fam, name, "dynamic_update_slice", {},
             [x, u] + [i32(v) for v in starts],
             lambda x, u, *st: lax.dynamic_update_slice(x, u, st), E)

    for dt, sname, s, idx, axis in [
        ("float32", "embed_5x3_idx4", [5, 3], [[4, 0, 2, 2]], 0),
        ("float32", "embed_5x3_idx_0d", [5, 3], 3, 0),
        ("float32", "embed_5x3_idx_2x3", [5, 3], [[0, 1, 4], [4, 4, 2]], 0),
        ("float32", "1d_6_idx3", [6], [[5, 0, 3]], 0),
        ("float32", "2d_3x4_axis1", [3, 4], [[3, 0, 0, 1, 2]], 1),
        ("float32", "3d_2x3x4_axis1_idx2x2", [2, 3, 4], [[2, 0], [1, 1]], 1),
        ("float32", "3d_2x3x4_axis-1", [2, 3, 4], [[3, 1]], -1),
        ("float32", "empty_indices", [5, 3], [[]], 0),
        ("int32", "embed_4x2_idx3", [4, 2], [[1, 3, 0]], 0),
        ("bfloat16", "embed_4x3_idx2", [4, 3], [[2, 2]], 0),
    ]:
        name = f"take/{dt}/{sname}"
        ind = np.asarray(idx, np.int32)
        if ind.ndim == 2 and ind.shape[0] == 1 and "2x" not in sname:
            ind = ind[0]
        f = (lambda axis: lambda x, i: jnp.take(x, i, axis=axis))(axis)
        case(fam, name, "take", {"axis": axis}, [sample(dt, name, s), ind], f, E)

    # take_along_axis: indices drawn in -n..n (negative ones count from the end) unless the
    # case says otherwise; out-of-range ones give JAX's fill value (mode="fill").
    for dt, sname, s, ishape, axis, lo, hi, idt in [
        ("float32", "2d_3x4_axis1_idx3x2", [3, 4], [3, 2], 1, -4, 4, "int32"),
        ("float32", "2d_3x4_axis0_idx5x4", [3, 4], [5, 4], 0, -3, 3, "int32"),
        ("float32", "3d_2x3x4_axis0_idx3x3x4", [2, 3, 4], [3, 3, 4], 0, -2, 2, "int32"),
        ("float32", "3d_2x3x4_axis1_idx2x5x4", [2, 3, 4], [2, 5, 4], 1, -3, 3, "int32"),
        ("float32", "3d_2x3x4_axis2_idx2x3x2", [2, 3, 4], [2, 3, 2], 2, -4, 4, "int32"),
        ("float32", "3d_2x3x4_axis-1_idx2x3x6", [2, 3, 4], [2, 3, 6], -1, -4, 4, "int32"),
        ("float32", "3d_2x3x4_axis1_out_of_range", [2, 3, 4], [2, 3, 4], 1, -6, 6, "int32"),
        ("float32", "3d_2x3x4_axis1_idx_broadcast_1x2x4", [2, 3, 4], [1, 2, 4], 1, -3, 3,
         "int32"),
        ("float32", "3d_2x1x4_axis2_x_broadcast_idx2x3x2", [2, 1, 4], [2, 3, 2], 2, -4, 4,
         "int32"),
        ("float32", "1d_6_idx4", [6], [4], 0, -6, 6, "int32"),
        ("float32", "2d_3x4_axis1_empty_indices", [3, 4], [3, 0], 1, 0, 1, "int32"),
        ("float64", "2d_3x4_axis1_int64_indices", [3, 4], [3, 3], 1, -4, 4, "int64"),
        ("float32", "2d_2x200_axis1_int8_indices", [2, 200], [2, 3], 1, -128, 128, "int8"),
        ("int32", "2d_3x4_axis1_out_of_range", [3, 4], [3, 3], 1, -6, 6, "int32"),
        ("bfloat16", "2d_3x4_axis0", [3, 4], [2, 4], 0, -3, 3, "int32"),
        ("uint8", "2d_3x4_axis1_uint32_indices", [3, 4], [3, 2], 1, 0, 6, "uint32"),
        ("bool", "2d_3x4_axis1", [3, 4], [3, 2], 1, -4, 4, "int32"),
    ]:
        name = f"take_along_axis/{dt}/{sname}"
        ind = rng_for(name + "#idx").integers(lo, hi, size=ishape).astype(DTYPES[idt])
        f = (lambda axis: lambda x, i: jnp.take_along_axis(x, i, axis=axis))(axis)
        case(fam, name, "take_along_axis", {"axis": axis}, [sample(dt, name, s), ind], f, E)

    for sname, idx, k, dt in [
        ("1d_4_k3", [0, 2, 1, 2], 3, "float32"),
        ("out_of_range_and_negative_give_zero_rows", [0, 3, -1, 2, 7], 3, "float32"),
        ("0d_k4", 2, 4, "float32"),
        ("2d_2x3_k4", [[0, 1, 3], [3, 2, 0]], 4, "float32"),
        ("size0", np.zeros([0], np.int32), 3, "float32"),
        ("1d_3_k5_int32", [4, 0, 2], 5, "int32"),
        ("1d_3_k2_bfloat16", [1, 0, 1], 2, "bfloat16"),
    ]:
        name = f"one_hot/{dt}/{sname}"
        f = (lambda k, dt: lambda i: jax.nn.one_hot(i, k, dtype=DTYPES[dt]))(k, dt)
        case(fam, name, "one_hot", {"num_classes": k, "dtype": dt}, [i32(idx)], f, E,
             out_dtype=dt)


# ---------------------------------------------------------------------------------------------
# Misc


def gen_misc():
    fam = "misc"
    E = "exact"
    for dt, shape, d in [("int32", [5], 0), ("int32", [2, 3], 1), ("int32", [2, 3], 0),
                         ("float32", [3, 2, 2], 1), ("float32", [4], 0), ("bfloat16", [4], 0),
                         ("int64", [2, 2], 1), ("uint32", [3], 0), ("int32", [0, 3], 1)]:
        name = f"iota/{dt}/{shp(shape)}_dim{d}"
        case(fam, name, "iota", {"dtype": dt, "shape": shape, "dimension": d}, [],
             (lambda dt, shape, d: lambda: lax.broadcasted_iota(DTYPES[dt], shape, d))(dt, shape, d),
             E, out_dtype=dt)

    conv = [
        ("float32", "int32", "truncates", [2.7, -2.7, 0.5, -0.5, 3.0, -3.0, 100.99, 0.0]),
        ("float64", "int32", "truncates", [2.7, -2.7, 1e6 + 0.5, -0.9]),
        ("float32", "uint8", "truncates_in_range", [0.0, 1.9, 254.5, 100.2]),
        ("float32", "int8", "truncates_in_range", [-127.9, 126.9, -0.5, 5.5]),
        ("int32", "float32", "exact_and_rounded", [0, 1, -7, 2**24, 2**24 + 1, 2**31 - 1]),
        ("int32", "bfloat16", "rounded", [0, 1, -7, 257, 1000, -1001]),
        ("int32", "float16", "rounded", [0, 1, -7, 2049, 65504, -300]),
        ("float32", "bfloat16", "round_to_nearest_even",
         [1.0, 1.00390625, 1.01171875, 1.005859375, 3.14159265, -2.71828, 1e-3, 3e38, "inf",
          "-inf", "nan"]),
        ("float32", "float16", "round_and_overflow",
         [1.0, 1.00048828125, 1.00146484375, 3.14159265, 65504.0, 65520.0, 1e6, 1e-8, "-inf"]),
        ("float64", "float32", "rounded", [0.1, 1.0 / 3.0, 1e40, -1e-50, 2.5]),
        ("bfloat16", "float32", "exact", [0.1, -3.5, 1e30, "inf"]),
        ("float16", "float32", "exact", [0.1, -3.5, 65504.0, "nan"]),
        ("bool", "float32", "bool_to_number", [True, False, True]),
        ("bool", "int32", "bool_to_number", [True, False, True]),
        ("bool", "bfloat16", "bool_to_number", [False, True]),
        ("float32", "bool", "nonzero", [0.0, -0.0, 0.1, -2.0, "nan", "inf"]),
        ("int32", "bool", "nonzero", [0, 1, -1, 7]),
        ("int32", "int8", "wraps", [0, 127, 128, -129, 255, 1000]),
        ("int32", "uint8", "wraps", [0, 255, 256, -1, 300]),
        ("int32", "int64", "widen", [0, -1, 2**31 - 1, -2**31]),
        ("int64", "int32", "wraps", [0, -1, 2**31, 2**32 + 5, -2**31 - 1]),
        ("uint32", "int32", "wraps", [0, 1, 2**31, 2**32 - 1]),
        ("int32", "uint32", "wraps", [0, 1, -1, -2**31]),
        ("float32", "float32", "identity", [1.5, -0.0, "nan"]),
    ]
    for src, dst, what, vals in conv:
        name = f"astype/{src}_to_{dst}/{what}"
        vals = [float(v) if isinstance(v, str) else v for v in vals]
        x = np.asarray(vals).astype(DTYPES[src])
        case(fam, name, "astype", {"dtype": dst}, [x],
             (lambda dst: lambda x: lax.convert_element_type(x, DTYPES[dst]))(dst), E, out_dtype=dst)
    name = "astype/float32_to_int32/2d_2x3"
    case(fam, name, "astype", {"dtype": "int32"}, [uniform(rng_for(name), [2, 3], "float32", -9, 9)],
         lambda x: lax.convert_element_type(x, jnp.int32), E, out_dtype="int32")
    name = "astype/float32_to_bfloat16/0d"
    case(fam, name, "astype", {"dtype": "bfloat16"}, [uniform(rng_for(name), [], "float32")],
         lambda x: lax.convert_element_type(x, jnp.bfloat16), E, out_dtype="bfloat16")

    for dt, s in [("float32", [2, 3]), ("float32", []), ("int32", [4]), ("bool", [3])]:
        name = f"stop_gradient/{dt}/{shp(s)}"
        case(fam, name, "stop_gradient", {}, [sample(dt, name, s)], lax.stop_gradient, E)

    for start, stop, step, dt in [(0, 5, 1, "int32"), (2, 11, 3, "int32"), (5, 0, -1, "int32"),
                                  (-3, 3, 2, "int32"), (5, 0, 1, "int32"), (0, 4, 1, "int64"),
                                  (0.0, 1.0, 0.25, "float32"), (0.0, 1.0, 0.3, "float32"),
                                  (0.0, 1.0, 0.1, "float32"), (1.0, -1.0, -0.5, "float32"),
                                  (0.5, 3.0, 1.0, "float64"), (0, 5, 1, "float32"),
                                  (0.0, 2.0, 0.5, "bfloat16")]:
        name = f"arange/{dt}/{start}_{stop}_{step}"
        kind = "arith" if dt in FLOATS else E
        case(fam, name, "arange", {"start": start, "stop": stop, "step": step, "dtype": dt}, [],
             (lambda a, b, c, dt: lambda: jnp.arange(a, b, c, dtype=DTYPES[dt]))(start, stop, step, dt),
             kind, out_dtype=dt)

    for n, dt in [(3, "float32"), (1, "float32"), (0, "float32"), (4, "int32"), (2, "bool"),
                  (3, "bfloat16")]:
        name = f"eye/{dt}/n{n}"
        case(fam, name, "eye", {"n": n, "dtype": dt}, [],
             (lambda n, dt: lambda: jnp.eye(n, dtype=DTYPES[dt]))(n, dt), E, out_dtype=dt)

    for op, f in (("zeros", jnp.zeros), ("ones", jnp.ones)):
        for shape, dt in [([2, 3], "float32"), ([], "float32"), ([3], "int32"), ([2, 2], "bool"),
                          ([0, 2], "float32"), ([2], "bfloat16")]:
            name = f"{op}/{dt}/{shp(shape)}"
            case(fam, name, op, {"shape": shape, "dtype": dt}, [],
                 (lambda f, shape, dt: lambda: f(shape, dtype=DTYPES[dt]))(f, shape, dt), E,
                 out_dtype=dt)
    for shape, value, dt in [([2, 3], 1.5, "float32"), ([], -2.0, "float32"), ([3], 7, "int32"),
                             ([2, 2], True, "bool"), ([0, 2], 3.0, "float32"),
                             ([3], 0.1, "bfloat16"), ([2], 0.1, "float32"),
                             ([2], 2.7, "int32"), ([2], -2.7, "int32")]:
        name = f"full/{dt}/{shp(shape)}_{value}"
        case(fam, name, "full", {"shape": shape, "value": value, "dtype": dt}, [],
             (lambda shape, v, dt: lambda: jnp.full(shape, v, dtype=DTYPES[dt]))(shape, value, dt),
             E, out_dtype=dt)


# ---------------------------------------------------------------------------------------------
# Numeric helpers people reach for: softplus, logaddexp, clip, isnan/isinf/isfinite, nan_to_num,
# var/std, linspace, tril/triu


SPECIALS = [0.0, -0.0, 1.5, -2.5, 100.0, -100.0, INF, -INF, NAN]


def gen_numeric():
    fam = "numeric"
    E = "exact"
    for dt, sname, s in [("float32", "2d_3x4", [3, 4]), ("float64", "1d_5", [5]),
                         ("float32", "0d", [])]:
        name = f"softplus/{dt}/{sname}"
        case(fam, name, "softplus", {}, [uniform(rng_for(name), s, dt, -20, 20)],
             jax.nn.softplus, "transc")
    for dt in ("float32", "float64", "bfloat16", "float16"):
        name = f"softplus/{dt}/specials"
        case(fam, name, "softplus", {}, [arr(SPECIALS, dt)], jax.nn.softplus, "transc")
    for dt, sname, sa, sb in [("float32", "2d_3x4", [3, 4], [3, 4]),
                              ("float32", "bcast_3x1_4", [3, 1], [4]),
                              ("float64", "1d_6", [6], [6]),
                              ("bfloat16", "1d_4", [4], [4])]:
        name = f"logaddexp/{dt}/{sname}"
        r = rng_for(name)
        case(fam, name, "logaddexp", {}, [uniform(r, sa, dt, -10, 10), uniform(r, sb, dt, -10, 10)],
             jnp.logaddexp, "transc")
    a = [INF, -INF, INF, -INF, NAN, 1.0, 3.0, -50.0, 0.0]
    b = [INF, -INF, -INF, 2.0, 1.0, NAN, 3.0, 50.0, -0.0]
    for dt in ("float32", "float64"):
        case(fam, f"logaddexp/{dt}/specials", "logaddexp", {}, [arr(a, dt), arr(b, dt)],
             jnp.logaddexp, "transc")
    name = "logaddexp/float32/weak_scalar_right"
    case(fam, name, "logaddexp", {}, [uniform(rng_for(name), [5], "float32"), Scalar(0.5)],
         jnp.logaddexp, "transc")
    name = "logaddexp/int32_to_float32"
    case(fam, name, "logaddexp", {}, [ints(rng_for(name), [4], "int32", -5, 5),
                                       ints(rng_for(name, 1), [4], "int32", -5, 5)],
         lambda x, y: jnp.logaddexp(x.astype(jnp.float32), y.astype(jnp.float32)), "transc",
         out_dtype="float32")

    for dt, sname, lo, hi in [("float32", "scalars", Scalar(-1.0), Scalar(1.0)),
                              ("float64", "scalars", Scalar(-0.5), Scalar(2.0)),
                              ("float32", "min_above_max", Scalar(1.0), Scalar(-1.0)),
                              ("int32", "int_scalars", Scalar(-3), Scalar(4))]:
        name = f"clip/{dt}/{sname}"
        x = sample(dt, name, [3, 4]) if dt in FLOATS else ints(rng_for(name), [3, 4], dt, -9, 9)
        case(fam, name, "clip", {}, [x, lo, hi], lambda x, lo, hi: jnp.clip(x, lo, hi), E)
    name = "clip/float32/array_bounds"
    r = rng_for(name)
    case(fam, name, "clip", {}, [uniform(r, [3, 4], "float32"), uniform(r, [4], "float32", -2, 0),
                                 uniform(r, [3, 1], "float32", 0, 2)],
         lambda x, lo, hi: jnp.clip(x, lo, hi), E)
    name = "clip/float32/nan_passes"
    case(fam, name, "clip", {}, [arr([NAN, INF, -INF, 0.5], "float32"), Scalar(-1.0), Scalar(1.0)],
         lambda x, lo, hi: jnp.clip(x, lo, hi), E)

    for op, f in (("isnan", jnp.isnan), ("isinf", jnp.isinf), ("isfinite", jnp.isfinite)):
        for dt in ("float32", "float64", "bfloat16", "float16"):
            case(fam, f"{op}/{dt}/specials", op, {}, [arr(SPECIALS, dt).reshape(3, 3)], f, E,
                 out_dtype="bool")
        for dt in ("int32", "bool"):
            name = f"{op}/{dt}/3"
            case(fam, name, op, {}, [sample(dt, name, [3])], f, E, out_dtype="bool")

    for dt, sname, nan, posinf, neginf in [("float32", "defaults", 0.0, None, None),
                                           ("float32", "given", -1.0, 7.0, -7.0),
                                           ("float64", "defaults", 0.0, None, None),
                                           ("float16", "defaults", 0.0, None, None),
                                           ("bfloat16", "given_posinf", 2.0, 3.0, None)]:
        name = f"nan_to_num/{dt}/{sname}"
        f = (lambda n, p, m: lambda x: jnp.nan_to_num(x, nan=n, posinf=p, neginf=m))(nan, posinf,
                                                                                   neginf)
        case(fam, name, "nan_to_num", {"nan": nan, "posinf": posinf, "neginf": neginf},
             [arr(SPECIALS, dt)], f, E)
    name = "nan_to_num/int32/unchanged"
    case(fam, name, "nan_to_num", {"nan": 0.0, "posinf": None, "neginf": None},
         [sample("int32", name, [4])], jnp.nan_to_num, E)

    for op, f in (("var", jnp.var), ("std", jnp.std)):
        for dt, sname, s, axes, kd, ddof in [
            ("float32", "1d_6/all", [6], None, False, 0),
            ("float32", "2d_3x4/axis1_keep", [3, 4], [1], True, 0),
            ("float32", "2d_3x4/axis0_ddof1", [3, 4], [0], False, 1),
            ("float32", "3d_2x3x4/axes0_2", [2, 3, 4], [0, 2], False, 0),
            ("float32", "2d_3x4/axis-1_ddof1_keep", [3, 4], [-1], True, 1),
            ("float64", "2d_3x4/all_ddof1", [3, 4], None, False, 1),
            ("bfloat16", "2d_3x4/axis1", [3, 4], [1], False, 0),
            ("float16", "1d_6/all", [6], None, False, 0),
        ]:
            name = f"{op}/{dt}/{sname}"
            g = (lambda f, axes, kd, ddof: lambda x: f(
                x, axis=None if axes is None else tuple(axes), keepdims=kd, ddof=ddof))(
                    f, axes, kd, ddof)
            case(fam, name, op, {"axes": axes, "keepdims": kd, "ddof": ddof},
                 [uniform(rng_for(name), s, dt)], g, "reduce")

    for start, stop, num, endpoint, dt in [(0.0, 1.0, 5, True, "float32"),
                                           (0.0, 1.0, 5, False, "float32"),
                                           (-2.0, 3.0, 7, True, "float32"),
                                           (1.0, -1.0, 10, True, "float32"),
                                           (0.1, 0.7, 13, False, "float32"),
                                           (2.0, 5.0, 1, True, "float32"),
                                           (2.0, 5.0, 1, False, "float32"),
                                           (0.0, 1.0, 0, True, "float32"),
                                           (0.0, 1.0, 2, True, "float32"),
                                           (-1.0, 1.0, 9, True, "float64"),
                                           (0.0, 3.0, 6, False, "bfloat16")]:
        name = f"linspace/{dt}/{start}_{stop}_{num}_{endpoint}"
        case(fam, name, "linspace", {"start": start, "stop": stop, "num": num,
                                     "endpoint": endpoint, "dtype": dt}, [],
             (lambda a, b, n, e, dt: lambda: jnp.linspace(a, b, n, endpoint=e,
                                                         dtype=DTYPES[dt]))(start, stop, num,
                                                                            endpoint, dt),
             "arith", out_dtype=dt)

    for op, f in (("tril", jnp.tril), ("triu", jnp.triu)):
        for dt, sname, s, k in [("float32", "4x4_k0", [4, 4], 0), ("float32", "4x4_k1", [4, 4], 1),
                                ("float32", "4x4_k-1", [4, 4], -1),
                                ("float32", "3x5_k2", [3, 5], 2),
                                ("float32", "5x3_k-7", [5, 3], -7),
                                ("float32", "2x3x4_batch_k0", [2, 3, 4], 0),
                                ("int32", "3x3_k0", [3, 3], 0), ("bool", "3x3_k1", [3, 3], 1),
                                ("float64", "2x2_k0", [2, 2], 0)]:
            name = f"{op}/{dt}/{sname}"
            g = (lambda f, k: lambda x: f(x, k))(f, k)
            case(fam, name, op, {"k": k}, [sample(dt, name, s)], g, E)


# ---------------------------------------------------------------------------------------------
# Sorting: sort, argsort (stable), top_k


def gen_sort():
    fam = "sort"
    E = "exact"
    specials = [3.0, NAN, -1.0, 0.0, -0.0, INF, -INF, 2.0, NAN, -1.0]
    configs = [("float32", "1d_7", [7], 0), ("float32", "2d_3x5_axis1", [3, 5], 1),
               ("float32", "2d_3x5_axis0", [3, 5], 0), ("float32", "3d_2x3x4_axis-2", [2, 3, 4], -2),
               ("float64", "2d_4x3_axis-1", [4, 3], -1), ("bfloat16", "1d_6", [6], 0),
               ("float32", "size0_0x3_axis0", [0, 3], 0)]
    for dt, sname, s, axis in configs:
        name = f"sort/{dt}/{sname}"
        case(fam, name, "sort", {"axis": axis}, [sample(dt, name, s)],
             (lambda a: lambda x: jnp.sort(x, axis=a))(axis), E)
    for dt in ("int32", "uint8", "bool"):
        name = f"sort/{dt}/2d_3x4_axis1"
        x = bools(rng_for(name), [3, 4]) if dt == "bool" else ints(rng_for(name), [3, 4], dt, 0, 9)
        case(fam, name, "sort", {"axis": 1}, [x], lambda x: jnp.sort(x, axis=1), E)
    case(fam, "sort/float32/specials", "sort", {"axis": 0}, [arr(specials, "float32")],
         lambda x: jnp.sort(x, axis=0), E)

    def argsort(axis):
        return lambda x: jnp.argsort(x, axis=axis, stable=True).astype(jnp.int32)
    for dt, sname, s, axis in configs:
        name = f"argsort/{dt}/{sname}"
        case(fam, name, "argsort", {"axis": axis}, [sample(dt, name, s)], argsort(axis), E,
             out_dtype="int32")
    name = "argsort/int32/ties_stable"
    case(fam, name, "argsort", {"axis": -1}, [ints(rng_for(name), [3, 8], "int32", 0, 3)],
         argsort(-1), E, out_dtype="int32")
    case(fam, "argsort/float32/specials", "argsort", {"axis": 0}, [arr(specials, "float32")],
         argsort(0), E, out_dtype="int32")

    for dt, sname, s, k in [("float32", "1d_7_k3", [7], 3), ("float32", "2d_3x5_k2", [3, 5], 2),
                            ("float32", "3d_2x3x4_k4", [2, 3, 4], 4),
                            ("float32", "1d_5_k0", [5], 0), ("float64", "2d_2x6_k6", [2, 6], 6),
                            ("int32", "2d_3x6_k3_ties", [3, 6], 3), ("bfloat16", "1d_6_k2", [6], 2)]:
        name = f"top_k/{dt}/{sname}"
        x = ints(rng_for(name), s, dt, 0, 3) if dt == "int32" else sample(dt, name, s)
        for part, i, odt in (("values", 0, dt), ("indices", 1, "int32")):
            case(fam, f"{name}/{part}", f"top_k_{part}", {"k": k}, [x],
                 (lambda k, i: lambda x: lax.top_k(x, k)[i])(k, i), E, out_dtype=odt)
    x = arr([1.0, NAN, 5.0, -INF, 5.0, 2.0], "float32")
    for part, i, odt in (("values", 0, "float32"), ("indices", 1, "int32")):
        case(fam, f"top_k/float32/specials_k4/{part}", f"top_k_{part}", {"k": 4}, [x],
             (lambda i: lambda x: lax.top_k(x, 4)[i])(i), E, out_dtype=odt)


# ---------------------------------------------------------------------------------------------
# Indexed updates: x.at[idx].set/add/mul/min/max(v) and .get() along axis 0


AT_OPS = {
    "set": lambda r, v: r.set(v), "add": lambda r, v: r.add(v), "mul": lambda r, v: r.mul(v),
    "min": lambda r, v: r.min(v), "max": lambda r, v: r.max(v),
}


def at_fn(op):
    if op == "get":
        return lambda x, i: x.at[i].get()
    return lambda x, i, v: AT_OPS[op](x.at[i], v)


def gen_scatter():
    fam = "scatter"
    # (name, x shape, indices, update shape or a scalar); set never repeats an index (which
    # update wins is unspecified), the others do.
    for op in ("set", "add", "mul", "min", "max"):
        rep = op != "set"
        specs = [
            ("1d_6", [6], [1, 3, -1, 10, 3] if rep else [1, 3, -1, 10, -9], [5]),
            ("2d_5x3_idx2x2", [5, 3], [[0, 4], [2, 0]] if rep else [[0, 4], [2, 3]], [2, 2, 3]),
            ("2d_5x3_scalar_update", [5, 3], [4, 1, 4] if rep else [4, 1, -2], None),
            ("2d_5x3_row_update_bcast", [5, 3], [0, 2], [3]),
            ("2d_5x3_one_index", [5, 3], 2, [3]),
        ]
        for sname, s, idx, us in specs:
            for dt in ("float32", "int32") if sname == "1d_6" else ("float32",):
                name = f"at_{op}/{dt}/{sname}"
                r = rng_for(name)
                x = sample(dt, name, s) if dt != "int32" else ints(r, s, dt, -9, 9)
                if us is None:
                    v = Scalar(2.5 if dt == "float32" else 3)
                else:
                    v = sample(dt, name + "#v", us) if dt != "int32" else ints(r, us, dt, -9, 9)
                case(fam, name, f"at_{op}", {}, [x, i32(idx), v], at_fn(op), "arith")
    for sname, s, idx in [("1d_6", [6], [1, 3, -1, 10, -9]), ("2d_5x3_idx2x2", [5, 3], [[0, 4], [2, 7]]),
                          ("2d_5x3_one_index", [5, 3], -1)]:
        name = f"at_get/float32/{sname}"
        case(fam, name, "at_get", {}, [sample("float32", name, s), i32(idx)], at_fn("get"), "exact")


# ---------------------------------------------------------------------------------------------
# einsum: one- and two-operand specs


EINSUM = [
    ("ij->ji", [[2, 3]]), ("ij->i", [[2, 3]]), ("ij->", [[2, 3]]), ("ijk->kij", [[2, 3, 4]]),
    ("ij", [[2, 3]]), ("ji", [[2, 3]]), ("ijk->j", [[2, 3, 4]]),
    ("ij,jk->ik", [[2, 3], [3, 4]]), ("ij,jk", [[2, 3], [3, 4]]), ("i,i->", [[5], [5]]),
    ("i,j->ij", [[3], [4]]), ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
    ("ij,ij->ij", [[2, 3], [2, 3]]), ("ij,kj->ik", [[2, 3], [4, 3]]),
    ("bij,jk->bki", [[2, 3, 4], [4, 5]]), ("ij,j", [[2, 3], [3]]), ("ij,kl->", [[2, 3], [4, 5]]),
    ("ij,jk->ki", [[2, 3], [3, 4]]), ("bqd,bkd->bqk", [[2, 3, 4], [2, 5, 4]]),
    ("ij, jk -> ik", [[2, 3], [3, 2]]),
]


def gen_einsum():
    fam = "einsum"
    for dt in ("float32", "float64", "int32"):
        for spec, shapes in (EINSUM if dt == "float32" else EINSUM[7:12]):
            name = f"einsum/{dt}/{spec.replace(' ', '')}"
            if spec != spec.replace(" ", ""):
                name += "_spaces"
            xs = [sample(dt, f"{name}#{i}", s) for i, s in enumerate(shapes)]
            case(fam, name, "einsum", {"spec": spec}, xs,
                 (lambda spec: lambda *a: jnp.einsum(spec, *a, preferred_element_type=a[0].dtype))(spec),
                 "reduce")


# ---------------------------------------------------------------------------------------------
# Main


def write_family(fam, cases):
    path = os.path.join(HERE, f"ops_{fam}.json")
    lines = [json.dumps(c, allow_nan=False) for c in cases]
    text = ('{"jax_version": "%s", "cases": [\n' % jax.__version__
            + ",\n".join(lines) + "\n]}\n")
    with open(path, "w") as f:
        f.write(text)
    return path, len(text)


def main():
    gen_binary()
    gen_compare_logical()
    gen_unary()
    gen_integer_pow()
    gen_where()
    gen_promote()
    gen_weak_scalar()
    gen_reduce()
    gen_arg()
    gen_softmax()
    gen_linalg()
    gen_shape()
    gen_index()
    gen_misc()
    gen_numeric()
    gen_sort()
    gen_scatter()
    gen_einsum()
    total = 0
    for fam, cases in FAMILIES.items():
        path, size = write_family(fam, cases)
        total += size
        print(f"{os.path.relpath(path)}: {len(cases)} cases, {size} bytes")
    print(f"total: {sum(len(c) for c in FAMILIES.values())} cases, {total} bytes")


if __name__ == "__main__":
    main()
