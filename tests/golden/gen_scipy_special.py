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

# The rest: the gamma family, combinatorics, and JAX's custom-JVP functions (their JVP and VJP
# are JAX's custom rules, which check_grads also checks against finite differences).
MORE_UNARY = {
    "gammasgn": (-3.7, 3.7),
    "loggamma": (0.2, 7.0),
    "gamma": (-3.7, 4.5),
    "entr": (0.05, 3.0),
    "erfcx": (-2.0, 12.0),
    "dawsn": (-8.0, 8.0),
    "ndtri": (0.02, 0.98),
    "spence": (0.05, 4.0),
}
for name, (lo, hi) in MORE_UNARY.items():
    f = getattr(sp, name)
    for dt in ("float32", "float64"):
        c.add(f"sp.{name}", f, [c.uniform((3, 4), lo, hi, dt)],
              grad=False if name == "gammasgn" else None)
for dt in ("float32", "float64"):
    # log_ndtr through its three pieces (the lower tail below -10 in float32, -20 in float64).
    c.add("sp.log_ndtr", sp.log_ndtr, [np.array([-30.0, -12.0, -4.0, -0.5, 0.0, 2.0, 6.0, 9.0], dt)])
    c.add("sp.log_ndtr", lambda x: sp.log_ndtr(x, series_order=5),
          [np.array([-40.0, -25.0, -11.0, 1.0], dt)], params={"series_order": 5})
    # ndtri's ranges: the centre, the tails, and the ends 0 and 1.
    c.add("sp.ndtri", sp.ndtri, [np.array([1e-30, 1e-8, 0.1, 0.5, 0.86, 0.99, 1 - 1e-7], dt)])
    c.add("sp.ndtri", sp.ndtri, [np.array([0.0, 1.0], dt)], grad=False)
    c.add("sp.erfcx", sp.erfcx, [np.array([-3.0, 0.0, 5.0, 30.0, 1e5], dt)])
    c.add("sp.dawsn", sp.dawsn, [np.array([-10.0, -4.0, -1.0, 0.0, 2.0, 3.3, 7.0, 50.0], dt)])
    c.add("sp.spence", sp.spence, [np.array([0.0, 0.3, 0.5, 1.0, 1.2, 1.6, 2.0, 2.5], dt)],
          check_grads=False)
    c.add("sp.spence", sp.spence, [np.array([-1.0], dt)], grad=False)
    c.add("sp.gamma", sp.gamma, [np.array([-2.0, -0.0, 0.0, 0.5, 5.0, 171.5], dt)], grad=False)
    c.add("sp.loggamma", sp.loggamma, [np.array([-1.5, 0.0, 0.5, 30.0], dt)], grad=False)
    # Binary functions, at ordinary points and at the edges where the custom rules matter.
    c.add("sp.xlogy", sp.xlogy, [c.uniform((3, 4), -2, 2, dt), c.uniform((3, 4), 0.1, 4, dt)])
    c.add("sp.xlogy", sp.xlogy, [np.array([0.0, 0.0, 1.0, 2.0], dt), np.array([0.0, 2.0, 0.0, np.nan], dt)],
          check_grads=False)
    c.add("sp.xlog1py", sp.xlog1py, [c.uniform((3, 4), -2, 2, dt), c.uniform((3, 4), -0.9, 4, dt)])
    c.add("sp.xlog1py", sp.xlog1py, [np.array([0.0, 0.0, 1.0], dt), np.array([-1.0, 2.0, -1.0], dt)],
          check_grads=False)
    c.add("sp.rel_entr", sp.rel_entr, [c.uniform((3, 4), 0.1, 3, dt), c.uniform((3, 4), 0.1, 3, dt)])
    c.add("sp.kl_div", sp.kl_div, [c.uniform((3, 4), 0.1, 3, dt), c.uniform((3, 4), 0.1, 3, dt)])
    edges = [np.array([0.0, 0.0, 1.0, -1.0, 2.0], dt), np.array([0.0, 1.0, 0.0, 1.0, 3.0], dt)]
    c.add("sp.rel_entr", sp.rel_entr, edges, grad=False)
    c.add("sp.kl_div", sp.kl_div, edges, grad=False)
    c.add("sp.entr", sp.entr, [np.array([-1.0, 0.0, 0.5, 1.0], dt)], grad=False)
    c.add("sp.betaln", sp.betaln, [c.uniform((3, 4), 0.2, 6, dt), c.uniform((3, 4), 0.2, 6, dt)])
    c.add("sp.betaln", sp.betaln, [c.uniform((2, 3), 0.5, 5, dt), c.uniform((2, 3), 9, 1e4, dt)])
    c.add("sp.beta", sp.beta, [c.uniform((3, 4), 0.3, 5, dt), c.uniform((3, 4), 0.3, 5, dt)])
    c.add("sp.beta", sp.beta, [np.array([-1.5, 2.5, -0.5], dt), np.array([0.7, -1.2, -0.25], dt)],
          grad=False)
    for rep in (False, True):
        c.add("sp.comb", lambda n, k, rep=rep: sp.comb(n, k, repetition=rep),
              [np.array([5.0, 10.0, 4.0, 3.0, 7.5], dt), np.array([2.0, 3.0, 5.0, -1.0, 2.0], dt)],
              params={"repetition": rep}, check_grads=False)
    c.add("sp.boxcox", sp.boxcox, [c.uniform((3, 4), 0.2, 5, dt), c.uniform((3, 4), -1.5, 1.5, dt)])
    c.add("sp.boxcox", sp.boxcox, [np.array([0.5, 2.0], dt), np.array([0.0, 0.0], dt)], wrt=[0])
    c.add("sp.boxcox1p", sp.boxcox1p, [c.uniform((3, 4), -0.5, 5, dt), c.uniform((3, 4), -1.5, 1.5, dt)])
    c.add("sp.multigammaln", lambda a: sp.multigammaln(a, 3), [c.uniform((3, 4), 1.2, 6, dt)],
          params={"d": 3})
    c.add("sp.poch", sp.poch, [c.uniform((3, 4), 0.5, 4, dt), c.uniform((3, 4), -0.4, 3, dt)])
    c.add("sp.poch", sp.poch, [np.array([2.0, 3.5], dt), np.array([0.0, 0.0], dt)])
    c.add("sp.softmax", lambda x: sp.softmax(x, axis=1), [c.uniform((3, 4), -3, 3, dt)],
          params={"axis": 1})
    c.add("sp.softmax", lambda x: sp.softmax(x), [c.uniform((3, 4), -3, 3, dt)], params={})
    c.add("sp.log_softmax", lambda x: sp.log_softmax(x, axis=0), [c.uniform((3, 4), -3, 3, dt)],
          params={"axis": 0})
