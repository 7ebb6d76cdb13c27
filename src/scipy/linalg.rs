//! `jax.scipy.linalg`: SciPy's linear-algebra API over jaxrs arrays, as JAX gives it (SciPy's
//! defaults: `cholesky` upper unless `lower`, `qr` and `svd` full). Built on
//! [`lax::linalg`](crate::lax::linalg)'s decompositions, so each function differentiates and
//! maps under `vmap` over leading batch dims.
//!
//! ```
//! use jaxrs::prelude::*;
//! use jaxrs::scipy::linalg;
//!
//! let a = Array::from_vec(vec![4.0f64, 2.0, 2.0, 3.0], &[2, 2]);
//! let b = Array::from_vec(vec![2.0f64, 1.0], &[2]);
//! let x = linalg::cho_solve(&linalg::cho_factor(&a, true), &b).to_vec::<f64>();
//! assert!((4.0 * x[0] + 2.0 * x[1] - 2.0).abs() < 1e-12);
//! assert!((2.0 * x[0] + 3.0 * x[1] - 1.0).abs() < 1e-12);
//! ```

use crate::lax::linalg::{self as lax_linalg, TriangularSolveOptions};
use crate::numpy as jnp;
use crate::{where_, Array, DType};
use jaxrs_runtime::decompositions::{self as d, broadcast_batch, mh, mt};
use std::panic::Location;

// Float and complex operands stay as they are; integers compute in float, as JAX's.
use crate::numpy::inexact;

/// `b` as a batch of matrices (a vector becomes one column), and whether it was a vector.
fn as_columns(b: &Array) -> (Array, bool) {
    if b.rank() == 1 {
        (b.expand_dims(-1), true)
    } else {
        (b.clone(), false)
    }
}

fn back_from_columns(x: Array, vector: bool) -> Array {
    if vector {
        x.squeeze(vec![x.rank() - 1])
    } else {
        x
    }
}

/// The Cholesky factor (`jax.scipy.linalg.cholesky(a, lower=False)`): upper `U` with
/// `Uᵀ U = a` by default, lower `L` when `lower`. As SciPy's (and unlike
/// `jnp.linalg.cholesky`), only the triangle named is read: no symmetrization, so the
/// gradient lies in that triangle.
#[track_caller]
pub fn cholesky(a: &Array, lower: bool) -> Array {
    let a = inexact(a);
    if lower {
        lax_linalg::cholesky(&a, false)
    } else {
        mh(&lax_linalg::cholesky(&mh(&a), false))
    }
}

/// A Cholesky factorisation as [`cho_factor`] returns it: the factor and whether it is lower.
#[derive(Debug, Clone)]
pub struct ChoFactor {
    /// The triangular factor (the other triangle is zero, where SciPy leaves garbage).
    pub c: Array,
    /// Is `c` lower triangular?
    pub lower: bool,
}

/// `jax.scipy.linalg.cho_factor(a, lower=False)`.
#[track_caller]
pub fn cho_factor(a: &Array, lower: bool) -> ChoFactor {
    ChoFactor {
        c: cholesky(a, lower),
        lower,
    }
}

/// `jax.scipy.linalg.cho_solve((c, lower), b)`: `x` with `a x = b` from `a`'s Cholesky factor.
#[track_caller]
pub fn cho_solve(factor: &ChoFactor, b: &Array) -> Array {
    let (c, b) = jnp::linalg::promote_inexact(&factor.c, b);
    let (b, vector) = as_columns(&b);
    let opts = TriangularSolveOptions {
        left_side: true,
        lower: factor.lower,
        ..Default::default()
    };
    // a = L Lᵀ (or Uᵀ U): solve with the factor and with its transpose.
    let (first, second) = if factor.lower {
        (
            opts,
            TriangularSolveOptions {
                transpose_a: true,
                ..opts
            },
        )
    } else {
        (
            TriangularSolveOptions {
                transpose_a: true,
                ..opts
            },
            opts,
        )
    };
    let y = lax_linalg::triangular_solve(&c, &b, first);
    back_from_columns(lax_linalg::triangular_solve(&c, &y, second), vector)
}

/// `jax.scipy.linalg.lu(a)`: `(p, l, u)` with `a = p l u`, `p` a permutation matrix, `l` unit
/// lower trapezoidal (`m x k`), `u` upper trapezoidal (`k x n`).
#[track_caller]
pub fn lu(a: &Array) -> (Array, Array, Array) {
    let a = inexact(a);
    let (lu, _, perm) = lax_linalg::lu(&a);
    let (m, n) = (a.shape()[a.rank() - 2], a.shape()[a.rank() - 1]);
    let k = m.min(n);
    let l = lu.slice_axis(-1, 0, k).tril(-1) + jnp::eye(m, Some(k), 0, Some(a.dtype()));
    let u = lu.slice_axis(-2, 0, k).triu(0);
    // p[perm[i], i] = 1: row i of l u is row perm[i] of a.
    let p = mt(&perm
        .expand_dims(-1)
        .eq(Array::iota(DType::I32, &[m, m], 1))
        .astype(a.dtype()));
    (p, l, u)
}

/// An LU factorisation as [`lu_factor`] returns it.
#[derive(Debug, Clone)]
pub struct LuFactor {
    /// `L` below the diagonal (unit diagonal implied), `U` on and above it.
    pub lu: Array,
    /// LAPACK's row swaps, 0-based: row `i` was swapped with row `piv[i]`.
    pub piv: Array,
}

/// `jax.scipy.linalg.lu_factor(a)`: `(lu, piv)`.
#[track_caller]
pub fn lu_factor(a: &Array) -> LuFactor {
    let (lu, piv, _) = lax_linalg::lu(&inexact(a));
    LuFactor { lu, piv }
}

/// `lax.linalg.lu_pivots_to_permutation(pivots, permutation_size)`: the permutation the row
/// swaps make (`perm[i]` is the original row that ends at row `i`).
#[track_caller]
pub fn lu_pivots_to_permutation(pivots: &Array, permutation_size: usize) -> Array {
    let k = pivots.shape()[pivots.rank() - 1];
    let mut batch = pivots.shape()[..pivots.rank() - 1].to_vec();
    let positions = Array::iota(DType::I32, &[permutation_size], 0);
    batch.push(permutation_size);
    let init = positions.broadcast_to(&batch);
    let pivots = pivots.astype(DType::I32);
    crate::fori_loop(
        0,
        k as i32,
        |i: &Array, perm: Array| {
            let at = |x: &Array, idx: &Array| {
                let mut shape = x.shape().to_vec();
                *shape.last_mut().expect("rank >= 1") = 1;
                x.take_along_axis(&idx.broadcast_to(&shape), -1)
            };
            let p = at(&pivots, &i.reshape(vec![1usize]));
            let perm_i = at(&perm, &i.reshape(vec![1usize]));
            let perm_p = at(&perm, &p);
            let swapped = where_(positions.eq(&p), &perm_i, &perm);
            where_(positions.eq(i), &perm_p, &swapped)
        },
        init,
    )
}

/// `jax.scipy.linalg.lu_solve((lu, piv), b, trans=0)`: `a x = b` (`trans` 0), `aᵀ x = b` (1)
/// or `aᴴ x = b` (2, the same as 1 for real matrices).
#[track_caller]
pub fn lu_solve(factor: &LuFactor, b: &Array, trans: u8) -> Array {
    let (lu, b) = jnp::linalg::promote_inexact(&factor.lu, b);
    if trans > 2 {
        panic!(
            "lu_solve: trans must be 0, 1 or 2, got {trans} at {}",
            Location::caller()
        );
    }
    let m = lu.shape()[lu.rank() - 2];
    let perm = lu_pivots_to_permutation(&factor.piv, m);
    let (b, vector) = as_columns(&b);
    let factors = (lu, factor.piv.clone(), perm);
    let x = if trans == 2 && b.dtype().is_complex() {
        // aᴴ x = b is aᵀ conj(x) = conj(b).
        jnp::linalg::lu_solve_factored(&factors, &b.conj(), true).conj()
    } else {
        jnp::linalg::lu_solve_factored(&factors, &b, trans != 0)
    };
    back_from_columns(x, vector)
}

