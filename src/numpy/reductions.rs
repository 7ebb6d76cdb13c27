//! Reductions and statistics (`sum`, `mean`, `median`, `percentile`, the `nan*` forms),
//! cumulative functions, sorting, searching and set functions (`sort`, `argsort`,
//! `searchsorted`, `unique` with `size=`, `nonzero`).
//!
//! Functions whose output size depends on the values (`nonzero`, `unique`, `argwhere`, the
//! set functions, `bincount`) take JAX's `size=` (and `fill_value=`): with a size they work
//! under every transformation; without one they read the values, so they work on concrete
//! arrays only and panic under a trace, naming `size=` (JAX's `ConcretizationTypeError`).

use crate::{where_, Array, Axes, DType, IntoArg};
use std::panic::Location;

// ---- helpers --------------------------------------------------------------------------------

/// An axis list already resolved to [`Axes`]' own form, passed on to other reductions.
#[derive(Clone)]
struct Ax(Option<Vec<i64>>);

impl Axes for Ax {
    fn axes(self) -> Option<Vec<i64>> {
        self.0
    }
}

/// Panics, naming the op, the shapes and the caller's line.
#[track_caller]
fn fail(op: &str, msg: &str, xs: &[&Array]) -> ! {
    let shapes: Vec<String> = xs
        .iter()
        .map(|x| format!("{}{:?}", x.dtype().name(), x.shape()))
        .collect();
    panic!(
        "{op}: {msg} (operands: {}) at {}",
        shapes.join(", "),
        Location::caller()
    )
}

/// A single-axis argument with numpy's `axis=None` (flatten first): the array to work on and
/// its axis.
#[track_caller]
fn one_axis(op: &str, x: &Array, axis: impl Axes) -> (Array, i64) {
    match axis.axes() {
        None => (x.reshape([-1i64]), 0),
        Some(v) if v.len() == 1 => {
            let r = x.rank() as i64;
            if v[0] < -r || v[0] >= r.max(1) {
                fail(op, &format!("axis {} is out of range", v[0]), &[x]);
            }
            (x.clone(), v[0])
        }
        Some(v) => fail(op, &format!("expected one axis, got {v:?}"), &[x]),
    }
}

fn norm_axis(axis: i64, rank: usize) -> usize {
    if axis < 0 {
        (axis + rank as i64) as usize
    } else {
        axis as usize
    }
}

/// The resolved, sorted list of reduced axes (`None`: all).
fn axes_list(x: &Array, axis: &Option<Vec<i64>>) -> Vec<usize> {
    let mut v: Vec<usize> = match axis {
        None => (0..x.rank()).collect(),
        Some(v) => v.iter().map(|&a| norm_axis(a, x.rank())).collect(),
    };
    v.sort_unstable();
    v
}

/// The float dtype a statistic of `x` is computed in (`promote_dtypes_inexact`).
fn inexact(x: &Array) -> DType {
    if x.dtype().is_float() {
        x.dtype()
    } else {
        DType::F32
    }
}

/// Is `x` concrete, or else panic naming `size=`.
#[track_caller]
fn need_concrete(op: &str, xs: &[&Array]) {
    if xs.iter().any(|x| !x.is_concrete()) {
        fail(
            op,
            "the size of the result depends on the values, which are not known under a trace \
             (jit, vmap, grad); pass `size=` (JAX's ConcretizationTypeError)",
            xs,
        );
    }
}

/// `x < y` in the total order sorting uses (NaN above every number).
fn lt_total(x: &Array, y: &Array) -> Array {
    if x.dtype().is_float() || y.dtype().is_float() {
        x.lt(y)
            .logical_or(y.isnan().logical_and(x.isnan().logical_not()))
    } else {
        x.lt(y)
    }
}

// ---- reductions -----------------------------------------------------------------------------

/// The sum over `axis` (`None`: every axis), keeping reduced axes as size 1 when `keepdims`
/// (`jnp.sum`).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// assert_eq!(jnp::sum(&x, 0, false).to_vec::<f32>(), vec![4.0, 6.0]);
/// ```
#[track_caller]
pub fn sum(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.sum(axis, keepdims)
}

/// The product over `axis` (`jnp.prod`).
#[track_caller]
pub fn prod(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.prod(axis, keepdims)
}

/// The maximum over `axis` (`jnp.max`).
#[track_caller]
pub fn max(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.max(axis, keepdims)
}

/// The minimum over `axis` (`jnp.min`).
#[track_caller]
pub fn min(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.min(axis, keepdims)
}

/// `jnp.amax`, another name of [`max`].
#[track_caller]
pub fn amax(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.max(axis, keepdims)
}

/// `jnp.amin`, another name of [`min`].
#[track_caller]
pub fn amin(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.min(axis, keepdims)
}

/// Whether every element over `axis` is nonzero (`jnp.all`).
#[track_caller]
pub fn all(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.ne(0).min(axis, keepdims)
}

/// Whether any element over `axis` is nonzero (`jnp.any`).
#[track_caller]
pub fn any(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.ne(0).max(axis, keepdims)
}

/// The mean over `axis` (`jnp.mean`).
#[track_caller]
pub fn mean(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.mean(axis, keepdims)
}

/// The variance over `axis` with `ddof` degrees of freedom removed (`jnp.var`).
#[track_caller]
pub fn var(x: &Array, axis: impl Axes, keepdims: bool, ddof: usize) -> Array {
    x.var(axis, keepdims, ddof)
}

/// The standard deviation over `axis` (`jnp.std`).
#[track_caller]
pub fn std(x: &Array, axis: impl Axes, keepdims: bool, ddof: usize) -> Array {
    x.std(axis, keepdims, ddof)
}

/// The range, `max - min`, over `axis` (`jnp.ptp`).
#[track_caller]
pub fn ptp(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    let axis = Ax(axis.axes());
    x.max(axis.clone(), keepdims) - x.min(axis, keepdims)
}

/// The number of nonzero elements over `axis`, as int64 (`jnp.count_nonzero`).
#[track_caller]
pub fn count_nonzero(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.ne(0).astype(DType::I64).sum(axis, keepdims)
}

/// The weighted mean over `axis` (`jnp.average`): `sum(x * w) / sum(w)`; `weights` has `x`'s
/// shape, or is 1-D along a single `axis`. `None`: the plain mean.
#[track_caller]
pub fn average(x: &Array, axis: impl Axes, weights: Option<&Array>, keepdims: bool) -> Array {
    average_returned(x, axis, weights, keepdims).0
}

