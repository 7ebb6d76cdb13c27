//! Elementwise functions (numpy's ufuncs), comparisons, bitwise and logical functions,
//! rounding, and the dtype helpers (`finfo`, `iinfo`, `promote_types`, `can_cast`, ...).
//!
//! Functions of one array take `&Array`; functions of two take `impl IntoArg` for each
//! operand, so either may be a Rust scalar (weakly typed, as a Python scalar in JAX). Float
//! functions of integers compute in JAX's float for them (int64 in float64, narrower
//! integers and bool in float32).

use crate::{where_, Array, DType, DTypeKind, IntoArg};
use jaxrs_runtime::{promote_args, promote_args_inexact};

// JAX's lower-case names are kept, so ports read the same.
/// π (`jnp.pi`).
#[allow(non_upper_case_globals)]
pub const pi: f64 = std::f64::consts::PI;
/// Euler's number e (`jnp.e`).
#[allow(non_upper_case_globals)]
pub const e: f64 = std::f64::consts::E;
/// Positive infinity (`jnp.inf`).
#[allow(non_upper_case_globals)]
pub const inf: f64 = f64::INFINITY;
/// Not a number (`jnp.nan`).
#[allow(non_upper_case_globals)]
pub const nan: f64 = f64::NAN;
/// The modified Bessel function of the first kind of order 0 (`jnp.i0`): `exp(|x|)
/// bessel_i0e(|x|)`, as JAX computes it; integers compute in float.
#[track_caller]
pub fn i0(x: &Array) -> Array {
    let x = inexact(x);
    let ax = x.abs();
    let y = ax.exp() * crate::lax::bessel_i0e(&ax);
    // JAX's derivative rule: zero at 0 (where |x|'s derivative is not defined).
    where_(x.eq(0.0), jaxrs_runtime::stop_gradient(&y), &y)
}

/// The Euler–Mascheroni constant γ (`jnp.euler_gamma`).
#[allow(non_upper_case_globals)]
pub const euler_gamma: f64 = 0.577_215_664_901_532_9;

/// `x` converted to the float it computes in, as JAX's `promote_args_inexact` of one operand.
#[track_caller]
pub(crate) fn inexact(x: &Array) -> Array {
    if x.dtype().is_inexact() {
        x.clone()
    } else {
        let float = if x.dtype() == DType::I64 {
            DType::F64
        } else {
            DType::F32
        };
        x.astype(float)
    }
}

macro_rules! unary_fns {
    ($($(#[$doc:meta])* $name:ident => $method:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(x: &Array) -> Array {
            x.$method()
        }
    )*};
}

unary_fns! {
    /// The square root (`jnp.sqrt`); integer inputs are promoted to the default float.
    sqrt => sqrt;
    /// `e^x` (`jnp.exp`).
    exp => exp;
    /// `e^x - 1`, accurate near 0 (`jnp.expm1`).
    expm1 => expm1;
    /// The natural logarithm (`jnp.log`).
    log => log;
    /// `log(1 + x)`, accurate near 0 (`jnp.log1p`).
    log1p => log1p;
    /// The sine (`jnp.sin`).
    sin => sin;
    /// The cosine (`jnp.cos`).
    cos => cos;
    /// The tangent (`jnp.tan`).
    tan => tan;
    /// The inverse sine (`jnp.arcsin`).
    arcsin => asin;
    /// The inverse cosine (`jnp.arccos`).
    arccos => acos;
    /// The inverse tangent (`jnp.arctan`).
    arctan => atan;
    /// The hyperbolic sine (`jnp.sinh`).
    sinh => sinh;
    /// The hyperbolic cosine (`jnp.cosh`).
    cosh => cosh;
    /// The hyperbolic tangent (`jnp.tanh`).
    tanh => tanh;
    /// The inverse hyperbolic sine (`jnp.arcsinh`).
    arcsinh => asinh;
    /// The inverse hyperbolic cosine (`jnp.arccosh`).
    arccosh => acosh;
    /// The inverse hyperbolic tangent (`jnp.arctanh`).
    arctanh => atanh;
    /// The cube root (`jnp.cbrt`).
    cbrt => cbrt;
    /// `true` where `x` is NaN (`jnp.isnan`).
    isnan => isnan;
    /// `true` where `x` is infinite (`jnp.isinf`).
    isinf => isinf;
    /// `true` where `x` is finite (`jnp.isfinite`).
    isfinite => isfinite;
    /// Bitwise not of integers, logical not of bools (`jnp.bitwise_not`).
    bitwise_not => bitwise_not;
    /// Bitwise not (`jnp.invert`, an alias of [`bitwise_not`]).
    invert => bitwise_not;
    /// Bitwise not (`jnp.bitwise_invert`, an alias of [`bitwise_not`]).
    bitwise_invert => bitwise_not;
    /// Elementwise logical not, nonzero being `true` (`jnp.logical_not`).
    logical_not => logical_not;
}

/// `jnp.acos`, the array-API name of [`arccos`].
#[track_caller]
pub fn acos(x: &Array) -> Array {
    x.acos()
}
/// `jnp.asin`, the array-API name of [`arcsin`].
#[track_caller]
pub fn asin(x: &Array) -> Array {
    x.asin()
}
/// `jnp.atan`, the array-API name of [`arctan`].
#[track_caller]
pub fn atan(x: &Array) -> Array {
    x.atan()
}
/// `jnp.acosh`, the array-API name of [`arccosh`].
#[track_caller]
pub fn acosh(x: &Array) -> Array {
    x.acosh()
}
/// `jnp.asinh`, the array-API name of [`arcsinh`].
#[track_caller]
pub fn asinh(x: &Array) -> Array {
    x.asinh()
}
/// `jnp.atanh`, the array-API name of [`arctanh`].
#[track_caller]
pub fn atanh(x: &Array) -> Array {
    x.atanh()
}

