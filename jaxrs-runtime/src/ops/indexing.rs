//! numpy indexing as JAX's: `x.index(s![..])` is `x[...]`, `x.at(s![..])` is `x.at[...]`.
//!
//! One index expression ([`IndexExpr`], a list of [`Index`]es, usually written with
//! [`s!`](crate::s)) serves reads and updates. It is lowered as JAX lowers it
//! (`jax/_src/numpy/indexing.py`): static integers and slices become `stablehlo.slice` (with
//! `rev` for negative steps), traced integer scalars `dynamic_slice`, and everything else one
//! general `gather` (reads) or `scatter` (updates) with JAX's dimension numbers.

use super::{coerce, IntoArg};
use crate::aval::{broadcast_shapes, Aval};
use crate::core::array::Array;
use crate::core::ir::Literal;
use crate::core::trace::{bind1, op_error, Operand};
use crate::dtype::DType;
use crate::ops::where_;
use crate::prims::gather::{
    broadcast_mask, clamp_starts, in_bounds, Gather, GatherDims, GatherMode, Scatter, ScatterOp,
};
use crate::prims::{DynamicSlice, Rev};
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};
use std::panic::Location;

/// One entry of an index expression, as one entry of a numpy index tuple.
#[derive(Clone)]
pub enum Index {
    /// `x[i]`: one element along the axis (negative counts from the end); the axis goes.
    Int(i64),
    /// `x[start:stop:step]`: Python's slice rules (omitted bounds, negative bounds and steps).
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: i64,
    },
    /// `x[None]` (`np.newaxis`): a new axis of size 1.
    NewAxis,
    /// `x[...]`: as many full slices as the other entries leave axes.
    Ellipsis,
    /// An integer array (advanced indexing; a 0-d one is a traced integer scalar) or a boolean
    /// mask (concrete arrays only: its `true` positions).
    Array(Array),
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Index::Int(i) => write!(f, "{i}"),
            Index::Slice { start, stop, step } => {
                let b = |v: &Option<i64>| v.map_or(String::new(), |v| v.to_string());
                write!(f, "{}:{}:{step}", b(start), b(stop))
            }
            Index::NewAxis => write!(f, "None"),
            Index::Ellipsis => write!(f, "..."),
            Index::Array(a) => write!(f, "{}", a.aval()),
        }
    }
}

/// `np.newaxis`: written `NewAxis` (or `None`) inside [`s!`](crate::s).
#[derive(Debug, Clone, Copy)]
pub struct NewAxis;

/// Python's `...`: written `...` inside [`s!`](crate::s).
#[derive(Debug, Clone, Copy)]
pub struct Ellipsis;

/// A numpy index tuple: what [`s!`](crate::s) builds, and what [`Array::index`] and
/// [`Array::at`] take.
#[derive(Clone, Debug, Default)]
pub struct IndexExpr(pub Vec<Index>);

impl IndexExpr {
    /// The expression of these entries.
    pub fn new(entries: Vec<Index>) -> IndexExpr {
        IndexExpr(entries)
    }
}

/// Anything that can be one entry of an index expression: integers, Rust ranges (slices),
/// [`NewAxis`], [`Ellipsis`], arrays, or an [`Index`].
pub trait IntoIndex {
    /// This entry as an [`Index`].
    fn into_index(self) -> Index;
}

impl IntoIndex for Index {
    fn into_index(self) -> Index {
        self
    }
}
impl IntoIndex for NewAxis {
    fn into_index(self) -> Index {
        Index::NewAxis
    }
}
impl IntoIndex for Ellipsis {
    fn into_index(self) -> Index {
        Index::Ellipsis
    }
}
impl IntoIndex for &Array {
    fn into_index(self) -> Index {
        Index::Array(self.clone())
    }
}
impl IntoIndex for Array {
    fn into_index(self) -> Index {
        Index::Array(self)
    }
}
impl IntoIndex for RangeFull {
    fn into_index(self) -> Index {
        Index::Slice {
            start: None,
            stop: None,
            step: 1,
        }
    }
}

macro_rules! int_index {
    ($($t:ty),*) => {$(
        impl IntoIndex for $t {
            fn into_index(self) -> Index {
                Index::Int(self as i64)
            }
        }
        impl IntoIndex for Range<$t> {
            fn into_index(self) -> Index {
                Index::Slice { start: Some(self.start as i64), stop: Some(self.end as i64), step: 1 }
            }
        }
        impl IntoIndex for RangeFrom<$t> {
            fn into_index(self) -> Index {
                Index::Slice { start: Some(self.start as i64), stop: None, step: 1 }
            }
        }
        impl IntoIndex for RangeTo<$t> {
            fn into_index(self) -> Index {
                Index::Slice { start: None, stop: Some(self.end as i64), step: 1 }
            }
        }
        impl IntoIndex for RangeInclusive<$t> {
            fn into_index(self) -> Index {
                let end = *self.end() as i64;
                // `a..=-1` runs to the last element: Python has no stop for that.
                let stop = if end == -1 { None } else { Some(end + 1) };
                Index::Slice { start: Some(*self.start() as i64), stop, step: 1 }
            }
        }
        impl IntoIndex for RangeToInclusive<$t> {
            fn into_index(self) -> Index {
                let end = self.end as i64;
                let stop = if end == -1 { None } else { Some(end + 1) };
                Index::Slice { start: None, stop, step: 1 }
            }
        }
    )*};
}
int_index!(i32, i64, isize, usize, u32);

