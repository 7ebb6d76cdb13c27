//! Elementwise primitives: arithmetic, comparisons, transcendental functions, bitwise ops and
//! shifts, `population_count`, `clz`, `nextafter`, `reduce_precision`, conversions, `select_n`.
//!
//! As JAX's `lax`, these do not promote: the operands of a binary op share one dtype (a
//! mismatch panics, naming the op, the dtypes and your line, where JAX raises its
//! `TypeError`), and a float function refuses integers. Shapes must agree, except that a
//! rank-0 operand stands for an array of the other's shape.

use crate::{stop_gradient, where_, Array, DType};
use std::panic::Location;

/// Stops with the message of every jaxrs programmer error: the op, what is wrong, the
/// operands' types, the user's line.
#[track_caller]
pub(super) fn fail(op: &str, msg: &str, operands: &[&Array]) -> ! {
    let avals: Vec<String> = operands.iter().map(|a| a.aval().to_string()).collect();
    panic!(
        "lax.{op}: {msg} (operands: {}) at {}",
        avals.join(", "),
        Location::caller()
    )
}

/// Which dtypes a lax function accepts (JAX's `_float`, `_int`, `_num`, ...).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Accepts {
    Float,
    Inexact,
    Complex,
    Int,
    BoolOrInt,
    Signed,
    Numeric,
    Any,
}

impl Accepts {
    fn ok(self, d: DType) -> bool {
        match self {
            Accepts::Float => d.is_float(),
            Accepts::Inexact => d.is_inexact(),
            Accepts::Complex => d.is_complex(),
            Accepts::Int => d.is_int(),
            Accepts::BoolOrInt => d == DType::Bool || d.is_int(),
            Accepts::Signed => d.is_inexact() || (d.is_int() && !d.is_unsigned()),
            Accepts::Numeric => d != DType::Bool,
            Accepts::Any => true,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Accepts::Float => "floating",
            Accepts::Inexact => "floating, complexfloating",
            Accepts::Complex => "complexfloating",
            Accepts::Int => "integer",
            Accepts::BoolOrInt => "bool, integer",
            Accepts::Signed => "signed integer, floating, complexfloating",
            Accepts::Numeric => "integer, floating, complexfloating",
            Accepts::Any => "any",
        }
    }
}

#[track_caller]
pub(super) fn check(op: &str, accepts: Accepts, x: &Array) {
    if !accepts.ok(x.dtype()) {
        fail(
            op,
            &format!(
                "does not accept dtype {}; accepted dtypes are subtypes of {}",
                x.dtype().name(),
                accepts.describe()
            ),
            &[x],
        );
    }
}

/// Checks two operands of a binary lax op: one dtype, of an accepted kind, and shapes that
/// agree (or one of rank 0).
#[track_caller]
pub(super) fn check2(op: &str, accepts: Accepts, x: &Array, y: &Array) {
    if x.dtype() != y.dtype() {
        fail(
            op,
            &format!(
                "requires arguments to have the same dtypes, got {}, {} (jnp's functions \
                 promote)",
                x.dtype().name(),
                y.dtype().name()
            ),
            &[x, y],
        );
    }
    check(op, accepts, x);
    if x.shape() != y.shape() && x.rank() != 0 && y.rank() != 0 {
        fail(op, "got incompatible shapes", &[x, y]);
    }
}

macro_rules! unary {
    ($($(#[$doc:meta])* $name:ident, $accepts:ident => |$x:ident| $body:expr;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name($x: &Array) -> Array {
            check(stringify!($name), Accepts::$accepts, $x);
            $body
        }
    )*};
}

