#!/usr/bin/env python3
"""Goldens for `jaxrs::numpy`'s elementwise functions (`tests/jnp_math.rs`):
`python tests/golden/gen_jnp_math.py` rewrites `tests/golden/jnp_math.json`. See jaxcases.py
for the format and what each case checks.

Inputs stay inside each function's domain (so derivatives are finite), and dtypes are chosen
where jaxrs's promotion today agrees with JAX's x64 lattice (a weak float scalar meets float
arrays only)."""

import numpy as np

from jaxcases import DTYPES, Cases, jnp

c = Cases("jnp_math")

# ---- unary float functions: float32 and float64 (check_grads), a half float, an int -------
# name -> (lo, hi) of the inputs, inside the domain.
UNARY = {
    "sqrt": (0.1, 4.0), "exp": (-2.0, 2.0), "expm1": (-2.0, 2.0), "log": (0.1, 4.0),
    "log1p": (-0.5, 3.0), "log2": (0.1, 4.0), "log10": (0.1, 4.0), "exp2": (-2.0, 2.0),
    "sin": (-3.0, 3.0), "cos": (-3.0, 3.0), "tan": (-1.2, 1.2), "arcsin": (-0.9, 0.9),
    "arccos": (-0.9, 0.9), "arctan": (-3.0, 3.0), "sinh": (-2.0, 2.0), "cosh": (-2.0, 2.0),
    "tanh": (-2.0, 2.0), "arcsinh": (-3.0, 3.0), "arccosh": (1.5, 4.0),
    "arctanh": (-0.6, 0.6), "cbrt": (0.2, 4.0), "acos": (-0.9, 0.9), "asin": (-0.9, 0.9),
    "atan": (-3.0, 3.0), "acosh": (1.5, 4.0), "asinh": (-3.0, 3.0), "atanh": (-0.6, 0.6),
    "degrees": (-3.0, 3.0), "radians": (-90.0, 90.0), "rad2deg": (-3.0, 3.0),
    "deg2rad": (-90.0, 90.0), "reciprocal": (0.5, 3.0), "square": (-2.0, 2.0),
    "negative": (-2.0, 2.0), "positive": (-2.0, 2.0), "fabs": (0.2, 2.0), "abs": (0.2, 2.0),
    "absolute": (0.2, 2.0), "sinc": (0.1, 2.0),
}
for name, (lo, hi) in UNARY.items():
    f = getattr(jnp, name)
    c.add(f"jnp.{name}", f, [c.uniform((3, 4), lo, hi, "float32")])
    c.add(f"jnp.{name}", f, [c.uniform((2, 3), lo, hi, "float64")])
for name in ("sqrt", "exp", "log", "sin", "tanh", "arctan", "cbrt", "log2", "exp2", "square"):
    lo, hi = UNARY[name]
    c.add(f"jnp.{name}", getattr(jnp, name), [c.uniform((5,), lo, hi, "bfloat16")])
    c.add(f"jnp.{name}", getattr(jnp, name), [c.uniform((), lo, hi, "float16")])
# Integer inputs compute in float32 (int64 in float64).
for name in ("sqrt", "exp", "log2", "log10", "sin", "arctan", "cbrt", "exp2", "reciprocal",
             "degrees", "fabs", "sinc"):
    c.add(f"jnp.{name}", getattr(jnp, name), [c.ints((4,), 1, 5, "int32")])
c.add("jnp.sqrt", jnp.sqrt, [c.ints((3,), 1, 9, "int64")])
c.add("jnp.log", jnp.log, [c.ints((3,), 1, 9, "uint8")])
# sinc at 0 is 1 with derivative 0 (JAX's Maclaurin rule).
c.add("jnp.sinc", jnp.sinc, [np.array([0.0, 0.5, -1.5], np.float64)])

# Integer arithmetic that keeps its dtype.
for dt in ("int8", "int32", "int64"):
    c.add("jnp.abs", jnp.abs, [c.ints((5,), -9, 9, dt)])
    c.add("jnp.square", jnp.square, [c.ints((5,), -9, 9, dt)])
    c.add("jnp.negative", jnp.negative, [c.ints((5,), -9, 9, dt)])
    c.add("jnp.sign", jnp.sign, [c.ints((5,), -9, 9, dt)])
