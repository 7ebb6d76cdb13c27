//! Unary math, activations, casts.

use super::arith::binary;
use super::arith::where_;
use super::{unify, IntoArg};
use crate::core::array::Array;
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;
use crate::prims::{
    BinaryOp, BitcastConvert, ComplexPart, Convert, IntegerPow, MakeComplex, Part, StopGradient,
    Unary, UnaryOp,
};

/// Floating-point ops on integer arrays work on the integer's inexact dtype (as
/// `jnp.exp(int_array)`: float32 up to 32-bit integers, float64 for 64-bit ones).
#[track_caller]
fn float_operand(op: UnaryOp, x: &Array) -> Array {
    use crate::prims::elementwise::Domain;
    if matches!(op.domain(), Domain::Float | Domain::Inexact) && !x.dtype().is_inexact() {
        if x.dtype() == DType::Bool && op == UnaryOp::Not {
            return x.clone();
        }
        return bind1(
            Convert {
                dtype: x.dtype().to_inexact(),
                weak: x.is_weak(),
            },
            &[Operand::from(x)],
        );
    }
    x.clone()
}

/// The float an integer or bool dtype computes in (JAX's `to_inexact_dtype` with x64:
/// int64 in float64, the narrower ones in float32); floats stay as they are.
pub(crate) fn inexact_of(dtype: DType) -> DType {
    dtype.to_inexact()
}