impl Index {
    /// A slice entry with a step: what `s![a..b; step]` writes. A negative step walks
    /// backwards from `start` (default: the last element), as `x[a:b:-k]`.
    ///
    /// Panics if `range` is not a slice or `step` is 0.
    #[track_caller]
    pub fn stepped(range: impl IntoIndex, step: i64) -> Index {
        match range.into_index() {
            Index::Slice { start, stop, .. } if step != 0 => Index::Slice { start, stop, step },
            Index::Slice { .. } => panic!("index: a slice step cannot be zero"),
            other => panic!("index: only a slice can have a step, got {other:?}"),
        }
    }

    /// A slice bound as [`s!`](crate::s) reads it.
    #[doc(hidden)]
    pub fn bound(v: impl SliceBound) -> i64 {
        v.to_i64()
    }

    /// The slice `start..=end` (`end = -1` runs to the last element).
    pub fn inclusive(start: Option<i64>, end: i64) -> Index {
        let stop = if end == -1 { None } else { Some(end + 1) };
        Index::Slice {
            start,
            stop,
            step: 1,
        }
    }

    /// The slice `start:stop:step`, each part optional as in Python.
    pub fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Index {
        Index::Slice {
            start,
            stop,
            step: step.unwrap_or(1),
        }
    }
}

/// Anything an array can be indexed by: an [`IndexExpr`] (from [`s!`](crate::s)) or a single
/// entry (an integer, a range, an array: an index on axis 0).
pub trait IntoIndexExpr {
    /// The expression.
    fn into_index_expr(self) -> IndexExpr;
}

impl IntoIndexExpr for IndexExpr {
    fn into_index_expr(self) -> IndexExpr {
        self
    }
}

impl<T: IntoIndex> IntoIndexExpr for T {
    fn into_index_expr(self) -> IndexExpr {
        IndexExpr(vec![self.into_index()])
    }
}

/// numpy's index expressions, as `x[...]` writes them: `s![0, 1..-1, .., None, ..;-1, &idx,
/// ...]` is `x[0, 1:-1, :, None, ::-1, idx, ...]`.
///
/// Entries: integers (negative counts from the end), Rust ranges for slices (`a..b`, `a..`,
/// `..b`, `..`, `a..=b`; bounds may be negative), a step after `;` (`a..b;2`, `..;-1`),
/// `None` or `NewAxis`, `...` for the ellipsis, and arrays (`&idx`): integer arrays, 0-d
/// integer arrays (traced scalars) and concrete boolean masks.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec((0..24).map(|v| v as f32).collect(), &[2, 3, 4]);
/// assert_eq!(x.index(s![1, .., -1]).to_vec::<f32>(), vec![15.0, 19.0, 23.0]);
/// assert_eq!(x.index(s![0, 0, ..;-2]).to_vec::<f32>(), vec![3.0, 1.0]);
/// assert_eq!(x.index(s![..., None, 0]).shape(), &[2, 3, 1]);
/// ```
///
/// The macro reads a range's bounds itself (it does not build a Rust `Range`), so that
/// `1..-1` is a slice and not what clippy calls an empty range.
#[macro_export]
macro_rules! s {
    // Entries are split at top-level commas, then each is read by `@one`.
    (@entries [$($acc:expr,)*] []) => {
        $crate::IndexExpr::new(vec![$($acc,)*])
    };
    (@entries [$($acc:expr,)*] [$($cur:tt)+]) => {
        $crate::IndexExpr::new(vec![$($acc,)* $crate::s!(@one $($cur)+),])
    };
    (@entries [$($acc:expr,)*] [$($cur:tt)+] , $($rest:tt)*) => {
        $crate::s!(@entries [$($acc,)* $crate::s!(@one $($cur)+),] [] $($rest)*)
    };
    (@entries [$($acc:expr,)*] [$($cur:tt)*] $t:tt $($rest:tt)*) => {
        $crate::s!(@entries [$($acc,)*] [$($cur)* $t] $($rest)*)
    };
    (@one ...) => { $crate::Index::Ellipsis };
    (@one None) => { $crate::Index::NewAxis };
    (@one $($t:tt)+) => { $crate::s!(@step [] $($t)+) };
    // `range ; step`
    (@step [$($r:tt)+] ; $($st:tt)+) => {
        $crate::Index::stepped($crate::s!(@range [] $($r)+), $($st)+)
    };
    (@step [$($r:tt)+]) => { $crate::s!(@range [] $($r)+) };
    (@step [$($r:tt)*] $t:tt $($rest:tt)*) => { $crate::s!(@step [$($r)* $t] $($rest)*) };
    // `a..b`, `a..=b`, either bound optional; anything else is a value (`IntoIndex`).
    (@range [$($a:tt)*] ..= $($b:tt)+) => {
        $crate::Index::inclusive($crate::s!(@bound $($a)*), $crate::Index::bound($($b)+))
    };
    (@range [$($a:tt)*] .. $($b:tt)*) => {
        $crate::Index::slice($crate::s!(@bound $($a)*), $crate::s!(@bound $($b)*), None)
    };
    (@range [$($a:tt)+]) => { $crate::IntoIndex::into_index($($a)+) };
    (@range [$($a:tt)*] $t:tt $($rest:tt)*) => { $crate::s!(@range [$($a)* $t] $($rest)*) };
    (@bound) => { None };
    (@bound $($b:tt)+) => { Some($crate::Index::bound($($b)+)) };
    ($($t:tt)*) => {
        $crate::s!(@entries [] [] $($t)*)
    };
}

