//! Indexed updates, `x.at(idx).set(v)` and friends (jnp's `x.at[idx]`), along axis 0.

use super::{coerce, IntoArg, TakeMode};
use crate::core::array::Array;
use crate::core::trace::{bind1, op_error, Operand};
use crate::dtype::DType;
use crate::ops::where_;
use crate::prims::{Scatter, ScatterOp};
use std::panic::Location;

/// An index for [`Array::at`]: an integer array of rows, or one row (`usize`, `i64`, `i32`;
/// negative counts from the end).
pub trait AtIndexArg {
    /// The index as an integer array.
    fn index_array(self) -> Array;
}

impl AtIndexArg for &Array {
    fn index_array(self) -> Array {
        self.clone()
    }
}

impl AtIndexArg for Array {
    fn index_array(self) -> Array {
        self
    }
}

macro_rules! scalar_index {
    ($($t:ty),*) => {$(
        impl AtIndexArg for $t {
            fn index_array(self) -> Array {
                Array::scalar(self as i32)
            }
        }
    )*};
}
scalar_index!(usize, i64, i32);

/// The rows of an array picked by [`Array::at`], waiting for what to do with them.
#[derive(Clone)]
pub struct AtIndex<'a> {
    x: &'a Array,
    idx: Array,
    loc: &'static Location<'static>,
}

impl Array {
    /// Indexed updates along axis 0, as `x.at[idx]` in JAX: `x.at(&idx).set(v)`, `.add(v)`,
    /// `.mul(v)`, `.min(v)`, `.max(v)` return a new array; `.get()` reads the rows. `idx` is an
    /// integer array (or one integer); negative indices count from the end, and updates at
    /// indices still out of range are dropped (JAX's default). Repeated indices all apply
    /// (`add` accumulates; for `set` one of them wins). `v` broadcasts to
    /// `idx.shape + x.shape[1..]` and takes `x`'s dtype.
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
    /// ```
    #[track_caller]
    pub fn at(&self, idx: impl AtIndexArg) -> AtIndex<'_> {
        let loc = Location::caller();
        let idx = idx.index_array();
        if self.rank() == 0 {
            op_error(
                "at",
                "cannot index a 0-d array",
                &[self.aval().clone()],
                loc,
            );
        }
        if !idx.dtype().is_int() {
            op_error(
                "at",
                "indices must be integers",
                &[self.aval().clone(), idx.aval().clone()],
                loc,
            );
        }
        let n = self.shape()[0] as i64;
        let idx = idx.astype(DType::I32);
        let idx = where_(idx.lt(0), idx.add(n), &idx);
        AtIndex { x: self, idx, loc }
    }
}

impl AtIndex<'_> {
    fn update<'a>(&self, op: ScatterOp, name: &str, v: impl IntoArg<'a>) -> Array {
        let x = self.x;
        let mut shape = self.idx.shape().to_vec();
        shape.extend_from_slice(&x.shape()[1..]);
        let v = v.into_arg();
        let va = v.aval();
        let fits = va.rank() <= shape.len()
            && va
                .shape
                .iter()
                .rev()
                .zip(shape.iter().rev())
                .all(|(&a, &b)| a == b || a == 1);
        if !fits {
            op_error(
                name,
                &format!("updates cannot be broadcast to the indexed shape {shape:?}"),
                &[x.aval().clone(), self.idx.aval().clone(), va],
                self.loc,
            );
        }
        let u = coerce(v, x.dtype(), false, &shape);
        bind1(
            Scatter { op },
            &[Operand::from(x), Operand::from(&self.idx), u.borrowed()],
        )
    }

    /// `x` with the indexed rows replaced by `v` (`x.at[idx].set(v)`).
    pub fn set<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Set, "at.set", v)
    }

    /// `x` with `v` added to the indexed rows (`x.at[idx].add(v)`; repeated indices add up).
    pub fn add<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Add, "at.add", v)
    }

    /// `x` with the indexed rows multiplied by `v` (`x.at[idx].mul(v)`). Differentiable with
    /// respect to `x` only.
    pub fn mul<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Mul, "at.mul", v)
    }

    /// `x` with the indexed rows lowered to `v` where `v` is smaller (`x.at[idx].min(v)`).
    pub fn min<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Min, "at.min", v)
    }

    /// `x` with the indexed rows raised to `v` where `v` is larger (`x.at[idx].max(v)`).
    pub fn max<'a>(&self, v: impl IntoArg<'a>) -> Array {
        self.update(ScatterOp::Max, "at.max", v)
    }

    /// The indexed rows (`x.at[idx].get()`): out-of-range indices are clamped, as JAX's
    /// default for reads. The gradient is that of the clamped read (a clamped row gets the
    /// cotangent; JAX's VJP drops it while its JVP keeps it).
    pub fn get(&self) -> Array {
        self.x.take_with(&self.idx, 0, TakeMode::Clip)
    }
}
