//! `jax.numpy.linalg` for Rust (`jnp::linalg`): norms and the array-API products. The
//! decompositions (`svd`, `qr`, `eigh`, `cholesky`, `solve`, `inv`, ...) and what needs them
//! (`ord = 2`, `-2` and `"nuc"` matrix norms, negative `matrix_power`) are not here yet; API.md
//! lists them.
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
use crate::{Array, Axes, DType};
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
    /// `ord = "nuc"`: the nuclear norm (needs the SVD: not yet).
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
/// `ord` `None` is `"fro"`). Orders 2, -2 and `"nuc"` need the SVD and are not yet in jaxrs:
/// they stop with a message saying so.
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
        NormOrd::Nuc | NormOrd::P(_) => panic!(
            "linalg.norm: matrix order {ord:?} needs the singular values, which jaxrs does not \
             compute yet (orders \"fro\", 1, -1, inf and -inf work) at {}",
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
/// `n = 0` gives identity matrices. Negative powers need the inverse, not yet in jaxrs.
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
        panic!(
            "linalg.matrix_power: negative powers need the matrix inverse, which jaxrs does not \
             compute yet (n = {n}) at {}",
            Location::caller()
        );
    }
    let m = a.shape()[r - 1];
    let eye = super::eye(m, None, 0, Some(a.dtype())).broadcast_to(a.shape());
    let (mut result, mut base, mut k) = (None::<Array>, a.clone(), n as u64);
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
