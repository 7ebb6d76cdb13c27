//! Binary arithmetic, comparisons, logical ops and `where_`, with operator overloading.

use super::{unify, IntoArg};
use crate::core::array::Array;
use crate::core::trace::{bind1, op_error, Operand};
use crate::dtype::DType;
use crate::prims::{Binary, BinaryOp, Compare, CompareOp, Convert, Select, Unary, UnaryOp};
use std::ops;
use std::panic::Location;

/// Applies a binary primitive after broadcasting and promotion.
#[track_caller]
pub(crate) fn binary<'a>(op: BinaryOp, x: Operand<'a>, y: Operand<'a>) -> Array {
    let args = unify(op.name(), vec![x, y]);
    bind1(Binary(op), &args)
}

#[track_caller]
fn compare<'a>(op: CompareOp, x: Operand<'a>, y: Operand<'a>) -> Array {
    let args = unify(Compare(op).name_str(), vec![x, y]);
    bind1(Compare(op), &args)
}

impl Compare {
    fn name_str(&self) -> &'static str {
        crate::core::primitive::Primitive::name(self)
    }
}

/// Converts a non-bool operand to bool (nonzero is true), as numpy's logical ops do.
#[track_caller]
fn to_bool<'a>(x: Operand<'a>) -> Operand<'a> {
    match x {
        Operand::Array(a) if a.dtype() != DType::Bool => {
            Operand::Array(std::borrow::Cow::Owned(bind1(
                Convert {
                    dtype: DType::Bool,
                    weak: false,
                },
                &[Operand::from(&*a)],
            )))
        }
        Operand::Lit(l) if l.dtype != DType::Bool => Operand::Lit(l.cast(DType::Bool, l.weak)),
        other => other,
    }
}

macro_rules! binary_methods {
    ($($(#[$doc:meta])* $method:ident => $op:ident;)*) => {
        impl Array {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $method<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
                    binary(BinaryOp::$op, self.into_arg(), other.into_arg())
                }
            )*
        }
    };
}

binary_methods! {
    /// `self + other`, broadcasting.
    add => Add;
    /// `self - other`, broadcasting.
    sub => Sub;
    /// `self * other`, broadcasting.
    mul => Mul;
    /// `self / other`; on integers it truncates toward zero (like `lax.div`).
    div => Div;
    /// The remainder with the sign of the dividend (C's `fmod`, `lax.rem`).
    rem => Rem;
    /// `self ** other` for floats; see [`Array::powi`] for integer exponents.
    pow => Pow;
    /// The elementwise maximum (NaN wins).
    maximum => Max;
    /// The elementwise minimum (NaN wins).
    minimum => Min;
    /// `atan2(self, other)`.
    atan2 => Atan2;
}

macro_rules! compare_methods {
    ($($(#[$doc:meta])* $method:ident => $op:ident;)*) => {
        impl Array {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $method<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
                    compare(CompareOp::$op, self.into_arg(), other.into_arg())
                }
            )*
        }
    };
}

compare_methods! {
    /// `self == other` as bool.
    eq => Eq;
    /// `self != other` as bool.
    ne => Ne;
    /// `self < other` as bool.
    lt => Lt;
    /// `self <= other` as bool.
    le => Le;
    /// `self > other` as bool.
    gt => Gt;
    /// `self >= other` as bool.
    ge => Ge;
}

impl Array {
    /// Elementwise `and` (operands converted to bool).
    #[track_caller]
    pub fn logical_and<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        let args = unify(
            "logical_and",
            vec![to_bool(self.into_arg()), to_bool(other.into_arg())],
        );
        bind1(Binary(BinaryOp::And), &args)
    }

    /// Elementwise `or` (operands converted to bool).
    #[track_caller]
    pub fn logical_or<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        let args = unify(
            "logical_or",
            vec![to_bool(self.into_arg()), to_bool(other.into_arg())],
        );
        bind1(Binary(BinaryOp::Or), &args)
    }

    /// Elementwise `not` (the operand converted to bool).
    #[track_caller]
    pub fn logical_not(&self) -> Array {
        let x = to_bool(self.into_arg());
        bind1(Unary(UnaryOp::Not), &[x.borrowed()])
    }
}

/// `cond ? x : y` elementwise, broadcasting all three (`jnp.where`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![-1.0f32, 2.0, -3.0], &[3]);
/// let relu = jaxrs::where_(&x.gt(0.0), &x, 0.0);
/// assert_eq!(relu.to_vec::<f32>(), vec![0.0, 2.0, 0.0]);
/// ```
#[track_caller]
pub fn where_<'a>(cond: impl IntoArg<'a>, x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let cond = to_bool(cond.into_arg());
    let xy = unify("where", vec![x.into_arg(), y.into_arg()]);
    let mut xy = xy.into_iter();
    let (x, y) = (xy.next().expect("x"), xy.next().expect("y"));
    let loc = Location::caller();
    let shape =
        crate::aval::broadcast_shapes(&cond.aval().shape, &x.aval().shape).unwrap_or_else(|| {
            op_error(
                "where",
                "shapes cannot be broadcast together",
                &[cond.aval(), x.aval(), y.aval()],
                loc,
            )
        });
    let cond = super::coerce(cond, DType::Bool, false, &shape);
    let (dt, weak) = (x.aval().dtype, x.aval().weak);
    let x = super::coerce(x, dt, weak, &shape);
    let y_weak = y.aval().weak;
    let y = super::coerce(y, dt, y_weak, &shape);
    bind1(Select, &[cond.borrowed(), x.borrowed(), y.borrowed()])
}

macro_rules! operator {
    ($trait:ident, $method:ident, $op:ident) => {
        impl<'a, R: IntoArg<'a>> ops::$trait<R> for &'a Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: R) -> Array {
                binary(BinaryOp::$op, self.into_arg(), rhs.into_arg())
            }
        }
        impl<'a, R: IntoArg<'a>> ops::$trait<R> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: R) -> Array {
                binary(BinaryOp::$op, self.into_arg(), rhs.into_arg())
            }
        }
        operator!(@scalars $trait, $method, $op, f32, f64, i32, i64, u32, u8, i8);
    };
    (@scalars $trait:ident, $method:ident, $op:ident, $($t:ty),*) => {$(
        impl<'a> ops::$trait<&'a Array> for $t {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &'a Array) -> Array {
                binary(BinaryOp::$op, self.into_arg(), rhs.into_arg())
            }
        }
        impl ops::$trait<Array> for $t {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                binary(BinaryOp::$op, self.into_arg(), rhs.into_arg())
            }
        }
    )*};
}

operator!(Add, add, Add);
operator!(Sub, sub, Sub);
operator!(Mul, mul, Mul);
operator!(Div, div, Div);
operator!(Rem, rem, Rem);

impl ops::Neg for &Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        self.neg_()
    }
}

impl ops::Neg for Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        self.neg_()
    }
}

impl Array {
    #[track_caller]
    fn neg_(&self) -> Array {
        bind1(Unary(UnaryOp::Neg), &[Operand::from(self)])
    }
}