for n in (0, 2, 3, 10, 25):
    c.add("sp.bernoulli", lambda n=n: sp.bernoulli(n), [], params={"n": n}, grad=False, vmap=False)

for dt in ("float32", "float64"):
    c.add("sp.bessel_jn", lambda z: sp.bessel_jn(z, v=3), [c.uniform((4,), 0.5, 8.0, dt)],
          params={"v": 3, "n_iter": 50}, check_grads=False,
          # In float32 the recurrence's tangents overflow: JAX's JVP is NaN there.
          grad=False if dt == "float32" else None)
    c.add("sp.bessel_jn", lambda z: sp.bessel_jn(z, v=1, n_iter=30), [c.uniform((2, 3), 0.5, 4.0, dt)],
          params={"v": 1, "n_iter": 30}, check_grads=False,
          grad=False if dt == "float32" else None)

# The exponential integrals: expi over Cephes's intervals (0, 2], (2, 4], ..., above 64 and
# below 0 (-exp1(-x)); expn's pieces (series for x <= 1, continued fraction above, n >= 5000,
# n = 0) and its edges (NaN, inf, 1 / (n - 1) at x = 0), with JAX's custom derivatives.
for dt in ("float32", "float64"):
    c.add("sp.expi", sp.expi, [np.array([0.3, 1.7, 3.1, 5.5, 12.0, 20.0, 40.0, 70.0], dt)])
    c.add("sp.expi", sp.expi, [np.array([-0.2, -0.9, -1.5, -3.0, -7.5, -30.0], dt)])
    c.add("sp.expi", sp.expi, [np.array([0.0, np.inf, -np.inf, np.nan, 2.0, 4.0, 100.0], dt)],
          grad=False)
    c.add("sp.exp1", sp.exp1, [np.array([0.05, 0.5, 1.0, 1.5, 3.0, 8.0, 25.0], dt)])
    c.add("sp.exp1", sp.exp1, [np.array([0.0, -1.0, np.inf], dt)], grad=False)
    n = np.array([[0.0, 1.0, 2.0, 3.0], [5.0, 1.0, 2.0, 4.0], [2.5, 7.0, 1.0, 3.0]], dt)
    c.add("sp.expn", sp.expn, [n, c.uniform((3, 4), 0.1, 0.95, dt)], wrt=[1])
    c.add("sp.expn", sp.expn, [n, c.uniform((3, 4), 1.2, 12.0, dt)], wrt=[1])
    c.add("sp.expn", sp.expn, [np.array([5000.0, 6000.0, 1.0, 2.0], dt),
                               np.array([0.5, 3.0, 0.2, 30.0], dt)], wrt=[1])
    c.add("sp.expn", sp.expn, [np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 1.0, -1.0, 0.0], dt),
                               np.array([0.5, 0.0, 0.0, 0.0, 0.0, -1.0, 2.0, 1.5], dt)],
          grad=False)