/// [`average`] and the sum of the weights, broadcast to its shape (`returned=True`).
#[track_caller]
pub fn average_returned(
    x: &Array,
    axis: impl Axes,
    weights: Option<&Array>,
    keepdims: bool,
) -> (Array, Array) {
    let axis = Ax(axis.axes());
    let Some(w) = weights else {
        let avg = x.mean(axis.clone(), keepdims);
        let axes = axes_list(x, &axis.0);
        let n: usize = axes.iter().map(|&a| x.shape()[a]).product();
        let count = Array::full(avg.shape(), n as f64, avg.dtype());
        return (avg, count);
    };
    let dt = DType::promote(inexact(x), false, inexact(w), false).0;
    let (x, mut w) = (x.astype(dt), w.astype(dt));
    if w.shape() != x.shape() {
        let ax = match &axis.0 {
            Some(v) if v.len() == 1 && w.rank() == 1 => norm_axis(v[0], x.rank()),
            _ => fail(
                "average",
                "weights must have the shape of the array, or be 1-D along one axis",
                &[&x, &w],
            ),
        };
        let mut shape = vec![1usize; x.rank()];
        shape[ax] = w.shape()[0];
        w = w.reshape(shape).broadcast_to(x.shape());
    }
    let scale = w.sum(axis.clone(), keepdims);
    let avg = (&x * &w).sum(axis, keepdims) / &scale;
    let scale = scale.broadcast_to(avg.shape());
    (avg, scale)
}

/// The index of the largest element along `axis` (`None`: of the flattened array), the
/// first on ties, as int64 (`jnp.argmax`).
#[track_caller]
pub fn argmax(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    arg_extreme("argmax", x, axis, keepdims, false)
}

/// The index of the smallest element along `axis` (`jnp.argmin`).
#[track_caller]
pub fn argmin(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    arg_extreme("argmin", x, axis, keepdims, true)
}

#[track_caller]
fn arg_extreme(op: &str, x: &Array, axis: impl Axes, keepdims: bool, is_min: bool) -> Array {
    let axis = axis.axes();
    let flat = axis.is_none();
    let (y, ax) = one_axis(op, x, Ax(axis));
    let i = if is_min {
        y.argmin(ax, keepdims)
    } else {
        y.argmax(ax, keepdims)
    };
    let i = i.astype(DType::I64);
    if flat && keepdims {
        i.reshape(vec![1usize; x.rank()])
    } else {
        i
    }
}

// ---- NaN-ignoring reductions ----------------------------------------------------------------

fn nan_to(x: &Array, v: f64) -> Array {
    if x.dtype().is_float() {
        where_(x.isnan(), v, x)
    } else {
        x.clone()
    }
}

/// The sum over `axis`, NaNs counted as 0 (`jnp.nansum`).
#[track_caller]
pub fn nansum(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    nan_to(x, 0.0).sum(axis, keepdims)
}

/// The product over `axis`, NaNs counted as 1 (`jnp.nanprod`).
#[track_caller]
pub fn nanprod(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    nan_to(x, 1.0).prod(axis, keepdims)
}

/// The maximum over `axis`, ignoring NaNs (NaN where a slice is all NaN; `jnp.nanmax`).
#[track_caller]
pub fn nanmax(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    nan_extreme(x, axis, keepdims, false)
}

/// The minimum over `axis`, ignoring NaNs (`jnp.nanmin`).
#[track_caller]
pub fn nanmin(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    nan_extreme(x, axis, keepdims, true)
}

#[track_caller]
fn nan_extreme(x: &Array, axis: impl Axes, keepdims: bool, is_min: bool) -> Array {
    if !x.dtype().is_float() {
        return if is_min {
            x.min(axis, keepdims)
        } else {
            x.max(axis, keepdims)
        };
    }
    let axis = Ax(axis.axes());
    let nan = x.isnan();
    let r = if is_min {
        where_(&nan, f64::INFINITY, x).min(axis.clone(), keepdims)
    } else {
        where_(&nan, f64::NEG_INFINITY, x).max(axis.clone(), keepdims)
    };
    where_(nan.min(axis, keepdims), f64::NAN, &r)
}

/// The mean over `axis` of the elements that are not NaN (`jnp.nanmean`).
#[track_caller]
pub fn nanmean(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    if !x.dtype().is_float() {
        return x.mean(axis, keepdims);
    }
    let axis = Ax(axis.axes());
    let count = x.isnan().logical_not().astype(x.dtype());
    nansum(x, axis.clone(), keepdims) / count.sum(axis, keepdims)
}

/// The variance over `axis` of the elements that are not NaN (`jnp.nanvar`).
#[track_caller]
pub fn nanvar(x: &Array, axis: impl Axes, keepdims: bool, ddof: usize) -> Array {
    if !x.dtype().is_float() {
        return x.var(axis, keepdims, ddof);
    }
    let axis = Ax(axis.axes());
    let ok = x.isnan().logical_not();
    let count = ok.astype(x.dtype()).sum(axis.clone(), keepdims);
    let mean = nanmean(x, axis.clone(), true);
    let centered = where_(&ok, x - &mean, 0.0);
    let ss = (&centered * &centered).sum(axis, keepdims);
    let dof = count - ddof as f64;
    where_(dof.le(0.0), f64::NAN, ss / dof)
}

/// The standard deviation over `axis` of the elements that are not NaN (`jnp.nanstd`).
#[track_caller]
pub fn nanstd(x: &Array, axis: impl Axes, keepdims: bool, ddof: usize) -> Array {
    nanvar(x, axis, keepdims, ddof).sqrt()
}

/// The index of the largest element that is not NaN along `axis`, -1 where a slice is all
/// NaN (`jnp.nanargmax`).
#[track_caller]
pub fn nanargmax(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    nan_arg_extreme("nanargmax", x, axis, keepdims, false)
}

/// The index of the smallest element that is not NaN along `axis` (`jnp.nanargmin`).
#[track_caller]
pub fn nanargmin(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    nan_arg_extreme("nanargmin", x, axis, keepdims, true)
}

#[track_caller]
fn nan_arg_extreme(op: &str, x: &Array, axis: impl Axes, keepdims: bool, is_min: bool) -> Array {
    if !x.dtype().is_float() {
        return arg_extreme(op, x, axis, keepdims, is_min);
    }
    let axis = Ax(axis.axes());
    let nan = x.isnan();
    let fill = if is_min {
        f64::INFINITY
    } else {
        f64::NEG_INFINITY
    };
    let i = arg_extreme(op, &where_(&nan, fill, x), axis.clone(), keepdims, is_min);
    let all_nan = match axis.0 {
        None if keepdims => nan.min(None, false).reshape(vec![1usize; x.rank()]),
        None => nan.min(None, false),
        Some(v) => nan.min(v, keepdims),
    };
    where_(all_nan, -1i64, &i)
}

// ---- cumulative -----------------------------------------------------------------------------

#[track_caller]
fn cum(op: &str, x: &Array, axis: impl Axes, prod: bool) -> Array {
    let (y, ax) = one_axis(op, x, axis);
    // Bools count in the default integer (int64 with x64), as in JAX.
    let y = if y.dtype() == DType::Bool {
        y.astype(DType::I64)
    } else {
        y
    };
    if prod {
        y.cumprod(ax)
    } else {
        y.cumsum(ax)
    }
}

