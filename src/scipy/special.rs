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
//! The functions JAX defines with a custom derivative (`xlogy`, `xlog1py`, `entr`,
//! `rel_entr`, `kl_div`, `log_ndtr`, `erfcx`, `dawsn`, `poch`, `expi`, `expn`/`exp1`, `sici`,
//! `fresnel`, `owens_t`, `wofz`, `hyp1f1`, `hyp2f1`) carry the same rule here, through
//! [`custom_jvp`], so their derivatives at the edges (`x = 0`) are JAX's,
//! not autodiff of their selections. JAX's `while_loop`s inside `jnp.vectorize` (`expn`'s
//! series and continued fraction) run per element here too: the loop goes on while any element
//! needs it, the others keeping their values, as JAX's batched loop does. Not yet here (API.md
//! says which): complex arguments of `gamma`/`loggamma`.

use crate::numpy::inexact;
use crate::{custom_jvp, lax, where_, Array, DType};
use jaxrs_runtime::promote_args_inexact;

mod expint;
mod hypergeometric;
mod owens_t;
mod sph_harm;
mod trig_integrals;
mod wofz;

pub use expint::{exp1, expi, expn};
pub use hypergeometric::{hyp1f1, hyp2f1};
pub use owens_t::owens_t;
pub use sph_harm::sph_harm_y;
pub use trig_integrals::{fresnel, sici};
pub use wofz::wofz;

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
        matches!(dtype, DType::F32 | DType::F64),
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

/// A constant of `x`'s dtype and shape.
fn full_like(x: &Array, v: f64) -> Array {
    Array::full(x.shape(), v, x.dtype())
}

/// `jnp.polyval(coeffs, x)` for constant coefficients (highest power first), by Horner's rule
/// from zero, as JAX evaluates it.
fn horner(coeffs: &[f64], x: &Array) -> Array {
    let mut y = Array::zeros(x.shape(), x.dtype());
    for &c in coeffs {
        y = &(&y * x) + c;
    }
    y
}

/// Stops on complex operands of the functions JAX defines for reals only.
#[track_caller]
fn real_only(op: &str, x: &Array) {
    assert!(
        !x.dtype().is_complex(),
        "{op} does not support complex-valued inputs, as in JAX"
    );
}

/// The sign of `Γ(x)` (`jax.scipy.special.gammasgn`): 1 or -1, NaN at the poles and NaN.
#[track_caller]
pub fn gammasgn(x: &Array) -> Array {
    let x = inexact(x);
    real_only("gammasgn", &x);
    let floor_x = x.floor();
    let negative = x.lt(0.0);
    let pole = negative.bitwise_and(x.eq(&floor_x)).bitwise_or(x.isnan());
    let odd = floor_x.rem(2.0).ne(0.0);
    let minus = negative
        .bitwise_and(&odd)
        .bitwise_or(x.eq(0.0).bitwise_and(crate::numpy::signbit(&x)));
    where_(&pole, f64::NAN, where_(&minus, -1.0, full_like(&x, 1.0)))
}

/// `log Γ(x)` for real `x` (`jax.scipy.special.loggamma`): NaN for `x <= 0`, where `Γ` is
/// negative or infinite (scipy's real `loggamma`). Complex `x` is not supported yet.
#[track_caller]
pub fn loggamma(x: &Array) -> Array {
    let x = inexact(x);
    assert!(
        !x.dtype().is_complex(),
        "loggamma: complex arguments are not supported yet in jaxrs"
    );
    where_(x.gt(0.0), x.lgamma(), f64::NAN)
}

/// `Γ(x)` for real `x` (`jax.scipy.special.gamma`): `gammasgn(x) * exp(gammaln(x))`.
#[track_caller]
pub fn gamma(x: &Array) -> Array {
    let x = inexact(x);
    assert!(
        !x.dtype().is_complex(),
        "gamma: complex arguments are not supported yet in jaxrs"
    );
    &gammasgn(&x) * &x.lgamma().exp()
}

