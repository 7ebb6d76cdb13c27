#!/usr/bin/env python3
"""Goldens for `jaxrs::scipy::stats::gaussian_kde` (`tests/scipy_kde.rs`):
`python tests/golden/gen_scipy_kde.py` rewrites `tests/golden/scipy_kde.json`. See jaxcases.py
for the format and what each case checks (values eagerly and jitted, JVP and VJP against
JAX's, check_grads for float64, vmap with the batch axis first and last).

Every case builds the estimator inside the function from its inputs, so the derivatives and
the vmap go through the construction too: inputs are `[dataset, weights?, factor?, ...]`,
where `weights` is there when `params.weighted` and `factor` (a 0-d array) when
`params.bw == "array"`; `params.bw` is "scott", "silverman", "callable" (CALLABLE below), a
number (a Python scalar factor) or "array".
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.stats import gaussian_kde

from jaxcases import Cases

c = Cases("scipy_kde")

# Tolerances: the covariance's inverse and Cholesky factors lose a few more ulps than an
# elementwise function does.
TOL = {"float32": (2e-5, 2e-5), "float64": (1e-11, 1e-11)}
GRAD_TOL = {"float32": (2e-4, 2e-4), "float64": (1e-9, 1e-9)}


def numerical(dt, bw="scott"):
    """Whether the Rust side also checks the derivatives numerically: float64 cases through
    the two bandwidths that are functions of inputs (each check compiles its own program, so
    not all; every case's JVP and VJP are compared with JAX's regardless)."""
    return dt == "float64" and bw in ("callable", "array")


def CALLABLE(k):
    # A bandwidth depending on the data, so its derivative is part of the checks; the Rust
    # test writes the same function.
    return 0.5 + 0.1 * jnp.mean(k.dataset ** 2)


def split(inputs, params):
    """The estimator from the leading inputs, and the rest."""
    inputs = list(inputs)
    dataset = inputs.pop(0)
    weights = inputs.pop(0) if params["weighted"] else None
    bw = params["bw"]
    if bw == "array":
        bw = inputs.pop(0)
    elif bw == "callable":
        bw = CALLABLE
    return gaussian_kde(dataset, bw_method=bw, weights=weights), inputs


def method(name, params):
    def fn(*inputs):
        kde, rest = split(inputs, params)
        return getattr(kde, name)(*rest)
    return fn


def fields(params):
    def fn(*inputs):
        kde, _ = split(inputs, params)
        return tuple(jax.tree_util.tree_leaves(kde))
    return fn


def dataset(d, dt):
    n = 12 if d == 1 else 10
    if d == 1:
        return c.normal((n,), dt)
    # Correlated variables, so the covariance is not diagonal.
    x = c.normal((d, n), "float64")
    x[1] = 0.6 * x[0] + 0.8 * x[1]
    return x.astype(dt)


def head(d, dt, weighted, bw):
    data = dataset(d, dt)
    inputs = [data]
    if weighted:
        inputs.append(c.uniform((data.shape[-1],), 0.5, 2.0, dt))
    if bw == "array":
        inputs.append(np.asarray(0.4, dt))
    return inputs


BWS = ["scott", "silverman", 0.3, "callable", "array"]
for dt in ("float32", "float64"):
    tol, gtol = TOL[dt], GRAD_TOL[dt]
    for d in (1, 2):
        for weighted in (False, True):
            for bw in BWS:
                params = {"bw": bw, "weighted": weighted, "d": d}
                c.add("gaussian_kde", fields(params), head(d, dt, weighted, bw), params=params,
                      tol=tol, grad_tol=gtol, check_grads=numerical(dt, bw))
                # Every bandwidth rule through logpdf; evaluate and pdf through two.
                names = ("evaluate", "pdf", "logpdf") if bw in ("scott", "callable") else (
                    "logpdf",)
                for name in names:
                    pts = c.normal((4,) if d == 1 else (d, 4), dt, scale=1.5)
                    c.add(f"gaussian_kde.{name}", method(name, params),
                          head(d, dt, weighted, bw) + [pts], params=params, tol=tol,
                          grad_tol=gtol, check_grads=numerical(dt, bw))
            params = {"bw": "scott", "weighted": weighted, "d": d}
            mean = c.normal((d,), dt)
            cov = np.asarray(np.eye(d) * 0.5 + 0.1, dt)
            # No numerical check in 2-D: a Cholesky factorization reads one triangle of `cov`
            # and JAX's derivative rule assumes a symmetric tangent, which a finite
            # difference of the whole matrix is not (JAX's own check_grads fails there too).
            c.add("gaussian_kde.integrate_gaussian", method("integrate_gaussian", params),
                  head(d, dt, weighted, "scott") + [mean, cov], params=params, tol=tol,
                  grad_tol=gtol, check_grads=dt == "float64" and d == 1)
            other = dataset(d, dt)
            c.add("gaussian_kde.integrate_kde",
                  lambda *xs, params=params: method("integrate_kde", params)(
                      *xs[:-1], gaussian_kde(xs[-1])),
                  head(d, dt, weighted, "scott") + [other], params=params, tol=tol,
                  grad_tol=gtol, check_grads=dt == "float64")
        # A single point of a 2-D estimate given as [d] (JAX reshapes it to [d, 1]).
        if d == 2:
            params = {"bw": "scott", "weighted": False, "d": 2}
            c.add("gaussian_kde.logpdf", method("logpdf", params),
                  head(2, dt, False, "scott") + [c.normal((2,), dt)], params=params, tol=tol,
                  grad_tol=gtol, name=f"gaussian_kde.logpdf/{dt}/one_point", check_grads=False)
    for weighted in (False, True):
        params = {"bw": "silverman", "weighted": weighted, "d": 1}
        low, high = np.asarray(-0.5, dt), np.asarray(1.0, dt)
        c.add("gaussian_kde.integrate_box_1d", method("integrate_box_1d", params),
              head(1, dt, weighted, "silverman") + [low, high], params=params, tol=tol,
              grad_tol=gtol, check_grads=dt == "float64")
    # Python scalars for the limits (weakly typed, as Rust numbers are), and infinite ones.
    params = {"bw": "scott", "weighted": False, "d": 1}
    c.add("gaussian_kde.integrate_box_1d", method("integrate_box_1d", params),
          head(1, dt, False, "scott") + [-1.0, 0.25], params=params, tol=tol, grad_tol=gtol,
          name=f"gaussian_kde.integrate_box_1d/{dt}/scalars", check_grads=False)
    # Infinite limits: the whole mass (values only: JAX's derivatives there are NaN).
    c.add("gaussian_kde.integrate_box_1d", method("integrate_box_1d", params),
          head(1, dt, False, "scott") + [np.asarray(-np.inf, dt), np.asarray(np.inf, dt)],
          params=params, tol=tol, grad=False,
          name=f"gaussian_kde.integrate_box_1d/{dt}/everything")

# A larger mixed case: float32 data, float64 points (the points' dtype wins).
params = {"bw": "scott", "weighted": False, "d": 1}
c.add("gaussian_kde.logpdf", method("logpdf", params),
      [dataset(1, "float32"), c.normal((5,), "float64")], params=params,
      tol=TOL["float32"], grad_tol=GRAD_TOL["float32"], name="gaussian_kde.logpdf/mixed")

# resample: two keys, three shapes (a square batch shape shows JAX's `.T` of the noise, which
# reverses its batch axes), with and without weights, 1-D and 2-D. The chosen points are
# exact; the noise is a Cholesky factor times JAX's normal draws.
for dt in ("float32", "float64"):
    for d in (1, 2):
        for weighted in (False, True):
            params0 = {"bw": "scott", "weighted": weighted, "d": d}
            for seed in (0, 42):
                for shape in ((), (7,), (3, 3)):
                    params = dict(params0, shape=list(shape))
                    key = np.asarray(jax.random.PRNGKey(seed))
                    c.add("gaussian_kde.resample",
                          lambda *xs, params=params: method("resample", params)(
                              *xs, tuple(params["shape"])),
                          head(d, dt, weighted, "scott") + [key], params=params,
                          tol=TOL[dt], grad=False, vmap=False,
                          name=f"gaussian_kde.resample/{dt}/d{d}/w{int(weighted)}/{seed}/"
                               f"{'x'.join(map(str, shape)) or 'scalar'}")

# resample of an estimator rebuilt from JAX's own five arrays (`tree_unflatten`), so the
# draws are compared without the rounding of the construction: in one dimension they are
# JAX's bit for bit.
for dt in ("float32", "float64"):
    for d in (1, 2):
        data, weights = head(d, dt, True, "scott")
        kde = gaussian_kde(data, weights=weights)
        leaves, treedef = jax.tree_util.tree_flatten(kde)
        for seed in (0, 42):
            for shape in ((), (7,), (3, 3)):
                params = {"d": d, "shape": list(shape)}
                key = np.asarray(jax.random.PRNGKey(seed))
                c.add("gaussian_kde.resample_fields",
                      lambda *xs, shape=shape: jax.tree_util.tree_unflatten(
                          treedef, xs[:5]).resample(xs[5], shape),
                      [np.asarray(x) for x in leaves] + [key], params=params, grad=False,
                      vmap=False,
                      name=f"gaussian_kde.resample_fields/{dt}/d{d}/{seed}/"
                           f"{'x'.join(map(str, shape)) or 'scalar'}")

# The estimator as a pytree through jit and vmap, as JAX's registered class.
params = {"bw": "scott", "weighted": False, "d": 2}
c.add("tree.jit_logpdf",
      lambda ds, x: jax.jit(lambda k, x: k.logpdf(x))(gaussian_kde(ds), x),
      [dataset(2, "float64"), c.normal((2, 3), "float64")], params=params,
      tol=TOL["float64"], grad_tol=GRAD_TOL["float64"])
c.add("tree.vmap_logpdf",
      lambda ds, x: jax.vmap(lambda k: k.logpdf(x))(jax.vmap(gaussian_kde)(ds)),
      [c.normal((3, 12), "float64"), c.normal((4,), "float64")], params=params,
      tol=TOL["float64"], grad_tol=GRAD_TOL["float64"], vmap=False)
# jax.grad of a summed log density in the points and the data.
for dt in ("float32", "float64"):
    for d in (1, 2):
        params = {"bw": "scott", "weighted": False, "d": d}
        c.add("grad.logpdf",
              jax.grad(lambda ds, x: gaussian_kde(ds).logpdf(x).sum(), argnums=(0, 1)),
              [dataset(d, dt), c.normal((5,) if d == 1 else (d, 5), dt)], params=params,
              tol=GRAD_TOL[dt], grad=False, vmap=False)

c.save()