/// The absolute value (`jnp.abs`); unsigned integers and bools are their own.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![-2i32, 3], &[2]);
/// assert_eq!(jnp::abs(&x).to_vec::<i32>(), vec![2, 3]);
/// ```
#[track_caller]
pub fn abs(x: &Array) -> Array {
    if x.dtype().is_unsigned() || x.dtype() == DType::Bool {
        x.clone()
    } else {
        x.abs()
    }
}

/// Stops on a complex operand of a function defined on reals only (rounding: JAX raises
/// its `TypeError`).
#[track_caller]
fn refuse_complex(op: &str, x: &Array) {
    if x.dtype().is_complex() {
        panic!(
            "jnp.{op}: not defined for complex numbers, got {} at {}",
            x.aval(),
            std::panic::Location::caller()
        );
    }
}

/// The real part (`jnp.real`): of a real array, the array itself.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
/// use jaxrs::C64;
///
/// let z = Array::from_vec(vec![C64::new(1.0, 2.0), C64::new(3.0, -4.0)], &[2]);
/// assert_eq!(jnp::real(&z).to_vec::<f32>(), vec![1.0, 3.0]);
/// assert_eq!(jnp::imag(&z).to_vec::<f32>(), vec![2.0, -4.0]);
/// assert_eq!(jnp::angle(&z, false).to_vec::<f32>()[0], 2.0f32.atan2(1.0));
/// ```
#[track_caller]
pub fn real(x: &Array) -> Array {
    x.real()
}

/// The imaginary part (`jnp.imag`): of a real array, zeros of its dtype.
#[track_caller]
pub fn imag(x: &Array) -> Array {
    x.imag()
}

/// The complex conjugate (`jnp.conj`): of a real array, the array itself.
#[track_caller]
pub fn conj(x: &Array) -> Array {
    x.conj()
}

/// `jnp.conjugate`, an alias of [`conj`].
#[track_caller]
pub fn conjugate(x: &Array) -> Array {
    conj(x)
}

/// The argument of a complex number, `atan2(imag, real)`, in radians or, with `deg`, degrees
/// (`jnp.angle`); of a real array, 0 or π by its sign, in its inexact dtype.
#[track_caller]
pub fn angle(z: &Array, deg: bool) -> Array {
    let z = inexact(z);
    let a = z.imag().atan2(z.real());
    if deg {
        a * (180.0 / std::f64::consts::PI)
    } else {
        a
    }
}

/// `true` where the imaginary part is not zero (`jnp.iscomplex`); never for a real array.
#[track_caller]
pub fn iscomplex(x: &Array) -> Array {
    x.imag().ne(0)
}

/// `true` where the imaginary part is zero (`jnp.isreal`); always for a real array.
#[track_caller]
pub fn isreal(x: &Array) -> Array {
    x.imag().eq(0)
}

/// Whether the array's dtype is complex (`jnp.iscomplexobj`).
pub fn iscomplexobj(x: &Array) -> bool {
    x.dtype().is_complex()
}

/// Whether the array's dtype is not complex (`jnp.isrealobj`).
pub fn isrealobj(x: &Array) -> bool {
    !x.dtype().is_complex()
}

/// `jnp.absolute`, an alias of [`abs`].
#[track_caller]
pub fn absolute(x: &Array) -> Array {
    abs(x)
}

/// The absolute value as a float (`jnp.fabs`: integers are converted first).
#[track_caller]
pub fn fabs(x: &Array) -> Array {
    inexact(x).abs()
}

/// `-x` (`jnp.negative`).
#[track_caller]
pub fn negative(x: &Array) -> Array {
    -x
}

/// `+x`, a copy (`jnp.positive`).
#[track_caller]
pub fn positive(x: &Array) -> Array {
    x.clone()
}

/// -1, 0 or 1 by the sign of `x`, NaN for NaN (`jnp.sign`).
#[track_caller]
pub fn sign(x: &Array) -> Array {
    x.sign()
}

/// `x * x`, in `x`'s dtype (`jnp.square`).
#[track_caller]
pub fn square(x: &Array) -> Array {
    x.powi(2)
}

/// `1 / x` as a float (`jnp.reciprocal`).
#[track_caller]
pub fn reciprocal(x: &Array) -> Array {
    inexact(x).powi(-1)
}

/// `2^x` (`jnp.exp2`), computed as JAX's `exp(x * ln 2)`.
#[track_caller]
pub fn exp2(x: &Array) -> Array {
    (inexact(x) * std::f64::consts::LN_2).exp()
}

/// The base-2 logarithm (`jnp.log2`), as JAX's `log(x) / log(2)`.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 8.0], &[2]);
/// assert_eq!(jnp::log2(&x).to_vec::<f32>(), vec![0.0, 3.0]);
/// ```
#[track_caller]
pub fn log2(x: &Array) -> Array {
    inexact(x).log() / std::f64::consts::LN_2
}

/// The base-10 logarithm (`jnp.log10`), as JAX's `log(x) / log(10)`.
#[track_caller]
pub fn log10(x: &Array) -> Array {
    inexact(x).log() / std::f64::consts::LN_10
}

/// Radians to degrees (`jnp.degrees`).
#[track_caller]
pub fn degrees(x: &Array) -> Array {
    inexact(x) * (180.0 / std::f64::consts::PI)
}

/// `jnp.rad2deg`, an alias of [`degrees`].
#[track_caller]
pub fn rad2deg(x: &Array) -> Array {
    degrees(x)
}

/// Degrees to radians (`jnp.radians`).
#[track_caller]
pub fn radians(x: &Array) -> Array {
    inexact(x) * (std::f64::consts::PI / 180.0)
}

/// `jnp.deg2rad`, an alias of [`radians`].
#[track_caller]
pub fn deg2rad(x: &Array) -> Array {
    radians(x)
}

/// `sin(πx) / (πx)`, 1 at 0 (`jnp.sinc`). The division only ever sees a nonzero value, so
/// the derivative at 0 is JAX's 0, not NaN.
#[track_caller]
pub fn sinc(x: &Array) -> Array {
    let x = inexact(x);
    let zero = x.eq(0.0);
    let safe = where_(&zero, 1.0, &x) * std::f64::consts::PI;
    where_(&zero, 1.0, safe.sin() / &safe)
}

