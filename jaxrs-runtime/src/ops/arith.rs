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
    /// `self ** other` for floats; see [`Array::powi`] for integer exponents.
    pow => Pow;
    /// The elementwise maximum (NaN wins).
    maximum => Max;
    /// The elementwise minimum (NaN wins).
    minimum => Min;
    /// `atan2(self, other)`.
    atan2 => Atan2;
}

binary_methods! {
    /// Bitwise `and` of integers (logical on bool), broadcasting (`jnp.bitwise_and`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![0b1100u32, 0b1010], &[2]);
    /// assert_eq!(x.bitwise_and(0b0110u32).to_vec::<u32>(), vec![0b0100, 0b0010]);
    /// ```
    bitwise_and => And;
    /// Bitwise `or` of integers (logical on bool), broadcasting (`jnp.bitwise_or`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![0b1100u32, 0b1010], &[2]);
    /// assert_eq!(x.bitwise_or(0b0001u32).to_vec::<u32>(), vec![0b1101, 0b1011]);
    /// ```
    bitwise_or => Or;
    /// Bitwise exclusive `or` of integers (of bools: `!=`), broadcasting (`jnp.bitwise_xor`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![0b1100u32, 0xffff_ffff], &[2]);
    /// assert_eq!(x.bitwise_xor(0b0110u32).to_vec::<u32>(), vec![0b1010, 0xffff_fff9]);
    /// ```
    bitwise_xor => Xor;
    /// `self << other` for integers, broadcasting (`jnp.left_shift`): bits shifted past the
    /// width are lost, and a shift by the width or more gives 0 (XLA's rule).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1u32, 0x8000_0001], &[2]);
    /// assert_eq!(x.left_shift(1u32).to_vec::<u32>(), vec![2, 2]);
    /// ```
    left_shift => ShiftLeft;
}

impl Array {
    /// `self >> other` for integers, broadcasting (`jnp.right_shift`): logical (zeros shifted
    /// in) for unsigned dtypes, arithmetic (the sign shifted in) for signed ones.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let u = Array::from_vec(vec![0x8000_0000u32], &[1]);
    /// assert_eq!(u.right_shift(31u32).to_vec::<u32>(), vec![1]);
    /// let i = Array::from_vec(vec![-8i32], &[1]);
    /// assert_eq!(i.right_shift(2).to_vec::<i32>(), vec![-2]);
    /// ```
    #[track_caller]
    pub fn right_shift<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        let args = unify("right_shift", vec![self.into_arg(), other.into_arg()]);
        let op = if args[0].aval().dtype.is_unsigned() {
            BinaryOp::ShiftRightLogical
        } else {
            BinaryOp::ShiftRightArithmetic
        };
        bind1(Binary(op), &args)
    }

    /// Bitwise `not` of integers (logical on bool) (`jnp.bitwise_not`, `~x`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![0u32, 0xffff_0000], &[2]);
    /// assert_eq!(x.bitwise_not().to_vec::<u32>(), vec![0xffff_ffff, 0x0000_ffff]);
    /// ```
    #[track_caller]
    pub fn bitwise_not(&self) -> Array {
        bind1(Unary(UnaryOp::Not), &[Operand::from(self)])
    }
}

impl Array {
    /// `self >> other` shifting zeros in, for any integer dtype (`lax.shift_right_logical`);
    /// operands broadcast and promote as in [`Array::right_shift`].
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let i = Array::from_vec(vec![-8i32], &[1]);
    /// assert_eq!(i.shift_right_logical(28).to_vec::<i32>(), vec![15]);
    /// ```
    #[track_caller]
    pub fn shift_right_logical<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        binary(
            BinaryOp::ShiftRightLogical,
            self.into_arg(),
            other.into_arg(),
        )
    }

    /// `self >> other` shifting the sign bit in, for any integer dtype
    /// (`lax.shift_right_arithmetic`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let u = Array::from_vec(vec![0x8000_0000u32], &[1]);
    /// assert_eq!(u.shift_right_arithmetic(31u32).to_vec::<u32>(), vec![0xffff_ffff]);
    /// ```
    #[track_caller]
    pub fn shift_right_arithmetic<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        binary(
            BinaryOp::ShiftRightArithmetic,
            self.into_arg(),
            other.into_arg(),
        )
    }

    /// The quotient rounded toward zero for integers, as C's `/` and `lax.div` (XLA's
    /// division: an integer division by zero is -1); floats divide as `/`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![7i32, -7], &[2]);
    /// assert_eq!(x.trunc_divide(2).to_vec::<i32>(), vec![3, -3]);
    /// ```
    #[track_caller]
    pub fn trunc_divide<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        binary(BinaryOp::Div, self.into_arg(), other.into_arg())
    }

    /// The remainder of [`Array::trunc_divide`], with the sign of the dividend, as
    /// `lax.rem` (XLA's remainder, also for a zero integer divisor); see [`Array::fmod`]
    /// for numpy's.
    #[track_caller]
    pub fn trunc_rem<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        binary(BinaryOp::Rem, self.into_arg(), other.into_arg())
    }
}

