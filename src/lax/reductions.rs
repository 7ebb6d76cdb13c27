//! Reductions (`reduce_sum`, ..., the bitwise `reduce_and`/`reduce_or`/`reduce_xor`),
//! `argmax`/`argmin` with an index dtype, cumulative reductions (`cumsum`, `cumprod`,
//! `cummax`, `cummin`, `cumlogsumexp`, each with `reverse`), and sorting (multi-operand `sort`
//! with `num_keys`, `sort_key_val`, `top_k` on any axis, `approx_max_k`/`approx_min_k`).

use crate::{stop_gradient, tree_unflatten, where_, Array, DType, Tree};

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

/// `lax.reduce(operands, init_values, computation, dimensions)`: reduces `dimensions` of
/// every array of `operands` (a tree: one array, a tuple, a struct) with `computation`,
/// which combines two trees like `operands` into one. `init_values` is a tree of rank-0
/// arrays, one per operand, the identity of `computation` (as XLA requires).
///
/// `computation` is called on whole arrays, not on scalars as JAX traces it: write it with
/// elementwise operations (`lax::add`, `lax::max`, `where_`...). The reduction is a
/// balanced tree of its calls (about log2 of the reduced size, each over half the elements
/// of the last), so it is differentiable and batches wherever `computation` does, as JAX's
/// generic `reduce_p` is; a sum or a max reduced this way agrees with `reduce_sum` and
/// `reduce_max` to rounding.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 5.0, 2.0, 4.0, 3.0, 0.0], &[2, 3]);
/// let zero = Array::zeros(&[], DType::F32);
/// let sums = lax::reduce(x.clone(), zero, |a: Array, b: Array| lax::add(&a, &b), &[1]);
/// assert_eq!(sums.to_vec::<f32>(), vec![8.0, 7.0]);
/// // Two operands at once: the largest value of each row and where it is.
/// let idx = lax::broadcasted_iota(DType::I32, &[2, 3], 1);
/// let init = (Array::full(&[], f64::NEG_INFINITY, DType::F32), Array::zeros(&[], DType::I32));
/// let (best, at) = lax::reduce(
///     (x, idx),
///     init,
///     |(va, ia): (Array, Array), (vb, ib): (Array, Array)| {
///         let take_a = va.ge(&vb);
///         (where_(&take_a, &va, &vb), where_(&take_a, &ia, &ib))
///     },
///     &[1],
/// );
/// assert_eq!(best.to_vec::<f32>(), vec![5.0, 4.0]);
/// assert_eq!(at.to_vec::<i32>(), vec![1, 0]);
/// ```
#[track_caller]
pub fn reduce<T: Tree>(
    operands: T,
    init_values: T,
    computation: impl Fn(T, T) -> T,
    dimensions: &[usize],
) -> T {
    let loc = std::panic::Location::caller();
    let (leaves, def) = operands.flatten();
    let (inits, init_def) = init_values.flatten();
    let fail = |msg: String| -> ! { panic!("lax.reduce: {msg} at {loc}") };
    if inits.len() != leaves.len() || init_def != def {
        fail(format!(
            "init_values must have the operands' structure ({} operands, {} init values)",
            leaves.len(),
            inits.len()
        ));
    }
    let Some(first) = leaves.first() else {
        return tree_unflatten(&def, leaves);
    };
    let shape = first.shape().to_vec();
    if leaves.iter().any(|l| l.shape() != &shape[..]) {
        fail("every operand must have one shape".into());
    }
    for (l, i) in leaves.iter().zip(&inits) {
        if i.rank() != 0 || i.dtype() != l.dtype() {
            fail(format!(
                "each init value must be a scalar of its operand's dtype ({} for {})",
                i.aval(),
                l.aval()
            ));
        }
    }
    let mut dims = dimensions.to_vec();
    dims.sort_unstable();
    dims.dedup();
    if dims.len() != dimensions.len() || dims.iter().any(|&d| d >= shape.len()) {
        fail(format!(
            "dimensions {dimensions:?} must be distinct axes of shape {shape:?}"
        ));
    }
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !dims.contains(d)).collect();
    let rest: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    let n: usize = dims.iter().map(|&d| shape[d]).product();
    let perm: Vec<usize> = dims.iter().chain(&kept).copied().collect();
    let mut front: Vec<usize> = vec![n];
    front.extend(&rest);
    let mut level: Vec<Array> = leaves
        .iter()
        .map(|l| l.transpose(&perm).reshape(front.clone()))
        .collect();
    let combine = |a: Vec<Array>, b: Vec<Array>| -> Vec<Array> {
        let (out, out_def) =
            computation(tree_unflatten(&def, a), tree_unflatten(&def, b)).flatten();
        if out_def != def {
            fail("computation must return a tree like its operands".into());
        }
        out
    };
    let mut size = n;
    while size > 1 {
        if size % 2 == 1 {
            // An odd row out is paired with the identity.
            level = level
                .iter()
                .zip(&inits)
                .map(|(l, i)| {
                    let mut pad_shape = vec![1];
                    pad_shape.extend(&rest);
                    Array::concatenate(&[l.clone(), i.broadcast_to(&pad_shape)], 0)
                })
                .collect();
            size += 1;
        }
        let half = size / 2;
        let lo = level.iter().map(|l| l.slice_axis(0, 0, half)).collect();
        let hi = level.iter().map(|l| l.slice_axis(0, half, size)).collect();
        level = combine(lo, hi);
        size = half;
    }
    let inits_wide: Vec<Array> = inits.iter().map(|i| i.broadcast_to(&rest)).collect();
    if n == 0 {
        return tree_unflatten(&def, inits_wide);
    }
    let reduced: Vec<Array> = level.iter().map(|l| l.reshape(rest.clone())).collect();
    tree_unflatten(&def, combine(inits_wide, reduced))
}