/// `log Γ(a) - log Γ(a + b)` for `a <= b`, `b >= 8` (`algdiv` of cdflib, as JAX's betaln).
fn algdiv(a: &Array, b: &Array) -> Array {
    let (c0, c1, c2, c3, c4, c5) = (
        0.833333333333333e-01,
        -0.277777777760991e-02,
        0.793650666825390e-03,
        -0.595202931351870e-03,
        0.837308034031215e-03,
        -0.165322962780713e-02,
    );
    let h = a / b;
    let c = &h / &(1.0 + &h);
    let x = &h / &(1.0 + &h);
    let d = b + &(a - 0.5);
    let x2 = &x * &x;
    let s3 = 1.0 + &(&x + &x2);
    let s5 = 1.0 + &(&x + &(&x2 * &s3));
    let s7 = 1.0 + &(&x + &(&x2 * &s5));
    let s9 = 1.0 + &(&x + &(&x2 * &s7));
    let s11 = 1.0 + &(&x + &(&x2 * &s9));
    let inv_b: Array = 1.0 / b;
    let t = inv_b.powi(2);
    // ((((c5 s11 t + c4 s9) t + c3 s7) t + c2 s5) t + c1 s3) t + c0, in JAX's order.
    let mut w = &(&s11 * c5) * &t;
    for (c, s) in [(c4, &s9), (c3, &s7), (c2, &s5), (c1, &s3)] {
        w = &(&w + &(s * c)) * &t;
    }
    let w = &w + c0;
    let w = &w * &(&c / b);
    let u = &d * &(a / b).log1p();
    let v = a * &(b.log() - 1.0);
    where_(u.le(&v), &(&w - &v) - &u, &(&w - &u) - &v)
}

/// `log |B(a, b)|` (`jax.scipy.special.betaln`): `lgamma(a) + lgamma(b) - lgamma(a + b)`
/// for small arguments, cdflib's `algdiv` once the larger is 8 or more (accurate for large
/// arguments, as JAX's).
#[track_caller]
pub fn betaln(a: &Array, b: &Array) -> Array {
    let (a, b) = promote_args_inexact("betaln", a, b);
    let (a, b) = (a.minimum(&b), a.maximum(&b));
    let small_b = &a.lgamma() + &(&b.lgamma() - &(&a + &b).lgamma());
    let large_b = &a.lgamma() + &algdiv(&a, &b);
    where_(b.lt(8.0), &small_b, &large_b)
}

/// The beta function `B(a, b)` (`jax.scipy.special.beta`), with its sign.
#[track_caller]
pub fn beta(a: &Array, b: &Array) -> Array {
    let (a, b) = promote_args_inexact("beta", a, b);
    real_only("beta", &a);
    let sign = &(&gammasgn(&a) * &gammasgn(&b)) * &gammasgn(&(&a + &b));
    &sign * &betaln(&a, &b).exp()
}

/// Combinations of `n` things taken `k` at a time (`jax.scipy.special.comb(N, k,
/// repetition)`), through `gammaln` as JAX's (no `exact`): 0 outside `0 <= k <= N`.
#[track_caller]
pub fn comb(n: &Array, k: &Array, repetition: bool) -> Array {
    let (n, k) = promote_args_inexact("comb", n, k);
    if repetition {
        let cond = k.eq(0.0).bitwise_and(n.ge(0.0));
        let result = comb(&(&(&n + &k) - 1.0), &k, false);
        return where_(&cond, 1.0, &result);
    }
    let cond = k.le(&n).bitwise_and(n.ge(0.0)).bitwise_and(k.ge(0.0));
    let safe_n = where_(&cond, &n, 0.0);
    let safe_k = where_(&cond, &k, 0.0);
    let result = (&(&gammaln(&(&safe_n + 1.0)) - &gammaln(&(&safe_k + 1.0)))
        - gammaln(&(&(&safe_n + 1.0) - &safe_k)))
    .exp();
    where_(&cond, &result, 0.0)
}

fn xlogy_value(x: &Array, y: &Array) -> Array {
    let keep = x.ne(0.0).bitwise_or(y.isnan());
    where_(&keep, x * &y.log(), Array::zeros(x.shape(), x.dtype()))
}

/// `x * log(y)`, 0 where `x = 0` (`jax.scipy.special.xlogy`), with JAX's derivative
/// `dx log(y) + dy x / y` (a custom JVP, so the derivative at `x = 0` is JAX's).
#[track_caller]
pub fn xlogy(x: &Array, y: &Array) -> Array {
    let (x, y) = promote_args_inexact("xlogy", x, y);
    custom_jvp(
        "xlogy",
        |(x, y): (Array, Array)| xlogy_value(&x, &y),
        |(x, y): (Array, Array), (dx, dy): (Array, Array)| {
            let out = xlogy_value(&x, &y);
            let t = &(&dx * &y.log()) + &(&(&dy * &x) / &y);
            let t = t.astype(out.dtype());
            (out, t)
        },
    )
    .call((x, y))
}