/// An integer usable as a slice bound in [`s!`](crate::s).
pub trait SliceBound {
    /// The bound as an `i64`.
    fn to_i64(self) -> i64;
}

macro_rules! slice_bound {
    ($($t:ty),*) => {$(
        impl SliceBound for $t {
            fn to_i64(self) -> i64 {
                self as i64
            }
        }
    )*};
}
slice_bound!(i32, i64, isize, usize, u32);

/// What an index out of bounds does (JAX's `mode` of `x.at[..]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexMode {
    /// The default, as JAX's: reads clamp an index out of bounds (XLA's gather and
    /// dynamic slice do, at no cost), updates drop it.
    #[default]
    Default,
    /// The caller promises every index is in bounds (`promise_in_bounds`).
    PromiseInBounds,
    /// Indices are clamped into bounds (`clip`).
    Clip,
    /// Reads out of bounds give the fill value (`fill`).
    Fill,
    /// Updates out of bounds are dropped (`drop`).
    Drop,
}

/// A resolved entry: the ellipsis expanded, masks made integer arrays.
#[derive(Clone)]
enum Item {
    Int(i64),
    Scalar(Array),
    Slice(Option<i64>, Option<i64>, i64),
    NewAxis,
    Arr(Array),
}

/// Python's `slice(start, stop, step).indices(n)`.
fn py_indices(start: Option<i64>, stop: Option<i64>, step: i64, n: i64) -> (i64, i64, i64) {
    let adjust = |v: Option<i64>, default: i64, lo: i64, hi: i64| match v {
        None => default,
        Some(v) if v < 0 => (v + n).max(lo),
        Some(v) => v.min(hi),
    };
    if step > 0 {
        (adjust(start, 0, 0, n), adjust(stop, n, 0, n), step)
    } else {
        (
            adjust(start, n - 1, -1, n - 1),
            adjust(stop, -1, -1, n - 1),
            step,
        )
    }
}

/// The number of elements of a canonical slice.
fn slice_len(start: i64, stop: i64, step: i64) -> usize {
    if step > 0 && stop > start {
        ((stop - start - 1) / step + 1) as usize
    } else if step < 0 && start > stop {
        ((start - stop - 1) / (-step) + 1) as usize
    } else {
        0
    }
}

/// The integer dtype JAX computes indices into `shape` in (`int_dtype_for_shape`).
fn index_dtype(shape: &[usize]) -> DType {
    if shape.iter().all(|&d| d <= i32::MAX as usize) {
        DType::I32
    } else {
        DType::I64
    }
}

/// An index expression checked against an array's shape, in a form every lowering reads.
struct Parsed {
    items: Vec<Item>,
    /// Whether the integer arrays (and integers with them) sit side by side.
    contiguous: bool,
}

struct Ctx<'a> {
    op: &'a str,
    x: &'a Array,
    loc: &'static Location<'static>,
}

