#!/usr/bin/env python3
"""Goldens for `jaxrs::scipy::special` (`tests/scipy_special.rs`):
`python tests/golden/gen_scipy_special.py` rewrites `tests/golden/scipy_special.json`. See
jaxcases.py for the format and what each case checks (values eagerly and jitted, JVP and VJP
against JAX's, check_grads, vmap). Integer inputs check JAX's promotion to float.
"""

import numpy as np

from jaxcases import Cases
import jax.scipy.special as sp

c = Cases("scipy_special")

# One-argument functions over their domains, in both float widths.
UNARY = {
    "gammaln": (0.1, 8.0),
    "digamma": (0.3, 8.0),
    "erf": (-3.0, 3.0),
    "erfc": (-3.0, 3.0),
    "erfinv": (-0.95, 0.95),
    "expit": (-6.0, 6.0),
    "logit": (0.05, 0.95),
    "i0": (-6.0, 6.0),
    "i0e": (-12.0, 12.0),
    "i1": (-6.0, 6.0),
    "i1e": (-12.0, 12.0),
    "factorial": (0.2, 6.0),
}
for name, (lo, hi) in UNARY.items():
    f = getattr(sp, name)
    for dt in ("float32", "float64"):
        c.add(f"sp.{name}", f, [c.uniform((3, 4), lo, hi, dt)])

# ndtr: the centre (|x| < 1, erf) and both tails (erfc), where its three pieces meet.
for dt in ("float32", "float64"):
    c.add("sp.ndtr", sp.ndtr, [c.uniform((3, 4), -9.0, 9.0, dt)])
    c.add("sp.ndtr", sp.ndtr, [np.array([-1.0, -0.999, 0.0, 0.999, 1.0, 1.001, -30.0, 30.0], dt)],
          check_grads=False)

# Integer arguments compute in float (int32 in float32, int64 in float64); no derivative.
c.add("sp.gammaln", sp.gammaln, [np.array([1, 2, 5, 10], np.int32)])
c.add("sp.factorial", sp.factorial, [np.array([0, 1, 4, 10, -2], np.int64)])
c.add("sp.erf", sp.erf, [np.array([0, 1, -2], np.int32)])
# factorial is 0 for negative n, the derivative too.
c.add("sp.factorial", sp.factorial, [np.array([-3.5, -1.0, 2.5, 0.5], np.float64)],
      check_grads=False)

# Two- and three-argument functions; polygamma and the incomplete functions as lax's.
for dt in ("float32", "float64"):
    m = np.array([[0, 1, 2, 3], [1, 0, 4, 2], [2, 3, 1, 0]], "int32" if dt == "float32" else "int64")
    c.add("sp.polygamma", sp.polygamma, [m, c.uniform((3, 4), 0.4, 5, dt)], wrt=[1])
    c.add("sp.zeta", sp.zeta, [c.uniform((3, 4), 1.2, 6, dt), c.uniform((3, 4), 0.3, 4, dt)],
          grad=False)
    c.add("sp.gammainc", sp.gammainc, [c.uniform((2, 3), 0.3, 6, dt), c.uniform((2, 3), 0.1, 9, dt)])
    c.add("sp.gammaincc", sp.gammaincc, [c.uniform((2, 3), 0.3, 6, dt), c.uniform((2, 3), 0.1, 9, dt)])
    c.add("sp.betainc", sp.betainc, [c.uniform((4,), 0.5, 4, dt), c.uniform((4,), 0.5, 4, dt),
                                     c.uniform((4,), 0.05, 0.95, dt)], wrt=[2])
# int64 n with float32 x: promoted as JAX promotes (to float64).
c.add("sp.polygamma", sp.polygamma, [np.array([1, 2], np.int64), np.array([0.7, 3.0], np.float32)],
      wrt=[1])

c.save()
