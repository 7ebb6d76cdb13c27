//! `jax.numpy.linalg` for Rust (`jnp::linalg`): the decompositions (`cholesky`, `qr`, `svd`,
//! `eigh`), what is built on them (`solve`, `inv`, `det`, `slogdet`, `pinv`, `lstsq`,
//! `matrix_rank`, `cond`), norms and the array-API products. Each works on a batch of matrices
//! (the last two axes), differentiates with JAX's rules and maps under `vmap`; the
//! decompositions are [`lax::linalg`](crate::lax::linalg)'s.
//!
//! ```
//! use jaxrs::numpy as jnp;
//! use jaxrs::prelude::*;
//!
//! let x = Array::from_vec(vec![3.0f32, -4.0], &[2]);
//! assert_eq!(jnp::linalg::norm(&x, None, None, false).item::<f32>(), 5.0);
//! let inf = jnp::linalg::norm(&x, Some(jnp::linalg::NormOrd::Inf), None, false);
//! assert_eq!(inf.item::<f32>(), 4.0);
//! ```

use super::manip::norm_axis;
use super::math::inexact;
use crate::lax::linalg as lax_linalg;
use crate::{Array, Axes, DType};
use jaxrs_runtime::decompositions::mh;
use std::panic::Location;

/// The `ord` of [`norm`], [`vector_norm`] and [`matrix_norm`]: a number (`P(1.0)`, or
/// [`NormOrd::Inf`] for `jnp.inf`) or a name (`"fro"`, `"nuc"`). `From<f64>` and
/// `From<&str>` read JAX's spellings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NormOrd {
    /// `ord = p`: for vectors `sum(|x|^p)^(1/p)`; for matrices 1 or -1 (column sums).
    P(f64),
    /// `ord = inf`: the largest absolute value; for matrices, the largest row sum.
    Inf,
    /// `ord = -inf`: the smallest absolute value; for matrices, the smallest row sum.
    NegInf,
    /// `ord = "fro"`: the Frobenius norm of a matrix.
    Fro,
    /// `ord = "nuc"`: the nuclear norm (the sum of the singular values).
    Nuc,
}

impl From<f64> for NormOrd {
    fn from(p: f64) -> Self {
        if p == f64::INFINITY {
            NormOrd::Inf
        } else if p == f64::NEG_INFINITY {
            NormOrd::NegInf
        } else {
            NormOrd::P(p)
        }
    }
}

impl From<&str> for NormOrd {
    #[track_caller]
    fn from(s: &str) -> Self {
        match s {
            "fro" | "f" => NormOrd::Fro,
            "nuc" => NormOrd::Nuc,
            other => panic!(
                "norm: invalid order {other:?} (\"fro\", \"f\" or \"nuc\") at {}",
                Location::caller()
            ),
        }
    }
}

/// The axes `axis` names (every axis for `None`), each normalized as jnp's are.
#[track_caller]
fn axes_of(x: &Array, axis: Option<Vec<i64>>, op: &str) -> Vec<usize> {
    match axis {
        None => (0..x.rank()).collect(),
        Some(v) => v
            .into_iter()
            .map(|a| norm_axis(&format!("linalg.{op}"), a, x.shape()))
            .collect(),
    }
}

fn two_norm(x: &Array, axes: &[usize], keepdims: bool) -> Array {
    (x * x).sum(axes, keepdims).sqrt()
}

/// The norm of `x` (`jnp.linalg.norm(x, ord, axis, keepdims)`): with `axis` `None` and
/// `ord` `None`, the 2-norm of the flattened array; over one axis a vector norm
/// ([`vector_norm`]); over two axes a matrix norm ([`matrix_norm`]'s orders). Integer
/// inputs compute in float, as JAX's.
#[track_caller]
pub fn norm(x: &Array, ord: Option<NormOrd>, axis: impl Axes, keepdims: bool) -> Array {
    let x = inexact(x);
    let given = axis.axes();
    if given.is_none() && ord.is_none() {
        let all: Vec<usize> = (0..x.rank()).collect();
        return two_norm(&x, &all, keepdims);
    }
    let axes = axes_of(&x, given, "norm");
    match axes.len() {
        1 => vector_norm_over(&x, &axes, keepdims, ord.unwrap_or(NormOrd::P(2.0))),
        2 => matrix_norm_over(&x, axes[0], axes[1], keepdims, ord.unwrap_or(NormOrd::Fro)),
        n => panic!(
            "linalg.norm: improper number of axes for norm ({n}; one or two, or axis=None with \
             ord=None), shape {:?} at {}",
            x.shape(),
            Location::caller()
        ),
    }
}

