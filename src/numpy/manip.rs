//! Creating arrays, and changing their shape, order and layout: `reshape`, `concatenate`,
//! `stack` and its `vstack`/`hstack` family, `split`, `repeat`, `tile`, `roll`, `pad`,
//! `diag`, `meshgrid`, `where_`, ...
//!
//! Every function here is a composite over the public array API (`reshape`, `slice`,
//! `concatenate`, `take`, `pad`, `where_`, ...), so each is differentiable and batchable
//! wherever its pieces are. Positions that JAX computes from static arguments (the indices of
//! a `repeat`, a `pad` in `reflect` mode, a `delete`) are computed on the host here too and
//! become one gather.

use crate::{Array, Axes, DType, Dims, IntoArg, TakeMode};

/// JAX's default float with `jax_enable_x64`.
const DEFAULT_FLOAT: DType = DType::F64;
/// JAX's default integer with `jax_enable_x64`.
const DEFAULT_INT: DType = DType::I64;

// ---- helpers ---------------------------------------------------------------------------------

/// A Rust scalar or an array as an array (a scalar stays weakly typed, as a Python scalar).
fn arg_array<'a>(v: impl IntoArg<'a>) -> Array {
    v.into_arg().to_array().into_owned()
}

/// The dtype an array takes when no dtype is asked for: a weak scalar becomes its kind's
/// default (float64, int64, bool), as `jnp.asarray(2.5)` does.
fn canonical(x: &Array) -> Array {
    if !x.is_weak() {
        return x.clone();
    }
    let d = x.dtype();
    let target = if d.is_float() {
        DEFAULT_FLOAT
    } else if d.is_int() {
        DEFAULT_INT
    } else {
        d
    };
    x.astype(target)
}

/// The dtype `xs` promote to, a weak result taking its kind's default (JAX's
/// `result_type` with x64).
fn result_dtype(xs: &[&Array]) -> DType {
    let (d, weak) = xs[1..]
        .iter()
        .fold((xs[0].dtype(), xs[0].is_weak()), |(d, w), x| {
            DType::promote(d, w, x.dtype(), x.is_weak())
        });
    if !weak {
        d
    } else if d.is_float() {
        DEFAULT_FLOAT
    } else if d.is_int() {
        DEFAULT_INT
    } else {
        d
    }
}

#[track_caller]
pub(crate) fn norm_axis(op: &str, axis: i64, shape: &[usize]) -> usize {
    let r = shape.len() as i64;
    if axis < -r || axis >= r {
        panic!("jnp.{op}: axis {axis} is out of bounds for an array of shape {shape:?}");
    }
    (if axis < 0 { axis + r } else { axis }) as usize
}

/// The single axis of an `Axes` argument (`None` stays `None`).
#[track_caller]
fn one_axis(op: &str, axis: impl Axes) -> Option<i64> {
    match axis.axes() {
        None => None,
        Some(v) if v.len() == 1 => Some(v[0]),
        Some(v) => panic!("jnp.{op}: expected one axis, got {v:?}"),
    }
}

/// Gathers positions `idx` (static, in range) along `axis`.
#[track_caller]
fn take_static(x: &Array, idx: &[i64], axis: usize) -> Array {
    let i = Array::from_vec(idx.to_vec(), &[idx.len()]);
    x.take_with(&i, axis as i64, TakeMode::Clip)
}

/// `x[start:end]` along `axis`.
#[track_caller]
fn slice_in(x: &Array, axis: usize, start: usize, end: usize) -> Array {
    x.slice_axis(axis as i64, start, end)
}

/// A shape of `rank` ones with `n` at `axis`: the shape a 1-d array takes to broadcast
/// along `axis`.
fn along(rank: usize, axis: usize, n: usize) -> Vec<usize> {
    let mut s = vec![1; rank];
    s[axis] = n;
    s
}

/// One integer or a list of them (`axis=1` or `axis=(0, 2)`, `reps=3` or `reps=(2, 1)`).
pub trait Ints {
    fn ints(self) -> Vec<i64>;
}

macro_rules! ints_impls {
    ($($t:ty),*) => {$(
        impl Ints for $t {
            fn ints(self) -> Vec<i64> {
                vec![self as i64]
            }
        }
        impl Ints for &[$t] {
            fn ints(self) -> Vec<i64> {
                self.iter().map(|&x| x as i64).collect()
            }
        }
        impl<const N: usize> Ints for [$t; N] {
            fn ints(self) -> Vec<i64> {
                self.iter().map(|&x| x as i64).collect()
            }
        }
        impl<const N: usize> Ints for &[$t; N] {
            fn ints(self) -> Vec<i64> {
                self.iter().map(|&x| x as i64).collect()
            }
        }
        impl Ints for Vec<$t> {
            fn ints(self) -> Vec<i64> {
                self.into_iter().map(|x| x as i64).collect()
            }
        }
        impl Ints for &Vec<$t> {
            fn ints(self) -> Vec<i64> {
                self.iter().map(|&x| x as i64).collect()
            }
        }
    )*};
}
ints_impls!(i32, i64, usize);

/// A Rust number given where JAX takes a Python scalar that also decides a dtype
/// (`jnp.arange(5)` is int64, `jnp.arange(5.0)` float64).
pub trait Scalar: Copy {
    fn to_f64(self) -> f64;
    /// Whether the number is an integer type (then the default dtype is int64).
    fn is_integer() -> bool;
}

macro_rules! scalar_impls {
    ($int:expr; $($t:ty),*) => {$(
        impl Scalar for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn is_integer() -> bool {
                $int
            }
        }
    )*};
}
scalar_impls!(true; i32, i64, u32, usize);
scalar_impls!(false; f32, f64);

// ---- creation ----------------------------------------------------------------------------------

/// An array of zeros (`jnp.zeros`); the dtype defaults to float64.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let z = jnp::zeros(&[2, 3], None);
/// assert_eq!((z.shape(), z.dtype()), (&[2, 3][..], DType::F64));
/// ```
pub fn zeros(shape: &[usize], dtype: Option<DType>) -> Array {
    Array::zeros(shape, dtype.unwrap_or(DEFAULT_FLOAT))
}

/// An array of ones (`jnp.ones`); the dtype defaults to float64.
pub fn ones(shape: &[usize], dtype: Option<DType>) -> Array {
    Array::ones(shape, dtype.unwrap_or(DEFAULT_FLOAT))
}

/// `jnp.empty`: XLA has no uninitialised memory, so this is [`zeros`], as in JAX.
pub fn empty(shape: &[usize], dtype: Option<DType>) -> Array {
    zeros(shape, dtype)
}

/// An array of `shape` filled with `fill_value` (`jnp.full`); the dtype defaults to the fill
/// value's (float64 or int64 for a Rust scalar). An array `fill_value` is broadcast.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = jnp::full(&[2], 7, None);
/// assert_eq!((x.dtype(), x.to_vec::<i64>()), (DType::I64, vec![7, 7]));
/// ```
#[track_caller]
pub fn full<'a>(shape: &[usize], fill_value: impl IntoArg<'a>, dtype: Option<DType>) -> Array {
    let v = arg_array(fill_value);
    let v = match dtype {
        Some(d) => v.astype(d),
        None => canonical(&v),
    };
    v.broadcast_to(shape)
}

/// Zeros with `x`'s shape and (unless given) dtype (`jnp.zeros_like`).
pub fn zeros_like(x: &Array, dtype: Option<DType>) -> Array {
    Array::zeros(x.shape(), dtype.unwrap_or(x.dtype()))
}

/// Ones with `x`'s shape and (unless given) dtype (`jnp.ones_like`).
pub fn ones_like(x: &Array, dtype: Option<DType>) -> Array {
    Array::ones(x.shape(), dtype.unwrap_or(x.dtype()))
}

/// `jnp.empty_like`: [`zeros_like`].
pub fn empty_like(x: &Array, dtype: Option<DType>) -> Array {
    zeros_like(x, dtype)
}

/// `fill_value` in `x`'s shape and (unless given) dtype (`jnp.full_like`).
#[track_caller]
pub fn full_like<'a>(x: &Array, fill_value: impl IntoArg<'a>, dtype: Option<DType>) -> Array {
    full(x.shape(), fill_value, Some(dtype.unwrap_or(x.dtype())))
}

/// `jnp.array(x, dtype)`: a copy of `x`, converted when `dtype` is given (arrays are built
/// from Rust data with [`Array::from_vec`]).
pub fn array(x: &Array, dtype: Option<DType>) -> Array {
    asarray(x, dtype)
}

/// `jnp.asarray(x, dtype)`: `x`, converted when `dtype` is given.
pub fn asarray(x: &Array, dtype: Option<DType>) -> Array {
    match dtype {
        Some(d) if d != x.dtype() => x.astype(d),
        _ => canonical(x),
    }
}

/// `jnp.copy`: arrays are immutable, so the same values.
pub fn copy(x: &Array) -> Array {
    x.clone()
}

/// `start, start + step, ...` below `stop` (`jnp.arange(start, stop, step, dtype)`); with
/// `stop` `None`, `0..start`. The dtype defaults to int64 for integer arguments and float64
/// otherwise.
///
/// ```
/// use jaxrs::numpy as jnp;
///
/// assert_eq!(jnp::arange(4, None, None, None).to_vec::<i64>(), vec![0, 1, 2, 3]);
/// assert_eq!(jnp::arange(1.0, Some(2.0), Some(0.5), None).to_vec::<f64>(), vec![1.0, 1.5]);
/// ```
#[track_caller]
pub fn arange<S: Scalar>(
    start: S,
    stop: Option<S>,
    step: Option<S>,
    dtype: Option<DType>,
) -> Array {
    let (lo, hi) = match stop {
        Some(s) => (start.to_f64(), s.to_f64()),
        None => (0.0, start.to_f64()),
    };
    let step = step.map_or(1.0, Scalar::to_f64);
    let default = if S::is_integer() {
        DEFAULT_INT
    } else {
        DEFAULT_FLOAT
    };
    Array::arange(lo, hi, step, dtype.unwrap_or(default))
}

