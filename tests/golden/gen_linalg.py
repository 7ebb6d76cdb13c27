#!/usr/bin/env python3
"""Goldens for the linear algebra (`tests/linalg.rs`): `jax.lax.linalg`, `jax.numpy.linalg`
and `jax.scipy.linalg`. `python tests/golden/gen_linalg.py` rewrites
`tests/golden/linalg.json`; see jaxcases.py for the format (values eagerly and jitted,
JVP/VJP, check_grads, vmap).

Eigenvectors and singular vectors are defined up to the sign of each one (LAPACK's choice
is not specified), so cases record sign-free functions of them: their squares, elementwise.
Inputs are well conditioned (a random matrix plus a multiple of the identity, or `x xᵀ + n I`
for positive definite ones) and their eigenvalues and singular values distinct, where the
derivatives exist.
"""

import numpy as np

from jaxcases import Cases
import jax.numpy as jnp
import jax.lax.linalg as ll
import jax.scipy.linalg as sl

c = Cases("linalg")
F32_TOL = (2e-5, 2e-5)
F32_GRAD = (2e-4, 2e-4)


def tol(dt, grad=False):
    if dt == "float32":
        return F32_GRAD if grad else F32_TOL
    return (1e-10, 1e-10) if not grad else (1e-8, 1e-8)


def spd(shape, dt):
    x = c.normal(shape, "float64")
    n = shape[-1]
    a = x @ np.swapaxes(x, -1, -2) + n * np.eye(n)
    return a.astype(dt)


def general(shape, dt, shift=4.0):
    x = c.normal(shape, "float64")
    if shape[-1] == shape[-2]:
        x = x + shift * np.eye(shape[-1])
    return x.astype(dt)


def add(op, fn, inputs, dt, **kw):
    c.add(op, fn, inputs, tol=tol(dt), grad_tol=tol(dt, True), **kw)