# int n with float x, as JAX promotes them.
c.add("sp.expn", sp.expn, [np.array([1, 2, 3], np.int32), np.array([0.5, 1.5, 4.0], np.float32)],
      wrt=[1])

# sici: the series (|x| <= 4), the auxiliary functions (split at 8) and x > 1e9, odd Si.
for dt in ("float32", "float64"):
    c.add("sp.sici", sp.sici, [np.array([0.1, 0.9, 2.5, 3.9, 4.5, 7.0, 9.0, 30.0, -1.2, -6.0], dt)])
    c.add("sp.sici", sp.sici, [c.uniform((3, 4), -12.0, 12.0, dt)])
    c.add("sp.sici", sp.sici, [np.array([0.0, np.inf, -np.inf, np.nan, 2e9, -3e9], dt)],
          grad=False)
    # fresnel: small (x² < 2.5625), the auxiliary functions, and past 36974 (float64).
    c.add("sp.fresnel", sp.fresnel, [np.array([0.1, 0.8, 1.5, 1.7, 2.5, 4.1, 7.3, -0.6, -3.2], dt)])
    c.add("sp.fresnel", sp.fresnel, [c.uniform((3, 4), -6.0, 6.0, dt)])
    c.add("sp.fresnel", sp.fresnel, [np.array([0.0, np.inf, -np.inf, 5e4, -4e4, np.nan], dt)],
          grad=False)

# owens_t over |a| <= 1 and the reciprocal relation beyond (a h around 0.67 either side), and
# the exact values at h = 0 and a = 1; float32 inputs give float64, as in JAX, though the erf
# terms are float32: those cases are checked at float32's tolerance.
for dt in ("float32", "float64"):
    f32 = dt == "float32"
    kw = dict(tol=(4e-6, 4e-6), grad_tol=(2e-5, 2e-5), check_grads=False) if f32 else {}
    c.add("sp.owens_t", sp.owens_t, [c.uniform((3, 4), -3.0, 3.0, dt), c.uniform((3, 4), -0.95, 0.95, dt)],
          **kw)
    c.add("sp.owens_t", sp.owens_t, [np.array([0.1, 0.3, 0.5, 1.0, 2.0, -1.5], dt),
                                     np.array([1.5, 3.0, 1.2, 4.0, -2.5, 6.0], dt)], **kw)
    c.add("sp.owens_t", sp.owens_t, [np.array([0.0, 0.0, 1.3, -0.7, 2.0], dt),
                                     np.array([0.5, 2.0, 1.0, -1.0, 0.0], dt)],
          **dict(kw, check_grads=False))
    c.add("sp.owens_t", sp.owens_t, [np.array([np.nan, 1.0, 0.5], dt), np.array([0.5, np.nan, np.inf], dt)],
          grad=False, **({"tol": kw["tol"]} if f32 else {}))

# wofz: complex arguments in both half planes (the lower through 2 exp(-z²) - w(-z)), and real
# ones, which become complex.
for dt in ("complex64", "complex128"):
    c.add("sp.wofz", sp.wofz, [c.normal((3, 4), dt, scale=2.0)])
    c.add("sp.wofz", sp.wofz, [np.array([1 + 1j, 0.5 - 2j, -3 + 0.1j, 8 + 8j, 0j, -0.2 - 0.4j], dt)])
for dt in ("float32", "float64"):
    c.add("sp.wofz", sp.wofz, [np.array([0.0, 0.5, -1.5, 4.0], dt)], grad=False)
# erfcx of a complex z is wofz(iz).
for dt in ("complex64", "complex128"):
    c.add("sp.erfcx", sp.erfcx, [c.normal((5,), dt)])

