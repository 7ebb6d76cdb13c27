#!/usr/bin/env python3
"""Goldens for `jaxrs::scipy::stats` (`tests/scipy_stats.rs`):
`python tests/golden/gen_scipy_stats.py` rewrites `tests/golden/scipy_stats.json`. See
jaxcases.py for the format and what each case checks (values eagerly and jitted, JVP and VJP
in x, loc and scale against JAX's, check_grads, vmap). Every function is called with
`(x, loc, scale)` arrays (loc and scale broadcast from a row); the edge cases outside a
support or a probability range check values only.
"""

import numpy as np

from jaxcases import Cases
import jax.scipy.stats as st

c = Cases("scipy_stats")

def call(dist, fn):
    f = getattr(getattr(st, dist), fn)
    return lambda x, loc, scale: f(x, loc, scale)

def params(dt):
    return c.uniform((4,), -1.0, 1.0, dt), c.uniform((4,), 0.5, 2.0, dt)

# Functions of x over the whole line.
LINE = {
    "norm": ["logpdf", "pdf", "cdf", "sf"],
    "laplace": ["logpdf", "pdf", "cdf"],
    "logistic": ["logpdf", "pdf", "cdf", "sf"],
    "cauchy": ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"],
}
for dist, fns in LINE.items():
    for fn in fns:
        for dt in ("float32", "float64"):
            loc, scale = params(dt)
            x = c.uniform((3, 4), -4.0, 4.0, dt)
            # laplace's |x - loc| has a kink at loc: keep x away from it for check_grads.
            c.add(f"{dist}.{fn}", call(dist, fn), [x, loc, scale])

# expon: x above loc for the derivatives, and below it (the -inf / 0 branches) for values.
for fn in ["logpdf", "pdf", "cdf", "logcdf", "logsf", "sf"]:
    for dt in ("float32", "float64"):
        loc, scale = params(dt)
        x = (loc + c.uniform((3, 4), 0.1, 4.0, dt)).astype(dt)
        c.add(f"expon.{fn}", call("expon", fn), [x, loc, scale])
    below = np.array([-3.0, -1.0, 0.5, 2.0], np.float64)
    c.add(f"expon.{fn}", call("expon", fn),
          [below, np.zeros(4), np.ones(4)], grad=False, name=f"expon.{fn}/below")

# uniform on [loc, loc + scale]: inside for the derivatives, and both sides for values.
for fn in ["logpdf", "pdf", "cdf"]:
    for dt in ("float32", "float64"):
        loc, scale = params(dt)
        x = (loc + scale * c.uniform((3, 4), 0.05, 0.95, dt)).astype(dt)
        c.add(f"uniform.{fn}", call("uniform", fn), [x, loc, scale])
    c.add(f"uniform.{fn}", call("uniform", fn),
          [np.array([-0.5, 0.0, 0.25, 1.0, 1.5], np.float64), np.zeros(5), np.ones(5)],
          grad=False, name=f"uniform.{fn}/edges")

# Quantiles of probabilities in (0, 1); NaN outside [0, 1] where JAX guards.
PPF = {"expon": ["ppf"], "uniform": ["ppf"], "logistic": ["ppf", "isf"], "cauchy": ["ppf", "isf"]}
for dist, fns in PPF.items():
    for fn in fns:
        for dt in ("float32", "float64"):
            loc, scale = params(dt)
            c.add(f"{dist}.{fn}", call(dist, fn), [c.uniform((3, 4), 0.05, 0.95, dt), loc, scale])
for dist in ("expon", "uniform"):
    c.add(f"{dist}.ppf", call(dist, "ppf"),
          [np.array([-0.1, 0.0, 0.5, 1.0, 1.1, np.nan], np.float64), np.zeros(6), np.ones(6)],
          grad=False, name=f"{dist}.ppf/outside")