// ---- rounding ----------------------------------------------------------------------------

/// Rounds down (`jnp.floor`); integers are returned as they are.
#[track_caller]
pub fn floor(x: &Array) -> Array {
    refuse_complex("floor", x);
    if x.dtype().is_float() {
        x.floor()
    } else {
        x.clone()
    }
}

/// Rounds up (`jnp.ceil`); integers are returned as they are.
#[track_caller]
pub fn ceil(x: &Array) -> Array {
    refuse_complex("ceil", x);
    if x.dtype().is_float() {
        x.ceil()
    } else {
        x.clone()
    }
}

/// Rounds toward zero (`jnp.trunc`, `jnp.fix`); integers are returned as they are.
#[track_caller]
pub fn trunc(x: &Array) -> Array {
    refuse_complex("trunc", x);
    if x.dtype().is_float() {
        where_(x.lt(0.0), x.ceil(), x.floor())
    } else {
        x.clone()
    }
}

/// Rounds half to even (`jnp.rint`); integers become the default float (float64), as in
/// JAX with x64.
#[track_caller]
pub fn rint(x: &Array) -> Array {
    refuse_complex("rint", x);
    if x.dtype().is_float() {
        x.round()
    } else {
        x.astype(DType::F64)
    }
}

/// Rounds half to even at `decimals` decimal places (`jnp.round(x, decimals)`; negative
/// `decimals` round to tens, hundreds, ...). Integers keep their dtype.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![0.5f32, 1.5, 2.25], &[3]);
/// assert_eq!(jnp::round(&x, 0).to_vec::<f32>(), vec![0.0, 2.0, 2.0]);
/// assert_eq!(jnp::round(&x, 1).to_vec::<f32>(), vec![0.5, 1.5, 2.2]);
/// ```
#[track_caller]
pub fn round(x: &Array, decimals: i32) -> Array {
    refuse_complex("round", x);
    if !x.dtype().is_float() {
        if decimals >= 0 {
            return x.clone();
        }
        // To tens, hundreds, ...: half to even in float64, back in the integer dtype.
        let factor = 10f64.powi(-decimals);
        return ((x.astype(DType::F64) / factor).round() * factor).astype(x.dtype());
    }
    if decimals == 0 {
        return x.round();
    }
    // JAX's float rule: scale, round, unscale, in float32 at least (half floats lose the
    // digits otherwise).
    let work = if matches!(x.dtype(), DType::F16 | DType::BF16) {
        x.astype(DType::F32)
    } else {
        x.clone()
    };
    let factor = 10f64.powi(decimals);
    ((&work * factor).round() / factor).astype(x.dtype())
}

/// `jnp.around`, an alias of [`round`].
#[track_caller]
pub fn around(x: &Array, decimals: i32) -> Array {
    round(x, decimals)
}

/// The fractional and integral parts of `x`, both with `x`'s sign (`jnp.modf`).
#[track_caller]
pub fn modf(x: &Array) -> (Array, Array) {
    let x = inexact(x);
    let whole = where_(x.ge(0.0), x.floor(), x.ceil());
    (&x - &whole, whole)
}

// ---- arithmetic --------------------------------------------------------------------------

/// `x + y`, broadcasting and promoting (`jnp.add`; on bools, `or`).
#[track_caller]
pub fn add<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("add", x, y);
    x.add(&y)
}

/// `x - y` (`jnp.subtract`).
#[track_caller]
pub fn subtract<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("subtract", x, y);
    x.sub(&y)
}

/// `x * y` (`jnp.multiply`; on bools, `and`).
#[track_caller]
pub fn multiply<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("multiply", x, y);
    x.mul(&y)
}

/// True division (`jnp.divide`): integers divide as floats.
#[track_caller]
pub fn divide<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("divide", x, y);
    x.div(&y)
}

/// `jnp.true_divide`, an alias of [`divide`].
#[track_caller]
pub fn true_divide<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    divide(x, y)
}

/// Python's `//` (`jnp.floor_divide`).
#[track_caller]
pub fn floor_divide<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("floor_divide", x, y);
    x.floor_divide(&y)
}

/// Python's `%`, the sign of the divisor (`jnp.remainder`).
#[track_caller]
pub fn remainder<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("remainder", x, y);
    x.rem(&y)
}

/// `jnp.mod`, an alias of [`remainder`] (`mod` is a Rust keyword).
#[track_caller]
pub fn mod_<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    remainder(x, y)
}

/// C's remainder, the sign of the dividend (`jnp.fmod`).
#[track_caller]
pub fn fmod<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("fmod", x, y);
    x.fmod(&y)
}

/// `(x // y, x % y)` (`jnp.divmod`).
#[track_caller]
pub fn divmod<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> (Array, Array) {
    let (x, y) = promote_args("divmod", x, y);
    (x.floor_divide(&y), x.rem(&y))
}

/// `x ** y` (`jnp.power`): floats by `pow`; integers exactly, by squaring over the bits of
/// the exponent (a negative integer exponent gives 0, except for bases 1 and -1, as in JAX).
#[track_caller]
pub fn power<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("power", x, y);
    if x.dtype().is_inexact() {
        return x.pow(&y);
    }
    let dtype = if x.dtype() == DType::Bool {
        DType::I32
    } else {
        x.dtype()
    };
    let (mut base, mut exp) = (x.astype(dtype), y.astype(dtype));
    let mut acc = Array::full(x.shape(), 1.0, dtype);
    for _ in 0..dtype.size_in_bytes() * 8 {
        let odd = exp.bitwise_and(1).eq(1);
        acc = where_(&odd, &acc * &base, &acc);
        base = &base * &base;
        exp = exp.shift_right_logical(1);
    }
    acc
}

/// `jnp.pow`, an alias of [`power`].
#[track_caller]
pub fn pow<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    power(x, y)
}

/// `x ** y` in floating point (`jnp.float_power`: integers are converted first, as JAX's
/// `promote_args_inexact`).
#[track_caller]
pub fn float_power<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args_inexact("float_power", x, y);
    x.pow(&y)
}

