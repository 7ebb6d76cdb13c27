//! `jax.scipy.special`: special functions, each written as JAX 0.10.2 writes it (the same
//! `lax` primitives and the same piecewise selections), so values and derivatives are JAX's.
//! Integer and bool operands compute in the float JAX's `promote_args_inexact` picks (int64
//! in f64, the others in f32).
//!
//! ```
//! use jaxrs::prelude::*;
//! use jaxrs::scipy::special;
//!
//! let x = Array::from_vec(vec![1.0f32, 5.0], &[2]);
//! let lgamma = special::gammaln(&x).to_vec::<f32>();
//! assert!((lgamma[1] - 24.0f32.ln()).abs() < 1e-5);
//! // `exp(gammaln(n + 1))`, as JAX computes it, in float32 for int32 `n`: 24.000023 for 4!.
//! let fact = special::factorial(&Array::from_vec(vec![4i32, -1], &[2])).to_vec::<f32>();
//! assert!((fact[0] - 24.0).abs() < 1e-4 && fact[1] == 0.0);
//! ```
//!
//! Not yet here (API.md says which): the functions JAX defines with a custom derivative
//! (`xlogy`, `xlog1py`, `entr`, `rel_entr`, `kl_div`, whose JVPs at 0 differ from autodiff of
//! their selections and need `custom_jvp`), and those built on long series of their own
//! (`ndtri`, `log_ndtr`, `betaln`, `spence`, `erfcx`, ...).

use crate::numpy::inexact;
use crate::{lax, where_, Array};
use jaxrs_runtime::promote_args_inexact;

/// `log |Γ(x)|` (`jax.scipy.special.gammaln`).
#[track_caller]
pub fn gammaln(x: &Array) -> Array {
    lax::lgamma(&inexact(x))
}

/// The digamma function ψ(x), the derivative of `gammaln` (`jax.scipy.special.digamma`).
#[track_caller]
pub fn digamma(x: &Array) -> Array {
    lax::digamma(&inexact(x))
}

/// The polygamma function ψ⁽ⁿ⁾(x) (`jax.scipy.special.polygamma`): `n` must be of an
/// integer dtype (a float `n` panics, as JAX raises), and the derivative is with respect to
/// `x` only, as JAX's.
#[track_caller]
pub fn polygamma(n: &Array, x: &Array) -> Array {
    assert!(
        n.dtype().is_int() || n.dtype().is_unsigned(),
        "polygamma: n must be of an integer dtype, not {}, as in JAX",
        n.dtype().name()
    );
    let (n, x) = promote_args_inexact("polygamma", n, x);
    lax::polygamma(&n, &x)
}

/// The Hurwitz zeta function ζ(x, q) (`jax.scipy.special.zeta`).
#[track_caller]
pub fn zeta(x: &Array, q: &Array) -> Array {
    let (x, q) = promote_args_inexact("zeta", x, q);
    lax::zeta(&x, &q)
}

/// The regularized lower incomplete gamma function P(a, x) (`jax.scipy.special.gammainc`).
#[track_caller]
pub fn gammainc(a: &Array, x: &Array) -> Array {
    let (a, x) = promote_args_inexact("gammainc", a, x);
    lax::igamma(&a, &x)
}

/// The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
/// (`jax.scipy.special.gammaincc`).
#[track_caller]
pub fn gammaincc(a: &Array, x: &Array) -> Array {
    let (a, x) = promote_args_inexact("gammaincc", a, x);
    lax::igammac(&a, &x)
}

/// The regularized incomplete beta function I_x(a, b) (`jax.scipy.special.betainc`).
#[track_caller]
pub fn betainc(a: &Array, b: &Array, x: &Array) -> Array {
    let (a, b) = promote_args_inexact("betainc", a, b);
    let (a, x) = promote_args_inexact("betainc", &a, x);
    let (b, x) = promote_args_inexact("betainc", &b, &x);
    lax::betainc(&a, &b, &x)
}

/// The error function (`jax.scipy.special.erf`).
#[track_caller]
pub fn erf(x: &Array) -> Array {
    lax::erf(&inexact(x))
}

/// `1 - erf(x)`, computed without cancellation (`jax.scipy.special.erfc`).
#[track_caller]
pub fn erfc(x: &Array) -> Array {
    lax::erfc(&inexact(x))
}

/// The inverse of [`erf`] on (-1, 1) (`jax.scipy.special.erfinv`).
#[track_caller]
pub fn erfinv(x: &Array) -> Array {
    lax::erf_inv(&inexact(x))
}

/// The logistic sigmoid `1 / (1 + exp(-x))` (`jax.scipy.special.expit`).
#[track_caller]
pub fn expit(x: &Array) -> Array {
    lax::logistic(&inexact(x))
}

/// The inverse of [`expit`], `log(p / (1 - p))` (`jax.scipy.special.logit`).
#[track_caller]
pub fn logit(p: &Array) -> Array {
    let p = inexact(p);
    (&p / &(1.0 - &p)).log()
}