/// The vector norm of `x` over `axis` (`jnp.linalg.vector_norm(x, axis, keepdims, ord)`;
/// `axis` `None`: every axis, as one vector). `ord` `None` is 2; `P(0.0)` counts the
/// non-zero elements.
#[track_caller]
pub fn vector_norm(x: &Array, axis: impl Axes, keepdims: bool, ord: Option<NormOrd>) -> Array {
    let x = inexact(x);
    let axes = axes_of(&x, axis.axes(), "vector_norm");
    vector_norm_over(&x, &axes, keepdims, ord.unwrap_or(NormOrd::P(2.0)))
}

#[track_caller]
fn vector_norm_over(x: &Array, axes: &[usize], keepdims: bool, ord: NormOrd) -> Array {
    match ord {
        NormOrd::P(2.0) => two_norm(x, axes, keepdims),
        NormOrd::Inf => x.abs().max(axes, keepdims),
        NormOrd::NegInf => x.abs().min(axes, keepdims),
        NormOrd::P(0.0) => x.ne(0.0).astype(x.dtype()).sum(axes, keepdims),
        NormOrd::P(1.0) => x.abs().sum(axes, keepdims),
        NormOrd::P(p) => x.abs().pow(p).sum(axes, keepdims).pow(1.0 / p),
        NormOrd::Fro | NormOrd::Nuc => panic!(
            "linalg.vector_norm: invalid order {ord:?} for a vector norm at {}",
            Location::caller()
        ),
    }
}

/// The matrix norm over the last two axes (`jnp.linalg.matrix_norm(x, keepdims, ord)`;
/// `ord` `None` is `"fro"`; 2, -2 and `"nuc"` are the largest, the smallest and the sum of the
/// singular values).
#[track_caller]
pub fn matrix_norm(x: &Array, keepdims: bool, ord: Option<NormOrd>) -> Array {
    let x = inexact(x);
    if x.rank() < 2 {
        panic!(
            "linalg.matrix_norm: needs an array of rank >= 2, got shape {:?} at {}",
            x.shape(),
            Location::caller()
        );
    }
    let r = x.rank();
    matrix_norm_over(&x, r - 2, r - 1, keepdims, ord.unwrap_or(NormOrd::Fro))
}

#[track_caller]
fn matrix_norm_over(x: &Array, row: usize, col: usize, keepdims: bool, ord: NormOrd) -> Array {
    if row == col {
        panic!(
            "linalg.norm: the two axes must differ, got ({row}, {col}) at {}",
            Location::caller()
        );
    }
    // After summing one axis away (keepdims false), the other moves down if it was after it.
    let after = |kept: usize, gone: usize| {
        if !keepdims && kept > gone {
            kept - 1
        } else {
            kept
        }
    };
    match ord {
        NormOrd::Fro => two_norm(x, &[row, col], keepdims),
        NormOrd::P(1.0) => x.abs().sum(row, keepdims).max(after(col, row), keepdims),
        NormOrd::P(-1.0) => x.abs().sum(row, keepdims).min(after(col, row), keepdims),
        NormOrd::Inf => x.abs().sum(col, keepdims).max(after(row, col), keepdims),
        NormOrd::NegInf => x.abs().sum(col, keepdims).min(after(row, col), keepdims),
        NormOrd::Nuc | NormOrd::P(2.0) | NormOrd::P(-2.0) => {
            // The singular values of the matrices spanned by (row, col), moved last.
            let rest: Vec<usize> = (0..x.rank()).filter(|&d| d != row && d != col).collect();
            let perm: Vec<usize> = rest.iter().copied().chain([row, col]).collect();
            let s = svdvals(&x.transpose(perm));
            let last = s.rank() - 1;
            let reduced = match ord {
                NormOrd::Nuc => s.sum(last, false),
                NormOrd::P(2.0) => s.max(last, false),
                _ => s.min(last, false),
            };
            if keepdims {
                let (lo, hi) = (row.min(col), row.max(col));
                reduced.expand_dims(lo as i64).expand_dims(hi as i64)
            } else {
                reduced
            }
        }
        NormOrd::P(_) => panic!(
            "linalg.norm: invalid order {ord:?} for a matrix norm (\"fro\", \"nuc\", 1, -1, 2, \
             -2, inf and -inf are) at {}",
            Location::caller()
        ),
    }
}