c.add("jnp.abs", jnp.abs, [c.ints((4,), 0, 200, "uint8")])
c.add("jnp.absolute", jnp.absolute, [c.ints((4,), -5, 5, "int32")])
c.add("jnp.square", jnp.square, [c.ints((4,), 0, 15, "uint8")])
c.add("jnp.sign", jnp.sign, [np.array([-2.0, 0.0, 3.5, -0.0], np.float32)])
c.add("jnp.positive", jnp.positive, [c.ints((3,), -5, 5, "int32")])

# ---- rounding ---------------------------------------------------------------------------
halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.2, -3.7], np.float32)
for name in ("floor", "ceil", "trunc", "rint", "fix"):
    if not hasattr(jnp, name) or name == "fix":
        continue
    f = getattr(jnp, name)
    c.add(f"jnp.{name}", f, [halves])
    c.add(f"jnp.{name}", f, [c.normal((2, 3), "float64", 3.0)])
    c.add(f"jnp.{name}", f, [c.normal((4,), "bfloat16", 3.0)])
c.add("jnp.floor", jnp.floor, [c.ints((4,), -9, 9, "int32")])
c.add("jnp.ceil", jnp.ceil, [c.ints((4,), -9, 9, "int8")])
c.add("jnp.trunc", jnp.trunc, [c.ints((4,), -9, 9, "int32")])
c.add("jnp.rint", jnp.rint, [c.ints((4,), -9, 9, "int32")])
for d in (0, 1, 2, -1):
    c.add("jnp.round", lambda x, d=d: jnp.round(x, d),
          [np.array([1.25, -2.355, 14.5, 0.05, 125.0], np.float64)], params={"decimals": d},
          check_grads=False)  # ties: a finite difference straddles the jump
c.add("jnp.round", lambda x: jnp.round(x, 0), [halves], params={"decimals": 0})
c.add("jnp.round", lambda x: jnp.round(x, 1), [c.normal((3,), "float32", 5.0)],
      params={"decimals": 1})
c.add("jnp.around", lambda x: jnp.around(x, 0), [halves], params={"decimals": 0})
c.add("jnp.round", lambda x: jnp.round(x, 0), [c.ints((3,), -9, 9, "int32")],
      params={"decimals": 0})
c.add("jnp.modf", jnp.modf, [np.array([-2.5, -0.25, 0.0, 1.75, 3.0], np.float32)])
c.add("jnp.modf", jnp.modf, [c.normal((2, 3), "float64", 3.0)])

# ---- binary arithmetic ----------------------------------------------------------------------
for name in ("add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum",
             "power", "pow", "arctan2", "atan2", "hypot", "logaddexp", "logaddexp2",
             "float_power", "fmax", "fmin", "copysign", "heaviside"):
    f = getattr(jnp, name)
    lo = 0.3 if name in ("power", "pow", "float_power") else -2.0
    c.add(f"jnp.{name}", f, [c.uniform((3, 4), lo, 2.0, "float32"),
                             c.uniform((3, 4), lo, 2.0, "float32")])
    c.add(f"jnp.{name}", f, [c.uniform((2, 3), lo, 2.0, "float64"),
                             c.uniform((3,), lo, 2.0, "float64")])
    c.add(f"jnp.{name}", f, [c.uniform((4,), 0.3, 2.0, "float32"), 1.5])
for name in ("add", "subtract", "multiply", "maximum", "minimum", "floor_divide", "remainder",
             "mod", "fmod", "power"):
    f = getattr(jnp, name)
    lo = 0 if name == "power" else -9
    for dt in ("int32", "int8", "uint8", "int64"):
        a = c.ints((6,), 0 if dt == "uint8" else lo, 9, dt)
        b = c.ints((6,), 1, 4, dt) if name == "power" else (
            np.where(c.ints((6,), 1, 5, dt) % 2 == 0, 1, -1).astype(dt) * c.ints((6,), 1, 5, dt)
            if dt != "uint8" else c.ints((6,), 1, 5, dt))
        c.add(f"jnp.{name}", f, [a, b])
    c.add(f"jnp.{name}", f, [c.ints((6,), 0, 9, "int32"), 3])
for name in ("divide", "floor_divide", "remainder", "fmod"):
    f = getattr(jnp, name)
    c.add(f"jnp.{name}", f, [c.uniform((5,), -5.0, 5.0, "float64"),
                             np.array([1.5, -2.0, 0.7, -0.3, 2.5], np.float64)])
