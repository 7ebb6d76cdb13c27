//! Reductions and normalisations: sum, mean, max, min, prod, argmax, logsumexp, softmax,
//! cumulative sums.

use super::{axis_of, Axes};
use crate::aval::normalize_axis;
use crate::core::array::Array;
use crate::core::trace::{bind1, op_error, Operand};
use crate::dtype::DType;
use crate::ops::stop_gradient;
use crate::ops::where_;
use crate::prims::{Argmax, Cumulative, Reduce, ReduceOp, Reshape};
use std::panic::Location;

/// Resolves reduction axes to sorted, distinct, non-negative ones.
#[track_caller]
fn resolve_axes(op: &str, x: &Array, axes: Option<Vec<i64>>) -> Vec<usize> {
    let loc = Location::caller();
    let mut out: Vec<usize> = match axes {
        None => (0..x.rank()).collect(),
        Some(list) => list
            .iter()
            .map(|&a| {
                normalize_axis(a, x.rank()).unwrap_or_else(|| {
                    op_error(
                        op,
                        &format!("axis {a} is out of range for rank {}", x.rank()),
                        &[x.aval().clone()],
                        loc,
                    )
                })
            })
            .collect(),
    };
    out.sort_unstable();
    if out.windows(2).any(|w| w[0] == w[1]) {
        op_error(op, "an axis is repeated", &[x.aval().clone()], loc);
    }
    out
}

/// Re-inserts reduced axes as size-1 dims.
#[track_caller]
fn keep_dims(y: Array, x_shape: &[usize], axes: &[usize]) -> Array {
    let shape: Vec<usize> = x_shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if axes.contains(&i) { 1 } else { d })
        .collect();
    bind1(Reshape { shape }, &[Operand::from(&y)])
}

#[track_caller]
fn reduce(op: ReduceOp, name: &str, x: &Array, axes: Option<Vec<i64>>, keepdims: bool) -> Array {
    let axes = resolve_axes(name, x, axes);
    let src = match (op, x.dtype()) {
        // Sums and products of bools and narrow integers accumulate in the 64-bit integer of
        // their signedness (JAX's `promote_integers`): four int8 100s sum to 400.
        (ReduceOp::Sum | ReduceOp::Prod, d) if d.promote_integer() != d => {
            x.astype(d.promote_integer())
        }
        // jnp accumulates half-precision sums and products in float32 and rounds once
        // (`upcast_f16_for_computation`): a thousand bf16 0.1s sum to 100, not 98.
        (ReduceOp::Sum | ReduceOp::Prod, DType::F16 | DType::BF16) => x.astype(DType::F32),
        _ => x.clone(),
    };
    let mut y = bind1(
        Reduce {
            op,
            axes: axes.clone(),
        },
        &[Operand::from(&src)],
    );
    if src.dtype() != x.dtype() && x.dtype().is_float() {
        y = y.astype(x.dtype());
    }
    if keepdims {
        keep_dims(y, x.shape(), &axes)
    } else {
        y
    }
}

impl Array {
    /// The sum over `axes` (`None` for all), optionally keeping them as size-1 dims. float16
    /// and bfloat16 accumulate in float32 and round once, as `jnp.sum` does; bools and
    /// integers narrower than 64 bits sum in int64 (uint64 if unsigned), as JAX's with x64
    /// ([`DType::promote_integer`]).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    /// let total = x.sum(None, false);
    /// assert_eq!(total.item::<f32>(), 21.0);
    /// let rows = x.sum(1, true);
    /// assert_eq!(rows.shape(), &[2, 1]);
    /// assert_eq!(rows.to_vec::<f32>(), vec![6.0, 15.0]);
    /// ```
    #[track_caller]
    pub fn sum(&self, axes: impl Axes, keepdims: bool) -> Array {
        reduce(ReduceOp::Sum, "reduce_sum", self, axes.axes(), keepdims)
    }

    /// The product over `axes`; its dtype is [`sum`](Array::sum)'s.
    #[track_caller]
    pub fn prod(&self, axes: impl Axes, keepdims: bool) -> Array {
        reduce(ReduceOp::Prod, "reduce_prod", self, axes.axes(), keepdims)
    }

    /// The maximum over `axes`.
    #[track_caller]
    pub fn max(&self, axes: impl Axes, keepdims: bool) -> Array {
        reduce(ReduceOp::Max, "reduce_max", self, axes.axes(), keepdims)
    }

    /// The minimum over `axes`.
    #[track_caller]
    pub fn min(&self, axes: impl Axes, keepdims: bool) -> Array {
        reduce(ReduceOp::Min, "reduce_min", self, axes.axes(), keepdims)
    }