unary! {
    /// `-x` (`lax.neg`).
    neg, Numeric => |x| -x;
    /// `|x|` (`lax.abs`; signed integers, floats, and complex numbers, whose `abs` is real).
    abs, Signed => |x| x.abs();
    /// -1, 0 or 1 (`lax.sign`).
    sign, Numeric => |x| x.sign();
    /// `x * x` (`lax.square`).
    square, Numeric => |x| x.powi(2);
    /// `1 / x` (`lax.reciprocal`, JAX's `integer_pow(x, -1)`).
    reciprocal, Inexact => |x| x.powi(-1);
    /// `e^x` (`lax.exp`).
    exp, Inexact => |x| x.exp();
    /// `2^x` (`lax.exp2`), as JAX lowers it: `exp(x * ln 2)`.
    exp2, Inexact => |x| (x * std::f64::consts::LN_2).exp();
    /// `e^x - 1` (`lax.expm1`).
    expm1, Inexact => |x| x.expm1();
    /// The natural logarithm (`lax.log`).
    log, Inexact => |x| x.log();
    /// `log(1 + x)` (`lax.log1p`).
    log1p, Inexact => |x| x.log1p();
    /// The sigmoid (`lax.logistic`).
    logistic, Inexact => |x| x.logistic();
    /// The square root (`lax.sqrt`).
    sqrt, Inexact => |x| x.sqrt();
    /// `1 / sqrt(x)` (`lax.rsqrt`).
    rsqrt, Inexact => |x| x.rsqrt();
    /// The cube root (`lax.cbrt`).
    cbrt, Float => |x| x.cbrt();
    /// The sine (`lax.sin`).
    sin, Inexact => |x| x.sin();
    /// The cosine (`lax.cos`).
    cos, Inexact => |x| x.cos();
    /// The tangent (`lax.tan`).
    tan, Inexact => |x| x.tan();
    /// The inverse sine (`lax.asin`).
    asin, Inexact => |x| x.asin();
    /// The inverse cosine (`lax.acos`).
    acos, Inexact => |x| x.acos();
    /// The inverse tangent (`lax.atan`).
    atan, Inexact => |x| x.atan();
    /// The hyperbolic sine (`lax.sinh`).
    sinh, Inexact => |x| x.sinh();
    /// The hyperbolic cosine (`lax.cosh`).
    cosh, Inexact => |x| x.cosh();
    /// The hyperbolic tangent (`lax.tanh`).
    tanh, Inexact => |x| x.tanh();
    /// The inverse hyperbolic sine (`lax.asinh`).
    asinh, Inexact => |x| x.asinh();
    /// The inverse hyperbolic cosine (`lax.acosh`).
    acosh, Inexact => |x| x.acosh();
    /// The inverse hyperbolic tangent (`lax.atanh`).
    atanh, Inexact => |x| x.atanh();
    /// The error function (`lax.erf`).
    erf, Float => |x| x.erf();
    /// `1 - erf(x)` (`lax.erfc`).
    erfc, Float => |x| x.erfc();
    /// The inverse error function (`lax.erf_inv`).
    erf_inv, Float => |x| x.erf_inv();
    /// `log |Γ(x)|` (`lax.lgamma`).
    lgamma, Float => |x| x.lgamma();
    /// The digamma function ψ, the derivative of `lgamma` (`lax.digamma`).
    digamma, Float => |x| x.digamma();
    /// The real part of a complex array (`lax.real`), in its real dtype.
    real, Complex => |x| x.real();
    /// The imaginary part of a complex array (`lax.imag`), in its real dtype.
    imag, Complex => |x| x.imag();
    /// The complex conjugate (`lax.conj`; a real array is taken as complex, as JAX does).
    conj, Inexact => |x| x.astype(x.dtype().to_complex()).conj();
    /// Rounds down (`lax.floor`).
    floor, Float => |x| x.floor();
    /// Rounds up (`lax.ceil`).
    ceil, Float => |x| x.ceil();
    /// `true` where `x` is neither infinite nor NaN (`lax.is_finite`).
    is_finite, Float => |x| x.isfinite();
    /// Bitwise not of integers, logical of bools (`lax.bitwise_not`).
    bitwise_not, BoolOrInt => |x| x.bitwise_not();
    /// The number of set bits (`lax.population_count`).
    population_count, Int => |x| x.population_count();
    /// The number of leading zero bits (`lax.clz`).
    clz, Int => |x| x.clz();
}

/// `x + y i` (`lax.complex`): float32 parts make complex64, float64 parts complex128.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
/// use jaxrs::C64;
///
/// let z = lax::complex(&Array::scalar(1.0f32), &Array::scalar(2.0f32));
/// assert_eq!(z.item::<C64>(), C64::new(1.0, 2.0));
/// ```
#[track_caller]
pub fn complex(x: &Array, y: &Array) -> Array {
    check2("complex", Accepts::Float, x, y);
    crate::complex(x, y)
}

/// How [`round`] breaks ties (`lax.RoundingMethod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RoundingMethod {
    /// Half away from zero (`ROUND_AWAY_FROM_ZERO`, lax's default): 2.5 is 3, -2.5 is -3.
    #[default]
    AwayFromZero,
    /// Half to even (`TO_NEAREST_EVEN`, numpy's): 2.5 is 2.
    ToNearestEven,
}

