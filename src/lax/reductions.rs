//! Reductions (`reduce_sum`, ..., the bitwise `reduce_and`/`reduce_or`/`reduce_xor`),
//! `argmax`/`argmin` with an index dtype, cumulative reductions (`cumsum`, `cumprod`,
//! `cummax`, `cummin`, `cumlogsumexp`, each with `reverse`), and sorting (multi-operand `sort`
//! with `num_keys`, `sort_key_val`, `top_k` on any axis, `approx_max_k`/`approx_min_k`).

use crate::{stop_gradient, where_, Array, DType};

/// The sum over `axes` (`lax.reduce_sum`).
#[track_caller]
pub fn reduce_sum(x: &Array, axes: &[i64]) -> Array {
    // lax keeps the operand's dtype; jnp's sum widens small integers. Wrapping sums agree
    // modulo the narrow width, so the narrowing is exact.
    x.sum(axes, false).astype(x.dtype())
}

/// The product over `axes` (`lax.reduce_prod`).
#[track_caller]
pub fn reduce_prod(x: &Array, axes: &[i64]) -> Array {
    // As reduce_sum: lax keeps the operand's dtype.
    x.prod(axes, false).astype(x.dtype())
}

/// The maximum over `axes` (`lax.reduce_max`).
#[track_caller]
pub fn reduce_max(x: &Array, axes: &[i64]) -> Array {
    x.max(axes, false)
}

/// The minimum over `axes` (`lax.reduce_min`).
#[track_caller]
pub fn reduce_min(x: &Array, axes: &[i64]) -> Array {
    x.min(axes, false)
}

/// The bitwise (for bools, logical) AND over `axes` (`lax.reduce_and`).
#[track_caller]
pub fn reduce_and(x: &Array, axes: &[i64]) -> Array {
    x.reduce_and(axes)
}

/// The bitwise OR over `axes` (`lax.reduce_or`).
#[track_caller]
pub fn reduce_or(x: &Array, axes: &[i64]) -> Array {
    x.reduce_or(axes)
}

/// The bitwise XOR over `axes` (`lax.reduce_xor`).
#[track_caller]
pub fn reduce_xor(x: &Array, axes: &[i64]) -> Array {
    x.reduce_xor(axes)
}

/// The index of the largest element along `axis`, the first on ties and NaN above every
/// number, as `index_dtype` (`lax.argmax`).
#[track_caller]
pub fn argmax(x: &Array, axis: i64, index_dtype: DType) -> Array {
    x.argmax(axis, false).astype(index_dtype)
}

/// The index of the smallest element along `axis`, as `index_dtype` (`lax.argmin`).
#[track_caller]
pub fn argmin(x: &Array, axis: i64, index_dtype: DType) -> Array {
    x.argmin(axis, false).astype(index_dtype)
}

/// `f` applied along `axis` from the end when `reverse`.
fn reversed(x: &Array, axis: i64, reverse: bool, f: impl Fn(&Array) -> Array) -> Array {
    if reverse {
        f(&x.flip([axis])).flip([axis])
    } else {
        f(x)
    }
}

/// The running sum along `axis`, from the end when `reverse` (`lax.cumsum`).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// assert_eq!(lax::cumsum(&x, 0, true).to_vec::<f32>(), vec![6.0, 5.0, 3.0]);
/// ```
#[track_caller]
pub fn cumsum(x: &Array, axis: i64, reverse: bool) -> Array {
    reversed(x, axis, reverse, |v| v.cumsum(axis))
}

/// The running product along `axis` (`lax.cumprod`).
#[track_caller]
pub fn cumprod(x: &Array, axis: i64, reverse: bool) -> Array {
    reversed(x, axis, reverse, |v| v.cumprod(axis))
}

/// The running maximum along `axis` (`lax.cummax`).
#[track_caller]
pub fn cummax(x: &Array, axis: i64, reverse: bool) -> Array {
    reversed(x, axis, reverse, |v| v.cummax(axis))
}

/// The running minimum along `axis` (`lax.cummin`).
#[track_caller]
pub fn cummin(x: &Array, axis: i64, reverse: bool) -> Array {
    reversed(x, axis, reverse, |v| v.cummin(axis))
}