fn xlog1py_value(x: &Array, y: &Array) -> Array {
    let keep = x.ne(0.0).bitwise_or(y.isnan());
    where_(&keep, x * &y.log1p(), Array::zeros(x.shape(), x.dtype()))
}

/// `x * log1p(y)`, 0 where `x = 0` (`jax.scipy.special.xlog1py`), with JAX's custom
/// derivative `dx log1p(y) + dy x / (1 + y)`.
#[track_caller]
pub fn xlog1py(x: &Array, y: &Array) -> Array {
    let (x, y) = promote_args_inexact("xlog1py", x, y);
    custom_jvp(
        "xlog1py",
        |(x, y): (Array, Array)| xlog1py_value(&x, &y),
        |(x, y): (Array, Array), (dx, dy): (Array, Array)| {
            let out = xlog1py_value(&x, &y);
            let t = &(&dx * &y.log1p()) + &(&(&dy * &x) / &(1.0 + &y));
            let t = t.astype(out.dtype());
            (out, t)
        },
    )
    .call((x, y))
}

/// `x log x` with JAX's derivative `log(x) + 1` (its `_xlogx`).
fn xlogx(x: &Array) -> Array {
    custom_jvp(
        "xlogx",
        |x: Array| xlogy(&x, &x),
        |x: Array, dx: Array| (xlogy(&x, &x), &dx * &(x.log() + 1.0)),
    )
    .call(x.clone())
}

/// The elementwise entropy `-x log x` (`jax.scipy.special.entr`): 0 at 0, `-inf` below.
#[track_caller]
pub fn entr(x: &Array) -> Array {
    let x = inexact(x);
    real_only("entr", &x);
    where_(x.lt(0.0), f64::NEG_INFINITY, -xlogx(&x))
}

/// The relative entropy `p log(p / q)` (`jax.scipy.special.rel_entr`): 0 where `p = 0 <= q`,
/// `inf` where either is negative or `q = 0 < p`.
#[track_caller]
pub fn rel_entr(p: &Array, q: &Array) -> Array {
    let (p, q) = promote_args_inexact("rel_entr", p, q);
    real_only("rel_entr", &p);
    let both_positive = p.gt(0.0).bitwise_and(q.gt(0.0));
    let zero_p = p.eq(0.0).bitwise_and(q.ge(0.0));
    let safe_p = where_(&both_positive, &p, 1.0);
    let safe_q = where_(&both_positive, &q, 1.0);
    let log_val = &xlogx(&safe_p) - &xlogy(&safe_p, &safe_q);
    let zero = Array::zeros(p.shape(), p.dtype());
    where_(
        &both_positive,
        &log_val,
        where_(&zero_p, &zero, f64::INFINITY),
    )
}

/// The Kullback-Leibler divergence term `rel_entr(p, q) - p + q`
/// (`jax.scipy.special.kl_div`).
#[track_caller]
pub fn kl_div(p: &Array, q: &Array) -> Array {
    let (p, q) = promote_args_inexact("kl_div", p, q);
    real_only("kl_div", &p);
    &(&rel_entr(&p, &q) - &p) + &q
}

/// The Box-Cox transform `(x^λ - 1) / λ`, `log x` at `λ = 0`
/// (`jax.scipy.special.boxcox`), through `expm1` as JAX's.
#[track_caller]
pub fn boxcox(x: &Array, lmbda: &Array) -> Array {
    let (x, lmbda) = promote_args_inexact("boxcox", x, lmbda);
    box_cox(&x.log(), &lmbda)
}

/// The Box-Cox transform of `1 + x` (`jax.scipy.special.boxcox1p`).
#[track_caller]
pub fn boxcox1p(x: &Array, lmbda: &Array) -> Array {
    let (x, lmbda) = promote_args_inexact("boxcox1p", x, lmbda);
    box_cox(&x.log1p(), &lmbda)
}

fn box_cox(log_x: &Array, lmbda: &Array) -> Array {
    let zero = lmbda.eq(0.0);
    let safe = where_(&zero, full_like(lmbda, 1.0), lmbda);
    let power = &(&safe * log_x).expm1() / &safe;
    where_(&zero, log_x, &power)
}

