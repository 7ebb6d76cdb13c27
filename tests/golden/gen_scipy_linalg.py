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
# The Schur-based functions. hessenberg is unique (LAPACK's reflector convention), so its
# factors are compared with JAX's; the Schur form is not (the eigenvalues' order, the
# columns' signs and phases), so schur's cases record invariants of it: Z T Zᴴ, Zᴴ Z, T's
# part below its (block) diagonal, and the power sums tr(Tᵏ), k = 1..n, which fix the
# eigenvalues as a set. rsf2csf is compared on JAX's own real Schur forms (its input), and
# sqrtm, solve_sylvester and funm, whose results are unique, directly. None of them has a
# derivative in JAX except rsf2csf.


def schur_invariants(a, output):
    t, z = sl.schur(a, output=output)
    n = a.shape[-1]
    back = z @ t @ jnp.swapaxes(z, -1, -2).conj()
    gram = jnp.swapaxes(z, -1, -2).conj() @ z
    below = jnp.tril(t, -2 if output == "real" and not jnp.iscomplexobj(a) else -1)
    powers, p = [], jnp.broadcast_to(jnp.eye(n, dtype=t.dtype), t.shape)
    for _ in range(n):
        p = p @ t
        powers.append(jnp.trace(p, axis1=-2, axis2=-1))
    return back, gram, below, jnp.stack(powers, -1)


def shifted(shape, dt, shift):
    x = c.normal(shape, dt)
    return (x + shift * np.eye(shape[-1])).astype(dt)


for dt in ("float32", "float64", "complex64", "complex128"):
    lo = dt in ("float32", "complex64")
    tol = (2e-5, 2e-5) if lo else (1e-12, 1e-12)
    for shape in ((4, 4), (1, 1), (2, 3, 3)):
        a = c.normal(shape, dt)
        c.add("hessenberg", lambda x: sl.hessenberg(x, calc_q=True), [a], tol=tol, grad=False,
              vmap=len(shape) == 2)
    c.add("hessenberg/h_only", lambda x: sl.hessenberg(x), [c.normal((5, 5), dt)], tol=tol,
          grad=False)
    for output in ("real", "complex"):
        for shape in ((5, 5), (2, 4, 4), (1, 1)):
            c.add("schur/invariants", lambda x, o=output: schur_invariants(x, o),
                  [c.normal(shape, dt)], params={"output": output},
                  tol=(1e-4, 1e-4) if lo else (1e-10, 1e-10), grad=False,
                  vmap=len(shape) == 2)
    # sqrtm (JAX takes one matrix; batches under vmap): eigenvalues off the negative real
    # axis (shifted), and a general matrix.
    for a in (shifted((4, 4), dt, 3.0), c.normal((3, 3), dt)):
        c.add("sqrtm", lambda x: sl.sqrtm(x), [a], tol=(2e-4, 2e-4) if lo else (1e-9, 1e-9),
              grad=False)
    # funm: several scalar functions, and the error estimate.
    for func in ("exp", "sin", "square"):
        f = {"exp": jnp.exp, "sin": jnp.sin, "square": lambda v: v * v}[func]
        c.add("funm", lambda x, f=f: sl.funm(x, f), [c.normal((4, 4), dt)],
              params={"func": func}, tol=(5e-4, 5e-4) if lo else (1e-9, 1e-9), grad=False,
              vmap=False)
    c.add("funm/err", lambda x: sl.funm(x, jnp.exp, disp=False), [c.normal((3, 3), dt)],
          params={"func": "exp"}, tol=(5e-4, 5e-4) if lo else (1e-9, 1e-9), grad=False,
          vmap=False)
    # solve_sylvester, both methods, broadcast batches.
    for method in ("schur", "eigen"):
        stol = (1e-3, 1e-3) if lo else (1e-9, 1e-9)
        a, b, cc = shifted((3, 3), dt, 2.0), shifted((2, 2), dt, 2.0), c.normal((3, 2), dt)
        c.add("solve_sylvester", lambda x, y, z, m=method: sl.solve_sylvester(x, y, z, method=m),
              [a, b, cc], params={"method": method, "tol": 1e-8}, tol=stol, grad=False)
        a, b, cc = shifted((2, 3, 3), dt, 2.0), shifted((4, 4), dt, 2.0), c.normal((3, 4), dt)
        c.add("solve_sylvester", lambda x, y, z, m=method: sl.solve_sylvester(x, y, z, method=m),
              [a, b, cc], params={"method": method, "tol": 1e-8}, tol=stol, grad=False,
              vmap=False)
    # Eigenvalues of a and -b that (nearly) meet: NaN, as JAX's.
    a = shifted((2, 2), dt, 1.0)
    c.add("solve_sylvester", lambda x, y, z: sl.solve_sylvester(x, y, z, tol=1e3),
          [a, c.normal((2, 2), dt), c.normal((2, 2), dt)], params={"method": "schur", "tol": 1e3},
          grad=False, vmap=False)

# rsf2csf on JAX's own real Schur forms (a vmap batch of three of them), and on a complex one.
for dt in ("float32", "float64"):
    lo = dt == "float32"
    forms = [tuple(np.asarray(v) for v in sl.schur(c.normal((4, 4), dt))) for _ in range(3)]
    t, z = forms[0]
    c.add("rsf2csf", lambda x, y: sl.rsf2csf(x, y), [t, z],
          tol=(1e-5, 1e-5) if lo else (1e-12, 1e-12),
          grad_tol=(1e-3, 1e-3) if lo else (1e-8, 1e-8), check_grads=False,
          batch=[np.stack([f[0] for f in forms]), np.stack([f[1] for f in forms])])
    t, z = (np.asarray(v) for v in sl.schur(c.normal((2, 3, 3), dt)))
    c.add("rsf2csf", lambda x, y: sl.rsf2csf(x, y), [t, z],
          tol=(1e-5, 1e-5) if lo else (1e-12, 1e-12), grad=False, vmap=False)
t, z = (np.asarray(v) for v in sl.schur(c.normal((3, 3), "complex128")))
c.add("rsf2csf", lambda x, y: sl.rsf2csf(x, y), [t, z], grad=False, vmap=False)
c.save()