/// The standard normal CDF (`jax.scipy.special.ndtr`), in float32 or float64 only, as JAX's
/// (other dtypes panic naming theirs). JAX's three pieces: `1 + erf(w)` near 0, and `erfc` of
/// `|w|` in the tails, so that neither tail loses its digits.
#[track_caller]
pub fn ndtr(x: &Array) -> Array {
    let dtype = x.dtype();
    assert!(
        matches!(dtype, jaxrs_runtime::DType::F32 | jaxrs_runtime::DType::F64),
        "ndtr: x.dtype={} is not supported (float32 or float64), as in JAX",
        dtype.name()
    );
    let half_sqrt_2 = 0.5 * std::f64::consts::SQRT_2;
    let w = x * half_sqrt_2;
    let z = w.abs();
    let tails = where_(w.gt(0.0), 2.0 - &lax::erfc(&z), lax::erfc(&z));
    let y = where_(z.lt(half_sqrt_2), 1.0 + &lax::erf(&w), &tails);
    0.5 * &y
}

/// The modified Bessel function of the first kind of order 0 (`jax.scipy.special.i0`).
#[track_caller]
pub fn i0(x: &Array) -> Array {
    crate::numpy::i0(x)
}

/// `exp(-|x|) I₀(x)` (`jax.scipy.special.i0e`).
#[track_caller]
pub fn i0e(x: &Array) -> Array {
    lax::bessel_i0e(&inexact(x))
}

/// The modified Bessel function of the first kind of order 1 (`jax.scipy.special.i1`), as
/// JAX computes it: `exp(|x|) i1e(x)`.
#[track_caller]
pub fn i1(x: &Array) -> Array {
    let x = inexact(x);
    &x.abs().exp() * &lax::bessel_i1e(&x)
}

/// `exp(-|x|) I₁(x)` (`jax.scipy.special.i1e`).
#[track_caller]
pub fn i1e(x: &Array) -> Array {
    lax::bessel_i1e(&inexact(x))
}

/// `n!` as `Γ(n + 1)` (`jax.scipy.special.factorial` with `exact=False`, the only form JAX
/// has), 0 for negative `n`.
#[track_caller]
pub fn factorial(n: &Array) -> Array {
    let n = inexact(n);
    where_(n.lt(0.0), 0.0, (&n + 1.0).lgamma().exp())
}

/// The options of [`logsumexp`] beyond the axes (`jax.scipy.special.logsumexp`'s keywords).
#[derive(Debug, Clone, Copy, Default)]
pub struct LogsumexpOptions<'a> {
    /// Scale factors: `log(sum(b * exp(a)))`; a zero `b` drops its term.
    pub b: Option<&'a Array>,
    /// Keep the reduced axes with length 1.
    pub keepdims: bool,
    /// Reduce only where this is true (it broadcasts against `a`).
    pub where_: Option<&'a Array>,
}

/// `log(sum(b * exp(a)))` over `axis`, computed stably (`jax.scipy.special.logsumexp`, also
/// `jax.nn.logsumexp`): the maximum is taken out first (and kept out of the gradient). With
/// `b`, a negative sum gives NaN; [`logsumexp_with_sign`] returns `log |sum|` and its sign.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::special::{logsumexp, LogsumexpOptions};
///
/// let a = Array::from_vec(vec![0.0f32, 0.0], &[2]);
/// let y = logsumexp(&a, None, LogsumexpOptions::default());
/// assert!((y.item::<f32>() - 2.0f32.ln()).abs() < 1e-6);
/// ```
#[track_caller]
pub fn logsumexp(a: &Array, axis: impl crate::Axes, opts: LogsumexpOptions) -> Array {
    let (out, sign) = logsumexp_parts(a, axis, opts);
    if opts.b.is_some() {
        return where_(sign.lt(0.0), f64::NAN, &out);
    }
    out
}

/// [`logsumexp`] with `return_sign=True`: `log |sum(b * exp(a))|` and the sum's sign.
#[track_caller]
pub fn logsumexp_with_sign(
    a: &Array,
    axis: impl crate::Axes,
    opts: LogsumexpOptions,
) -> (Array, Array) {
    logsumexp_parts(a, axis, opts)
}

#[track_caller]
fn logsumexp_parts(a: &Array, axis: impl crate::Axes, opts: LogsumexpOptions) -> (Array, Array) {
    let (a, b) = match opts.b {
        Some(b) => {
            let (a, b) = promote_args_inexact("logsumexp", a, b);
            let a = where_(b.ne(0.0), &a, f64::NEG_INFINITY);
            (a, Some(b))
        }
        None => (inexact(a), None),
    };
    let rank = a.rank() as i64;
    let axes: Vec<i64> = match axis.axes() {
        None => (0..rank).collect(),
        Some(v) => v
            .into_iter()
            .map(|x| if x < 0 { x + rank } else { x })
            .collect(),
    };
    let real = a.real();
    let masked = match opts.where_ {
        Some(w) => where_(w, &real, f64::NEG_INFINITY),
        None => real,
    };
    let amax = masked.max(&axes[..], true);
    let amax = crate::stop_gradient(&where_(amax.isfinite(), &amax, 0.0));
    let mut exp_a = (&a - amax.astype(a.dtype())).exp();
    if let Some(b) = &b {
        exp_a = exp_a * b;
    }
    if let Some(w) = opts.where_ {
        exp_a = where_(w, &exp_a, 0.0);
    }
    let sumexp = exp_a.sum(&axes[..], true);
    let sign = sumexp.sign();
    let sumexp = if a.dtype().is_complex() {
        sumexp
    } else {
        sumexp.abs()
    };
    let mut out = sumexp.log() + amax.astype(sumexp.dtype());
    let mut sign = sign;
    if !opts.keepdims && !axes.is_empty() {
        out = out.squeeze(&axes[..]);
        sign = sign.squeeze(&axes[..]);
    }
    (out, sign)
}