/// The elementwise maximum, NaN winning (`jnp.maximum`).
#[track_caller]
pub fn maximum<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("maximum", x, y);
    x.maximum(&y)
}

/// The elementwise minimum, NaN winning (`jnp.minimum`).
#[track_caller]
pub fn minimum<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("minimum", x, y);
    x.minimum(&y)
}

/// The elementwise maximum, NaN losing (`jnp.fmax`): `x` where `x > y` or `y` is NaN.
#[track_caller]
pub fn fmax<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("fmax", x, y);
    where_(x.gt(&y).logical_or(y.isnan()), &x, &y)
}

/// The elementwise minimum, NaN losing (`jnp.fmin`).
#[track_caller]
pub fn fmin<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("fmin", x, y);
    where_(x.lt(&y).logical_or(y.isnan()), &x, &y)
}

/// `x` limited to `[min, max]` (`jnp.clip`): `minimum(maximum(x, min), max)`.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![-2.0f32, 0.5, 3.0], &[3]);
/// assert_eq!(jnp::clip(&x, -1.0, 1.0).to_vec::<f32>(), vec![-1.0, 0.5, 1.0]);
/// ```
#[track_caller]
pub fn clip<'a>(x: &'a Array, min: impl IntoArg<'a>, max: impl IntoArg<'a>) -> Array {
    x.clip(min, max)
}

/// The angle of the point `(x2, x1)` (`jnp.arctan2(x1, x2)`), in `[-π, π]`.
#[track_caller]
pub fn arctan2<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    let (x1, x2) = promote_args_inexact("arctan2", x1, x2);
    x1.atan2(&x2)
}

/// `jnp.atan2`, the array-API name of [`arctan2`].
#[track_caller]
pub fn atan2<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    arctan2(x1, x2)
}

/// `sqrt(x1² + x2²)` without overflow (`jnp.hypot`, JAX's scaled form: the larger magnitude
/// times `sqrt(1 + (smaller / larger)²)`; infinite if either is).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![3.0f32, 1e30], &[2]);
/// assert_eq!(jnp::hypot(&x, 4.0).to_vec::<f32>(), vec![5.0, 1e30]);
/// ```
#[track_caller]
pub fn hypot<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    let (x1, x2) = promote_args_inexact("hypot", x1, x2);
    let (a, b) = (x1.abs(), x2.abs());
    let any_inf = a.eq(f64::INFINITY).logical_or(b.eq(f64::INFINITY));
    let (big, small) = (a.maximum(&b), a.minimum(&b));
    let zero = big.eq(0.0);
    let ratio = &small / where_(&zero, 1.0, &big);
    let out = where_(&zero, &big, &big * (ratio.powi(2) + 1.0).sqrt());
    where_(&any_inf, f64::INFINITY, &out)
}

/// `|x1|` with the sign of `x2` (`jnp.copysign`), the sign read from the sign bit (so
/// `-0.0` is negative).
#[track_caller]
pub fn copysign<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    let (x1, x2) = promote_args_inexact("copysign", x1, x2);
    let mag = x1.abs();
    where_(signbit(&x2), -&mag, &mag)
}

/// The Heaviside step (`jnp.heaviside(x1, x2)`): 0 below 0, 1 above, `x2` at 0.
#[track_caller]
pub fn heaviside<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    let (x1, x2) = promote_args_inexact("heaviside", x1, x2);
    where_(x1.lt(0.0), 0.0, where_(x1.gt(0.0), 1.0, &x2))
}

/// The next float after `x1` towards `x2` (`jnp.nextafter`).
#[track_caller]
pub fn nextafter<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    let (x1, x2) = promote_args_inexact("nextafter", x1, x2);
    x1.nextafter(&x2)
}

/// The distance from `x` to the next float away from zero (`jnp.spacing`): at 0 the
/// smallest subnormal; for float16, towards +inf (as numpy and JAX).
#[track_caller]
pub fn spacing(x: &Array) -> Array {
    let x = inexact(x);
    if x.dtype() == DType::F16 {
        return x.nextafter(f64::INFINITY) - &x;
    }
    let away = copysign(f64::INFINITY, &x).astype(x.dtype());
    let step = x.nextafter(&away) - &x;
    let tiny = copysign(finfo(x.dtype()).smallest_subnormal, &x).astype(x.dtype());
    where_(step.eq(0.0), &tiny, &step)
}

/// `log(exp(x1) + exp(x2))` without overflow (`jnp.logaddexp`).
#[track_caller]
pub fn logaddexp<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    let (x1, x2) = promote_args_inexact("logaddexp", x1, x2);
    x1.logaddexp(&x2)
}

/// `log2(2^x1 + 2^x2)` without overflow (`jnp.logaddexp2`), with JAX's derivative
/// `2^(x1 - out)`.
#[track_caller]
pub fn logaddexp2<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    let (x1, x2) = promote_args_inexact("logaddexp2", x1, x2);
    let ln2 = std::f64::consts::LN_2;
    (&x1 * ln2).logaddexp(&x2 * ln2) / ln2
}

/// `true` where the sign bit of `x` is set (`jnp.signbit`): `-0.0` and `-nan` included;
/// for integers `x < 0`, for bools never.
#[track_caller]
pub fn signbit(x: &Array) -> Array {
    match x.dtype() {
        DType::Bool => x.logical_and(false),
        d if d.is_int() => x.lt(0),
        // Half floats widen exactly (the sign bit included) to float32's bits.
        DType::F16 | DType::BF16 => x.astype(DType::F32).bitcast_convert_type(DType::I32).lt(0),
        DType::F32 => x.bitcast_convert_type(DType::I32).lt(0),
        _ => x.bitcast_convert_type(DType::I64).lt(0),
    }
}