/// The running sum along `axis` (`None`: of the flattened array; `jnp.cumsum`).
#[track_caller]
pub fn cumsum(x: &Array, axis: impl Axes) -> Array {
    cum("cumsum", x, axis, false)
}

/// The running product along `axis` (`jnp.cumprod`).
#[track_caller]
pub fn cumprod(x: &Array, axis: impl Axes) -> Array {
    cum("cumprod", x, axis, true)
}

/// The running sum, NaNs counted as 0 (`jnp.nancumsum`).
#[track_caller]
pub fn nancumsum(x: &Array, axis: impl Axes) -> Array {
    cum("nancumsum", &nan_to(x, 0.0), axis, false)
}

/// The running product, NaNs counted as 1 (`jnp.nancumprod`).
#[track_caller]
pub fn nancumprod(x: &Array, axis: impl Axes) -> Array {
    cum("nancumprod", &nan_to(x, 1.0), axis, true)
}

#[track_caller]
fn cumulative(op: &str, x: &Array, axis: Option<i64>, include_initial: bool, prod: bool) -> Array {
    let axis = match axis {
        Some(a) => a,
        None if x.rank() <= 1 => 0,
        None => fail(op, "axis must be given for an array of rank above 1", &[x]),
    };
    let x = if x.rank() == 0 {
        x.reshape([1i64])
    } else {
        x.clone()
    };
    let y = cum(op, &x, axis, prod);
    if !include_initial {
        return y;
    }
    let ax = norm_axis(axis, y.rank());
    let mut low = vec![0i64; y.rank()];
    low[ax] = 1;
    let high = vec![0i64; y.rank()];
    y.pad(&low, &high, &[], if prod { 1.0 } else { 0.0 })
}

/// The running sum along `axis` (required above rank 1), with the initial 0 first when
/// `include_initial` (`jnp.cumulative_sum`).
#[track_caller]
pub fn cumulative_sum(x: &Array, axis: Option<i64>, include_initial: bool) -> Array {
    cumulative("cumulative_sum", x, axis, include_initial, false)
}

/// The running product along `axis`, with the initial 1 first when `include_initial`
/// (`jnp.cumulative_prod`).
#[track_caller]
pub fn cumulative_prod(x: &Array, axis: Option<i64>, include_initial: bool) -> Array {
    cumulative("cumulative_prod", x, axis, include_initial, true)
}

/// The options of [`diff`]: `n` times (default 1), along `axis` (default -1), with
/// `prepend`/`append` joined on first.
#[derive(Clone, Copy, Debug)]
pub struct DiffOptions<'a> {
    pub n: usize,
    pub axis: i64,
    pub prepend: Option<&'a Array>,
    pub append: Option<&'a Array>,
}

impl Default for DiffOptions<'_> {
    fn default() -> Self {
        DiffOptions {
            n: 1,
            axis: -1,
            prepend: None,
            append: None,
        }
    }
}

/// The `n`-th discrete difference along an axis, `a[1:] - a[:-1]` repeated (`jnp.diff`);
/// booleans differ by `!=`.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 4.0, 9.0, 16.0], &[4]);
/// assert_eq!(jnp::diff(&x, Default::default()).to_vec::<f32>(), vec![3.0, 5.0, 7.0]);
/// ```
#[track_caller]
pub fn diff(a: &Array, opts: DiffOptions) -> Array {
    if a.rank() == 0 {
        fail("diff", "requires an input of at least 1 dimension", &[a]);
    }
    let ax = norm_axis(opts.axis, a.rank()) as i64;
    let side = |v: &Array| -> Array {
        if v.rank() == 0 {
            let mut shape = a.shape().to_vec();
            shape[ax as usize] = 1;
            v.astype(a.dtype()).broadcast_to(&shape)
        } else {
            v.astype(a.dtype())
        }
    };
    let mut parts = Vec::new();
    if let Some(p) = opts.prepend {
        parts.push(side(p));
    }
    parts.push(a.clone());
    if let Some(p) = opts.append {
        parts.push(side(p));
    }
    let mut x = if parts.len() > 1 {
        Array::concatenate(&parts, ax)
    } else {
        a.clone()
    };
    for _ in 0..opts.n {
        let len = x.shape()[ax as usize];
        if len == 0 {
            break;
        }
        let (hi, lo) = (x.slice_axis(ax, 1, len), x.slice_axis(ax, 0, len - 1));
        x = if x.dtype() == DType::Bool {
            hi.ne(&lo)
        } else {
            hi - lo
        };
    }
    x
}

/// The differences of the flattened array, with `to_begin` and `to_end` around them
/// (`jnp.ediff1d`).
#[track_caller]
pub fn ediff1d(ary: &Array, to_end: Option<&Array>, to_begin: Option<&Array>) -> Array {
    let flat = ary.reshape([-1i64]);
    let d = diff(&flat, DiffOptions::default());
    let mut parts = Vec::new();
    if let Some(b) = to_begin {
        parts.push(b.astype(d.dtype()).reshape([-1i64]));
    }
    parts.push(d);
    if let Some(e) = to_end {
        parts.push(e.astype(parts[0].dtype()).reshape([-1i64]));
    }
    if parts.len() == 1 {
        parts.remove(0)
    } else {
        Array::concatenate(&parts, 0)
    }
}

/// The options of [`trapezoid`]: sample points `x` (else spacing `dx`, default 1), along
/// `axis` (default -1).
#[derive(Clone, Copy, Debug)]
pub struct TrapezoidOptions<'a> {
    pub x: Option<&'a Array>,
    pub dx: f64,
    pub axis: i64,
}

impl Default for TrapezoidOptions<'_> {
    fn default() -> Self {
        TrapezoidOptions {
            x: None,
            dx: 1.0,
            axis: -1,
        }
    }
}

/// The integral of `y` by the trapezoidal rule along an axis (`jnp.trapezoid`).
#[track_caller]
pub fn trapezoid(y: &Array, opts: TrapezoidOptions) -> Array {
    let y = y.astype(inexact(y));
    let ax = norm_axis(opts.axis, y.rank()) as i64;
    let n = y.shape()[ax as usize];
    let mid = (y.slice_axis(ax, 1, n) + y.slice_axis(ax, 0, n - 1)) * 0.5;
    match opts.x {
        None => (mid * opts.dx).sum(ax, false),
        Some(x) => {
            let d = diff(
                x,
                DiffOptions {
                    axis: if x.rank() == 1 { 0 } else { ax },
                    ..Default::default()
                },
            );
            let d = if x.rank() == 1 && y.rank() > 1 {
                let mut shape = vec![1usize; y.rank()];
                shape[ax as usize] = n - 1;
                d.reshape(shape)
            } else {
                d
            };
            (mid * d).sum(ax, false)
        }
    }
}

