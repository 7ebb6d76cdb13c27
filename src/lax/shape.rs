//! Shape primitives and their conveniences: `broadcast_in_dim`, `reshape`, `transpose`,
//! `pad` with interior padding, `slice`, `dynamic_slice`, the `*_in_dim` forms, `concatenate`,
//! `rev`, `squeeze`, `expand_dims`, `iota`, `full`, ...
//!
//! As in JAX's `lax`, nothing is promoted: `concatenate`, `pad` and the dynamic updates want
//! operands of one dtype (a Rust scalar padding value takes the operand's).

use crate::numpy as jnp;
use crate::{Array, DType, Dims, IntoArg};

#[track_caller]
fn norm_axis(op: &str, axis: i64, shape: &[usize]) -> usize {
    let r = shape.len() as i64;
    if axis < -r || axis >= r {
        panic!("lax.{op}: axis {axis} is out of bounds for an array of shape {shape:?}");
    }
    (if axis < 0 { axis + r } else { axis }) as usize
}

#[track_caller]
fn same_dtype(op: &str, arrays: &[&Array]) {
    if let Some(first) = arrays.first() {
        if let Some(other) = arrays.iter().find(|a| a.dtype() != first.dtype()) {
            panic!(
                "lax.{op}: operands must have one dtype, got {:?} and {:?} (shapes {:?} and {:?})",
                first.dtype(),
                other.dtype(),
                first.shape(),
                other.shape()
            );
        }
    }
}

/// A start index of the dynamic slices: a Rust integer or a 0-d integer array (traced under
/// `jit`).
fn index_array<'a>(i: impl IntoArg<'a>) -> Array {
    let a = i.into_arg().to_array().into_owned();
    if a.is_weak() {
        a.astype(DType::I64)
    } else {
        a
    }
}

/// `x` broadcast to `shape`, its axis `i` becoming axis `broadcast_dimensions[i]` (strictly
/// increasing; each of size 1 or the target's) (`lax.broadcast_in_dim`).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let y = lax::broadcast_in_dim(&x, &[2, 3], &[0]);
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
/// ```
#[track_caller]
pub fn broadcast_in_dim(x: &Array, shape: &[usize], broadcast_dimensions: &[usize]) -> Array {
    let dims = broadcast_dimensions;
    let ok = dims.len() == x.rank()
        && dims.windows(2).all(|w| w[0] < w[1])
        && dims.iter().all(|&d| d < shape.len())
        && dims
            .iter()
            .zip(x.shape())
            .all(|(&d, &s)| s == 1 || s == shape[d]);
    if !ok {
        panic!(
            "lax.broadcast_in_dim: cannot broadcast shape {:?} to {shape:?} with broadcast_dimensions {dims:?}",
            x.shape()
        );
    }
    let mut inter = vec![1usize; shape.len()];
    for (&d, &s) in dims.iter().zip(x.shape()) {
        inter[d] = s;
    }
    x.reshape(&inter).broadcast_to(shape)
}

/// `x` with new leading axes of `sizes` (`lax.broadcast`).
#[track_caller]
pub fn broadcast(x: &Array, sizes: &[usize]) -> Array {
    let mut shape = sizes.to_vec();
    shape.extend_from_slice(x.shape());
    let dims: Vec<usize> = (sizes.len()..shape.len()).collect();
    broadcast_in_dim(x, &shape, &dims)
}

/// `lax.broadcast_like(arr, like_arr)`: `arr` broadcast to `like_arr`'s shape, by numpy's
/// rules (`jnp.broadcast_to`).
#[track_caller]
pub fn broadcast_like(arr: &Array, like_arr: &Array) -> Array {
    arr.broadcast_to(like_arr.shape())
}

/// `lax.shape_as_value(shape)`: the shape as a vector of int32, or of int64 where a dim does
/// not fit in int32 (`lax_utils.int_dtype_for_shape`, as JAX's); `[]` gives an empty vector.
pub fn shape_as_value(shape: &[usize]) -> Array {
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let dtype = if dims.iter().all(|&d| d <= i64::from(i32::MAX)) {
        DType::I32
    } else {
        DType::I64
    };
    Array::from_vec(dims, &[shape.len()]).astype(dtype)
}