# norm's log CDFs and quantiles.
for dt in ("float32", "float64"):
    loc, scale = params(dt)
    x = c.uniform((3, 4), -4.0, 4.0, dt)
    c.add("norm.logcdf", call("norm", "logcdf"), [x, loc, scale])
    c.add("norm.logsf", call("norm", "logsf"), [x, loc, scale])
    q = c.uniform((3, 4), 0.02, 0.98, dt)
    # ppf returns float64 (JAX's `jnp.asarray(.., float)` under x64), computed in q's dtype.
    tol = (1e-5, 1e-5) if dt == "float32" else None
    # (A float32 computation is too coarse for the numerical check of a float64 result.)
    c.add("norm.ppf", call("norm", "ppf"), [q, loc, scale], tol=tol, grad_tol=tol,
          check_grads=dt == "float64")
    c.add("norm.isf", call("norm", "isf"), [q, loc, scale], tol=tol, grad_tol=tol,
          check_grads=dt == "float64")
c.add("norm.logcdf", call("norm", "logcdf"),
      [np.array([-40.0, -12.0, 0.0, 9.0], np.float64), np.zeros(4), np.ones(4)], name="norm.logcdf/tails")

def call_all(dist, fn):
    return getattr(getattr(st, dist), fn)

# Distributions with shape parameters, at points inside their supports (for derivatives) and
# outside (values only).
for dt in ("float32", "float64"):
    loc, scale = params(dt)
    a = c.uniform((4,), 0.8, 4.0, dt)
    b = c.uniform((4,), 0.8, 4.0, dt)
    inside = (loc + scale * c.uniform((3, 4), 0.05, 0.95, dt)).astype(dt)
    for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
        c.add(f"beta.{fn}", call_all("beta", fn), [inside, a, b, loc, scale],
              wrt=[0] if fn in ("cdf", "logcdf", "sf", "logsf") else None)
    above = (loc + c.uniform((3, 4), 0.1, 6.0, dt)).astype(dt)
    for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
        c.add(f"gamma.{fn}", call_all("gamma", fn), [above, a, loc, scale],
              wrt=None if fn in ("logpdf", "pdf") else [0, 2, 3])
        c.add(f"chi2.{fn}", call_all("chi2", fn), [above, a * 2, loc, scale],
              wrt=None if fn in ("logpdf", "pdf") else [0, 2, 3])
    for fn in ["logpdf", "pdf"]:
        c.add(f"t.{fn}", call_all("t", fn), [c.uniform((3, 4), -4, 4, dt), a, loc, scale])
    k = np.array([[0, 1, 2, 5], [3, 0, 7, 1], [2, 2, 4, 9]], dt)
    mu = c.uniform((4,), 0.5, 6.0, dt)
    for fn in ["logpmf", "pmf", "cdf"]:
        c.add(f"poisson.{fn}", call_all("poisson", fn), [k, mu, np.zeros(4, dt)],
              wrt=[1] if fn != "cdf" else [], grad=None if fn != "cdf" else False)
    c.add("poisson.entropy", call_all("poisson", "entropy"),
          [np.array([0.0, 0.5, 3.0, 9.9, 10.0, 42.0, 99.0, 100.0, 1e4], dt), np.zeros(9, dt)],
          wrt=[0], check_grads=False)
    p = c.uniform((4,), 0.1, 0.9, dt)
    kb = np.array([[0, 1, 1, 0], [1, 0, 2, -1], [0, 0, 1, 1]], dt)
    for fn in ["logpmf", "pmf"]:
        c.add(f"bernoulli.{fn}", call_all("bernoulli", fn), [kb, p, np.zeros(4, dt)], wrt=[1])
    c.add("bernoulli.cdf", call_all("bernoulli", "cdf"),
          [np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan], dt), np.array([0.3, 0.3, 0.3, 0.3, 1.5, 0.3], dt)],
          grad=False)
    c.add("bernoulli.ppf", call_all("bernoulli", "ppf"),
          [np.array([0.0, 0.5, 0.69, 0.71, 1.0, 1.2], dt), np.array([0.3, 0.3, 0.3, 0.3, 0.3, 0.3], dt)],
          grad=False)
    n = np.array([5.0, 10.0, 3.0, 0.0], dt)
    kn = np.array([[0, 3, 3, 0], [5, 10, 1, 1], [2, 11, 0, 0]], dt)
    for fn in ["logpmf", "pmf"]:
        c.add(f"binom.{fn}", call_all("binom", fn), [kn, n, p, np.zeros(4, dt)], wrt=[2])
    alpha = np.array([0.8, 2.0, 3.5], dt)
    xs = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], dt).T.copy()
    for fn in ["logpdf", "pdf"]:
        # Finite differences leave the simplex (where the density is 0): no numerical check.
        c.add(f"dirichlet.{fn}", call_all("dirichlet", fn), [xs, alpha], vmap=False,
              check_grads=False)
        c.add(f"dirichlet.{fn}", call_all("dirichlet", fn), [xs[:2].copy(), alpha], vmap=False,
              grad=False, name=f"dirichlet.{fn}/{dt}/implied")
    mean = np.array([0.5, -1.0, 2.0], dt)
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], dt)
    xm = c.uniform((4, 3), -2.0, 3.0, dt)
    for fn in ["logpdf", "pdf"]:
        c.add(f"multivariate_normal.{fn}", call_all("multivariate_normal", fn), [xm, mean, cov],
              wrt=[0, 1], vmap_axes=[0, None, None])
        c.add(f"multivariate_normal.{fn}", call_all("multivariate_normal", fn),
              [xm, mean, np.array(0.7, dt)], wrt=[0, 1], vmap_axes=[0, None, None],
              name=f"multivariate_normal.{fn}/{dt}/scalar_cov")