c.add("jnp.divide", jnp.divide, [c.ints((4,), -9, 9, "int32"), c.ints((4,), 1, 4, "int32")])
c.add("jnp.divide", jnp.divide, [c.ints((4,), -9, 9, "int64"), c.ints((4,), 1, 4, "int64")])
c.add("jnp.divmod", jnp.divmod, [c.ints((6,), -9, 9, "int32"),
                                 np.array([2, -3, 4, -1, 5, 3], np.int32)])
c.add("jnp.divmod", jnp.divmod, [c.uniform((4,), -5.0, 5.0, "float64"),
                                 np.array([1.5, -2.0, 0.7, 2.5], np.float64)], grad=False)
c.add("jnp.add", jnp.add, [c.bools((5,)), c.bools((5,))])
c.add("jnp.multiply", jnp.multiply, [c.bools((5,)), c.bools((5,))])
c.add("jnp.power", jnp.power, [c.uniform((4,), 0.5, 2.0, "float32"), 2])
c.add("jnp.float_power", jnp.float_power, [c.ints((4,), 1, 5, "int32"),
                                           c.ints((4,), 0, 3, "int32")])
nanny = np.array([1.0, np.nan, -2.0, np.nan], np.float32)
c.add("jnp.fmax", jnp.fmax, [nanny, np.array([0.5, 3.0, np.nan, np.nan], np.float32)],
      grad=False)
c.add("jnp.fmin", jnp.fmin, [nanny, np.array([0.5, 3.0, np.nan, np.nan], np.float32)],
      grad=False)
c.add("jnp.maximum", jnp.maximum, [nanny, np.array([0.5, 3.0, 1.0, np.nan], np.float32)],
      grad=False)
c.add("jnp.hypot", jnp.hypot, [np.array([3.0, 0.0, np.inf, 1e200], np.float64),
                               np.array([4.0, 0.0, 1.0, 1e200], np.float64)], grad=False)
c.add("jnp.hypot", jnp.hypot, [c.ints((3,), -5, 5, "int32"), c.ints((3,), 1, 5, "int32")])
c.add("jnp.arctan2", jnp.arctan2, [c.ints((3,), -5, 5, "int32"), c.ints((3,), 1, 5, "int32")])
c.add("jnp.copysign", jnp.copysign,
      [np.array([1.0, -2.0, 3.0, 4.0], np.float32), np.array([-0.0, 0.0, -1.0, 2.0], np.float32)],
      grad=False)
c.add("jnp.heaviside", jnp.heaviside,
      [np.array([-1.0, 0.0, 2.0, 0.0], np.float64), np.array([0.5, 0.25, 0.5, 1.0], np.float64)],
      wrt=[1])
c.add("jnp.logaddexp", jnp.logaddexp,
      [np.array([0.0, 1000.0, -np.inf, np.inf], np.float64),
       np.array([0.0, 0.0, -np.inf, np.inf], np.float64)], grad=False)
c.add("jnp.logaddexp2", jnp.logaddexp2,
      [np.array([0.0, 1000.0, -np.inf, 3.0], np.float64),
       np.array([0.0, 0.0, -np.inf, 1.0], np.float64)], grad=False)
# JAX defines no derivative of nextafter (nor of spacing, built on it).
c.add("jnp.nextafter", jnp.nextafter, [c.normal((4,), "float32"), c.normal((4,), "float32")],
      grad=False)
c.add("jnp.nextafter", jnp.nextafter, [np.array([1.0, 0.0, -1.0], np.float64), 2.0], grad=False)
c.add("jnp.nextafter", jnp.nextafter, [np.array([1.0, 0.0, -1.0], np.float16),
                                       np.array([0.0, 1.0, -2.0], np.float16)], grad=False)
c.add("jnp.spacing", jnp.spacing, [np.array([0.0, 0.25, 1.0, -3.0, 1e30], np.float32)],
      grad=False)