/// `lax.dtype(x)`: the dtype of an array; of a Rust scalar, the dtype JAX gives a Python
/// scalar of its kind (`float64`, `int64`, `bool`: jaxrs follows JAX with x64, and a Rust
/// scalar is weakly typed as a Python one is).
pub fn dtype<'a>(x: impl IntoArg<'a>) -> DType {
    x.into_arg().aval().dtype
}

/// `x` with leading size-1 axes up to `rank` (`lax.broadcast_to_rank`).
#[track_caller]
pub fn broadcast_to_rank(x: &Array, rank: usize) -> Array {
    if x.rank() >= rank {
        return x.clone();
    }
    let mut shape = vec![1usize; rank - x.rank()];
    shape.extend_from_slice(x.shape());
    x.reshape(&shape)
}

/// The shape `shapes` broadcast together (`lax.broadcast_shapes`).
#[track_caller]
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Vec<usize> {
    jnp::broadcast_shapes(shapes)
}

/// `0, 1, ...` of `dtype` along `dimension` of a new array of `shape`
/// (`lax.broadcasted_iota`).
#[track_caller]
pub fn broadcasted_iota(dtype: DType, shape: &[usize], dimension: usize) -> Array {
    if dimension >= shape.len() {
        panic!("lax.broadcasted_iota: dimension {dimension} is out of range for shape {shape:?}");
    }
    Array::iota(dtype, shape, dimension)
}

/// `0, 1, ..., size - 1` (`lax.iota`).
pub fn iota(dtype: DType, size: usize) -> Array {
    Array::iota(dtype, &[size], 0)
}

/// Axes `start_dimension..stop_dimension` merged into one (`lax.collapse`; `None`: to the
/// end).
#[track_caller]
pub fn collapse(x: &Array, start_dimension: usize, stop_dimension: Option<usize>) -> Array {
    let stop = stop_dimension.unwrap_or(x.rank());
    if start_dimension > stop || stop > x.rank() {
        panic!(
            "lax.collapse: dimensions {start_dimension}..{stop} are out of range for shape {:?}",
            x.shape()
        );
    }
    let s = x.shape();
    let mut shape: Vec<usize> = s[..start_dimension].to_vec();
    shape.push(s[start_dimension..stop].iter().product());
    shape.extend_from_slice(&s[stop..]);
    x.reshape(&shape)
}

/// Joins operands of one dtype along `dimension` (`lax.concatenate`).
#[track_caller]
pub fn concatenate(operands: &[&Array], dimension: usize) -> Array {
    same_dtype("concatenate", operands);
    let owned: Vec<Array> = operands.iter().map(|&a| a.clone()).collect();
    Array::concatenate(&owned, dimension as i64)
}

/// Operands of one shape and dtype stacked along a new `axis` (`lax.stack`).
#[track_caller]
pub fn stack(operands: &[&Array], axis: i64) -> Array {
    same_dtype("stack", operands);
    jnp::stack(operands, axis)
}

/// The slices of `x` along `axis`, that axis removed (`lax.unstack`).
#[track_caller]
pub fn unstack(x: &Array, axis: i64) -> Vec<Array> {
    jnp::unstack(x, axis)
}

/// Pieces of `sizes` (summing to the axis length) along `axis` (`lax.split`).
#[track_caller]
pub fn split(x: &Array, sizes: &[usize], axis: i64) -> Vec<Array> {
    let ax = norm_axis("split", axis, x.shape());
    let total: usize = sizes.iter().sum();
    if total != x.shape()[ax] {
        panic!(
            "lax.split: sizes {sizes:?} do not sum to the length {} of axis {ax} of {:?}",
            x.shape()[ax],
            x.shape()
        );
    }
    let mut start = 0;
    sizes
        .iter()
        .map(|&s| {
            let piece = x.slice_axis(ax as i64, start, start + s);
            start += s;
            piece
        })
        .collect()
}

