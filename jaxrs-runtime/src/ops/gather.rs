//! `lax.gather` and the `lax.scatter*` family: XLA's general gather and scatter with JAX's
//! dimension numbers and out-of-bounds modes, for code written at the level of `lax` (the
//! indexing of [`Array::index`] and [`Array::at`] lowers to the same primitives).
//!
//! As in JAX, the index vector is the last dim of the indices, and `mode: None` means what it
//! means to JAX: [`GatherScatterMode::PromiseInBounds`] for `gather` (XLA clamps the read; the
//! gradient of a window that did not fit is dropped) and [`GatherScatterMode::FillOrDrop`] for
//! the scatters (a window that does not fit is dropped).

use super::indexing::default_fill;
use super::where_;
use crate::core::array::Array;
use crate::core::trace::op_error;
use crate::prims::gather::{
    broadcast_mask, clamp_starts, in_bounds, Gather, GatherMode, Scatter, ScatterOp,
};
use std::panic::Location;

pub use crate::prims::gather::{
    GatherDims as GatherDimensionNumbers, ScatterDims as ScatterDimensionNumbers,
};

/// What a gather or scatter does with a window that does not fit in the operand
/// (`lax.GatherScatterMode`). JAX's fourth mode, `ONE_HOT` (a gather computed as a one-hot
/// matmul, for TPUs), is not offered: on the backends jaxrs runs on it computes the same
/// values as [`GatherScatterMode::PromiseInBounds`], more slowly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatherScatterMode {
    /// Start indices are clamped so that the window fits (`"clip"`).
    Clip,
    /// A gather gives the fill value where the window does not fit; a scatter drops that
    /// update (`"fill"`, `"drop"`; what `from_any(None)` gives, as in JAX).
    FillOrDrop,
    /// The caller promises every window fits; XLA's own behaviour (clamped reads, dropped
    /// writes) applies where it does not (`"promise_in_bounds"`).
    PromiseInBounds,
}

impl GatherScatterMode {
    /// JAX's `GatherScatterMode.from_any`: `"clip"`, `"fill"`, `"drop"`,
    /// `"promise_in_bounds"`; `None` is `FillOrDrop`.
    #[track_caller]
    pub fn from_any(mode: Option<&str>) -> GatherScatterMode {
        match mode {
            None | Some("fill") | Some("drop") => GatherScatterMode::FillOrDrop,
            Some("clip") => GatherScatterMode::Clip,
            Some("promise_in_bounds") => GatherScatterMode::PromiseInBounds,
            Some(other) => panic!(
                "GatherScatterMode.from_any: unknown gather mode {other:?} (expected \"clip\", \
                 \"fill\", \"drop\" or \"promise_in_bounds\") at {}",
                Location::caller()
            ),
        }
    }
}

/// The keywords of `lax.gather` (`unique_indices`, `indices_are_sorted`, `mode`,
/// `fill_value`), all defaulting as JAX's.
#[derive(Debug, Clone, Copy, Default)]
pub struct GatherOptions {
    pub unique_indices: bool,
    pub indices_are_sorted: bool,
    /// `None`: [`GatherScatterMode::PromiseInBounds`], as `lax.gather`'s `mode=None`.
    pub mode: Option<GatherScatterMode>,
    /// The value of a window that does not fit under `FillOrDrop`; `None`: NaN for floats,
    /// the minimum of a signed integer dtype, the maximum of an unsigned one, `true`.
    pub fill_value: Option<f64>,
}

/// The keywords of the `lax.scatter*` functions (`indices_are_sorted`, `unique_indices`,
/// `mode`), all defaulting as JAX's.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScatterOptions {
    pub indices_are_sorted: bool,
    pub unique_indices: bool,
    /// `None`: [`GatherScatterMode::FillOrDrop`], as the scatters' `mode=None`.
    pub mode: Option<GatherScatterMode>,
}

