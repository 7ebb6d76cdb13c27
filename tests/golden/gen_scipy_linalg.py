#!/usr/bin/env python3
"""Goldens for `jax.scipy.linalg`'s special matrices and `polar`, and `jnp.linalg`'s
`tensorinv` and `tensorsolve` (`tests/scipy_linalg.rs`). `python tests/golden/gen_scipy_linalg.py`
rewrites `tests/golden/scipy_linalg.json`; see jaxcases.py for the format (values eagerly and
jitted, JVP/VJP, check_grads, vmap). The constructors of a size alone (`hilbert(n)`) take no
array, so they have values only; `n` and the options are the case's params.
"""

import numpy as np

from jaxcases import Cases
import jax.numpy as jnp
import jax.scipy.linalg as sl

c = Cases("scipy_linalg")

for dt in ("float32", "float64"):
    v = c.normal((4,), dt)
    add = lambda op, fn, inputs, **kw: c.add(op, fn, inputs, **kw)
    add("circulant", sl.circulant, [v])
    add("circulant", sl.circulant, [c.normal((2, 3), dt)], vmap=False)
    add("hankel", lambda x, y: sl.hankel(x, y), [c.normal((3,), dt), c.normal((4,), dt)])
    add("hankel/no_r", lambda x: sl.hankel(x), [c.normal((3,), dt)])
    add("fiedler", sl.fiedler, [v])
    add("companion", sl.companion, [c.normal((4,), dt) + 3.0])
    add("companion", sl.companion, [c.normal((2, 3), dt) + 3.0], vmap=False)
    add("leslie", sl.leslie, [c.normal((4,), dt), c.normal((3,), dt)])
    for n in (1, 2, 3, 5):
        add("fiedler_companion", sl.fiedler_companion, [c.normal((n + 1,), dt) + 3.0],
            params={"n": n})
    for n, mode in [(3, "full"), (5, "valid"), (2, "valid"), (4, "same"), (6, "same")]:
        add("convolution_matrix", lambda x, n=n, m=mode: sl.convolution_matrix(x, n, m),
            [c.normal((4,), dt)], params={"n": n, "mode": mode}, vmap=False)
    for side in ("right", "left"):
        a = c.normal((3, 3), dt) + 3.0 * np.eye(3, dtype=dt)
        add("polar", lambda x, s=side: sl.polar(x, side=s, method="svd"), [a],
            params={"side": side}, grad=False)
        if side == "right":  # JAX's QDWH takes a square matrix on this side only
            add("polar/qdwh", lambda x: sl.polar(x), [a], params={"side": side}, grad=False,
                tol=(2e-4, 2e-4) if dt == "float32" else (1e-9, 1e-9))
    add("tensorinv", lambda x: jnp.linalg.tensorinv(x, ind=1),
        [(c.normal((6, 6), "float64") + 4 * np.eye(6)).reshape(6, 2, 3).astype(dt)],
        params={"ind": 1}, vmap=False)
    add("tensorinv", lambda x: jnp.linalg.tensorinv(x, ind=2),
        [(c.normal((4, 4), "float64") + 4 * np.eye(4)).reshape(2, 2, 4).astype(dt)],
        params={"ind": 2}, vmap=False)
    a = (c.normal((6, 6), "float64") + 4 * np.eye(6)).reshape(2, 3, 6).astype(dt)
    add("tensorsolve", lambda x, y: jnp.linalg.tensorsolve(x, y), [a.reshape(6, 2, 3),
        c.normal((6,), dt)], vmap=False)
    add("tensorsolve/axes", lambda x, y: jnp.linalg.tensorsolve(x, y, axes=(0,)),
        [a.reshape(6, 2, 3).transpose(1, 0, 2), c.normal((6,), dt)], params={"axes": [0]},
        vmap=False)

# expm: 1-norms that pick each Padé degree (float64: 3, 5, 7, 9, 13, and 13 with
# squarings; float32: 3, 5, 7 and squarings), batched, triangular, and NaN past
# max_squarings. Complex matrices' cases are in gen_linalg_complex.py.
for dt, scales in (("float64", (0.002, 0.05, 0.3, 0.8, 1.5, 20.0)),
                   ("float32", (0.05, 0.5, 1.5, 20.0))):
    for s_ in scales:
        m = c.normal((3, 3), dt)
        m = (m * (s_ / np.abs(m).sum(0).max())).astype(dt)
        c.add("expm", lambda x: sl.expm(x), [m], params={"scale": s_},
              tol=(2e-5, 2e-5) if dt == "float32" else (1e-11, 1e-11),
              grad_tol=(2e-3, 2e-3) if dt == "float32" else (1e-8, 1e-8))
    c.add("expm", lambda x: sl.expm(x), [c.normal((2, 3, 3), dt)], params={"batched": True},
          tol=(2e-5, 2e-5) if dt == "float32" else (1e-11, 1e-11), grad=False)
    up = np.triu(c.normal((3, 3), dt)).astype(dt)
    c.add("expm/upper", lambda x: sl.expm(x, upper_triangular=True), [up], grad=False,
          tol=(2e-5, 2e-5) if dt == "float32" else (1e-11, 1e-11))