/// The mantissa in `[0.5, 1)` (signed) and the int32 exponent with `x = m * 2^e`
/// (`jnp.frexp`); 0, inf and NaN give themselves and exponent 0.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let (m, e) = jnp::frexp(&Array::from_vec(vec![8.0f32, -3.0], &[2]));
/// assert_eq!((m.to_vec::<f32>(), e.to_vec::<i32>()), (vec![0.5, -0.75], vec![4, 2]));
/// ```
#[track_caller]
pub fn frexp(x: &Array) -> (Array, Array) {
    let x = inexact(x);
    // Half floats split as the float32 of the same value, which is exact.
    let work = match x.dtype() {
        DType::F16 | DType::BF16 => x.astype(DType::F32),
        _ => x.clone(),
    };
    let (int, nmant, bias, tiny) = if work.dtype() == DType::F64 {
        (DType::I64, 52, 1023, f64::MIN_POSITIVE)
    } else {
        (DType::I32, 23, 127, f32::MIN_POSITIVE as f64)
    };
    // Subnormals are scaled into the normal range first.
    let sub = work.abs().lt(tiny);
    let scale = 2f64.powi(nmant);
    let normal = where_(&sub, &work * scale, &work);
    let shift = where_(&sub, -(nmant as f64), 0.0).astype(DType::I32);
    let bits = normal.bitcast_convert_type(int);
    let exp_field = bits
        .shift_right_logical(nmant)
        .bitwise_and(if int == DType::I64 { 0x7ff } else { 0xff });
    let exponent = exp_field.astype(DType::I32) - (bias - 1) + shift;
    let exp_mask = Array::full(&[], ((bias * 2 + 1) as f64) * scale, int);
    let half_exponent = Array::full(&[], ((bias - 1) as f64) * scale, int);
    let mant_bits = bits
        .bitwise_and(exp_mask.bitwise_not())
        .bitwise_or(&half_exponent);
    let mantissa = mant_bits.bitcast_convert_type(work.dtype());
    // Zeros, infinities and NaNs are read from the bits: a float comparison may treat a
    // subnormal as 0 (XLA's CPU denormal mode), which JAX's answer does not.
    let emask = if int == DType::I64 { 0x7ff } else { 0xff };
    let raw = work.bitcast_convert_type(int);
    let special = raw
        .left_shift(1)
        .eq(0)
        .logical_or(raw.shift_right_logical(nmant).bitwise_and(emask).eq(emask));
    let exponent = where_(&special, 0, &exponent);
    // The bits carry no derivative; JAX's rule for the mantissa is `t * 2^-e`, added here
    // as a term that is zero in value.
    let two = Array::full(&[], 2.0, work.dtype());
    let scale = two.pow(-exponent.astype(work.dtype()));
    // (Left out at infinities and where 2^-e overflows, so the value stays exact.)
    let linear = where_(
        scale.isinf().logical_or(work.isinf()),
        0.0,
        (&work - &jaxrs_runtime::stop_gradient(&work)) * &scale,
    );
    let mantissa = (where_(&special, &work, &mantissa) + linear).astype(x.dtype());
    (mantissa, exponent)
}

/// `x1 * 2^x2` for an integer `x2` (`jnp.ldexp`), as JAX computes it: split `x1` with
/// [`frexp`] so that a small `x1` and a large `x2` do not overflow on the way.
#[track_caller]
pub fn ldexp<'a>(x1: &'a Array, x2: impl IntoArg<'a>) -> Array {
    let float = inexact(x1).dtype();
    let (x1, x2) = promote_args("ldexp", x1, x2);
    let x1 = x1.astype(float);
    let (m, ex) = frexp(&x1);
    let ex = (ex.astype(DType::I64) + x2.astype(DType::I64)).astype(x1.dtype());
    // The exponent may overflow by one and the result still be finite.
    let positive = ex.gt(0.0);
    let m = where_(&positive, &m * 2.0, &m);
    let ex = where_(&positive, &ex - 1.0, &ex);
    let two = Array::full(&[], 2.0, x1.dtype());
    let out = &m * two.pow(&ex);
    where_(x1.isinf().logical_or(x1.eq(0.0)), &x1, &out)
}

/// Values that differ from the previous along `axis` by more than `discont` (default
/// `period / 2`) shifted by multiples of `period` (`jnp.unwrap`'s keyword arguments).
#[derive(Debug, Clone, Copy)]
pub struct UnwrapOptions {
    pub discont: Option<f64>,
    pub axis: i64,
    pub period: f64,
}

impl Default for UnwrapOptions {
    fn default() -> Self {
        UnwrapOptions {
            discont: None,
            axis: -1,
            period: 2.0 * std::f64::consts::PI,
        }
    }
}

/// Phase unwrapping (`jnp.unwrap`): jumps larger than `discont` between neighbours along
/// `axis` are removed by adding multiples of `period`.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let p = Array::from_vec(vec![0.0f64, 3.0, 6.5, 0.5], &[4]);
/// let u = jnp::unwrap(&p, Default::default()).to_vec::<f64>();
/// assert!((u[2] - (6.5 - 2.0 * std::f64::consts::PI)).abs() < 1e-12);
/// ```
#[track_caller]
pub fn unwrap(p: &Array, options: UnwrapOptions) -> Array {
    let p = inexact(p);
    let axis = if options.axis < 0 {
        options.axis + p.rank() as i64
    } else {
        options.axis
    };
    let n = p.shape()[axis as usize];
    if n < 2 {
        return p;
    }
    let period = options.period;
    let interval = period / 2.0;
    let discont = options.discont.unwrap_or(interval).max(interval);
    let dd = p.slice_axis(axis, 1, n) - p.slice_axis(axis, 0, n - 1);
    let ddmod = (&dd + interval).rem(period) - interval;
    let ddmod = where_(
        ddmod.eq(-interval).logical_and(dd.gt(0.0)),
        interval,
        &ddmod,
    );
    let correct = where_(dd.abs().lt(discont), 0.0, &ddmod - &dd);
    let tail = p.slice_axis(axis, 1, n) + correct.cumsum(axis);
    Array::concatenate(&[p.slice_axis(axis, 0, 1), tail], axis)
}

// ---- comparisons and tests -----------------------------------------------------------------