/// The matrix product (`jnp.linalg.matmul`): [`jnp::matmul`](super::matmul).
#[track_caller]
pub fn matmul(x1: &Array, x2: &Array, preferred_element_type: Option<DType>) -> Array {
    super::matmul(x1, x2, preferred_element_type)
}

/// The last two axes swapped (`jnp.linalg.matrix_transpose`).
#[track_caller]
pub fn matrix_transpose(x: &Array) -> Array {
    super::matrix_transpose(x)
}

/// The diagonals of the matrices in the last two axes (`jnp.linalg.diagonal(x, offset)`).
#[track_caller]
pub fn diagonal(x: &Array, offset: i64) -> Array {
    super::diagonal(x, offset, -2, -1)
}

/// The traces of the matrices in the last two axes (`jnp.linalg.trace(x, offset)`).
#[track_caller]
pub fn trace(x: &Array, offset: i64) -> Array {
    super::trace(
        x,
        super::TraceOptions {
            offset,
            axis1: -2,
            axis2: -1,
        },
    )
}

/// The outer product of two vectors (`jnp.linalg.outer`; unlike `jnp.outer`, both must be
/// 1-d).
#[track_caller]
pub fn outer(x1: &Array, x2: &Array) -> Array {
    if x1.rank() != 1 || x2.rank() != 1 {
        panic!(
            "linalg.outer: both operands must be 1-d, got shapes {:?} and {:?} at {}",
            x1.shape(),
            x2.shape(),
            Location::caller()
        );
    }
    super::outer(x1, x2)
}

/// Dot products along `axis` (`jnp.linalg.vecdot(x1, x2, axis=-1)`).
#[track_caller]
pub fn vecdot(x1: &Array, x2: &Array, axis: i64, preferred_element_type: Option<DType>) -> Array {
    super::vecdot(x1, x2, Some(axis), preferred_element_type)
}

/// `jnp.linalg.tensordot(x1, x2, axes=2)`: [`jnp::tensordot`](super::tensordot).
#[track_caller]
pub fn tensordot(
    x1: &Array,
    x2: &Array,
    axes: impl Into<super::TensordotAxes>,
    preferred_element_type: Option<DType>,
) -> Array {
    super::tensordot(x1, x2, axes, preferred_element_type)
}

/// The cross product of 3-vectors along `axis` (`jnp.linalg.cross(x1, x2, axis=-1)`; unlike
/// `jnp.cross`, the axis must have size 3 in both).
#[track_caller]
pub fn cross(x1: &Array, x2: &Array, axis: i64) -> Array {
    let size = |x: &Array| {
        let r = x.rank() as i64;
        let a = if axis < 0 { axis + r } else { axis };
        (0..r).contains(&a).then(|| x.shape()[a as usize])
    };
    if size(x1) != Some(3) || size(x2) != Some(3) {
        panic!(
            "linalg.cross: axis {axis} must have size 3 in both operands, got shapes {:?} and \
             {:?} at {}",
            x1.shape(),
            x2.shape(),
            Location::caller()
        );
    }
    super::cross(
        x1,
        x2,
        super::CrossOptions {
            axis: Some(axis),
            ..Default::default()
        },
    )
}

/// The product of a chain of matrices (`jnp.linalg.multi_dot`); the first may be a vector
/// (a row) and the last a vector (a column), as numpy's. Multiplied left to right; JAX picks
/// the cheapest order, which changes only the rounding.
#[track_caller]
pub fn multi_dot(arrays: &[&Array]) -> Array {
    if arrays.len() < 2 {
        panic!(
            "linalg.multi_dot: needs at least two arrays, got {} at {}",
            arrays.len(),
            Location::caller()
        );
    }
    let mut acc = arrays[0].clone();
    for a in &arrays[1..] {
        acc = super::matmul(&acc, a, None);
    }
    acc
}

/// `a` raised to the integer power `n` by repeated squaring (`jnp.linalg.matrix_power`);
/// `n = 0` gives identity matrices, negative `n` powers of the inverse.
#[track_caller]
pub fn matrix_power(a: &Array, n: i64) -> Array {
    let r = a.rank();
    if r < 2 || a.shape()[r - 1] != a.shape()[r - 2] {
        panic!(
            "linalg.matrix_power: needs square matrices in the last two axes, got shape {:?} \
             at {}",
            a.shape(),
            Location::caller()
        );
    }
    if n < 0 {
        return matrix_power(&inv(a), -n);
    }
    let m = a.shape()[r - 1];
    let eye = super::eye(m, None, 0, Some(a.dtype())).broadcast_to(a.shape());
    let (mut result, mut base, mut k) = (None::<Array>, a.clone(), n.unsigned_abs());
    if k == 0 {
        return eye;
    }
    while k > 0 {
        if k & 1 == 1 {
            result = Some(match result {
                None => base.clone(),
                Some(acc) => acc.matmul(&base),
            });
        }
        k >>= 1;
        if k > 0 {
            base = base.matmul(&base);
        }
    }
    result.unwrap()
}