/// `num` evenly spaced values from `start` to `stop` along `axis` 0 (`jnp.linspace`), `stop`
/// included when `endpoint`. `start` and `stop` may be arrays (then the result has their
/// broadcast shape after the new axis) and are differentiable. Computed as JAX computes it,
/// `start * (1 - t) + stop * t`, in the dtype's inexact type (float64 for integers, whose
/// values are then floored).
///
/// ```
/// use jaxrs::numpy as jnp;
///
/// let x = jnp::linspace(0.0, 1.0, 5, true, None);
/// assert_eq!(x.to_vec::<f64>(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
/// ```
#[track_caller]
pub fn linspace<'a>(
    start: impl IntoArg<'a>,
    stop: impl IntoArg<'a>,
    num: usize,
    endpoint: bool,
    dtype: Option<DType>,
) -> Array {
    let (start, stop) = (arg_array(start), arg_array(stop));
    linspace_arrays(&start, &stop, num, endpoint, dtype, 0)
}

/// The inexact dtype JAX computes an integer or bool dtype's values in.
fn inexact(d: DType) -> DType {
    if d.is_float() {
        d
    } else {
        DEFAULT_FLOAT
    }
}

#[track_caller]
fn linspace_arrays(
    start: &Array,
    stop: &Array,
    num: usize,
    endpoint: bool,
    dtype: Option<DType>,
    axis: usize,
) -> Array {
    let dtype = dtype.unwrap_or_else(|| inexact(result_dtype(&[start, stop])));
    let cdt = inexact(dtype);
    let (start, stop) = (start.astype(cdt), stop.astype(cdt));
    let bounds = broadcast_shapes(&[start.shape(), stop.shape()]);
    let (start, stop) = (start.broadcast_to(&bounds), stop.broadcast_to(&bounds));
    let mut with_axis = bounds.clone();
    with_axis.insert(axis, 1);
    let div = if endpoint { num.saturating_sub(1) } else { num };
    let out = if num > 1 {
        let step = Array::iota(cdt, &along(with_axis.len(), axis, div), axis)
            / Array::full(&[], div as f64, cdt);
        let out = start.reshape(&with_axis) * (1.0 - &step) + stop.reshape(&with_axis) * &step;
        if endpoint {
            Array::concatenate(&[out, stop.reshape(&with_axis)], axis as i64)
        } else {
            out
        }
    } else if num == 1 {
        start.reshape(&with_axis)
    } else {
        let mut s = bounds.clone();
        s.insert(axis, 0);
        Array::zeros(&s, cdt)
    };
    let out = if dtype.is_float() { out } else { out.floor() };
    out.astype(dtype)
}

/// `base ** linspace(start, stop, num, endpoint)` (`jnp.logspace`).
#[track_caller]
pub fn logspace<'a>(
    start: impl IntoArg<'a>,
    stop: impl IntoArg<'a>,
    num: usize,
    endpoint: bool,
    base: f64,
    dtype: Option<DType>,
) -> Array {
    let (start, stop) = (arg_array(start), arg_array(stop));
    let lin = linspace_arrays(&start, &stop, num, endpoint, dtype.map(inexact), 0);
    let y = Array::full(&[], base, lin.dtype()).pow(&lin);
    match dtype {
        Some(d) => y.astype(d),
        None => y,
    }
}

/// Values spaced evenly on a log scale from `start` to `stop`, both included when `endpoint`
/// (`jnp.geomspace`; the ends are exact, and negative ranges keep their sign).
#[track_caller]
pub fn geomspace<'a>(
    start: impl IntoArg<'a>,
    stop: impl IntoArg<'a>,
    num: usize,
    endpoint: bool,
    dtype: Option<DType>,
) -> Array {
    let (start, stop) = (arg_array(start), arg_array(stop));
    let dtype = dtype.unwrap_or_else(|| inexact(result_dtype(&[&start, &stop])));
    let cdt = inexact(dtype);
    let (start, stop) = (start.astype(cdt), stop.astype(cdt));
    let sign = start.sign();
    let lo = (&start / &sign).log() / std::f64::consts::LN_10;
    let hi = (&stop / &sign).log() / std::f64::consts::LN_10;
    let lin = linspace_arrays(&lo, &hi, num, endpoint, Some(cdt), 0);
    let mut res = &sign * Array::full(&[], 10.0, cdt).pow(&lin);
    let rest: Vec<usize> = res.shape()[1..].to_vec();
    if num > 0 {
        let first = start.broadcast_to(&rest).expand_dims(0);
        res = Array::concatenate(&[first, slice_in(&res, 0, 1, num)], 0);
    }
    if num > 1 && endpoint {
        let last = stop.broadcast_to(&rest).expand_dims(0);
        res = Array::concatenate(&[slice_in(&res, 0, 0, num - 1), last], 0);
    }
    res.astype(dtype)
}

/// An `n x m` array with ones on the `k`-th diagonal (`jnp.eye`; `m` defaults to `n`, the
/// dtype to float64).
///
/// ```
/// use jaxrs::numpy as jnp;
///
/// assert_eq!(jnp::eye(2, Some(3), 1, None).to_vec::<f64>(), vec![0., 1., 0., 0., 0., 1.]);
/// ```
pub fn eye(n: usize, m: Option<usize>, k: i64, dtype: Option<DType>) -> Array {
    let m = m.unwrap_or(n);
    let values: Vec<f64> = (0..n * m)
        .map(|i| ((((i % m) as i64) - ((i / m) as i64)) == k) as u8 as f64)
        .collect();
    Array::from_f64s(&values, &[n, m], dtype.unwrap_or(DEFAULT_FLOAT))
}

/// The `n x n` identity (`jnp.identity`).
pub fn identity(n: usize, dtype: Option<DType>) -> Array {
    eye(n, None, 0, dtype)
}

/// Ones at and below the `k`-th diagonal of an `n x m` array (`jnp.tri`; the dtype defaults
/// to float32, as in JAX).
pub fn tri(n: usize, m: Option<usize>, k: i64, dtype: Option<DType>) -> Array {
    let m = m.unwrap_or(n);
    let values: Vec<f64> = (0..n * m)
        .map(|i| (((i % m) as i64) <= ((i / m) as i64) + k) as u8 as f64)
        .collect();
    Array::from_f64s(&values, &[n, m], dtype.unwrap_or(DType::F32))
}

/// The lower triangle of the last two axes (`jnp.tril`); see [`Array::tril`].
#[track_caller]
pub fn tril(x: &Array, k: i64) -> Array {
    x.tril(k)
}

/// The upper triangle of the last two axes (`jnp.triu`); see [`Array::triu`].
#[track_caller]
pub fn triu(x: &Array, k: i64) -> Array {
    x.triu(k)
}

/// `jnp.diag`: of a 1-d `v`, the square matrix with `v` on its `k`-th diagonal; of a 2-d
/// `v`, its `k`-th diagonal.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let v = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// assert_eq!(jnp::diag(&v, 0).to_vec::<f32>(), vec![1.0, 0.0, 0.0, 2.0]);
/// assert_eq!(jnp::diag(&jnp::diag(&v, 1), 1).to_vec::<f32>(), vec![1.0, 2.0]);
/// ```
#[track_caller]
pub fn diag(v: &Array, k: i64) -> Array {
    match v.rank() {
        1 => {
            let len = v.shape()[0];
            let n = len + k.unsigned_abs() as usize;
            let rows = Array::iota(DType::I64, &[n, n], 0);
            let cols = Array::iota(DType::I64, &[n, n], 1);
            let on = cols.sub(&rows).eq(k);
            // Row i of the diagonal holds v[i] when k >= 0 and v[j] (its column) otherwise.
            let padded = v.pad(&[0], &[k.unsigned_abs() as i64], &[], 0i32);
            let spread = if k >= 0 {
                padded.reshape([n as i64, 1])
            } else {
                padded.reshape([1, n as i64])
            };
            where_(
                &on,
                spread.broadcast_to(&[n, n]),
                Array::zeros(&[], v.dtype()),
            )
        }
        2 => diagonal(v, k, 0, 1),
        r => panic!(
            "jnp.diag: the input must be 1-d or 2-d, got rank {r} {:?}",
            v.shape()
        ),
    }
}

/// `jnp.diagflat`: the square matrix with the flattened `v` on its `k`-th diagonal.
#[track_caller]
pub fn diagflat(v: &Array, k: i64) -> Array {
    diag(&ravel(v), k)
}

/// The `offset`-th diagonal over `axis1` and `axis2` (`jnp.diagonal`): those axes are
/// removed and the diagonal becomes the last axis.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::arange(0.0, 6.0, 1.0, DType::F32).reshape([2, 3]);
/// assert_eq!(jnp::diagonal(&x, 1, 0, 1).to_vec::<f32>(), vec![1.0, 5.0]);
/// ```
#[track_caller]
pub fn diagonal(x: &Array, offset: i64, axis1: i64, axis2: i64) -> Array {
    let a1 = norm_axis("diagonal", axis1, x.shape());
    let a2 = norm_axis("diagonal", axis2, x.shape());
    if a1 == a2 {
        panic!("jnp.diagonal: axis1 and axis2 must differ, got {axis1} and {axis2}");
    }
    let y = moveaxis(x, [a1 as i64, a2 as i64], [-2i64, -1]);
    let r = y.rank();
    let (n, m) = (y.shape()[r - 2] as i64, y.shape()[r - 1] as i64);
    let len = if offset >= 0 {
        n.min(m - offset).max(0)
    } else {
        (n + offset).min(m).max(0)
    } as usize;
    let (r0, c0) = if offset >= 0 {
        (0, offset.min(m) as usize)
    } else {
        ((-offset).min(n) as usize, 0)
    };
    let sub = slice_in(&slice_in(&y, r - 2, r0, r0 + len), r - 1, c0, c0 + len);
    let mut flat: Vec<i64> = y.shape()[..r - 2].iter().map(|&d| d as i64).collect();
    flat.push((len * len) as i64);
    let flat_sub = sub.reshape(&flat);
    // Every (len + 1)-th element of the flattened square is its diagonal.
    let mut start = vec![0; r - 1];
    let mut limit: Vec<usize> = flat_sub.shape().to_vec();
    let mut strides = vec![1; r - 1];
    start[r - 2] = 0;
    limit[r - 2] = len * len;
    strides[r - 2] = len + 1;
    if len == 0 {
        let mut s: Vec<usize> = y.shape()[..r - 2].to_vec();
        s.push(0);
        return Array::zeros(&s, x.dtype());
    }
    flat_sub.slice(&start, &limit, &strides)
}