/// Rounds to the nearest integer value (`lax.round(x, rounding_method)`; `None` is
/// [`RoundingMethod::AwayFromZero`], lax's default).
///
/// ```
/// use jaxrs::lax::{self, RoundingMethod};
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![2.5f32, -0.5], &[2]);
/// assert_eq!(lax::round(&x, None).to_vec::<f32>(), vec![3.0, -1.0]);
/// let even = lax::round(&x, Some(RoundingMethod::ToNearestEven));
/// assert_eq!(even.to_vec::<f32>(), vec![2.0, -0.0]);
/// ```
#[track_caller]
pub fn round(x: &Array, rounding_method: Option<RoundingMethod>) -> Array {
    check("round", Accepts::Float, x);
    match rounding_method.unwrap_or_default() {
        RoundingMethod::AwayFromZero => x.round_away_from_zero(),
        RoundingMethod::ToNearestEven => x.round(),
    }
}

/// `x^y` for an integer constant `y`, by multiplications (`lax.integer_pow`).
#[track_caller]
pub fn integer_pow(x: &Array, y: i32) -> Array {
    check("integer_pow", Accepts::Numeric, x);
    x.powi(y)
}

macro_rules! binary {
    ($($(#[$doc:meta])* $name:ident, $accepts:ident => |$x:ident, $y:ident| $body:expr;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name($x: &Array, $y: &Array) -> Array {
            check2(stringify!($name), Accepts::$accepts, $x, $y);
            $body
        }
    )*};
}

binary! {
    /// `x + y` (`lax.add`).
    add, Numeric => |x, y| x.add(y);
    /// `x - y` (`lax.sub`).
    sub, Numeric => |x, y| x.sub(y);
    /// `x * y` (`lax.mul`).
    mul, Numeric => |x, y| x.mul(y);
    /// `x / y`, rounding toward zero for integers (`lax.div`).
    div, Numeric => |x, y| x.trunc_divide(y);
    /// The remainder of [`div`], the sign of `x` (`lax.rem`).
    rem, Numeric => |x, y| x.trunc_rem(y);
    /// `x ^ y` for floats (`lax.pow`).
    pow, Float => |x, y| x.pow(y);
    /// The elementwise maximum, NaN winning (`lax.max`).
    max, Any => |x, y| x.maximum(y);
    /// The elementwise minimum, NaN winning (`lax.min`).
    min, Any => |x, y| x.minimum(y);
    /// `atan2(x, y)` (`lax.atan2`).
    atan2, Float => |x, y| x.atan2(y);
    /// The next float after `x` towards `y` (`lax.nextafter`).
    nextafter, Float => |x, y| x.nextafter(y);
    /// Bitwise and (`lax.bitwise_and`).
    bitwise_and, BoolOrInt => |x, y| x.bitwise_and(y);
    /// Bitwise or (`lax.bitwise_or`).
    bitwise_or, BoolOrInt => |x, y| x.bitwise_or(y);
    /// Bitwise exclusive or (`lax.bitwise_xor`).
    bitwise_xor, BoolOrInt => |x, y| x.bitwise_xor(y);
    /// `x << y`; 0 once `y` reaches the width (`lax.shift_left`).
    shift_left, Int => |x, y| x.left_shift(y);
    /// `x >> y` shifting the sign bit in (`lax.shift_right_arithmetic`).
    shift_right_arithmetic, Int => |x, y| x.shift_right_arithmetic(y);
    /// `x >> y` shifting zeros in (`lax.shift_right_logical`).
    shift_right_logical, Int => |x, y| x.shift_right_logical(y);
    /// `x == y` (`lax.eq`).
    eq, Any => |x, y| x.eq(y);
    /// `x != y` (`lax.ne`).
    ne, Any => |x, y| x.ne(y);
    /// `x < y` (`lax.lt`).
    lt, Any => |x, y| x.lt(y);
    /// `x <= y` (`lax.le`).
    le, Any => |x, y| x.le(y);
    /// `x > y` (`lax.gt`).
    gt, Any => |x, y| x.gt(y);
    /// `x >= y` (`lax.ge`).
    ge, Any => |x, y| x.ge(y);
}