// ------------------------------------------------------------------ decompositions

/// Stops unless `a` is a batch of matrices (rank >= 2), square when `square`.
#[track_caller]
fn check_matrices(op: &str, a: &Array, square: bool) {
    let r = a.rank();
    if r < 2 || (square && a.shape()[r - 1] != a.shape()[r - 2]) {
        panic!(
            "linalg.{op}: needs {} matrices in the last two axes, got shape {:?} at {}",
            if square { "square" } else { "a batch of" },
            a.shape(),
            Location::caller()
        );
    }
}

/// `a` and `b` in their common inexact dtype, each keeping its own shape.
pub(crate) fn promote_inexact(a: &Array, b: &Array) -> (Array, Array) {
    let (dtype, _) = jaxrs_runtime::result_type(&[(a.dtype(), false), (b.dtype(), false)]);
    // Complex stays complex: the decompositions refuse it by name rather than drop the
    // imaginary part.
    let dtype = if dtype.is_float() || dtype.is_complex() {
        dtype
    } else if dtype == DType::I64 {
        DType::F64
    } else {
        DType::F32
    };
    (a.astype(dtype), b.astype(dtype))
}

/// The machine epsilon of a float dtype.
fn eps(dtype: DType) -> f64 {
    match dtype.real_dtype() {
        DType::F64 => f64::EPSILON,
        DType::F16 => 9.765625e-4,
        DType::BF16 => 0.0078125,
        _ => f32::EPSILON as f64,
    }
}

/// The Cholesky factor (`jnp.linalg.cholesky(a, upper=False)`): lower triangular `L` with
/// `L Lᵀ = a` (of `(a + aᵀ) / 2`, as JAX symmetrizes), or `U = Lᵀ` when `upper`; NaN where a
/// matrix is not positive definite.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![4.0f64, 2.0, 2.0, 5.0], &[2, 2]);
/// let l = jnp::linalg::cholesky(&a, false);
/// assert_eq!(l.to_vec::<f64>(), vec![2.0, 0.0, 1.0, 2.0]);
/// ```
#[track_caller]
pub fn cholesky(a: &Array, upper: bool) -> Array {
    let a = inexact(a);
    check_matrices("cholesky", &a, true);
    let l = lax_linalg::cholesky(&a, true);
    if upper {
        mh(&l)
    } else {
        l
    }
}

/// The QR decomposition (`jnp.linalg.qr(a, mode)`): `mode` `"reduced"` (JAX's default;
/// `q` is `m x k`, `r` `k x n` with `k = min(m, n)`), `"complete"` (`q` is `m x m`) or `"r"`
/// (only `r`: `(None, r)`).
#[track_caller]
pub fn qr(a: &Array, mode: &str) -> (Option<Array>, Array) {
    let a = inexact(a);
    check_matrices("qr", &a, false);
    let full = match mode {
        "reduced" | "r" => false,
        "complete" => true,
        other => panic!(
            "linalg.qr: unsupported mode {other:?} (\"reduced\", \"complete\" or \"r\") at {}",
            Location::caller()
        ),
    };
    let (q, r) = lax_linalg::qr(&a, full);
    ((mode != "r").then_some(q), r)
}

/// The singular value decomposition (`jnp.linalg.svd(a, full_matrices=True)`): `(u, s, vh)`
/// with `a = u diag(s) vh`, `s` descending. For `compute_uv=False` use [`svdvals`].
#[track_caller]
pub fn svd(a: &Array, full_matrices: bool) -> (Array, Array, Array) {
    let a = inexact(a);
    check_matrices("svd", &a, false);
    lax_linalg::svd(&a, full_matrices)
}

/// The singular values, descending (`jnp.linalg.svdvals`, `svd(a, compute_uv=False)`).
#[track_caller]
pub fn svdvals(a: &Array) -> Array {
    let a = inexact(a);
    check_matrices("svdvals", &a, false);
    lax_linalg::svdvals(&a)
}