/// `jnp.diag_indices(n, ndim)`: `ndim` copies of `0..n`, the indices of a main diagonal.
pub fn diag_indices(n: usize, ndim: usize) -> Vec<Array> {
    (0..ndim)
        .map(|_| Array::iota(DEFAULT_INT, &[n], 0))
        .collect()
}

/// `jnp.diag_indices_from(x)`: the main diagonal's indices of an array whose axes all have
/// one length.
#[track_caller]
pub fn diag_indices_from(x: &Array) -> Vec<Array> {
    let s = x.shape();
    if s.len() < 2 || s.iter().any(|&d| d != s[0]) {
        panic!("jnp.diag_indices_from: every axis must have the same length, got {s:?}");
    }
    diag_indices(s[0], s.len())
}

/// `jnp.fill_diagonal(a, val, inplace=False)`: `a` with its main diagonal (every index
/// equal) set to `val`, an array `val` repeated along it. As in JAX, `wrap` changes nothing.
#[track_caller]
pub fn fill_diagonal<'a>(a: &Array, val: impl IntoArg<'a>, wrap: bool) -> Array {
    let _ = wrap;
    let s = a.shape().to_vec();
    if s.len() < 2 || (s.len() > 2 && s.iter().any(|&d| d != s[0])) {
        panic!(
            "jnp.fill_diagonal: needs a 2-d array or one whose axes all have one length, got {s:?}"
        );
    }
    let n = *s.iter().min().unwrap();
    let mut on = Array::iota(DType::I64, &s, 0).eq(Array::iota(DType::I64, &s, 1));
    for k in 2..s.len() {
        on = on.logical_and(Array::iota(DType::I64, &s, 0).eq(Array::iota(DType::I64, &s, k)));
    }
    let val = arg_array(val).astype(a.dtype());
    if val.rank() == 0 {
        return where_(&on, &val, a);
    }
    // The values repeated to the diagonal's length, laid along the first axis.
    let flat = ravel(&val);
    let reps: Vec<i64> = (0..n).map(|i| (i % flat.size()) as i64).collect();
    let d = take_static(&flat, &reps, 0).pad(&[0], &[(s[0] - n) as i64], &[], 0i32);
    let spread = d.reshape(along(s.len(), 0, s[0])).broadcast_to(&s);
    where_(&on, &spread, a)
}

fn triangle_indices(n: usize, k: i64, m: usize, lower: bool) -> (Array, Array) {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for i in 0..n as i64 {
        for j in 0..m as i64 {
            if (lower && j <= i + k) || (!lower && j >= i + k) {
                rows.push(i);
                cols.push(j);
            }
        }
    }
    let len = rows.len();
    (Array::from_vec(rows, &[len]), Array::from_vec(cols, &[len]))
}

/// The row and column indices of the lower triangle of an `n x m` array, at and below the
/// `k`-th diagonal, in row-major order (`jnp.tril_indices`).
pub fn tril_indices(n: usize, k: i64, m: Option<usize>) -> (Array, Array) {
    triangle_indices(n, k, m.unwrap_or(n), true)
}

/// The indices of the upper triangle, at and above the `k`-th diagonal (`jnp.triu_indices`).
pub fn triu_indices(n: usize, k: i64, m: Option<usize>) -> (Array, Array) {
    triangle_indices(n, k, m.unwrap_or(n), false)
}

/// [`tril_indices`] for the last two axes of `x` (`jnp.tril_indices_from`).
#[track_caller]
pub fn tril_indices_from(x: &Array, k: i64) -> (Array, Array) {
    let r = x.rank();
    if r < 2 {
        panic!(
            "jnp.tril_indices_from: needs at least 2 axes, got {:?}",
            x.shape()
        );
    }
    triangle_indices(x.shape()[r - 2], k, x.shape()[r - 1], true)
}

/// [`triu_indices`] for the last two axes of `x` (`jnp.triu_indices_from`).
#[track_caller]
pub fn triu_indices_from(x: &Array, k: i64) -> (Array, Array) {
    let r = x.rank();
    if r < 2 {
        panic!(
            "jnp.triu_indices_from: needs at least 2 axes, got {:?}",
            x.shape()
        );
    }
    triangle_indices(x.shape()[r - 2], k, x.shape()[r - 1], false)
}

/// The indices where `mask_func(ones((n, n)), k)` is nonzero (`jnp.mask_indices`), e.g.
/// `mask_indices(3, jnp::triu, 0)`. The mask is read, so this runs outside `jit` (as in
/// JAX).
pub fn mask_indices(n: usize, mask_func: impl Fn(&Array, i64) -> Array, k: i64) -> (Array, Array) {
    let mask = mask_func(&Array::ones(&[n, n], DEFAULT_INT), k).to_f64_vec();
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for (i, &v) in mask.iter().enumerate() {
        if v != 0.0 {
            rows.push((i / n) as i64);
            cols.push((i % n) as i64);
        }
    }
    let len = rows.len();
    (Array::from_vec(rows, &[len]), Array::from_vec(cols, &[len]))
}

/// `jnp.indices(dimensions, dtype)`: a `[len(dimensions), *dimensions]` array whose `i`-th
/// slice counts along axis `i` (the dense grid; `sparse=True` is [`ix_`] of `arange`s).
pub fn indices(dimensions: &[usize], dtype: Option<DType>) -> Array {
    let d = dtype.unwrap_or(DEFAULT_INT);
    let grids: Vec<Array> = (0..dimensions.len())
        .map(|i| Array::iota(d, dimensions, i))
        .collect();
    if grids.is_empty() {
        return Array::zeros(&[0], d);
    }
    Array::stack(&grids, 0)
}

/// The order of [`meshgrid`]'s outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Indexing {
    /// Cartesian (`indexing="xy"`, the default): the first two axes swapped.
    #[default]
    Xy,
    /// Matrix (`indexing="ij"`).
    Ij,
}

/// Coordinate grids from 1-d coordinate arrays (`jnp.meshgrid`); with `sparse`, each output
/// keeps size 1 on the other axes.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let (x, y) = (Array::from_vec(vec![1i32, 2, 3], &[3]), Array::from_vec(vec![5i32, 6], &[2]));
/// let g = jnp::meshgrid(&[&x, &y], jnp::Indexing::Xy, false);
/// assert_eq!(g[0].shape(), &[2, 3]);
/// assert_eq!(g[1].to_vec::<i32>(), vec![5, 5, 5, 6, 6, 6]);
/// ```
#[track_caller]
pub fn meshgrid(xs: &[&Array], indexing: Indexing, sparse: bool) -> Vec<Array> {
    let n = xs.len();
    let lens: Vec<usize> = xs.iter().map(|x| x.size()).collect();
    let pos = |i: usize| -> usize {
        if indexing == Indexing::Xy && n >= 2 && i < 2 {
            1 - i
        } else {
            i
        }
    };
    let mut full_shape = vec![0; n];
    for (i, &l) in lens.iter().enumerate() {
        full_shape[pos(i)] = l;
    }
    xs.iter()
        .enumerate()
        .map(|(i, x)| {
            let y = ravel(x).reshape(along(n, pos(i), lens[i]));
            if sparse {
                y
            } else {
                y.broadcast_to(&full_shape)
            }
        })
        .collect()
}

/// An open mesh from 1-d index arrays (`jnp.ix_`): array `i` reshaped to have its length on
/// axis `i` and size 1 elsewhere.
#[track_caller]
pub fn ix_(args: &[&Array]) -> Vec<Array> {
    let n = args.len();
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            if a.rank() != 1 {
                panic!("jnp.ix_: arguments must be 1-d, got {:?}", a.shape());
            }
            a.reshape(along(n, i, a.size()))
        })
        .collect()
}

/// The Vandermonde matrix of a 1-d `x` (`jnp.vander`): columns `x^(n-1), ..., x^0`, or
/// increasing powers; `n` defaults to `len(x)`.
#[track_caller]
pub fn vander(x: &Array, n: Option<usize>, increasing: bool) -> Array {
    if x.rank() != 1 {
        panic!("jnp.vander: x must be 1-d, got {:?}", x.shape());
    }
    let n = n.unwrap_or(x.size());
    let powers: Vec<i64> = (0..n as i64)
        .map(|j| if increasing { j } else { n as i64 - 1 - j })
        .collect();
    let p = Array::from_vec(powers, &[1, n]);
    x.expand_dims(1).pow(&p)
}

// ---- shape queries and reshaping --------------------------------------------------------------

/// `jnp.shape(x)`.
pub fn shape(x: &Array) -> Vec<usize> {
    x.shape().to_vec()
}

/// `jnp.ndim(x)`, the number of axes.
pub fn ndim(x: &Array) -> usize {
    x.rank()
}

/// `jnp.size(x)`, the number of elements.
pub fn size(x: &Array) -> usize {
    x.size()
}

/// `x` with a new shape of the same size; one entry may be `-1`, inferred (`jnp.reshape`).
#[track_caller]
pub fn reshape(x: &Array, shape: impl Dims) -> Array {
    x.reshape(shape)
}

/// The elements in one axis, row-major (`jnp.ravel`).
#[track_caller]
pub fn ravel(x: &Array) -> Array {
    x.reshape([-1])
}

/// Permutes the axes (`jnp.transpose`): `None` reverses them.
#[track_caller]
pub fn transpose(x: &Array, axes: impl Axes) -> Array {
    match axes.axes() {
        None => x.t(),
        Some(p) => x.transpose(p),
    }
}

/// `jnp.permute_dims(x, axes)` (the array API's name for [`transpose`]).
#[track_caller]
pub fn permute_dims(x: &Array, axes: impl Dims) -> Array {
    x.transpose(axes)
}

/// The last two axes swapped (`jnp.matrix_transpose`).
#[track_caller]
pub fn matrix_transpose(x: &Array) -> Array {
    if x.rank() < 2 {
        panic!(
            "jnp.matrix_transpose: needs at least 2 axes, got {:?}",
            x.shape()
        );
    }
    x.swap_axes(-1, -2)
}

