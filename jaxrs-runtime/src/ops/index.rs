//! Indexing: dynamic slices, take (gather along an axis), one-hot.

use super::axis_of;
use crate::core::array::Array;
use crate::core::trace::{bind1, op_error, Operand};
use crate::dtype::DType;
use crate::prims::{DynamicSlice, DynamicUpdateSlice, Take};
use std::panic::Location;

impl Array {
    /// The slice of `sizes` starting at traced indices `starts` (one 0-d integer array per
    /// axis; negative counts from the end; clamped to stay in bounds), as
    /// `lax.dynamic_slice`.
    #[track_caller]
    pub fn dynamic_slice(&self, starts: &[Array], sizes: &[usize]) -> Array {
        let mut ops = vec![Operand::from(self)];
        ops.extend(starts.iter().map(Operand::from));
        bind1(
            DynamicSlice {
                sizes: sizes.to_vec(),
            },
            &ops,
        )
    }

    /// `self` with `update` written at `starts` (clamped), as `lax.dynamic_update_slice`.
    #[track_caller]
    pub fn dynamic_update_slice(&self, update: &Array, starts: &[Array]) -> Array {
        let update = if update.dtype() == self.dtype() {
            update.clone()
        } else {
            update.astype(self.dtype())
        };
        let mut ops = vec![Operand::from(self), Operand::from(&update)];
        ops.extend(starts.iter().map(Operand::from));
        bind1(DynamicUpdateSlice, &ops)
    }

    /// Elements at `indices` along `axis` (`jnp.take`): the result's shape is
    /// `shape[..axis] + indices.shape + shape[axis+1..]`. With `axis = 0` on a `[vocab, dim]`
    /// table this is an embedding lookup. Negative indices count from the end; out-of-range
    /// indices are clamped.
    #[track_caller]
    pub fn take(&self, indices: &Array, axis: i64) -> Array {
        let axis = axis_of("take", axis, self);
        bind1(
            Take { axis },
            &[Operand::from(self), Operand::from(indices)],
        )
    }

    /// One-hot encoding of integer `indices` over `num_classes` classes, as `dtype`
    /// (`jax.nn.one_hot`): an index out of range gives an all-zero row.
    #[track_caller]
    pub fn one_hot(indices: &Array, num_classes: usize, dtype: DType) -> Array {
        if !indices.dtype().is_int() {
            op_error(
                "one_hot",
                "indices must be integers",
                &[indices.aval().clone()],
                Location::caller(),
            );
        }
        let mut shape = indices.shape().to_vec();
        shape.push(num_classes);
        let classes = Array::iota(indices.dtype(), &shape, indices.rank());
        classes.eq(indices.expand_dims(-1)).astype(dtype)
    }
}