/// The eigendecomposition of symmetric matrices (`jnp.linalg.eigh(a, UPLO, symmetrize_input)`):
/// `(eigenvalues, eigenvectors)`, eigenvalues ascending, eigenvectors in the columns (their
/// signs are the kernel's, as LAPACK's are). `uplo` `"L"` (`None`) or `"U"` says which
/// triangle is read when `symmetrize_input` is false.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![2.0f64, 1.0, 1.0, 2.0], &[2, 2]);
/// let (w, _v) = jnp::linalg::eigh(&a, None, true);
/// let w = w.to_vec::<f64>();
/// assert!((w[0] - 1.0).abs() < 1e-12 && (w[1] - 3.0).abs() < 1e-12);
/// ```
#[track_caller]
pub fn eigh(a: &Array, uplo: Option<&str>, symmetrize_input: bool) -> (Array, Array) {
    let a = inexact(a);
    check_matrices("eigh", &a, true);
    let lower = match uplo.unwrap_or("L") {
        "L" => true,
        "U" => false,
        other => panic!(
            "linalg.eigh: UPLO must be \"L\" or \"U\", got {other:?} at {}",
            Location::caller()
        ),
    };
    let (v, w) = lax_linalg::eigh(&a, lower, symmetrize_input);
    (w, v)
}

/// The eigenvalues of symmetric matrices, ascending (`jnp.linalg.eigvalsh(a, UPLO)`).
#[track_caller]
pub fn eigvalsh(a: &Array, uplo: Option<&str>) -> Array {
    eigh(a, uplo, true).0
}

/// `x` with `a x = b` (`jnp.linalg.solve`), by LU with partial pivoting. `b` is a vector
/// when it has one axis (`a: [.., n, n]`, `b: [n]`), else a batch of matrices `[.., n, k]`
/// broadcast against `a`'s batch, as JAX 0.10 reads it. Singular `a` gives inf or NaN, as
/// JAX's.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![3.0f64, 1.0, 1.0, 2.0], &[2, 2]);
/// let b = Array::from_vec(vec![9.0f64, 8.0], &[2]);
/// let x = jnp::linalg::solve(&a, &b).to_vec::<f64>();
/// assert!((x[0] - 2.0).abs() < 1e-12 && (x[1] - 3.0).abs() < 1e-12);
/// ```
#[track_caller]
pub fn solve(a: &Array, b: &Array) -> Array {
    let (a, b) = promote_inexact(a, b);
    check_matrices("solve", &a, true);
    let n = a.shape()[a.rank() - 1];
    let vector = b.rank() == 1;
    let b = if vector { b.expand_dims(-1) } else { b };
    if b.rank() < 2 || b.shape()[b.rank() - 2] != n {
        panic!(
            "linalg.solve: b's shape {:?} does not fit a of shape {:?} at {}",
            b.shape(),
            a.shape(),
            Location::caller()
        );
    }
    let x = lu_solve_factored(&lax_linalg::lu(&a), &b, false);
    if vector {
        last_squeezed(&x)
    } else {
        x
    }
}

/// Solves with a factorisation from `lax::linalg::lu`: `a x = b`, or `aᵀ x = b` when
/// `transpose`. `b` is `[.., n, k]`, broadcast against the factors' batch.
#[track_caller]
pub(crate) fn lu_solve_factored(
    factors: &(Array, Array, Array),
    b: &Array,
    transpose: bool,
) -> Array {
    let (lu, _, perm) = factors;
    jaxrs_runtime::decompositions::lu_solve(lu, perm, b, transpose)
}

/// The eigenvalues and right eigenvectors of general square matrices (`jnp.linalg.eig`):
/// `(w, v)` with `a v = v diag(w)`, complex whatever `a`'s dtype. Each eigenvector (a column
/// of `v`) has unit norm and its largest component real and positive; the order of the
/// eigenvalues is the kernel's (LAPACK's, in JAX, is its own too), so compare them as a set.
/// Differentiating the eigenvectors stops with a message, as JAX's does; see [`eigvals`].
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![2.0f64, 1.0, 0.0, 3.0], &[2, 2]);
/// let (w, v) = jnp::linalg::eig(&a);
/// // a v = v diag(w), in complex arithmetic.
/// let av = a.astype(DType::C128).matmul(&v);
/// let vw = &v * &w.expand_dims(0);
/// let gap = jnp::abs(&(&av - &vw)).max(None, false).item::<f64>();
/// assert!(gap < 1e-12);
/// ```
#[track_caller]
pub fn eig(a: &Array) -> (Array, Array) {
    let a = inexact(a);
    check_matrices("eig", &a, true);
    let mut outs = lax_linalg::eig(&a, true);
    let v = outs.pop().expect("two results");
    (outs.pop().expect("two results"), v)
}