/// Two axes swapped (`jnp.swapaxes`).
#[track_caller]
pub fn swapaxes(x: &Array, axis1: i64, axis2: i64) -> Array {
    x.swap_axes(axis1, axis2)
}

/// Axes `source` moved to positions `destination`, the others keeping their order
/// (`jnp.moveaxis`).
#[track_caller]
pub fn moveaxis(x: &Array, source: impl Ints, destination: impl Ints) -> Array {
    let (src, dst) = (source.ints(), destination.ints());
    if src.len() != dst.len() {
        panic!("jnp.moveaxis: source {src:?} and destination {dst:?} differ in length");
    }
    let src: Vec<usize> = src
        .iter()
        .map(|&a| norm_axis("moveaxis", a, x.shape()))
        .collect();
    let dst: Vec<usize> = dst
        .iter()
        .map(|&a| norm_axis("moveaxis", a, x.shape()))
        .collect();
    let mut perm: Vec<i64> = (0..x.rank())
        .filter(|a| !src.contains(a))
        .map(|a| a as i64)
        .collect();
    let mut pairs: Vec<(usize, usize)> = dst.into_iter().zip(src).collect();
    pairs.sort_unstable();
    for (d, s) in pairs {
        perm.insert(d, s as i64);
    }
    x.transpose(perm)
}

/// `jnp.rollaxis(x, axis, start)`: axis `axis` moved to sit before position `start`.
#[track_caller]
pub fn rollaxis(x: &Array, axis: i64, start: i64) -> Array {
    let r = x.rank() as i64;
    let a = norm_axis("rollaxis", axis, x.shape()) as i64;
    let s = if start < 0 { start + r } else { start };
    if !(0..=r).contains(&s) {
        panic!(
            "jnp.rollaxis: start {start} is out of range for shape {:?}",
            x.shape()
        );
    }
    let s = if a < s { s - 1 } else { s };
    moveaxis(x, a, s)
}

/// Inserts size-1 axes at `axis` (one or several, positions in the result)
/// (`jnp.expand_dims`).
#[track_caller]
pub fn expand_dims(x: &Array, axis: impl Ints) -> Array {
    let axes = axis.ints();
    let out_rank = x.rank() + axes.len();
    let probe = vec![0; out_rank];
    let mut norm: Vec<usize> = axes
        .iter()
        .map(|&a| norm_axis("expand_dims", a, &probe))
        .collect();
    norm.sort_unstable();
    if norm.windows(2).any(|w| w[0] == w[1]) {
        panic!("jnp.expand_dims: repeated axis in {axes:?}");
    }
    let mut shape: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    for a in norm {
        shape.insert(a, 1);
    }
    x.reshape(shape)
}

/// Removes size-1 axes: the given ones, or every one with `None` (`jnp.squeeze`).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::zeros(&[1, 3, 1], DType::F32);
/// assert_eq!(jnp::squeeze(&x, None).shape(), &[3]);
/// assert_eq!(jnp::squeeze(&x, 0).shape(), &[3, 1]);
/// ```
#[track_caller]
pub fn squeeze(x: &Array, axis: impl Axes) -> Array {
    match axis.axes() {
        Some(a) => x.squeeze(a),
        None => {
            let ones: Vec<i64> = (0..x.rank())
                .filter(|&i| x.shape()[i] == 1)
                .map(|i| i as i64)
                .collect();
            x.squeeze(ones)
        }
    }
}

/// `x` with at least one axis (`jnp.atleast_1d`).
#[track_caller]
pub fn atleast_1d(x: &Array) -> Array {
    if x.rank() == 0 {
        x.reshape([1])
    } else {
        x.clone()
    }
}

/// `x` with at least two axes, a 1-d array becoming one row (`jnp.atleast_2d`).
#[track_caller]
pub fn atleast_2d(x: &Array) -> Array {
    match x.rank() {
        0 => x.reshape([1, 1]),
        1 => x.reshape([1, x.size() as i64]),
        _ => x.clone(),
    }
}

/// `x` with at least three axes: `[n]` becomes `[1, n, 1]`, `[n, m]` becomes `[n, m, 1]`
/// (`jnp.atleast_3d`).
#[track_caller]
pub fn atleast_3d(x: &Array) -> Array {
    match x.rank() {
        0 => x.reshape([1, 1, 1]),
        1 => x.reshape([1, x.size() as i64, 1]),
        2 => x.expand_dims(2),
        _ => x.clone(),
    }
}

/// `x` broadcast to `shape` by numpy's rules (`jnp.broadcast_to`).
#[track_caller]
pub fn broadcast_to(x: &Array, shape: &[usize]) -> Array {
    x.broadcast_to(shape)
}

/// The shape numpy's broadcasting gives `shapes` together (`jnp.broadcast_shapes`).
#[track_caller]
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Vec<usize> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[rank - s.len() + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                panic!("jnp.broadcast_shapes: incompatible shapes {shapes:?}");
            }
        }
    }
    out
}

/// The arrays broadcast against each other (`jnp.broadcast_arrays`).
#[track_caller]
pub fn broadcast_arrays(xs: &[&Array]) -> Vec<Array> {
    let shapes: Vec<&[usize]> = xs.iter().map(|x| x.shape()).collect();
    let s = broadcast_shapes(&shapes);
    xs.iter().map(|x| x.broadcast_to(&s)).collect()
}

/// `jnp.resize(x, new_shape)`: the flattened elements repeated (or cut) to fill `new_shape`.
#[track_caller]
pub fn resize(x: &Array, new_shape: &[usize]) -> Array {
    let flat = ravel(x);
    let total: usize = new_shape.iter().product();
    if flat.size() == 0 {
        return Array::zeros(new_shape, x.dtype());
    }
    let reps = total.div_ceil(flat.size());
    let tiled = tile(&flat, reps);
    slice_in(&tiled, 0, 0, total).reshape(new_shape)
}

// ---- joining and splitting -------------------------------------------------------------------

/// Joins arrays along an existing `axis` (`None`: flattened first), promoting their dtypes
/// (`jnp.concatenate`).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let (a, b) = (Array::zeros(&[2, 2], DType::F32), Array::ones(&[1, 2], DType::F32));
/// assert_eq!(jnp::concatenate(&[&a, &b], 0).shape(), &[3, 2]);
/// ```
#[track_caller]
pub fn concatenate(arrays: &[&Array], axis: impl Axes) -> Array {
    if arrays.is_empty() {
        panic!("jnp.concatenate: need at least one array");
    }
    match one_axis("concatenate", axis) {
        None => {
            let flat: Vec<Array> = arrays.iter().map(|a| ravel(a)).collect();
            Array::concatenate(&flat, 0)
        }
        Some(ax) => {
            if arrays.iter().any(|a| a.rank() == 0) {
                panic!("jnp.concatenate: zero-dimensional arrays cannot be concatenated");
            }
            let owned: Vec<Array> = arrays.iter().map(|&a| a.clone()).collect();
            Array::concatenate(&owned, ax)
        }
    }
}

/// `values` appended to `arr` along `axis` (`None`: both flattened) (`jnp.append`).
#[track_caller]
pub fn append(arr: &Array, values: &Array, axis: impl Axes) -> Array {
    concatenate(&[arr, values], axis)
}

/// `jnp.concat`, the array API's name for [`concatenate`].
#[track_caller]
pub fn concat(arrays: &[&Array], axis: impl Axes) -> Array {
    concatenate(arrays, axis)
}

/// Joins arrays of one shape along a new `axis` (`jnp.stack`).
#[track_caller]
pub fn stack(arrays: &[&Array], axis: i64) -> Array {
    let owned: Vec<Array> = arrays.iter().map(|&a| a.clone()).collect();
    Array::stack(&owned, axis)
}

/// Stacks rows: 1-d arrays become rows, then joined along axis 0 (`jnp.vstack`).
#[track_caller]
pub fn vstack(arrays: &[&Array]) -> Array {
    let xs: Vec<Array> = arrays.iter().map(|a| atleast_2d(a)).collect();
    Array::concatenate(&xs, 0)
}

/// Stacks columns: along axis 1, or axis 0 for 1-d arrays (`jnp.hstack`).
#[track_caller]
pub fn hstack(arrays: &[&Array]) -> Array {
    let xs: Vec<Array> = arrays.iter().map(|a| atleast_1d(a)).collect();
    let axis = if xs.first().is_some_and(|x| x.rank() == 1) {
        0
    } else {
        1
    };
    Array::concatenate(&xs, axis)
}

/// Stacks along the third axis, after [`atleast_3d`] (`jnp.dstack`).
#[track_caller]
pub fn dstack(arrays: &[&Array]) -> Array {
    let xs: Vec<Array> = arrays.iter().map(|a| atleast_3d(a)).collect();
    Array::concatenate(&xs, 2)
}

/// Joins 1-d arrays as columns (and 2-d arrays as they are) along axis 1
/// (`jnp.column_stack`).
#[track_caller]
pub fn column_stack(arrays: &[&Array]) -> Array {
    let xs: Vec<Array> = arrays
        .iter()
        .map(|a| {
            if a.rank() < 2 {
                a.reshape([-1, 1])
            } else {
                (*a).clone()
            }
        })
        .collect();
    Array::concatenate(&xs, 1)
}

/// An array assembled from a grid of blocks (`jnp.block([[a, b], [c, d]])`): each row's
/// blocks joined along the last axis, then the rows along the one before it (blocks of
/// fewer than two axes are made 2-d first).
#[track_caller]
pub fn block(rows: &[Vec<&Array>]) -> Array {
    let joined: Vec<Array> = rows
        .iter()
        .map(|row| {
            let xs: Vec<Array> = row.iter().map(|a| atleast_2d(a)).collect();
            Array::concatenate(&xs, -1)
        })
        .collect();
    Array::concatenate(&joined, -2)
}

/// Where to split: a number of equal sections, or the indices to split before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitSpec {
    Sections(usize),
    Indices(Vec<i64>),
}