// ---- sorting --------------------------------------------------------------------------------

/// The options of [`sort`] and [`argsort`]: `stable` (default true; every jaxrs sort is
/// stable) and `descending` (default false).
#[derive(Clone, Copy, Debug)]
pub struct SortOptions {
    pub stable: bool,
    pub descending: bool,
}

impl Default for SortOptions {
    fn default() -> Self {
        SortOptions {
            stable: true,
            descending: false,
        }
    }
}

/// The values sorted along `axis` (`None`: the flattened array), ascending with NaN last or
/// descending (`jnp.sort`).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![3.0f32, 1.0, 2.0], &[3]);
/// assert_eq!(jnp::sort(&x, -1, Default::default()).to_vec::<f32>(), vec![1.0, 2.0, 3.0]);
/// ```
#[track_caller]
pub fn sort(a: &Array, axis: impl Axes, opts: SortOptions) -> Array {
    let (x, ax) = one_axis("sort", a, axis);
    let s = x.sort(ax);
    if opts.descending {
        s.flip([ax])
    } else {
        s
    }
}

/// `a` sorted along its last axis, lexicographically by real then imaginary part, as a
/// complex array (`jnp.sort_complex`): a real or integer `a` becomes complex64, or
/// complex128 from float64 and 64-bit integers (JAX's `to_complex_dtype`).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![5i32, 3, 4], &[3]);
/// let s = jnp::sort_complex(&x);
/// assert_eq!(s.dtype(), DType::C64);
/// assert_eq!(jnp::real(&s).to_vec::<f32>(), vec![3.0, 4.0, 5.0]);
/// ```
#[track_caller]
pub fn sort_complex(a: &Array) -> Array {
    if a.rank() == 0 {
        fail("sort_complex", "needs an array of at least one axis", &[a]);
    }
    a.astype(a.dtype().to_complex()).sort(-1)
}

/// The int64 indices that sort `a` along `axis` (`jnp.argsort`); equal values keep their
/// order, descending too.
#[track_caller]
pub fn argsort(a: &Array, axis: impl Axes, opts: SortOptions) -> Array {
    let (x, ax) = one_axis("argsort", a, axis);
    if !opts.descending {
        return x.argsort(ax).astype(DType::I64);
    }
    // Reversed first, so that equal values keep their order once the indices are reversed.
    let n = x.shape()[norm_axis(ax, x.rank())] as i64;
    let rev = x.flip([ax]).argsort(ax).astype(DType::I64);
    (-rev + (n - 1)).flip([ax])
}

/// The int64 indices that sort by several keys along `axis`, the last key first
/// (`jnp.lexsort`).
#[track_caller]
pub fn lexsort(keys: &[&Array], axis: i64) -> Array {
    let Some(first) = keys.first() else {
        fail("lexsort", "expected at least one key", &[])
    };
    let ax = norm_axis(axis, first.rank());
    let iota = Array::iota(DType::I64, first.shape(), ax);
    let mut ops: Vec<Array> = keys.iter().rev().map(|k| (*k).clone()).collect();
    ops.push(iota);
    let n = keys.len();
    jaxrs_runtime::sort_multi(&ops, ax as i64, n, false).remove(n)
}

/// `a` rearranged along `axis` so that position `kth` holds the value it would hold sorted,
/// smaller values before it and larger after (`jnp.partition`; as JAX: the first `kth + 1`
/// ascending, the rest descending).
#[track_caller]
pub fn partition(a: &Array, kth: usize, axis: i64) -> Array {
    let ax = norm_axis(axis, a.rank()) as i64;
    let n = a.shape()[ax as usize];
    let s = a.sort(ax);
    let bottom = s.slice_axis(ax, 0, kth + 1);
    let top = s.slice_axis(ax, kth + 1, n).flip([ax]);
    Array::concatenate(&[bottom, top], ax)
}

/// The int32 indices that [`partition`] `a` (`jnp.argpartition`).
#[track_caller]
pub fn argpartition(a: &Array, kth: usize, axis: i64) -> Array {
    let ax = norm_axis(axis, a.rank()) as i64;
    let n = a.shape()[ax as usize];
    let i = a.argsort(ax);
    let bottom = i.slice_axis(ax, 0, kth + 1);
    // The rest in index order (JAX's top_k over a 0/1 proxy), not sorted.
    let rest = i.slice_axis(ax, kth + 1, n).sort(ax);
    Array::concatenate(&[bottom, rest], ax)
}

// ---- order statistics -----------------------------------------------------------------------

/// How [`quantile`] picks between the two order statistics around a quantile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QuantileMethod {
    /// Linear interpolation (the default).
    #[default]
    Linear,
    Lower,
    Higher,
    Midpoint,
    Nearest,
}

/// The options of [`quantile`] and its family.
#[derive(Clone, Copy, Debug, Default)]
pub struct QuantileOptions {
    pub method: QuantileMethod,
    pub keepdims: bool,
}

#[track_caller]
fn quantile_impl<'a>(
    a: &Array,
    q: impl IntoArg<'a>,
    axis: Option<Vec<i64>>,
    opts: QuantileOptions,
    squash_nans: bool,
) -> Array {
    let dt = inexact(a);
    let a = a.astype(dt);
    let q = where_(true, q, Array::zeros(&[], dt));
    if q.rank() > 1 {
        fail("quantile", "q must have rank 0 or 1", &[&a, &q]);
    }
    let dt = q.dtype();
    let a = a.astype(dt);
    let axes = axes_list(&a, &axis);
    // The reduced axes moved last and flattened into one.
    let kept: Vec<usize> = (0..a.rank()).filter(|d| !axes.contains(d)).collect();
    let perm: Vec<usize> = kept.iter().chain(&axes).copied().collect();
    let mut shape: Vec<usize> = kept.iter().map(|&d| a.shape()[d]).collect();
    let n: usize = axes.iter().map(|&d| a.shape()[d]).product();
    shape.push(n);
    let x = a.transpose(perm).reshape(shape.clone());
    let last = shape.len() - 1;
    let nan = x.isnan();
    let (x, count) = if squash_nans {
        let c = nan.logical_not().astype(dt).sum(last, true);
        (x, c)
    } else {
        let any_nan = nan.max(last, true);
        (
            where_(any_nan, f64::NAN, &x),
            Array::full(&[], n as f64, dt),
        )
    };
    let s = x.sort(last as i64);
    // Positions [..., k] for the k quantiles.
    let k = q.size();
    let mut qshape = vec![1usize; shape.len()];
    qshape[last] = k;
    let qb = q.reshape(qshape);
    let pos = &qb * (&count - 1.0);
    let low = pos.floor();
    let high = pos.ceil();
    let high_w = &pos - &low;
    let low_w = -&high_w + 1.0;
    let top = &count - 1.0;
    let clamp = |v: &Array| where_(v.gt(&top), &top, v).maximum(0.0);
    let mut ishape = shape.clone();
    ishape[last] = k;
    let li = clamp(&low).astype(DType::I64).broadcast_to(&ishape);
    let hi = clamp(&high).astype(DType::I64).broadcast_to(&ishape);
    let lv = s.take_along_axis(&li, last as i64);
    let hv = s.take_along_axis(&hi, last as i64);
    let r = match opts.method {
        QuantileMethod::Linear => lv * low_w + hv * high_w,
        QuantileMethod::Lower => lv,
        QuantileMethod::Higher => hv,
        QuantileMethod::Nearest => where_(high_w.le(0.5), &lv, &hv),
        QuantileMethod::Midpoint => (lv + hv) * 0.5,
    };
    // [kept..., k] -> [k, kept...] (or [kept...] for a scalar q), then keepdims.
    let rank = r.rank();
    let r = if q.rank() == 1 {
        r.transpose(
            std::iter::once(rank - 1)
                .chain(0..rank - 1)
                .collect::<Vec<_>>(),
        )
    } else {
        r.reshape(r.shape()[..rank - 1].to_vec())
    };
    if opts.keepdims {
        let mut out: Vec<usize> = if q.rank() == 1 { vec![k] } else { vec![] };
        out.extend((0..a.rank()).map(|d| if axes.contains(&d) { 1 } else { a.shape()[d] }));
        r.reshape(out)
    } else {
        r
    }
}