/// The eigenvalues of general square matrices (`jnp.linalg.eigvals`), complex, in the
/// kernel's order; differentiable, as JAX's: `ẇ = diag(V⁻¹ ȧ V)`.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 2.0, 0.0, 3.0], &[2, 2]);
/// let mut w: Vec<f32> = jnp::linalg::eigvals(&a).to_vec::<jaxrs::C64>().iter().map(|z| z.re).collect();
/// w.sort_by(f32::total_cmp);
/// assert!((w[0] - 1.0).abs() < 1e-6 && (w[1] - 3.0).abs() < 1e-6);
/// ```
#[track_caller]
pub fn eigvals(a: &Array) -> Array {
    let a = inexact(a);
    check_matrices("eigvals", &a, true);
    lax_linalg::eig(&a, false).remove(0)
}

/// The inverse (`jnp.linalg.inv`): `solve(a, I)`.
#[track_caller]
pub fn inv(a: &Array) -> Array {
    let a = inexact(a);
    check_matrices("inv", &a, true);
    let n = a.shape()[a.rank() - 1];
    solve(
        &a,
        &super::eye(n, None, 0, Some(a.dtype())).broadcast_to(a.shape()),
    )
}

/// The inverse of `a` as a tensor (`jnp.linalg.tensorinv(a, ind)`): `a`'s first `ind` axes
/// are the rows and the rest the columns of a square matrix, whose inverse comes back with
/// shape `a.shape[ind:] + a.shape[:ind]`, so that `tensordot(tensorinv(a), a, ind)` is the
/// identity over `a.shape[ind:]`.
///
/// Panics when the rows and columns do not make a square matrix, naming both.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = jnp::eye(6, None, 0, Some(DType::F64)).reshape(vec![6usize, 2, 3]) * 2.0;
/// let ainv = jnp::linalg::tensorinv(&a, 1);
/// assert_eq!(ainv.shape(), &[2, 3, 6]);
/// assert_eq!(ainv.to_vec::<f64>()[0], 0.5);
/// ```
#[track_caller]
pub fn tensorinv(a: &Array, ind: usize) -> Array {
    let a = inexact(a);
    let shape = a.shape().to_vec();
    assert!(
        ind > 0 && ind <= shape.len(),
        "tensorinv: ind must be in 1..={} for an array of shape {shape:?}, got {ind} at {}",
        shape.len(),
        Location::caller()
    );
    let (rows, cols) = shape.split_at(ind);
    let (m, n) = (
        rows.iter().product::<usize>(),
        cols.iter().product::<usize>(),
    );
    assert_eq!(
        m,
        n,
        "tensorinv: a.shape[:ind] = {rows:?} and a.shape[ind:] = {cols:?} must have equal \
         products (a square matrix) at {}",
        Location::caller()
    );
    let out_shape: Vec<usize> = cols.iter().chain(rows).copied().collect();
    inv(&a.reshape(vec![m, n])).reshape(out_shape)
}

/// Solves `tensordot(a, x, x.ndim) = b` for `x` (`jnp.linalg.tensorsolve(a, b, axes)`):
/// `x` has shape `a.shape[b.ndim:]`. `axes` names axes of `a` to move to the end first.
///
/// Panics when `a`'s axes do not split into `b`'s shape and a square system.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = jnp::eye(6, None, 0, Some(DType::F64)).reshape(vec![2usize, 3, 2, 3]) * 4.0;
/// let b = Array::ones(&[2, 3], DType::F64);
/// let x = jnp::linalg::tensorsolve(&a, &b, None);
/// assert_eq!(x.shape(), &[2, 3]);
/// assert_eq!(x.to_vec::<f64>(), vec![0.25; 6]);
/// ```
#[track_caller]
pub fn tensorsolve(a: &Array, b: &Array, axes: Option<&[i64]>) -> Array {
    // Promoted to one inexact dtype, but not broadcast: the shapes are a system's.
    let (a, b) = promote_inexact(a, b);
    let rank = a.rank();
    let a = match axes {
        Some(axes) => {
            let moved: Vec<usize> = axes
                .iter()
                .map(|&k| norm_axis("tensorsolve", k, a.shape()))
                .collect();
            let mut perm: Vec<usize> = (0..rank).filter(|k| !moved.contains(k)).collect();
            perm.extend(&moved);
            a.transpose(perm)
        }
        None => a,
    };
    assert!(
        b.rank() <= rank,
        "tensorsolve: b ({}) has more axes than a ({}) at {}",
        b.aval(),
        a.aval(),
        Location::caller()
    );
    let x_shape = a.shape()[b.rank()..].to_vec();
    let n: usize = x_shape.iter().product();
    let m: usize = a.shape()[..b.rank()].iter().product();
    assert!(
        m == n && b.size() == m,
        "tensorsolve: a must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]) and b that \
         many elements; got a {} and b {} at {}",
        a.aval(),
        b.aval(),
        Location::caller()
    );
    solve(&a.reshape(vec![m, n]), &b.reshape(vec![m])).reshape(x_shape)
}