macro_rules! compare_fns {
    ($($(#[$doc:meta])* $name:ident => $method:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
            let (x, y) = promote_args(stringify!($name), x, y);
            x.$method(&y)
        }
    )*};
}

compare_fns! {
    /// `x == y` (`jnp.equal`).
    equal => eq;
    /// `x != y` (`jnp.not_equal`).
    not_equal => ne;
    /// `x < y` (`jnp.less`).
    less => lt;
    /// `x <= y` (`jnp.less_equal`).
    less_equal => le;
    /// `x > y` (`jnp.greater`).
    greater => gt;
    /// `x >= y` (`jnp.greater_equal`).
    greater_equal => ge;
    /// Elementwise `and`, nonzero being `true` (`jnp.logical_and`).
    logical_and => logical_and;
    /// Elementwise `or` (`jnp.logical_or`).
    logical_or => logical_or;
    /// Bitwise `and` of integers, logical of bools (`jnp.bitwise_and`).
    bitwise_and => bitwise_and;
    /// Bitwise `or` (`jnp.bitwise_or`).
    bitwise_or => bitwise_or;
    /// Bitwise exclusive `or` (`jnp.bitwise_xor`).
    bitwise_xor => bitwise_xor;
    /// `x << y` (`jnp.left_shift`).
    left_shift => left_shift;
    /// `x >> y`, arithmetic for signed dtypes (`jnp.right_shift`).
    right_shift => right_shift;
    /// `jnp.bitwise_left_shift`, an alias of [`left_shift`].
    bitwise_left_shift => left_shift;
    /// `jnp.bitwise_right_shift`, an alias of [`right_shift`].
    bitwise_right_shift => right_shift;
}

/// Elementwise exclusive `or` of truth values (`jnp.logical_xor`).
#[track_caller]
pub fn logical_xor<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let (x, y) = promote_args("logical_xor", x, y);
    x.astype(DType::Bool).ne(y.astype(DType::Bool))
}

/// The number of set bits of `|x|`, as uint8 (`jnp.bitwise_count`).
#[track_caller]
pub fn bitwise_count(x: &Array) -> Array {
    abs(x).population_count().astype(DType::U8)
}

/// `true` where `x` is `-inf` (`jnp.isneginf`).
#[track_caller]
pub fn isneginf(x: &Array) -> Array {
    if x.dtype().is_float() {
        x.eq(f64::NEG_INFINITY)
    } else {
        x.isinf()
    }
}

/// `true` where `x` is `+inf` (`jnp.isposinf`).
#[track_caller]
pub fn isposinf(x: &Array) -> Array {
    if x.dtype().is_float() {
        x.eq(f64::INFINITY)
    } else {
        x.isinf()
    }
}

/// Whether `x` is a scalar, a rank-0 array (`jnp.isscalar`).
pub fn isscalar(x: &Array) -> bool {
    x.rank() == 0
}

/// `|a - b| <= atol + rtol * |b|` elementwise, infinities equal only to themselves, NaNs
/// equal when `equal_nan` (`jnp.isclose`; JAX's defaults are `rtol = 1e-5`, `atol = 1e-8`).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 1.1, f32::INFINITY], &[3]);
/// let close = jnp::isclose(&a, 1.0, 1e-5, 1e-8, false);
/// assert_eq!(close.to_vec::<bool>(), vec![true, false, false]);
/// ```
#[track_caller]
pub fn isclose<'a>(
    a: impl IntoArg<'a>,
    b: impl IntoArg<'a>,
    rtol: f64,
    atol: f64,
    equal_nan: bool,
) -> Array {
    let (a, b) = promote_args_inexact("isclose", a, b);
    let dtype = a.dtype();
    let rtol = Array::full(&[], rtol, dtype);
    let atol = Array::full(&[], atol, dtype);
    let in_range = (&a - &b).abs().le(&atol + &rtol * b.abs());
    let out = a.eq(&b).logical_or(b.isfinite().logical_and(&in_range));
    if equal_nan {
        out.logical_or(a.isnan().logical_and(b.isnan()))
    } else {
        out
    }
}

/// Whether every element is [`isclose`] (`jnp.allclose`), as a bool scalar.
#[track_caller]
pub fn allclose<'a>(
    a: impl IntoArg<'a>,
    b: impl IntoArg<'a>,
    rtol: f64,
    atol: f64,
    equal_nan: bool,
) -> Array {
    all_true(&isclose(a, b, rtol, atol, equal_nan))
}

/// Whether every element of a bool array is true, as a bool scalar.
#[track_caller]
fn all_true(x: &Array) -> Array {
    x.logical_not().astype(DType::I32).sum(None, false).eq(0)
}

/// Whether `a1` and `a2` have one shape and equal elements (`jnp.array_equal`; NaNs equal
/// when `equal_nan`), as a bool scalar.
#[track_caller]
pub fn array_equal(a1: &Array, a2: &Array, equal_nan: bool) -> Array {
    if a1.shape() != a2.shape() {
        return Array::full(&[], 0.0, DType::Bool);
    }
    let mut eq = equal(a1, a2);
    if equal_nan {
        eq = eq.logical_or(a1.isnan().logical_and(a2.isnan()));
    }
    all_true(&eq)
}

/// Whether `a1` and `a2` broadcast together and are equal elementwise (`jnp.array_equiv`).
#[track_caller]
pub fn array_equiv(a1: &Array, a2: &Array) -> Array {
    let (r1, r2) = (a1.rank(), a2.rank());
    let rank = r1.max(r2);
    let dim = |s: &[usize], r: usize, i: usize| {
        if i + r < rank {
            1
        } else {
            s[i + r - rank]
        }
    };
    let fits = (0..rank).all(|i| {
        let (x, y) = (dim(a1.shape(), r1, i), dim(a2.shape(), r2, i));
        x == y || x == 1 || y == 1
    });
    if !fits {
        return Array::full(&[], 0.0, DType::Bool);
    }
    all_true(&equal(a1, a2))
}