/// `indices_or_sections` of [`split`]: an integer (that many sections) or a list of indices.
pub trait IndicesOrSections {
    fn split_spec(self) -> SplitSpec;
}

macro_rules! sections_impls {
    ($($t:ty),*) => {$(
        impl IndicesOrSections for $t {
            fn split_spec(self) -> SplitSpec {
                SplitSpec::Sections(self as usize)
            }
        }
        impl IndicesOrSections for &[$t] {
            fn split_spec(self) -> SplitSpec {
                SplitSpec::Indices(self.iter().map(|&x| x as i64).collect())
            }
        }
        impl<const N: usize> IndicesOrSections for [$t; N] {
            fn split_spec(self) -> SplitSpec {
                SplitSpec::Indices(self.iter().map(|&x| x as i64).collect())
            }
        }
        impl IndicesOrSections for Vec<$t> {
            fn split_spec(self) -> SplitSpec {
                SplitSpec::Indices(self.iter().map(|&x| x as i64).collect())
            }
        }
    )*};
}
sections_impls!(i32, i64, usize);

#[track_caller]
fn split_impl(op: &str, x: &Array, spec: SplitSpec, axis: i64, equal: bool) -> Vec<Array> {
    let ax = norm_axis(op, axis, x.shape());
    let n = x.shape()[ax];
    let bounds: Vec<usize> = match spec {
        SplitSpec::Sections(k) => {
            if k == 0 {
                panic!("jnp.{op}: the number of sections must be positive");
            }
            if equal && !n.is_multiple_of(k) {
                panic!("jnp.{op}: an axis of length {n} does not split into {k} equal sections");
            }
            // numpy's array_split: the first n % k sections hold one element more.
            let (q, r) = (n / k, n % k);
            (0..=k).map(|i| i * q + i.min(r)).collect()
        }
        SplitSpec::Indices(idx) => {
            let clamp = |i: i64| -> usize {
                let i = if i < 0 { i + n as i64 } else { i };
                i.clamp(0, n as i64) as usize
            };
            let mut b = vec![0];
            b.extend(idx.into_iter().map(clamp));
            b.push(n);
            b
        }
    };
    bounds
        .windows(2)
        .map(|w| slice_in(x, ax, w[0], w[1].max(w[0])))
        .collect()
}

/// Splits `x` along `axis` into equal sections, or before each index of a list
/// (`jnp.split`).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::arange(0.0, 6.0, 1.0, DType::F32);
/// assert_eq!(jnp::split(&x, 3, 0)[1].to_vec::<f32>(), vec![2.0, 3.0]);
/// assert_eq!(jnp::split(&x, [1, 4], 0)[2].to_vec::<f32>(), vec![4.0, 5.0]);
/// ```
#[track_caller]
pub fn split(x: &Array, indices_or_sections: impl IndicesOrSections, axis: i64) -> Vec<Array> {
    split_impl("split", x, indices_or_sections.split_spec(), axis, true)
}

/// [`split`] that allows sections of unequal length (`jnp.array_split`).
#[track_caller]
pub fn array_split(
    x: &Array,
    indices_or_sections: impl IndicesOrSections,
    axis: i64,
) -> Vec<Array> {
    split_impl(
        "array_split",
        x,
        indices_or_sections.split_spec(),
        axis,
        false,
    )
}

/// Splits along axis 1 (axis 0 for 1-d arrays) (`jnp.hsplit`).
#[track_caller]
pub fn hsplit(x: &Array, indices_or_sections: impl IndicesOrSections) -> Vec<Array> {
    let axis = if x.rank() == 1 { 0 } else { 1 };
    split_impl("hsplit", x, indices_or_sections.split_spec(), axis, true)
}

/// Splits along axis 0 (`jnp.vsplit`).
#[track_caller]
pub fn vsplit(x: &Array, indices_or_sections: impl IndicesOrSections) -> Vec<Array> {
    split_impl("vsplit", x, indices_or_sections.split_spec(), 0, true)
}

/// Splits along axis 2 (`jnp.dsplit`).
#[track_caller]
pub fn dsplit(x: &Array, indices_or_sections: impl IndicesOrSections) -> Vec<Array> {
    split_impl("dsplit", x, indices_or_sections.split_spec(), 2, true)
}

/// The slices of `x` along `axis`, that axis removed (`jnp.unstack`).
#[track_caller]
pub fn unstack(x: &Array, axis: i64) -> Vec<Array> {
    let ax = norm_axis("unstack", axis, x.shape());
    (0..x.shape()[ax])
        .map(|i| slice_in(x, ax, i, i + 1).squeeze([ax as i64]))
        .collect()
}

// ---- reordering -------------------------------------------------------------------------------

/// Reverses the order of elements along `axis` (`None`: every axis) (`jnp.flip`).
#[track_caller]
pub fn flip(x: &Array, axis: impl Axes) -> Array {
    match axis.axes() {
        None => x.flip((0..x.rank() as i64).collect::<Vec<_>>()),
        Some(a) => x.flip(a),
    }
}

/// Reverses axis 1 (`jnp.fliplr`).
#[track_caller]
pub fn fliplr(x: &Array) -> Array {
    x.flip([1])
}

/// Reverses axis 0 (`jnp.flipud`).
#[track_caller]
pub fn flipud(x: &Array) -> Array {
    x.flip([0])
}

/// Rotates by 90 degrees `k` times in the plane of `axes`, from the first axis towards the
/// second (`jnp.rot90`).
#[track_caller]
pub fn rot90(x: &Array, k: i64, axes: (i64, i64)) -> Array {
    let a0 = norm_axis("rot90", axes.0, x.shape());
    let a1 = norm_axis("rot90", axes.1, x.shape());
    if a0 == a1 {
        panic!("jnp.rot90: the axes must differ, got {axes:?}");
    }
    let mut perm: Vec<i64> = (0..x.rank() as i64).collect();
    perm.swap(a0, a1);
    match k.rem_euclid(4) {
        0 => x.clone(),
        1 => x.flip([a1 as i64]).transpose(perm),
        2 => x.flip([a0 as i64, a1 as i64]),
        _ => x.transpose(perm).flip([a1 as i64]),
    }
}

/// Rolls elements by `shift` along `axis` (`None`: the flattened array, reshaped back)
/// (`jnp.roll`); one shift for every axis, or one per axis.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1i32, 2, 3, 4], &[4]);
/// assert_eq!(jnp::roll(&x, 1, None).to_vec::<i32>(), vec![4, 1, 2, 3]);
/// ```
#[track_caller]
pub fn roll(x: &Array, shift: impl Ints, axis: impl Axes) -> Array {
    let shifts = shift.ints();
    match axis.axes() {
        None => {
            if shifts.len() != 1 {
                panic!("jnp.roll: one shift is needed without an axis, got {shifts:?}");
            }
            roll(&ravel(x), shifts[0], 0).reshape(x.shape())
        }
        Some(axes) => {
            let shifts = if shifts.len() == 1 {
                vec![shifts[0]; axes.len()]
            } else {
                shifts
            };
            if shifts.len() != axes.len() {
                panic!("jnp.roll: {} shifts for {} axes", shifts.len(), axes.len());
            }
            let mut y = x.clone();
            for (s, a) in shifts.into_iter().zip(axes) {
                let ax = norm_axis("roll", a, x.shape());
                let n = x.shape()[ax];
                if n == 0 {
                    continue;
                }
                let s = s.rem_euclid(n as i64) as usize;
                if s != 0 {
                    y = Array::concatenate(
                        &[slice_in(&y, ax, n - s, n), slice_in(&y, ax, 0, n - s)],
                        ax as i64,
                    );
                }
            }
            y
        }
    }
}

/// How many times [`repeat`] repeats: once count for all, a static count per element, or an
/// array of counts (traced under `jit`; then `total_repeat_length` is needed).
pub enum RepeatSpec<'a> {
    Scalar(usize),
    List(Vec<usize>),
    Array(&'a Array),
}

/// `repeats` of [`repeat`]: an integer, a list of integers, or an `&Array`.
pub trait Repeats<'a> {
    fn repeat_spec(self) -> RepeatSpec<'a>;
}

macro_rules! repeats_impls {
    ($($t:ty),*) => {$(
        impl<'a> Repeats<'a> for $t {
            fn repeat_spec(self) -> RepeatSpec<'a> {
                RepeatSpec::Scalar(self as usize)
            }
        }
        impl<'a> Repeats<'a> for &[$t] {
            fn repeat_spec(self) -> RepeatSpec<'a> {
                RepeatSpec::List(self.iter().map(|&x| x as usize).collect())
            }
        }
        impl<'a, const N: usize> Repeats<'a> for [$t; N] {
            fn repeat_spec(self) -> RepeatSpec<'a> {
                RepeatSpec::List(self.iter().map(|&x| x as usize).collect())
            }
        }
        impl<'a> Repeats<'a> for Vec<$t> {
            fn repeat_spec(self) -> RepeatSpec<'a> {
                RepeatSpec::List(self.iter().map(|&x| x as usize).collect())
            }
        }
    )*};
}
repeats_impls!(i32, i64, usize);

impl<'a> Repeats<'a> for &'a Array {
    fn repeat_spec(self) -> RepeatSpec<'a> {
        RepeatSpec::Array(self)
    }
}