impl Ctx<'_> {
    fn fail(&self, msg: &str, extra: &[Aval]) -> ! {
        let mut avals = vec![self.x.aval().clone()];
        avals.extend_from_slice(extra);
        op_error(self.op, msg, &avals, self.loc)
    }

    fn parse(&self, expr: &IndexExpr) -> Parsed {
        let shape = self.x.shape();
        // Masks first: a k-d mask is k integer arrays (JAX's expand_bool_indices).
        let mut entries: Vec<Index> = Vec::new();
        for e in &expr.0 {
            match e {
                Index::Array(a) if a.dtype() == DType::Bool => {
                    if a.rank() == 0 {
                        self.fail(
                            "a 0-d boolean index is not supported; use where_",
                            &[a.aval().clone()],
                        );
                    }
                    if !a.is_concrete() {
                        self.fail(
                            "a boolean mask must be concrete: its true count sets the result's \
                             shape, which a traced mask (an argument of jit, vmap or grad) \
                             cannot give \
                             (JAX's NonConcreteBooleanIndexError); use where_(mask, x, fill) \
                             to keep the shape, or index outside the trace",
                            &[a.aval().clone()],
                        );
                    }
                    let mask = a.to_vec::<bool>();
                    let dims = a.shape().to_vec();
                    let mut cols: Vec<Vec<i64>> = vec![Vec::new(); dims.len()];
                    for (flat, &on) in mask.iter().enumerate() {
                        if on {
                            let mut r = flat;
                            for k in (0..dims.len()).rev() {
                                cols[k].push((r % dims[k]) as i64);
                                r /= dims[k];
                            }
                        }
                    }
                    let count = cols[0].len();
                    for c in cols {
                        entries.push(Index::Array(Array::from_vec(c, &[count])));
                    }
                }
                Index::Array(a) if !a.dtype().is_int() => self.fail(
                    &format!(
                        "indices must be integers or booleans, got {}",
                        a.dtype().name()
                    ),
                    &[a.aval().clone()],
                ),
                other => entries.push(other.clone()),
            }
        }
        // Bool masks must match the axes they consume.
        {
            let mut axis = 0;
            let ellipsis_consumes = {
                let used: usize = expr
                    .0
                    .iter()
                    .map(|e| match e {
                        Index::NewAxis | Index::Ellipsis => 0,
                        Index::Array(a) if a.dtype() == DType::Bool => a.rank(),
                        _ => 1,
                    })
                    .sum();
                shape.len().saturating_sub(used)
            };
            for e in &expr.0 {
                match e {
                    Index::NewAxis => {}
                    Index::Ellipsis => axis += ellipsis_consumes,
                    Index::Array(a) if a.dtype() == DType::Bool => {
                        let want: Vec<usize> =
                            shape.iter().skip(axis).take(a.rank()).copied().collect();
                        if want.as_slice() != a.shape() {
                            self.fail(
                                &format!(
                                    "the boolean index's shape {:?} does not match the indexed \
                                     axes {want:?}",
                                    a.shape()
                                ),
                                &[a.aval().clone()],
                            );
                        }
                        axis += a.rank();
                    }
                    _ => axis += 1,
                }
            }
        }
        let ellipses = entries
            .iter()
            .filter(|e| matches!(e, Index::Ellipsis))
            .count();
        if ellipses > 1 {
            self.fail("an index can only have a single ellipsis ('...')", &[]);
        }
        let consumed = entries
            .iter()
            .filter(|e| !matches!(e, Index::NewAxis | Index::Ellipsis))
            .count();
        if consumed > shape.len() {
            let what = if shape.is_empty() {
                "too many indices for a 0-d array".to_string()
            } else {
                format!(
                    "too many indices: the array is {}-dimensional, but {consumed} were indexed",
                    shape.len()
                )
            };
            self.fail(&what, &[]);
        }
        // numpy's rule: integer arrays (with the integers among them) side by side keep
        // their place; separated (by a slice, None or ...) their dims go first.
        let advanced: Vec<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Index::Int(_) | Index::Array(_)))
            .map(|(i, _)| i)
            .collect();
        let contiguous = advanced.windows(2).all(|w| w[1] == w[0] + 1);
        let mut items = Vec::new();
        for e in entries {
            match e {
                Index::Ellipsis => {
                    for _ in 0..shape.len() - consumed {
                        items.push(Item::Slice(None, None, 1));
                    }
                }
                Index::Int(i) => items.push(Item::Int(i)),
                Index::Slice { step: 0, .. } => self.fail("a slice step cannot be zero", &[]),
                Index::Slice { start, stop, step } => items.push(Item::Slice(start, stop, step)),
                Index::NewAxis => items.push(Item::NewAxis),
                Index::Array(a) if a.rank() == 0 => items.push(Item::Scalar(a)),
                Index::Array(a) => items.push(Item::Arr(a)),
            }
        }
        if ellipses == 0 {
            for _ in consumed..shape.len() {
                items.push(Item::Slice(None, None, 1));
            }
        }
        Parsed { items, contiguous }
    }

    /// The axis of `x` each item consumes (`None` for new axes).
    fn axes(&self, p: &Parsed) -> Vec<Option<usize>> {
        let mut axis = 0;
        p.items
            .iter()
            .map(|it| match it {
                Item::NewAxis => None,
                _ => {
                    axis += 1;
                    Some(axis - 1)
                }
            })
            .collect()
    }

    /// Whether every static integer is in bounds (else JAX leaves the static slice for a
    /// dynamic one, which clamps).
    fn static_ints_in_bounds(&self, p: &Parsed) -> bool {
        p.items
            .iter()
            .zip(self.axes(p))
            .all(|(it, axis)| match (it, axis) {
                (Item::Int(i), Some(a)) => {
                    let n = self.x.shape()[a] as i64;
                    (0..n).contains(&if *i < 0 { i + n } else { *i })
                }
                _ => true,
            })
    }
}

/// Inserts size-1 dims at `dims` (positions in the result, increasing).
fn expand_at(y: Array, dims: &[usize]) -> Array {
    if dims.is_empty() {
        return y;
    }
    let mut shape = y.shape().to_vec();
    for &d in dims {
        shape.insert(d, 1);
    }
    y.reshape(shape)
}

/// The pieces of JAX's `_GatherIndexer`.
struct GatherPlan {
    slice_shape: Vec<usize>,
    indices: Array,
    dims: GatherDims,
    slice_sizes: Vec<usize>,
    reversed: Vec<usize>,
    newaxis: Vec<usize>,
    no_arrays: bool,
}

/// An index as the gather takes it: negative ones counted from the end, in `dt`.
fn normalized(a: &Array, n: usize, dt: DType) -> Array {
    let a = if a.dtype().is_unsigned() {
        a.clone()
    } else {
        let w = if matches!(a.dtype(), DType::I8) {
            a.astype(DType::I32)
        } else {
            a.clone()
        };
        where_(w.lt(0), w.add(n as i64), &w)
    };
    a.astype(dt)
}