/// Two operands broadcast to one shape and promoted to one dtype (weak types kept), as JAX's
/// `promote_args`: where a numpy-style function of two operands starts, so that it accepts
/// arrays and Rust scalars alike. `op` names the function in the error when the shapes do
/// not broadcast. (`jaxrs::numpy`'s functions of two operands are built on it.)
#[track_caller]
pub fn promote_args<'a>(op: &str, x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> (Array, Array) {
    let (x, y) = pair(unify(op, vec![x.into_arg(), y.into_arg()]));
    (x.to_array().into_owned(), y.to_array().into_owned())
}

/// [`promote_args`], then integer and bool operands converted to the float they compute in
/// (JAX's `promote_args_inexact`: int64 to float64, the others to float32).
#[track_caller]
pub fn promote_args_inexact<'a>(
    op: &str,
    x: impl IntoArg<'a>,
    y: impl IntoArg<'a>,
) -> (Array, Array) {
    let (x, y) = promote_args(op, x, y);
    if x.dtype().is_inexact() {
        return (x, y);
    }
    let float = super::math::inexact_of(x.dtype());
    let cast = |a: &Array| {
        bind1(
            Convert {
                dtype: float,
                weak: a.is_weak(),
            },
            &[Operand::from(a)],
        )
    };
    (cast(&x), cast(&y))
}

impl Array {
    /// `self / other`, true division as `jnp.divide`: integer and bool operands divide as
    /// float32 (JAX's default float; int64 as float64), so `7 / 2` is `3.5`. See
    /// [`Array::floor_divide`] for `//`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![7i32, -7], &[2]);
    /// assert_eq!((&x / 2).to_vec::<f32>(), vec![3.5, -3.5]);
    /// ```
    #[track_caller]
    pub fn div<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        true_divide(self.into_arg(), other.into_arg())
    }

    /// Python's `//` as `jnp.floor_divide`: the quotient rounded toward minus infinity.
    /// Integers keep their dtype; an integer division by zero gives what JAX gives (XLA's
    /// `x / 0 == -1`, then the floor correction: `5 // 0 == -2`, `0 // 0 == -1`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![7i32, -7], &[2]);
    /// assert_eq!(x.floor_divide(2).to_vec::<i32>(), vec![3, -4]);
    /// ```
    #[track_caller]
    pub fn floor_divide<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        floor_divide(self.into_arg(), other.into_arg())
    }

    /// Python's `%` as `jnp.remainder`: the result has the sign of the divisor. An integer
    /// remainder by zero is 0, as in JAX. `x % y` is this; see [`Array::fmod`] for C's.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![7i32, -7], &[2]);
    /// assert_eq!((&x % 3).to_vec::<i32>(), vec![1, 2]);
    /// ```
    #[track_caller]
    pub fn rem<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        remainder(self.into_arg(), other.into_arg())
    }
}

impl Array {
    /// The remainder with the sign of the dividend, as C's `fmod` and `jnp.fmod`; an integer
    /// remainder by zero is 0, as in JAX. See [`Array::rem`] for Python's `%`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![7i32, -7], &[2]);
    /// assert_eq!(x.fmod(3).to_vec::<i32>(), vec![1, -1]);
    /// ```
    #[track_caller]
    pub fn fmod<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        let (x, y) = pair(unify("fmod", vec![self.into_arg(), other.into_arg()]));
        let y = nonzero_int_divisor(y);
        bind1(Binary(BinaryOp::Rem), &[x, y])
    }
}

/// JAX divides integers by 1 where the divisor is 0, so a remainder by 0 is 0.
#[track_caller]
fn nonzero_int_divisor(y: Operand<'_>) -> Operand<'_> {
    if y.aval().dtype.is_int() {
        let is_zero = Array::eq_operand(y.borrowed(), 0);
        Operand::from(where_(&is_zero, 1, y))
    } else {
        y
    }
}

/// The two operands [`unify`] returned.
fn pair(args: Vec<Operand<'_>>) -> (Operand<'_>, Operand<'_>) {
    let mut args = args.into_iter();
    (args.next().expect("x"), args.next().expect("y"))
}

#[track_caller]
fn true_divide<'a>(x: Operand<'a>, y: Operand<'a>) -> Array {
    let (x, y) = pair(unify("div", vec![x, y]));
    let aval = x.aval();
    if aval.dtype.is_float() {
        return bind1(Binary(BinaryOp::Div), &[x, y]);
    }
    // JAX's `promote_args_inexact`: the promoted type made inexact, weakness kept.
    let float = aval.dtype.to_inexact();
    let x = super::coerce(x, float, aval.weak, &aval.shape, None);
    let y = super::coerce(y, float, aval.weak, &aval.shape, None);
    bind1(Binary(BinaryOp::Div), &[x, y])
}

