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

c.save()