fn gather_plan(cx: &Ctx<'_>, p: &Parsed) -> GatherPlan {
    let shape = cx.x.shape().to_vec();
    let dt = index_dtype(&shape);
    let axes = cx.axes(p);
    let has_arrays = p.items.iter().any(|i| matches!(i, Item::Arr(_)));
    // The advanced entries (with integers and 0-d arrays among them when any array is).
    let adv: Vec<usize> = if has_arrays {
        (0..p.items.len())
            .filter(|&i| matches!(p.items[i], Item::Int(_) | Item::Scalar(_) | Item::Arr(_)))
            .collect()
    } else {
        Vec::new()
    };
    let adv_arrays: Vec<Array> = adv
        .iter()
        .map(|&i| {
            let a = axes[i].unwrap();
            match &p.items[i] {
                Item::Int(v) => {
                    let n = shape[a] as i64;
                    Array::scalar(if *v < 0 { v + n } else { *v }).astype(dt)
                }
                Item::Scalar(s) | Item::Arr(s) => normalized(s, shape[a], dt),
                _ => unreachable!(),
            }
        })
        .collect();
    let adv_shape = adv_arrays
        .iter()
        .try_fold(Vec::new(), |acc, a| broadcast_shapes(&acc, a.shape()));
    let Some(adv_shape) = adv_shape else {
        let avals: Vec<Aval> = adv_arrays.iter().map(|a| a.aval().clone()).collect();
        cx.fail("the index arrays do not broadcast together", &avals)
    };
    let mut offset_dims = Vec::new();
    let mut collapsed = Vec::new();
    let mut start_index_map = Vec::new();
    let mut gather_indices: Vec<(Array, usize)> = Vec::new();
    let mut gi_shape: Vec<usize> = Vec::new();
    let mut slice_shape = Vec::new();
    let mut newaxis = Vec::new();
    let mut reversed = Vec::new();
    let mut slice_sizes = Vec::new();
    let (mut y_axis, mut cy_axis) = (0usize, 0usize);
    for (pos, it) in p.items.iter().enumerate() {
        let place_adv =
            !adv.is_empty() && ((p.contiguous && pos == adv[0]) || (!p.contiguous && pos == 0));
        if place_adv {
            let start = gi_shape.len();
            for a in &adv_arrays {
                gather_indices.push((a.broadcast_to(&adv_shape), start));
            }
            gi_shape.extend(&adv_shape);
            for &i in &adv {
                start_index_map.push(axes[i].unwrap());
                collapsed.push(axes[i].unwrap());
            }
            slice_shape.extend(&adv_shape);
            y_axis += adv_shape.len();
            cy_axis += adv_shape.len();
        }
        if adv.contains(&pos) {
            slice_sizes.push(1);
            continue;
        }
        match it {
            Item::Int(_) | Item::Scalar(_) => {
                let a = axes[pos].unwrap();
                if shape[a] == 0 {
                    cx.fail(
                        &format!("index is out of bounds for axis {a} with size 0"),
                        &[],
                    );
                }
                let i = match it {
                    Item::Int(v) => {
                        let n = shape[a] as i64;
                        Array::scalar(if *v < 0 { v + n } else { *v }).astype(dt)
                    }
                    Item::Scalar(s) => normalized(s, shape[a], dt),
                    _ => unreachable!(),
                };
                gather_indices.push((i, gi_shape.len()));
                collapsed.push(a);
                slice_sizes.push(1);
                start_index_map.push(a);
            }
            Item::NewAxis => {
                slice_shape.push(1);
                newaxis.push(y_axis);
                y_axis += 1;
            }
            Item::Slice(start, stop, step) => {
                let a = axes[pos].unwrap();
                let n = shape[a] as i64;
                let (s, e, st) = py_indices(*start, *stop, *step, n);
                let len = slice_len(s, e, st);
                slice_shape.push(len);
                if st == 1 {
                    if len != shape[a] {
                        gather_indices.push((Array::scalar(s).astype(dt), gi_shape.len()));
                        start_index_map.push(a);
                    }
                    slice_sizes.push(len);
                    offset_dims.push(cy_axis);
                } else {
                    let mut idx = Array::iota(dt, &[len], 0).mul(st).add(s);
                    if st < 0 {
                        reversed.push(cy_axis);
                        idx = idx.flip([0]);
                    }
                    slice_sizes.push(1);
                    gather_indices.push((idx, gi_shape.len()));
                    start_index_map.push(a);
                    gi_shape.push(len);
                    collapsed.push(a);
                }
                cy_axis += 1;
                y_axis += 1;
            }
            Item::Arr(_) => unreachable!("arrays are advanced"),
        }
    }
    let mut full = gi_shape.clone();
    full.push(1);
    let indices = if gather_indices.is_empty() {
        Array::zeros(&[0], dt)
    } else {
        let parts: Vec<Array> = gather_indices
            .iter()
            .map(|(g, start)| {
                let dims: Vec<usize> = (*start..start + g.rank()).collect();
                bind1(
                    crate::prims::BroadcastInDim {
                        shape: full.clone(),
                        dims,
                    },
                    &[Operand::from(g)],
                )
            })
            .collect();
        if parts.len() == 1 {
            parts.into_iter().next().unwrap()
        } else {
            Array::concatenate(&parts, full.len() as i64 - 1)
        }
    };
    collapsed.sort_unstable();
    GatherPlan {
        slice_shape,
        indices,
        dims: GatherDims {
            offset_dims,
            collapsed_slice_dims: collapsed,
            start_index_map,
            operand_batching_dims: vec![],
            start_indices_batching_dims: vec![],
        },
        slice_sizes,
        reversed,
        newaxis,
        no_arrays: !has_arrays,
    }
}

/// JAX's fill value of a dtype: NaN for floats, the minimum for signed integers, the
/// maximum for unsigned ones, `true` for bools.
pub(crate) fn default_fill(dtype: DType) -> f64 {
    // From the width, so that every integer dtype gets its own extreme.
    let bits = 8 * dtype.size_in_bytes() as i32;
    if dtype == DType::Bool {
        1.0
    } else if dtype.is_unsigned() {
        2f64.powi(bits) - 1.0
    } else if dtype.is_int() {
        -(2f64.powi(bits - 1))
    } else {
        f64::NAN
    }
}