/// The log of the multivariate gamma function of dimension `d`
/// (`jax.scipy.special.multigammaln(a, d)`).
#[track_caller]
pub fn multigammaln(a: &Array, d: usize) -> Array {
    let a = inexact(a);
    let dt = a.dtype();
    let df = d as f64;
    let constant = 0.25 * df * (df - 1.0);
    let constant =
        Array::full(&[], constant, dt) * Array::full(&[], std::f64::consts::PI, dt).log();
    let b = Array::arange(0.0, df, 1.0, dt) / 2.0;
    let shifted = a.expand_dims(-1) - b;
    &gammaln(&shifted).sum(-1, false) + &constant
}

/// The inverse of [`ndtr`] (`jax.scipy.special.ndtri`): Cephes's rational approximations in
/// three ranges, as JAX's; float32 or float64 only. `-inf` at 0, `inf` at 1.
#[track_caller]
pub fn ndtri(p: &Array) -> Array {
    let dtype = p.dtype();
    assert!(
        matches!(dtype, DType::F32 | DType::F64),
        "ndtri: x.dtype={} is not supported (float32 or float64), as in JAX",
        dtype.name()
    );
    const P0: [f64; 5] = [
        -59.96335010141079,
        98.00107541859997,
        -56.67628574690703,
        13.931260938727968,
        -1.2391658386738125,
    ];
    const Q0: [f64; 9] = [
        1.0,
        1.9544885833814176,
        4.676279128988815,
        86.36024213908905,
        -225.46268785411937,
        200.26021238006066,
        -82.03722561683334,
        15.90562251262117,
        -1.1833162112133,
    ];
    const P1: [f64; 9] = [
        4.0554489230596245,
        31.525109459989388,
        57.16281922464213,
        44.08050738932008,
        14.684956192885803,
        2.1866330685079025,
        -0.1402560791713545,
        -0.03504246268278482,
        -0.0008574567851546854,
    ];
    const Q1: [f64; 9] = [
        1.0,
        15.779988325646675,
        45.39076351288792,
        41.3172038254672,
        15.04253856929075,
        2.504649462083094,
        -0.14218292285478779,
        -0.03808064076915783,
        -0.0009332594808954574,
    ];
    const P2: [f64; 9] = [
        3.2377489177694603,
        6.915228890689842,
        3.9388102529247444,
        1.3330346081580755,
        0.20148538954917908,
        0.012371663481782003,
        0.00030158155350823543,
        2.6580697468673755e-06,
        6.239745391849833e-09,
    ];
    const Q2: [f64; 9] = [
        1.0,
        6.02427039364742,
        3.6798356385616087,
        1.3770209948908132,
        0.21623699359449663,
        0.013420400608854318,
        0.00032801446468212774,
        2.8924786474538068e-06,
        6.790194080099813e-09,
    ];
    let c = |v: f64| Array::full(&[], v, dtype);
    let maybe_complement = where_(p.gt(c(-(-2.0f64).exp_m1())), &(c(1.0) - p), p);
    let sanitized = where_(
        maybe_complement.eq(c(0.0)),
        full_like(p, 0.5),
        &maybe_complement,
    );
    let w = &sanitized - &c(0.5);
    let ww = &w * &w;
    let big_p = &w + &(&(&w * &ww) * &(&horner(&P0, &ww) / &horner(&Q0, &ww)));
    let big_p = &big_p * &(-&c((2.0 * std::f64::consts::PI).sqrt()));
    let z = (&c(-2.0) * &sanitized.log()).sqrt();
    let first = &z - &(&z.log() / &z);
    let inv_z = 1.0 / &z;
    let second_small = &(&horner(&P2, &inv_z) / &horner(&Q2, &inv_z)) / &z;
    let second_other = &(&horner(&P1, &inv_z) / &horner(&Q1, &inv_z)) / &z;
    let small_p = &first - &second_small;
    let otherwise = &first - &second_other;
    let x = where_(
        sanitized.gt(c((-2.0f64).exp())),
        &big_p,
        where_(z.ge(c(8.0)), &small_p, &otherwise),
    );
    let x = where_(p.gt(c(1.0 - (-2.0f64).exp())), &x, -&x);
    where_(
        p.eq(c(0.0)),
        f64::NEG_INFINITY,
        where_(p.eq(c(1.0)), f64::INFINITY, &x),
    )
}

