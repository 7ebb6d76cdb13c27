#!/usr/bin/env python3
"""Goldens for complex numbers (`tests/complex.rs`): `python tests/golden/gen_complex.py`
rewrites `tests/golden/complex.json`. complex64 and complex128 through jnp's and lax's
functions: the parts (`real`, `imag`, `conj`, `angle`, `lax.complex`), `abs`, the holomorphic
functions, arithmetic with promotion, reductions and products. Each case carries JAX's JVP
and VJP, so the non-holomorphic rules (abs, real, imag, conj) are checked against JAX's
convention for complex cotangents. See jaxcases.py for the format."""

import numpy as np

from jaxcases import Cases, jnp
from jax import lax

c = Cases("complex")
C64, C128 = "complex64", "complex128"


def z(shape, dtype=C64, scale=1.0):
    return c.normal(shape, dtype, scale)


for dt in (C64, C128):
    for name in ("real", "imag", "conj", "conjugate", "abs", "negative", "square", "sign"):
        c.add(f"jnp.{name}", getattr(jnp, name), [z((3, 4), dt)])
    for name in ("real", "imag", "conj"):
        c.add(f"lax.{name}", getattr(lax, name), [z((2, 3), dt)])
    c.add("jnp.angle", jnp.angle, [z((5,), dt)])
    c.add("jnp.angle", lambda x: jnp.angle(x, deg=True), [z((5,), dt)],
          params={"deg": True}, name=f"jnp.angle/deg/{dt}")
    # The holomorphic functions, away from their branch cuts' trouble spots.
    for name in ("exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh",
                 "log1p", "expm1", "reciprocal"):
        c.add(f"jnp.{name}", getattr(jnp, name), [z((3, 4), dt, 0.7) + (0.5 + 0.2j)])
    for name in ("add", "subtract", "multiply", "divide", "power"):
        c.add(f"jnp.{name}", getattr(jnp, name), [z((3, 4), dt) + 1.5, z((3, 4), dt)])
    c.add("jnp.sum", lambda x: jnp.sum(x, axis=1), [z((3, 4), dt)], params={"axis": 1})
    c.add("jnp.prod", lambda x: jnp.prod(x, axis=0), [z((3, 4), dt, 0.8)], params={"axis": 0})
    c.add("jnp.mean", jnp.mean, [z((3, 4), dt)])
    c.add("jnp.matmul", jnp.matmul, [z((3, 4), dt), z((4, 2), dt)])
    c.add("jnp.vdot", jnp.vdot, [z((5,), dt), z((5,), dt)])
    c.add("jnp.equal", jnp.equal, [z((4,), dt), z((4,), dt)])
    c.add("jnp.isfinite", jnp.isfinite,
          [np.array([1 + 1j, np.inf + 0j, complex(0, np.nan), 2 - 3j], dt)])
    c.add("jnp.iscomplex", jnp.iscomplex, [np.array([1 + 0j, 2 - 1j, 0j], dt)])
    c.add("jnp.isreal", jnp.isreal, [np.array([1 + 0j, 2 - 1j, 0j], dt)])

# Real parts of real arrays, complex from reals, mixing reals with complex.
c.add("jnp.imag", jnp.imag, [c.normal((4,), "float32")])
c.add("jnp.real", jnp.real, [c.ints((4,), -3, 3, "int32")])
c.add("jnp.angle", jnp.angle, [np.array([-2.0, 0.0, 3.0], np.float32)])
c.add("lax.conj", lax.conj, [c.normal((3,), "float32")])
for dt in ("float32", "float64"):
    c.add("lax.complex", lax.complex, [c.normal((3,), dt), c.normal((3,), dt)])
c.add("jnp.multiply", jnp.multiply, [z((3,)), c.normal((3,), "float32")])
c.add("jnp.multiply", jnp.multiply, [z((3,)), c.normal((3,), "float64")])
c.add("jnp.add", jnp.add, [z((3,), C64), 2.5])
c.add("jnp.add", jnp.add, [c.normal((3,), "float32"), z((3,), C128)])
c.add("astype", lambda x: x.astype(jnp.complex64), [c.normal((3,), "float32")],
      params={"dtype": "complex64"})
c.add("astype", lambda x: x.astype(jnp.complex128), [c.ints((3,), -4, 4, "int32")],
      params={"dtype": "complex128"})
c.add("abs∘exp", lambda x: jnp.abs(jnp.exp(x)), [z((4,), C128)])
c.add("real∘mul", lambda x, y: jnp.real(x * jnp.conj(y)), [z((4,), C64), z((4,), C64)])
c.save()