/// `x` limited to `[min, max]` (`lax.clamp(min, x, max)`: the bounds first, as in JAX; each
/// bound is an array of `x`'s shape or a rank-0 one, of `x`'s dtype).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![-2.0f32, 0.5, 3.0], &[3]);
/// let (lo, hi) = (Array::scalar(-1.0f32), Array::scalar(1.0f32));
/// assert_eq!(lax::clamp(&lo, &x, &hi).to_vec::<f32>(), vec![-1.0, 0.5, 1.0]);
/// ```
#[track_caller]
pub fn clamp(min: &Array, x: &Array, max: &Array) -> Array {
    check2("clamp", Accepts::Any, min, x);
    check2("clamp", Accepts::Any, x, max);
    let value = x.maximum(min).minimum(max);
    if !value.dtype().is_float() {
        return value;
    }
    // JAX's derivative (`clamp_p`'s JVP), which `maximum`/`minimum` would split at ties: `x`'s
    // where min < x < max, `min`'s where min > x (and min < max), `max`'s where max < x. Each
    // term is zero in value and carries one operand's tangent where its mask holds.
    let zero = Array::zeros(&[], value.dtype());
    let part = |mask: Array, v: &Array| where_(&mask, v - stop_gradient(v), &zero);
    stop_gradient(&value)
        + part(min.gt(x).logical_and(min.lt(max)), min)
        + part(x.gt(min).logical_and(x.lt(max)), x)
        + part(max.lt(x), max)
}

/// `pred ? on_true : on_false` elementwise (`lax.select`; `pred` is bool, of the operands'
/// shape or rank 0).
#[track_caller]
pub fn select(pred: &Array, on_true: &Array, on_false: &Array) -> Array {
    select_n(pred, &[on_false, on_true])
}

/// `cases[which]` elementwise (`lax.select_n`): `which` is bool (two cases) or int32 (any
/// number), of the cases' shape or rank 0; an out-of-range `which` is undefined, as in XLA.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let which = Array::from_vec(vec![0i32, 2, 1], &[3]);
/// let cases: Vec<Array> = (0..3).map(|k| Array::full(&[3], k as f64, DType::F32)).collect();
/// let picked = lax::select_n(&which, &[&cases[0], &cases[1], &cases[2]]);
/// assert_eq!(picked.to_vec::<f32>(), vec![0.0, 2.0, 1.0]);
/// ```
#[track_caller]
pub fn select_n(which: &Array, cases: &[&Array]) -> Array {
    let Some(last) = cases.last() else {
        fail("select_n", "needs at least one case", &[which]);
    };
    for c in cases {
        check2("select_n", Accepts::Any, cases[0], c);
    }
    if which.dtype() == DType::Bool {
        if cases.len() > 2 {
            fail(
                "select_n",
                "a bool `which` selects from at most two cases",
                &[which],
            );
        }
    } else if !which.dtype().is_int() {
        fail("select_n", "`which` must be bool or an integer", &[which]);
    }
    if which.shape() != cases[0].shape() && which.rank() != 0 {
        fail(
            "select_n",
            "`which` must be rank 0 or of the cases' shape",
            &[which, cases[0]],
        );
    }
    if cases.len() == 1 {
        return (*last).clone();
    }
    if which.dtype() == DType::Bool {
        return where_(which, cases[1], cases[0]);
    }
    let mut out = (*last).clone();
    for (k, c) in cases.iter().enumerate().rev().skip(1) {
        out = where_(which.eq(k as i32), *c, &out);
    }
    out
}

/// `x` converted to `new_dtype` (`lax.convert_element_type`): floats to integers round toward
/// zero, nonzero is `true`.
#[track_caller]
pub fn convert_element_type(x: &Array, new_dtype: DType) -> Array {
    x.astype(new_dtype)
}

/// The bits of `x` read as `new_dtype` of the same width (`lax.bitcast_convert_type`).
#[track_caller]
pub fn bitcast_convert_type(x: &Array, new_dtype: DType) -> Array {
    x.bitcast_convert_type(new_dtype)
}

/// `x` rounded to a float format of `exponent_bits` and `mantissa_bits`, kept in its dtype
/// (`lax.reduce_precision`).
#[track_caller]
pub fn reduce_precision(x: &Array, exponent_bits: u32, mantissa_bits: u32) -> Array {
    check("reduce_precision", Accepts::Float, x);
    x.reduce_precision(exponent_bits, mantissa_bits)
}
