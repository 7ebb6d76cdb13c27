//! The array API: numpy-style operations on [`Array`], built on the primitives.
//!
//! This layer applies numpy's broadcasting and JAX's dtype promotion, then binds primitives
//! whose operands already agree. Every operation is `#[track_caller]`, so a mistake is
//! reported at the user's line.

mod arith;
mod conv;
mod fft;
mod gather;
mod index;
mod indexing;
mod linalg;
mod math;
mod reduce;
mod shape;
mod sort;

pub use arith::{promote_args, promote_args_inexact, where_};
pub use conv::{
    avg_pool, conv_dimension_numbers, conv_general_dilated, conv_general_dilated_grouped,
    conv_general_permutations, max_pool, reduce_window_max, reduce_window_monoid,
    reduce_window_sum, ConvDimensionNumbers, ConvGeneralDilatedDimensionNumbers, Monoid, Padding,
};
pub use fft::fft;
pub use gather::{
    gather, scatter, scatter_add, scatter_max, scatter_min, scatter_mul, scatter_sub,
    GatherDimensionNumbers, GatherOptions, GatherScatterMode, ScatterDimensionNumbers,
    ScatterOptions,
};
pub use index::TakeMode;
/// The old name of [`IntoIndexExpr`], kept so that `impl AtIndexArg` bounds compile.
pub use indexing::IntoIndexExpr as AtIndexArg;
pub use indexing::{
    index, AtIndex, Ellipsis, Index, IndexExpr, IndexMode, IntoIndex, IntoIndexExpr, NewAxis,
    SliceBound,
};
pub use linalg::{einsum, DotDims};
pub use math::{complex, stop_gradient};
pub use sort::sort_multi;

use crate::aval::{broadcast_shapes, normalize_axis, Aval};
use crate::core::array::Array;
use crate::core::ir::Literal;
use crate::core::trace::{bind1, op_error, Operand};
use crate::dtype::{lattice_result_type, DType};
use crate::pjrt::Device;
use crate::prims::{BroadcastInDim, Convert};
use std::borrow::Cow;
use std::panic::Location;

/// Anything usable as an operand: `Array`, `&Array`, or a Rust scalar (weakly typed).
pub trait IntoArg<'a> {
    fn into_arg(self) -> Operand<'a>;
}

impl<'a> IntoArg<'a> for &'a Array {
    fn into_arg(self) -> Operand<'a> {
        Operand::from(self)
    }
}

impl<'a> IntoArg<'a> for Array {
    fn into_arg(self) -> Operand<'a> {
        Operand::from(self)
    }
}

impl<'a> IntoArg<'a> for Operand<'a> {
    fn into_arg(self) -> Operand<'a> {
        self
    }
}

impl<'a> IntoArg<'a> for &&'a Array {
    fn into_arg(self) -> Operand<'a> {
        Operand::from(*self)
    }
}

macro_rules! scalar_arg {
    ($($t:ty),*) => {$(
        impl<'a> IntoArg<'a> for $t {
            fn into_arg(self) -> Operand<'a> {
                Operand::Lit(Literal::weak_scalar(self))
            }
        }
    )*};
}
scalar_arg!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool);

/// The largest array (in elements) an eager Rust scalar is spread to on the host.
const EAGER_HOST_FILL_LIMIT: usize = 1 << 14;

/// Converts an operand to `dtype` and broadcasts it to `shape`. An eager Rust scalar is
/// spread on `device` (where the operation's arrays lie, see [`fill_device`]), else on the
/// default device.
#[track_caller]
pub(crate) fn coerce<'a>(
    arg: Operand<'a>,
    dtype: DType,
    weak: bool,
    shape: &[usize],
    device: Option<Device>,
) -> Operand<'a> {
    // A converted operand takes the promoted type whole, weakness included (JAX's rule:
    // `int32_array > 0.5` compares two weak float64s).
    let arg = match arg {
        Operand::Lit(l) if l.dtype != dtype => Operand::Lit(l.cast(dtype, weak)),
        // A weak array meeting a strong type loses its weakness, as JAX's
        // `_convert_element_type(x, dtype, weak_type=False)` (two weak bools add to a strong
        // bool).
        Operand::Array(a) if a.dtype() != dtype || (a.is_weak() && !weak) => Operand::Array(
            Cow::Owned(bind1(Convert { dtype, weak }, &[Operand::from(&*a)])),
        ),
        other => other,
    };
    if arg.aval().shape == shape {
        return arg;
    }
    // Eagerly, a Rust scalar spread over a small array is cheaper to build on the host (one
    // upload, skipped while the scalar is in `filled_on`'s cache) than on the device (an
    // upload and a dispatch); under a trace it stays a literal.
    if let Operand::Lit(l) = &arg {
        if !crate::core::trace::is_tracing()
            && crate::aval::element_count(shape).is_some_and(|n| n <= EAGER_HOST_FILL_LIMIT)
        {
            let device = device.unwrap_or_else(crate::core::client::current_default_device);
            return Operand::Array(Cow::Owned(crate::core::eager::filled_on(*l, shape, device)));
        }
    }
    let rank_in = arg.aval().rank();
    let dims: Vec<usize> = (shape.len() - rank_in..shape.len()).collect();
    let prim = BroadcastInDim {
        shape: shape.to_vec(),
        dims,
    };
    Operand::Array(Cow::Owned(bind1(prim, &[arg.borrowed()])))
}