/// Repeats each element `repeats` times along `axis` (`None`: the flattened array)
/// (`jnp.repeat`). `repeats` is one count, a count per element, or an integer array; a
/// traced array of counts needs `total_repeat_length`, the static length of the result
/// (cut short, or filled with the last element).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1i32, 2], &[2]);
/// assert_eq!(jnp::repeat(&x, 2, None, None).to_vec::<i32>(), vec![1, 1, 2, 2]);
/// assert_eq!(jnp::repeat(&x, [1, 3], 0, None).to_vec::<i32>(), vec![1, 2, 2, 2]);
/// ```
#[track_caller]
pub fn repeat<'a>(
    x: &Array,
    repeats: impl Repeats<'a>,
    axis: impl Axes,
    total_repeat_length: Option<usize>,
) -> Array {
    let (x, ax) = match one_axis("repeat", axis) {
        None => (ravel(x), 0),
        Some(a) => (x.clone(), norm_axis("repeat", a, x.shape())),
    };
    let n = x.shape()[ax];
    let spec = repeats.repeat_spec();
    let counts: Vec<usize> = match spec {
        RepeatSpec::Scalar(r) if total_repeat_length.is_none() => {
            // Each element repeated r times: a new axis after `ax`, broadcast, merged.
            let mut s: Vec<usize> = x.shape().to_vec();
            s.insert(ax + 1, r);
            let mut merged: Vec<usize> = x.shape().to_vec();
            merged[ax] = n * r;
            return x
                .expand_dims(ax as i64 + 1)
                .broadcast_to(&s)
                .reshape(&merged);
        }
        RepeatSpec::Scalar(r) => vec![r; n],
        RepeatSpec::List(v) if v.len() == 1 => vec![v[0]; n],
        RepeatSpec::List(v) => v,
        RepeatSpec::Array(r) if r.is_concrete() && total_repeat_length.is_none() => {
            let v: Vec<usize> = r.to_f64_vec().into_iter().map(|c| c as usize).collect();
            if v.len() == 1 {
                vec![v[0]; n]
            } else {
                v
            }
        }
        RepeatSpec::Array(r) => {
            let total = total_repeat_length.unwrap_or_else(|| {
                panic!("jnp.repeat: traced repeats need total_repeat_length (the result's static length)")
            });
            let r = if r.size() == 1 {
                r.reshape([1]).broadcast_to(&[n])
            } else {
                r.clone()
            };
            if r.shape() != [n] {
                panic!("jnp.repeat: {} repeats for an axis of length {n}", r.size());
            }
            // Output position i takes element j = #{k : cumsum(repeats)[k] <= i}, the last
            // element past the end.
            let ends = r.astype(DEFAULT_INT).cumsum(0);
            let pos = Array::iota(DEFAULT_INT, &[total, 1], 0);
            let j = pos
                .ge(ends.reshape([1, n as i64]))
                .astype(DEFAULT_INT)
                .sum(1i64, false);
            let j = j.minimum(n as i64 - 1);
            return x.take_with(&j, ax as i64, TakeMode::Clip);
        }
    };
    if counts.len() != n {
        panic!(
            "jnp.repeat: {} repeats for an axis of length {n}",
            counts.len()
        );
    }
    let mut idx: Vec<i64> = counts
        .iter()
        .enumerate()
        .flat_map(|(j, &c)| std::iter::repeat_n(j as i64, c))
        .collect();
    if let Some(t) = total_repeat_length {
        let last = idx.last().copied().unwrap_or(0);
        idx.resize(t, last);
    }
    take_static(&x, &idx, ax)
}

/// `x` repeated `reps` times along each axis (`jnp.tile`); `x` and `reps` are padded with
/// leading 1s to the same length.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1i32, 2], &[2]);
/// assert_eq!(jnp::tile(&x, [2, 2]).to_vec::<i32>(), vec![1, 2, 1, 2, 1, 2, 1, 2]);
/// ```
#[track_caller]
pub fn tile(x: &Array, reps: impl Ints) -> Array {
    let mut reps = reps.ints();
    let rank = reps.len().max(x.rank());
    while reps.len() < rank {
        reps.insert(0, 1);
    }
    let mut s: Vec<usize> = x.shape().to_vec();
    while s.len() < rank {
        s.insert(0, 1);
    }
    let mut inter = Vec::with_capacity(2 * rank);
    let mut wide = Vec::with_capacity(2 * rank);
    let mut out = Vec::with_capacity(rank);
    for (d, &r) in s.iter().zip(&reps) {
        inter.extend([1, *d]);
        wide.extend([r as usize, *d]);
        out.push(r as usize * d);
    }
    x.reshape(&inter).broadcast_to(&wide).reshape(&out)
}

// ---- inserting and removing -------------------------------------------------------------------

/// `x` without the entries `obj` (an index or a list) along `axis` (`None`: of the flattened
/// array) (`jnp.delete`).
#[track_caller]
pub fn delete(x: &Array, obj: impl Ints, axis: impl Axes) -> Array {
    let (x, ax) = match one_axis("delete", axis) {
        None => (ravel(x), 0),
        Some(a) => (x.clone(), norm_axis("delete", a, x.shape())),
    };
    let n = x.shape()[ax] as i64;
    let drop: Vec<i64> = obj
        .ints()
        .into_iter()
        .map(|i| {
            if i < -n || i >= n {
                panic!("jnp.delete: index {i} is out of bounds for an axis of length {n}");
            }
            i.rem_euclid(n.max(1))
        })
        .collect();
    let keep: Vec<i64> = (0..n).filter(|i| !drop.contains(i)).collect();
    take_static(&x, &keep, ax)
}

/// `x` with `values` inserted before index `obj` (one index: a block of values; a list: one
/// slice before each) along `axis` (`None`: the flattened array) (`jnp.insert`).
#[track_caller]
pub fn insert<'a>(x: &Array, obj: impl Ints, values: impl IntoArg<'a>, axis: impl Axes) -> Array {
    let (x, ax) = match one_axis("insert", axis) {
        None => (ravel(x), 0),
        Some(a) => (x.clone(), norm_axis("insert", a, x.shape())),
    };
    let rank = x.rank();
    let n = x.shape()[ax] as i64;
    let norm = |i: i64| -> i64 {
        if i < -n || i > n {
            panic!("jnp.insert: index {i} is out of bounds for an axis of length {n}");
        }
        if i < 0 {
            i + n
        } else {
            i
        }
    };
    let mut v = arg_array(values).astype(x.dtype());
    while v.rank() < rank {
        v = v.expand_dims(0);
    }
    let idx = obj.ints();
    // One index: numpy treats `values` as one block whose leading axis goes to `axis`.
    let (positions, v) = if idx.len() == 1 && v.rank() == rank {
        let v = moveaxis(&v, 0, ax as i64);
        let k = v.shape()[ax];
        let mut s = x.shape().to_vec();
        s[ax] = k;
        (vec![norm(idx[0]); k], v.broadcast_to(&s))
    } else {
        let mut s = x.shape().to_vec();
        s[ax] = idx.len();
        (idx.iter().map(|&i| norm(i)).collect(), v.broadcast_to(&s))
    };
    let k = positions.len();
    // Value i lands at its index plus the number of values placed before it (stable order).
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by_key(|&i| positions[i]);
    let mut target = vec![0i64; k];
    for (rank_i, &i) in order.iter().enumerate() {
        target[i] = positions[i] + rank_i as i64;
    }
    let total = n as usize + k;
    let mut src = vec![-1i64; total];
    for (i, &t) in target.iter().enumerate() {
        src[t as usize] = n + i as i64;
    }
    let mut next = 0;
    for s in src.iter_mut() {
        if *s < 0 {
            *s = next;
            next += 1;
        }
    }
    let both = Array::concatenate(&[x, v], ax as i64);
    take_static(&both, &src, ax)
}

/// `filt` without its leading (`"f"`) and/or trailing (`"b"`) zeros (`trim="fb"`)
/// (`jnp.trim_zeros`). Reads the values, so `filt` must be concrete (as in JAX).
#[track_caller]
pub fn trim_zeros(filt: &Array, trim: &str) -> Array {
    if filt.rank() != 1 {
        panic!("jnp.trim_zeros: needs a 1-d array, got {:?}", filt.shape());
    }
    let v = filt.to_f64_vec();
    let lower = trim.to_ascii_lowercase();
    let start = if lower.contains('f') {
        v.iter().position(|&e| e != 0.0).unwrap_or(v.len())
    } else {
        0
    };
    let end = if lower.contains('b') {
        v.iter().rposition(|&e| e != 0.0).map_or(start, |p| p + 1)
    } else {
        v.len()
    };
    slice_in(filt, 0, start, end.max(start))
}

/// The entries of `a` along `axis` (`None`: flattened) where the 1-d `condition` is true
/// (`jnp.compress`; entries past the condition's end are dropped). `condition` must be
/// concrete: the result's length depends on it.
#[track_caller]
pub fn compress(condition: &Array, a: &Array, axis: impl Axes) -> Array {
    if condition.rank() != 1 {
        panic!(
            "jnp.compress: the condition must be 1-d, got {:?}",
            condition.shape()
        );
    }
    compress_values(&condition.to_f64_vec(), a, one_axis("compress", axis))
}

#[track_caller]
fn compress_values(condition: &[f64], a: &Array, axis: Option<i64>) -> Array {
    let (a, ax) = match axis {
        None => (ravel(a), 0),
        Some(x) => (a.clone(), norm_axis("compress", x, a.shape())),
    };
    let n = a.shape()[ax];
    let keep: Vec<i64> = condition
        .iter()
        .enumerate()
        .filter(|(i, &c)| c != 0.0 && *i < n)
        .map(|(i, _)| i as i64)
        .collect();
    take_static(&a, &keep, ax)
}

/// The elements of `arr` where `condition` is true, flattened (`jnp.extract`; concrete
/// `condition`).
#[track_caller]
pub fn extract(condition: &Array, arr: &Array) -> Array {
    compress_values(&condition.to_f64_vec(), arr, None)
}

/// The keyword arguments of [`take`] and [`take_along_axis`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TakeOptions {
    /// What an index outside `-n..n` gives (`mode=`; JAX's default `"fill"`).
    /// `take_along_axis` takes `Fill` and `Clip`, as JAX's does.
    pub mode: TakeMode,
    /// The value out-of-range indices give in `Fill` mode (`fill_value=`); `None` is JAX's
    /// default: NaN for floats, the minimum of a signed integer type, the maximum of an
    /// unsigned one, `true` for bools.
    pub fill_value: Option<f64>,
}