struct ReadOpts {
    mode: IndexMode,
    fill_value: Option<f64>,
    sorted: bool,
    unique: bool,
}

fn read(cx: &Ctx<'_>, expr: &IndexExpr, o: &ReadOpts) -> Array {
    let p = cx.parse(expr);
    let x = cx.x;
    let has_arrays = p.items.iter().any(|i| matches!(i, Item::Arr(_)));
    let has_scalars = p.items.iter().any(|i| matches!(i, Item::Scalar(_)));
    let sliceable = matches!(
        o.mode,
        IndexMode::Default | IndexMode::PromiseInBounds | IndexMode::Clip
    );
    if sliceable
        && !has_arrays
        && !has_scalars
        && (o.mode == IndexMode::Clip || cx.static_ints_in_bounds(&p))
    {
        return static_slice(cx, &p);
    }
    let unit_steps = p
        .items
        .iter()
        .all(|i| !matches!(i, Item::Slice(_, _, s) if s.abs() != 1));
    if sliceable && !has_arrays && unit_steps {
        return dynamic_slice(cx, &p);
    }
    let plan = gather_plan(cx, &p);
    if plan.slice_shape.contains(&0) {
        return Array::zeros(&plan.slice_shape, x.dtype());
    }
    let g = Gather {
        dims: plan.dims.clone(),
        slice_sizes: plan.slice_sizes.clone(),
        mode: if o.mode == IndexMode::Clip {
            GatherMode::Clip
        } else {
            GatherMode::PromiseInBounds
        },
        indices_are_sorted: o.sorted || plan.no_arrays,
        unique_indices: o.unique || plan.no_arrays,
    };
    let mut y = g.bind(x, &plan.indices);
    if o.mode == IndexMode::Fill || o.mode == IndexMode::Drop {
        let m = in_bounds(
            &plan.indices,
            x.shape(),
            &plan.dims.start_index_map,
            &plan.slice_sizes,
        );
        let m = broadcast_mask(&m, y.shape(), &plan.dims.offset_dims);
        let fill = o.fill_value.unwrap_or_else(|| default_fill(x.dtype()));
        y = where_(&m, &y, Array::full(&[], fill, x.dtype()));
    }
    if !plan.reversed.is_empty() {
        y = bind1(
            Rev {
                dims: plan.reversed.clone(),
            },
            &[Operand::from(&y)],
        );
    }
    expand_at(y, &plan.newaxis)
}

/// Static integers and slices: one `stablehlo.slice`, then `rev`, squeeze and new axes.
fn static_slice(cx: &Ctx<'_>, p: &Parsed) -> Array {
    let shape = cx.x.shape();
    let (mut start, mut limit, mut strides) = (Vec::new(), Vec::new(), Vec::new());
    let (mut rev, mut squeeze, mut newaxis) = (Vec::new(), Vec::new(), Vec::new());
    for (it, axis) in p.items.iter().zip(cx.axes(p)) {
        match it {
            Item::NewAxis => newaxis.push(start.len() - squeeze.len() + newaxis.len()),
            Item::Int(i) => {
                let a = axis.unwrap();
                let n = shape[a] as i64;
                if n == 0 {
                    cx.fail(
                        &format!("index is out of bounds for axis {a} with size 0"),
                        &[],
                    );
                }
                let s = if *i < 0 { i + n } else { *i }.clamp(0, n - 1);
                start.push(s as usize);
                limit.push(s as usize + 1);
                strides.push(1);
                squeeze.push(a);
            }
            Item::Slice(s0, e0, st0) => {
                let a = axis.unwrap();
                let n = shape[a] as i64;
                let (s, e, st) = py_indices(*s0, *e0, *st0, n);
                if st < 0 {
                    let new_start = n.min(e + 1 + (s - e - 1).abs() % st.abs());
                    start.push(new_start as usize);
                    limit.push(new_start.max(s + 1) as usize);
                    strides.push(st.unsigned_abs() as usize);
                    rev.push(a);
                } else {
                    start.push(s as usize);
                    limit.push(s.max(e) as usize);
                    strides.push(st as usize);
                }
            }
            _ => unreachable!("static slices hold no arrays"),
        }
    }
    let trivial = strides.iter().all(|&s| s == 1)
        && (0..shape.len()).all(|d| start[d] == 0 && limit[d] == shape[d]);
    let mut y = if trivial {
        cx.x.clone()
    } else {
        cx.x.slice(&start, &limit, &strides)
    };
    if !rev.is_empty() {
        y = bind1(Rev { dims: rev }, &[Operand::from(&y)]);
    }
    if !squeeze.is_empty() {
        let kept: Vec<usize> = (0..y.rank())
            .filter(|d| !squeeze.contains(d))
            .map(|d| y.shape()[d])
            .collect();
        y = y.reshape(kept);
    }
    expand_at(y, &newaxis)
}