# hyp1f1: the Taylor series (|x| < 100) with JAX's series derivatives in a and b, the
# asymptotic expansion beyond (float64; JAX's derivatives there are its series', not checked
# numerically), and the selections a = 0, a = b, b = 0.
for dt in ("float32", "float64"):
    c.add("sp.hyp1f1", sp.hyp1f1, [c.uniform((3, 4), 0.2, 3.0, dt), c.uniform((3, 4), 0.5, 4.0, dt),
                                   c.uniform((3, 4), -4.0, 4.0, dt)])
    c.add("sp.hyp1f1", sp.hyp1f1, [np.array([0.0, 1.5, 2.0, 0.0, 1.0], dt), np.array([1.0, 1.5, 0.0, 0.0, 3.0], dt),
                                   np.array([0.7, 2.0, 1.0, 3.0, 0.0], dt)], grad=False)
c.add("sp.hyp1f1", sp.hyp1f1, [np.array([0.5, 1.2, 2.0], "float64"), np.array([1.5, 2.5, 3.5], "float64"),
                               np.array([120.0, 150.0, 105.0], "float64")], check_grads=False)
c.add("sp.hyp1f1", sp.hyp1f1, [np.array([0.5, 1.2], "float32"), np.array([2.0], "float32"),
                               np.array([1.0, -2.0], "float32")])

# hyp2f1 by JAX's selections: the Taylor series (|x| < 1, and x < -1 where it does not
# converge), Euler's transformation (c - a - b <= -1), the digamma transformation (x > 0.9,
# c - a - b an integer, either sign, and c - a - b within eps of -1), the terminating series
# (a or b a non-positive integer, the larger in magnitude first, at any x), the closed forms
# (x = 0, a or b = 0, a or b = c, x = 1) and inf (c a non-positive integer, x > 1, x = 1 with
# c - a - b <= 0); JAX's series derivatives in a, b, c and its x derivative.
# The special points go in one array per dtype, each element its own selection: hyp2f1's
# program holds every branch and its loops, so a case per branch made the grouped test
# programs take minutes to compile.
SPECIAL_POINTS = [
    # Euler's transformation (c - a - b <= -1), and x > 0.9 by the series.
    ([2.0, 1.7, 0.6, 1.1], [1.5, 2.2, 0.8, 1.3], [1.2, 1.4, 2.1, 3.3], [0.5, -0.6, 0.93, 0.95]),
    # The digamma transformation: c - a - b = 0, 1, 2, 3, -1 (through Euler's), -2.
    ([0.5, 0.5, 0.5, 1.25, 1.5, 2.0], [1.5, 1.5, 0.75, 0.5, 1.5, 1.5],
     [2.0, 3.0, 3.25, 4.75, 2.0, 1.5], [0.95, 0.92, 0.97, 0.91, 0.94, 0.96]),
    # The terminating series: a or b a non-positive integer (b < a swaps them), at |x| < 1,
    # x > 0.9, x < -1.
    ([-3.0, 1.5, -2.0, -4.0, 0.5, -1.0, -5.0, 2.0], [1.5, -2.0, -3.0, 0.7, -3.0, 2.5, -2.0, 1.0],
     [2.5, 1.2, 0.5, 3.5, 1.5, 0.8, 4.0, 3.0], [0.4, -0.7, 0.3, 0.95, -2.5, 3.0, 1.5, -0.3]),
    # The closed forms and the poles.
    ([1.5, 0.0, 2.0, 0.5, 1.2, 1.5, 0.5, 0.7, 1.5, 1.0, 0.0], [2.5, 1.5, 0.5, 1.3, 0.6, 0.5, 0.5, 0.4, 2.5, 2.0, 1.0],
     [1.0, 2.0, 0.0, -2.0, 0.6, 2.5, 3.0, 1.5, 3.0, 2.5, 0.0], [0.0, 0.5, 0.3, 0.2, 0.4, 1.0, 1.0, 1.5, 0.4, -0.5, 0.5]),
    # x < -1 by the series.
    ([0.5, 1.2], [0.7, 0.4], [1.9, 2.5], [-1.5, -1.2]),
]
for dt in ("float32", "float64"):
    c.add("sp.hyp2f1", sp.hyp2f1, [c.uniform((3, 4), 0.2, 2.5, dt), c.uniform((3, 4), 0.2, 2.5, dt),
                                   c.uniform((3, 4), 0.5, 4.0, dt), c.uniform((3, 4), -0.8, 0.8, dt)])
    c.add("sp.hyp2f1", sp.hyp2f1, [np.array(sum((list(p[k]) for p in SPECIAL_POINTS), []), dt)
                                   for k in range(4)], grad=False, vmap=False)
