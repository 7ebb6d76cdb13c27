#!/usr/bin/env python3
"""Golden strings for jaxrs's array printer: numpy's `str()` and JAX's `repr()` of many arrays.

Usage (from the repository root):

    pip install jax==0.10.2 numpy      # CPU jax is enough; ml_dtypes comes with jax
    python tests/golden/gen_print.py   # rewrites tests/golden/print.json

Each case records the array (the `ARR` encoding of gen.py, plus `weak`), `str(x)` (what
jaxrs's `Display` must print: numpy's `str`), JAX's `repr(x)` (for reference), and `debug`
(what jaxrs's `Debug` must print). `debug` is JAX's repr with one documented change, computed
here with the same `np.array2string` call JAX's `Array.__repr__` makes:

- JAX's `dtype=float32` becomes `dtype=f32, shape=[2, 2]` (jaxrs's short dtype name and the
  shape, always), followed by `, weak_type=True` for a weak type as in JAX;
- an empty array prints `[]` as the body (JAX writes `[], shape=(2, 0)`; the shape is already in
  the suffix);
- the suffix stays on the last line when that line then fits in numpy's 75 columns, and goes on
  a line of its own indented under the `[` otherwise (JAX keeps it on the same line after six
  spaces).

The script checks that the body it computes is the one JAX prints (rebuilding JAX's repr from
it), so the only differences are the ones listed. Output is deterministic: random cases seed
numpy's default_rng with the crc32 of the case name.
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
    sys.exit(f"gen_print.py: expected jax=={JAX_VERSION}, found {jax.__version__} "
             "(pass --any-jax-version to run anyway)")

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
from jax._src.lax.lax import _convert_element_type  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# JAX's dtype name -> jaxrs's (the names `Aval`'s Display uses: `f32[2,2]`).
DTYPES = {
    "bool": (np.bool_, "bool"),
    "int8": (np.int8, "i8"),
    "int16": (np.int16, "i16"),
    "int32": (np.int32, "i32"),
    "int64": (np.int64, "i64"),
    "uint8": (np.uint8, "u8"),
    "uint16": (np.uint16, "u16"),
    "uint32": (np.uint32, "u32"),
    "uint64": (np.uint64, "u64"),
    "bfloat16": (ml_dtypes.bfloat16, "bf16"),
    "float16": (np.float16, "f16"),
    "float32": (np.float32, "f32"),
    "float64": (np.float64, "f64"),
    "complex64": (np.complex64, "c64"),
    "complex128": (np.complex128, "c128"),
}
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
LINE_WIDTH = 75  # numpy's default linewidth, which JAX's repr uses
PREFIX = "Array("


def enc_value(x, dt):
    if dt.startswith("complex"):
        return [enc_value(x.real, "float64"), enc_value(x.imag, "float64")]
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


def jaxrs_debug(x):
    """JAX's Array.__repr__ with jaxrs's suffix (see the module docstring)."""
    value = np.asarray(x)
    short = DTYPES[x.dtype.name][1]
    suffix = f"dtype={short}, shape=[{', '.join(str(d) for d in x.shape)}]"
    if x.aval.weak_type:
        suffix += ", weak_type=True"
    if x.size == 0:
        body = "[]"
    else:
        body = np.array2string(value, prefix=PREFIX, suffix=",", separator=", ",
                               max_line_width=LINE_WIDTH)
        # The body must be JAX's: rebuild JAX's repr from it.
        jax_suffix = f"dtype={x.dtype.name}" + (", weak_type=True" if x.aval.weak_type else "")
        last_line_len = len(body) - body.rfind("\n") + 1
        jax_sep = " " * len(PREFIX) if last_line_len + len(jax_suffix) + 2 > LINE_WIDTH else " "
        assert repr(x) == f"{PREFIX}{body},{jax_sep}{jax_suffix})", (repr(x), body)
    last_line = body.rsplit("\n", 1)[-1]
    end = len(last_line) if "\n" in body else len(PREFIX) + len(body)
    fits = end + len(", ") + len(suffix) + len(")") <= LINE_WIDTH
    sep = " " if fits else "\n" + " " * len(PREFIX)
    return f"{PREFIX}{body},{sep}{suffix})"


CASES = []
NAMES = set()


def case(name, data, dtype, weak=False):
    assert name not in NAMES, name
    NAMES.add(name)
    np_dtype = DTYPES[dtype][0]
    value = np.asarray(data).astype(np_dtype) if not weak else np.asarray(data, dtype=np_dtype)
    if weak:
        x = _convert_element_type(value, np.dtype(np_dtype), weak_type=True)
        assert x.aval.weak_type
    else:
        x = jnp.asarray(value)
    assert x.dtype == np.dtype(np_dtype), (name, x.dtype)
    CASES.append({
        "name": name,
        "array": {"dtype": dtype, "shape": list(x.shape), "weak": bool(x.aval.weak_type),
                  "data": [enc_value(v, dtype) for v in np.asarray(x).reshape(-1)]},
        "str": str(x),
        "jax_repr": repr(x),
        "debug": jaxrs_debug(x),
    })


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def normal(name, shape, scale=1.0):
    return rng(name).normal(size=shape) * scale


def randint(name, shape, lo, hi):
    return rng(name).integers(lo, hi, size=shape)


nan, inf = float("nan"), float("inf")

# -- 0-d: numpy's str of a 0-d array is the scalar's str (`1.0`), JAX's repr is `1.`
for dt in ("float32", "float64", "float16"):
    for label, v in [("one", 1.0), ("tenth", 0.1), ("neg", -2.5), ("small", 1e-5),
                     ("big", 1e20 if dt != "float16" else 6e4), ("third", 1 / 3),
                     ("million", 1e6), ("nine_nines", 999.5), ("nan", nan), ("inf", inf),
                     ("neginf", -inf), ("negzero", -0.0), ("zero", 0.0), ("tenk", 1e4)]:
        case(f"scalar/{dt}/{label}", v, dt)
case("scalar/float32/e8", 123456789.0, "float32")
case("scalar/float32/1e-4", 1e-4, "float32")
case("scalar/float64/1e16", 1e16, "float64")
case("scalar/float64/1e15", 1e15, "float64")
case("scalar/float64/1e-4", 1e-4, "float64")
for label, v in [("one", 1.0), ("tenth", 0.1), ("small", -1e-5), ("big", 1e10), ("nan", nan),
                 ("negzero", -0.0), ("inf", -inf), ("frac", 300.25)]:
    case(f"scalar/bfloat16/{label}", v, "bfloat16")
case("scalar/int32/seven", 7, "int32")
case("scalar/int32/min", -2**31, "int32")
case("scalar/int64/big", -2**62 - 5, "int64")
case("scalar/uint8/max", 255, "uint8")
case("scalar/uint32/max", 2**32 - 1, "uint32")
case("scalar/int8/min", -128, "int8")
case("scalar/bool/true", True, "bool")
case("scalar/bool/false", False, "bool")

case("scalar/int16/min", -2**15, "int16")
case("scalar/uint16/max", 2**16 - 1, "uint16")
case("scalar/uint64/max", 2**64 - 1, "uint64")

# -- weak scalars (Rust scalars: jaxrs's weak_scalar gives f64, i64 or bool, JAX's x64 defaults)
case("weak/float64/one", 1.0, "float64", weak=True)
case("weak/float64/half", 0.5, "float64", weak=True)
case("weak/float64/tiny", 1e-7, "float64", weak=True)
case("weak/int64/three", 3, "int64", weak=True)
case("weak/bool/true", True, "bool", weak=True)

# -- 1-d
case("vec/float32/ints", [1.0, 2.0, 3.0], "float32")
case("vec/float32/mixed", [1.5, -2.25, 3.0], "float32")
case("vec/float32/tenths", [0.1, 0.2, 0.3], "float32")
case("vec/float32/sevenths", np.arange(20) / 7, "float32")
case("vec/float32/normal30", normal("vec/float32/normal30", 30), "float32")
case("vec/float32/sci_ratio", [1e-5, 1.0, 1e5], "float32")
case("vec/float32/sci_big", [1e6, 1.0], "float32")
case("vec/float32/sci_cutoff", [1e6, 1e4], "float32")
case("vec/float32/below_cutoff", [999999.0, 1e4], "float32")
case("vec/float32/min_1e-4", [1e-4, 0.01], "float32")
case("vec/float32/sci_negative", [-1e-7, 2.5e-3, -3.0], "float32")
# scientific: every value gets the digits of the longest, from its exact value (`3.5250369e-01`
# where the shortest is `3.525037e-01`)
case("vec/float32/sci_more_digits", [-1.3934019e-08, 0.35250369, 6.9126128e+07], "float32")
case("vec/float16/sci_more_digits", [1.7285e-06, 0.1703, -2.768e-4], "float16")
case("vec/float32/nonfinite", [nan, 1.0, inf, -inf], "float32")
case("vec/float32/nan_inf", [nan, inf], "float32")
case("vec/float32/nan_neginf", [nan, -inf], "float32")
case("vec/float32/all_nan", [nan, nan], "float32")
case("vec/float32/sci_nan", [1e-8, nan, 1.0], "float32")
case("vec/float32/signed_zeros", [-0.0, 0.0], "float32")
case("vec/float32/zeros", [0.0, 0.0, 0.0], "float32")
case("vec/float32/single", [42.0], "float32")
case("vec/float32/wide", normal("vec/float32/wide", 12, 1e3), "float32")
case("vec/float64/thirds", [0.1, 1 / 3, 2 / 3], "float64")
case("vec/float64/extreme", [1e300, 1e-300], "float64")
case("vec/float64/ties", [1 / 512, 3 / 512], "float64")
case("vec/float64/nine_digits", [123456789.123, 1.0], "float64")
case("vec/float64/below_cutoff", [99999999.0, 1e6], "float64")
case("vec/float64/long", [0.123456785, 1.0000000001, 2.5], "float64")
case("vec/float64/normal", normal("vec/float64/normal", 8), "float64")
case("vec/float16/basic", [0.1, 1.0, 100.0], "float16")
case("vec/float16/sci", [1000.0, 10.0], "float16")
case("vec/float16/normal", normal("vec/float16/normal", 10), "float16")
case("vec/float16/nonfinite", [nan, -inf, 0.5], "float16")
case("vec/bfloat16/basic", [1.5, 2.0, 3.25, -1e-5, nan, inf], "bfloat16")
case("vec/bfloat16/normal", normal("vec/bfloat16/normal", 10), "bfloat16")
case("vec/bfloat16/big", [1e6, 123456.0, -7.0, 0.0], "bfloat16")
case("vec/int32/basic", [-5, 10, 1000], "int32")
case("vec/int32/random", randint("vec/int32/random", 40, -10**6, 10**6), "int32")
case("vec/int64/big", [2**62, -2**63, 3], "int64")
case("vec/uint8/basic", [0, 255, 7], "uint8")
case("vec/uint32/basic", [0, 2**32 - 1, 12], "uint32")
case("vec/int8/basic", [-128, 0, 127], "int8")
case("vec/int16/basic", [-32768, 0, 32767, 5], "int16")
case("vec/uint16/basic", [0, 65535, 9], "uint16")
case("vec/uint64/basic", [0, 2**64 - 2**11, 2**63, 12], "uint64")  # exact as float64s
case("vec/bool/basic", [True, False, True], "bool")
case("vec/bool/all_true", [True, True], "bool")
case("vec/float32/empty", np.zeros(0), "float32")
case("vec/int32/empty", np.zeros(0), "int32")

# -- 2-d
case("mat/float32/2x2", [[1.0, 2.0], [3.0, 4.0]], "float32")
case("mat/float32/3x4", normal("mat/float32/3x4", (3, 4)), "float32")
case("mat/float32/12x12", np.arange(144.0).reshape(12, 12), "float32")
case("mat/float32/12x12_normal", normal("mat/float32/12x12_normal", (12, 12)), "float32")
case("mat/float32/sci", [[1e-5, 1.0], [1e5, -3.0]], "float32")
case("mat/float32/nonfinite", [[nan, 1.0], [-inf, 2.5]], "float32")
case("mat/float64/5x3", normal("mat/float64/5x3", (5, 3), 10), "float64")
case("mat/float16/2x3", normal("mat/float16/2x3", (2, 3)), "float16")
case("mat/bfloat16/3x4", normal("mat/bfloat16/3x4", (3, 4), 100), "bfloat16")
case("mat/int32/4x5", randint("mat/int32/4x5", (4, 5), -100, 100), "int32")
case("mat/uint8/3x3", randint("mat/uint8/3x3", (3, 3), 0, 256), "uint8")
case("mat/bool/3x3", randint("mat/bool/3x3", (3, 3), 0, 2), "bool")
case("mat/float32/1x1", [[5.0]], "float32")
case("mat/float32/2x0", np.zeros((2, 0)), "float32")
case("mat/float32/0x3", np.zeros((0, 3)), "float32")

# -- 3-d and 4-d
case("t3/float32/2x3x4", np.arange(24.0).reshape(2, 3, 4), "float32")
case("t3/int32/2x2x2", np.arange(8).reshape(2, 2, 2) - 4, "int32")
case("t3/bool/2x2x3", randint("t3/bool/2x2x3", (2, 2, 3), 0, 2), "bool")
case("t3/float64/3x2x2", normal("t3/float64/3x2x2", (3, 2, 2)), "float64")
case("t4/float32/2x2x2x2", np.arange(16.0).reshape(2, 2, 2, 2), "float32")

# -- above the threshold (1000 elements): summarised with 3 edge items
case("big/float32/arange5000", np.arange(5000.0), "float32")
case("big/int32/arange5000", np.arange(5000), "int32")
case("big/float32/40x40", np.arange(1600.0).reshape(40, 40), "float32")
case("big/float32/40x40_normal", normal("big/float32/40x40_normal", (40, 40)), "float32")
case("big/int64/40x40", np.arange(1600).reshape(40, 40) * 10**12, "int64")
case("big/float32/2x10x100", np.arange(2000.0).reshape(2, 10, 100), "float32")
# multiples of 1/64: short JSON, still 8 significant digits in places
case("big/float32/10x10x20", np.round(normal("big/float32/10x10x20", (10, 10, 20), 1e4) * 64) / 64,
     "float32")
case("big/float32/3x4x10x10", np.arange(1200.0).reshape(3, 4, 10, 10), "float32")
case("big/float64/1001", np.linspace(0, 1, 1001), "float64")
case("big/float16/1200", normal("big/float16/1200", 1200), "float16")
case("big/bfloat16/1200", normal("big/bfloat16/1200", 1200), "bfloat16")
case("big/bool/1500", randint("big/bool/1500", 1500, 0, 2), "bool")
case("big/float32/1000_full", np.arange(1000.0), "float32")
case("big/float32/nan_edges", np.concatenate([[nan], np.arange(2000.0), [-inf]]), "float32")

# Complex numbers: numpy's layout of real and imaginary parts, padded column by column.
nan_c = complex(nan, 0)
case("scalar/complex64/basic", 1.5 - 2j, "complex64")
case("scalar/complex128/third", complex(1 / 3, -2 / 3), "complex128")
case("vec/complex64/basic", [1 + 2j, -0.5 + 3j, 0j], "complex64")
case("vec/complex64/normal", normal("vec/complex64/normal", 6) + 1j * normal("vc/i", 6),
     "complex64")
case("vec/complex128/normal", normal("vec/complex128/normal", 5) + 1j * normal("vc2/i", 5),
     "complex128")
case("vec/complex64/sci", [1e-8 + 1j, 1e6 - 2e-3j], "complex64")
case("vec/complex64/nonfinite", [complex(nan, 1), complex(1, inf), complex(-inf, -inf)],
     "complex64")
case("mat/complex64/3x3", (normal("mat/complex64/3x3", (3, 3))
                          + 1j * normal("mc/i", (3, 3))), "complex64")
case("mat/complex128/2x4", (normal("mat/complex128/2x4", (2, 4))
                           + 1j * normal("mc2/i", (2, 4))), "complex128")
case("vec/complex64/ints", [1 + 1j, 20 - 3j, -300 + 0j], "complex64")


def main():
    lines = [json.dumps(c, allow_nan=False) for c in CASES]
    text = ('{"jax_version": "%s", "cases": [\n' % jax.__version__
            + ",\n".join(lines) + "\n]}\n")
    path = os.path.join(HERE, "print.json")
    with open(path, "w") as f:
        f.write(text)
    print(f"{path}: {len(CASES)} cases, {len(text)} bytes")


if __name__ == "__main__":
    main()