#[track_caller]
fn floor_divide<'a>(x: Operand<'a>, y: Operand<'a>) -> Array {
    let (x, y) = pair(unify("floor_divide", vec![x, y]));
    let dtype = x.aval().dtype;
    let div = || bind1(Binary(BinaryOp::Div), &[x.borrowed(), y.borrowed()]);
    let rem = || bind1(Binary(BinaryOp::Rem), &[x.borrowed(), y.borrowed()]);
    let sign = |a: &Operand<'_>| bind1(Unary(UnaryOp::Sign), &[a.borrowed()]);
    if dtype.is_unsigned() {
        div()
    } else if dtype.is_int() {
        // As `jnp.floor_divide`: truncate, then step down where the signs differ and the
        // division was inexact.
        let quotient = div();
        let step = sign(&x).ne(sign(&y)).logical_and(rem().ne(0));
        where_(&step, &quotient - 1, &quotient)
    } else {
        // CPython's float_divmod, as JAX's `_float_divmod`.
        let modulo = rem();
        let zero_divisor = y.borrowed().into_arg();
        let corrected = where_(
            Array::eq_operand(zero_divisor, 0),
            x.borrowed(),
            bind1(
                Binary(BinaryOp::Sub),
                &[x.borrowed(), Operand::from(&modulo)],
            ),
        );
        let quotient = bind1(
            Binary(BinaryOp::Div),
            &[Operand::from(&corrected), y.borrowed()],
        );
        let step = modulo.ne(0).logical_and(sign(&y).ne(modulo.sign()));
        where_(&step, &quotient - 1.0, &quotient).round()
    }
}

#[track_caller]
fn remainder<'a>(x: Operand<'a>, y: Operand<'a>) -> Array {
    let (x, y) = pair(unify("rem", vec![x, y]));
    let y = nonzero_int_divisor(y);
    let truncated = bind1(Binary(BinaryOp::Rem), &[x.borrowed(), y.borrowed()]);
    let wrong_sign = truncated
        .lt(0)
        .ne(Array::lt_operand(y.borrowed(), 0))
        .logical_and(truncated.ne(0));
    let shifted = bind1(
        Binary(BinaryOp::Add),
        &[Operand::from(&truncated), y.borrowed()],
    );
    where_(&wrong_sign, shifted, truncated)
}

impl Array {
    /// `x == v` for an operand that may be a literal.
    #[track_caller]
    fn eq_operand<'a>(x: Operand<'a>, v: impl IntoArg<'a>) -> Array {
        compare(CompareOp::Eq, x, v.into_arg())
    }

    #[track_caller]
    fn lt_operand<'a>(x: Operand<'a>, v: impl IntoArg<'a>) -> Array {
        compare(CompareOp::Lt, x, v.into_arg())
    }
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
    let operands = [cond, x, y];
    let device = super::fill_device(&operands);
    let [cond, x, y] = operands;
    let cond = super::coerce(cond, DType::Bool, false, &shape, device);
    let (dt, weak) = (x.aval().dtype, x.aval().weak);
    let x = super::coerce(x, dt, weak, &shape, device);
    let y_weak = y.aval().weak;
    let y = super::coerce(y, dt, y_weak, &shape, device);
    bind1(Select, &[cond.borrowed(), x.borrowed(), y.borrowed()])
}

macro_rules! operator {
    ($trait:ident, $method:ident, $op:ident) => {
        operator!(@with $trait, $method, |x, y| binary(BinaryOp::$op, x, y));
    };
    ($trait:ident, $method:ident, fn $f:ident) => {
        operator!(@with $trait, $method, |x, y| $f(x, y));
    };
    (@with $trait:ident, $method:ident, |$x:ident, $y:ident| $body:expr) => {
        impl<'a, R: IntoArg<'a>> ops::$trait<R> for &'a Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: R) -> Array {
                { let ($x, $y) = (self.into_arg(), rhs.into_arg()); $body }
            }
        }
        impl<'a, R: IntoArg<'a>> ops::$trait<R> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: R) -> Array {
                { let ($x, $y) = (self.into_arg(), rhs.into_arg()); $body }
            }
        }
        operator!(@scalars $trait, $method, |$x, $y| $body, f32, f64, i32, i64, u32, u8, i8);
    };
    (@scalars $trait:ident, $method:ident, |$x:ident, $y:ident| $body:expr, $($t:ty),*) => {$(
        impl<'a> ops::$trait<&'a Array> for $t {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &'a Array) -> Array {
                { let ($x, $y) = (self.into_arg(), rhs.into_arg()); $body }
            }
        }
        impl ops::$trait<Array> for $t {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                { let ($x, $y) = (self.into_arg(), rhs.into_arg()); $body }
            }
        }
    )*};
}

operator!(Add, add, Add);
operator!(Sub, sub, Sub);
operator!(Mul, mul, Mul);
operator!(Div, div, fn true_divide);
operator!(Rem, rem, fn remainder);

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