/// `log(ndtr(x))`, accurate far into the lower tail (`jax.scipy.special.log_ndtr(x,
/// series_order)`): `ndtr` in the middle, `-ndtr(-x)` above, and the asymptotic series of
/// `series_order` terms (at most 30; JAX's default 3) below, with JAX's custom derivative.
#[track_caller]
pub fn log_ndtr(x: &Array, series_order: usize) -> Array {
    assert!(
        series_order <= 30,
        "log_ndtr: series_order must be <= 30, got {series_order}"
    );
    let (lower, upper) = match x.dtype() {
        DType::F64 => (-20.0, 8.0),
        DType::F32 => (-10.0, 5.0),
        other => panic!(
            "log_ndtr: x.dtype={} is not supported (float32 or float64), as in JAX",
            other.name()
        ),
    };
    let value = move |x: &Array| {
        let dt = x.dtype();
        let (lo, up) = (Array::full(&[], lower, dt), Array::full(&[], upper, dt));
        let above = x.gt(&up);
        let arg = where_(&above, -x, x.maximum(&lo));
        let res = ndtr(&arg);
        let tail = log_ndtr_lower(&x.minimum(&lo), series_order);
        where_(&above, -&res, where_(x.gt(&lo), res.log(), &tail))
    };
    custom_jvp(
        "log_ndtr",
        move |x: Array| value(&x),
        move |x: Array, dx: Array| {
            let ans = value(&x);
            let logpdf = &(&x.powi(2) * -0.5) - (2.0 * std::f64::consts::PI).sqrt().ln();
            let t = &dx * &(&logpdf - &ans).exp();
            (ans, t)
        },
    )
    .call(x.clone())
}

fn log_ndtr_lower(x: &Array, series_order: usize) -> Array {
    let dt = x.dtype();
    let x2 = x.powi(2);
    let log_scale = &(&(&x2 * Array::full(&[], -0.5, dt)) - &(-x).log())
        - &Array::full(&[], 0.5 * (2.0 * std::f64::consts::PI).ln(), dt);
    let series = if series_order == 0 {
        Array::full(&[], 1.0, dt)
    } else {
        let mut even = Array::zeros(x.shape(), dt);
        let mut odd = Array::zeros(x.shape(), dt);
        let mut x_2n = x2.clone();
        for n in 1..=series_order {
            let double_factorial: f64 = (1..2 * n).rev().step_by(2).map(|k| k as f64).product();
            let y = &Array::full(&[], double_factorial, dt) / &x_2n;
            if n % 2 == 1 {
                odd = &odd + &y;
            } else {
                even = &even + &y;
            }
            x_2n = &x_2n * &x2;
        }
        &(&Array::full(&[], 1.0, dt) + &even) - &odd
    };
    &log_scale + &series.log()
}

/// `erfcx` without JAX's dtype handling: the direct `exp(x²) erfc(x)` below the threshold of
/// overflow, the asymptotic series above.
fn erfcx_impl(x: &Array, nterms: usize) -> Array {
    const COEFFS: [f64; 9] = [
        7918.06640625,
        -1055.7421875,
        162.421875,
        -29.53125,
        6.5625,
        -1.875,
        0.75,
        -0.5,
        1.0,
    ];
    let max = if x.dtype() == DType::F64 {
        f64::MAX
    } else {
        f32::MAX as f64
    };
    let threshold = max.ln().sqrt();
    let large = x.gt(Array::full(&[], threshold, x.dtype()));
    let safe = where_(&large, full_like(x, 1.0), x);
    let direct = &(&safe * &safe).exp() * &lax::erfc(&safe);
    let t = &Array::full(&[], 1.0, x.dtype()) / &(x * x);
    let series = horner(&COEFFS[COEFFS.len() - nterms..], &t);
    let asymptotic = &series / &(x * Array::full(&[], std::f64::consts::PI.sqrt(), x.dtype()));
    where_(&large, &asymptotic, &direct)
}