/// Integers (static or traced) and unit-step slices: one `dynamic_slice`, then `rev`,
/// squeeze and new axes.
fn dynamic_slice(cx: &Ctx<'_>, p: &Parsed) -> Array {
    let shape = cx.x.shape();
    let dt = index_dtype(shape);
    let mut starts: Vec<Operand> = Vec::new();
    let (mut sizes, mut rev, mut squeeze, mut newaxis) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (it, axis) in p.items.iter().zip(cx.axes(p)) {
        match it {
            Item::NewAxis => newaxis.push(starts.len() - squeeze.len() + newaxis.len()),
            Item::Int(_) | Item::Scalar(_) => {
                let a = axis.unwrap();
                if shape[a] == 0 {
                    cx.fail(
                        &format!("index is out of bounds for axis {a} with size 0"),
                        &[],
                    );
                }
                starts.push(match it {
                    Item::Int(i) => Operand::Lit(Literal::int(*i, dt)),
                    Item::Scalar(s) => {
                        let s = if s.dtype().is_unsigned() {
                            s.astype(DType::I64).minimum(i64::from(i32::MAX))
                        } else {
                            s.clone()
                        };
                        Operand::from(s.astype(dt))
                    }
                    _ => unreachable!(),
                });
                sizes.push(1);
                squeeze.push(a);
            }
            Item::Slice(s0, e0, st0) => {
                let a = axis.unwrap();
                let n = shape[a] as i64;
                let (s, e, st) = py_indices(*s0, *e0, *st0, n);
                if st < 0 {
                    let new_start = e + 1;
                    starts.push(Operand::Lit(Literal::int(new_start, dt)));
                    sizes.push((s + 1 - new_start).max(0) as usize);
                    rev.push(a);
                } else {
                    starts.push(Operand::Lit(Literal::int(s, dt)));
                    sizes.push((e - s).max(0) as usize);
                }
            }
            Item::Arr(_) => unreachable!("no arrays here"),
        }
    }
    let mut ops = vec![Operand::from(cx.x)];
    ops.extend(starts);
    let mut y = bind1(DynamicSlice { sizes }, &ops);
    if !rev.is_empty() {
        y = bind1(Rev { dims: rev }, &[Operand::from(&y)]);
    }
    if !squeeze.is_empty() {
        let kept: Vec<usize> = (0..y.rank())
            .filter(|d| !squeeze.contains(d))
            .map(|d| y.shape()[d])
            .collect();
        y = y.reshape(kept);
    }
    expand_at(y, &newaxis)
}

impl Array {
    /// `x[idx]`: numpy indexing as JAX's, with an expression from [`s!`](crate::s) or a
    /// single entry (`x.index(2)`, `x.index(1..)`, `x.index(&idx)`: an index on axis 0).
    /// Indices out of bounds are clamped (JAX's default; see [`Array::at`] for the other
    /// modes).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec((0..12).map(|v| v as i32).collect(), &[3, 4]);
    /// assert_eq!(x.index(s![-1]).to_vec::<i32>(), vec![8, 9, 10, 11]);
    /// assert_eq!(x.index(s![.., 1..-1]).shape(), &[3, 2]);
    /// let rows = Array::from_vec(vec![2i32, 0], &[2]);
    /// let cols = Array::from_vec(vec![1i32, 3], &[2]);
    /// assert_eq!(x.index(s![&rows, &cols]).to_vec::<i32>(), vec![9, 3]);
    /// ```
    #[track_caller]
    pub fn index(&self, idx: impl IntoIndexExpr) -> Array {
        let cx = Ctx {
            op: "index",
            x: self,
            loc: Location::caller(),
        };
        read(
            &cx,
            &idx.into_index_expr(),
            &ReadOpts {
                mode: IndexMode::Default,
                fill_value: None,
                sorted: false,
                unique: false,
            },
        )
    }

    /// Indexed updates and reads, as `x.at[idx]` in JAX: `x.at(s![..]).set(v)`, `.add(v)`,
    /// `.mul(v)`, `.min(v)`, `.max(v)` return a new array; `.get()` reads as
    /// [`Array::index`]. `idx` is any index expression ([`s!`](crate::s)), or one entry: an
    /// integer or an integer array (an index on axis 0). `v` broadcasts to the indexed shape
    /// and takes `x`'s dtype. Out of bounds, updates are dropped and reads clamp (JAX's
    /// defaults); [`AtIndex::mode`] picks another mode. Repeated indices all apply (`add`
    /// accumulates; for `set` one of them wins).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::zeros(&[4], DType::F32);
    /// let idx = Array::from_vec(vec![1i32, 3, 1, 9], &[4]);
    /// let y = x.at(&idx).add(1.0);
    /// assert_eq!(y.to_vec::<f32>(), vec![0.0, 2.0, 0.0, 1.0]);
    /// let z = x.at(-1).set(5.0);
    /// assert_eq!(z.to_vec::<f32>(), vec![0.0, 0.0, 0.0, 5.0]);
    /// let m = Array::zeros(&[2, 3], DType::F32).at(s![.., 1..]).set(7.0);
    /// assert_eq!(m.to_vec::<f32>(), vec![0.0, 7.0, 7.0, 0.0, 7.0, 7.0]);
    /// ```
    #[track_caller]
    pub fn at(&self, idx: impl IntoIndexExpr) -> AtIndex<'_> {
        let loc = Location::caller();
        let expr = idx.into_index_expr();
        let cx = Ctx {
            op: "at",
            x: self,
            loc,
        };
        for e in &expr.0 {
            if let Index::Array(a) = e {
                if !a.dtype().is_int() && a.dtype() != DType::Bool {
                    cx.fail("indices must be integers or booleans", &[a.aval().clone()]);
                }
            }
        }
        if self.rank() == 0
            && expr
                .0
                .iter()
                .any(|e| !matches!(e, Index::NewAxis | Index::Ellipsis))
        {
            cx.fail("cannot index a 0-d array: too many indices", &[]);
        }
        AtIndex {
            x: self,
            expr,
            loc,
            mode: IndexMode::Default,
            fill_value: None,
            sorted: false,
            unique: false,
        }
    }
}