/// `x` padded by `padding_value` (a 0-d array of `x`'s dtype, or a Rust scalar) per axis by
/// `(low, high, interior)`: `low`/`high` elements at the ends (negative: cropped), `interior`
/// between neighbours (`lax.pad`, `stablehlo.pad`).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1i32, 2, 3], &[3]);
/// assert_eq!(lax::pad(&x, 0, &[(1, -1, 1)]).to_vec::<i32>(), vec![0, 1, 0, 2, 0]);
/// ```
#[track_caller]
pub fn pad<'a>(
    x: &'a Array,
    padding_value: impl IntoArg<'a>,
    padding_config: &[(i64, i64, i64)],
) -> Array {
    if padding_config.len() != x.rank() {
        panic!(
            "lax.pad: {} (low, high, interior) triples for an array of shape {:?}",
            padding_config.len(),
            x.shape()
        );
    }
    let v = padding_value.into_arg().to_array().into_owned();
    if !v.is_weak() && v.dtype() != x.dtype() {
        panic!(
            "lax.pad: the padding value's dtype {:?} differs from the operand's {:?}",
            v.dtype(),
            x.dtype()
        );
    }
    let low: Vec<i64> = padding_config.iter().map(|c| c.0).collect();
    let high: Vec<i64> = padding_config.iter().map(|c| c.1).collect();
    let interior: Vec<i64> = padding_config.iter().map(|c| c.2).collect();
    x.pad(&low, &high, &interior, v)
}

/// `x` in a new shape (`lax.reshape`); with `dimensions`, the axes are first permuted by it.
#[track_caller]
pub fn reshape(x: &Array, new_sizes: impl Dims, dimensions: Option<&[usize]>) -> Array {
    match dimensions {
        Some(d) => x.transpose(d).reshape(new_sizes),
        None => x.reshape(new_sizes),
    }
}

/// Reverses `dimensions` (`lax.rev`).
#[track_caller]
pub fn rev(x: &Array, dimensions: &[usize]) -> Array {
    x.flip(dimensions)
}

/// The static slice `x[start:limit:strides]` (`lax.slice`; `strides` `None`: all 1).
#[track_caller]
pub fn slice(
    x: &Array,
    start_indices: &[usize],
    limit_indices: &[usize],
    strides: Option<&[usize]>,
) -> Array {
    x.slice(start_indices, limit_indices, strides.unwrap_or(&[]))
}

/// `x[start:limit:stride]` along `axis` (`lax.slice_in_dim`; `None` bounds are the ends;
/// negative ones count from the end).
#[track_caller]
pub fn slice_in_dim(
    x: &Array,
    start_index: Option<i64>,
    limit_index: Option<i64>,
    stride: usize,
    axis: i64,
) -> Array {
    let ax = norm_axis("slice_in_dim", axis, x.shape());
    let n = x.shape()[ax] as i64;
    let fix = |i: i64| (if i < 0 { i + n } else { i }).clamp(0, n) as usize;
    let s = start_index.map_or(0, fix);
    let l = limit_index.map_or(n as usize, fix);
    let mut start = vec![0; x.rank()];
    let mut limit = x.shape().to_vec();
    let mut strides = vec![1; x.rank()];
    start[ax] = s;
    limit[ax] = l.max(s);
    strides[ax] = stride;
    x.slice(&start, &limit, &strides)
}

/// Element `index` along `axis` (`lax.index_in_dim`), the axis kept as size 1 when
/// `keepdims`.
#[track_caller]
pub fn index_in_dim(x: &Array, index: i64, axis: i64, keepdims: bool) -> Array {
    let ax = norm_axis("index_in_dim", axis, x.shape());
    let n = x.shape()[ax] as i64;
    let i = if index < 0 { index + n } else { index };
    if !(0..n).contains(&i) {
        panic!(
            "lax.index_in_dim: index {index} is out of bounds for axis {ax} of {:?}",
            x.shape()
        );
    }
    let y = x.slice_axis(ax as i64, i as usize, i as usize + 1);
    if keepdims {
        y
    } else {
        y.squeeze([ax as i64])
    }
}

/// The slice of `slice_sizes` at `start_indices` (one per axis: a Rust integer or a 0-d
/// integer array, traced under `jit`; negative ones count from the end; clamped to stay in
/// bounds) (`lax.dynamic_slice`).
#[track_caller]
pub fn dynamic_slice(x: &Array, start_indices: &[Array], slice_sizes: &[usize]) -> Array {
    if start_indices.len() != x.rank() || slice_sizes.len() != x.rank() {
        panic!(
            "lax.dynamic_slice: {} start indices and {} sizes for an array of shape {:?}",
            start_indices.len(),
            slice_sizes.len(),
            x.shape()
        );
    }
    x.dynamic_slice(start_indices, slice_sizes)
}