/// The scaled complementary error function `exp(x²) erfc(x)` (`jax.scipy.special.erfcx`),
/// with JAX's derivative `2 x erfcx(x) - 2 / sqrt(pi)`; half-precision inputs compute in
/// float32, as JAX's. A complex `z` gives `wofz(iz)`, as JAX's.
#[track_caller]
pub fn erfcx(x: &Array) -> Array {
    let x = inexact(x);
    if x.dtype().is_complex() {
        // `erfcx(z) = w(iz)`, JAX's `_wofz` with its derivative.
        let iz = lax::complex(&-x.imag(), &x.real());
        return wofz(&iz);
    }
    let value = |x: &Array| match x.dtype() {
        DType::F64 => erfcx_impl(x, 9),
        DType::F32 => erfcx_impl(x, 5),
        other => erfcx_impl(&x.astype(DType::F32), 5).astype(other),
    };
    custom_jvp(
        "erfcx",
        move |x: Array| value(&x),
        move |x: Array, dx: Array| {
            let ans = value(&x);
            let slope = &(&(&x * 2.0) * &ans) - (2.0 / std::f64::consts::PI.sqrt());
            (ans, &dx * &slope)
        },
    )
    .call(x)
}

/// Dawson's integral `exp(-x²) ∫₀ˣ exp(t²) dt` (`jax.scipy.special.dawsn`): Cephes's rational
/// approximations in three ranges, with JAX's derivative `1 - 2 x dawsn(x)`.
#[track_caller]
pub fn dawsn(x: &Array) -> Array {
    let x = inexact(x);
    real_only("dawsn", &x);
    let value = |x: &Array| match x.dtype() {
        DType::F64 | DType::F32 => dawsn_impl(x),
        other => dawsn_impl(&x.astype(DType::F32)).astype(other),
    };
    custom_jvp(
        "dawsn",
        move |x: Array| value(&x),
        move |x: Array, dx: Array| {
            let ans = value(&x);
            let slope = 1.0 - &(&(&x * 2.0) * &ans);
            (ans, &dx * &slope)
        },
    )
    .call(x)
}

fn dawsn_impl(x: &Array) -> Array {
    const AN: [f64; 10] = [
        1.1368149897175597e-11,
        8.492622676674738e-10,
        1.9443420417555306e-08,
        9.531517412544844e-07,
        3.078283098749132e-06,
        0.00035251336852028877,
        -0.0008501498467244109,
        0.04226182230055466,
        -0.09174803717734524,
        1.0,
    ];
    const AD: [f64; 11] = [
        2.403720730667626e-11,
        1.488646813684934e-09,
        5.212652810105416e-08,
        1.2725847827318697e-06,
        2.324902498207895e-05,
        0.00032552474182605793,
        0.003488058146571626,
        0.027944853119882897,
        0.15887424196012057,
        0.5749186294893204,
        1.0,
    ];
    const BN: [f64; 11] = [
        0.5089551564179009,
        -0.24475441814269785,
        0.09415123353035344,
        -0.021871125514203903,
        0.003662076123295692,
        -0.0004232091144603888,
        3.5964130479389666e-05,
        -2.1464035171996896e-06,
        9.100107800763914e-08,
        -2.4027452082825098e-09,
        3.592333854409284e-11,
    ];
    const BD: [f64; 11] = [
        1.0,
        -0.6318398698733682,
        0.2367067882282487,
        -0.053180636700322324,
        0.008480417185862954,
        -0.0009479967684866654,
        7.810255929445524e-05,
        -4.558751532524426e-06,
        1.8910035811142186e-07,
        -4.913246913319206e-09,
        7.184664032357345e-11,
    ];
    const CN: [f64; 5] = [
        -0.5905928605347732,
        0.6292352427243688,
        -0.17285897538038814,
        0.016483704782518965,
        -0.0004868276130204627,
    ];
    const CD: [f64; 6] = [
        1.0,
        -2.698200571975449,
        1.7327079904594784,
        -0.3937085822819395,
        0.03442789240412334,
        -0.0009736552260409412,
    ];
    let dt = x.dtype();
    let c = |v: f64| Array::full(&[], v, dt);
    let sign = x.sign();
    let ax = x.abs();
    let ax2 = &ax * &ax;
    let t = &c(1.0) / &ax2;
    let r1 = ax.lt(c(3.25));
    let r2 = ax.ge(c(3.25)).bitwise_and(ax.lt(c(6.25)));
    let r3 = ax.ge(c(6.25));
    let ones = full_like(&ax, 1.0);
    let safe_ax_r1 = where_(&r1, &ax, &ones);
    let safe_ax2_r1 = &safe_ax_r1 * &safe_ax_r1;
    let val_r1 = &(&safe_ax_r1 * &horner(&AN, &safe_ax2_r1)) / &horner(&AD, &safe_ax2_r1);
    let tail = |mask: &Array, num: &[f64], den: &[f64]| {
        let safe_t = where_(mask, &t, &ones);
        let safe_ax = where_(mask, &ax, &ones);
        let ratio = &(&safe_t * &horner(num, &safe_t)) / &horner(den, &safe_t);
        &(&c(0.5) / &safe_ax) * &(&c(1.0) + &ratio)
    };
    let val_r2 = tail(&r2, &BN, &BD);
    let val_r3 = tail(&r3, &CN, &CD);
    let result = where_(&r1, &val_r1, where_(ax.lt(c(6.25)), &val_r2, &val_r3));
    &sign * &result
}