/// `jax.scipy.linalg.qr(a, mode="full")`: `mode` `"full"` (`q` is `m x m`), `"economic"`
/// (`m x k`) or `"r"` (only `r`: `(None, r)`).
#[track_caller]
pub fn qr(a: &Array, mode: &str) -> (Option<Array>, Array) {
    match mode {
        "full" => jnp::linalg::qr(a, "complete"),
        "economic" => jnp::linalg::qr(a, "reduced"),
        "r" => (None, jnp::linalg::qr(a, "complete").1),
        other => panic!(
            "scipy.linalg.qr: unsupported mode {other:?} (\"full\", \"economic\" or \"r\") at {}",
            Location::caller()
        ),
    }
}

/// `jax.scipy.linalg.qr_multiply(a, c, mode="right", conjugate=False)`: `(c Q, R)` (mode
/// `"right"`, `c [.., p, m]`, the product `[.., p, k]`) or `(Q c, R)` (`"left"`, `c [.., k,
/// p]`), with the economic `Q [m, k]` and `R [k, n]` of `a`, `k = min(m, n)`, and `conj(Q)`
/// when `conjugate`. A vector `c` comes back a vector. `pivoting=True` is not offered yet
/// (column-pivoted QR).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg::qr_multiply;
///
/// let a = Array::from_vec(vec![3.0f64, 0.0, 4.0, 5.0], &[2, 2]);
/// let (cq, r) = qr_multiply(&a, &Array::eye(2, DType::F64), "right", false);
/// // c = I gives Q itself: Q R = a.
/// let back = cq.matmul(&r).to_vec::<f64>();
/// assert!(back.iter().zip([3.0, 0.0, 4.0, 5.0]).all(|(x, y)| (x - y).abs() < 1e-12));
/// ```
#[track_caller]
pub fn qr_multiply(a: &Array, c: &Array, mode: &str, conjugate: bool) -> (Array, Array) {
    let loc = Location::caller();
    let (a, c) = jnp::linalg::promote_inexact(a, c);
    let left = match mode {
        "left" => true,
        "right" => false,
        other => panic!("qr_multiply: mode must be \"right\" or \"left\", got {other:?} at {loc}"),
    };
    assert!(
        a.rank() >= 2,
        "qr_multiply: a must be a (batched) matrix, got {} at {loc}",
        a.aval()
    );
    let vector = c.rank() == 1;
    let c = match (vector, left) {
        (true, true) => c.expand_dims(-1),
        (true, false) => c.expand_dims(0),
        (false, _) => c,
    };
    let (m, n) = (a.shape()[a.rank() - 2], a.shape()[a.rank() - 1]);
    let k = m.min(n);
    let (want, got) = if left {
        (k, c.shape()[c.rank() - 2])
    } else {
        (m, c.shape()[c.rank() - 1])
    };
    assert!(
        c.rank() >= 2 && got == want,
        "qr_multiply: a is {} so Q is {m}x{k}, but c is {} ({} must be {want}) at {loc}",
        a.aval(),
        c.aval(),
        if left { "its rows" } else { "its columns" }
    );
    let (q, r) = jnp::linalg::qr(&a, "reduced");
    let q = q.expect("reduced mode has q");
    let q = if conjugate { q.conj() } else { q };
    let product = if left { q.matmul(&c) } else { c.matmul(&q) };
    let product = if vector {
        product.reshape(vec![product.size()])
    } else {
        product
    };
    (product, r)
}

/// `jax.scipy.linalg.solve(a, b, lower=False, assume_a="gen")`: `"gen"` by LU, `"pos"` by
/// Cholesky (of the triangle `lower` names; differentiated as the solve with all of `a`, as
/// JAX's), `"sym"`/`"her"` by LU as well.
#[track_caller]
pub fn solve(a: &Array, b: &Array, lower: bool, assume_a: &str) -> Array {
    match assume_a {
        "gen" | "sym" | "her" => {
            let (b2, vector) = as_columns(b);
            back_from_columns(jnp::linalg::solve(a, &b2), vector)
        }
        "pos" => {
            // As JAX's: the factor of the triangle named, differentiated as the solve with
            // the whole of `a` (JAX's custom_linear_solve with a's matvec). Here by one step
            // of iterative refinement around the solution `x0`: `x0 - A⁻¹(a x0 - b)` has
            // x0's value (refined) and the derivatives of `a⁻¹ b`, with `A⁻¹` the constant
            // Cholesky solve.
            let (a, b) = jnp::linalg::promote_inexact(a, b);
            let factor = cho_factor(&crate::stop_gradient(&a), lower);
            let (b2, vector) = as_columns(&b);
            let x0 = crate::stop_gradient(&cho_solve(&factor, &crate::stop_gradient(&b2)));
            let residual = a.matmul(&x0) - &b2;
            back_from_columns(&x0 - cho_solve(&factor, &residual), vector)
        }
        other => panic!(
            "scipy.linalg.solve: unsupported assume_a {other:?} (\"gen\", \"sym\", \"her\" or \
             \"pos\") at {}",
            Location::caller()
        ),
    }
}

/// `jax.scipy.linalg.solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False)`: `x`
/// with `op(a) x = b`, `op` the identity (`trans` 0) or the transpose (1, or 2: conjugate
/// transpose, the same for real `a`).
#[track_caller]
pub fn solve_triangular(
    a: &Array,
    b: &Array,
    trans: u8,
    lower: bool,
    unit_diagonal: bool,
) -> Array {
    if trans > 2 {
        panic!(
            "solve_triangular: trans must be 0, 1 or 2, got {trans} at {}",
            Location::caller()
        );
    }
    let (a, b) = jnp::linalg::promote_inexact(a, b);
    let (b, vector) = as_columns(&b);
    let opts = TriangularSolveOptions {
        left_side: true,
        lower,
        transpose_a: trans != 0,
        conjugate_a: trans == 2,
        unit_diagonal,
    };
    back_from_columns(lax_linalg::triangular_solve(&a, &b, opts), vector)
}

/// `jax.scipy.linalg.eigh(a, lower=True)`: `(w, v)`, eigenvalues ascending (for
/// `eigvals_only=True` use [`eigvalsh`]). Only the triangle `lower` names is read, as SciPy.
#[track_caller]
pub fn eigh(a: &Array, lower: bool) -> (Array, Array) {
    jnp::linalg::eigh(&inexact(a), Some(if lower { "L" } else { "U" }), false)
}

/// `jax.scipy.linalg.eigh(a, lower, eigvals_only=True)`: the eigenvalues, ascending.
#[track_caller]
pub fn eigvalsh(a: &Array, lower: bool) -> Array {
    eigh(a, lower).0
}

/// Which eigenvalues [`eigh_tridiagonal`] computes (SciPy's `select`, `select_range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EigSelect {
    /// All of them (`select='a'`).
    #[default]
    All,
    /// Those with ascending indices `lo..=hi` (`select='i'`, `select_range=(lo, hi)`).
    Indices(usize, usize),
}