macro_rules! unary_methods {
    ($($(#[$doc:meta])* $method:ident => $op:ident;)*) => {
        impl Array {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $method(&self) -> Array {
                    let x = float_operand(UnaryOp::$op, self);
                    bind1(Unary(UnaryOp::$op), &[Operand::from(&x)])
                }
            )*
        }
    };
}

unary_methods! {
    /// `e^x`.
    exp => Exp;
    /// The natural logarithm.
    log => Log;
    /// `log(1 + x)`, accurate near 0.
    log1p => Log1p;
    /// `e^x - 1`, accurate near 0.
    expm1 => Expm1;
    /// The hyperbolic tangent.
    tanh => Tanh;
    /// The sigmoid `1 / (1 + e^-x)`.
    logistic => Logistic;
    /// The sine.
    sin => Sin;
    /// The cosine.
    cos => Cos;
    /// The square root.
    sqrt => Sqrt;
    /// `1 / sqrt(x)`.
    rsqrt => Rsqrt;
    /// The absolute value.
    abs => Abs;
    /// -1, 0 or 1 (and NaN for NaN).
    sign => Sign;
    /// Rounds down.
    floor => Floor;
    /// Rounds up.
    ceil => Ceil;
    /// Rounds half to even (`jnp.round`).
    round => Round;
    /// The error function.
    erf => Erf;
    /// The inverse error function on (-1, 1) (`lax.erf_inv`, `jax.scipy.special.erfinv`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![0.0f32, 0.5], &[2]);
    /// let back = x.erf_inv().erf().to_vec::<f32>();
    /// assert!((back[1] - 0.5).abs() < 1e-6 && back[0] == 0.0);
    /// ```
    erf_inv => ErfInv;
    /// The tangent.
    tan => Tan;
    /// The inverse sine, on [-1, 1] (`jnp.arcsin`, `lax.asin`).
    asin => Asin;
    /// The inverse cosine, on [-1, 1] (`jnp.arccos`, `lax.acos`).
    acos => Acos;
    /// The inverse tangent (`jnp.arctan`, `lax.atan`).
    atan => Atan;
    /// The hyperbolic sine.
    sinh => Sinh;
    /// The hyperbolic cosine.
    cosh => Cosh;
    /// The inverse hyperbolic sine (`jnp.arcsinh`).
    asinh => Asinh;
    /// The inverse hyperbolic cosine, on [1, inf) (`jnp.arccosh`).
    acosh => Acosh;
    /// The inverse hyperbolic tangent, on (-1, 1) (`jnp.arctanh`).
    atanh => Atanh;
    /// The cube root, negative for negative `x` (`jnp.cbrt`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![-8.0f32, 27.0], &[2]);
    /// assert_eq!(x.cbrt().to_vec::<f32>(), vec![-2.0, 3.0]);
    /// ```
    cbrt => Cbrt;
    /// The complementary error function `1 - erf(x)`, accurate where `erf(x)` is near 1.
    erfc => Erfc;
    /// The log of the absolute value of the gamma function (`lax.lgamma`,
    /// `jax.scipy.special.gammaln`).
    lgamma => Lgamma;
    /// The derivative of `lgamma` (`lax.digamma`).
    digamma => Digamma;
    /// Rounds half away from zero (`lax.round` with `ROUND_AWAY_FROM_ZERO`, its default);
    /// [`Array::round`] rounds half to even.
    round_away_from_zero => RoundAfz;
    /// The number of set bits of each integer (`lax.population_count`), in its dtype.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![0u32, 7, 0xffff_ffff], &[3]);
    /// assert_eq!(x.population_count().to_vec::<u32>(), vec![0, 3, 32]);
    /// ```
    population_count => PopulationCount;
    /// The number of leading zero bits of each integer (`lax.clz`), in its dtype.
    clz => Clz;
    /// The exponentially scaled modified Bessel function of order 0, `e^-|x| I0(x)`
    /// (`lax.bessel_i0e`, `jax.scipy.special.i0e`).
    bessel_i0e => BesselI0e;
    /// The exponentially scaled modified Bessel function of order 1, `e^-|x| I1(x)`
    /// (`lax.bessel_i1e`, `jax.scipy.special.i1e`).
    bessel_i1e => BesselI1e;
}

impl Array {
    /// The next value after `self` towards `other` in the float dtype (`jnp.nextafter`,
    /// `lax.nextafter`); integers work in the default float. Not differentiable (JAX
    /// defines no derivative).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32], &[1]);
    /// assert_eq!(x.nextafter(2.0).to_vec::<f32>(), vec![1.0 + f32::EPSILON]);
    /// ```
    #[track_caller]
    pub fn nextafter<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        let (x, y) = super::arith::promote_args_inexact("nextafter", self, other);
        bind1(
            crate::prims::Binary(BinaryOp::NextAfter),
            &[Operand::from(&x), Operand::from(&y)],
        )
    }

    /// The Hurwitz zeta function `ζ(self, q) = Σ_k (k + q)^-self` (`lax.zeta`); integers
    /// work in the default float. Not differentiable (JAX 0.10.2 defines no derivative).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let s = Array::from_vec(vec![2.0f64], &[1]);
    /// let z = s.zeta(1.0).to_vec::<f64>()[0];
    /// assert!((z - std::f64::consts::PI.powi(2) / 6.0).abs() < 1e-12);
    /// ```
    #[track_caller]
    pub fn zeta<'a>(&'a self, q: impl IntoArg<'a>) -> Array {
        let (x, q) = super::arith::promote_args_inexact("zeta", self, q);
        bind1(
            crate::prims::Binary(BinaryOp::Zeta),
            &[Operand::from(&x), Operand::from(&q)],
        )
    }

    /// The polygamma function `ψ^(m)(x)` with `self` as `m` (`lax.polygamma(m, x)`; `m` a
    /// non-negative integer value, NaN otherwise). Differentiable in `x` only, as in JAX.
    #[track_caller]
    pub fn polygamma<'a>(&'a self, x: impl IntoArg<'a>) -> Array {
        let (m, x) = super::arith::promote_args_inexact("polygamma", self, x);
        bind1(
            crate::prims::Binary(BinaryOp::Polygamma),
            &[Operand::from(&m), Operand::from(&x)],
        )
    }

    /// The high half of the double-width product of two integers of one dtype (`lax.mulhi`):
    /// `(x * y) >> bits`, signed or unsigned as the dtype.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![200u8], &[1]);
    /// assert_eq!(x.mulhi(&x).to_vec::<u8>(), vec![156]); // 40000 >> 8
    /// ```
    #[track_caller]
    pub fn mulhi<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        binary(BinaryOp::MulHi, self.into_arg(), other.into_arg())
    }

    /// The value rounded to a float format of `exponent_bits` and `mantissa_bits`, kept in
    /// its dtype (`lax.reduce_precision`): `reduce_precision(8, 7)` rounds float32 values to
    /// bfloat16's, `(5, 10)` to float16's (overflowing to infinity past its range).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32 + 1e-3, 70000.0], &[2]);
    /// assert_eq!(x.reduce_precision(5, 10).to_vec::<f32>(), vec![1.0009766, f32::INFINITY]);
    /// ```
    #[track_caller]
    pub fn reduce_precision(&self, exponent_bits: u32, mantissa_bits: u32) -> Array {
        bind1(
            crate::prims::ReducePrecision {
                exponent_bits,
                mantissa_bits,
            },
            &[Operand::from(self)],
        )
    }
}

impl Array {
    /// The bits of each element read as `dtype`, which must have the element's width
    /// (`lax.bitcast_convert_type`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let bits = Array::from_vec(vec![0x3f80_0000u32], &[1]);
    /// let one = bits.bitcast_convert_type(DType::F32);
    /// assert_eq!(one.to_vec::<f32>(), vec![1.0]);
    /// ```
    #[track_caller]
    pub fn bitcast_convert_type(&self, dtype: DType) -> Array {
        bind1(BitcastConvert { dtype }, &[Operand::from(self)])
    }
}