/// `(sign, log|det|)` from an LU factorisation: the diagonal's signs and the pivots'
/// parity; `sign` 0 where a pivot is 0.
fn lu_sign_logdet(lu: &Array, pivots: &Array) -> (Array, Array) {
    let diag = super::diagonal(lu, 0, -2, -1);
    let unit = if diag.dtype().is_complex() {
        // z / |z|, written out so that it differentiates (a complex determinant's sign
        // moves with the matrix, as JAX's rule has it); 0 where z is 0.
        let size = diag.abs();
        let zero = size.eq(0.0);
        let safe = super::where_(&zero, Array::ones(&[], size.dtype()), &size);
        super::where_(
            &zero,
            Array::zeros(&[], diag.dtype()),
            &diag / &safe.astype(diag.dtype()),
        )
    } else {
        diag.sign()
    };
    let sign = unit.prod(-1i64, false) * parity_sign(pivots, lu.dtype());
    let logdet = diag.abs().log().sum(-1i64, false);
    (sign, logdet)
}

/// The determinant (`jnp.linalg.det`): the product of LU's diagonal, signed by the row swaps.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
/// assert!((jnp::linalg::det(&a).item::<f64>() + 2.0).abs() < 1e-12);
/// ```
#[track_caller]
pub fn det(a: &Array) -> Array {
    let a = inexact(a);
    check_matrices("det", &a, true);
    let (lu, pivots, _) = lax_linalg::lu(&a);
    super::diagonal(&lu, 0, -2, -1).prod(-1i64, false) * parity_sign(&pivots, a.dtype())
}

/// `(-1)^(number of row swaps)`.
fn parity_sign(pivots: &Array, dtype: DType) -> Array {
    let n = pivots.shape()[pivots.rank() - 1];
    let swaps = pivots
        .ne(Array::iota(DType::I32, &[n], 0))
        .astype(DType::I32)
        .sum(-1i64, false);
    swaps.rem(2).astype(dtype) * -2.0 + 1.0
}

/// `x` without its last axis (of size 1).
fn last_squeezed(x: &Array) -> Array {
    x.squeeze(vec![x.rank() - 1])
}

/// `(sign, logabsdet)` of the determinant (`jnp.linalg.slogdet`), by LU: `sign` is 0 and
/// `logabsdet` `-inf` for a singular matrix.
#[track_caller]
pub fn slogdet(a: &Array) -> (Array, Array) {
    let a = inexact(a);
    check_matrices("slogdet", &a, true);
    let (lu, pivots, _) = lax_linalg::lu(&a);
    lu_sign_logdet(&lu, &pivots)
}

/// The default relative tolerance of `pinv`, `matrix_rank` and `lstsq`: `max(m, n) * eps`.
fn default_rtol(a: &Array) -> f64 {
    let (m, n) = (a.shape()[a.rank() - 2], a.shape()[a.rank() - 1]);
    m.max(n) as f64 * eps(a.dtype())
}

/// The Moore-Penrose pseudo-inverse (`jnp.linalg.pinv(a, rtol)`), from the SVD: singular
/// values at or below `rtol * max(s)` are dropped (`rtol` default `10 * max(m, n) * eps`,
/// JAX's).
#[track_caller]
pub fn pinv(a: &Array, rtol: Option<f64>) -> Array {
    let a = inexact(a);
    check_matrices("pinv", &a, false);
    let rtol = rtol.unwrap_or(10.0 * default_rtol(&a));
    let (u, s, vh) = lax_linalg::svd(&a, false);
    let cutoff = s.max(-1i64, true) * rtol;
    let keep = s.gt(&cutoff);
    let s_inv = crate::where_(
        &keep,
        &(Array::ones(&[], s.dtype()) / &crate::where_(&keep, &s, 1.0)),
        0.0,
    );
    (mh(&vh) * s_inv.expand_dims(-2).astype(vh.dtype())).matmul(&mh(&u))
}