/// `jax.scipy.linalg.eigh_tridiagonal(d, e, eigvals_only, select, select_range)`: the
/// eigenvalues (ascending) of the real symmetric tridiagonal matrix with diagonal `d [n]` and
/// off-diagonal `e [n-1]`, and, unless `eigvals_only`, its eigenvectors as columns
/// (`[n, k]`, each up to sign, as JAX's inverse iteration leaves it).
///
/// Explicit differences from JAX: jaxrs solves the dense symmetric problem (`eigh`), so the
/// eigenvalues are accurate to rounding and there is no `tol` (JAX bisects to `tol`) and no
/// `key` (JAX seeds its inverse iteration with one); it differentiates too, where JAX's
/// bisection does not. `select='v'` is not offered, as JAX does not implement it either.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg::{eigh_tridiagonal, EigSelect};
///
/// let d = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4]);
/// let e = Array::from_vec(vec![1.0f64, 1.0, 1.0], &[3]);
/// let (w, _) = eigh_tridiagonal(&d, &e, true, EigSelect::Indices(0, 1));
/// let w = w.to_vec::<f64>();
/// assert!((w[0] - 0.2547188).abs() < 1e-6 && (w[1] - 1.8227171).abs() < 1e-6);
/// ```
#[track_caller]
pub fn eigh_tridiagonal(
    d: &Array,
    e: &Array,
    eigvals_only: bool,
    select: EigSelect,
) -> (Array, Option<Array>) {
    let loc = Location::caller();
    assert!(
        d.rank() == 1 && e.rank() == 1 && e.size() + 1 == d.size().max(1),
        "eigh_tridiagonal: d must be [n] and e [n - 1], got {} and {} at {loc}",
        d.aval(),
        e.aval()
    );
    assert!(
        d.dtype() == e.dtype() && matches!(d.dtype(), DType::F32 | DType::F64),
        "eigh_tridiagonal: d and e must have the same dtype, float32 or float64 (as JAX's), \
         got {} and {} at {loc}",
        d.dtype().name(),
        e.dtype().name()
    );
    let n = d.size();
    let (lo, hi) = match select {
        EigSelect::All => (0, n.saturating_sub(1)),
        EigSelect::Indices(lo, hi) => {
            assert!(
                lo <= hi && hi < n,
                "eigh_tridiagonal: select_range ({lo}, {hi}) must be a non-empty range of \
                 indices below {n} at {loc}"
            );
            (lo, hi)
        }
    };
    let off = jnp::diag(e, 1) + jnp::diag(e, -1);
    let t = jnp::diag(d, 0) + off;
    let (w, v) = eigh(&t, true);
    let w = w.slice_axis(0, lo, hi + 1);
    (w, (!eigvals_only).then(|| v.slice_axis(1, lo, hi + 1)))
}

/// `jax.scipy.linalg.expm_frechet(A, E)`: `(expm(A), L(A, E))`, the matrix exponential and its
/// Fréchet derivative in the direction `E`, as JAX computes them: the JVP of
/// [`expm`] (`max_squarings=16`). JAX's `compute_expm=False` is the second element.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg::expm_frechet;
///
/// // Commuting A and E: L(A, E) = E exp(A).
/// let a = Array::eye(2, DType::F64) * 0.5;
/// let e = Array::eye(2, DType::F64);
/// let (exp_a, frechet) = expm_frechet(&a, &e);
/// let want = 0.5f64.exp();
/// assert!((exp_a.to_vec::<f64>()[0] - want).abs() < 1e-12);
/// assert!((frechet.to_vec::<f64>()[0] - want).abs() < 1e-12);
/// ```
#[track_caller]
pub fn expm_frechet(a: &Array, e: &Array) -> (Array, Array) {
    let loc = Location::caller();
    let square = |x: &Array| x.rank() >= 2 && x.shape()[x.rank() - 1] == x.shape()[x.rank() - 2];
    assert!(
        square(a) && a.shape() == e.shape(),
        "expm_frechet: A and E must be (batched) square matrices of one shape, got {} and {} \
         at {loc}",
        a.aval(),
        e.aval()
    );
    let (a, e) = jnp::linalg::promote_inexact(a, e);
    crate::jvp(|x: Array| expm(&x, false, 16), &a, &e)
}

/// `jax.scipy.linalg.svd(a, full_matrices=True)`: `(u, s, vh)`.
#[track_caller]
pub fn svd(a: &Array, full_matrices: bool) -> (Array, Array, Array) {
    jnp::linalg::svd(a, full_matrices)
}

/// `jax.scipy.linalg.svd(a, compute_uv=False)`: the singular values, descending.
#[track_caller]
pub fn svdvals(a: &Array) -> Array {
    jnp::linalg::svdvals(a)
}

/// `jax.scipy.linalg.inv(a)`.
#[track_caller]
pub fn inv(a: &Array) -> Array {
    jnp::linalg::inv(a)
}

/// `jax.scipy.linalg.det(a)`.
#[track_caller]
pub fn det(a: &Array) -> Array {
    jnp::linalg::det(a)
}

/// `jax.scipy.linalg.block_diag(*arrs)`: the matrices (scalars and vectors count as one row)
/// along the diagonal of one matrix, zeros elsewhere.
#[track_caller]
pub fn block_diag(arrs: &[&Array]) -> Array {
    if arrs.is_empty() {
        return Array::zeros(&[1, 0], DType::F32);
    }
    let blocks: Vec<Array> = arrs
        .iter()
        .map(|a| match a.rank() {
            0 => a.reshape(vec![1usize, 1]),
            1 => a.expand_dims(0),
            2 => (*a).clone(),
            r => panic!(
                "block_diag: arguments must have rank <= 2, got rank {r} at {}",
                Location::caller()
            ),
        })
        .collect();
    let dtype = blocks.iter().skip(1).fold(blocks[0].dtype(), |d, b| {
        DType::promote(d, false, b.dtype(), false).0
    });
    let cols: usize = blocks.iter().map(|b| b.shape()[1]).sum();
    let mut rows = Vec::with_capacity(blocks.len());
    let mut before = 0;
    for b in &blocks {
        let c = b.shape()[1];
        let row = b.astype(dtype).pad(
            &[0, before as i64],
            &[0, (cols - before - c) as i64],
            &[],
            0.0,
        );
        rows.push(row);
        before += c;
    }
    Array::concatenate(&rows, 0)
}

/// `jax.scipy.linalg.toeplitz(c, r=None)`: the Toeplitz matrix with first column `c` and first
/// row `r` (`r[0]` ignored): entry `(i, j)` is `c[i - j]` for `i >= j`, else `r[j - i]`.
/// Without `r` it is `conj(c)`, so a real `c` gives a symmetric matrix and a complex one a
/// Hermitian matrix when `c[0]` is real. Leading dimensions of `c` and `r` broadcast
/// together: a batch of matrices `[..., m, n]`.
#[track_caller]
pub fn toeplitz(c: &Array, r: Option<&Array>) -> Array {
    let c = atleast_1d(c);
    let r = r.map_or_else(|| c.conj(), atleast_1d);
    let (c, r) = column_and_row(&c, &r);
    let (m, n) = (c.shape()[c.rank() - 1], r.shape()[r.rank() - 1]);
    // One gather from [c reversed, r[1:]] at index (m - 1) - i + j.
    let v = Array::concatenate(
        &[c.flip(vec![c.rank() - 1]), r.slice_axis(-1, 1.min(n), n)],
        -1,
    );
    let (i, j) = grid(m, n);
    gather_last(&v, &((j - i) + (m as i32 - 1)))
}

/// A first column `[..., m]` and a first or last row `[..., n]`, promoted to one dtype and
/// broadcast over their leading dimensions, as JAX's vectorized constructors take them.
fn column_and_row(c: &Array, r: &Array) -> (Array, Array) {
    let dtype = jaxrs_runtime::result_type(&[(c.dtype(), c.is_weak()), (r.dtype(), r.is_weak())]).0;
    let batch = broadcast_batch(&c.shape()[..c.rank() - 1], &r.shape()[..r.rank() - 1]);
    let full = |x: &Array| {
        let mut shape = batch.clone();
        shape.push(x.shape()[x.rank() - 1]);
        x.astype(dtype).broadcast_to(&shape)
    };
    (full(c), full(r))
}

// ---- Special matrices, as `jax.scipy.linalg` builds them (SciPy's constructors). The ones
// that take arrays map over leading batch dimensions, as JAX's `vectorize`d versions do.

/// Row and column indices `(i, j)` of an `[n, m]` matrix, as int32.
fn grid(n: usize, m: usize) -> (Array, Array) {
    (
        Array::iota(DType::I32, &[n, m], 0),
        Array::iota(DType::I32, &[n, m], 1),
    )
}

/// `x` with at least one axis.
fn atleast_1d(x: &Array) -> Array {
    if x.rank() == 0 {
        x.reshape(vec![1usize])
    } else {
        x.clone()
    }
}

/// The elements of `v`'s last axis at the flat `[n, m]` indices `idx`: shape
/// `v.shape[:-1] + [n, m]`.
fn gather_last(v: &Array, idx: &Array) -> Array {
    let (n, m) = (idx.shape()[0], idx.shape()[1]);
    let mut shape = v.shape()[..v.rank() - 1].to_vec();
    shape.extend([n, m]);
    v.take(&idx.reshape(vec![n * m]), -1).reshape(shape)
}