impl Array {
    /// The sigmoid, an alias of [`Array::logistic`].
    #[track_caller]
    pub fn sigmoid(&self) -> Array {
        self.logistic()
    }

    /// `x^n` for an integer constant `n`, by multiplications (`lax.integer_pow`).
    #[track_caller]
    pub fn powi(&self, n: i32) -> Array {
        bind1(IntegerPow { n }, &[Operand::from(self)])
    }

    /// `max(x, 0)`, with derivative 0 at 0 (as `jax.nn.relu`), and NaN passed through.
    #[track_caller]
    pub fn relu(&self) -> Array {
        bind1(Unary(UnaryOp::Relu), &[Operand::from(self)])
    }

    /// GELU with the tanh approximation (`jax.nn.gelu(x, approximate=True)`).
    #[track_caller]
    pub fn gelu(&self) -> Array {
        let x = float_operand(UnaryOp::Tanh, self);
        let sqrt_2_over_pi = (2.0 / std::f64::consts::PI).sqrt();
        let cube = x.powi(3);
        let inner = (&x + &cube * 0.044715) * sqrt_2_over_pi;
        &x * 0.5 * (inner.tanh() + 1.0)
    }

    /// GELU with the exact erf form (`jax.nn.gelu(x, approximate=False)`).
    #[track_caller]
    pub fn gelu_exact(&self) -> Array {
        let x = float_operand(UnaryOp::Erf, self);
        &x * 0.5 * ((&x * std::f64::consts::FRAC_1_SQRT_2).erf() + 1.0)
    }

    /// SiLU (swish), `x * sigmoid(x)` (`jax.nn.silu`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let y = Array::from_vec(vec![0.0f32, 1.0], &[2]).silu().to_vec::<f32>();
    /// assert_eq!(y[0], 0.0);
    /// assert!((y[1] - 1.0 / (1.0 + (-1f32).exp())).abs() < 1e-6);
    /// ```
    #[track_caller]
    pub fn silu(&self) -> Array {
        let x = float_operand(UnaryOp::Logistic, self);
        &x * &x.logistic()
    }

    /// `x` where `x >= 0`, else `negative_slope * x` (`jax.nn.leaky_relu`; flax's default
    /// slope is 0.01).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![-2.0f32, 3.0], &[2]);
    /// assert_eq!(x.leaky_relu(0.01).to_vec::<f32>(), vec![-0.02, 3.0]);
    /// ```
    #[track_caller]
    pub fn leaky_relu(&self, negative_slope: f64) -> Array {
        let x = float_operand(UnaryOp::Logistic, self);
        where_(x.ge(0.0), &x, &x * negative_slope)
    }

    /// `x` where `x > 0`, else `alpha * (e^x - 1)` (`jax.nn.elu`). The exponential only sees
    /// the non-positive values, so large inputs give no infinite (or NaN) gradient.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let y = Array::from_vec(vec![-1.0f32, 2.0], &[2]).elu(1.0).to_vec::<f32>();
    /// assert!((y[0] - ((-1f32).exp() - 1.0)).abs() < 1e-6);
    /// assert_eq!(y[1], 2.0);
    /// ```
    #[track_caller]
    pub fn elu(&self, alpha: f64) -> Array {
        let x = float_operand(UnaryOp::Expm1, self);
        let positive = x.gt(0.0);
        let safe = where_(&positive, 0.0, &x);
        where_(&positive, &x, safe.expm1() * alpha)
    }

    /// `log(sigmoid(x))`, computed as `-softplus(-x)` so it neither overflows nor loses
    /// precision for large `|x|` (`jax.nn.log_sigmoid`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let y = Array::from_vec(vec![-100.0f32, 0.0], &[2]).log_sigmoid().to_vec::<f32>();
    /// assert_eq!(y[0], -100.0);
    /// assert!((y[1] + 2f32.ln()).abs() < 1e-6);
    /// ```
    #[track_caller]
    pub fn log_sigmoid(&self) -> Array {
        let x = float_operand(UnaryOp::Logistic, self);
        -(-&x).softplus()
    }

    /// The array converted to `dtype` (`convert_element_type`): floats to integers truncate,
    /// nonzero is `true`.
    #[track_caller]
    pub fn astype(&self, dtype: DType) -> Array {
        if dtype == self.dtype() && !self.is_weak() {
            return self.clone();
        }
        bind1(Convert { dtype, weak: false }, &[Operand::from(self)])
    }
}

