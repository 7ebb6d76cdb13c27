//! Indexing: dynamic slices, take (gather along an axis), take_along_axis, one-hot.

use super::arith::where_;
use super::axis_of;
use crate::aval::broadcast_shapes;
use crate::core::array::Array;
use crate::core::trace::{bind1, op_error, Operand};
use crate::dtype::DType;
use crate::prims::{DynamicSlice, DynamicUpdateSlice, Take, TakeAlongAxis};
use std::borrow::Cow;
use std::panic::Location;

/// What [`Array::take_with`] does with an index outside `-n..n` (`jnp.take`'s `mode`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![10i32, 11, 12], &[3]);
/// let i = Array::from_vec(vec![5i32], &[1]);
/// assert_eq!(x.take_with(&i, 0, TakeMode::Fill).to_vec::<i32>(), vec![i32::MIN]);
/// assert_eq!(x.take_with(&i, 0, TakeMode::Clip).to_vec::<i32>(), vec![12]);
/// assert_eq!(x.take_with(&i, 0, TakeMode::Wrap).to_vec::<i32>(), vec![12]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TakeMode {
    /// JAX's default: negative indices count from the end, and an index outside `-n..n`
    /// gives NaN (floats), the dtype's minimum (signed integers), its maximum (unsigned) or
    /// `true` (bool). Out-of-range elements get no gradient.
    #[default]
    Fill,
    /// Indices are clamped into `0..n` (a negative index takes element 0, as in JAX).
    Clip,
    /// Indices are taken modulo `n` (Python's `%`).
    Wrap,
}

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
    /// table this is an embedding lookup. Negative indices count from the end; an index
    /// outside `-n..n` gives the fill value, as JAX's default `mode="fill"`: NaN for floats,
    /// the minimum for signed integers, the maximum for unsigned ones, `true` for bools
    /// (see [`TakeMode`] and [`Array::take_with`] for the other modes).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![0.0f32, 1.0, 2.0], &[3]);
    /// let i = Array::from_vec(vec![2i32, -1, 3], &[3]);
    /// let got = x.take(&i, 0).to_vec::<f32>();
    /// assert_eq!(&got[..2], &[2.0, 2.0]);
    /// assert!(got[2].is_nan());
    /// ```
    #[track_caller]
    pub fn take(&self, indices: &Array, axis: i64) -> Array {
        self.take_with(indices, axis, TakeMode::Fill)
    }

    /// [`Array::take`] with the handling of out-of-range indices chosen, as `jnp.take`'s
    /// `mode`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![0.0f32, 1.0, 2.0], &[3]);
    /// let i = Array::from_vec(vec![-1i32, 3, 4], &[3]);
    /// assert_eq!(x.take_with(&i, 0, TakeMode::Clip).to_vec::<f32>(), vec![0.0, 2.0, 2.0]);
    /// assert_eq!(x.take_with(&i, 0, TakeMode::Wrap).to_vec::<f32>(), vec![2.0, 0.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn take_with(&self, indices: &Array, axis: i64, mode: TakeMode) -> Array {
        let loc = Location::caller();
        let axis = axis_of("take", axis, self);
        if !indices.dtype().is_int() {
            op_error(
                "take",
                "indices must be integers",
                &[self.aval().clone(), indices.aval().clone()],
                loc,
            );
        }
        let n = self.shape()[axis] as i64;
        // Wide enough for any axis length and any index, so the bounds below cannot wrap.
        let wide = indices.astype(DType::I64);
        let gather = |i: &Array| bind1(Take { axis }, &[Operand::from(self), Operand::from(i)]);
        match mode {
            // The primitive wraps negative indices once, then clamps: JAX's clip clamps first.
            TakeMode::Clip => gather(&wide.maximum(0i64).minimum((n - 1).max(0))),
            TakeMode::Wrap => gather(&wide.rem(n.max(1))),
            TakeMode::Fill => {
                let in_range = wide.ge(-n).logical_and(wide.lt(n));
                let mut mask_shape = vec![1i64; axis];
                mask_shape.extend(indices.shape().iter().map(|&d| d as i64));
                mask_shape.extend(vec![1i64; self.rank() - axis - 1]);
                let in_range = in_range.reshape(mask_shape);
                // The primitive counts a negative index from the end in the index's own
                // dtype: `-1i8 + 200` would wrap, so narrow indices are widened first.
                let indices = if matches!(indices.dtype(), DType::I8 | DType::U8) {
                    Cow::Owned(indices.astype(DType::I32))
                } else {
                    Cow::Borrowed(indices)
                };
                fill_out_of_range(&in_range, &gather(&indices))
            }
        }
    }

    /// Elements at `indices` along `axis`, one per index (`jnp.take_along_axis`): `indices`
    /// has `self`'s rank, and element `i` of the result is `self` at `i` with `axis` replaced
    /// by `indices[i]`. The dims other than `axis` broadcast against each other (size 1
    /// stretches, as numpy); the result has the broadcast shape with `indices`'s size along
    /// `axis`. With the [`Array::argsort`] or [`Array::argmax`] (`keepdims`) of `self` along
    /// `axis` this sorts `self` or picks its maxima. Negative indices count from the end; an
    /// index outside `-n..n` gives the fill value, as JAX's default `mode="fill"` (NaN for
    /// floats; see [`Array::take`]) and no gradient.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    /// let i = Array::from_vec(vec![0i32, 2, 1, -3], &[2, 2]);
    /// assert_eq!(x.take_along_axis(&i, 1).to_vec::<f32>(), vec![1.0, 3.0, 5.0, 4.0]);
    /// let far = Array::from_vec(vec![1i32, 0, 2], &[1, 3]);
    /// let got = x.take_along_axis(&far, 0).to_vec::<f32>();
    /// assert_eq!(&got[..2], &[4.0, 2.0]);
    /// assert!(got[2].is_nan());
    /// ```
    #[track_caller]
    pub fn take_along_axis(&self, indices: &Array, axis: i64) -> Array {
        let loc = Location::caller();
        let fail = |msg: &str| -> ! {
            op_error(
                "take_along_axis",
                msg,
                &[self.aval().clone(), indices.aval().clone()],
                loc,
            )
        };
        if !indices.dtype().is_int() {
            fail("indices must be integers");
        }
        if indices.rank() != self.rank() {
            fail("indices and the operand must have the same rank");
        }
        let axis = axis_of("take_along_axis", axis, self);
        let mut outside = self.shape().to_vec();
        outside[axis] = 1;
        let Some(mut out_shape) = broadcast_shapes(indices.shape(), &outside) else {
            fail("the dims other than axis do not broadcast")
        };
        let n = self.shape()[axis];
        out_shape[axis] = indices.shape()[axis];
        if n == 0 {
            return Array::zeros(&out_shape, self.dtype());
        }
        let mut x_shape = out_shape.clone();
        x_shape[axis] = n;
        let x = if self.shape() == x_shape {
            self.clone()
        } else {
            self.broadcast_to(&x_shape)
        };
        // Narrow indices are widened so that counting a negative one from the end cannot wrap.
        let idx = match indices.dtype() {
            DType::I8 | DType::U8 => indices.astype(DType::I32),
            _ => indices.clone(),
        };
        let idx = if idx.shape() == out_shape {
            idx
        } else {
            idx.broadcast_to(&out_shape)
        };
        let taken = bind1(
            TakeAlongAxis { axis },
            &[Operand::from(&x), Operand::from(&idx)],
        );
        let below = idx.lt(n as i64);
        let in_range = if idx.dtype().is_unsigned() {
            below
        } else {
            idx.ge(-(n as i64)).logical_and(below)
        };
        fill_out_of_range(&in_range, &taken)
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

/// `taken` where `in_range`, elsewhere JAX's fill value for its dtype: NaN for floats, the
/// minimum for signed integers, the maximum for unsigned ones, `true` for bools.
fn fill_out_of_range(in_range: &Array, taken: &Array) -> Array {
    match taken.dtype() {
        DType::Bool => where_(in_range, taken, true),
        DType::I8 => where_(in_range, taken, i8::MIN),
        DType::I16 => where_(in_range, taken, i16::MIN),
        DType::I32 => where_(in_range, taken, i32::MIN),
        DType::I64 => where_(in_range, taken, i64::MIN),
        DType::U8 => where_(in_range, taken, u8::MAX),
        DType::U16 => where_(in_range, taken, u16::MAX),
        DType::U32 => where_(in_range, taken, u32::MAX),
        DType::U64 => where_(in_range, taken, u64::MAX),
        _ => where_(in_range, taken, f64::NAN),
    }
}
