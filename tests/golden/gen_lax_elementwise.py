#!/usr/bin/env python3
"""Goldens for `jaxrs::lax`'s elementwise primitives (`tests/lax_elementwise.rs`):
`python tests/golden/gen_lax_elementwise.py` rewrites `tests/golden/lax_elementwise.json`.
See jaxcases.py for the format and what each case checks. lax does not promote, so every
case's operands share a dtype."""

import numpy as np

from jaxcases import Cases, jnp  # noqa: F401
from jax import lax

c = Cases("lax_elementwise")

# name -> (lo, hi) inside the domain; float32 and float64 (check_grads) cases each.
UNARY = {
    "exp": (-2, 2), "exp2": (-2, 2), "expm1": (-2, 2), "log": (0.1, 4), "log1p": (-0.5, 3),
    "logistic": (-3, 3), "sqrt": (0.1, 4), "rsqrt": (0.2, 4), "cbrt": (0.2, 4),
    "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2), "asin": (-0.9, 0.9),
    "acos": (-0.9, 0.9), "atan": (-3, 3), "sinh": (-2, 2), "cosh": (-2, 2), "tanh": (-2, 2),
    "asinh": (-3, 3), "acosh": (1.5, 4), "atanh": (-0.6, 0.6), "erf": (-2, 2),
    "erfc": (-2, 2), "erf_inv": (-0.9, 0.9), "lgamma": (0.3, 5), "digamma": (0.3, 5),
    "neg": (-2, 2), "abs": (0.2, 2), "square": (-2, 2), "reciprocal": (0.5, 3),
}
for name, (lo, hi) in UNARY.items():
    f = getattr(lax, name)
    c.add(f"lax.{name}", f, [c.uniform((3, 4), lo, hi, "float32")])
    c.add(f"lax.{name}", f, [c.uniform((2, 3), lo, hi, "float64")])
for name in ("exp", "sin", "tanh", "logistic", "sqrt", "erf", "lgamma"):
    lo, hi = UNARY[name]
    c.add(f"lax.{name}", getattr(lax, name), [c.uniform((4,), lo, hi, "bfloat16")])
    c.add(f"lax.{name}", getattr(lax, name), [c.uniform((), lo, hi, "float16")])
# lgamma and digamma on negative non-integers (the reflection branches).
c.add("lax.lgamma", lax.lgamma, [np.array([-0.5, -1.5, -2.3, 7.5, 30.0], np.float64)])
c.add("lax.digamma", lax.digamma, [np.array([-0.5, -1.5, -2.3, 7.5, 30.0], np.float64)])
for name in ("neg", "abs", "sign", "square"):
    for dt in ("int8", "int32", "int64"):
        c.add(f"lax.{name}", getattr(lax, name), [c.ints((5,), -9, 9, dt)])
c.add("lax.sign", lax.sign, [np.array([-2.0, 0.0, 3.5, -0.0], np.float32)])
c.add("lax.sign", lax.sign, [c.ints((4,), 0, 3, "uint32")])
c.add("lax.integer_pow", lambda x: lax.integer_pow(x, 3), [c.normal((3, 4), "float32")],
      params={"y": 3})
c.add("lax.integer_pow", lambda x: lax.integer_pow(x, -2), [c.uniform((5,), 0.5, 2, "float64")],
      params={"y": -2})
c.add("lax.integer_pow", lambda x: lax.integer_pow(x, 0), [c.normal((3,), "float64")],
      params={"y": 0})
c.add("lax.integer_pow", lambda x: lax.integer_pow(x, 5), [c.ints((4,), -3, 3, "int32")],
      params={"y": 5})

halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.2, -3.7], np.float32)
for name in ("floor", "ceil"):
    c.add(f"lax.{name}", getattr(lax, name), [halves])
    c.add(f"lax.{name}", getattr(lax, name), [c.normal((2, 3), "float64", 3.0)])
for method in (0, 1):
    c.add("lax.round", lambda x, m=method: lax.round(x, m), [halves], params={"method": method})
    # At the ties a finite difference straddles the jump: no numerical check there.
    c.add("lax.round", lambda x, m=method: lax.round(x, m), [halves.astype(np.float64)],
          params={"method": method}, check_grads=False)
    c.add("lax.round", lambda x, m=method: lax.round(x, m), [halves.astype(np.float16)],
          params={"method": method})
c.add("lax.round", lambda x: lax.round(x), [c.normal((2, 3), "float64", 3.0)],
      params={"method": None})
special = np.array([1.0, -np.inf, np.inf, np.nan, 0.0, -2.5], np.float32)
c.add("lax.is_finite", lax.is_finite, [special])
c.add("lax.is_finite", lax.is_finite, [special.astype(np.float64)])
c.add("lax.is_finite", lax.is_finite, [special.astype(np.float16)])