# pareto above loc + scale (and below it, values only), and geom on 1, 2, ...
for dt in ("float32", "float64"):
    loc, scale = params(dt)
    b = c.uniform((4,), 0.8, 4.0, dt)
    above = (loc + scale * c.uniform((3, 4), 1.05, 5.0, dt)).astype(dt)
    for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
        c.add(f"pareto.{fn}", call_all("pareto", fn), [above, b, loc, scale])
    c.add("pareto.ppf", call_all("pareto", "ppf"), [c.uniform((3, 4), 0.05, 0.95, dt), b, loc, scale])
    p = c.uniform((4,), 0.1, 0.9, dt)
    kg = np.array([[1, 2, 3, 0], [5, 1, 7, 2], [2, 2, -1, 9]], dt)
    for fn in ["logpmf", "pmf"]:
        c.add(f"geom.{fn}", call_all("geom", fn), [kg, p, np.zeros(4, dt)], wrt=[1])
for fn in ["logpdf", "cdf", "logcdf", "logsf"]:
    c.add(f"pareto.{fn}", call_all("pareto", fn),
          [np.array([0.5, 1.0, 2.0], np.float64), np.full(3, 2.0), np.zeros(3), np.ones(3)],
          grad=False, name=f"pareto.{fn}/edges")
c.add("pareto.ppf", call_all("pareto", "ppf"),
      [np.array([-0.1, 0.0, 0.5, 1.1, np.nan], np.float64), np.full(5, 2.0), np.zeros(5), np.ones(5)],
      grad=False, name="pareto.ppf/outside")

# gumbel_l, gumbel_r (loc, scale), wrapcauchy on [0, 2π] (and outside, values only), nbinom
# and betabinom on integers, gennorm.
for dt in ("float32", "float64"):
    loc, scale = params(dt)
    x = c.uniform((3, 4), -2.5, 2.5, dt)
    for dist in ("gumbel_l", "gumbel_r"):
        # JAX cannot differentiate its Gumbel logpdf in scale nor ppf in p: both go through
        # xlogy(-1, .) with an integer -1, whose float0 tangent its JVP rule multiplies. Those
        # derivatives are left out of the comparison (jaxrs's exist).
        for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
            wrt = [0, 1] if fn in ("logpdf", "pdf") else None
            c.add(f"{dist}.{fn}", call(dist, fn), [x, loc, scale], wrt=wrt)
        c.add(f"{dist}.ppf", call(dist, "ppf"), [c.uniform((3, 4), 0.05, 0.95, dt), loc, scale],
              wrt=[1, 2])
    cw = c.uniform((4,), 0.1, 0.9, dt)
    for fn in ["logpdf", "pdf"]:
        c.add(f"wrapcauchy.{fn}", call_all("wrapcauchy", fn), [c.uniform((3, 4), 0.1, 6.2, dt), cw])
    kn = np.array([[0, 1, 3, 2], [5, 0, 7, 2], [2, 4, 1, 9]], dt)
    nb, pb = c.uniform((4,), 0.5, 5.0, dt), c.uniform((4,), 0.1, 0.9, dt)
    for fn in ["logpmf", "pmf"]:
        c.add(f"nbinom.{fn}", call_all("nbinom", fn), [kn, nb, pb, np.zeros(4, dt)], wrt=[1, 2])
    ntr = np.array([4, 7, 3, 9], dt)
    ab, bb = c.uniform((4,), 0.5, 3.0, dt), c.uniform((4,), 0.5, 3.0, dt)
    for fn in ["logpmf", "pmf"]:
        c.add(f"betabinom.{fn}", call_all("betabinom", fn), [kn, ntr, ab, bb, np.zeros(4, dt)],
              wrt=[2, 3])
    beta = c.uniform((4,), 0.8, 3.0, dt)
    xg = c.uniform((3, 4), 0.1, 2.5, dt) * np.array([1, -1, 1, -1], dt)
    for fn in ["logpdf", "pdf", "cdf"]:
        c.add(f"gennorm.{fn}", call_all("gennorm", fn), [xg.astype(dt), beta])