    /// The bitwise AND over `axes` (logical for bools; `lax.reduce_and`).
    #[track_caller]
    pub fn reduce_and(&self, axes: impl Axes) -> Array {
        self.bitwise_reduce(ReduceOp::And, "reduce_and", axes)
    }

    /// The bitwise OR over `axes` (logical for bools; `lax.reduce_or`).
    #[track_caller]
    pub fn reduce_or(&self, axes: impl Axes) -> Array {
        self.bitwise_reduce(ReduceOp::Or, "reduce_or", axes)
    }

    /// The bitwise XOR over `axes` (parity for bools; `lax.reduce_xor`).
    #[track_caller]
    pub fn reduce_xor(&self, axes: impl Axes) -> Array {
        self.bitwise_reduce(ReduceOp::Xor, "reduce_xor", axes)
    }

    #[track_caller]
    fn bitwise_reduce(&self, op: ReduceOp, name: &str, axes: impl Axes) -> Array {
        if self.dtype().is_float() {
            op_error(
                name,
                "the operand must be a boolean or integer array",
                &[self.aval().clone()],
                Location::caller(),
            );
        }
        reduce(op, name, self, axes.axes(), false)
    }

    /// The mean over `axes`; bools and integers average in their inexact dtype (float32, or
    /// float64 for 64-bit integers: [`DType::to_inexact`]), and float16 and bfloat16 sum and
    /// divide in float32 and round once, as in JAX.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::full(&[1000], 0.1, DType::BF16);
    /// let mean = x.mean(None, false).astype(DType::F32).item::<f32>();
    /// assert_eq!(f64::from(mean), 0.10009765625); // bfloat16(0.1), not the 0.0981 of bf16 sums
    /// ```
    #[track_caller]
    pub fn mean(&self, axes: impl Axes, keepdims: bool) -> Array {
        let axes = resolve_axes("mean", self, axes.axes());
        let count: usize = axes.iter().map(|&a| self.shape()[a]).product();
        let x = match self.dtype() {
            DType::F16 | DType::BF16 => self.astype(DType::F32),
            d if d.is_float() => self.clone(),
            d => self.astype(d.to_inexact()),
        };
        let axes_i: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
        let mean = x.sum(axes_i, keepdims) / count as f64;
        match self.dtype() {
            DType::F16 | DType::BF16 => mean.astype(self.dtype()),
            _ => mean,
        }
    }

    /// The variance over `axes` (`jnp.var`): `sum((x - mean)^2) / (N - ddof)`, with `ddof = 1`
    /// for the unbiased estimate. Integers work in their inexact dtype (as
    /// [`mean`](Array::mean)); float16 and bfloat16 accumulate in float32 and return their own
    /// dtype, as in JAX.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(x.var(None, false, 0).item::<f32>(), 1.25);
    /// assert_eq!(x.var(1, false, 1).to_vec::<f32>(), vec![0.5, 0.5]);
    /// ```
    #[track_caller]
    pub fn var(&self, axes: impl Axes, keepdims: bool, ddof: usize) -> Array {
        self.variance("var", axes.axes(), keepdims, ddof)
    }

    #[track_caller]
    fn variance(&self, name: &str, axes: Option<Vec<i64>>, keepdims: bool, ddof: usize) -> Array {
        let axes: Vec<i64> = resolve_axes(name, self, axes)
            .into_iter()
            .map(|a| a as i64)
            .collect();
        let count: usize = axes.iter().map(|&a| self.shape()[a as usize]).product();
        let out_dtype = self.dtype().to_inexact();
        let x = match self.dtype() {
            DType::F16 | DType::BF16 => self.astype(DType::F32),
            d if d.is_float() => self.clone(),
            d => self.astype(d.to_inexact()),
        };
        let centered = &x - &x.mean(axes.clone(), true);
        let sum = (&centered * &centered).sum(axes, keepdims);
        (sum / (count as f64 - ddof as f64)).astype(out_dtype)
    }

    /// The standard deviation over `axes` (`jnp.std`): the square root of
    /// [`var`](Array::var) with the same `ddof`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, 3.0], &[2]);
    /// assert_eq!(x.std(None, false, 0).item::<f32>(), 1.0);
    /// ```
    #[track_caller]
    pub fn std(&self, axes: impl Axes, keepdims: bool, ddof: usize) -> Array {
        self.variance("std", axes.axes(), keepdims, ddof).sqrt()
    }

