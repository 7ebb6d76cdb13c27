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
            num_keys: 1,
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
            num_keys: 1,
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
            num_keys: 1,
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

/// Sorts `operands` (one shape) along `dimension` by the first `num_keys` of them, compared
/// lexicographically (the first key first), stably, ascending with NaN last or `descending`
/// with NaN first; every operand follows the keys' permutation (`lax.sort` with `num_keys`).
/// Differentiable: tangents follow their values.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let k1 = Array::from_vec(vec![1i32, 0, 1, 0], &[4]);
/// let k2 = Array::from_vec(vec![5.0f32, 7.0, 2.0, 3.0], &[4]);
/// let out = jaxrs_runtime::sort_multi(&[k1, k2], 0, 2, false);
/// assert_eq!(out[1].to_vec::<f32>(), vec![3.0, 7.0, 2.0, 5.0]);
/// ```
#[track_caller]
pub fn sort_multi(
    operands: &[Array],
    dimension: i64,
    num_keys: usize,
    descending: bool,
) -> Vec<Array> {
    let loc = Location::caller();
    let Some(first) = operands.first() else {
        op_error("sort", "expected at least one operand", &[], loc)
    };
    let avals: Vec<_> = operands.iter().map(|a| a.aval().clone()).collect();
    if num_keys == 0 || num_keys > operands.len() {
        op_error(
            "sort",
            &format!("num_keys = {num_keys} must be between 1 and the number of operands"),
            &avals,
            loc,
        );
    }
    if operands.iter().any(|a| a.shape() != first.shape()) {
        op_error("sort", "operands must have the same shape", &avals, loc);
    }
    let dimension = first.sort_axis("sort", dimension);
    let prim = Sort {
        dimension,
        descending,
        num_keys,
    };
    let ops: Vec<Operand> = operands.iter().map(Operand::from).collect();
    bind(Arc::new(prim), &ops)
}