/// `jax.scipy.linalg.circulant(c)`: the matrix whose first column is `c`, each column the one
/// before rolled down by one (entry `(i, j)` is `c[(i - j) mod n]`).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg;
///
/// let c = linalg::circulant(&Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]));
/// assert_eq!(c.to_vec::<f32>(), vec![1.0, 3.0, 2.0, 2.0, 1.0, 3.0, 3.0, 2.0, 1.0]);
/// ```
#[track_caller]
pub fn circulant(c: &Array) -> Array {
    let c = atleast_1d(c);
    let n = c.shape()[c.rank() - 1];
    let (i, j) = grid(n, n);
    gather_last(&c, &jnp::remainder(&(i - j), n as i32))
}

/// `jax.scipy.linalg.hankel(c, r=None)`: the Hankel matrix with first column `c` and last row
/// `r` (`r[0]` ignored; zeros without `r`): entry `(i, j)` is `[c, r[1:]][i + j]`.
#[track_caller]
pub fn hankel(c: &Array, r: Option<&Array>) -> Array {
    let loc = Location::caller();
    let r = r.cloned().unwrap_or_else(|| Array::zeros_like(c));
    assert!(
        c.rank() > 0 && r.rank() > 0,
        "hankel: c and r must be at least 1-dimensional, got {} and {} at {loc}",
        c.aval(),
        r.aval()
    );
    let (c, r) = column_and_row(c, &r);
    let (m, n) = (c.shape()[c.rank() - 1], r.shape()[r.rank() - 1]);
    let v = Array::concatenate(&[c, r.slice_axis(-1, 1.min(n), n)], -1);
    let (i, j) = grid(m, n);
    gather_last(&v, &(i + j))
}

/// `jax.scipy.linalg.fiedler(a)`: `|a[i] - a[j]|`, the symmetric Fiedler matrix.
#[track_caller]
pub fn fiedler(a: &Array) -> Array {
    let a = atleast_1d(a);
    jnp::abs(&(&a.expand_dims(-1) - &a.expand_dims(-2)))
}

/// The length of `a`'s last axis, checked to be at least `min` for `op`.
#[track_caller]
fn last_len(op: &str, a: &Array, min: usize) -> usize {
    let n = a.shape()[a.rank() - 1];
    assert!(
        n >= min,
        "{op}: the length of the last axis must be at least {min}; got {} at {}",
        a.aval(),
        Location::caller()
    );
    n
}

/// `jax.scipy.linalg.companion(a)`: the companion matrix of the polynomial with coefficients
/// `a` (highest degree first): `-a[1:] / a[0]` in the first row, ones below the diagonal.
#[track_caller]
pub fn companion(a: &Array) -> Array {
    let a = inexact(&atleast_1d(a));
    let m = last_len("companion", &a, 2) - 1;
    let first_row = -(&a.slice_axis(-1, 1, m + 1) / &a.slice_axis(-1, 0, 1));
    let (i, j) = grid(m, m);
    let row = gather_last(&first_row, &j);
    let sub = (j + 1).eq(&i).astype(a.dtype());
    where_(i.eq(0), &row, &sub)
}

/// `jax.scipy.linalg.leslie(f, s)`: the Leslie matrix of fecundities `f` (the first row) and
/// survival rates `s` (below the diagonal).
#[track_caller]
pub fn leslie(f: &Array, s: &Array) -> Array {
    let loc = Location::caller();
    let (f, s) = (atleast_1d(f), atleast_1d(s));
    let n = last_len("leslie", &f, 2);
    assert_eq!(
        s.shape()[s.rank() - 1],
        n - 1,
        "leslie: s must be one shorter than f along the last axis; got f {} and s {} at {loc}",
        f.aval(),
        s.aval()
    );
    let dtype = jaxrs_runtime::result_type(&[(f.dtype(), f.is_weak()), (s.dtype(), s.is_weak())]).0;
    let (i, j) = grid(n, n);
    let row = gather_last(&f.astype(dtype), &j);
    let below = gather_last(&s.astype(dtype), &jnp::minimum(&j, (n - 2) as i32));
    let below = where_((&j + 1).eq(&i), &below, 0.0).astype(dtype);
    where_(i.eq(0), &row, &below)
}

/// `jax.scipy.linalg.fiedler_companion(a)`: the Fiedler companion matrix of the polynomial
/// with coefficients `a` (a pentadiagonal matrix with `a`'s characteristic polynomial).
#[track_caller]
pub fn fiedler_companion(a: &Array) -> Array {
    let a = inexact(&atleast_1d(a));
    let n = last_len("fiedler_companion", &a, 1) - 1;
    let dtype = a.dtype();
    let mut batch = a.shape()[..a.rank() - 1].to_vec();
    if n == 0 {
        batch.extend([0, 0]);
        return Array::zeros(&batch, dtype);
    }
    let a = &a / &a.slice_axis(-1, 0, 1);
    if n == 1 {
        batch.extend([1, 1]);
        return (-a.slice_axis(-1, 1, 2)).reshape(batch);
    }
    let (i, j) = grid(n, n);
    let at = |idx: &Array| -gather_last(&a, idx);
    let super_val = at(&jnp::minimum(&(&i + 2), n as i32));
    let sub_val = at(&jnp::minimum(&(&i + 1), n as i32));
    let a1 = at(&Array::full(&[n, n], 1.0, DType::I32));
    let even = jnp::remainder(&i, 2).eq(0);
    let odd = even.logical_not();
    let (one, zero) = (Array::ones(&[], dtype), Array::zeros(&[], dtype));
    let conditions = [
        i.eq(0).bitwise_and(j.eq(0)),
        i.eq(1).bitwise_and(j.eq(0)),
        j.eq(&(&i + 1)).bitwise_and(&even),
        j.eq(&(&i + 2)).bitwise_and(&even),
        j.eq(&(&i - 1)).bitwise_and(&even).bitwise_and(i.ge(2)),
        j.eq(&(&i - 2)).bitwise_and(&odd).bitwise_and(i.ge(3)),
    ];
    let conditions: Vec<&Array> = conditions.iter().collect();
    jnp::select(
        &conditions,
        &[&a1, &one, &super_val, &one, &sub_val, &one],
        &zero,
    )
}

/// `jax.scipy.linalg.convolution_matrix(a, n, mode)`: the Toeplitz matrix `A` with
/// `A @ v == jnp.convolve(a, v, mode)` for `v` of length `n` (`mode` `"full"`, `"valid"` or
/// `"same"`). `a` is one-dimensional here.
#[track_caller]
pub fn convolution_matrix(a: &Array, n: usize, mode: &str) -> Array {
    let loc = Location::caller();
    assert!(
        n > 0,
        "convolution_matrix: n must be positive; got {n} at {loc}"
    );
    assert_eq!(
        a.rank(),
        1,
        "convolution_matrix: a must be one-dimensional here (a batch is not yet supported); got {} at {loc}",
        a.aval()
    );
    let m = a.size();
    assert!(m >= 1, "convolution_matrix: a must not be empty at {loc}");
    let (tb, te) = match mode {
        "full" => (0, 0),
        "valid" => (n.min(m) - 1, n.min(m) - 1),
        "same" => {
            let trim = n.min(m) - 1;
            (trim / 2, trim - trim / 2)
        }
        other => panic!(
            "convolution_matrix: mode must be one of 'full', 'valid', 'same'; got {other:?} at {loc}"
        ),
    };
    let az = a.pad(&[0], &[(n - 1) as i64], &[], 0.0);
    let raz = a.flip(vec![0usize]).pad(&[0], &[(n - 1) as i64], &[], 0.0);
    let len = m + n - 1;
    let col0 = az.slice_axis(0, tb, len - te);
    let row0 = raz.slice_axis(0, len - n - tb, len - tb);
    toeplitz(&col0, Some(&row0))
}

/// `jax.scipy.linalg.hilbert(n)`: `1 / (i + j + 1)`, in float64 (JAX's default float).
pub fn hilbert(n: usize) -> Array {
    let a = Array::iota(DType::F64, &[n, 1], 0);
    jnp::reciprocal(&(&a + &a.transpose(vec![1usize, 0]) + 1.0))
}