/// The `q`-th quantiles (`q` in `[0, 1]`, a scalar or a 1-D array) over `axis`
/// (`jnp.quantile`); a 1-D `q` puts its axis first. NaN where a slice holds one.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4]);
/// let q = jnp::quantile(&x, 0.5, None, Default::default());
/// assert_eq!(q.item::<f64>(), 2.5);
/// ```
#[track_caller]
pub fn quantile<'a>(
    a: &Array,
    q: impl IntoArg<'a>,
    axis: impl Axes,
    opts: QuantileOptions,
) -> Array {
    quantile_impl(a, q, axis.axes(), opts, false)
}

/// [`quantile`] ignoring NaNs (`jnp.nanquantile`).
#[track_caller]
pub fn nanquantile<'a>(
    a: &Array,
    q: impl IntoArg<'a>,
    axis: impl Axes,
    opts: QuantileOptions,
) -> Array {
    quantile_impl(a, q, axis.axes(), opts, true)
}

/// The `q`-th percentiles (`q` in `[0, 100]`; `jnp.percentile`).
#[track_caller]
pub fn percentile<'a>(
    a: &Array,
    q: impl IntoArg<'a>,
    axis: impl Axes,
    opts: QuantileOptions,
) -> Array {
    let q = where_(true, q, Array::zeros(&[], inexact(a))) / 100.0;
    quantile_impl(a, &q, axis.axes(), opts, false)
}

/// [`percentile`] ignoring NaNs (`jnp.nanpercentile`).
#[track_caller]
pub fn nanpercentile<'a>(
    a: &Array,
    q: impl IntoArg<'a>,
    axis: impl Axes,
    opts: QuantileOptions,
) -> Array {
    let q = where_(true, q, Array::zeros(&[], inexact(a))) / 100.0;
    quantile_impl(a, &q, axis.axes(), opts, true)
}

/// The median over `axis` (`jnp.median`).
#[track_caller]
pub fn median(a: &Array, axis: impl Axes, keepdims: bool) -> Array {
    let opts = QuantileOptions {
        method: QuantileMethod::Midpoint,
        keepdims,
    };
    quantile_impl(a, 0.5, axis.axes(), opts, false)
}

/// The median over `axis`, ignoring NaNs (`jnp.nanmedian`).
#[track_caller]
pub fn nanmedian(a: &Array, axis: impl Axes, keepdims: bool) -> Array {
    let opts = QuantileOptions {
        method: QuantileMethod::Midpoint,
        keepdims,
    };
    quantile_impl(a, 0.5, axis.axes(), opts, true)
}

// ---- searching ------------------------------------------------------------------------------

/// Which of equal values [`searchsorted`] inserts before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Side {
    /// The first position keeping order (`side="left"`, the default).
    #[default]
    Left,
    /// The last (`side="right"`).
    Right,
}

/// For each of `v`, the int32 index at which it would be inserted into the sorted 1-D `a`
/// to keep it sorted (`jnp.searchsorted`; NaN sorts last).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 2.0, 2.0, 3.0], &[4]);
/// let v = Array::from_vec(vec![2.0f32, 5.0], &[2]);
/// assert_eq!(jnp::searchsorted(&a, &v, Default::default()).to_vec::<i32>(), vec![1, 4]);
/// ```
#[track_caller]
pub fn searchsorted(a: &Array, v: &Array, side: Side) -> Array {
    if a.rank() != 1 {
        fail("searchsorted", "a must be 1-D", &[a, v]);
    }
    let dt = DType::promote(a.dtype(), false, v.dtype(), false).0;
    let (a, v) = (a.astype(dt), v.astype(dt));
    let vb = v.expand_dims(-1);
    let ab = a.reshape(
        std::iter::repeat_n(1usize, v.rank())
            .chain([a.shape()[0]])
            .collect::<Vec<_>>(),
    );
    let before = match side {
        Side::Left => lt_total(&ab, &vb),
        Side::Right => lt_total(&vb, &ab).logical_not(),
    };
    before.astype(DType::I32).sum(-1, false).astype(DType::I32)
}

/// The int32 index of the bin of `bins` (monotonic, 1-D) each of `x` falls in
/// (`jnp.digitize`); `right` puts a value equal to an edge in the bin below it.
#[track_caller]
pub fn digitize(x: &Array, bins: &Array, right: bool) -> Array {
    if bins.rank() != 1 {
        fail("digitize", "bins must be 1-D", &[x, bins]);
    }
    let side = if right { Side::Left } else { Side::Right };
    let n = bins.shape()[0];
    if n == 0 {
        return Array::zeros(x.shape(), DType::I32);
    }
    let up = searchsorted(bins, x, side);
    let down = -searchsorted(&bins.flip([0i64]), x, side) + n as i32;
    let increasing = bins
        .slice_axis(0, n - 1, n)
        .ge(bins.slice_axis(0, 0, 1))
        .reshape([0i64; 0]);
    where_(increasing, up, down)
}