/// Elements of `a` at `indices` along `axis` (`jnp.take`); `None` takes from the flattened
/// `a`. The result's shape is `a.shape[..axis] + indices.shape + a.shape[axis+1..]`.
/// Negative indices count from the end; out-of-range ones are handled as
/// [`TakeOptions::mode`] says. The one implementation is [`Array::take_with`].
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![10.0f32, 11.0, 12.0, 13.0, 14.0, 15.0], &[2, 3]);
/// let i = Array::from_vec(vec![5i32, 0, 7], &[3]);
/// let fill = jnp::TakeOptions { fill_value: Some(-1.0), ..Default::default() };
/// assert_eq!(jnp::take(&a, &i, None, fill).to_vec::<f32>(), vec![15.0, 10.0, -1.0]);
/// let cols = Array::from_vec(vec![2i32, -3], &[2]);
/// let got = jnp::take(&a, &cols, 1, Default::default());
/// assert_eq!(got.to_vec::<f32>(), vec![12.0, 10.0, 15.0, 13.0]);
/// ```
#[track_caller]
pub fn take(a: &Array, indices: &Array, axis: impl Axes, options: TakeOptions) -> Array {
    let (a, axis) = match one_axis("take", axis) {
        None => (ravel(a), 0),
        Some(ax) => (a.clone(), norm_axis("take", ax, a.shape())),
    };
    let taken = a.take_with(indices, axis as i64, options.mode);
    match options.fill_value {
        Some(fill) if options.mode == TakeMode::Fill => {
            let n = a.shape()[axis] as i64;
            let mut mask_shape = vec![1; axis];
            mask_shape.extend_from_slice(indices.shape());
            mask_shape.extend(vec![1; a.rank() - axis - 1]);
            let in_range = in_bounds(indices, n).reshape(mask_shape);
            filled(&in_range, &taken, fill)
        }
        _ => taken,
    }
}

/// Elements of `arr` at `indices` along `axis`, one per index (`jnp.take_along_axis`);
/// `None` takes from the flattened `arr` with 1-d `indices`. `indices` has `arr`'s rank and
/// the other dims broadcast. Negative indices count from the end; out-of-range ones give the
/// fill value (`Fill`) or the nearest end after wrapping negatives once (`Clip`), as JAX's.
/// The one implementation is [`Array::take_along_axis`].
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![3.0f32, 1.0, 2.0, 9.0, 7.0, 8.0], &[2, 3]);
/// let order = jnp::argsort(&x, 1, Default::default());
/// let sorted = jnp::take_along_axis(&x, &order, 1, Default::default());
/// assert_eq!(sorted.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 7.0, 8.0, 9.0]);
/// let clip = jnp::TakeOptions { mode: TakeMode::Clip, ..Default::default() };
/// let i = Array::from_vec(vec![4i32, -5], &[1, 2]);
/// let got = jnp::take_along_axis(&x, &i, 1, clip);
/// assert_eq!(got.to_vec::<f32>(), vec![2.0, 3.0, 8.0, 9.0]);
/// ```
#[track_caller]
pub fn take_along_axis(
    arr: &Array,
    indices: &Array,
    axis: impl Axes,
    options: TakeOptions,
) -> Array {
    let (arr, axis) = match one_axis("take_along_axis", axis) {
        None => {
            if indices.rank() != 1 {
                panic!(
                    "jnp.take_along_axis: with axis None the indices must be 1-d, got shape {:?}",
                    indices.shape()
                );
            }
            (ravel(arr), 0)
        }
        Some(ax) => (arr.clone(), norm_axis("take_along_axis", ax, arr.shape())),
    };
    let n = arr.shape().get(axis).copied().unwrap_or(0) as i64;
    match options.mode {
        TakeMode::Fill => {
            let taken = arr.take_along_axis(indices, axis as i64);
            match options.fill_value {
                Some(fill) => {
                    let in_range = in_bounds(indices, n).broadcast_to(taken.shape());
                    filled(&in_range, &taken, fill)
                }
                None => taken,
            }
        }
        TakeMode::Clip => {
            let wide = indices.astype(DType::I64);
            let wrapped = where_(wide.lt(0i64), wide.add(n), &wide);
            let clipped = wrapped.clip(0i64, (n - 1).max(0));
            arr.take_along_axis(&clipped, axis as i64)
        }
        TakeMode::Wrap => panic!(
            "jnp.take_along_axis: mode Wrap is not one of JAX's modes for take_along_axis; use \
             Fill or Clip, or wrap the indices with rem first"
        ),
    }
}

/// Whether each index lies in `-n..n`, the range JAX's gathers accept.
fn in_bounds(indices: &Array, n: i64) -> Array {
    let wide = indices.astype(DType::I64);
    wide.ge(-n).logical_and(wide.lt(n))
}

/// `taken` where `in_range`, else `fill` in `taken`'s dtype.
fn filled(in_range: &Array, taken: &Array, fill: f64) -> Array {
    let fill = Array::scalar(fill).astype(taken.dtype());
    where_(in_range, taken, &fill)
}

/// `x` where `condition` holds, else `y`, broadcasting (`jnp.where`, the three-argument form).
#[track_caller]
pub fn where_<'a>(condition: impl IntoArg<'a>, x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    crate::where_(condition, x, y)
}

/// What [`choose`] and [`ravel_multi_index`] do with an index out of range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexMode {
    /// An error (the indices must be concrete to check them).
    #[default]
    Raise,
    /// Taken modulo the length.
    Wrap,
    /// Clamped into range.
    Clip,
}

#[track_caller]
fn fix_index(op: &str, idx: &Array, n: usize, mode: IndexMode) -> Array {
    match mode {
        IndexMode::Wrap => idx.rem(n.max(1) as i64).add(n as i64).rem(n.max(1) as i64),
        IndexMode::Clip => idx.clip(0i64, n as i64 - 1),
        IndexMode::Raise => {
            if idx.is_concrete() {
                if let Some(bad) = idx
                    .to_f64_vec()
                    .into_iter()
                    .find(|&i| i < 0.0 || i >= n as f64)
                {
                    panic!("jnp.{op}: index {bad} is out of bounds for size {n}");
                }
            } else {
                panic!("jnp.{op}: mode Raise needs concrete indices; use IndexMode::Clip or Wrap under jit");
            }
            idx.clone()
        }
    }
}

/// Elements picked from `choices` by the index array `a` (`jnp.choose`): element `i` of
/// the result is `choices[a[i]][i]`, everything broadcast together.
#[track_caller]
pub fn choose(a: &Array, choices: &[&Array], mode: IndexMode) -> Array {
    if choices.is_empty() {
        panic!("jnp.choose: no choices");
    }
    let a = fix_index("choose", &a.astype(DEFAULT_INT), choices.len(), mode);
    let mut all: Vec<&Array> = vec![&a];
    all.extend_from_slice(choices);
    let b = broadcast_arrays(&all);
    let mut out = b[1].clone();
    for (k, c) in b[2..].iter().enumerate() {
        out = where_(b[0].eq((k + 1) as i64), c, &out);
    }
    out
}

/// `jnp.select(condlist, choicelist, default)`: where the first true condition is `k`,
/// `choicelist[k]`; where none is, `default`.
#[track_caller]
pub fn select<'a>(condlist: &[&Array], choicelist: &[&Array], default: impl IntoArg<'a>) -> Array {
    if condlist.len() != choicelist.len() {
        panic!(
            "jnp.select: {} conditions for {} choices",
            condlist.len(),
            choicelist.len()
        );
    }
    let mut out = arg_array(default);
    for (c, v) in condlist.iter().zip(choicelist).rev() {
        out = where_(*c, *v, &out);
    }
    out
}

/// The flat indices of the index arrays `multi_index` into an array of shape `dims`
/// (`jnp.ravel_multi_index`, row-major).
#[track_caller]
pub fn ravel_multi_index(multi_index: &[&Array], dims: &[usize], mode: IndexMode) -> Array {
    if multi_index.len() != dims.len() {
        panic!(
            "jnp.ravel_multi_index: {} index arrays for {} dims",
            multi_index.len(),
            dims.len()
        );
    }
    // The indices' own promoted dtype, as `result_type(int, *multi_index)`.
    let dtype = result_dtype(multi_index);
    let mut out: Option<Array> = None;
    let mut stride = 1i64;
    for (i, d) in multi_index.iter().zip(dims).rev() {
        let i = fix_index("ravel_multi_index", &i.astype(DEFAULT_INT), *d, mode);
        let term = i.mul(stride);
        out = Some(match out {
            None => term,
            Some(o) => o.add(&term),
        });
        stride *= *d as i64;
    }
    out.unwrap_or_else(|| Array::zeros(&[], DEFAULT_INT))
        .astype(dtype)
}

/// The index arrays, one per axis of `shape`, of the flat `indices` (`jnp.unravel_index`);
/// out-of-range indices are clipped, as in JAX.
#[track_caller]
pub fn unravel_index(indices: &Array, shape: &[usize]) -> Vec<Array> {
    let total: i64 = shape.iter().map(|&d| d as i64).product();
    let mut i = indices.astype(DEFAULT_INT).clip(-total, total - 1);
    i = where_(i.lt(0i64), i.add(total), &i);
    let mut out = Vec::with_capacity(shape.len());
    for &d in shape.iter().rev() {
        let d = d as i64;
        out.push(i.rem(d).astype(indices.dtype()));
        i = i.floor_divide(d);
    }
    out.reverse();
    out
}

// ---- pad --------------------------------------------------------------------------------------

/// `pad_width` of [`pad`]: one width for every edge, one `(before, after)` pair for every
/// axis, or a pair per axis.
pub trait PadWidth {
    fn widths(self, rank: usize) -> Vec<(usize, usize)>;
}

macro_rules! pad_width_impls {
    ($($t:ty),*) => {$(
        impl PadWidth for $t {
            fn widths(self, rank: usize) -> Vec<(usize, usize)> {
                vec![(self as usize, self as usize); rank]
            }
        }
        impl PadWidth for ($t, $t) {
            fn widths(self, rank: usize) -> Vec<(usize, usize)> {
                vec![(self.0 as usize, self.1 as usize); rank]
            }
        }
        impl PadWidth for &[($t, $t)] {
            fn widths(self, rank: usize) -> Vec<(usize, usize)> {
                let v: Vec<(usize, usize)> =
                    self.iter().map(|&(a, b)| (a as usize, b as usize)).collect();
                if v.len() == 1 { vec![v[0]; rank] } else { v }
            }
        }
        impl<const N: usize> PadWidth for [($t, $t); N] {
            fn widths(self, rank: usize) -> Vec<(usize, usize)> {
                (&self[..]).widths(rank)
            }
        }
        impl PadWidth for Vec<($t, $t)> {
            fn widths(self, rank: usize) -> Vec<(usize, usize)> {
                (&self[..]).widths(rank)
            }
        }
    )*};
}
pad_width_impls!(i32, i64, usize);