/// The identity, whose gradient is zero (`lax.stop_gradient`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// // d/dx (x * stop_gradient(x)) at x = 3 is 3, not 6.
/// let f = grad(|x: Array| &x * &jaxrs::stop_gradient(&x));
/// assert_eq!(f(Array::scalar(3.0f32)).item::<f32>(), 3.0);
/// ```
#[track_caller]
pub fn stop_gradient(x: &Array) -> Array {
    bind1(StopGradient, &[Operand::from(x)])
}

impl Array {
    /// The Euclidean (L2) norm of all elements, with a gradient that is `x / |x|` and zero
    /// (not NaN, as the chain rule through `sqrt` gives) at `x = 0`: the case gradient
    /// clipping meets when every gradient is zero. Built with JAX's double-`where` idiom (the
    /// square root only ever sees a positive value), so forward mode works too.
    #[track_caller]
    pub fn norm(&self) -> Array {
        let sq = (self * self).sum(None, false);
        let zero = sq.eq(0.0);
        let safe = where_(&zero, 1.0, &sq);
        where_(&zero, 0.0, safe.sqrt())
    }
}

/// The largest finite value of a float dtype, as `jnp.finfo(dtype).max`.
fn finite_max(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 65504.0,
        DType::BF16 => 3.389_531_389_251_535_5e38,
        DType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

impl Array {
    /// `log(exp(x) + exp(y))`, computed without overflow (`jnp.logaddexp`); integers work in
    /// their inexact dtype ([`DType::to_inexact`]). The derivative is `exp(x - out)` for `x` (so both sides get 0.5 at a tie).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![0.0f32, 1000.0], &[2]);
    /// let y = x.logaddexp(0.0);
    /// assert!((y.to_vec::<f32>()[0] - 2f32.ln()).abs() < 1e-6);
    /// assert_eq!(y.to_vec::<f32>()[1], 1000.0);
    /// ```
    #[track_caller]
    pub fn logaddexp<'a>(&'a self, other: impl IntoArg<'a>) -> Array {
        let args = unify("logaddexp", vec![self.into_arg(), other.into_arg()]);
        let (mut x, mut y) = (
            args[0].to_array().into_owned(),
            args[1].to_array().into_owned(),
        );
        if !x.dtype().is_float() {
            x = x.astype(x.dtype().to_inexact());
            y = y.astype(y.dtype().to_inexact());
        }
        let delta = &x - &y;
        // Built on the larger operand so the exponent is never positive: exp cannot overflow,
        // and each branch's derivative is finite (no NaN leaks through the unselected one).
        let x_larger = delta.ge(0.0);
        let larger = where_(&x_larger, &x, &y);
        let smaller = where_(&x_larger, &y, &x);
        let out = &larger + (&smaller - &larger).exp().log1p();
        // inf + inf (and -inf + -inf) make a NaN delta; JAX answers x + y there.
        where_(delta.ne(&delta), &x + &y, out)
    }

    /// `log(1 + exp(x))`, a smooth relu (`jax.nn.softplus`, i.e. `logaddexp(x, 0)`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let y = Array::from_vec(vec![-100.0f32, 0.0, 100.0], &[3]).softplus();
    /// assert_eq!(y.to_vec::<f32>()[0], 0.0);
    /// assert!((y.to_vec::<f32>()[1] - 2f32.ln()).abs() < 1e-6);
    /// assert_eq!(y.to_vec::<f32>()[2], 100.0);
    /// ```
    #[track_caller]
    pub fn softplus(&self) -> Array {
        self.logaddexp(0.0)
    }

    /// The values limited to `[min, max]` (`jnp.clip(x, min, max)`: `minimum(maximum(x, min),
    /// max)`, so `min > max` gives `max` everywhere); the bounds broadcast and promote as
    /// operands of a binary op.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![-2.0f32, 0.5, 3.0], &[3]);
    /// assert_eq!(x.clip(-1.0, 1.0).to_vec::<f32>(), vec![-1.0, 0.5, 1.0]);
    /// ```
    #[track_caller]
    pub fn clip<'a>(&'a self, min: impl IntoArg<'a>, max: impl IntoArg<'a>) -> Array {
        let low = binary(BinaryOp::Max, self.into_arg(), min.into_arg());
        binary(BinaryOp::Min, Operand::from(low), max.into_arg())
    }

    /// `true` where the value is NaN (`jnp.isnan`; never for integers and bools).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, f32::NAN, f32::INFINITY], &[3]);
    /// assert_eq!(x.isnan().to_vec::<bool>(), vec![false, true, false]);
    /// ```
    #[track_caller]
    pub fn isnan(&self) -> Array {
        if self.dtype().is_complex() {
            return self.real().isnan().logical_or(self.imag().isnan());
        }
        if self.dtype().is_float() {
            self.ne(self)
        } else {
            self.ne(self).astype(DType::Bool)
        }
    }

    /// `true` where the value is `+inf` or `-inf` (`jnp.isinf`; never for integers and bools).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, f32::NAN, f32::NEG_INFINITY], &[3]);
    /// assert_eq!(x.isinf().to_vec::<bool>(), vec![false, false, true]);
    /// ```
    #[track_caller]
    pub fn isinf(&self) -> Array {
        if self.dtype().is_complex() {
            return self.real().isinf().logical_or(self.imag().isinf());
        }
        if self.dtype().is_float() {
            self.abs().eq(f64::INFINITY)
        } else {
            self.ne(self).astype(DType::Bool)
        }
    }

    /// `true` where the value is neither NaN nor infinite (`jnp.isfinite`; always for integers
    /// and bools).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, f32::NAN, f32::INFINITY], &[3]);
    /// assert_eq!(x.isfinite().to_vec::<bool>(), vec![true, false, false]);
    /// ```
    #[track_caller]
    pub fn isfinite(&self) -> Array {
        if self.dtype().is_complex() {
            return self.real().isfinite().logical_and(self.imag().isfinite());
        }
        if self.dtype().is_float() {
            self.abs().lt(f64::INFINITY)
        } else {
            self.eq(self).astype(DType::Bool)
        }
    }

    /// NaN replaced by `nan`, `+inf` by `posinf` and `-inf` by `neginf` (`jnp.nan_to_num`):
    /// `None` means the dtype's largest (smallest) finite value. Integers and bools are
    /// returned unchanged.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 2.0], &[4]);
    /// let y = x.nan_to_num(0.0, None, Some(-1.0));
    /// assert_eq!(y.to_vec::<f32>(), vec![0.0, f32::MAX, -1.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn nan_to_num(&self, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Array {
        if !self.dtype().is_float() {
            return self.clone();
        }
        let big = finite_max(self.dtype());
        let posinf = Array::full(&[], posinf.unwrap_or(big), self.dtype());
        let neginf = Array::full(&[], neginf.unwrap_or(-big), self.dtype());
        let nan = Array::full(&[], nan, self.dtype());
        let out = where_(self.isnan(), &nan, self);
        let out = where_(out.eq(f64::INFINITY), &posinf, &out);
        where_(out.eq(f64::NEG_INFINITY), &neginf, &out)
    }
}