c.add("wrapcauchy.logpdf", call_all("wrapcauchy", "logpdf"),
      [np.array([-0.5, 1.0, 7.0, 1.0, 1.0]), np.array([0.5, 0.5, 0.5, 0.0, 1.2])], grad=False,
      name="wrapcauchy.logpdf/outside")
c.add("betabinom.logpmf", call_all("betabinom", "logpmf"),
      [np.array([0.0, -1.0, 5.0, 2.0, 0.0]), np.array([0.0, 4.0, 4.0, 4.0, -1.0]),
       np.array([1.0, 1.0, 1.0, 0.0, 1.0]), np.full(5, 2.0), np.zeros(5)], grad=False,
      name="betabinom.logpmf/edges")
for dist in ("gumbel_l", "gumbel_r"):
    c.add(f"{dist}.ppf", call(dist, "ppf"),
          [np.array([0.0, 0.5, 1.0, -0.1]), np.zeros(4), np.array([1.0, -1.0, 1.0, 1.0])],
          grad=False, name=f"{dist}.ppf/outside")

# sem and rankdata: over an axis, all elements, with ties and NaNs.
for dt in ("float32", "float64"):
    x = c.normal((5, 4), dt)
    c.add("sem", lambda v: st.sem(v), [x], params={"axis": 0, "ddof": 1})
    c.add("sem", lambda v: st.sem(v, axis=1, ddof=0, keepdims=True), [x],
          params={"axis": 1, "ddof": 0, "keepdims": True})
    c.add("sem", lambda v: st.sem(v, axis=None), [x], params={"ddof": 1})
    holes = x.copy()
    holes[1, 2] = holes[3, 0] = np.nan
    for policy in ("propagate", "omit"):
        c.add("sem", lambda v, p=policy: st.sem(v, nan_policy=p), [holes],
              params={"axis": 0, "ddof": 1, "nan_policy": policy}, grad=False, vmap=False)
ties = np.array([[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0],
                 [2.0, 7.0, 1.0, 8.0, 2.0, 8.0, 1.0, 8.0, 2.0, 8.0]], dtype=np.float32)
for method in ("average", "min", "max", "dense", "ordinal"):
    c.add("rankdata", lambda v, m=method: st.rankdata(v, method=m), [ties],
          params={"method": method}, grad=False, vmap=False)
    c.add("rankdata", lambda v, m=method: st.rankdata(v, method=m, axis=1), [ties],
          params={"method": method, "axis": 1}, grad=False, vmap=False)
with_nan = ties.copy()
with_nan[1, 3] = np.nan
c.add("rankdata", lambda v: st.rankdata(v, axis=1), [with_nan],
      params={"method": "average", "axis": 1}, grad=False, vmap=False)