/// `jnp.pad`'s `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PadMode {
    /// `constant_values` (default 0).
    #[default]
    Constant,
    /// The edge value repeated.
    Edge,
    /// A ramp from `end_values` to the edge value.
    LinearRamp,
    /// The maximum of (the first or last `stat_length` of) the axis.
    Maximum,
    /// Its mean (rounded for integers).
    Mean,
    /// Its median (rounded for integers).
    Median,
    /// Its minimum.
    Minimum,
    /// Mirrored without repeating the edge: `[1, 2, 3]` padded by 2 is `[3, 2, 1, 2, 3, 2, 1]`.
    Reflect,
    /// Mirrored with the edge repeated: `[2, 1, 1, 2, 3, 3, 2]`.
    Symmetric,
    /// Wrapped around: `[2, 3, 1, 2, 3, 1, 2]`.
    Wrap,
    /// Unspecified values in numpy; zeros in JAX.
    Empty,
}

/// `reflect_type` of the `Reflect` and `Symmetric` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReflectType {
    /// The mirror image itself (numpy's default).
    #[default]
    Even,
    /// The mirror image subtracted from twice the edge value.
    Odd,
}

/// `constant_values` or `end_values` of [`pad`]: one value, one `(before, after)` pair for
/// every axis, or a pair per axis (`1.0.into()`, `(0.0, 9.0).into()`,
/// `vec![(1.0, 2.0), (3.0, 4.0)].into()`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PadValues(pub Vec<(f64, f64)>);

impl PadValues {
    fn pair(&self, axis: usize) -> (f64, f64) {
        match self.0.len() {
            0 => (0.0, 0.0),
            1 => self.0[0],
            _ => self.0[axis],
        }
    }
}

impl From<f64> for PadValues {
    fn from(v: f64) -> Self {
        PadValues(vec![(v, v)])
    }
}

impl From<(f64, f64)> for PadValues {
    fn from(v: (f64, f64)) -> Self {
        PadValues(vec![v])
    }
}

impl From<Vec<(f64, f64)>> for PadValues {
    fn from(v: Vec<(f64, f64)>) -> Self {
        PadValues(v)
    }
}

/// The keyword arguments of [`pad`], JAX's defaults in `Default`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PadOptions {
    pub mode: PadMode,
    /// The `Constant` mode's values (default 0).
    pub constant_values: PadValues,
    /// The `LinearRamp` mode's end values (default 0).
    pub end_values: PadValues,
    /// For `Reflect` and `Symmetric`.
    pub reflect_type: ReflectType,
    /// For `Maximum`, `Mean`, `Median`, `Minimum`: how many values at each end the statistic
    /// is taken over (default: the whole axis).
    pub stat_length: Option<usize>,
}

impl PadOptions {
    /// The options of `mode` with every other keyword at its default.
    pub fn mode(mode: PadMode) -> PadOptions {
        PadOptions {
            mode,
            ..Default::default()
        }
    }
}

/// Pads `x` by `pad_width` (`jnp.pad`), in any of numpy's modes ([`PadMode`]), each axis in
/// turn as JAX does. Differentiable with respect to `x`.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::numpy::{PadMode, PadOptions};
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1i32, 2, 3], &[3]);
/// let r = jnp::pad(&x, 2, PadOptions::mode(PadMode::Reflect));
/// assert_eq!(r.to_vec::<i32>(), vec![3, 2, 1, 2, 3, 2, 1]);
/// let c = jnp::pad(&x, (1, 0), PadOptions { constant_values: 9.0.into(), ..Default::default() });
/// assert_eq!(c.to_vec::<i32>(), vec![9, 1, 2, 3]);
/// ```
#[track_caller]
pub fn pad(x: &Array, pad_width: impl PadWidth, options: PadOptions) -> Array {
    let widths = pad_width.widths(x.rank());
    if widths.len() != x.rank() {
        panic!(
            "jnp.pad: {} (before, after) pairs for an array of shape {:?}",
            widths.len(),
            x.shape()
        );
    }
    let mut y = x.clone();
    for (ax, &(lo, hi)) in widths.iter().enumerate() {
        if lo == 0 && hi == 0 {
            continue;
        }
        y = pad_axis(&y, ax, lo, hi, &options);
    }
    y
}

#[track_caller]
fn pad_axis(x: &Array, ax: usize, lo: usize, hi: usize, o: &PadOptions) -> Array {
    let n = x.shape()[ax];
    let rank = x.rank();
    let low = vec![0i64; rank];
    let high = vec![0i64; rank];
    let constant = |x: &Array, before: f64, after: f64| -> Array {
        let mut l = low.clone();
        let mut h = high.clone();
        l[ax] = lo as i64;
        let y = x.pad(&l, &high, &[], Array::full(&[], before, x.dtype()));
        h[ax] = hi as i64;
        y.pad(&low, &h, &[], Array::full(&[], after, x.dtype()))
    };
    match o.mode {
        PadMode::Constant => {
            let (b, a) = o.constant_values.pair(ax);
            constant(x, b, a)
        }
        PadMode::Empty => constant(x, 0.0, 0.0),
        _ if n == 0 => panic!("jnp.pad: cannot pad an empty axis in mode {:?}", o.mode),
        PadMode::Edge => {
            let idx: Vec<i64> = (0..lo + n + hi)
                .map(|j| (j as i64 - lo as i64).clamp(0, n as i64 - 1))
                .collect();
            take_static(x, &idx, ax)
        }
        PadMode::Wrap => {
            let idx: Vec<i64> = (0..lo + n + hi)
                .map(|j| (j as i64 - lo as i64).rem_euclid(n as i64))
                .collect();
            take_static(x, &idx, ax)
        }
        PadMode::Reflect | PadMode::Symmetric => reflect(x, ax, lo, hi, o),
        PadMode::LinearRamp => {
            let (eb, ea) = o.end_values.pair(ax);
            let first = slice_in(x, ax, 0, 1);
            let last = slice_in(x, ax, n - 1, n);
            let ramp = |end: f64, edge: &Array, num: usize| -> Array {
                let edge = edge.squeeze([ax as i64]);
                linspace_arrays(
                    &Array::full(&[], end, inexact(x.dtype())),
                    &edge,
                    num,
                    false,
                    Some(x.dtype()),
                    ax,
                )
            };
            let before = ramp(eb, &first, lo);
            let after = ramp(ea, &last, hi).flip([ax as i64]);
            Array::concatenate(&[before, x.clone(), after], ax as i64)
        }
        PadMode::Maximum | PadMode::Minimum | PadMode::Mean | PadMode::Median => {
            let len = o.stat_length.unwrap_or(n).clamp(1, n);
            let stat = |part: &Array| -> Array {
                let s = match o.mode {
                    PadMode::Maximum => part.max(ax as i64, true),
                    PadMode::Minimum => part.min(ax as i64, true),
                    PadMode::Mean => part.mean(ax as i64, true),
                    _ => median_keepdims(part, ax),
                };
                if x.dtype().is_float() || matches!(o.mode, PadMode::Maximum | PadMode::Minimum) {
                    s.astype(x.dtype())
                } else {
                    s.round().astype(x.dtype())
                }
            };
            let b = stat(&slice_in(x, ax, 0, len));
            let a = stat(&slice_in(x, ax, n - len, n));
            let mut sb = x.shape().to_vec();
            sb[ax] = lo;
            let mut sa = x.shape().to_vec();
            sa[ax] = hi;
            Array::concatenate(
                &[b.broadcast_to(&sb), x.clone(), a.broadcast_to(&sa)],
                ax as i64,
            )
        }
    }
}

/// The median along `ax`, kept as a size-1 axis (float for integer inputs).
#[track_caller]
fn median_keepdims(x: &Array, ax: usize) -> Array {
    let n = x.shape()[ax];
    let x = if x.dtype().is_float() {
        x.clone()
    } else {
        x.astype(DEFAULT_FLOAT)
    };
    let s = x.sort(ax as i64);
    let mid = slice_in(&s, ax, n / 2, n / 2 + 1);
    if n % 2 == 1 {
        mid
    } else {
        (slice_in(&s, ax, n / 2 - 1, n / 2) + mid) * 0.5
    }
}

/// The `Reflect` and `Symmetric` modes, as one gather: position `j` of the padded axis
/// reads element `idx(j)` of a periodic mirror image; the odd type adds
/// `2 * (last - first)` per period and mirrors about the edge values.
#[track_caller]
fn reflect(x: &Array, ax: usize, lo: usize, hi: usize, o: &PadOptions) -> Array {
    let n = x.shape()[ax] as i64;
    let symmetric = o.mode == PadMode::Symmetric;
    if n == 1 && !symmetric {
        let mut opts = o.clone();
        opts.mode = PadMode::Edge;
        return pad_axis(x, ax, lo, hi, &opts);
    }
    let period = if symmetric { 2 * n } else { 2 * (n - 1) };
    let total = lo + n as usize + hi;
    let (mut idx, mut mirrored, mut periods) = (vec![], vec![], vec![]);
    for j in 0..total as i64 {
        let t = j - lo as i64;
        let (q, r) = (t.div_euclid(period), t.rem_euclid(period));
        let (i, m) = if r < n {
            (r, false)
        } else if symmetric {
            (period - 1 - r, true)
        } else {
            (period - r, true)
        };
        idx.push(i);
        mirrored.push(m);
        periods.push(q as f64);
    }
    let y = take_static(x, &idx, ax);
    if o.reflect_type == ReflectType::Even {
        return y;
    }
    let first = slice_in(x, ax, 0, 1);
    let last = slice_in(x, ax, n as usize - 1, n as usize);
    let shape = along(x.rank(), ax, total);
    let m = Array::from_vec(mirrored, &[total]).reshape(&shape);
    let q = Array::from_f64s(&periods, &shape, x.dtype());
    let reflected = where_(&m, last.mul(2i32).sub(&y), &y);
    let d = last.sub(&first).mul(2i32);
    reflected + q * d
}