/// The rank (`jnp.linalg.matrix_rank(M, rtol)`): singular values above
/// `rtol * max(s)` (`rtol` default `max(m, n) * eps`), as int32.
#[track_caller]
pub fn matrix_rank(m: &Array, rtol: Option<f64>) -> Array {
    let m = inexact(m);
    if m.rank() < 2 {
        return m.ne(0.0).reduce_or(None).astype(DType::I32);
    }
    let rtol = rtol.unwrap_or(default_rtol(&m));
    let s = svdvals(&m);
    let tol = s.max(-1i64, true) * rtol;
    s.gt(&tol).astype(DType::I32).sum(-1i64, false)
}

/// The condition number (`jnp.linalg.cond(x, p)`): `p` `None` is the 2-norm's, the ratio of
/// the largest to the smallest singular value; otherwise `norm(x, p) * norm(inv(x), p)`.
#[track_caller]
pub fn cond(x: &Array, p: Option<NormOrd>) -> Array {
    let x = inexact(x);
    check_matrices("cond", &x, false);
    match p {
        None | Some(NormOrd::P(2.0)) => {
            let s = svdvals(&x);
            let k = s.shape()[s.rank() - 1];
            last_squeezed(&s.slice_axis(-1, 0, 1)) / last_squeezed(&s.slice_axis(-1, k - 1, k))
        }
        Some(NormOrd::P(-2.0)) => {
            let s = svdvals(&x);
            let k = s.shape()[s.rank() - 1];
            last_squeezed(&s.slice_axis(-1, k - 1, k)) / last_squeezed(&s.slice_axis(-1, 0, 1))
        }
        Some(ord) => {
            let r = x.rank() as i64;
            let axes = vec![r - 2, r - 1];
            norm(&x, Some(ord), axes.clone(), false) * norm(&inv(&x), Some(ord), axes, false)
        }
    }
}

/// The least-squares solution (`jnp.linalg.lstsq(a, b, rcond)`): `(x, residuals, rank, s)`
/// for `a: [m, n]` and `b: [m]` or `[m, k]`, from the SVD; singular values below
/// `rcond * max(s)` are dropped (`rcond` default `max(m, n) * eps`). `residuals` holds the
/// squared 2-norms of `b - a x` per column, always (numpy leaves them empty when `a` is rank
/// deficient or `m <= n`; JAX computes them so that the shape does not depend on values).
#[track_caller]
pub fn lstsq(a: &Array, b: &Array, rcond: Option<f64>) -> (Array, Array, Array, Array) {
    let (a, b) = promote_inexact(a, b);
    if a.rank() != 2 || !(b.rank() == 1 || b.rank() == 2) || b.shape()[0] != a.shape()[0] {
        panic!(
            "linalg.lstsq: needs a of rank 2 and b of rank 1 or 2 with as many rows, got {:?} \
             and {:?} at {}",
            a.shape(),
            b.shape(),
            Location::caller()
        );
    }
    let rcond = rcond.unwrap_or(default_rtol(&a));
    let (u, s, vh) = lax_linalg::svd(&a, false);
    let keep = s.gt(0.0).logical_and(s.ge(&(s.max(-1i64, true) * rcond)));
    let rank = keep.astype(DType::I32).sum(-1i64, false);
    let s_inv = crate::where_(
        &keep,
        &(Array::ones(&[], s.dtype()) / &crate::where_(&keep, &s, 1.0)),
        0.0,
    );
    let vector = b.rank() == 1;
    let b2 = if vector { b.expand_dims(-1) } else { b.clone() };
    let x = mh(&vh).matmul(&(s_inv.expand_dims(-1).astype(vh.dtype()) * mh(&u).matmul(&b2)));
    // JAX returns the residuals always (numpy's empty array for rank-deficient or wide `a`
    // would give a shape that depends on values, which `jit` cannot have).
    let r = &b2 - a.matmul(&x);
    let residuals = (&r * &r).sum(0i64, false);
    let x = if vector { last_squeezed(&x) } else { x };
    (x, residuals, rank, s)
}