c.add("jnp.spacing", jnp.spacing, [np.array([0.0, 1.0, -1e-310, 5.0], np.float64)], grad=False)
c.add("jnp.spacing", jnp.spacing, [np.array([0.0, 1.0, -2.0], np.float16)], grad=False)
c.add("jnp.ldexp", jnp.ldexp, [c.normal((4,), "float32"), np.array([0, 3, -2, 10], np.int32)])
c.add("jnp.ldexp", jnp.ldexp, [c.normal((3,), "float64"), np.array([1, -5, 60], np.int32)])
c.add("jnp.ldexp", jnp.ldexp, [np.array([0.0, np.inf, 1.5], np.float32), 4])
c.add("jnp.frexp", jnp.frexp, [np.array([8.0, -3.0, 0.0, 0.1, 1e-40, np.inf], np.float32)])
c.add("jnp.frexp", jnp.frexp, [np.array([1.0, -1e300, 5e-320, 7.0], np.float64)])
c.add("jnp.frexp", jnp.frexp, [np.array([1.5, -0.002, 300.0], np.float16)])
c.add("jnp.unwrap", jnp.unwrap, [np.array([0.0, 3.0, 6.5, 0.5, -3.5, 2.9], np.float64)])
c.add("jnp.unwrap", lambda p: jnp.unwrap(p, axis=0),
      [np.array([[0.0, 1.0], [4.0, -3.0], [7.5, 2.0]], np.float32)], params={"axis": 0})
c.add("jnp.unwrap", lambda p: jnp.unwrap(p, discont=4.0, period=5.0),
      [np.array([0.0, 4.5, 9.0, 1.0], np.float64)], params={"discont": 4.0, "period": 5.0})
c.add("jnp.clip", lambda x: jnp.clip(x, -1.0, 1.0), [c.normal((3, 4), "float32", 2.0)],
      params={"min": -1.0, "max": 1.0})
c.add("jnp.clip", lambda x: jnp.clip(x, -1.0, 1.0), [c.normal((5,), "float64", 2.0)],
      params={"min": -1.0, "max": 1.0})
c.add("jnp.clip", lambda x: jnp.clip(x, -3, 4), [c.ints((6,), -9, 9, "int32")],
      params={"min": -3, "max": 4})

# ---- comparisons, logic, bits -----------------------------------------------------------------
for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    f = getattr(jnp, name)
    c.add(f"jnp.{name}", f, [c.ints((6,), -2, 2, "int32"), c.ints((6,), -2, 2, "int32")])
    c.add(f"jnp.{name}", f, [np.array([1.0, 2.0, np.nan, 3.0], np.float32),
                             np.array([1.0, 3.0, np.nan, 2.0], np.float32)])
    c.add(f"jnp.{name}", f, [c.ints((2, 3), -2, 2, "int8"), 0])
for name in ("logical_and", "logical_or", "logical_xor"):
    f = getattr(jnp, name)
    c.add(f"jnp.{name}", f, [c.bools((6,)), c.bools((6,))])
    c.add(f"jnp.{name}", f, [c.ints((6,), -1, 2, "int32"), c.ints((6,), -1, 2, "int32")])
c.add("jnp.logical_not", jnp.logical_not, [c.bools((5,))])
c.add("jnp.logical_not", jnp.logical_not, [np.array([0.0, 1.5, -2.0], np.float32)])
for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    f = getattr(jnp, name)
    for dt in ("int32", "uint8", "uint32", "int8"):
        c.add(f"jnp.{name}", f, [c.ints((6,), 0, 120, dt), c.ints((6,), 0, 120, dt)])
    c.add(f"jnp.{name}", f, [c.bools((6,)), c.bools((6,))])
for name in ("bitwise_not", "invert", "bitwise_invert"):
    f = getattr(jnp, name)
    c.add(f"jnp.{name}", f, [c.ints((5,), -100, 100, "int32")])
    c.add(f"jnp.{name}", f, [c.ints((5,), 0, 255, "uint8")])
    c.add(f"jnp.{name}", f, [c.bools((5,))])
for name in ("left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift"):
    f = getattr(jnp, name)
    c.add(f"jnp.{name}", f, [c.ints((6,), -1000, 1000, "int32"), c.ints((6,), 0, 12, "int32")])
    c.add(f"jnp.{name}", f, [c.ints((6,), 0, 2**31, "uint32"), c.ints((6,), 0, 31, "uint32")])
    c.add(f"jnp.{name}", f, [c.ints((4,), -100, 100, "int8"), c.ints((4,), 0, 7, "int8")])