/// [`dynamic_slice`] along one axis: `slice_size` elements from `start_index`
/// (`lax.dynamic_slice_in_dim`).
#[track_caller]
pub fn dynamic_slice_in_dim<'a>(
    x: &Array,
    start_index: impl IntoArg<'a>,
    slice_size: usize,
    axis: i64,
) -> Array {
    let ax = norm_axis("dynamic_slice_in_dim", axis, x.shape());
    let i = index_array(start_index);
    let zero = Array::zeros(&[], i.dtype());
    let starts: Vec<Array> = (0..x.rank())
        .map(|k| if k == ax { i.clone() } else { zero.clone() })
        .collect();
    let mut sizes = x.shape().to_vec();
    sizes[ax] = slice_size;
    x.dynamic_slice(&starts, &sizes)
}

/// Element `index` (traced or not) along `axis` (`lax.dynamic_index_in_dim`), the axis kept
/// as size 1 when `keepdims`.
#[track_caller]
pub fn dynamic_index_in_dim<'a>(
    x: &Array,
    index: impl IntoArg<'a>,
    axis: i64,
    keepdims: bool,
) -> Array {
    let ax = norm_axis("dynamic_index_in_dim", axis, x.shape());
    let y = dynamic_slice_in_dim(x, index, 1, ax as i64);
    if keepdims {
        y
    } else {
        y.squeeze([ax as i64])
    }
}

/// `x` with `update` (same dtype) written at `start_indices` (clamped so it fits)
/// (`lax.dynamic_update_slice`).
#[track_caller]
pub fn dynamic_update_slice(x: &Array, update: &Array, start_indices: &[Array]) -> Array {
    same_dtype("dynamic_update_slice", &[x, update]);
    if start_indices.len() != x.rank() || update.rank() != x.rank() {
        panic!(
            "lax.dynamic_update_slice: an update of shape {:?} and {} start indices for an array of shape {:?}",
            update.shape(),
            start_indices.len(),
            x.shape()
        );
    }
    x.dynamic_update_slice(update, start_indices)
}

/// [`dynamic_update_slice`] at `start_index` along one axis
/// (`lax.dynamic_update_slice_in_dim`).
#[track_caller]
pub fn dynamic_update_slice_in_dim<'a>(
    x: &Array,
    update: &Array,
    start_index: impl IntoArg<'a>,
    axis: i64,
) -> Array {
    let ax = norm_axis("dynamic_update_slice_in_dim", axis, x.shape());
    let i = index_array(start_index);
    let zero = Array::zeros(&[], i.dtype());
    let starts: Vec<Array> = (0..x.rank())
        .map(|k| if k == ax { i.clone() } else { zero.clone() })
        .collect();
    dynamic_update_slice(x, update, &starts)
}

/// `update` (without the indexed axis, or with it of size 1) written at `index` along `axis`
/// (`lax.dynamic_update_index_in_dim`).
#[track_caller]
pub fn dynamic_update_index_in_dim<'a>(
    x: &Array,
    update: &Array,
    index: impl IntoArg<'a>,
    axis: i64,
) -> Array {
    let ax = norm_axis("dynamic_update_index_in_dim", axis, x.shape());
    let update = if update.rank() == x.rank() - 1 {
        update.expand_dims(ax as i64)
    } else {
        update.clone()
    };
    dynamic_update_slice_in_dim(x, &update, index, ax as i64)
}

/// Inserts size-1 axes at `dimensions` (positions in the result) (`lax.expand_dims`).
#[track_caller]
pub fn expand_dims(x: &Array, dimensions: &[i64]) -> Array {
    jnp::expand_dims(x, dimensions)
}

/// Removes the size-1 axes `dimensions` (`lax.squeeze`).
#[track_caller]
pub fn squeeze(x: &Array, dimensions: &[i64]) -> Array {
    x.squeeze(dimensions)
}

/// Permutes the axes: output axis `i` is input axis `permutation[i]` (`lax.transpose`).
#[track_caller]
pub fn transpose(x: &Array, permutation: &[usize]) -> Array {
    if permutation.len() != x.rank() {
        panic!(
            "lax.transpose: permutation {permutation:?} for an array of shape {:?}",
            x.shape()
        );
    }
    x.transpose(permutation)
}

/// `x` repeated `reps[i]` times along axis `i` (`lax.tile`; `reps` has one entry per axis).
#[track_caller]
pub fn tile(x: &Array, reps: &[usize]) -> Array {
    if reps.len() != x.rank() {
        panic!(
            "lax.tile: reps {reps:?} for an array of shape {:?}",
            x.shape()
        );
    }
    jnp::tile(x, reps)
}