/// `jax.scipy.linalg.invhilbert(n)`: the inverse of [`hilbert`]`(n)` by its closed form, in
/// float64.
pub fn invhilbert(n: usize) -> Array {
    use crate::scipy::special::comb;
    let a = Array::arange(0.0, n as f64, 1.0, DType::F64);
    let (i, j) = (a.expand_dims(1), a.expand_dims(0));
    let s = &i + &j;
    let nf = n as f64;
    let sign = jnp::pow(-1.0, &s);
    let c1 = comb(&(&i + nf), &(-(&j - nf) - 1.0), false);
    let c2 = comb(&(&j + nf), &(-(&i - nf) - 1.0), false);
    let c3 = comb(&s, &i, false);
    &(&(&(&sign * &(&s + 1.0)) * &c1) * &c2) * &(&c3 * &c3)
}

/// The binomial coefficient through `lgamma`, as JAX's pascal matrices compute it.
fn binom(n: &Array, k: &Array) -> Array {
    let lg = |x: Array| crate::lax::lgamma(&x);
    (&(&lg(n + 1.0) - &lg(&(n - k) + 1.0)) - &lg(k + 1.0)).exp()
}

/// The triangle of `kind` (`None` is `"symmetric"`), checked for `op`.
#[track_caller]
fn pascal_kind<'a>(op: &str, kind: Option<&'a str>) -> &'a str {
    let kind = kind.unwrap_or("symmetric");
    assert!(
        matches!(kind, "symmetric" | "lower" | "upper"),
        "{op}: kind must be one of 'symmetric', 'lower', 'upper'; got {kind:?} at {}",
        Location::caller()
    );
    kind
}

/// `jax.scipy.linalg.pascal(n, kind)`: the Pascal matrix (`"symmetric"`, `"lower"` or
/// `"upper"`), in float32 as JAX builds it.
#[track_caller]
pub fn pascal(n: usize, kind: Option<&str>) -> Array {
    let kind = pascal_kind("pascal", kind);
    let a = Array::arange(0.0, n as f64, 1.0, DType::F32);
    let lower = binom(&a.expand_dims(1), &a.expand_dims(0));
    match kind {
        "lower" => lower,
        "upper" => lower.transpose(vec![1usize, 0]),
        _ => lower.matmul(&lower.transpose(vec![1usize, 0])),
    }
}

/// `jax.scipy.linalg.invpascal(n, kind)`: the inverse of [`pascal`]`(n, kind)`, in float64.
#[track_caller]
pub fn invpascal(n: usize, kind: Option<&str>) -> Array {
    let kind = pascal_kind("invpascal", kind);
    let a = Array::arange(0.0, n as f64, 1.0, DType::F64);
    let (i, j) = (a.expand_dims(1), a.expand_dims(0));
    let lower = &jnp::pow(-1.0, &(&i - &j)) * &binom(&i, &j);
    match kind {
        "lower" => lower,
        "upper" => lower.transpose(vec![1usize, 0]),
        _ => lower.transpose(vec![1usize, 0]).matmul(&lower),
    }
}

/// `jax.scipy.linalg.helmert(n, full)`: the Helmert matrix, `n - 1` orthonormal rows
/// orthogonal to the ones vector (with it first, normalised, when `full`), in float64.
#[track_caller]
pub fn helmert(n: usize, full: bool) -> Array {
    assert!(
        n >= 1,
        "helmert: n must be positive; got {n} at {}",
        Location::caller()
    );
    let (i, j) = grid(n - 1, n);
    let k = (&i + 1).astype(DType::F64);
    let denom = (&k * &(&k + 1.0)).sqrt();
    let below = where_((&i + 1).eq(&j), &(-(&k / &denom)), 0.0);
    let h = where_(j.le(&i), jnp::reciprocal(&denom), &below);
    if !full {
        return h;
    }
    let first = Array::full(&[1, n], 1.0 / (n as f64).sqrt(), DType::F64);
    Array::concatenate(&[first, h], 0)
}

/// `jax.scipy.linalg.hadamard(n, dtype)`: the Sylvester Hadamard matrix of order `n` (a
/// power of two) of ±1; `dtype` `None` is int64 (JAX's default int).
#[track_caller]
pub fn hadamard(n: usize, dtype: Option<DType>) -> Array {
    assert!(
        n >= 1 && n.is_power_of_two(),
        "hadamard: n must be a positive power of 2; got {n} at {}",
        Location::caller()
    );
    let mut h = Array::ones(&[1, 1], dtype.unwrap_or(DType::I64));
    while h.shape()[0] < n {
        let neg = -&h;
        h = jnp::block(&[vec![&h, &h], vec![&h, &neg]]);
    }
    h
}

/// `jax.scipy.linalg.dft(n, scale, dtype)`: the discrete Fourier transform matrix
/// `exp(-2πi jk / n)`, scaled by `1/√n` (`"sqrtn"`) or `1/n` (`"n"`); `dtype` `None` is
/// complex128.
#[track_caller]
pub fn dft(n: usize, scale: Option<&str>, dtype: Option<DType>) -> Array {
    let loc = Location::caller();
    let dtype = dtype.unwrap_or(DType::C128);
    assert!(
        dtype.is_complex(),
        "dft: dtype must be a complex floating-point type; got {} at {loc}",
        dtype.name()
    );
    let a = Array::arange(0.0, n as f64, 1.0, dtype);
    let minus_two_pi_i =
        Array::scalar(crate::C128::new(-0.0, -2.0 * std::f64::consts::PI)).astype(dtype);
    let omegas = (&(&a.expand_dims(1) * &minus_two_pi_i) * &a.expand_dims(0)) / n as f64;
    let omegas = omegas.exp();
    match scale {
        None => omegas,
        Some("sqrtn") => omegas / (n as f64).sqrt(),
        Some("n") => omegas / n as f64,
        Some(other) => panic!("dft: scale must be None, 'sqrtn' or 'n'; got {other:?} at {loc}"),
    }
}

/// `jax.scipy.linalg.polar(a, side, method="svd")`: `a = u p` (`side` `"right"`) or `a = p u`
/// (`"left"`), `u` unitary and `p` positive semidefinite, from the SVD. JAX's default
/// method, QDWH, converges to the same factors; they agree to rounding.
#[track_caller]
pub fn polar(a: &Array, side: &str) -> (Array, Array) {
    let loc = Location::caller();
    let a = inexact(a);
    let (u, s, vh) = jnp::linalg::svd(&a, false);
    let unitary = u.matmul(&vh);
    let scaled = |x: &Array| x * &s.expand_dims(-2);
    let posdef = match side {
        "right" => scaled(&mt(&vh).conj()).matmul(&vh),
        "left" => scaled(&u).matmul(&mt(&u).conj()),
        other => panic!("polar: side must be 'right' or 'left'; got {other:?} at {loc}"),
    };
    (unitary, posdef)
}

/// `jax.scipy.linalg.expm(a, upper_triangular, max_squarings)`: the matrix exponential, by
/// JAX's scaling and squaring with a Padé approximant (degree 3 to 13 in float64 and
/// complex128, 3 to 7 in float32 and complex64, picked by `a`'s 1-norm), batched over leading
/// dims and differentiable. NaN where more than `max_squarings` (JAX's default: 16) squarings
/// would be needed. `upper_triangular` solves the Padé system with a triangular solve.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg;
///
/// // exp of a rotation generator is a rotation.
/// let t = 0.5f64;
/// let a = Array::from_vec(vec![0.0, -t, t, 0.0], &[2, 2]);
/// let r = linalg::expm(&a, false, 16).to_vec::<f64>();
/// assert!((r[0] - t.cos()).abs() < 1e-14 && (r[2] - t.sin()).abs() < 1e-14);
/// ```
#[track_caller]
pub fn expm(a: &Array, upper_triangular: bool, max_squarings: usize) -> Array {
    let a = inexact(a);
    let rank = a.rank();
    assert!(
        rank >= 2 && a.shape()[rank - 1] == a.shape()[rank - 2],
        "expm: expected a (batched) square matrix, got {} at {}",
        a.aval(),
        Location::caller()
    );
    if rank > 2 {
        let n = a.shape()[rank - 1];
        let flat = a.reshape(vec![a.size() / (n * n), n, n]);
        let out = crate::vmap(
            move |m: Array| expm(&m, upper_triangular, max_squarings),
            0,
            0,
        )(flat);
        return out.reshape(a.shape().to_vec());
    }
    let (p, q, n_squarings) = pade_p_q(&a);
    let compute = |(p, q): (Array, Array)| {
        let r = if upper_triangular {
            solve_triangular(&q, &p, 0, false, false)
        } else {
            jnp::linalg::solve(&q, &p)
        };
        let steps = Array::arange(0.0, max_squarings as f64, 1.0, n_squarings.dtype());
        crate::scan(
            |r: Array, i: Array| {
                let squared = crate::cond(&i.lt(&n_squarings), |r: Array| r.matmul(&r), |r| r, r);
                (squared, ())
            },
            r,
            steps,
        )
        .0
    };
    let nan = |(p, _): (Array, Array)| Array::full(p.shape(), f64::NAN, p.dtype());
    crate::cond(&n_squarings.gt(max_squarings as f64), nan, compute, (p, q))
}