/// Promotes and broadcasts operands to a common dtype and shape (numpy + JAX rules);
/// `op` names the operation in the error when the shapes do not broadcast.
#[track_caller]
pub(crate) fn unify<'a>(op: &str, args: Vec<Operand<'a>>) -> Vec<Operand<'a>> {
    let avals: Vec<Aval> = args.iter().map(Operand::aval).collect();
    // One bound over all operands, as JAX's n-ary `lattice_result_type` (pairwise folding differs
    // when weak operands meet in the middle); one operand keeps its own type.
    let (dtype, weak) = if avals.len() == 1 {
        (avals[0].dtype, avals[0].weak)
    } else {
        let types: Vec<(DType, bool)> = avals.iter().map(|a| (a.dtype, a.weak)).collect();
        lattice_result_type(&types)
    };
    let mut shape = avals[0].shape.clone();
    let loc = Location::caller();
    for a in &avals[1..] {
        shape = broadcast_shapes(&shape, &a.shape)
            .unwrap_or_else(|| op_error(op, "shapes cannot be broadcast together", &avals, loc));
    }
    let device = fill_device(&args);
    // A loop, not a closure: closures drop `#[track_caller]`'s location.
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        out.push(coerce(a, dtype, weak, &shape, device));
    }
    out
}

/// Where an eager operation on `args` runs ([`crate::core::client::target_device`]), when a
/// Rust scalar among them is to be spread into an array there; `None` under a trace or
/// without a scalar.
pub(crate) fn fill_device(args: &[Operand]) -> Option<Device> {
    if crate::core::trace::is_tracing() || !args.iter().any(|a| matches!(a, Operand::Lit(_))) {
        return None;
    }
    Some(crate::core::client::target_device(args.iter().filter_map(
        |a| match a {
            Operand::Array(a) => Some(&**a),
            Operand::Lit(_) => None,
        },
    )))
}

/// Normalises an axis, or stops naming the op, the axis and the operand.
#[track_caller]
pub(crate) fn axis_of(op: &str, axis: i64, x: &Array) -> usize {
    let loc = Location::caller();
    normalize_axis(axis, x.rank()).unwrap_or_else(|| {
        op_error(
            op,
            &format!("axis {axis} is out of range for rank {}", x.rank()),
            &[x.aval().clone()],
            loc,
        )
    })
}

/// Normalises several axes (see [`axis_of`]).
#[track_caller]
pub(crate) fn axes_of(op: &str, axes: Vec<i64>, x: &Array) -> Vec<usize> {
    let mut out = Vec::with_capacity(axes.len());
    for a in axes {
        out.push(axis_of(op, a, x));
    }
    out
}

/// A list of integers (dims, axes, a shape with `-1`): `[1, 2]`, `&[1, 2]`, `vec![..]`, of
/// `i32`, `i64` or `usize`.
pub trait Dims {
    fn dims(self) -> Vec<i64>;
}

macro_rules! dims_impls {
    ($($t:ty),*) => {$(
        impl Dims for &[$t] {
            fn dims(self) -> Vec<i64> {
                self.iter().map(|&x| x as i64).collect()
            }
        }
        impl<const N: usize> Dims for [$t; N] {
            fn dims(self) -> Vec<i64> {
                self.iter().map(|&x| x as i64).collect()
            }
        }
        impl<const N: usize> Dims for &[$t; N] {
            fn dims(self) -> Vec<i64> {
                self.iter().map(|&x| x as i64).collect()
            }
        }
        impl Dims for Vec<$t> {
            fn dims(self) -> Vec<i64> {
                self.into_iter().map(|x| x as i64).collect()
            }
        }
        impl Dims for &Vec<$t> {
            fn dims(self) -> Vec<i64> {
                self.iter().map(|&x| x as i64).collect()
            }
        }
    )*};
}
dims_impls!(i32, i64, usize);

/// The axes of a reduction: `None` (all), one axis (`1`, `-1`), or several (`[0, 1]`).
pub trait Axes {
    /// `None` means every axis.
    fn axes(self) -> Option<Vec<i64>>;
}

impl Axes for Option<i64> {
    fn axes(self) -> Option<Vec<i64>> {
        self.map(|a| vec![a])
    }
}

macro_rules! axes_impls {
    ($($t:ty),*) => {$(
        impl Axes for $t {
            fn axes(self) -> Option<Vec<i64>> {
                Some(vec![self as i64])
            }
        }
    )*};
}
axes_impls!(i32, i64, usize);

macro_rules! axes_from_dims {
    ($($t:ty),*) => {$(
        impl Axes for &[$t] {
            fn axes(self) -> Option<Vec<i64>> {
                Some(self.dims())
            }
        }
        impl<const N: usize> Axes for [$t; N] {
            fn axes(self) -> Option<Vec<i64>> {
                Some(self.dims())
            }
        }
        impl<const N: usize> Axes for &[$t; N] {
            fn axes(self) -> Option<Vec<i64>> {
                Some(self.dims())
            }
        }
        impl Axes for Vec<$t> {
            fn axes(self) -> Option<Vec<i64>> {
                Some(self.dims())
            }
        }
    )*};
}
axes_from_dims!(i32, i64, usize);