for dt in ("float32", "float64"):
    # ---- lax.linalg
    for shape in [(4, 4), (2, 3, 3)]:
        add("lax.cholesky", lambda a: ll.cholesky(a), [spd(shape, dt)], dt)
    for left in (True, False):
        for lower in (True, False):
            for trans in (False, True):
                params = {"left_side": left, "lower": lower, "transpose_a": trans,
                          "unit_diagonal": False}
                b = c.normal((4, 2) if left else (2, 4), dt)
                add("lax.triangular_solve",
                    lambda a, b, p=params: ll.triangular_solve(a, b, **p),
                    [general((4, 4), dt), b], dt, params=params)
    params = {"left_side": True, "lower": True, "transpose_a": False, "unit_diagonal": True}
    add("lax.triangular_solve", lambda a, b: ll.triangular_solve(a, b, **params),
        [general((2, 3, 3), dt), c.normal((2, 3, 5), dt)], dt, params=params)
    for shape in [(4, 4), (2, 3, 3), (5, 3), (3, 5)]:
        add("lax.lu", lambda a: ll.lu(a), [general(shape, dt)], dt)
    for shape in [(4, 4), (2, 3, 3)]:
        add("lax.lu/lu", lambda a: ll.lu(a)[0], [general(shape, dt)], dt)
    for shape, full in [((5, 3), False), ((4, 4), False), ((4, 4), True), ((2, 4, 3), False),
                        ((5, 3), True), ((3, 5), False)]:
        diff = shape[-2] >= shape[-1] and (not full or shape[-2] == shape[-1])
        add("lax.qr", lambda a, f=full: ll.qr(a, full_matrices=f), [general(shape, dt)], dt,
            params={"full_matrices": full}, grad=None if diff else False)
    for shape in [(4, 4), (2, 3, 3)]:
        add("lax.eigh", lambda a: (lambda v, w: (w, v * v))(*ll.eigh(a)), [spd(shape, dt)], dt)
    for shape, full in [((5, 3), False), ((3, 5), False), ((4, 4), False), ((2, 4, 3), False),
                        ((4, 4), True), ((4, 3), True)]:
        diff = not full or shape[-2] == shape[-1]
        add("lax.svd",
            lambda a, f=full: (lambda u, s, vt: (s, u * u, vt * vt))(*ll.svd(a, full_matrices=f)),
            [general(shape, dt, shift=3.0)], dt, params={"full_matrices": full},
            grad=None if diff else False)
    for shape in [(5, 3), (2, 3, 4)]:
        add("lax.svdvals", lambda a: ll.svd(a, compute_uv=False), [general(shape, dt)], dt)

    # ---- jnp.linalg
    add("jnp.linalg.cholesky", lambda a: jnp.linalg.cholesky(a, upper=True), [spd((3, 3), dt)],
        dt, params={"upper": True})
    add("jnp.linalg.solve", jnp.linalg.solve, [general((4, 4), dt), c.normal((4,), dt)], dt)
    add("jnp.linalg.solve", jnp.linalg.solve, [general((2, 3, 3), dt), c.normal((2, 3, 2), dt)],
        dt)
    add("jnp.linalg.inv", jnp.linalg.inv, [general((2, 3, 3), dt)], dt)
    add("jnp.linalg.det", jnp.linalg.det, [general((2, 3, 3), dt, shift=0.5)], dt)
    add("jnp.linalg.slogdet", lambda a: tuple(jnp.linalg.slogdet(a)),
        [general((2, 4, 4), dt, shift=0.5)], dt)
    add("jnp.linalg.pinv", jnp.linalg.pinv, [general((4, 3), dt)], dt)
    add("jnp.linalg.matrix_rank", jnp.linalg.matrix_rank,
        [(c.normal((4, 2), dt) @ c.normal((2, 3), dt)).astype(dt)], dt)
    add("jnp.linalg.cond", jnp.linalg.cond, [general((3, 3), dt)], dt)
    add("jnp.linalg.lstsq", lambda a, b: tuple(jnp.linalg.lstsq(a, b)),
        [general((5, 3), dt), c.normal((5, 2), dt)], dt, grad=False, vmap=False)
    for ord_ in (2, -2, "nuc"):
        add("jnp.linalg.norm", lambda x, o=ord_: jnp.linalg.norm(x, ord=o),
            [general((3, 4), dt)], dt, params={"ord": str(ord_)})
    add("jnp.linalg.matrix_power", lambda a: jnp.linalg.matrix_power(a, -2),
        [general((3, 3), dt)], dt, params={"n": -2})
    add("jnp.linalg.eigvalsh", jnp.linalg.eigvalsh, [spd((3, 3), dt)], dt)
    add("jnp.linalg.eigh", lambda a: (lambda w, v: (w, v * v))(*jnp.linalg.eigh(a)),
        [spd((3, 3), dt)], dt)
    add("jnp.linalg.svd", lambda a: (lambda u, s, vt: (s, u * u, vt * vt))(*jnp.linalg.svd(a)),
        [general((3, 3), dt)], dt, grad=None)
    add("jnp.linalg.qr", lambda a: tuple(jnp.linalg.qr(a)), [general((4, 3), dt)], dt)
    add("jnp.linalg.qr/r", lambda a: jnp.linalg.qr(a, mode="r"), [general((4, 3), dt)], dt)

    # ---- jax.scipy.linalg
    a = spd((3, 3), dt)
    # SciPy's Cholesky reads one triangle without symmetrizing, and its JVP (JAX's, and ours)
    # assumes a symmetric tangent: finite differences of unsymmetric perturbations disagree
    # with it, in JAX as here, so these cases compare with JAX's derivatives only.
    add("scipy.linalg.cholesky", lambda a: sl.cholesky(a), [a], dt, check_grads=False)
    add("scipy.linalg.cho_solve", lambda a, b: sl.cho_solve(sl.cho_factor(a, lower=True), b),
        [a, c.normal((3,), dt)], dt, params={"lower": True}, check_grads=False)
    add("scipy.linalg.cho_solve", lambda a, b: sl.cho_solve(sl.cho_factor(a), b),
        [a, c.normal((3, 2), dt)], dt, params={"lower": False}, check_grads=False)
    add("scipy.linalg.lu", lambda a: sl.lu(a), [general((4, 4), dt)], dt, grad=False)
    add("scipy.linalg.lu", lambda a: sl.lu(a), [general((4, 3), dt)], dt, grad=False)
    add("scipy.linalg.lu_factor", lambda a: sl.lu_factor(a), [general((4, 4), dt)], dt,
        grad=False)
    for trans in (0, 1):
        add("scipy.linalg.lu_solve",
            lambda a, b, t=trans: sl.lu_solve(sl.lu_factor(a), b, trans=t),
            [general((4, 4), dt), c.normal((4, 2), dt)], dt, params={"trans": trans})
    add("scipy.linalg.solve", lambda a, b: sl.solve(a, b), [general((3, 3), dt),
        c.normal((3,), dt)], dt, params={"assume_a": "gen", "lower": False})
    add("scipy.linalg.solve", lambda a, b: sl.solve(a, b, assume_a="pos", lower=True),
        [spd((3, 3), dt), c.normal((3, 2), dt)], dt, params={"assume_a": "pos", "lower": True})
    for trans, lower, unit in [(0, False, False), (1, True, False), (0, True, True)]:
        add("scipy.linalg.solve_triangular",
            lambda a, b, t=trans, lo=lower, u=unit: sl.solve_triangular(
                a, b, trans=t, lower=lo, unit_diagonal=u),
            [general((3, 3), dt), c.normal((3,), dt)], dt,
            params={"trans": trans, "lower": lower, "unit_diagonal": unit})
    for lower in (True, False):
        add("scipy.linalg.eigh", lambda a, lo=lower: (lambda w, v: (w, v * v))(
            *sl.eigh(a, lower=lo)), [spd((3, 3), dt)], dt, params={"lower": lower}, grad=False)
    add("scipy.linalg.svd", lambda a: (lambda u, s, vt: (s, u * u, vt * vt))(*sl.svd(a)),
        [general((3, 3), dt)], dt)
    for mode in ("full", "economic"):
        add("scipy.linalg.qr", lambda a, m=mode: tuple(sl.qr(a, mode=m)), [general((4, 3), dt)],
            dt, params={"mode": mode}, grad=mode == "economic")
    add("scipy.linalg.qr/r", lambda a: sl.qr(a, mode="r")[0], [general((4, 3), dt)], dt,
        grad=False)
    add("scipy.linalg.inv", sl.inv, [general((3, 3), dt)], dt)
    add("scipy.linalg.det", sl.det, [general((3, 3), dt)], dt)
    add("scipy.linalg.block_diag", lambda x, y, z: sl.block_diag(x, y, z),
        [c.normal((2, 2), dt), c.normal((1, 3), dt), c.normal((3,), dt)], dt, vmap=False)
    add("scipy.linalg.toeplitz", lambda x, y: sl.toeplitz(x, y),
        [c.normal((3,), dt), c.normal((4,), dt)], dt)
    add("scipy.linalg.toeplitz/sym", lambda x: sl.toeplitz(x), [c.normal((3,), dt)], dt)

add("lax.lu_pivots_to_permutation", lambda p: ll.lu_pivots_to_permutation(p, 5),
    [np.array([[2, 3, 2, 4], [1, 1, 3, 3]], np.int32)], "float64", params={"size": 5},
    vmap=False)
# Not positive definite: NaN, as LAPACK reports it.
c.add("lax.cholesky", lambda a: ll.cholesky(a), [np.array([[1.0, 2.0], [2.0, 1.0]])],
      grad=False, vmap=False, name="lax.cholesky/not_positive_definite")
c.add("jnp.linalg.det", jnp.linalg.det, [np.array([[1.0, 2.0], [2.0, 4.0]])], grad=False,
      vmap=False, name="jnp.linalg.det/singular")
c.add("jnp.linalg.slogdet", lambda a: tuple(jnp.linalg.slogdet(a)),
      [np.array([[1.0, 2.0], [2.0, 4.0]])], grad=False, vmap=False,
      name="jnp.linalg.slogdet/singular")
c.save()