/// The Padé numerator and denominator of `exp(a / 2^s)` and the number of squarings `s`, as
/// JAX's `_calc_P_Q`.
#[track_caller]
fn pade_p_q(a: &Array) -> (Array, Array, Array) {
    let a_l1 = jnp::linalg::norm(a, Some(jnp::linalg::NormOrd::P(1.0)), None, false);
    let wide = matches!(a.dtype(), DType::F64 | DType::C128);
    let narrow = matches!(a.dtype(), DType::F32 | DType::C64);
    assert!(
        wide || narrow,
        "expm: a.dtype={} is not supported (float32, float64, complex64 or complex128) at {}",
        a.dtype().name(),
        Location::caller()
    );
    let (maxnorm, conds): (f64, &[f64]) = if wide {
        (
            5.371920351148152,
            &[
                0.01495585217958292,
                0.253939833006323,
                0.9504178996162932,
                2.097847961257068,
            ],
        )
    } else {
        (3.92572478313866, &[0.4258730016922831, 1.880152677804762])
    };
    let n_squarings = jnp::maximum(0, jnp::floor(&jnp::log2(&(&a_l1 / maxnorm))));
    let a = a / &jnp::pow(2, n_squarings.astype(a.dtype()));
    let bins = Array::from_vec(conds.to_vec(), &[conds.len()]).astype(a_l1.dtype());
    let idx = jnp::digitize(&a_l1, &bins, false);
    let degrees: &[&dyn Fn(Array) -> (Array, Array)] = if wide {
        &[&pade3, &pade5, &pade7, &pade9, &pade13]
    } else {
        &[&pade3, &pade5, &pade7]
    };
    let (u, v) = crate::switch(&idx, degrees, a);
    (&u + &v, &v - &u, n_squarings)
}

/// The odd part `U` and the even part `V` of the degree-`b.len() - 1` Padé approximant (3, 5,
/// 7 or 9), as JAX's `_pade3` ... `_pade9`.
fn pade_u_v(a: &Array, b: &[f64]) -> (Array, Array) {
    let n = a.shape()[0];
    let eye = jnp::eye(n, None, 0, Some(a.dtype()));
    let a2 = a.matmul(a);
    let mut powers = vec![a2.clone()];
    for _ in 1..(b.len() / 2 - 1) {
        let next = powers.last().expect("a2").matmul(&a2);
        powers.push(next);
    }
    // b[1] I + b[3] A2 + b[5] A4 ..., highest power first as JAX adds them.
    let odd: Vec<(f64, &Array)> = powers
        .iter()
        .enumerate()
        .map(|(k, p)| (b[2 * k + 3], p))
        .rev()
        .collect();
    let even: Vec<(f64, &Array)> = powers
        .iter()
        .enumerate()
        .map(|(k, p)| (b[2 * k + 2], p))
        .rev()
        .collect();
    let u = a.matmul(&plus_identity(&odd, b[1], &eye));
    let v = plus_identity(&even, b[0], &eye);
    (u, v)
}

/// `c_1 P_1 + c_2 P_2 + ...`, summed left to right as JAX's expressions are.
fn lin_comb(terms: &[(f64, &Array)]) -> Array {
    let (c, p) = terms[0];
    terms[1..]
        .iter()
        .fold(p * c, |acc, (c, p)| &acc + &(*p * *c))
}

/// `c_1 P_1 + c_2 P_2 + ... + c0 I`.
fn plus_identity(terms: &[(f64, &Array)], c0: f64, eye: &Array) -> Array {
    &lin_comb(terms) + &(eye * c0)
}

fn pade3(a: Array) -> (Array, Array) {
    pade_u_v(&a, &[120.0, 60.0, 12.0, 1.0])
}

fn pade5(a: Array) -> (Array, Array) {
    pade_u_v(&a, &[30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0])
}

fn pade7(a: Array) -> (Array, Array) {
    pade_u_v(
        &a,
        &[
            17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0,
        ],
    )
}

fn pade9(a: Array) -> (Array, Array) {
    pade_u_v(
        &a,
        &[
            17643225600.0,
            8821612800.0,
            2075673600.0,
            302702400.0,
            30270240.0,
            2162160.0,
            110880.0,
            3960.0,
            90.0,
            1.0,
        ],
    )
}

/// Degree 13, which JAX evaluates with `A6` factored out of the high powers.
fn pade13(a: Array) -> (Array, Array) {
    let b = [
        6.476475253248e16,
        3.238237626624e16,
        7771770303897600.0,
        1187353796428800.0,
        129060195264000.0,
        10559470521600.0,
        670442572800.0,
        33522128640.0,
        1323241920.0,
        40840800.0,
        960960.0,
        16380.0,
        182.0,
        1.0,
    ];
    let eye = jnp::eye(a.shape()[0], None, 0, Some(a.dtype()));
    let a2 = a.matmul(&a);
    let a4 = a2.matmul(&a2);
    let a6 = a4.matmul(&a2);
    let high_u = a6.matmul(&lin_comb(&[(b[13], &a6), (b[11], &a4), (b[9], &a2)]));
    let low_u = plus_identity(&[(b[7], &a6), (b[5], &a4), (b[3], &a2)], b[1], &eye);
    let u = a.matmul(&(&high_u + &low_u));
    let high_v = a6.matmul(&lin_comb(&[(b[12], &a6), (b[10], &a4), (b[8], &a2)]));
    let v = &high_v + &plus_identity(&[(b[6], &a6), (b[4], &a4), (b[2], &a2)], b[0], &eye);
    (u, v)
}

// ------------------------------------------------------------------ Schur-based functions

/// Checks that `a` is a batch of square matrices; returns their size.
#[track_caller]
fn square_size(op: &str, what: &str, a: &Array, loc: &Location<'_>) -> usize {
    let rank = a.rank();
    assert!(
        rank >= 2 && a.shape()[rank - 1] == a.shape()[rank - 2],
        "{op}: {what} must be a (batch of) square matrices, got {} at {loc}",
        a.aval()
    );
    a.shape()[rank - 1]
}

/// `x` broadcast to the batch dims `batch` followed by its own matrix dims.
fn to_batch(x: &Array, batch: &[usize]) -> Array {
    let mut shape = batch.to_vec();
    shape.extend_from_slice(&x.shape()[x.rank() - 2..]);
    x.broadcast_to(&shape)
}

/// `x[..., i:i+1, j:j+1]`: one entry of each matrix, kept as a 1x1 matrix so it broadcasts
/// against the batch.
fn entry(x: &Array, i: usize, j: usize) -> Array {
    x.slice_axis(-2, i, i + 1).slice_axis(-1, j, j + 1)
}

/// The machine epsilon of a complex (or real) dtype's parts, as JAX's `finfo(dtype).eps`.
fn eps_of(dtype: DType) -> f64 {
    match dtype.real_dtype() {
        DType::F32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    }
}

