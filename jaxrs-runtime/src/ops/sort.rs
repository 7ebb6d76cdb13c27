//! Sorting: sort, argsort, top_k.

use super::axis_of;
use crate::core::array::Array;
use crate::core::trace::{bind, op_error, Operand};
use crate::dtype::DType;
use crate::prims::Sort;
use std::panic::Location;
use std::sync::Arc;

impl Array {
    /// The values sorted along `axis`, ascending (`jnp.sort`): NaNs last, `-0.0` and `0.0`
    /// equal. Differentiable: the tangent (cotangent) follows its value through the sort.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![3.0f32, f32::NAN, -1.0, 2.0], &[4]);
    /// let y = x.sort(0).to_vec::<f32>();
    /// assert_eq!(&y[..3], &[-1.0, 2.0, 3.0]);
    /// assert!(y[3].is_nan());
    /// ```
    #[track_caller]
    pub fn sort(&self, axis: i64) -> Array {
        let dimension = self.sort_axis("sort", axis);
        let prim = Sort {
            dimension,
            descending: false,
        };
        bind(Arc::new(prim), &[Operand::from(self)]).remove(0)
    }

    /// The indices that sort the values along `axis` (`jnp.argsort`, stable: equal values keep
    /// their order), as int32.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![3.0f32, 1.0, 2.0, 1.0], &[4]);
    /// assert_eq!(x.argsort(0).to_vec::<i32>(), vec![1, 3, 2, 0]);
    /// ```
    #[track_caller]
    pub fn argsort(&self, axis: i64) -> Array {
        let dimension = self.sort_axis("argsort", axis);
        let iota = Array::iota(DType::I32, self.shape(), dimension);
        let prim = Sort {
            dimension,
            descending: false,
        };
        bind(Arc::new(prim), &[Operand::from(self), Operand::from(&iota)]).remove(1)
    }

    /// The `k` largest values along the last axis, largest first, and their int32 indices
    /// (`lax.top_k`; equal values in index order, NaN above every number).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, 5.0, 3.0, 5.0], &[4]);
    /// let (values, indices) = x.top_k(3);
    /// assert_eq!(values.to_vec::<f32>(), vec![5.0, 5.0, 3.0]);
    /// assert_eq!(indices.to_vec::<i32>(), vec![1, 3, 2]);
    /// ```
    #[track_caller]
    pub fn top_k(&self, k: usize) -> (Array, Array) {
        let loc = Location::caller();
        if self.rank() == 0 {
            op_error(
                "top_k",
                "the operand must have at least 1 dimension",
                &[self.aval().clone()],
                loc,
            );
        }
        let last = self.rank() - 1;
        let n = self.shape()[last];
        if k > n {
            op_error(
                "top_k",
                &format!("k = {k} is larger than the last axis ({n})"),
                &[self.aval().clone()],
                loc,
            );
        }
        let iota = Array::iota(DType::I32, self.shape(), last);
        let prim = Sort {
            dimension: last,
            descending: true,
        };
        let sorted = bind(Arc::new(prim), &[Operand::from(self), Operand::from(&iota)]);
        let take_k = |x: &Array| x.slice_axis(last as i64, 0, k);
        (take_k(&sorted[0]), take_k(&sorted[1]))
    }

    #[track_caller]
    fn sort_axis(&self, op: &str, axis: i64) -> usize {
        if self.rank() == 0 {
            op_error(
                op,
                "the operand must have at least 1 dimension",
                &[self.aval().clone()],
                Location::caller(),
            );
        }
        axis_of(op, axis, self)
    }
}
