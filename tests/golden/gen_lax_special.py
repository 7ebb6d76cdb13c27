#!/usr/bin/env python3
"""Goldens for `jaxrs::lax`'s special functions, `mulhi` and `ragged_dot`
(`tests/lax_special.rs`): `python tests/golden/gen_lax_special.py` rewrites
`tests/golden/lax_special.json`. See jaxcases.py for the format and what each case checks.
lax does not promote, so every case's operands share a dtype.

Tolerances are jaxcases' defaults unless a case says why not.
"""

import numpy as np

from jaxcases import Cases, jnp  # noqa: F401
import jax
from jax import lax

c = Cases("lax_special")

# ---- Bessel functions ----------------------------------------------------------------------
# Both sides of |x| = 8 (the two Chebyshev series of i0e), negative x, and 0.
for name in ("bessel_i0e", "bessel_i1e"):
    f = getattr(lax, name)
    c.add(f"lax.{name}", f, [c.uniform((3, 4), -12, 12, "float32")])
    c.add(f"lax.{name}", f, [c.uniform((2, 5), -12, 12, "float64")])
    c.add(f"lax.{name}", f, [np.array([0.0, 0.5, -3.0, 8.0, 8.5, -20.0, 100.0], np.float64)])
    c.add(f"lax.{name}", f, [c.uniform((4,), -10, 10, "bfloat16")])
    c.add(f"lax.{name}", f, [c.uniform((3,), -10, 10, "float16")])
# i1e's derivative at |x| <= eps is JAX's constant 1/2 (no numerical check across x = 0).
c.add("lax.bessel_i1e", lax.bessel_i1e, [np.array([0.0, 1e-9, -1e-20, 2.0], np.float32)])
c.add("lax.bessel_i1e", lax.bessel_i1e, [np.array([0.0, 1e-17, -3e-300, 2.0], np.float64)],
      check_grads=False)

# ---- zeta and polygamma ---------------------------------------------------------------------
# lax.zeta has no derivative in JAX 0.10.2: values and vmap only.
for dt in ("float32", "float64"):
    c.add("lax.zeta", lax.zeta, [c.uniform((3, 4), 1.2, 6, dt), c.uniform((3, 4), 0.3, 4, dt)],
          grad=False)
c.add("lax.zeta", lax.zeta, [np.array([2.0, 4.0, 1.0, 0.5, 3.0], np.float64),
                             np.array([1.0, 1.0, 1.0, 1.0, -1.5], np.float64)], grad=False)
# polygamma is differentiable in x only (JAX raises for m).
for dt in ("float32", "float64"):
    m = np.array([[0, 1, 2, 3], [1, 0, 4, 2], [2, 3, 1, 0]], dt)
    c.add("lax.polygamma", lax.polygamma, [m, c.uniform((3, 4), 0.4, 5, dt)], wrt=[1])
c.add("lax.polygamma", lax.polygamma, [np.array([0.5, 1.0, -1.0, 2.0], np.float64),
                                       np.array([1.0, -1.5, 1.0, 30.0], np.float64)], grad=False)
# A rank-0 m stands for an array of x's shape.
c.add("lax.polygamma", lax.polygamma, [np.float64(1.0).reshape(()),
                                       c.uniform((4,), 0.5, 3, "float64")], wrt=[1])

# ---- mulhi ---------------------------------------------------------------------------------
for dt in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
    info = np.iinfo(dt)
    x = c.rng.integers(info.min, info.max, (8,), dtype=dt, endpoint=True)
    y = c.rng.integers(info.min, info.max, (8,), dtype=dt, endpoint=True)
    x[:3] = np.array([info.max, info.min, 0], dt)
    y[:3] = np.array([info.max, info.min, info.max], dt)
    c.add("lax.mulhi", lax.mulhi, [x, y])

# ---- incomplete gamma and beta --------------------------------------------------------------
# a and x on both sides of the series / continued-fraction split (x < max(1, a) or not),
# large a, and the edges JAX defines: x = 0, a = 0, x = inf, NaN outside the domain.
def gamma_args(dt, shape):
    return [c.uniform(shape, 0.2, 8, dt), c.uniform(shape, 0.05, 14, dt)]