/// `jax.scipy.linalg.schur(a, output)`: `(t, z)` with `a = z t zᴴ`. `output` `"real"` keeps a
/// real matrix real (`t` quasi-triangular, a standardised 2x2 block `[[p, q], [r, p]]` per
/// complex-conjugate pair); `"complex"` computes in complex (`t` triangular). Batched over
/// leading dims. Not differentiable, as JAX's is not.
///
/// The Schur form is not unique, and this one may differ from JAX's (LAPACK's `gees`): the
/// order of the eigenvalues along `t`'s diagonal and the signs (phases) of `z`'s columns are
/// the kernel's QR iteration's. `z t zᴴ`, `z`'s unitarity, `t`'s shape and its eigenvalues
/// agree. Unlike JAX, which treats any other `output` as `"real"`, another string panics.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg;
///
/// // A rotation: its eigenvalues ±i make one 2x2 block in the real form.
/// let a = Array::from_vec(vec![0.0f64, -1.0, 1.0, 0.0], &[2, 2]);
/// let (t, _) = linalg::schur(&a, "complex");
/// let t = t.to_vec::<jaxrs::C128>();
/// assert!(t[2].norm() == 0.0 && (t[0].im.abs() - 1.0).abs() < 1e-12);
/// ```
#[track_caller]
pub fn schur(a: &Array, output: &str) -> (Array, Array) {
    let loc = Location::caller();
    let a = inexact(a);
    square_size("schur", "a", &a, loc);
    let a = match output {
        "real" => a,
        "complex" => a.astype(a.dtype().to_complex()),
        other => panic!("schur: output must be 'real' or 'complex'; got {other:?} at {loc}"),
    };
    lax_linalg::schur(&a)
}

/// `jax.scipy.linalg.hessenberg(a, calc_q)`: the upper Hessenberg form `h` of `a` (zero
/// below the first subdiagonal) and, with `calc_q`, the unitary `q` with `a = q h qᴴ`,
/// batched over leading dims. Computed as LAPACK's `gehrd` (Householder reflectors with
/// `β = -sign(Re α) ‖x‖`, `q`'s first column `e₀`), so `h` and `q` are JAX's. Not
/// differentiable, as JAX's is not.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg;
///
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0], &[3, 3]);
/// let (h, q) = linalg::hessenberg(&a, true);
/// assert_eq!(h.to_vec::<f64>()[6], 0.0);
/// let q = q.expect("calc_q");
/// let back = q.matmul(&h).matmul(&q.t()).to_vec::<f64>();
/// assert!(back.iter().zip(a.to_vec::<f64>()).all(|(x, y)| (x - y).abs() < 1e-12));
/// ```
#[track_caller]
pub fn hessenberg(a: &Array, calc_q: bool) -> (Array, Option<Array>) {
    let loc = Location::caller();
    let a = inexact(a);
    if square_size("hessenberg", "a", &a, loc) == 0 {
        let zeros = Array::zeros_like(&a);
        return (zeros.clone(), calc_q.then_some(zeros));
    }
    let (h, q) = d::hessenberg(&a);
    (h, calc_q.then_some(q))
}

/// `jax.scipy.linalg.rsf2csf(t, z)`: the complex Schur form `(t, z)` from a real one, as
/// JAX's: from the bottom up, each 2x2 block whose subdiagonal entry is not negligible
/// (`|t[m, m-1]| > eps (|t[m-1, m-1]| + |t[m, m]|)`) is triangularised by a Givens rotation
/// built from its eigenvalue `μ` shifted by `t[m, m]`, applied to `t`'s rows and columns and
/// to `z`'s columns; then `t[m, m-1]` is set to 0. `t` and `z` broadcast over their batch
/// dims; both become complex. Differentiable, as JAX's.
///
/// JAX takes the first eigenvalue LAPACK's `eigvals` returns for each block; here it is the
/// one with the larger imaginary part (on a tie, the larger real part). For a block of a
/// real Schur form (`schur`'s or JAX's, standardised: equal diagonal entries) the two are
/// the same, so the result is JAX's; for other blocks the choice may differ, and so may the
/// (equally valid) form.
#[track_caller]
pub fn rsf2csf(t: &Array, z: &Array) -> (Array, Array) {
    let loc = Location::caller();
    let n = square_size("rsf2csf", "T", t, loc);
    let nz = square_size("rsf2csf", "Z", z, loc);
    assert!(
        n == nz,
        "rsf2csf: T and Z must be the same size, got {} and {} at {loc}",
        t.aval(),
        z.aval()
    );
    let (t, z) = crate::numpy::linalg::promote_inexact(t, z);
    let complex = t.dtype().to_complex();
    let batch = broadcast_batch(&t.shape()[..t.rank() - 2], &z.shape()[..z.rank() - 2]);
    let mut t = to_batch(&t.astype(complex), &batch);
    let mut z = to_batch(&z.astype(complex), &batch);
    if n <= 1 {
        return (t, z);
    }
    let eps = eps_of(complex);
    let rows = Array::iota(DType::I32, &[n, 1], 0);
    let cols = Array::iota(DType::I32, &[1, n], 1);
    for m in (1..n).rev() {
        let (a, b, c, d) = (
            entry(&t, m - 1, m - 1),
            entry(&t, m - 1, m),
            entry(&t, m, m - 1),
            entry(&t, m, m),
        );
        let rotate = c.abs().gt(&((&a.abs() + &d.abs()) * eps));
        // Where the block is not rotated, a stand-in `[[0, 1], [-1, 0]]` keeps μ, r and their
        // derivatives finite (JAX skips the branch under `cond`; `where` differentiates both).
        let (a, b, c, d) = (
            where_(&rotate, &a, 0.0),
            where_(&rotate, &b, 1.0),
            where_(&rotate, &c, -1.0),
            where_(&rotate, &d, 0.0),
        );
        // μ: an eigenvalue of the block minus t[m, m].
        let half_gap = (&a - &d) * 0.5;
        let disc = (&(&half_gap * &half_gap) + &(&b * &c)).sqrt();
        let mu = where_(
            disc.imag().lt(0.0),
            &(&half_gap - &disc),
            &(&half_gap + &disc),
        );
        let (mu_abs, c_abs) = (mu.abs(), c.abs());
        let r = (&(&mu_abs * &mu_abs) + &(&c_abs * &c_abs))
            .sqrt()
            .astype(complex);
        let (cs, sn) = (&mu / &r, &c / &r);
        // Rows m-1 and m, from column m-1 on: G = [[c̄, s], [-s, c]] times them.
        let (row0, row1) = (t.slice_axis(-2, m - 1, m), t.slice_axis(-2, m, m + 1));
        let from = cols.ge((m - 1) as i32);
        let new0 = where_(&from, &(&(&cs.conj() * &row0) + &(&sn * &row1)), &row0);
        let new1 = where_(&from, &(&(&cs * &row1) - &(&sn * &row0)), &row1);
        let rotated = where_(
            rows.eq((m - 1) as i32),
            &new0,
            where_(rows.eq(m as i32), &new1, &t),
        );
        // Columns m-1 and m times Gᴴ: of `t` down to row m, of `z` all of them.
        let times_gh = |x: &Array, upto: Option<usize>| {
            let (col0, col1) = (x.slice_axis(-1, m - 1, m), x.slice_axis(-1, m, m + 1));
            let mut new0 = &(&col0 * &cs) + &(&col1 * &sn.conj());
            let mut new1 = &(&col1 * &cs.conj()) - &(&col0 * &sn.conj());
            if let Some(last) = upto {
                let within = rows.le(last as i32);
                new0 = where_(&within, &new0, &col0);
                new1 = where_(&within, &new1, &col1);
            }
            where_(
                cols.eq((m - 1) as i32),
                &new0,
                where_(cols.eq(m as i32), &new1, x),
            )
        };
        let t_new = times_gh(&rotated, Some(m));
        let z_new = times_gh(&z, None);
        t = where_(&rotate, &t_new, &t);
        z = where_(&rotate, &z_new, &z);
        let corner = rows.eq(m as i32).logical_and(cols.eq((m - 1) as i32));
        t = where_(&corner, 0.0, &t);
    }
    (t, z)
}