/// Spence's function (the dilogarithm) `∫₁ˣ log(t) / (1 - t) dt` for `x >= 0`
/// (`jax.scipy.special.spence`), Cephes's approximation as JAX's; NaN for negative `x`.
/// float32 or float64 only.
#[track_caller]
pub fn spence(x: &Array) -> Array {
    let dtype = x.dtype();
    assert!(
        matches!(dtype, DType::F32 | DType::F64),
        "spence: x.dtype={} is not supported (float32 or float64), as in JAX",
        dtype.name()
    );
    const A: [f64; 8] = [
        4.6512858607399003e-05,
        0.007315890452380947,
        0.13384763957830903,
        0.8796913117545303,
        2.7114985119655346,
        4.256971560081218,
        3.297713409852251,
        1.0,
    ];
    const B: [f64; 8] = [
        0.0006909904889125533,
        0.02540437639325444,
        0.2829748606025681,
        1.4117259775183106,
        3.6380053334513707,
        5.03278880143317,
        3.547713409852251,
        1.0,
    ];
    let pi2_6 = std::f64::consts::PI.powi(2) / 6.0;
    let original = x;
    // `_spence_calc`, on the elements the constant pieces do not take (JAX's `piecewise`
    // evaluates each piece on its own elements only, so the others' derivatives stay 0).
    let constant = x.lt(0.0).bitwise_or(x.eq(0.0)).bitwise_or(x.eq(1.0));
    let x_calc = where_(&constant, full_like(x, 0.5), x);
    let x = &x_calc;
    let above_2 = x.gt(2.0);
    let y_in = where_(&above_2, 1.0 / x, x);
    let above_1_5 = y_in.gt(1.5);
    let below_half = y_in.lt(0.5);
    let flip = above_2.bitwise_or(&above_1_5);
    let w = where_(
        &below_half,
        -&y_in,
        where_(&above_1_5, &(1.0 / &y_in) - 1.0, &y_in - 1.0),
    );
    let poly = &(&(-&w) * &horner(&A, &w)) / &horner(&B, &w);
    let one_minus: Array = 1.0 - &y_in;
    let small = &(pi2_6 - &(&y_in.log() * &one_minus.log())) - &poly;
    let y = where_(&below_half, &small, &poly);
    let flipped = &(&y_in.log().powi(2) * -0.5) - &y;
    let calc = where_(&flip, &flipped, &y);
    let x = original;
    let zero = Array::zeros(x.shape(), dtype);
    where_(
        x.eq(0.0),
        full_like(x, pi2_6),
        where_(x.eq(1.0), &zero, where_(x.lt(0.0), f64::NAN, &calc)),
    )
}

/// The first `n + 1` Bernoulli numbers `B₀ … Bₙ` (`jax.scipy.special.bernoulli(n)`), as
/// float64 (JAX's default float under x64, which jaxrs's promotion follows), from the zeta
/// series as JAX computes them.
#[track_caller]
pub fn bernoulli(n: usize) -> Array {
    let first = [1.0, -0.5, 1.0 / 6.0];
    if n < 3 {
        return Array::from_vec(first[..=n].to_vec(), &[n + 1]);
    }
    let dt = DType::F64;
    let pi2 = std::f64::consts::PI.powi(2);
    let m = Array::arange(4.0, (n + 1) as f64, 2.0, dt);
    let term = &(&(-(&m - 1.0)) * &m) / 4.0;
    let q1 = &(&term / pi2).cumprod(0) * (1.0 / pi2);
    let k = Array::arange(2.0, 50.0, 1.0, dt).expand_dims(1);
    let q2 = k.pow(-m.expand_dims(0)).sum(0, false);
    let even = &q1 * &(&q2 + 1.0);
    // B_0..B_2, then B_3 = 0, B_4, 0, B_6, ... interleaved.
    let mut values = vec![Array::from_vec(first.to_vec(), &[3])];
    let evens = even.shape()[0];
    let zeros = Array::zeros(&[evens], dt);
    let pairs = Array::stack(&[zeros, even], 1).reshape([2 * evens]);
    values.push(pairs);
    // B_n for odd n > 1 is 0.
    values.push(Array::zeros(&[1], dt));
    Array::concatenate(&values, 0).slice_axis(0, 0, n + 1)
}