# ---- binary, one dtype ---------------------------------------------------------------------
for name in ("add", "sub", "mul", "div", "max", "min", "pow", "atan2", "rem"):
    f = getattr(lax, name)
    lo = 0.3 if name == "pow" else -2.0
    c.add(f"lax.{name}", f, [c.uniform((3, 4), lo, 2, "float32"), c.uniform((3, 4), 0.3, 2,
                                                                            "float32")])
    c.add(f"lax.{name}", f, [c.uniform((2, 3), lo, 2, "float64"), c.uniform((2, 3), 0.3, 2,
                                                                            "float64")])
# A rank-0 operand stands for the other's shape.
c.add("lax.add", lax.add, [c.normal((3,), "float32"), np.float32(1.5).reshape(())])
c.add("lax.mul", lax.mul, [np.float64(-0.5).reshape(()), c.normal((2, 2), "float64")])
for name in ("add", "sub", "mul", "div", "rem", "max", "min"):
    f = getattr(lax, name)
    for dt in ("int32", "int8", "uint8", "uint32", "int64"):
        lo = 0 if dt.startswith("u") else -20
        b = c.ints((6,), 1, 6, dt)
        if not dt.startswith("u"):
            b = (b * np.array([1, -1, 1, -1, 1, -1])).astype(dt)
        c.add(f"lax.{name}", f, [c.ints((6,), lo, 20, dt), b])
c.add("lax.mul", lax.mul, [c.ints((5,), -3, 3, "int8"), c.ints((5,), -3, 3, "int8")])
c.add("lax.max", lax.max, [c.bools((5,)), c.bools((5,))])
c.add("lax.max", lax.max, [np.array([1.0, np.nan, 2.0], np.float32),
                           np.array([np.nan, 0.0, 3.0], np.float32)], grad=False)
c.add("lax.nextafter", lax.nextafter, [c.normal((4,), "float32"), c.normal((4,), "float32")],
      grad=False)
c.add("lax.nextafter", lax.nextafter,
      [np.array([0.0, 1.0, -1.0, 5e-324], np.float64), np.array([1.0, 0.0, -np.inf, 0.0])],
      grad=False)
c.add("lax.nextafter", lax.nextafter, [np.array([1.0, 0.0], "bfloat16"),
                                       np.array([2.0, -1.0], "bfloat16")], grad=False)

for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    f = getattr(lax, name)
    for dt in ("int32", "uint8", "uint32", "int64", "int8"):
        c.add(f"lax.{name}", f, [c.ints((6,), 0, 120, dt), c.ints((6,), 0, 120, dt)])
    c.add(f"lax.{name}", f, [c.bools((6,)), c.bools((6,))])
for dt in ("int32", "uint8", "uint32", "int8", "int64"):
    lo = 0 if dt.startswith("u") else -100
    c.add("lax.bitwise_not", lax.bitwise_not, [c.ints((5,), lo, 100, dt)])
    c.add("lax.population_count", lax.population_count, [c.ints((6,), lo, 100, dt)])
    c.add("lax.clz", lax.clz, [c.ints((6,), lo, 100, dt)])
c.add("lax.bitwise_not", lax.bitwise_not, [c.bools((5,))])
for name in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):
    f = getattr(lax, name)
    c.add(f"lax.{name}", f, [c.ints((6,), -1000, 1000, "int32"), c.ints((6,), 0, 12, "int32")])
    c.add(f"lax.{name}", f, [c.ints((6,), 0, 2**31, "uint32"), c.ints((6,), 0, 31, "uint32")])
    c.add(f"lax.{name}", f, [c.ints((5,), -100, 100, "int8"), c.ints((5,), 0, 7, "int8")])
    c.add(f"lax.{name}", f, [c.ints((4,), 0, 255, "uint8"), c.ints((4,), 0, 7, "uint8")])
    c.add(f"lax.{name}", f, [c.ints((4,), -2**40, 2**40, "int64"), c.ints((4,), 0, 40, "int64")])
    # A shift by the width or more: 0, or the sign, as XLA defines it.
    c.add(f"lax.{name}", f, [np.array([-5, 5, 7], np.int32), np.array([32, 40, 31], np.int32)])

for name in ("eq", "ne", "lt", "le", "gt", "ge"):
    f = getattr(lax, name)
    c.add(f"lax.{name}", f, [c.ints((6,), -2, 2, "int32"), c.ints((6,), -2, 2, "int32")])
    c.add(f"lax.{name}", f, [np.array([1.0, 2.0, np.nan, 3.0], np.float32),
                             np.array([1.0, 3.0, np.nan, 2.0], np.float32)])
    c.add(f"lax.{name}", f, [c.ints((4,), 0, 3, "uint8"), c.ints((4,), 0, 3, "uint8")])
    c.add(f"lax.{name}", f, [c.bools((4,)), c.bools((4,))])

# ---- clamp, select, conversions -------------------------------------------------------------
c.add("lax.clamp", lax.clamp, [np.float32(-0.5).reshape(()), c.normal((3, 4), "float32"),
                               np.float32(0.7).reshape(())])