/// NaN replaced by `nan`, infinities by `posinf`/`neginf` (default: the dtype's largest and
/// smallest finite values) (`jnp.nan_to_num`).
#[track_caller]
pub fn nan_to_num(x: &Array, nan_: f64, posinf: Option<f64>, neginf: Option<f64>) -> Array {
    x.nan_to_num(nan_, posinf, neginf)
}

// ---- integers ----------------------------------------------------------------------------

/// The greatest common divisor of integers, non-negative (`jnp.gcd`), by Euclid's algorithm
/// in a `while_loop` that runs until every pair is done.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![12i32, -18, 0], &[3]);
/// assert_eq!(jnp::gcd(&x, 8).to_vec::<i32>(), vec![4, 2, 8]);
/// ```
#[track_caller]
pub fn gcd<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    let (x1, x2) = promote_args("gcd", x1, x2);
    let (a, b) = (abs(&x1), abs(&x2));
    let (a, _) = crate::while_loop(
        |(_, b): &(Array, Array)| b.ne(0).astype(DType::I32).sum(None, false).gt(0),
        |(a, b): (Array, Array)| {
            let live = b.ne(0);
            let safe = where_(&live, &b, 1);
            let next_b = where_(&live, a.rem(&safe), &b);
            (where_(&live, &b, &a), next_b)
        },
        (a, b),
    );
    a
}

/// The least common multiple of integers, non-negative (`jnp.lcm`): 0 if either is 0.
#[track_caller]
pub fn lcm<'a>(x1: impl IntoArg<'a>, x2: impl IntoArg<'a>) -> Array {
    let (x1, x2) = promote_args("lcm", x1, x2);
    let g = gcd(&x1, &x2);
    let zero = g.eq(0);
    let safe = where_(&zero, 1, &g);
    where_(&zero, 0, abs(&(abs(&x1).floor_divide(&safe) * &x2)))
}

// ---- dtypes ------------------------------------------------------------------------------

/// `x` converted to `dtype` (`jnp.astype`; floats to integers truncate toward zero).
#[track_caller]
pub fn astype(x: &Array, dtype: DType) -> Array {
    x.astype(dtype)
}

/// The limits of a float dtype (`jnp.finfo`): JAX's fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finfo {
    /// The dtype described.
    pub dtype: DType,
    /// The width in bits.
    pub bits: u32,
    /// The gap between 1 and the next float.
    pub eps: f64,
    /// The gap between 1 and the float before it.
    pub epsneg: f64,
    /// The largest finite value.
    pub max: f64,
    /// The most negative finite value (`-max`).
    pub min: f64,
    /// The smallest positive normal value (`tiny`, also `smallest_normal`).
    pub tiny: f64,
    /// The smallest positive normal value.
    pub smallest_normal: f64,
    /// The smallest positive subnormal value.
    pub smallest_subnormal: f64,
    /// The number of mantissa bits (without the implicit one).
    pub nmant: i32,
    /// The number of exponent bits.
    pub nexp: i32,
    /// The exponent of `tiny` (`2^minexp`).
    pub minexp: i32,
    /// The exponent past the largest power of two (`2^maxexp` overflows).
    pub maxexp: i32,
    /// The number of decimal digits of precision.
    pub precision: i32,
    /// `10^-precision`.
    pub resolution: f64,
}

/// The limits of float `dtype` (`jnp.finfo`); panics for a non-float dtype, as JAX's.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// assert_eq!(jnp::finfo(DType::F32).eps, f32::EPSILON as f64);
/// assert_eq!(jnp::finfo(DType::BF16).bits, 16);
/// ```
#[track_caller]
pub fn finfo(dtype: DType) -> Finfo {
    // (bits, nmant, nexp, precision)
    let (bits, nmant, nexp, precision) = match dtype {
        DType::BF16 => (16, 7, 8, 2),
        DType::F16 => (16, 10, 5, 3),
        DType::F32 => (32, 23, 8, 6),
        DType::F64 => (64, 52, 11, 15),
        other => panic!(
            "finfo: data type {} not inexact (operands: {}) at {}",
            other.name(),
            other.name(),
            std::panic::Location::caller()
        ),
    };
    let maxexp = 1i32 << (nexp - 1);
    let minexp = 2 - maxexp;
    let eps = 2f64.powi(-nmant);
    let tiny = 2f64.powi(minexp);
    Finfo {
        dtype,
        bits,
        eps,
        epsneg: eps / 2.0,
        max: (2.0 - eps) * 2f64.powi(maxexp - 1),
        min: -(2.0 - eps) * 2f64.powi(maxexp - 1),
        tiny,
        smallest_normal: tiny,
        smallest_subnormal: tiny * eps,
        nmant,
        nexp,
        minexp,
        maxexp,
        precision,
        resolution: round_to_mantissa(10f64.powi(-precision), nmant),
    }
}

/// `x` rounded to `nmant` mantissa bits: JAX's `finfo.resolution` is a value of the dtype.
fn round_to_mantissa(x: f64, nmant: i32) -> f64 {
    if nmant >= 52 {
        return x;
    }
    let quantum = 2f64.powi(x.log2().floor() as i32 - nmant);
    (x / quantum).round_ties_even() * quantum
}

/// The limits of an integer dtype (`jnp.iinfo`): JAX's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Iinfo {
    /// The dtype described.
    pub dtype: DType,
    /// The width in bits.
    pub bits: u32,
    /// The smallest value.
    pub min: i128,
    /// The largest value.
    pub max: i128,
}

/// The limits of integer `dtype` (`jnp.iinfo`; bool counts as one bit wide, 0 to 1, as
/// JAX's); panics for a float dtype.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// assert_eq!(jnp::iinfo(DType::I8).min, -128);
/// assert_eq!(jnp::iinfo(DType::U32).max, u32::MAX as i128);
/// ```
#[track_caller]
pub fn iinfo(dtype: DType) -> Iinfo {
    let bits = match dtype {
        DType::Bool => {
            return Iinfo {
                dtype,
                bits: 8,
                min: 0,
                max: 1,
            }
        }
        d if d.is_int() => (d.size_in_bytes() * 8) as u32,
        other => panic!(
            "iinfo: invalid integer data type {} at {}",
            other.name(),
            std::panic::Location::caller()
        ),
    };
    let (min, max) = if dtype.is_unsigned() {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    };
    Iinfo {
        dtype,
        bits,
        min,
        max,
    }
}