/// `jax.scipy.linalg.sqrtm(a, blocksize)`: the principal square root of `a`, by JAX's
/// method: the complex Schur form `a = z t zᴴ`, the square root `u` of the triangular `t`
/// by Björck and Hammarling's recurrence (column by column, `u_ij = (t_ij - Σ u_ik u_kj) /
/// (u_ii + u_jj)`, 0 where the numerator's two terms are equal), then `z u zᴴ`. Complex
/// whatever `a`'s dtype, as JAX's; batched over leading dims (JAX's takes one matrix, and
/// batches only under `vmap`). Not differentiable (the Schur
/// decomposition has no derivative in JAX). `blocksize` other than 1 panics, as JAX raises
/// `NotImplementedError`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg;
///
/// let a = Array::from_vec(vec![4.0f64, 1.0, 0.0, 9.0], &[2, 2]);
/// let r = linalg::sqrtm(&a, 1);
/// let back = r.matmul(&r).to_vec::<jaxrs::C128>();
/// assert!(back.iter().zip([4.0, 1.0, 0.0, 9.0]).all(|(x, y)| (x.re - y).abs() < 1e-12));
/// ```
#[track_caller]
pub fn sqrtm(a: &Array, blocksize: usize) -> Array {
    let loc = Location::caller();
    assert!(
        blocksize <= 1,
        "sqrtm: the blocked version (blocksize {blocksize}) is not implemented, as in JAX, at {loc}"
    );
    let (t, z) = schur(a, "complex");
    let u = d::triangular_recurrence(d::TriangularRecurrence::SqrtmTriu, &[&t]).remove(0);
    z.matmul(&u).matmul(&mh(&z))
}

/// How [`solve_sylvester`] solves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SylvesterMethod {
    /// Bartels-Stewart: the complex Schur forms of `a` and `bᴴ`, then a triangular back
    /// substitution (JAX's default, `"schur"`).
    #[default]
    Schur,
    /// The eigendecompositions of `a` and `b` (`"eigen"`): faster, less accurate for
    /// ill-conditioned eigenvectors, and wrong for matrices that are not diagonalisable.
    Eigen,
}

/// `jax.scipy.linalg.solve_sylvester(a, b, c, method, tol)`: `x` with `a x + x b = c`, for
/// `a [.., m, m]`, `b [.., n, n]` and `c [.., m, n]` broadcast over their batch dims. All NaN
/// where some `|λ_i(a) + μ_j(b)| < tol` (the equation is singular or near it), as JAX's.
/// Real for real `c`, else complex (the real part is taken, as JAX takes it). Not
/// differentiable (neither the Schur decomposition nor the eigenvectors have a derivative
/// in JAX).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg::{self, SylvesterMethod};
///
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
/// let b = Array::from_vec(vec![5.0f64, 6.0, 7.0, 8.0], &[2, 2]);
/// let c = Array::from_vec(vec![6.0f64, 8.0, 10.0, 12.0], &[2, 2]);
/// let x = linalg::solve_sylvester(&a, &b, &c, SylvesterMethod::Schur, 1e-8).to_vec::<f64>();
/// assert!(x.iter().zip([1.0, 0.0, 0.0, 1.0]).all(|(x, y)| (x - y).abs() < 1e-12));
/// ```
#[track_caller]
pub fn solve_sylvester(
    a: &Array,
    b: &Array,
    c: &Array,
    method: SylvesterMethod,
    tol: f64,
) -> Array {
    let loc = Location::caller();
    let (a, c) = crate::numpy::linalg::promote_inexact(a, c);
    let (b, c) = crate::numpy::linalg::promote_inexact(b, &c);
    let a = a.astype(c.dtype());
    let m = square_size("solve_sylvester", "A", &a, loc);
    let n = square_size("solve_sylvester", "B", &b, loc);
    let rank = c.rank();
    assert!(
        rank >= 2 && c.shape()[rank - 2..] == [m, n],
        "solve_sylvester: incompatible shapes for the Sylvester equation: A {}, B {}, C {} at {loc}",
        a.aval(),
        b.aval(),
        c.aval()
    );
    let batch = broadcast_batch(
        &broadcast_batch(&a.shape()[..a.rank() - 2], &b.shape()[..b.rank() - 2]),
        &c.shape()[..rank - 2],
    );
    let (a, b, c) = (
        to_batch(&a, &batch),
        to_batch(&b, &batch),
        to_batch(&c, &batch),
    );
    let x = match method {
        SylvesterMethod::Schur => {
            let (r, u) = schur(&a, "complex");
            let (s, v) = schur(&mh(&b), "complex");
            let f = mh(&u).matmul(&c.astype(r.dtype())).matmul(&v);
            let y = d::triangular_recurrence(
                d::TriangularRecurrence::SylvesterTriu,
                &[&r, &mh(&s), &f],
            )
            .remove(0);
            u.matmul(&y).matmul(&mh(&v))
        }
        SylvesterMethod::Eigen => {
            let (ra, ua) = jnp::linalg::eig(&a);
            let (rb, ub) = jnp::linalg::eig(&b);
            let f = jnp::linalg::solve(&ua, &c.astype(ra.dtype()).matmul(&ub));
            let w = &ra.expand_dims(-1) + &rb.expand_dims(-2);
            ua.matmul(&(&f / &w)).matmul(&jnp::linalg::inv(&ub))
        }
    };
    let x = if c.dtype().is_complex() { x } else { x.real() };
    let sums =
        &jnp::linalg::eigvals(&a).expand_dims(-1) + &jnp::linalg::eigvals(&b).expand_dims(-2);
    let singular = jnp::any(&sums.abs().lt(tol), vec![-2i64, -1], true);
    // JAX's `zeros_like(x) * nan`: NaN in both parts of a complex x.
    where_(&singular, &(Array::zeros_like(&x) * f64::NAN), &x)
}

/// `jax.scipy.linalg.funm(a, func, disp)`: the matrix function `f(a)` for the scalar function
/// `func` (applied elementwise to an array of eigenvalues), as JAX computes it: the real
/// Schur form, made complex by [`rsf2csf`], `func` on its diagonal, Parlett's recurrence
/// (Golub and Van Loan's algorithm 11.1.1) above it, and back with `z f zᴴ`. Complex
/// whatever `a`'s dtype, as JAX's. With `disp` false the second result is JAX's error
/// estimate, `min(1, max(eps, eps / minden ‖triu(t, 1)‖₁))` (`minden` the smallest
/// `|t_jj - t_ii|` met; `inf` where the result has an infinity). Parlett's recurrence
/// divides by differences of eigenvalues, so repeated or close eigenvalues give inaccurate
/// results, as in JAX. Batched over leading dims (JAX takes a single matrix); not
/// differentiable (the Schur decomposition has no derivative in JAX).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::linalg;
///
/// let a = Array::from_vec(vec![1.0f64, 2.0, 0.0, 3.0], &[2, 2]);
/// let (e, _) = linalg::funm(&a, |x: &Array| x.exp(), true);
/// let want = linalg::expm(&a, false, 16).to_vec::<f64>();
/// let got = e.to_vec::<jaxrs::C128>();
/// assert!(got.iter().zip(want).all(|(x, y)| (x.re - y).abs() < 1e-12 && x.im.abs() < 1e-12));
/// ```
#[track_caller]
pub fn funm(a: &Array, func: impl Fn(&Array) -> Array, disp: bool) -> (Array, Option<Array>) {
    let loc = Location::caller();
    let a = inexact(a);
    let n = square_size("funm", "A", &a, loc);
    let (t, z) = schur(&a, "real");
    let (t, z) = rsf2csf(&t, &z);
    let eye = d::eye(n, t.dtype());
    let f_diag = func(&jnp::linalg::diagonal(&t, 0)).astype(t.dtype());
    let f = &eye * &f_diag.expand_dims(-2);
    let mut outs = d::triangular_recurrence(d::TriangularRecurrence::Parlett, &[&f, &t]);
    let minden = outs.pop().expect("two results");
    let f = z.matmul(&outs.pop().expect("two results")).matmul(&mh(&z));
    if disp {
        return (f, None);
    }
    let tol = eps_of(f.dtype());
    let minden = where_(minden.eq(0.0), tol, &minden);
    let upper = jnp::linalg::norm(
        &jnp::triu(&t, 1),
        Some(jnp::linalg::NormOrd::P(1.0)),
        vec![-2i64, -1],
        false,
    );
    let estimate = (&(tol / &minden) * &upper).maximum(tol).minimum(1.0);
    let has_inf = jnp::any(&jnp::isinf(&f), vec![-2i64, -1], false);
    (f, Some(where_(&has_inf, f64::INFINITY, &estimate)))
}