/// `x[idx]` as a free function ([`Array::index`]).
#[track_caller]
pub fn index(x: &Array, idx: impl IntoIndexExpr) -> Array {
    x.index(idx)
}

/// The places picked by [`Array::at`], waiting for what to do with them: `x.at[idx]`.
#[derive(Clone)]
pub struct AtIndex<'a> {
    x: &'a Array,
    expr: IndexExpr,
    loc: &'static Location<'static>,
    mode: IndexMode,
    fill_value: Option<f64>,
    sorted: bool,
    unique: bool,
}

impl AtIndex<'_> {
    /// What an index out of bounds does (`mode=`): see [`IndexMode`].
    pub fn mode(mut self, mode: IndexMode) -> Self {
        self.mode = mode;
        self
    }

    /// The value an out-of-bounds read gives under [`IndexMode::Fill`] (`fill_value=`).
    pub fn fill_value(mut self, value: f64) -> Self {
        self.fill_value = Some(value);
        self
    }

    /// Promises the indices are sorted (`indices_are_sorted=True`): XLA may go faster.
    pub fn indices_are_sorted(mut self) -> Self {
        self.sorted = true;
        self
    }

    /// Promises no index repeats (`unique_indices=True`): XLA may go faster.
    pub fn unique_indices(mut self) -> Self {
        self.unique = true;
        self
    }

    fn cx(&self, op: &'static str) -> Ctx<'_> {
        Ctx {
            op,
            x: self.x,
            loc: self.loc,
        }
    }

    fn update<'a>(&self, op: ScatterOp, name: &'static str, v: impl IntoArg<'a>) -> Array {
        let cx = self.cx(name);
        let x = self.x;
        let p = cx.parse(&self.expr);
        let plan = gather_plan(&cx, &p);
        let v = v.into_arg();
        let va = v.aval();
        let shape = &plan.slice_shape;
        let fits = va.rank() <= shape.len()
            && va
                .shape
                .iter()
                .rev()
                .zip(shape.iter().rev())
                .all(|(&a, &b)| a == b || a == 1);
        if !fits {
            cx.fail(
                &format!(
                    "updates of shape {:?} cannot be broadcast to the indexed shape {shape:?}",
                    va.shape
                ),
                &[va],
            );
        }
        if shape.contains(&0) {
            return x.clone();
        }
        let near =
            (!crate::core::trace::is_tracing()).then(|| crate::core::client::target_device([x]));
        let u = coerce(v, x.dtype(), false, shape, near)
            .to_array()
            .into_owned();
        // Drop the new axes, then undo the reversals: the scatter's own window order.
        let kept: Vec<usize> = (0..shape.len())
            .filter(|d| !plan.newaxis.contains(d))
            .map(|d| shape[d])
            .collect();
        let mut u = if kept.len() == shape.len() {
            u
        } else {
            u.reshape(kept)
        };
        if !plan.reversed.is_empty() {
            u = bind1(
                Rev {
                    dims: plan.reversed.clone(),
                },
                &[Operand::from(&u)],
            );
        }
        let mut idx = plan.indices.clone();
        if self.mode == IndexMode::Clip {
            idx = clamp_starts(
                &idx,
                x.shape(),
                &plan.dims.start_index_map,
                &plan.slice_sizes,
            );
        }
        Scatter {
            op,
            dims: plan.dims.to_scatter(),
            indices_are_sorted: self.sorted || plan.no_arrays,
            unique_indices: self.unique || plan.no_arrays,
            promise_in_bounds: self.mode == IndexMode::PromiseInBounds,
        }
        .bind(x, &idx, &u)
    }

    /// `x` with the indexed places replaced by `v` (`x.at[idx].set(v)`).
    pub fn set<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Set, "at.set", v)
    }

    /// `x` with `v` added at the indexed places (`x.at[idx].add(v)`; repeats add up).
    pub fn add<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Add, "at.add", v)
    }

    /// `x` with the indexed places multiplied by `v` (`x.at[idx].multiply(v)`).
    /// Differentiable with respect to `x` only.
    pub fn mul<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Mul, "at.mul", v)
    }

    /// `x` with the indexed places lowered to `v` where `v` is smaller (`x.at[idx].min(v)`).
    pub fn min<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Min, "at.min", v)
    }

    /// `x` with the indexed places raised to `v` where `v` is larger (`x.at[idx].max(v)`).
    pub fn max<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Max, "at.max", v)
    }

    /// The indexed values (`x.at[idx].get()`), with this `mode`: by default as
    /// [`Array::index`] (integer arrays clamp), [`IndexMode::Fill`] gives the fill value out
    /// of bounds (NaN for floats unless [`AtIndex::fill_value`] says otherwise).
    pub fn get(&self) -> Array {
        let cx = self.cx("at.get");
        read(
            &cx,
            &self.expr,
            &ReadOpts {
                mode: self.mode,
                fill_value: self.fill_value,
                sorted: self.sorted,
                unique: self.unique,
            },
        )
    }
}