c.add("expm/max_squarings", lambda x: sl.expm(x, max_squarings=2),
      [c.normal((3, 3), "float64") * 100.0], params={"max_squarings": 2}, grad=False,
      name="expm/nan_past_max_squarings")


def const(op, fn, inputs, **kw):
    c.add(op, fn, inputs, vmap=False, **kw)


for n in (1, 3, 6):
    const("hilbert", lambda n=n: sl.hilbert(n), [], params={"n": n})
    const("invhilbert", lambda n=n: sl.invhilbert(n), [], params={"n": n})
    const("helmert", lambda n=n: sl.helmert(n), [], params={"n": n})
    const("helmert/full", lambda n=n: sl.helmert(n, full=True), [], params={"n": n})
    for kind in ("symmetric", "lower", "upper"):
        const("pascal", lambda n=n, k=kind: sl.pascal(n, k), [], params={"n": n, "kind": kind})
        const("invpascal", lambda n=n, k=kind: sl.invpascal(n, k), [],
              params={"n": n, "kind": kind})
    for scale in (None, "sqrtn", "n"):
        const("dft", lambda n=n, s=scale: sl.dft(n, s), [], params={"n": n, "scale": scale})
    const("dft/c64", lambda n=n: sl.dft(n, dtype=jnp.complex64), [], params={"n": n})
for n in (1, 2, 8):
    const("hadamard", lambda n=n: sl.hadamard(n), [], params={"n": n})
    const("hadamard/f32", lambda n=n: sl.hadamard(n, jnp.float32), [], params={"n": n})
# toeplitz over leading dimensions (c and r broadcast together), and its complex default
# r = conj(c); the unbatched real cases are in gen_linalg.py.
for dt in ("float32", "float64"):
    c.add("toeplitz", lambda x, y: sl.toeplitz(x, y), [c.normal((2, 3), dt), c.normal((4,), dt)])
    c.add("toeplitz", lambda x, y: sl.toeplitz(x, y),
          [c.normal((3,), dt), c.normal((2, 1, 4), dt)], vmap=False)
    c.add("toeplitz/no_r", lambda x: sl.toeplitz(x), [c.normal((2, 3), dt)])
# eigh_tridiagonal (JAX bisects; jaxrs solves the dense problem, equal to rounding) and
# expm_frechet (the JVP of expm).
for dt in ("float32", "float64"):
    tol = (1e-5, 1e-5) if dt == "float32" else (1e-12, 1e-12)
    d, e = c.normal((5,), dt), c.normal((4,), dt)
    c.add("eigh_tridiagonal", lambda x, y: sl.eigh_tridiagonal(x, y, eigvals_only=True),
          [d, e], tol=tol, grad=False, vmap=False)
    c.add("eigh_tridiagonal/select", lambda x, y: sl.eigh_tridiagonal(
        x, y, eigvals_only=True, select="i", select_range=(1, 3)), [d, e],
        params={"lo": 1, "hi": 3}, tol=tol, grad=False, vmap=False)
    # Eigenvectors up to sign: their absolute values.
    c.add("eigh_tridiagonal/vectors_abs", lambda x, y: jnp.abs(sl.eigh_tridiagonal(x, y)[1]),
          [d, e], tol=(2e-4, 2e-4) if dt == "float32" else (1e-9, 1e-9), grad=False,
          vmap=False)
    a, dir_ = c.normal((3, 3), dt), c.normal((3, 3), dt)
    c.add("expm_frechet", lambda x, y: sl.expm_frechet(x, y), [a, dir_],
          tol=(2e-5, 2e-5) if dt == "float32" else (1e-11, 1e-11), grad=False)
for dt in ("float32", "float64", "complex64"):
    for shape, mode, cshape in [((4, 3), "right", (2, 4)), ((4, 3), "left", (3, 2)),
                                ((3, 4), "right", (3,)), ((3, 4), "left", (3,))]:
        for conj in (False, True) if dt == "complex64" else (False,):
            c.add("qr_multiply", lambda x, y, m=mode, cj=conj: sl.qr_multiply(x, y, mode=m, conjugate=cj),
                  [c.normal(shape, dt), c.normal(cshape, dt)], params={"mode": mode, "conjugate": conj},
                  grad=False, vmap=False)
for dt in ("complex64", "complex128"):
    c.add("toeplitz/no_r", lambda x: sl.toeplitz(x), [c.normal((3,), dt)])
    c.add("toeplitz", lambda x, y: sl.toeplitz(x, y), [c.normal((3,), dt), c.normal((2,), dt)])
c.save()
