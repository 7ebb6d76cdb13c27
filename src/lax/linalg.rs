//! `jax.lax.linalg`: the decompositions as JAX's `lax.linalg` gives them, over a batch of
//! matrices (the last two dims), each differentiable (JAX's JVP and VJP rules) and mappable
//! with `vmap`. On CPU they run as host kernels (faer), where jaxlib calls LAPACK.
//!
//! ```
//! use jaxrs::lax;
//! use jaxrs::prelude::*;
//!
//! let a = Array::from_vec(vec![4.0f64, 2.0, 2.0, 3.0], &[2, 2]);
//! let l = lax::linalg::cholesky(&a, true).to_vec::<f64>();
//! let want = [2.0, 0.0, 1.0, 2f64.sqrt()];
//! assert!(l.iter().zip(want).all(|(got, want)| (got - want).abs() < 1e-12));
//! ```

use crate::Array;
use jaxrs_runtime::decompositions as d;

/// `lax.linalg.cholesky(x, symmetrize_input=True)`: the lower Cholesky factor, NaN where a
/// matrix is not positive definite. With `symmetrize_input` the factor is of `(x + xᵀ) / 2`
/// (and the gradient symmetric), else of `x`'s lower triangle.
#[track_caller]
pub fn cholesky(x: &Array, symmetrize_input: bool) -> Array {
    if symmetrize_input {
        d::cholesky(&symmetrize(x))
    } else {
        d::cholesky(x)
    }
}

/// `(x + xᵀ) / 2`, as JAX's `symmetrize`.
#[track_caller]
pub fn symmetrize(x: &Array) -> Array {
    d::hermitian_part(x)
}

/// The options of [`triangular_solve`], JAX's keyword arguments (all `false` by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TriangularSolveOptions {
    /// Solve `op(a) x = b` (else `x op(a) = b`).
    pub left_side: bool,
    /// Read `a`'s lower triangle (else its upper one).
    pub lower: bool,
    /// `op(a) = aᵀ` (else `a`).
    pub transpose_a: bool,
    /// `op(a)` conjugated too: the same as `transpose_a` alone for real `a`.
    pub conjugate_a: bool,
    /// Take `a`'s diagonal as ones without reading it.
    pub unit_diagonal: bool,
}

/// `lax.linalg.triangular_solve(a, b, left_side=, lower=, transpose_a=, conjugate_a=,
/// unit_diagonal=)`. `a` and `b` broadcast over their batch dims.
///
/// ```
/// use jaxrs::lax::{self, linalg::TriangularSolveOptions};
/// use jaxrs::prelude::*;
///
/// let l = Array::from_vec(vec![2.0f32, 0.0, 1.0, 1.0], &[2, 2]);
/// let b = Array::from_vec(vec![2.0f32, 3.0], &[2, 1]);
/// let opts = TriangularSolveOptions { left_side: true, lower: true, ..Default::default() };
/// assert_eq!(lax::linalg::triangular_solve(&l, &b, opts).to_vec::<f32>(), vec![1.0, 2.0]);
/// ```
#[track_caller]
pub fn triangular_solve(a: &Array, b: &Array, options: TriangularSolveOptions) -> Array {
    let conjugated;
    let a = if options.conjugate_a && a.dtype().is_complex() {
        conjugated = a.conj();
        &conjugated
    } else {
        a
    };
    d::triangular_solve(
        a,
        b,
        options.left_side,
        options.lower,
        options.transpose_a,
        options.unit_diagonal,
    )
}

/// `lax.linalg.lu(x)`: `(lu, pivots, permutation)` with `x[permutation] = L U` (`L` unit
/// lower triangular below `lu`'s diagonal, `U` on and above it; `pivots` LAPACK's row swaps,
/// 0-based, int32).
#[track_caller]
pub fn lu(x: &Array) -> (Array, Array, Array) {
    d::lu(x)
}

/// `lax.linalg.qr(x, full_matrices=True)`: `(q, r)`.
#[track_caller]
pub fn qr(x: &Array, full_matrices: bool) -> (Array, Array) {
    d::qr(x, full_matrices)
}

/// `lax.linalg.eigh(x, lower=True, symmetrize_input=True)`: `(v, w)`, the eigenvectors as
/// `v`'s columns and the eigenvalues ascending.
#[track_caller]
pub fn eigh(x: &Array, lower: bool, symmetrize_input: bool) -> (Array, Array) {
    if symmetrize_input {
        // The kernel forms (x + xᴴ) / 2 as it reads x (see `Eigh`).
        return d::eigh_of_hermitian_part(x);
    }
    let x = if lower { x.clone() } else { d::mh(x) };
    d::eigh(&x)
}

/// `lax.linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors)`: `[w]`,
/// or `[w, v]` with the right eigenvectors as `v`'s columns (unit norm, the largest component
/// real and positive), complex whatever `x`'s dtype, in the kernel's order. Left eigenvectors
/// are not offered (`compute_left_eigenvectors=True` has no counterpart yet). As in JAX, the
/// eigenvalues are differentiable and the eigenvectors are not (JAX's
/// `enable_eigvec_derivs` opt-in is not offered).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// // A rotation by 90°: eigenvalues ±i.
/// let a = Array::from_vec(vec![0.0f64, -1.0, 1.0, 0.0], &[2, 2]);
/// let w = lax::linalg::eig(&a, false).remove(0).to_vec::<jaxrs::C128>();
/// assert!(w.iter().all(|z| z.re.abs() < 1e-12 && (z.im.abs() - 1.0).abs() < 1e-12));
/// ```
#[track_caller]
pub fn eig(x: &Array, compute_right_eigenvectors: bool) -> Vec<Array> {
    if compute_right_eigenvectors {
        let (w, v) = d::eig(x);
        vec![w, v]
    } else {
        vec![d::eigvals(x)]
    }
}

/// `lax.linalg.svd(x, full_matrices=True, compute_uv=True)`: `(u, s, vh)`, the singular
/// values descending. See [`svdvals`] for `compute_uv=False`.
#[track_caller]
pub fn svd(x: &Array, full_matrices: bool) -> (Array, Array, Array) {
    d::svd(x, full_matrices)
}

/// `lax.linalg.svd(x, compute_uv=False)`: the singular values, descending.
#[track_caller]
pub fn svdvals(x: &Array) -> Array {
    d::svdvals(x)
}

/// `lax.linalg.schur(x)` (with `compute_schur_vectors=True`): `(t, z)` with `x = z t zᴴ`,
/// `z` unitary, `t` upper triangular for a complex `x` and quasi-triangular for a real one
/// (a standardised 2x2 block per complex-conjugate pair of eigenvalues). The form is not
/// unique, and this one may differ from LAPACK's (JAX's) in the order of the eigenvalues
/// along the diagonal and in the signs or phases of `z`'s columns; `z t zᴴ` and `t`'s
/// eigenvalues agree. Not differentiable, as JAX's is not.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
/// let (t, z) = lax::linalg::schur(&a);
/// let back = z.matmul(&t).matmul(&z.t()).to_vec::<f64>();
/// assert!(back.iter().zip([1.0, 2.0, 3.0, 4.0]).all(|(x, y)| (x - y).abs() < 1e-12));
/// assert_eq!(t.to_vec::<f64>()[2], 0.0);
/// ```
#[track_caller]
pub fn schur(x: &Array) -> (Array, Array) {
    d::schur(x)
}