/// The running `log(sum(exp(x)))` along `axis` (`lax.cumlogsumexp`), shifted by the
/// slice's maximum for stability; its derivative is the running softmax, as JAX's. (A prefix
/// more than ~700 (float64) below its slice's maximum underflows to `-inf`.)
#[track_caller]
pub fn cumlogsumexp(x: &Array, axis: i64, reverse: bool) -> Array {
    reversed(x, axis, reverse, |v| {
        let m = stop_gradient(&v.max(axis, true));
        // An all -inf slice shifts by 0, so that it gives -inf, not NaN.
        let m = where_(m.abs().lt(f64::INFINITY), &m, 0.0);
        (v - &m).exp().cumsum(axis).log() + &m
    })
}

/// Sorts `operands` (one shape) along `dimension` by the first `num_keys`, compared
/// lexicographically, ascending with NaN last; the rest follow (`lax.sort`). Every jaxrs sort
/// is stable, so `is_stable` only says what the caller needs.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let k = Array::from_vec(vec![2.0f32, 1.0, 3.0], &[3]);
/// let v = Array::from_vec(vec![0i32, 1, 2], &[3]);
/// let out = lax::sort(&[&k, &v], 0, true, 1);
/// assert_eq!(out[1].to_vec::<i32>(), vec![1, 0, 2]);
/// ```
#[track_caller]
pub fn sort(operands: &[&Array], dimension: i64, is_stable: bool, num_keys: usize) -> Vec<Array> {
    let _ = is_stable;
    let ops: Vec<Array> = operands.iter().map(|a| (*a).clone()).collect();
    jaxrs_runtime::sort_multi(&ops, dimension, num_keys, false)
}

/// `keys` sorted along `dimension`, and `values` in the same order (`lax.sort_key_val`).
#[track_caller]
pub fn sort_key_val(
    keys: &Array,
    values: &Array,
    dimension: i64,
    is_stable: bool,
) -> (Array, Array) {
    let mut out = sort(&[keys, values], dimension, is_stable, 1);
    let v = out.remove(1);
    (out.remove(0), v)
}

/// `x` with `axis` moved last, and the permutation back.
fn axis_last(x: &Array, axis: i64) -> (Array, Vec<usize>, usize) {
    let r = x.rank();
    let ax = if axis < 0 {
        (axis + r as i64) as usize
    } else {
        axis as usize
    };
    let perm: Vec<usize> = (0..r).filter(|&d| d != ax).chain([ax]).collect();
    let mut inverse = vec![0; r];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    (x.transpose(perm), inverse, ax)
}

/// The `k` largest values along `axis` (default -1 in JAX), largest first, and their int32
/// indices (`lax.top_k`; equal values in index order, NaN above every number).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 5.0, 3.0, 4.0], &[2, 2]);
/// let (v, i) = lax::top_k(&x, 1, 0);
/// assert_eq!(v.to_vec::<f32>(), vec![3.0, 5.0]);
/// assert_eq!(i.to_vec::<i32>(), vec![1, 0]);
/// ```
#[track_caller]
pub fn top_k(x: &Array, k: usize, axis: i64) -> (Array, Array) {
    if x.rank() == 0 {
        return x.top_k(k);
    }
    let (t, inverse, ax) = axis_last(x, axis);
    if ax + 1 == x.rank() {
        return x.top_k(k);
    }
    let (v, i) = t.top_k(k);
    (v.transpose(inverse.clone()), i.transpose(inverse))
}

/// The `k` largest values along `reduction_dimension` and their int32 indices
/// (`lax.approx_max_k`). Exact: JAX's CPU lowering is exact too, so `recall_target`,
/// `reduction_input_size_override` and `aggregate_to_topk` change nothing here.
#[track_caller]
pub fn approx_max_k(
    operand: &Array,
    k: usize,
    reduction_dimension: i64,
    recall_target: f64,
) -> (Array, Array) {
    let _ = recall_target;
    top_k(operand, k, reduction_dimension)
}

/// The `k` smallest values along `reduction_dimension`, smallest first, and their int32
/// indices (`lax.approx_min_k`; exact, as [`approx_max_k`]).
#[track_caller]
pub fn approx_min_k(
    operand: &Array,
    k: usize,
    reduction_dimension: i64,
    recall_target: f64,
) -> (Array, Array) {
    let _ = recall_target;
    let (t, inverse, _) = axis_last(operand, reduction_dimension);
    let last = t.rank() as i64 - 1;
    let iota = Array::iota(DType::I32, t.shape(), t.rank() - 1);
    let mut out = jaxrs_runtime::sort_multi(&[t.clone(), iota], last, 1, false);
    let idx = out.remove(1).slice_axis(last, 0, k);
    let vals = t.take_along_axis(&idx, last);
    (vals.transpose(inverse.clone()), idx.transpose(inverse))
}