# c - a - b within eps of -1 (not Euler's), where the digamma transformation's rd is negative.
c.add("sp.hyp2f1", sp.hyp2f1, [np.array([1.5], "float64"), np.array([1.5], "float64"),
                               np.array([2.0 + 4e-15], "float64"), np.array([0.95], "float64")],
      grad=False, vmap=False)
# Integer arguments promote to float.
c.add("sp.hyp2f1", sp.hyp2f1, [np.array([1, 2], np.int32), np.array([1, -1], np.int32),
                               np.array([2, 3], np.int32), np.array([0.5, 0.25], np.float32)],
      grad=False, vmap=False)

# sph_harm_y: degrees and orders (negative ones the conjugate times (-1)^m) over the
# recurrence's table, with derivatives in theta and phi; n_max given (as JAX needs under
# jit and vmap), n_max = max(n) taken from a concrete n, n_max below max(n) clipping the
# degrees, a 0-d theta, the poles, and mixed dtypes.
n = np.array([0, 1, 1, 2, 2, 3, 3, 4], np.int32)
m = np.array([0, 0, 1, -1, 2, -3, 1, -2], np.int32)
for dt in ("float32", "float64"):
    # The output is complex128 either way; float32 angles are checked at float32's
    # tolerance.
    kw = dict(tol=(4e-6, 4e-6), grad_tol=(2e-5, 2e-5)) if dt == "float32" else {}
    c.add("sp.sph_harm_y", lambda n, m, t, p: sp.sph_harm_y(n, m, t, p, n_max=4),
          [n, m, c.uniform((8,), 0.1, 3.0, dt), c.uniform((8,), 0.0, 2 * np.pi, dt)],
          params={"n_max": 4}, **kw)
    c.add("sp.sph_harm_y", lambda n, m, t, p: sp.sph_harm_y(n, m, t, p, n_max=6),
          [np.array([6, 5, 6, 4, 6], np.int64), np.array([-5, 4, 6, -4, -1], np.int64),
           c.uniform((5,), 0.2, 2.9, dt), c.uniform((5,), 0.0, 2 * np.pi, dt)],
          params={"n_max": 6}, **kw)
    c.add("sp.sph_harm_y", sp.sph_harm_y,
          [np.array([2, 3, 1], np.int32), np.array([1, -2, -1], np.int32),
           np.array([0.4, 1.3, 2.2], dt), np.array([0.5, 2.0, 4.0], dt)], jit=False, **kw)
    c.add("sp.sph_harm_y", lambda n, m, t, p: sp.sph_harm_y(n, m, t, p, n_max=3),
          [np.array([5, 2, 4], np.int32), np.array([1, -2, 3], np.int32),
           np.array([0.7, 1.1, 2.5], dt), np.array([0.3, 1.0, 5.0], dt)],
          params={"n_max": 3}, **kw)
    c.add("sp.sph_harm_y", lambda n, m, t, p: sp.sph_harm_y(n, m, t, p, n_max=3),
          [np.array([3], np.int32), np.array([-2], np.int32), np.array(0.9, dt),
           np.array([1.1], dt)], params={"n_max": 3}, **kw)
    c.add("sp.sph_harm_y", lambda n, m, t, p: sp.sph_harm_y(n, m, t, p, n_max=2),
          [np.array([2, 1, 2, 0], np.int32), np.array([1, 0, -2, 0], np.int32),
           np.array([0.0, np.pi, 0.0, np.pi], dt), np.array([0.3, 0.2, 1.0, 2.0], dt)],
          params={"n_max": 2}, grad=False, **({"tol": kw["tol"]} if kw else {}))
for n_max in (0, 1):
    c.add("sp.sph_harm_y", lambda n, m, t, p, n_max=n_max: sp.sph_harm_y(n, m, t, p, n_max=n_max),
          [np.array([n_max, 0], np.int32), np.array([-n_max, 0], np.int32),
           np.array([0.8, 2.1], "float64"), np.array([0.6, 3.5], "float64")],
          params={"n_max": n_max})
# float32 theta, float64 phi, int64 m: the angles promote as JAX promotes them.
c.add("sp.sph_harm_y", lambda n, m, t, p: sp.sph_harm_y(n, m, t, p, n_max=3),
      [np.array([3, 2], np.int32), np.array([-1, 2], np.int64),
       np.array([0.5, 1.9], "float32"), np.array([2.5, 0.1], "float64")],
      params={"n_max": 3}, tol=(4e-6, 4e-6), grad_tol=(2e-5, 2e-5))

c.save()