/// Counts of each value `0..length` in the non-negative integer array `x` (or the sums of
/// `weights` there; `jnp.bincount`). Negative values count at 0, as JAX's. Without
/// `length` it is `max(x) + 1` (at least `minlength`), read from the values: eager only.
#[track_caller]
pub fn bincount(
    x: &Array,
    weights: Option<&Array>,
    minlength: usize,
    length: Option<usize>,
) -> Array {
    if x.rank() != 1 || !x.dtype().is_int() {
        fail("bincount", "x must be a 1-D integer array", &[x]);
    }
    let length = length.unwrap_or_else(|| {
        need_concrete("bincount", &[x]);
        let m = x.to_f64_vec().into_iter().fold(-1.0f64, f64::max);
        ((m + 1.0).max(0.0) as usize).max(minlength)
    });
    let x = x.maximum(0);
    let (w, dt) = match weights {
        Some(w) => (w.clone(), w.dtype()),
        None => (Array::full(x.shape(), 1.0, DType::I64), DType::I64),
    };
    let dt = if dt == DType::Bool { DType::I64 } else { dt };
    Array::zeros(&[length], dt).at(&x).add(w.astype(dt))
}

/// The `bins + 1` equal-width edges spanning `range` (default: the min and max of `a`;
/// `jnp.histogram_bin_edges`).
#[track_caller]
pub fn histogram_bin_edges(a: &Array, bins: usize, range: Option<(f64, f64)>) -> Array {
    let dt = inexact(a);
    let a = a.astype(dt);
    let (lo, hi) = match range {
        Some((lo, hi)) => (Array::full(&[], lo, dt), Array::full(&[], hi, dt)),
        None => (a.min(None, false), a.max(None, false)),
    };
    // An empty range widens to [lo - 0.5, hi + 0.5], as numpy's.
    let same = lo.eq(&hi);
    let lo = where_(&same, &lo - 0.5, &lo);
    let hi = where_(&same, &hi + 0.5, &hi);
    // As JAX's linspace: lo (1 - t) + hi t for t = i / bins, then hi itself.
    let t = Array::iota(dt, &[bins], 0) / bins as f64;
    let inner = &lo * &(-&t + 1.0) + &hi * &t;
    Array::concatenate(&[inner, hi.reshape([1i64])], 0)
}

/// The counts (or weight sums, or a density) of `a` in `bins` equal-width bins, and the bin
/// edges (`jnp.histogram`). The last bin includes its right edge.
#[track_caller]
pub fn histogram(
    a: &Array,
    bins: usize,
    range: Option<(f64, f64)>,
    weights: Option<&Array>,
    density: bool,
) -> (Array, Array) {
    let edges = histogram_bin_edges(a, bins, range);
    let a = a.astype(edges.dtype()).reshape([-1i64]);
    let w = match weights {
        Some(w) => w.reshape([-1i64]),
        None => Array::full(a.shape(), 1.0, a.dtype()),
    };
    let idx = searchsorted(&edges, &a, Side::Right);
    // The right edge belongs to the last bin.
    let idx = where_(a.eq(edges.slice_axis(0, bins, bins + 1)), bins as i32, &idx) - 1i32;
    let idx = where_(idx.lt(0), bins as i32, &idx);
    let counts = Array::zeros(&[bins], w.dtype()).at(&idx).add(&w);
    if density {
        let widths = diff(&edges, DiffOptions::default());
        let total = counts.sum(None, false);
        (&counts / &(widths * total), edges)
    } else {
        (counts, edges)
    }
}

/// Piecewise-linear interpolation of `(xp, fp)` (`xp` increasing) at `x` (`jnp.interp`);
/// outside `xp`, `left` (default `fp[0]`) and `right` (default `fp[-1]`).
#[track_caller]
pub fn interp(x: &Array, xp: &Array, fp: &Array, left: Option<f64>, right: Option<f64>) -> Array {
    let dt = DType::promote(inexact(x), false, inexact(xp), false).0;
    let dt = DType::promote(dt, false, inexact(fp), false).0;
    let (x, xp, fp) = (x.astype(dt), xp.astype(dt), fp.astype(dt));
    let n = xp.shape()[0];
    let i = searchsorted(&xp, &x, Side::Right).clip(1, n as i32 - 1);
    let i0 = &i - 1i32;
    let (x0, x1) = (xp.take(&i0, 0), xp.take(&i, 0));
    let (f0, f1) = (fp.take(&i0, 0), fp.take(&i, 0));
    let dx = &x1 - &x0;
    let t = (&x - &x0) / where_(dx.eq(0.0), 1.0, &dx);
    let f = where_(dx.eq(0.0), &f1, &f0 + &(t * (&f1 - &f0)));
    let first = fp.slice_axis(0, 0, 1).reshape([0i64; 0]);
    let last = fp.slice_axis(0, n - 1, n).reshape([0i64; 0]);
    let lv = left.map_or(first, |v| Array::full(&[], v, dt));
    let rv = right.map_or(last, |v| Array::full(&[], v, dt));
    let x_first = xp.slice_axis(0, 0, 1).reshape([0i64; 0]);
    let x_last = xp.slice_axis(0, n - 1, n).reshape([0i64; 0]);
    let f = where_(x.lt(&x_first), &lv, &f);
    where_(x.gt(&x_last), &rv, &f)
}

/// The gradient of `f` by central differences inside and one-sided ones at the edges, with
/// unit spacing, one array per axis of `axis` (`None`: every axis; `jnp.gradient`).
#[track_caller]
pub fn gradient(f: &Array, axis: impl Axes) -> Vec<Array> {
    let f = f.astype(inexact(f));
    let axes = axes_list(&f, &axis.axes());
    axes.iter()
        .map(|&ax| {
            let n = f.shape()[ax];
            if n < 2 {
                fail("gradient", "each axis needs at least 2 elements", &[&f]);
            }
            let ax = ax as i64;
            let first = f.slice_axis(ax, 1, 2) - f.slice_axis(ax, 0, 1);
            let last = f.slice_axis(ax, n - 1, n) - f.slice_axis(ax, n - 2, n - 1);
            if n == 2 {
                return Array::concatenate(&[first, last], ax);
            }
            let mid = (f.slice_axis(ax, 2, n) - f.slice_axis(ax, 0, n - 2)) * 0.5;
            Array::concatenate(&[first, mid, last], ax)
        })
        .collect()
}

/// The covariance matrix of the variables in the rows of `m` (columns if not `rowvar`),
/// normalised by `N - ddof` (`ddof` default: 1, or 0 when `bias`; `jnp.cov` without
/// weights).
#[track_caller]
pub fn cov(m: &Array, rowvar: bool, bias: bool, ddof: Option<usize>) -> Array {
    let x = m.astype(inexact(m));
    let x = if x.rank() == 1 {
        x.reshape([1i64, -1])
    } else {
        x
    };
    let x = if rowvar { x } else { x.t() };
    let n = x.shape()[1];
    let ddof = ddof.unwrap_or(if bias { 0 } else { 1 });
    let centered = &x - &x.mean(1, true);
    let c = centered.matmul(&centered.t()) / (n as f64 - ddof as f64);
    if m.rank() == 1 || c.shape() == [1, 1] {
        c.reshape([0i64; 0])
    } else {
        c
    }
}

