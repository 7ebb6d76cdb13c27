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
use crate::{Array, DType};
use jaxrs_runtime::decompositions::mt;
use std::panic::Location;

/// Float operands stay as they are; integers compute in float, as JAX's.
fn inexact(x: &Array) -> Array {
    if x.dtype().is_float() {
        x.clone()
    } else {
        x.astype(if x.dtype() == DType::I64 {
            DType::F64
        } else {
            DType::F32
        })
    }
}

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
        mt(&lax_linalg::cholesky(&mt(&a), false))
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
            let swapped = crate::where_(positions.eq(&p), &perm_i, &perm);
            crate::where_(positions.eq(i), &perm_p, &swapped)
        },
        init,
    )
}

/// `jax.scipy.linalg.lu_solve((lu, piv), b, trans=0)`: `a x = b` (`trans` 0) or `aᵀ x = b`
/// (1 or 2, the same for real matrices).
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
    let x = jnp::linalg::lu_solve_factored(&(lu, factor.piv.clone(), perm), &b, trans != 0);
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
/// row `r` (`r[0]` ignored); without `r`, the symmetric one (`r = c`).
#[track_caller]
pub fn toeplitz(c: &Array, r: Option<&Array>) -> Array {
    let c = c.reshape(vec![c.size()]);
    let r = r.map_or_else(|| c.clone(), |r| r.reshape(vec![r.size()]));
    let (m, n) = (c.size(), r.size());
    // Entry (i, j) is c[i - j] below the diagonal and r[j - i] on and above it: one gather
    // from [c reversed, r[1:]] at index (m - 1) - i + j.
    let vals = Array::concatenate(&[c.flip(vec![0usize]), r.slice_axis(0, 1.min(n), n)], 0);
    let i = Array::iota(DType::I32, &[m, n], 0);
    let j = Array::iota(DType::I32, &[m, n], 1);
    let idx = (j - i) + (m as i32 - 1);
    vals.take(&idx.reshape(vec![m * n]), 0).reshape(vec![m, n])
}
