//! `lax.gather`, the `lax.scatter*` family and their dimension numbers and modes. The
//! primitives and these functions live in the engine crate, beside the indexing
//! (`x.index(..)`, `x.at(..)`) that lowers to the same primitives; `scatter_apply`, a
//! composite of them, is here.

use crate::{where_, while_loop, Array, DType};

pub use jaxrs_runtime::{
    gather, scatter, scatter_add, scatter_max, scatter_min, scatter_mul, scatter_sub,
    GatherDimensionNumbers, GatherOptions, GatherScatterMode, ScatterDimensionNumbers,
    ScatterOptions,
};

/// `lax.scatter_apply(operand, scatter_indices, func, dimension_numbers, update_shape, ..)`:
/// `operand` with `func` applied at each place a window of `update_shape` lands (the windows
/// that `scatter` would write with updates of that shape). A place that several windows
/// reach gets `func` applied that many times, as XLA's scatter applies it once per update.
/// `func` is called on whole arrays: write it elementwise.
///
/// As in JAX, this is not differentiable in general (JAX has no derivative rule for it):
/// with `unique_indices` it is one `where_` over `func(operand)`, which differentiates as
/// that; otherwise the repeats run in a `while_loop`.
///
/// ```
/// use jaxrs::lax::{self, ScatterDimensionNumbers, ScatterOptions};
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let idx = Array::from_vec(vec![0i32, 2, 0], &[3, 1]);
/// let dims = ScatterDimensionNumbers {
///     inserted_window_dims: vec![0],
///     scatter_dims_to_operand_dims: vec![0],
///     ..Default::default()
/// };
/// let y = lax::scatter_apply(&x, &idx, |v: &Array| v * 2.0, &dims, &[3], ScatterOptions::default());
/// assert_eq!(y.to_vec::<f32>(), vec![4.0, 2.0, 6.0]);
/// ```
#[track_caller]
pub fn scatter_apply(
    operand: &Array,
    scatter_indices: &Array,
    func: impl Fn(&Array) -> Array,
    dimension_numbers: &ScatterDimensionNumbers,
    update_shape: &[usize],
    options: ScatterOptions,
) -> Array {
    // How many windows reach each place, counted by the same scatter (same mode, same drops).
    let hits = scatter_add(
        &Array::zeros(operand.shape(), DType::I32),
        scatter_indices,
        &Array::ones(update_shape, DType::I32),
        dimension_numbers,
        options,
    );
    let zero = Array::zeros(&[], DType::I32);
    if options.unique_indices {
        return where_(hits.gt(&zero), func(operand), operand);
    }
    let (_, out) = while_loop(
        |(left, _): &(Array, Array)| left.max(None, false).gt(&zero),
        |(left, x): (Array, Array)| {
            let now = left.gt(&zero);
            let x = where_(&now, func(&x), &x);
            (where_(&now, &left - 1, &left), x)
        },
        (hits, operand.clone()),
    );
    out
}