/// The Pearson correlation coefficients of the variables in the rows of `x`
/// (`jnp.corrcoef`), clipped to `[-1, 1]`.
#[track_caller]
pub fn corrcoef(x: &Array, rowvar: bool) -> Array {
    let c = cov(x, rowvar, false, None);
    if c.rank() == 0 {
        // One variable: its correlation with itself (NaN where it does not vary).
        let one = Array::full(&[], 1.0, c.dtype());
        return where_(c.eq(0.0), f64::NAN, one);
    }
    let n = c.shape()[0];
    let eye = Array::iota(DType::I32, &[n, n], 0).eq(Array::iota(DType::I32, &[n, n], 1));
    let d = where_(&eye, &c, 0.0).sum(1, false).sqrt();
    let r = &c / &d.expand_dims(1) / &d.expand_dims(0);
    r.clip(-1.0, 1.0)
}

// ---- nonzero and sets -----------------------------------------------------------------------

/// The flat positions of the nonzero elements of `a`, padded (or cut) to `size` with
/// `fill_value` (default 0), as int64.
#[track_caller]
fn flat_nonzero_sized(a: &Array, size: usize, fill: i64) -> Array {
    let mask = a.ne(0).reshape([-1i64]);
    let n = mask.shape()[0];
    let slot = mask.astype(DType::I64).cumsum(0) - 1i64;
    // Zeros aim past the end, and a scatter drops what lands outside.
    let slot = where_(&mask, &slot, size as i64);
    let iota = Array::iota(DType::I64, &[n], 0);
    Array::full(&[size], fill as f64, DType::I64)
        .at(&slot)
        .set(&iota)
}

#[track_caller]
fn count_of(op: &str, mask: &Array) -> usize {
    need_concrete(op, &[mask]);
    mask.ne(0).astype(DType::I64).sum(None, false).item::<i64>() as usize
}

/// The int64 indices of the nonzero elements of `a`, one array per dimension
/// (`jnp.nonzero`); `size` pads (with `fill_value`, default 0) or cuts them to that length.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![0.0f32, 3.0, 0.0, 4.0], &[4]);
/// assert_eq!(jnp::nonzero(&x, None, None)[0].to_vec::<i64>(), vec![1, 3]);
/// assert_eq!(jnp::nonzero(&x, Some(3), Some(-1))[0].to_vec::<i64>(), vec![1, 3, -1]);
/// ```
#[track_caller]
pub fn nonzero(a: &Array, size: Option<usize>, fill_value: Option<i64>) -> Vec<Array> {
    let size = size.unwrap_or_else(|| count_of("nonzero", a));
    let fill = fill_value.unwrap_or(0);
    let a = if a.rank() == 0 {
        a.reshape([1i64])
    } else {
        a.clone()
    };
    let flat = flat_nonzero_sized(&a, size, -1);
    let valid = flat.ge(0i64);
    let mut out = Vec::with_capacity(a.rank());
    let mut stride: i64 = a.shape().iter().map(|&d| d as i64).product();
    for &d in a.shape() {
        stride /= d as i64;
        let c = flat.floor_divide(stride.max(1)).rem(d as i64);
        out.push(where_(&valid, &c, fill));
    }
    out
}

/// The int64 positions of the nonzero elements of the flattened `a` (`jnp.flatnonzero`).
#[track_caller]
pub fn flatnonzero(a: &Array, size: Option<usize>, fill_value: Option<i64>) -> Array {
    let size = size.unwrap_or_else(|| count_of("flatnonzero", a));
    flat_nonzero_sized(a, size, fill_value.unwrap_or(0))
}

/// The int64 indices of the nonzero elements of `a` as rows, `[count, rank]`
/// (`jnp.argwhere`).
#[track_caller]
pub fn argwhere(a: &Array, size: Option<usize>, fill_value: Option<i64>) -> Array {
    let size = size.unwrap_or_else(|| count_of("argwhere", a));
    let a = if a.rank() == 0 {
        a.reshape([1i64])
    } else {
        a.clone()
    };
    let parts = nonzero(&a, Some(size), fill_value);
    Array::stack(&parts, 1)
}

/// What [`unique`] returns: the sorted distinct values, and where asked, the index of each
/// one's first occurrence, the index into `values` of each element of the input (its shape),
/// and how many times each occurs (all int64).
#[derive(Clone, Debug)]
pub struct UniqueResult {
    pub values: Array,
    pub indices: Option<Array>,
    pub inverse: Option<Array>,
    pub counts: Option<Array>,
}

/// The options of [`unique`]: which extra results to return, and JAX's `size` and
/// `fill_value` (default: the smallest value; an index of it, and a count of 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct UniqueOptions {
    pub return_index: bool,
    pub return_inverse: bool,
    pub return_counts: bool,
    pub size: Option<usize>,
    pub fill_value: Option<f64>,
}

/// The sorted distinct values of the flattened `ar` and, as asked, their first indices, the
/// inverse and the counts (`jnp.unique`). Without `size` the count of distinct values is read
/// from the values: eager only.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![3i32, 1, 3, 2], &[4]);
/// let u = jnp::unique(&x, Default::default());
/// assert_eq!(u.values.to_vec::<i32>(), vec![1, 2, 3]);
/// let opts = jnp::UniqueOptions { size: Some(5), fill_value: Some(0.0), ..Default::default() };
/// assert_eq!(jnp::unique(&x, opts).values.to_vec::<i32>(), vec![1, 2, 3, 0, 0]);
/// ```
#[track_caller]
pub fn unique(ar: &Array, opts: UniqueOptions) -> UniqueResult {
    let flat = ar.reshape([-1i64]);
    let n = flat.shape()[0];
    let perm = flat.argsort(0).astype(DType::I64);
    let sorted = flat.take(&perm, 0);
    let first = if n == 0 {
        Array::zeros(&[0], DType::Bool)
    } else {
        let head = Array::full(&[1], 1.0, DType::Bool);
        let rest = if n > 1 {
            let (hi, lo) = (sorted.slice_axis(0, 1, n), sorted.slice_axis(0, 0, n - 1));
            // NaNs count as one value (equal_nan=True).
            let same = if flat.dtype().is_float() {
                hi.eq(&lo).logical_or(hi.isnan().logical_and(lo.isnan()))
            } else {
                hi.eq(&lo)
            };
            same.logical_not()
        } else {
            Array::zeros(&[0], DType::Bool)
        };
        Array::concatenate(&[head, rest], 0)
    };
    let size = opts.size.unwrap_or_else(|| count_of("unique", &first));
    let group = first.astype(DType::I64).cumsum(0) - 1i64;
    let slot = where_(&first, &group, size as i64);
    let smallest = if n == 0 {
        Array::zeros(&[], flat.dtype())
    } else {
        sorted.slice_axis(0, 0, 1).reshape([0i64; 0])
    };
    let fill = match opts.fill_value {
        Some(v) => Array::full(&[], v, flat.dtype()),
        None => smallest,
    };
    let values = fill.broadcast_to(&[size]).at(&slot).set(&sorted);
    let indices = opts.return_index.then(|| {
        let first_index = if n == 0 {
            Array::zeros(&[], DType::I64)
        } else {
            perm.slice_axis(0, 0, 1).reshape([0i64; 0])
        };
        first_index.broadcast_to(&[size]).at(&slot).set(&perm)
    });
    let inverse = opts.return_inverse.then(|| {
        let back = perm.argsort(0);
        group.take(&back, 0).reshape(ar.shape().to_vec())
    });
    let counts = opts.return_counts.then(|| {
        Array::zeros(&[size], DType::I64)
            .at(&group)
            .add(Array::full(&[n], 1.0, DType::I64))
    });
    UniqueResult {
        values,
        indices,
        inverse,
        counts,
    }
}