/// `x + y i` (`lax.complex`): float32 parts make complex64, float64 parts complex128. The
/// parts broadcast and promote as in arithmetic (a Rust scalar takes the other's dtype); an
/// integer or half-precision part is refused, as by JAX.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let z = jaxrs::complex(&Array::from_vec(vec![1.0f32, 2.0], &[2]), -1.0);
/// assert_eq!(z.to_vec::<jaxrs::C64>(), vec![jaxrs::C64::new(1.0, -1.0), jaxrs::C64::new(2.0, -1.0)]);
/// ```
#[track_caller]
pub fn complex<'a>(x: impl IntoArg<'a>, y: impl IntoArg<'a>) -> Array {
    let args = unify("complex", vec![x.into_arg(), y.into_arg()]);
    bind1(MakeComplex, &args)
}

impl Array {
    /// The real part (`x.real`, `jnp.real`): of a real array, the array itself.
    #[track_caller]
    pub fn real(&self) -> Array {
        if self.dtype().is_complex() {
            bind1(ComplexPart(Part::Real), &[Operand::from(self)])
        } else {
            self.clone()
        }
    }

    /// The imaginary part (`x.imag`, `jnp.imag`): of a real array, zeros of its dtype.
    #[track_caller]
    pub fn imag(&self) -> Array {
        if self.dtype().is_complex() {
            bind1(ComplexPart(Part::Imag), &[Operand::from(self)])
        } else {
            Array::zeros_like(self)
        }
    }

    /// The complex conjugate (`x.conj()`, `jnp.conj`): of a real array, the array itself.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::C64;
    ///
    /// let z = Array::from_vec(vec![C64::new(1.0, 2.0)], &[1]);
    /// assert_eq!(z.conj().to_vec::<C64>(), vec![C64::new(1.0, -2.0)]);
    /// ```
    #[track_caller]
    pub fn conj(&self) -> Array {
        if self.dtype().is_complex() {
            bind1(ComplexPart(Part::Conj), &[Operand::from(self)])
        } else {
            self.clone()
        }
    }
}