/// The dtype two dtypes promote to (`jnp.promote_types`), both strongly typed.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// assert_eq!(jnp::promote_types(DType::I32, DType::F16), DType::F16);
/// ```
pub fn promote_types(a: DType, b: DType) -> DType {
    DType::promote(a, false, b, false).0
}

/// Whether a cast from `from` to `to` keeps every value (`jnp.can_cast` with numpy's
/// default `casting="safe"`).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// assert!(jnp::can_cast(DType::I8, DType::I32));
/// assert!(!jnp::can_cast(DType::F32, DType::I64));
/// ```
pub fn can_cast(from: DType, to: DType) -> bool {
    use DType::*;
    if from == to || from == Bool {
        return true;
    }
    let bits = |d: DType| d.size_in_bytes() * 8;
    match (from.kind(), to.kind()) {
        (_, DTypeKind::Bool) => false,
        (DTypeKind::Float, DTypeKind::Int) => false,
        (DTypeKind::Float, DTypeKind::Float) => match (from, to) {
            (BF16, F16) | (F16, BF16) => false,
            _ => bits(from) <= bits(to),
        },
        // numpy's table: 8-bit integers fit every float, 16-bit ones float32 and up, wider
        // ones only float64 (which numpy counts as safe for int64 too).
        (DTypeKind::Int, DTypeKind::Float) => match bits(from) {
            8 => true,
            16 => bits(to) >= 32,
            _ => to == F64,
        },
        (DTypeKind::Int, DTypeKind::Int) => match (from.is_unsigned(), to.is_unsigned()) {
            (true, true) | (false, false) => bits(from) <= bits(to),
            (true, false) => bits(from) < bits(to),
            (false, true) => false,
        },
        (DTypeKind::Bool, _) => true,
        // Nothing complex fits a real dtype; complex64 holds float32's values, complex128
        // float64's (and numpy's int rules carry over through the parts).
        (DTypeKind::Complex, DTypeKind::Int | DTypeKind::Float) => false,
        (DTypeKind::Complex, DTypeKind::Complex) => bits(from) <= bits(to),
        (DTypeKind::Float, DTypeKind::Complex) => !(from == F64 && to == C64),
        (DTypeKind::Int, DTypeKind::Complex) => bits(from) <= 16 || to == C128,
    }
}

/// A dtype category of [`issubdtype`] and [`isdtype`] (numpy's abstract types: `jnp.number`,
/// `jnp.integer`, ...; the array API's kind names: `"signed integer"`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DTypeCategory {
    /// One dtype exactly.
    Exact(DType),
    /// `"bool"` / `jnp.bool_`.
    Bool,
    /// `jnp.number` / `"numeric"`: every integer and float.
    Number,
    /// `jnp.integer` / `"integral"`.
    Integer,
    /// `jnp.signedinteger` / `"signed integer"`.
    SignedInteger,
    /// `jnp.unsignedinteger` / `"unsigned integer"`.
    UnsignedInteger,
    /// `jnp.inexact`: floats and complex numbers.
    Inexact,
    /// `jnp.floating` / `"real floating"`.
    Floating,
    /// `jnp.complexfloating` / `"complex floating"`.
    ComplexFloating,
    /// `jnp.generic`: every dtype.
    Generic,
}

impl From<DType> for DTypeCategory {
    fn from(d: DType) -> Self {
        DTypeCategory::Exact(d)
    }
}

impl From<DTypeKind> for DTypeCategory {
    fn from(k: DTypeKind) -> Self {
        match k {
            DTypeKind::Bool => DTypeCategory::Bool,
            DTypeKind::Int => DTypeCategory::Integer,
            DTypeKind::Float => DTypeCategory::Floating,
            DTypeKind::Complex => DTypeCategory::ComplexFloating,
        }
    }
}

impl DTypeCategory {
    fn contains(self, d: DType) -> bool {
        match self {
            DTypeCategory::Exact(x) => x == d,
            DTypeCategory::Bool => d == DType::Bool,
            DTypeCategory::Number => d != DType::Bool,
            DTypeCategory::Integer => d.is_int(),
            DTypeCategory::SignedInteger => d.is_int() && !d.is_unsigned(),
            DTypeCategory::UnsignedInteger => d.is_unsigned(),
            DTypeCategory::Inexact => d.is_float() || d.is_complex(),
            DTypeCategory::Floating => d.is_float(),
            DTypeCategory::ComplexFloating => d.is_complex(),
            DTypeCategory::Generic => true,
        }
    }
}

/// Whether `dtype` is in the category (`jnp.issubdtype(dtype, category)`).
///
/// ```
/// use jaxrs::numpy::{self as jnp, DTypeCategory};
/// use jaxrs::prelude::*;
///
/// assert!(jnp::issubdtype(DType::U8, DTypeCategory::Integer));
/// assert!(!jnp::issubdtype(DType::Bool, DTypeCategory::Number));
/// assert!(jnp::issubdtype(DType::F16, jaxrs::DTypeKind::Float));
/// ```
pub fn issubdtype(dtype: DType, category: impl Into<DTypeCategory>) -> bool {
    category.into().contains(dtype)
}

/// Whether `dtype` is of any of the kinds (`jnp.isdtype(dtype, kind)`, the array API's form).
///
/// ```
/// use jaxrs::numpy::{self as jnp, DTypeCategory};
/// use jaxrs::prelude::*;
///
/// assert!(jnp::isdtype(DType::I8, &[DTypeCategory::SignedInteger, DTypeCategory::Bool]));
/// ```
pub fn isdtype(dtype: DType, kinds: &[DTypeCategory]) -> bool {
    kinds.iter().any(|k| k.contains(dtype))
}