c.add("jnp.bitwise_count", jnp.bitwise_count, [c.ints((6,), -1000, 1000, "int32")])
c.add("jnp.bitwise_count", jnp.bitwise_count, [c.ints((4,), 0, 255, "uint8")])
c.add("jnp.bitwise_count", jnp.bitwise_count, [np.array([-1, 2**40, 7], np.int64)])
for dt in ("int32", "int64"):
    c.add("jnp.gcd", jnp.gcd, [c.ints((6,), -60, 60, dt), c.ints((6,), -60, 60, dt)])
    c.add("jnp.lcm", jnp.lcm, [c.ints((6,), -30, 30, dt), c.ints((6,), -30, 30, dt)])
c.add("jnp.gcd", jnp.gcd, [np.array([0, 0, 12, 7], np.int32), np.array([0, 5, 0, 7], np.int32)])
c.add("jnp.gcd", jnp.gcd, [c.ints((4,), 0, 100, "int32"), 12])
c.add("jnp.lcm", jnp.lcm, [np.array([0, 4, 6, -7], np.int32), np.array([3, 0, 4, 3], np.int32)])

# ---- tests ----------------------------------------------------------------------------------
special = np.array([1.0, -np.inf, np.inf, np.nan, 0.0, -0.0, -2.5], np.float32)
for name in ("isnan", "isinf", "isfinite", "isneginf", "isposinf", "signbit", "isreal",
             "iscomplex"):
    f = getattr(jnp, name)
    c.add(f"jnp.{name}", f, [special])
    c.add(f"jnp.{name}", f, [special.astype(np.float64)])
    c.add(f"jnp.{name}", f, [special.astype(np.float16)])
    c.add(f"jnp.{name}", f, [c.ints((4,), -3, 3, "int32")])
c.add("jnp.signbit", jnp.signbit, [c.bools((3,))])
c.add("jnp.signbit", jnp.signbit, [special.astype(DTYPES["bfloat16"])])
# (Not -nan: the golden format writes NaN without its sign.)
c.add("jnp.signbit", jnp.signbit, [np.array([-0.0, -1.0, 2.0, -np.inf], np.float32)])
c.add("jnp.nan_to_num", jnp.nan_to_num, [special])
c.add("jnp.nan_to_num", jnp.nan_to_num, [special.astype(np.float64)])
c.add("jnp.nan_to_num", lambda x: jnp.nan_to_num(x, nan=1.0, posinf=5.0, neginf=-5.0),
      [special], params={"nan": 1.0, "posinf": 5.0, "neginf": -5.0})
c.add("jnp.nan_to_num", jnp.nan_to_num, [c.ints((3,), -3, 3, "int32")])
close_a = np.array([1.0, 1.0, np.inf, np.nan, -np.inf, 100.0, 0.0], np.float64)
close_b = np.array([1.0 + 1e-9, 1.1, np.inf, np.nan, np.inf, 100.001, 1e-9], np.float64)
for rtol, atol, en in ((1e-5, 1e-8, False), (1e-5, 1e-8, True), (1e-3, 0.0, False),
                       (0.0, 0.2, False)):
    p = {"rtol": rtol, "atol": atol, "equal_nan": en}
    c.add("jnp.isclose", lambda a, b, p=p: jnp.isclose(a, b, **p), [close_a, close_b], params=p)
    c.add("jnp.isclose", lambda a, b, p=p: jnp.isclose(a, b, **p),
          [close_a.astype(np.float32), close_b.astype(np.float32)], params=p)
    c.add("jnp.allclose", lambda a, b, p=p: jnp.allclose(a, b, **p), [close_a, close_b],
          params=p)
    c.add("jnp.allclose", lambda a, b, p=p: jnp.allclose(a, b, **p),
          [close_a[:3], close_b[:3]], params=p)
c.add("jnp.isclose", lambda a, b: jnp.isclose(a, b),
      [c.ints((4,), 0, 3, "int32"), c.ints((4,), 0, 3, "int32")],
      params={"rtol": 1e-5, "atol": 1e-8, "equal_nan": False})
c.add("jnp.isclose", lambda a: jnp.isclose(a, 1.0), [np.array([1.0, 1.000001, 2.0], np.float32)],
      params={"rtol": 1e-5, "atol": 1e-8, "equal_nan": False, "b": 1.0})
eq_a = np.array([[1.0, np.nan], [3.0, 4.0]], np.float32)
for b, en in ((eq_a.copy(), False), (eq_a.copy(), True), (eq_a[:1], False),
              (np.array([[1.0, np.nan], [3.0, 5.0]], np.float32), True)):
    c.add("jnp.array_equal", lambda x, y, en=en: jnp.array_equal(x, y, equal_nan=en), [eq_a, b],
          params={"equal_nan": en}, vmap=False)