/// Every result of [`unique`] (`jnp.unique_all`): values, first indices, inverse, counts.
#[track_caller]
pub fn unique_all(x: &Array, size: Option<usize>, fill_value: Option<f64>) -> UniqueResult {
    unique(
        x,
        UniqueOptions {
            return_index: true,
            return_inverse: true,
            return_counts: true,
            size,
            fill_value,
        },
    )
}

/// The distinct values and their counts (`jnp.unique_counts`).
#[track_caller]
pub fn unique_counts(x: &Array, size: Option<usize>, fill_value: Option<f64>) -> (Array, Array) {
    let u = unique(
        x,
        UniqueOptions {
            return_counts: true,
            size,
            fill_value,
            ..Default::default()
        },
    );
    (u.values, u.counts.expect("asked for"))
}

/// The distinct values and the inverse indices (`jnp.unique_inverse`).
#[track_caller]
pub fn unique_inverse(x: &Array, size: Option<usize>, fill_value: Option<f64>) -> (Array, Array) {
    let u = unique(
        x,
        UniqueOptions {
            return_inverse: true,
            size,
            fill_value,
            ..Default::default()
        },
    );
    (u.values, u.inverse.expect("asked for"))
}

/// The distinct values (`jnp.unique_values`).
#[track_caller]
pub fn unique_values(x: &Array, size: Option<usize>, fill_value: Option<f64>) -> Array {
    unique(
        x,
        UniqueOptions {
            size,
            fill_value,
            ..Default::default()
        },
    )
    .values
}

/// Whether each element of `element` occurs in `test_elements` (or does not, `invert`;
/// `jnp.isin`).
#[track_caller]
pub fn isin(element: &Array, test_elements: &Array, invert: bool) -> Array {
    let t = test_elements.reshape([-1i64]);
    let e = element.expand_dims(-1);
    let found = e.eq(&t).max(-1, false);
    if invert {
        found.logical_not()
    } else {
        found
    }
}

/// The sorted distinct values of `keep` where `mask` holds, padded with `fill_value`
/// (default: the smallest of them) to `size` (eager count otherwise).
#[track_caller]
fn unique_where(
    op: &str,
    keep: &Array,
    mask: &Array,
    size: Option<usize>,
    fill: Option<f64>,
) -> Array {
    // Sorted by (not kept, value): the kept values come first, in order.
    let n = keep.shape()[0];
    let out = jaxrs_runtime::sort_multi(&[mask.logical_not(), keep.clone()], 0, 2, false);
    let (m, sorted) = (out[0].logical_not(), &out[1]);
    let first = if n > 1 {
        let (hi, lo) = (sorted.slice_axis(0, 1, n), sorted.slice_axis(0, 0, n - 1));
        let head = Array::full(&[1], 1.0, DType::Bool);
        m.logical_and(Array::concatenate(&[head, hi.ne(&lo)], 0))
    } else {
        m.clone()
    };
    let size = size.unwrap_or_else(|| count_of(op, &first));
    let slot = where_(
        &first,
        first.astype(DType::I64).cumsum(0) - 1i64,
        size as i64,
    );
    let fill = match fill {
        Some(v) => Array::full(&[], v, keep.dtype()),
        None if n > 0 => sorted.slice_axis(0, 0, 1).reshape([0i64; 0]),
        None => Array::zeros(&[], keep.dtype()),
    };
    fill.broadcast_to(&[size]).at(&slot).set(sorted)
}

/// The sorted distinct values of the union of `ar1` and `ar2` (`jnp.union1d`).
#[track_caller]
pub fn union1d(ar1: &Array, ar2: &Array, size: Option<usize>, fill_value: Option<f64>) -> Array {
    let dt = DType::promote(ar1.dtype(), false, ar2.dtype(), false).0;
    let all = Array::concatenate(
        &[
            ar1.astype(dt).reshape([-1i64]),
            ar2.astype(dt).reshape([-1i64]),
        ],
        0,
    );
    unique_values(&all, size, fill_value)
}

/// The sorted distinct values in both `ar1` and `ar2` (`jnp.intersect1d`).
#[track_caller]
pub fn intersect1d(
    ar1: &Array,
    ar2: &Array,
    size: Option<usize>,
    fill_value: Option<f64>,
) -> Array {
    let a = ar1.reshape([-1i64]);
    let mask = isin(&a, ar2, false);
    unique_where("intersect1d", &a, &mask, size, fill_value)
}

/// The sorted distinct values of `ar1` not in `ar2` (`jnp.setdiff1d`); `size` pads with
/// `fill_value`, default 0.
#[track_caller]
pub fn setdiff1d(ar1: &Array, ar2: &Array, size: Option<usize>, fill_value: Option<f64>) -> Array {
    let a = ar1.reshape([-1i64]);
    let mask = isin(&a, ar2, true);
    // JAX pads a difference with 0, not with its smallest value.
    unique_where(
        "setdiff1d",
        &a,
        &mask,
        size,
        Some(fill_value.unwrap_or(0.0)),
    )
}

/// The sorted distinct values in exactly one of `ar1` and `ar2` (`jnp.setxor1d`); eager
/// only, as in JAX (which has no `size=` for it).
#[track_caller]
pub fn setxor1d(ar1: &Array, ar2: &Array) -> Array {
    let dt = DType::promote(ar1.dtype(), false, ar2.dtype(), false).0;
    let a = ar1.astype(dt).reshape([-1i64]);
    let b = ar2.astype(dt).reshape([-1i64]);
    let all = Array::concatenate(&[a.clone(), b.clone()], 0);
    let in_a = isin(&all, &a, false);
    let in_b = isin(&all, &b, false);
    let mask = in_a.ne(&in_b);
    unique_where("setxor1d", &all, &mask, None, None)
}
