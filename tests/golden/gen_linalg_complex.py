#!/usr/bin/env python3
"""Goldens for complex linear algebra and the general eigendecomposition
(`tests/linalg_complex.rs`). `python tests/golden/gen_linalg_complex.py` rewrites
`tests/golden/linalg_complex.json` (see jaxcases.py for the format: values eagerly and jitted,
JVP/VJP, vmap) and `tests/golden/linalg_eig.json` (JAX's raw `eig` results, values only: the
order of the eigenvalues and the phase of each eigenvector are the kernel's, so the Rust test
pairs them before comparing).

`eigvals` cases compare the sorted real and imaginary parts, which do not depend on the order
and are differentiable, so the eigenvalues' JVP and VJP are checked against JAX's.
"""

import numpy as np

from jaxcases import Cases
import jax
import jax.numpy as jnp
import jax.scipy.linalg as sl

c = Cases("linalg_complex")


def sorted_parts(w):
    return jnp.sort(w.real, axis=-1), jnp.sort(w.imag, axis=-1)


for dt in ("complex64", "complex128"):
    a = c.normal((3, 3), dt) + 3.0 * np.eye(3, dtype=dt)
    batch = c.normal((2, 3, 3), dt) + 3.0 * np.eye(3, dtype=dt)
    c.add("solve", jnp.linalg.solve, [a, c.normal((3, 2), dt)])
    c.add("solve", jnp.linalg.solve, [batch, c.normal((2, 3, 1), dt)])
    c.add("inv", jnp.linalg.inv, [a])
    c.add("inv", jnp.linalg.inv, [batch])
    c.add("det", jnp.linalg.det, [a])
    c.add("slogdet", lambda x: tuple(jnp.linalg.slogdet(x)), [a])
    c.add("lu", lambda x: jax.lax.linalg.lu(x)[0], [a])
    c.add("lu", lambda x: jax.lax.linalg.lu(x)[0], [batch])
    for trans in (0, 1, 2):
        c.add("solve_triangular", lambda x, y, t=trans: sl.solve_triangular(x, y, trans=t, lower=True),
              [a, c.normal((3, 2), dt)], params={"trans": trans})
        c.add("lu_solve", lambda x, y, t=trans: sl.lu_solve(sl.lu_factor(x), y, trans=t),
              [a, c.normal((3,), dt)], params={"trans": trans})

    # Small and large norms (different Padé degrees, squarings), at gen_scipy_linalg.py's
    # tolerances for expm.
    tol = (2e-5, 2e-5) if dt == "complex64" else (1e-11, 1e-11)
    grad_tol = (2e-3, 2e-3) if dt == "complex64" else (1e-8, 1e-8)
    for scale in (0.1, 1.0, 4.0):
        c.add("expm", sl.expm, [c.normal((3, 3), dt, scale=scale)], params={"scale": scale},
              tol=tol, grad_tol=grad_tol)
    c.add("expm", sl.expm, [c.normal((2, 3, 3), dt)], params={"batched": True}, tol=tol,
          grad=False)

# The decompositions whose rules conjugate, on Hermitian positive definite, square and
# rectangular complex matrices; where a factor's phases are free (the eigenvectors', the
# singular vectors') it is compared through products that do not depend on them.
for dt in ("complex64", "complex128"):
    g = c.normal((3, 3), dt)
    hpd = g @ g.conj().T + 3.0 * np.eye(3, dtype=dt)
    c.add("cholesky", jnp.linalg.cholesky, [hpd])
    c.add("cholesky/upper", lambda x: jnp.linalg.cholesky(x, upper=True), [hpd])
    c.add("scipy.cholesky", lambda x: sl.cholesky(x, lower=False), [hpd])
    herm = (g + g.conj().T) / 2
    c.add("eigvalsh", jnp.linalg.eigvalsh, [herm])
    # The projector on each eigenvector, v v^H, is phase-free.
    c.add("eigh/projectors", lambda x: (lambda w, v: (w, jnp.einsum("...ik,...jk->...kij", v, v.conj())))(*jnp.linalg.eigh(x)), [herm])
    for shape in ((3, 3), (4, 2), (2, 4)):
        x = c.normal(shape, dt)
        c.add("svdvals", jnp.linalg.svdvals, [x])
        c.add("svd/products", lambda m: (lambda u, s, vh: (s, u @ jnp.diag(s).astype(u.dtype) @ vh, u @ u.conj().T, vh.conj().T @ vh))(*jnp.linalg.svd(m, full_matrices=False)), [x], grad=False)
        c.add("pinv", jnp.linalg.pinv, [x])
    for shape in ((3, 3), (4, 2)):
        x = c.normal(shape, dt)
        c.add("qr/product", lambda m: (lambda q, r: (q @ r, q.conj().T @ q, jnp.abs(r)))(*jnp.linalg.qr(m)), [x], grad=False)
        # The factors themselves: jaxrs's complex QR takes LAPACK's phases (R's diagonal
        # real), so they are JAX's, and so are their derivatives.
        c.add("qr", lambda m: tuple(jnp.linalg.qr(m)), [x])
    c.add("polar", lambda x: sl.polar(x, method="svd")[0], [c.normal((3, 3), dt) + 3.0 * np.eye(3, dtype=dt)])

for dt in ("float32", "float64", "complex64", "complex128"):
    for shape in ((4, 4), (2, 3, 3), (1, 1)):
        x = c.normal(shape, dt)
        c.add("eigvals", lambda m: sorted_parts(jnp.linalg.eigvals(m)), [x])
    if dt.startswith("float"):
        # A rotation's conjugate pair: equal real parts, which stay equal under a real
        # perturbation (a complex one would split them, and their sorted order with them).
        rot = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.5]]).astype(dt)
        c.add("eigvals", lambda m: sorted_parts(jnp.linalg.eigvals(m)), [rot])
c.save()

eig = Cases("linalg_eig")
for dt in ("float32", "float64", "complex64", "complex128"):
    for shape in ((4, 4), (2, 3, 3), (5, 5)):
        eig.add("eig", lambda m: tuple(jnp.linalg.eig(m)), [eig.normal(shape, dt)],
                grad=False, vmap=False)
eig.save()