/// The Pochhammer symbol `(z)ₘ = Γ(z + m) / Γ(z)` (`jax.scipy.special.poch`), 1 at `m = 0`,
/// with JAX's derivatives (`(ψ(z + m) - ψ(z)) (z)ₘ` in `z`, `ψ(z + m) (z)ₘ` in `m`).
#[track_caller]
pub fn poch(z: &Array, m: &Array) -> Array {
    let (z, m) = promote_args_inexact("poch", z, m);
    real_only("poch", &z);
    let value = |z: &Array, m: &Array| {
        let one = Array::full(&[], 1.0, z.dtype());
        where_(m.eq(0.0), &one, &gamma(&(z + m)) / &gamma(z))
    };
    custom_jvp(
        "poch",
        move |(z, m): (Array, Array)| value(&z, &m),
        move |(z, m): (Array, Array), (dz, dm): (Array, Array)| {
            let ans = value(&z, &m);
            let psi_zm = (&z + &m).digamma();
            let dz_rule = &(&(&psi_zm - &z.digamma()) * &ans) * &dz;
            let dm_rule = &(&psi_zm * &ans) * &dm;
            (ans, &dz_rule + &dm_rule)
        },
    )
    .call((z, m))
}

/// `softmax` over `axis` (`jax.scipy.special.softmax`; `None` is every axis, JAX's default).
#[track_caller]
pub fn softmax(x: &Array, axis: impl crate::Axes) -> Array {
    crate::nn::softmax(x, axis, None)
}

/// `log_softmax` over `axis` (`jax.scipy.special.log_softmax`; `None` is every axis).
#[track_caller]
pub fn log_softmax(x: &Array, axis: impl crate::Axes) -> Array {
    crate::nn::log_softmax(x, axis, None)
}

/// Bessel functions of the first kind of orders `0..=v` at `z` (`jax.scipy.special.bessel_jn(z,
/// v=v, n_iter=n_iter)`): Miller's backward recurrence over `n_iter` steps (JAX's default 50),
/// normalised by the Neumann series, as JAX computes them. The result is `[v + 1, *z.shape]`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::special;
///
/// let j = special::bessel_jn(&Array::from_vec(vec![1.0f64], &[1]), 1, 50).to_vec::<f64>();
/// assert!((j[0] - 0.7651976865579666).abs() < 1e-12 && (j[1] - 0.4400505857449335).abs() < 1e-12);
/// ```
#[track_caller]
pub fn bessel_jn(z: &Array, v: usize, n_iter: usize) -> Array {
    let z = inexact(z);
    real_only("bessel_jn", &z);
    let dt = z.dtype();
    let zeros = Array::zeros(z.shape(), dt);
    let init = (zeros.clone(), full_like(&z, 1e-16), zeros);
    let ks = Array::iota(dt, &[n_iter + 1], 0);
    let options = crate::ScanOptions {
        reverse: true,
        ..Default::default()
    };
    let ((_, _, bs), j_vals) = crate::scan_with(
        |(f0, f1, bs): (Array, Array, Array), k: Array| {
            let f = &(&(&(&(&k + 1.0) * 2.0) * &f1) / &z) - &f0;
            let even = crate::numpy::remainder(&k, 2.0).eq(0.0);
            let bs = where_(&even, &bs + &(&f * 2.0), &bs);
            ((f1, f.clone(), bs), f)
        },
        init,
        ks,
        options,
    );
    let f = j_vals.slice_axis(0, 0, 1);
    let first = j_vals.slice_axis(0, 0, v + 1);
    &first / &(&bs.expand_dims(0) - &f)
}