/// An array of `shape` filled with `fill_value` (`lax.full`; the dtype defaults to the fill
/// value's).
#[track_caller]
pub fn full<'a>(shape: &[usize], fill_value: impl IntoArg<'a>, dtype: Option<DType>) -> Array {
    jnp::full(shape, fill_value, dtype)
}

/// `fill_value` in `x`'s shape (or `shape`) and dtype (or `dtype`) (`lax.full_like`).
#[track_caller]
pub fn full_like<'a>(
    x: &Array,
    fill_value: impl IntoArg<'a>,
    dtype: Option<DType>,
    shape: Option<&[usize]>,
) -> Array {
    jnp::full(
        shape.unwrap_or(x.shape()),
        fill_value,
        Some(dtype.unwrap_or(x.dtype())),
    )
}

/// `lax.empty(shape, dtype)`: zeros (XLA has no uninitialised memory).
pub fn empty(shape: &[usize], dtype: DType) -> Array {
    Array::zeros(shape, dtype)
}

/// Elements of `src` at the index tuples `(idxs[0][n], idxs[1][n], ...)` over `axes` (one
/// 1-d integer array per axis, taken modulo the axis length) (`lax.index_take`): the result
/// is `[n]` followed by the other axes of `src`.
#[track_caller]
pub fn index_take(src: &Array, idxs: &[&Array], axes: &[usize]) -> Array {
    if idxs.len() != axes.len()
        || idxs
            .iter()
            .any(|i| i.rank() != 1 || i.size() != idxs[0].size())
    {
        panic!(
            "lax.index_take: {} index arrays (shapes {:?}) for axes {axes:?} of {:?}",
            idxs.len(),
            idxs.iter().map(|i| i.shape().to_vec()).collect::<Vec<_>>(),
            src.shape()
        );
    }
    let s = src.shape();
    // The indexed axes moved to the front and merged; the tuples become flat indices.
    let rest: Vec<usize> = (0..src.rank()).filter(|a| !axes.contains(a)).collect();
    let perm: Vec<usize> = axes.iter().copied().chain(rest.iter().copied()).collect();
    let moved = src.transpose(&perm);
    let mut merged = vec![axes.iter().map(|&a| s[a]).product::<usize>()];
    merged.extend(rest.iter().map(|&a| s[a]));
    let flat_src = moved.reshape(&merged);
    let mut flat: Option<Array> = None;
    let mut stride = 1i64;
    for (i, &a) in idxs.iter().zip(axes).rev() {
        let n = s[a] as i64;
        let i = i.astype(DType::I64).rem(n).add(n).rem(n);
        let term = i.mul(stride);
        flat = Some(match flat {
            None => term,
            Some(f) => f.add(&term),
        });
        stride *= n;
    }
    let flat = flat.unwrap_or_else(|| Array::zeros(&[0], DType::I64));
    flat_src.take_with(&flat, 0, crate::TakeMode::Clip)
}

/// The `(low, high)` padding per spatial axis of a convolution or pooling window
/// (`lax.padtype_to_pads`): `"VALID"` none, `"SAME"` (extra at the end) or `"SAME_LOWER"`
/// (extra at the start) enough to keep `ceil(in / stride)` outputs.
#[track_caller]
pub fn padtype_to_pads(
    in_shape: &[usize],
    window_shape: &[usize],
    window_strides: &[usize],
    padding: &str,
) -> Vec<(i64, i64)> {
    let upper = padding.to_ascii_uppercase();
    match upper.as_str() {
        "VALID" => vec![(0, 0); in_shape.len()],
        "SAME" | "SAME_LOWER" => in_shape
            .iter()
            .zip(window_shape)
            .zip(window_strides)
            .map(|((&n, &w), &s)| {
                let out = n.div_ceil(s) as i64;
                let total = ((out - 1) * s as i64 + w as i64 - n as i64).max(0);
                if upper == "SAME" {
                    (total / 2, total - total / 2)
                } else {
                    (total - total / 2, total / 2)
                }
            })
            .collect(),
        other => {
            panic!("lax.padtype_to_pads: unknown padding {other:?} (VALID, SAME or SAME_LOWER)")
        }
    }
}