c.add("lax.clamp", lax.clamp, [c.uniform((5,), -1.5, -0.5, "float64"), c.normal((5,), "float64"),
                               c.uniform((5,), 0.5, 1.5, "float64")])
c.add("lax.clamp", lax.clamp, [np.int32(-3).reshape(()), c.ints((6,), -9, 9, "int32"),
                               np.int32(4).reshape(())])
c.add("lax.select", lax.select, [c.bools((3, 4)), c.normal((3, 4), "float32"),
                                 c.normal((3, 4), "float32")])
c.add("lax.select", lax.select, [c.bools((5,)), c.normal((5,), "float64"),
                                 c.normal((5,), "float64")])
c.add("lax.select", lax.select, [np.bool_(True).reshape(()), c.ints((4,), 0, 9, "int32"),
                                 c.ints((4,), 0, 9, "int32")])
c.add("lax.select_n", lax.select_n, [c.ints((6,), 0, 3, "int32"), c.normal((6,), "float64"),
                                     c.normal((6,), "float64"), c.normal((6,), "float64")])
c.add("lax.select_n", lax.select_n, [c.bools((4,)), c.normal((4,), "float32"),
                                     c.normal((4,), "float32")])
c.add("lax.select_n", lax.select_n, [c.ints((5,), 0, 4, "int32"), c.ints((5,), 0, 9, "uint8"),
                                     c.ints((5,), 0, 9, "uint8"), c.ints((5,), 0, 9, "uint8"),
                                     c.ints((5,), 0, 9, "uint8")])
c.add("lax.select_n", lax.select_n, [np.int32(1).reshape(()), c.normal((3,), "float32"),
                                     c.normal((3,), "float32")])
c.add("lax.select_n", lambda w, x: lax.select_n(w, x), [c.ints((3,), 0, 1, "int32"),
                                                      c.normal((3,), "float32")])

vals = np.array([-1.7, 0.0, 2.5, 100.2, -0.4], np.float32)
for to in ("int32", "int8", "float16", "bfloat16", "bool", "float64", "int64"):
    c.add("lax.convert_element_type", lambda x, to=to: lax.convert_element_type(x, to), [vals],
          params={"dtype": to})
c.add("lax.convert_element_type", lambda x: lax.convert_element_type(x, "float32"),
      [c.ints((4,), -9, 9, "int32")], params={"dtype": "float32"})
c.add("lax.convert_element_type", lambda x: lax.convert_element_type(x, "float32"),
      [c.normal((4,), "float64")], params={"dtype": "float32"})
c.add("lax.convert_element_type", lambda x: lax.convert_element_type(x, "uint8"),
      [c.ints((4,), 0, 300, "int32")], params={"dtype": "uint8"})
for frm, to in (("float32", "int32"), ("float32", "uint32"), ("int32", "float32"),
                ("float64", "int64"), ("int64", "float64"), ("uint8", "int8"),
                ("float16", "bfloat16")):
    if frm.startswith("float") or frm == "bfloat16":
        x = c.normal((5,), frm, 10.0)
    else:
        x = c.ints((5,), 0 if frm.startswith("u") else -100, 100, frm)
    c.add("lax.bitcast_convert_type", lambda x, to=to: lax.bitcast_convert_type(x, to), [x],
          params={"dtype": to})
for e, m in ((5, 10), (8, 7), (4, 3), (11, 52)):
    c.add("lax.reduce_precision",
          lambda x, e=e, m=m: lax.reduce_precision(x, exponent_bits=e, mantissa_bits=m),
          [np.array([1.0009766, 70000.0, 1e-6, -3.14159265, 1e-40, np.inf], np.float32)],
          params={"exponent_bits": e, "mantissa_bits": m}, grad=False)
# Piecewise constant, so no numerical gradient check: JAX's rule rounds the tangent too.
c.add("lax.reduce_precision", lambda x: lax.reduce_precision(x, 5, 10),
      [c.normal((3, 4), "float64")], params={"exponent_bits": 5, "mantissa_bits": 10},
      check_grads=False)
c.add("lax.reduce_precision", lambda x: lax.reduce_precision(x, 8, 7),
      [c.normal((3,), "float32")], params={"exponent_bits": 8, "mantissa_bits": 7})
# clamp at its bounds: JAX's derivative gives a tie to neither the operand nor a bound (one
# side's slope, which finite differences cannot see: no check_grads).
xt = np.array([-1.0, -0.25, 0.5, 0.5, 2.0], np.float64)
c.add("lax.clamp", lax.clamp, [np.float64(-0.25).reshape(()), xt, np.float64(0.5).reshape(())],
      vmap_axes=[None, 0, None], check_grads=False)
c.add("lax.clamp", lax.clamp, [np.array([-1.0, 0.0, 0.5, 1.0, 3.0]), xt, np.array([-1.0, 0.5, 0.5, 2.0, 2.0])],
      check_grads=False)
c.save()