# truncnorm on [a, b] in standard units: each column one kind of interval (straddling 0, in
# the right tail, in the left tail, narrow), x inside it for the derivatives; then bounds far
# in the tails, points outside, and a >= b (values only).
for dt in ("float32", "float64"):
    loc, scale = params(dt)
    lo = np.array([-1.5, 0.5, -3.0, -0.8]) + c.uniform((4,), -0.2, 0.2, "float64")
    hi = np.array([1.0, 2.5, -0.7, 0.6]) + c.uniform((4,), -0.2, 0.2, "float64")
    u = c.uniform((3, 4), 0.05, 0.95, "float64")
    x = (loc + scale * (lo + (hi - lo) * u)).astype(dt)
    for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
        c.add(f"truncnorm.{fn}", call_all("truncnorm", fn),
              [x, lo.astype(dt), hi.astype(dt), loc, scale])
tails = [np.array([31.0, -39.0, 2.0, 0.5, -45.0, 1.0, 0.0, 8.0]),
         np.array([30.0, -40.0, -1.0, -1.0, -50.0, 1.0, -1.0, 7.0]),
         np.array([40.0, -30.0, 1.0, 1.0, -44.0, 1.0, 1.0, 9.0]),
         np.zeros(8), np.ones(8)]
for fn in ["logpdf", "logcdf", "logsf", "cdf", "sf"]:
    c.add(f"truncnorm.{fn}", call_all("truncnorm", fn), tails, grad=False,
          name=f"truncnorm.{fn}/tails")

# vonmises over a few turns of concentration (large kappa: the scaled Bessel function), and
# kappa <= 0 (NaN, values only); multinomial of one count vector (JAX checks the sum of all of
# x, so a batch of rows is not a batch of draws), with n right and wrong.
for dt in ("float32", "float64"):
    kappa = c.uniform((4,), 0.3, 30.0, dt)
    for fn in ["logpdf", "pdf"]:
        c.add(f"vonmises.{fn}", call_all("vonmises", fn), [c.uniform((3, 4), -3.0, 3.0, dt), kappa])
    p = c.uniform((4,), 0.1, 1.0, dt)
    p = (p / p.sum()).astype(dt)
    counts = np.array([2, 0, 3, 1], np.int64)
    for fn in ["logpmf", "pmf"]:
        c.add(f"multinomial.{fn}", call_all("multinomial", fn), [counts, np.array(6), p], wrt=[2])
c.add("vonmises.logpdf", call_all("vonmises", "logpdf"),
      [np.array([0.5, 0.5, 0.5, 1.0]), np.array([0.0, -1.0, 700.0, 1e-3])], grad=False,
      name="vonmises.logpdf/edges")
c.add("multinomial.logpmf", call_all("multinomial", "logpmf"),
      [np.array([[1, 2, 0], [0, 1, 2]], np.int32), np.array(6, np.int32),
       np.array([0.2, 0.3, 0.5], np.float32)], grad=False, vmap=False,
      name="multinomial.logpmf/rows_summed_together")
c.add("multinomial.logpmf", call_all("multinomial", "logpmf"),
      [np.array([1, 2, 0], np.int32), np.array(4, np.int32), np.array([0.2, 0.3, 0.5])],
      grad=False, vmap=False, name="multinomial.logpmf/wrong_n")

# mode: along an axis, with keepdims, over everything; ties (the smallest wins), NaNs (one
# value), an empty axis.
votes = np.array([[1, 2, 1, 3, 2, 1], [3, 1, 3, 2, 1, 3], [1, 2, 2, 3, 1, 2]], np.int32)
c.add("mode", lambda v: tuple(st.mode(v)), [votes], params={"axis": 0}, grad=False)
c.add("mode", lambda v: tuple(st.mode(v, axis=1, keepdims=True)), [votes.astype(np.float32)],
      params={"axis": 1, "keepdims": True}, grad=False)
c.add("mode", lambda v: tuple(st.mode(v, axis=None)), [votes], params={}, grad=False, vmap=False)
c.add("mode", lambda v: tuple(st.mode(v, axis=-1)),
      [np.array([[np.nan, 1.0, np.nan, 1.0, np.nan], [2.0, np.nan, 2.0, 0.5, 0.5]])],
      params={"axis": -1}, grad=False, vmap=False)
c.add("mode", lambda v: tuple(st.mode(v, axis=0)), [np.zeros((0, 3))], params={"axis": 0},
      grad=False, vmap=False)

c.save()