    /// The index of the largest element along `axis` (the first on ties), as int32.
    #[track_caller]
    pub fn argmax(&self, axis: i64, keepdims: bool) -> Array {
        self.arg_extreme("argmax", false, axis, keepdims)
    }

    /// The index of the smallest element along `axis` (the first on ties), as int32.
    #[track_caller]
    pub fn argmin(&self, axis: i64, keepdims: bool) -> Array {
        self.arg_extreme("argmin", true, axis, keepdims)
    }

    #[track_caller]
    fn arg_extreme(&self, name: &str, is_min: bool, axis: i64, keepdims: bool) -> Array {
        let axis = axis_of(name, axis, self);
        let y = bind1(
            Argmax {
                axis,
                is_min,
                index_dtype: DType::I32,
            },
            &[Operand::from(self)],
        );
        if keepdims {
            keep_dims(y, self.shape(), &[axis])
        } else {
            y
        }
    }

    /// `log(sum(exp(x)))` over `axes`, computed stably (shifted by the max).
    #[track_caller]
    pub fn logsumexp(&self, axes: impl Axes, keepdims: bool) -> Array {
        let axes: Vec<i64> = resolve_axes("logsumexp", self, axes.axes())
            .into_iter()
            .map(|a| a as i64)
            .collect();
        let x = if self.dtype().is_float() {
            self.clone()
        } else {
            self.astype(self.dtype().to_inexact())
        };
        let max = stop_gradient(&x.max(axes.clone(), true));
        // An all -inf slice has max -inf; shift by 0 there so the result is -inf, not NaN.
        let shift = where_(max.abs().lt(f64::INFINITY), &max, 0.0);
        let out = (&x - &shift).exp().sum(axes.clone(), true).log() + &shift;
        if keepdims {
            out
        } else {
            let keep: Vec<usize> = (0..self.rank())
                .filter(|i| !axes.contains(&(*i as i64)))
                .collect();
            let shape: Vec<usize> = keep.iter().map(|&i| self.shape()[i]).collect();
            bind1(Reshape { shape }, &[Operand::from(&out)])
        }
    }

    /// `exp(x) / sum(exp(x))` along `axis`, shifted by the max for stability.
    #[track_caller]
    pub fn softmax(&self, axis: i64) -> Array {
        let axis = axis_of("softmax", axis, self) as i64;
        let unnormalized = (self - &stop_gradient(&self.max(axis, true))).exp();
        &unnormalized / &unnormalized.sum(axis, true)
    }

    /// `x - logsumexp(x)` along `axis`.
    #[track_caller]
    pub fn log_softmax(&self, axis: i64) -> Array {
        let axis = axis_of("log_softmax", axis, self) as i64;
        let shifted = self - &stop_gradient(&self.max(axis, true));
        &shifted - &shifted.exp().sum(axis, true).log()
    }

    /// The running sum along `axis` (`jnp.cumsum`); bools count in int32.
    #[track_caller]
    pub fn cumsum(&self, axis: i64) -> Array {
        self.cumulative("cumsum", ReduceOp::Sum, axis, false)
    }

    /// The running product along `axis` (`jnp.cumprod`). Differentiable, exactly where `x`
    /// has zeros (no division).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]);
    /// assert_eq!(x.cumprod(0).to_vec::<f32>(), vec![1.0, 2.0, 6.0, 24.0]);
    /// ```
    #[track_caller]
    pub fn cumprod(&self, axis: i64) -> Array {
        self.cumulative("cumprod", ReduceOp::Prod, axis, false)
    }

    /// The running maximum along `axis` (`lax.cummax`); its derivative follows the element
    /// each running maximum came from.
    #[track_caller]
    pub fn cummax(&self, axis: i64) -> Array {
        self.cumulative("cummax", ReduceOp::Max, axis, false)
    }

    /// The running minimum along `axis` (`lax.cummin`).
    #[track_caller]
    pub fn cummin(&self, axis: i64) -> Array {
        self.cumulative("cummin", ReduceOp::Min, axis, false)
    }

    #[track_caller]
    fn cumulative(&self, name: &str, op: ReduceOp, axis: i64, reverse: bool) -> Array {
        let axis = axis_of(name, axis, self);
        // A cumulative sum or product of bools is in int64 (JAX's `_cumulative_reduction`);
        // integers keep their dtype, unlike `sum`'s.
        let x = if self.dtype() == DType::Bool && matches!(op, ReduceOp::Sum | ReduceOp::Prod) {
            self.astype(DType::Bool.promote_integer())
        } else {
            self.clone()
        };
        bind1(Cumulative { op, axis, reverse }, &[Operand::from(&x)])
    }
}