GAMMA_EDGES = [np.array([0.5, 3.0, 0.0, 2.0, -1.0, 2.0, 50.0, 50.0, 1.5, 0.3], np.float64),
               np.array([0.0, np.inf, 2.0, -1.0, 2.0, 1.0, 45.0, 56.0, 1.0, 30.0], np.float64)]
# The loop programs are slow for XLA to compile (the test's time is mostly theirs), so the
# cases are few and wide: vmap is checked on the random cases, and the float32 edges and
# bfloat16 (computed in float32) on igamma only.
for name in ("igamma", "igammac"):
    f = getattr(lax, name)
    c.add(f"lax.{name}", f, gamma_args("float32", (3, 4)))
    c.add(f"lax.{name}", f, gamma_args("float64", (3, 5)))
    c.add(f"lax.{name}", f, GAMMA_EDGES, grad=False, vmap=False)
c.add("lax.igamma", lax.igamma, [e.astype(np.float32) for e in GAMMA_EDGES], grad=False,
      vmap=False)
c.add("lax.igamma", lax.igamma, [x.astype("bfloat16") for x in gamma_args("float32", (4,))],
      grad=False, vmap=False)
# JAX defines no derivative of igamma_grad_a; random_gamma_grad's while loops have none in
# reverse mode (its forward mode is checked by the ":jvp" cases below). Random points and the
# edges in one case per dtype.
for name in ("igamma_grad_a", "random_gamma_grad"):
    f = getattr(lax, name)
    for dt in ("float32", "float64"):
        args = [np.concatenate([r, e.astype(dt)]) for r, e in
                zip(gamma_args(dt, (10,)), GAMMA_EDGES)]
        c.add(f"lax.{name}", f, args, grad=False, vmap=dt == "float64")
# Forward mode through random_gamma_grad's loops, at points inside the domain.
for dt in ("float32", "float64"):
    ta, tx = c.normal((5,), dt), c.normal((5,), dt)
    c.add("lax.random_gamma_grad:jvp",
          lambda a, x, ta, tx: jax.jvp(lax.random_gamma_grad, (a, x), (ta, tx)),
          gamma_args(dt, (5,)) + [ta, tx], grad=False, vmap=False)
for dt in ("float32", "float64"):
    args = [c.uniform((3, 4), 0.2, 6, dt), c.uniform((3, 4), 0.2, 6, dt),
            c.uniform((3, 4), 0.01, 0.99, dt)]
    c.add("lax.betainc", lax.betainc, args, wrt=[2])
BETA_EDGES = [np.array([0.0, 2.0, 2.0, 0.0, -1.0, 1.0, 3.0, 1e-40, 20.0], np.float64),
              np.array([1.0, 0.0, 3.0, 0.0, 1.0, 1.0, 3.0, 2.0, 30.0], np.float64),
              np.array([0.5, 0.5, 1.0, 0.5, 0.5, 1.5, 0.0, 0.3, 0.45], np.float64)]
c.add("lax.betainc", lax.betainc, BETA_EDGES, grad=False, vmap=False)
c.add("lax.betainc", lax.betainc,
      [c.uniform((4,), 0.5, 4, "float16"), c.uniform((4,), 0.5, 4, "float16"),
       c.uniform((4,), 0.1, 0.9, "float16")], grad=False, vmap=False)

# ---- ragged_dot ----------------------------------------------------------------------------
# Groups covering every row, fewer rows than lhs has (the rest are zero), an empty group.
for dt, sizes in (("float32", [2, 3, 1]), ("float64", [1, 0, 3]), ("float64", [4, 2, 0])):
    c.add("lax.ragged_dot", lax.ragged_dot,
          [c.normal((6, 4), dt), c.normal((3, 4, 5), dt), np.array(sizes, np.int32)])
c.add("lax.ragged_dot", lambda l, r, g: lax.ragged_dot(l, r, g, preferred_element_type=jnp.float64),
      [c.normal((5, 3), "float32"), c.normal((2, 3, 2), "float32"), np.array([3, 2], np.int32)],
      params={"preferred_element_type": "float64"})
c.add("lax.ragged_dot", lambda l, r, g: lax.ragged_dot(l, r, g, preferred_element_type=jnp.int32),
      [c.ints((5, 3), -9, 9, "int8"), c.ints((2, 3, 2), -9, 9, "int8"),
       np.array([1, 3], np.int32)], params={"preferred_element_type": "int32"})

c.save()