/// `lax.gather(operand, start_indices, dimension_numbers, slice_sizes, ..)`: for each index
/// vector (the last dim of `start_indices`), the window of `slice_sizes` of `operand` that
/// starts there, laid out as `dimension_numbers` say.
///
/// ```
/// use jaxrs_runtime::{gather, Array, GatherDimensionNumbers, GatherOptions};
///
/// // x[idx] on axis 0 of a 3x2 array: rows 2 and 0.
/// let x = Array::from_vec((0..6).map(|v| v as f32).collect(), &[3, 2]);
/// let idx = Array::from_vec(vec![2i32, 0], &[2, 1]);
/// let dims = GatherDimensionNumbers {
///     offset_dims: vec![1],
///     collapsed_slice_dims: vec![0],
///     start_index_map: vec![0],
///     ..Default::default()
/// };
/// let y = gather(&x, &idx, &dims, &[1, 2], GatherOptions::default());
/// assert_eq!(y.to_vec::<f32>(), vec![4.0, 5.0, 0.0, 1.0]);
/// ```
#[track_caller]
pub fn gather(
    operand: &Array,
    start_indices: &Array,
    dimension_numbers: &GatherDimensionNumbers,
    slice_sizes: &[usize],
    options: GatherOptions,
) -> Array {
    check_indices("gather", operand, start_indices);
    let d = dimension_numbers;
    let prim = |idx: &Array, mode| {
        Gather {
            dims: d.clone(),
            slice_sizes: slice_sizes.to_vec(),
            mode,
            indices_are_sorted: options.indices_are_sorted,
            unique_indices: options.unique_indices,
        }
        .bind(operand, idx)
    };
    match options.mode.unwrap_or(GatherScatterMode::PromiseInBounds) {
        GatherScatterMode::Clip => prim(start_indices, GatherMode::Clip),
        GatherScatterMode::PromiseInBounds => prim(start_indices, GatherMode::PromiseInBounds),
        GatherScatterMode::FillOrDrop => {
            let y = prim(start_indices, GatherMode::PromiseInBounds);
            let ok = in_bounds(
                start_indices,
                operand.shape(),
                &d.start_index_map,
                slice_sizes,
            );
            let ok = broadcast_mask(&ok, y.shape(), &d.offset_dims);
            let fill = options
                .fill_value
                .unwrap_or_else(|| default_fill(operand.dtype()));
            where_(&ok, &y, Array::full(&[], fill, operand.dtype()))
        }
    }
}

#[track_caller]
fn check_indices(op: &str, operand: &Array, indices: &Array) {
    if !indices.dtype().is_int() || indices.rank() == 0 {
        op_error(
            op,
            "the indices must be an integer array of rank >= 1 (the index vector last)",
            &[operand.aval().clone(), indices.aval().clone()],
            Location::caller(),
        );
    }
}

#[track_caller]
fn scatter_with(
    name: &str,
    op: ScatterOp,
    operand: &Array,
    scatter_indices: &Array,
    updates: &Array,
    dims: &ScatterDimensionNumbers,
    options: ScatterOptions,
) -> Array {
    check_indices(name, operand, scatter_indices);
    if updates.dtype() != operand.dtype() {
        op_error(
            name,
            "the updates must have the operand's dtype",
            &[operand.aval().clone(), updates.aval().clone()],
            Location::caller(),
        );
    }
    let idx = if options.mode == Some(GatherScatterMode::Clip) {
        let sizes = dims.window_sizes(operand.rank(), updates.shape());
        clamp_starts(
            scatter_indices,
            operand.shape(),
            &dims.scatter_dims_to_operand_dims,
            &sizes,
        )
    } else {
        scatter_indices.clone()
    };
    Scatter {
        op,
        dims: dims.clone(),
        indices_are_sorted: options.indices_are_sorted,
        unique_indices: options.unique_indices,
        promise_in_bounds: options.mode == Some(GatherScatterMode::PromiseInBounds),
    }
    .bind(operand, &idx, updates)
}

macro_rules! scatter_fns {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(
            operand: &Array,
            scatter_indices: &Array,
            updates: &Array,
            dimension_numbers: &ScatterDimensionNumbers,
            options: ScatterOptions,
        ) -> Array {
            scatter_with(
                concat!("lax.", stringify!($name)),
                ScatterOp::$op,
                operand,
                scatter_indices,
                updates,
                dimension_numbers,
                options,
            )
        }
    )*};
}

scatter_fns! {
    /// `lax.scatter`: `operand` with each window of `updates` written where its index vector
    /// points. Where windows overlap, which one is kept is unspecified (as in JAX); the
    /// gradient is defined only where `unique_indices` holds.
    scatter => Set;
    /// `lax.scatter_add`: each window of `updates` added where its index vector points
    /// (repeated indices accumulate).
    scatter_add => Add;
    /// `lax.scatter_mul`: the operand multiplied by each window of `updates`.
    scatter_mul => Mul;
    /// `lax.scatter_min`: the elementwise minimum of the operand and each window.
    scatter_min => Min;
    /// `lax.scatter_max`: the elementwise maximum of the operand and each window.
    scatter_max => Max;
}

/// `lax.scatter_sub`: each window of `updates` subtracted where its index vector points.
/// Computed as the scatter-add of `-updates`, which IEEE arithmetic makes the same values
/// (and, for integers, the same wrapped ones).
#[track_caller]
pub fn scatter_sub(
    operand: &Array,
    scatter_indices: &Array,
    updates: &Array,
    dimension_numbers: &ScatterDimensionNumbers,
    options: ScatterOptions,
) -> Array {
    scatter_with(
        "lax.scatter_sub",
        ScatterOp::Add,
        operand,
        scatter_indices,
        &-updates,
        dimension_numbers,
        options,
    )
}