row = np.array([1, 2, 3], np.int32)
# (Shapes that do not broadcast are a TypeError in JAX 0.10.2; jaxrs answers false, numpy's.)
for b in (np.array([[1, 2, 3], [1, 2, 3]], np.int32), np.array([[1, 2, 3], [1, 2, 4]], np.int32),
          np.array([[1], [1]], np.int32), row.copy()):
    c.add("jnp.array_equiv", jnp.array_equiv, [row, b], vmap=False)

# ---- dtype conversions --------------------------------------------------------------------
for to in ("int32", "float16", "bool", "int8", "float64"):
    c.add("jnp.astype", lambda x, to=to: x.astype(to),
          [np.array([-1.7, 0.0, 2.5, 100.2], np.float32)], params={"dtype": to})
c.add("jnp.astype", lambda x: x.astype("float32"), [c.ints((3,), -5, 5, "int32")],
      params={"dtype": "float32"})

# ---- dtype helpers: each a case with no inputs whose outputs carry the answers -------------
OURS = ("bool", "int8", "int32", "int64", "uint8", "uint32", "bfloat16", "float16", "float32",
        "float64")
for dt in ("bfloat16", "float16", "float32", "float64"):
    fi = jnp.finfo(dt)
    fields = [fi.bits, fi.eps, fi.epsneg, fi.max, fi.min, fi.tiny, fi.smallest_normal,
              fi.smallest_subnormal, fi.resolution, fi.nmant, fi.nexp, fi.minexp, fi.maxexp,
              fi.precision]
    c.add("jnp.finfo", lambda f=fields: np.array([float(v) for v in f], np.float64), [],
          params={"dtype": dt}, vmap=False)
for dt in ("int8", "int32", "int64", "uint8", "uint32"):
    ii = jnp.iinfo(dt)
    c.add("jnp.iinfo", lambda ii=ii: np.array([ii.bits, ii.min, ii.max], np.int64), [],
          params={"dtype": dt}, vmap=False)
# Pairs whose JAX answer is a dtype jaxrs has (int8 + uint8 is int16 in JAX: left out).
pairs = [[a, b] for a in OURS for b in OURS if str(jnp.promote_types(a, b)) in OURS]
c.add("jnp.promote_types",
      lambda: tuple(np.zeros((), jnp.promote_types(a, b)) for a, b in pairs), [],
      params={"pairs": pairs}, vmap=False)
allpairs = [[a, b] for a in OURS for b in OURS]
c.add("jnp.can_cast", lambda: np.array([jnp.can_cast(a, b) for a, b in allpairs]), [],
      params={"pairs": allpairs}, vmap=False)
CATS = {"bool": jnp.bool_, "number": jnp.number, "integer": jnp.integer,
        "signedinteger": jnp.signedinteger, "unsignedinteger": jnp.unsignedinteger,
        "inexact": jnp.inexact, "floating": jnp.floating, "generic": jnp.generic}
subs = [[d, k] for d in OURS for k in CATS]
c.add("jnp.issubdtype", lambda: np.array([jnp.issubdtype(DTYPES[d], CATS[k]) for d, k in subs]), [],
      params={"pairs": subs}, vmap=False)
KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating", "numeric")
kinds = [[d, k] for d in OURS for k in KINDS]
c.add("jnp.isdtype", lambda: np.array([jnp.isdtype(DTYPES[d], k) for d, k in kinds]), [],
      params={"pairs": kinds}, vmap=False)
for x in (np.float32(2.0).reshape(()), np.ones((2,), np.float32)):
    c.add("jnp.isscalar", lambda x: np.array(jnp.isscalar(x)), [x], vmap=False)
c.add("jnp.isrealobj", lambda x: np.array(jnp.isrealobj(x)), [np.ones((2,), np.float32)],
      vmap=False)
c.add("jnp.iscomplexobj", lambda x: np.array(jnp.iscomplexobj(x)), [np.ones((2,), np.int32)],
      vmap=False)
for name, v in (("pi", jnp.pi), ("e", jnp.e), ("inf", jnp.inf), ("nan", jnp.nan),
                ("euler_gamma", jnp.euler_gamma)):
    c.add(f"jnp.{name}", lambda v=v: np.array(v, np.float64), [], vmap=False)
c.save()
