//! `jax.scipy.stats`: distributions' functions, each written as JAX 0.10.2 writes it, so
//! values and derivatives are JAX's. JAX's keyword defaults (`loc=0`, `scale=1`) are written
//! out: `norm::logpdf(&x, 0.0, 1.0)`. `loc` and `scale` are anything an operation takes (an
//! array, or a Rust scalar, which is weakly typed as a Python scalar is), and all three
//! operands are promoted together as JAX's `promote_args_inexact` promotes them.
//!
//! ```
//! use jaxrs::prelude::*;
//! use jaxrs::scipy::stats::norm;
//!
//! let x = Array::from_vec(vec![0.0f32, 1.0], &[2]);
//! let logp = norm::logpdf(&x, 0.0, 1.0).to_vec::<f32>();
//! assert!((logp[0] + 0.918_938_5).abs() < 1e-6); // -log(2π)/2
//! assert_eq!(norm::cdf(&x, 1.0, 2.0).to_vec::<f32>()[1], 0.5);
//! ```
//!
//! Here: `norm`, `expon`, `laplace`, `logistic`, `cauchy`, `uniform`, `beta`, `gamma`,
//! `chi2`, `t`, `poisson`, `bernoulli`, `binom`, `dirichlet`, `multivariate_normal`, `pareto`,
//! `geom`, `gumbel_l`, `gumbel_r`, `wrapcauchy`, `nbinom`, `betabinom`, `gennorm`,
//! `truncnorm`, `vonmises` and `multinomial` (the functions JAX has for each), the
//! functions `sem`, `rankdata` and `mode`, and the kernel density estimator [`gaussian_kde`]
//! ([`GaussianKde`]); API.md lists the rest as not yet. Shape parameters come
//! before `loc` and `scale`, as in JAX's signatures (`gamma::logpdf(&x, a, loc, scale)`).

mod kde;

pub use kde::{gaussian_kde, gaussian_kde_with, BwMethod, GaussianKde, GaussianKdeOptions};

use crate::scipy::special::{betainc, betaln, entr, gammainc, gammaincc, gammaln, xlog1py, xlogy};
use crate::{lax, where_, Array, IntoArg};
use jaxrs_runtime::promote_args_inexact;

/// Any number of operands promoted to one inexact dtype and broadcast together, as JAX's
/// `promote_args_inexact(name, *args)`.
#[track_caller]
fn promote_all(op: &str, args: Vec<Array>) -> Vec<Array> {
    let mut args = args;
    for i in 1..args.len() {
        let (first, other) = promote_args_inexact(op, &args[0], &args[i]);
        args[0] = first;
        args[i] = other;
    }
    for i in 1..args.len() {
        args[i] = promote_args_inexact(op, &args[0], &args[i]).1;
    }
    args
}

/// The inexact dtype arrays of different shapes promote to (`promote_dtypes_inexact`).
fn common_inexact(arrays: &[&Array]) -> crate::DType {
    let types: Vec<(crate::DType, bool)> =
        arrays.iter().map(|a| (a.dtype(), a.is_weak())).collect();
    let (dtype, _) = jaxrs_runtime::result_type(&types);
    crate::numpy::inexact(&Array::zeros(&[], dtype)).dtype()
}

/// An operand as an array (a Rust scalar stays weakly typed).
fn arg<'a>(x: impl IntoArg<'a>) -> Array {
    x.into_arg().to_array().into_owned()
}

/// `x`, `loc` and `scale` promoted to one inexact dtype, as JAX's
/// `promote_args_inexact(name, x, loc, scale)`.
#[track_caller]
fn promote3<'a>(
    op: &str,
    x: impl IntoArg<'a>,
    loc: impl IntoArg<'a>,
    scale: impl IntoArg<'a>,
) -> (Array, Array, Array) {
    let (x, loc) = promote_args_inexact(op, x, loc);
    // Owned arrays are operands of any lifetime.
    let (x, scale) = promote_args_inexact(op, x, scale);
    let (loc, scale) = promote_args_inexact(op, loc, scale);
    (x, loc, scale)
}

/// `(x - loc) / scale`.
fn standardized(x: &Array, loc: &Array, scale: &Array) -> Array {
    &(x - loc) / scale
}

/// `value` where `q` is not a probability (NaN, below 0 or above 1), as JAX's `ppf`s guard.
fn nan_outside_unit(q: &Array, value: Array) -> Array {
    let outside = q.isnan().logical_or(q.lt(0.0)).logical_or(q.gt(1.0));
    where_(&outside, f64::NAN, &value)
}

/// The normal distribution (`jax.scipy.stats.norm`).
pub mod norm {
    use super::*;

    /// `log N(x; loc, scale²)`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (x, loc, scale) = promote3("norm.logpdf", x, loc, scale);
        let scale_sqrd = lax::square(&scale);
        let log_normalizer = (2.0 * std::f64::consts::PI * &scale_sqrd).log();
        let quadratic = &lax::square(&(&x - &loc)) / &scale_sqrd;
        &(&log_normalizer + &quadratic) / -2.0
    }

    /// `N(x; loc, scale²)`.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logpdf(x, loc, scale).exp()
    }

    /// `P(X ≤ x)`, through [`ndtr`](crate::scipy::special::ndtr).
    #[track_caller]
    pub fn cdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("norm.cdf", x, loc, scale);
        crate::scipy::special::ndtr(&standardized(&x, &loc, &scale))
    }

    /// `P(X > x)`, as the CDF of the mirrored distribution (exact in the upper tail).
    #[track_caller]
    pub fn sf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("norm.sf", x, loc, scale);
        cdf(&-&x, &-&loc, &scale)
    }

    /// `log P(X ≤ x)`, through [`log_ndtr`](crate::scipy::special::log_ndtr) (accurate far
    /// into the lower tail).
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (x, loc, scale) = promote3("norm.logcdf", x, loc, scale);
        crate::scipy::special::log_ndtr(&standardized(&x, &loc, &scale), 3)
    }

    /// `log P(X > x)`, as the log CDF of the mirrored distribution.
    #[track_caller]
    pub fn logsf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("norm.logsf", x, loc, scale);
        logcdf(&-&x, &-&loc, &scale)
    }

    /// The quantile function, `ndtri(q) * scale + loc`, as float64: JAX's `norm.ppf` ends
    /// with `jnp.asarray(.., float)`, the default float, float64 under x64 (whose promotion
    /// jaxrs follows).
    #[track_caller]
    pub fn ppf<'a>(q: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (q, loc, scale) = promote3("norm.ppf", q, loc, scale);
        (&(&crate::scipy::special::ndtri(&q) * &scale) + &loc).astype(crate::DType::F64)
    }

    /// The inverse survival function, `ppf(1 - q)`.
    #[track_caller]
    pub fn isf<'a>(q: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (q, loc, scale) = promote3("norm.isf", q, loc, scale);
        ppf(&(1.0 - &q), &loc, &scale)
    }
}

/// The exponential distribution (`jax.scipy.stats.expon`).
pub mod expon {
    use super::*;

    /// `log(exp(-(x - loc) / scale) / scale)` for `x ≥ loc`, `-inf` below.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (x, loc, scale) = promote3("expon.logpdf", x, loc, scale);
        let log_probs = -&(&standardized(&x, &loc, &scale) + &scale.log());
        where_(x.lt(&loc), f64::NEG_INFINITY, &log_probs)
    }

    /// The density.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logpdf(x, loc, scale).exp()
    }

    /// `1 - exp(-(x - loc) / scale)`, through `expm1`.
    #[track_caller]
    pub fn cdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("expon.cdf", x, loc, scale);
        let neg_scaled_x = &(&loc - &x) / &scale;
        where_(
            x.lt(&loc),
            Array::zeros_like(&neg_scaled_x),
            &-&lax::expm1(&neg_scaled_x),
        )
    }

    /// `log P(X ≤ x)`, as `log1p(-sf)`.
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        lax::log1p(&-&sf(x, loc, scale))
    }

    /// `log P(X > x)`: `-(x - loc) / scale`, 0 below `loc`.
    #[track_caller]
    pub fn logsf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("expon.sf", x, loc, scale);
        let neg_scaled_x = &(&loc - &x) / &scale;
        where_(x.lt(&loc), Array::zeros_like(&neg_scaled_x), &neg_scaled_x)
    }

    /// `P(X > x)`.
    #[track_caller]
    pub fn sf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logsf(x, loc, scale).exp()
    }

    /// The quantile `loc - scale · log(1 - q)`; NaN where `q` is not a probability.
    #[track_caller]
    pub fn ppf<'a>(q: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (q, loc, scale) = promote3("expon.ppf", q, loc, scale);
        let value = &loc - &(&scale * &lax::log1p(&-&q));
        nan_outside_unit(&q, value)
    }
}

/// The Laplace distribution (`jax.scipy.stats.laplace`).
pub mod laplace {
    use super::*;

    /// `-|x - loc| / scale - log(2 scale)`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (x, loc, scale) = promote3("laplace.logpdf", x, loc, scale);
        let linear_term = &(&x - &loc).abs() / &scale;
        -&(&linear_term + &(&scale * 2.0).log())
    }

    /// The density.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logpdf(x, loc, scale).exp()
    }

    /// `exp(d) / 2` for `d = (x - loc) / scale ≤ 0`, `1 - exp(-d) / 2` above.
    #[track_caller]
    pub fn cdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("laplace.cdf", x, loc, scale);
        let diff = standardized(&x, &loc, &scale);
        let below = 0.5 * &diff.exp();
        let above = 1.0 - &(0.5 * &(-&diff).exp());
        lax::select(&diff.le(0.0), &below, &above)
    }
}

/// The logistic distribution (`jax.scipy.stats.logistic`).
pub mod logistic {
    use super::*;
    use crate::scipy::special::{expit, logit};

    /// `-2 logaddexp(z/2, -z/2) - log(scale)` for `z = (x - loc) / scale`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (x, loc, scale) = promote3("logistic.logpdf", x, loc, scale);
        let half_z = &standardized(&x, &loc, &scale) / 2.0;
        &(-2.0 * &crate::numpy::logaddexp(&half_z, &-&half_z)) - &scale.log()
    }

    /// The density.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logpdf(x, loc, scale).exp()
    }

    /// `expit((x - loc) / scale)`.
    #[track_caller]
    pub fn cdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("logistic.cdf", x, loc, scale);
        expit(&standardized(&x, &loc, &scale))
    }

    /// `expit(-(x - loc) / scale)`.
    #[track_caller]
    pub fn sf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("logistic.sf", x, loc, scale);
        expit(&-&standardized(&x, &loc, &scale))
    }

    /// The quantile `logit(q) · scale + loc`.
    #[track_caller]
    pub fn ppf<'a>(q: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (q, loc, scale) = promote3("logistic.ppf", q, loc, scale);
        &(&logit(&q) * &scale) + &loc
    }

    /// The inverse survival function `-logit(q) · scale + loc`.
    #[track_caller]
    pub fn isf<'a>(q: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (q, loc, scale) = promote3("logistic.isf", q, loc, scale);
        &(&-&logit(&q) * &scale) + &loc
    }
}

/// The Cauchy distribution (`jax.scipy.stats.cauchy`).
pub mod cauchy {
    use super::*;
    use std::f64::consts::{FRAC_PI_2, PI};

    /// `-log(π scale) - log1p(z²)` for `z = (x - loc) / scale`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (x, loc, scale) = promote3("cauchy.logpdf", x, loc, scale);
        let z = standardized(&x, &loc, &scale);
        let normalize_term = (PI * &scale).log();
        -&(&normalize_term + &lax::log1p(&(&z * &z)))
    }

    /// The density.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logpdf(x, loc, scale).exp()
    }

    /// `1/2 + atan(z) / π`.
    #[track_caller]
    pub fn cdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("cauchy.cdf", x, loc, scale);
        let z = standardized(&x, &loc, &scale);
        0.5 + &((1.0 / PI) * &lax::atan(&z))
    }

    /// `log cdf`.
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        cdf(x, loc, scale).log()
    }

    /// `P(X > x)`, as the CDF of the mirrored distribution.
    #[track_caller]
    pub fn sf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("cauchy.sf", x, loc, scale);
        cdf(-&x, -&loc, &scale)
    }

    /// `log sf`.
    #[track_caller]
    pub fn logsf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("cauchy.logsf", x, loc, scale);
        logcdf(-&x, -&loc, &scale)
    }

    /// The inverse survival function `tan(π/2 - π q) · scale + loc`.
    #[track_caller]
    pub fn isf<'a>(q: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (q, loc, scale) = promote3("cauchy.isf", q, loc, scale);
        let unscaled = lax::tan(&(FRAC_PI_2 - &(PI * &q)));
        &(&unscaled * &scale) + &loc
    }

    /// The quantile `tan(π q - π/2) · scale + loc`.
    #[track_caller]
    pub fn ppf<'a>(q: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (q, loc, scale) = promote3("cauchy.ppf", q, loc, scale);
        let unscaled = lax::tan(&(&(PI * &q) - FRAC_PI_2));
        &(&unscaled * &scale) + &loc
    }
}

/// The uniform distribution on `[loc, loc + scale]` (`jax.scipy.stats.uniform`).
pub mod uniform {
    use super::*;

    /// `-log(scale)` inside the support, `-inf` outside.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (x, loc, scale) = promote3("uniform.logpdf", x, loc, scale);
        let log_probs = -&scale.log();
        let outside = x.gt(&(&loc + &scale)).logical_or(x.lt(&loc));
        where_(&outside, f64::NEG_INFINITY, &log_probs)
    }

    /// The density.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logpdf(x, loc, scale).exp()
    }

    /// 0 below the support, 1 above, `(x - loc) / scale` inside (as JAX's `jnp.select`).
    #[track_caller]
    pub fn cdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("uniform.cdf", x, loc, scale);
        let top = &loc + &scale;
        let (below, above) = (x.lt(&loc), x.gt(&top));
        let inside = x.ge(&loc).logical_and(x.le(&top));
        let zero = Array::zeros(&[], x.dtype());
        let one = Array::ones(&[], x.dtype());
        let scaled = standardized(&x, &loc, &scale);
        crate::numpy::select(&[&below, &above, &inside], &[&zero, &one, &scaled], 0.0)
    }

    /// The quantile `loc + scale · q`; NaN where `q` is not a probability.
    #[track_caller]
    pub fn ppf<'a>(q: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (q, loc, scale) = promote3("uniform.ppf", q, loc, scale);
        let value = &loc + &(&scale * &q);
        nan_outside_unit(&q, value)
    }
}

/// The beta distribution on `[loc, loc + scale]` (`jax.scipy.stats.beta`).
pub mod beta {
    use super::*;

    fn promoted<'a>(
        op: &str,
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> [Array; 5] {
        let v = promote_all(op, vec![arg(x), arg(a), arg(b), arg(loc), arg(scale)]);
        [0, 1, 2, 3, 4].map(|i| v[i].clone())
    }

    /// `log Beta(x; a, b)`: `-inf` outside the support, NaN for non-positive `a`, `b` or
    /// `scale`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, a, b, loc, scale] = promoted("beta.logpdf", x, a, b, loc, scale);
        let shape_term = -betaln(&a, &b);
        let y = standardized(&x, &loc, &scale);
        let log_linear = &xlogy(&(&a - 1.0), &y) + &xlog1py(&(&b - 1.0), &-&y);
        let log_probs = &(&shape_term + &log_linear) - &scale.log();
        let outside = x.gt(&(&loc + &scale)).logical_or(x.lt(&loc));
        let result = where_(&outside, f64::NEG_INFINITY, &log_probs);
        let bad = a.le(0.0).logical_or(b.le(0.0)).logical_or(scale.le(0.0));
        where_(&bad, f64::NAN, &result)
    }

    /// `Beta(x; a, b)`.
    #[track_caller]
    pub fn pdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        logpdf(x, a, b, loc, scale).exp()
    }

    /// `P(X ≤ x)`: the regularized incomplete beta function of the clamped `(x - loc) / scale`.
    #[track_caller]
    pub fn cdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, a, b, loc, scale] = promoted("beta.cdf", x, a, b, loc, scale);
        let y = unit_clamp(&standardized(&x, &loc, &scale));
        betainc(&a, &b, &y)
    }

    /// `log P(X ≤ x)`.
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        cdf(x, a, b, loc, scale).log()
    }

    /// `P(X > x)`, as `betainc(b, a, 1 - y)`.
    #[track_caller]
    pub fn sf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, a, b, loc, scale] = promoted("beta.sf", x, a, b, loc, scale);
        let y = unit_clamp(&standardized(&x, &loc, &scale));
        betainc(&b, &a, &(1.0 - &y))
    }

    /// `log P(X > x)`.
    #[track_caller]
    pub fn logsf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        sf(x, a, b, loc, scale).log()
    }
}

/// `lax.clamp(0, y, 1)`.
fn unit_clamp(y: &Array) -> Array {
    let zero = Array::zeros(&[], y.dtype());
    let one = Array::ones(&[], y.dtype());
    lax::clamp(&zero, y, &one)
}

/// `lax.clamp(0, y, inf)`.
fn nonnegative_clamp(y: &Array) -> Array {
    let zero = Array::zeros(&[], y.dtype());
    let inf = Array::full(&[], f64::INFINITY, y.dtype());
    lax::clamp(&zero, y, &inf)
}

/// The functions of a distribution with one shape parameter before `loc` and `scale`.
fn promote4<'a>(
    op: &str,
    x: impl IntoArg<'a>,
    a: impl IntoArg<'a>,
    loc: impl IntoArg<'a>,
    scale: impl IntoArg<'a>,
) -> [Array; 4] {
    let v = promote_all(op, vec![arg(x), arg(a), arg(loc), arg(scale)]);
    [0, 1, 2, 3].map(|i| v[i].clone())
}

/// The gamma distribution of shape `a` (`jax.scipy.stats.gamma`).
pub mod gamma {
    use super::*;

    /// `log Gamma(x; a)`, `-inf` below `loc`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, a, loc, scale] = promote4("gamma.logpdf", x, a, loc, scale);
        let ok = x.ge(&loc);
        let y = where_(&ok, standardized(&x, &loc, &scale), 1.0);
        let log_linear = &xlogy(&(&a - 1.0), &y) - &y;
        let shape_terms = &gammaln(&a) + &scale.log();
        where_(&ok, &(&log_linear - &shape_terms), f64::NEG_INFINITY)
    }

    /// `Gamma(x; a)`.
    #[track_caller]
    pub fn pdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        logpdf(x, a, loc, scale).exp()
    }

    /// `P(X ≤ x)`: the regularized lower incomplete gamma function.
    #[track_caller]
    pub fn cdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, a, loc, scale] = promote4("gamma.cdf", x, a, loc, scale);
        gammainc(&a, &nonnegative_clamp(&standardized(&x, &loc, &scale)))
    }

    /// `log P(X ≤ x)`.
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        cdf(x, a, loc, scale).log()
    }

    /// `P(X > x)`: the regularized upper incomplete gamma function, 1 below `loc`.
    #[track_caller]
    pub fn sf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, a, loc, scale] = promote4("gamma.sf", x, a, loc, scale);
        let y = standardized(&x, &loc, &scale);
        where_(y.lt(0.0), 1.0, gammaincc(&a, &y))
    }

    /// `log P(X > x)`.
    #[track_caller]
    pub fn logsf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        sf(x, a, loc, scale).log()
    }
}

/// The chi-squared distribution of `df` degrees of freedom (`jax.scipy.stats.chi2`).
pub mod chi2 {
    use super::*;

    /// `log χ²(x; df)`, `-inf` below `loc`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        df: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, df, loc, scale] = promote4("chi2.logpdf", x, df, loc, scale);
        let y = standardized(&x, &loc, &scale);
        let half_df = &df / 2.0;
        let kernel = &(&(&half_df - 1.0) * &y.log()) - &(&y / 2.0);
        let two = Array::full(&[], 2.0, x.dtype());
        let normalizer = -(&half_df.lgamma() + &(&(&two.log() * &df) / 2.0));
        let log_probs = &(&normalizer - &scale.log()) + &kernel;
        where_(x.lt(&loc), f64::NEG_INFINITY, &log_probs)
    }

    /// `χ²(x; df)`.
    #[track_caller]
    pub fn pdf<'a>(
        x: impl IntoArg<'a>,
        df: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        logpdf(x, df, loc, scale).exp()
    }

    /// `P(X ≤ x)`: `gammainc(df / 2, (x - loc) / (2 scale))`.
    #[track_caller]
    pub fn cdf<'a>(
        x: impl IntoArg<'a>,
        df: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, df, loc, scale] = promote4("chi2.cdf", x, df, loc, scale);
        let y = nonnegative_clamp(&(&(&x - &loc) / &(&scale * 2.0)));
        gammainc(&(&df / 2.0), &y)
    }

    /// `log P(X ≤ x)`.
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        df: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        cdf(x, df, loc, scale).log()
    }

    /// `P(X > x)`: `gammaincc(df / 2, (x - loc) / (2 scale))`.
    #[track_caller]
    pub fn sf<'a>(
        x: impl IntoArg<'a>,
        df: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, df, loc, scale] = promote4("chi2.sf", x, df, loc, scale);
        let y = nonnegative_clamp(&(&(&x - &loc) / &(&scale * 2.0)));
        gammaincc(&(&df / 2.0), &y)
    }

    /// `log P(X > x)`.
    #[track_caller]
    pub fn logsf<'a>(
        x: impl IntoArg<'a>,
        df: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        sf(x, df, loc, scale).log()
    }
}

/// Student's t distribution of `df` degrees of freedom (`jax.scipy.stats.t`).
pub mod t {
    use super::*;

    /// `log t(x; df)`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        df: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, df, loc, scale] = promote4("t.logpdf", x, df, loc, scale);
        let scaled = standardized(&x, &loc, &scale);
        let half_df = &df / 2.0;
        let half_df_plus = &half_df + 0.5;
        let constant = &(&scale * &scale) * std::f64::consts::PI;
        let tmp = &(&constant * &df).log() / 2.0;
        let normalize = &(&half_df.lgamma() + &tmp) - &half_df_plus.lgamma();
        let quadratic = &(&scaled * &scaled) / &df;
        -(&normalize + &(&half_df_plus * &quadratic.log1p()))
    }

    /// `t(x; df)`.
    #[track_caller]
    pub fn pdf<'a>(
        x: impl IntoArg<'a>,
        df: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        logpdf(x, df, loc, scale).exp()
    }
}

/// The Poisson distribution of rate `mu` (`jax.scipy.stats.poisson`).
pub mod poisson {
    use super::*;

    fn promoted<'a>(
        op: &str,
        k: impl IntoArg<'a>,
        mu: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
    ) -> [Array; 3] {
        let v = promote_all(op, vec![arg(k), arg(mu), arg(loc)]);
        [0, 1, 2].map(|i| v[i].clone())
    }

    /// `log P(K = k)`, `-inf` for `k` below `loc` or not an integer.
    #[track_caller]
    pub fn logpmf<'a>(k: impl IntoArg<'a>, mu: impl IntoArg<'a>, loc: impl IntoArg<'a>) -> Array {
        let [k, mu, loc] = promoted("poisson.logpmf", k, mu, loc);
        let x = &k - &loc;
        let log_probs = &(&xlogy(&x, &mu) - &gammaln(&(&x + 1.0))) - &mu;
        let invalid = x.lt(0.0).logical_or(crate::numpy::round(&k, 0).ne(&k));
        where_(&invalid, f64::NEG_INFINITY, &log_probs)
    }

    /// `P(K = k)`.
    #[track_caller]
    pub fn pmf<'a>(k: impl IntoArg<'a>, mu: impl IntoArg<'a>, loc: impl IntoArg<'a>) -> Array {
        logpmf(k, mu, loc).exp()
    }

    /// `P(K ≤ k)`: `gammaincc(floor(1 + k - loc), mu)`, 0 below `loc`.
    #[track_caller]
    pub fn cdf<'a>(k: impl IntoArg<'a>, mu: impl IntoArg<'a>, loc: impl IntoArg<'a>) -> Array {
        let [k, mu, loc] = promoted("poisson.logpmf", k, mu, loc);
        let x = &k - &loc;
        let shifted: Array = 1.0 + &x;
        let p = gammaincc(&shifted.floor(), &mu);
        let zero = Array::zeros(&[], k.dtype());
        where_(x.lt(0.0), &zero, &p)
    }

    /// The entropy of the distribution (`jax.scipy.stats.poisson.entropy(mu, loc)`): sums of
    /// `entr(pmf)` over 35 terms below rate 10 and 250 below 100, the asymptotic expansion
    /// `log(2 pi e mu) / 2 - 1 / (12 mu)` above, as JAX's.
    #[track_caller]
    pub fn entropy<'a>(mu: impl IntoArg<'a>, loc: impl IntoArg<'a>) -> Array {
        let (mu, loc) = promote_args_inexact("poisson.entropy", mu, loc);
        let shape = mu.shape().to_vec();
        let flat = mu.reshape([mu.size()]);
        let dt = flat.dtype();
        let series = |max_k: usize, upper: Array| {
            let k = Array::arange(0.0, max_k as f64, 1.0, dt).expand_dims(1);
            let probs = pmf(&k, &flat, 0.0);
            let mask = k.lt(upper.ceil().expand_dims(0));
            let masked = where_(&mask, &probs, 0.0);
            entr(&masked).sum(0, false)
        };
        let small = series(35, &flat + 20.0);
        let medium = series(250, &(&flat + &(&flat.sqrt() * 10.0)) + 20.0);
        let two_pi_e = 2.0 * std::f64::consts::PI * std::f64::consts::E;
        let large = &(&(&flat * two_pi_e).log() * 0.5) - &(1.0 / &(&flat * 12.0));
        let zero = Array::zeros(flat.shape(), dt);
        let result = where_(
            flat.eq(0.0),
            &zero,
            where_(
                flat.lt(10.0),
                &small,
                where_(flat.lt(100.0), &medium, &large),
            ),
        );
        result.reshape(shape).broadcast_to(loc.shape())
    }
}

/// The Bernoulli distribution of success probability `p` (`jax.scipy.stats.bernoulli`).
pub mod bernoulli {
    use super::*;

    /// `log P(K = k)`, `-inf` outside `{loc, loc + 1}`.
    #[track_caller]
    pub fn logpmf<'a>(k: impl IntoArg<'a>, p: impl IntoArg<'a>, loc: impl IntoArg<'a>) -> Array {
        let v = promote_all("bernoulli.logpmf", vec![arg(k), arg(p), arg(loc)]);
        let (k, p, loc) = (&v[0], &v[1], &v[2]);
        let x = k - loc;
        let log_probs = &xlogy(&x, p) + &xlog1py(&(1.0 - &x), &-p);
        where_(
            x.lt(0.0).logical_or(x.gt(1.0)),
            f64::NEG_INFINITY,
            &log_probs,
        )
    }

    /// `P(K = k)`.
    #[track_caller]
    pub fn pmf<'a>(k: impl IntoArg<'a>, p: impl IntoArg<'a>, loc: impl IntoArg<'a>) -> Array {
        logpmf(k, p, loc).exp()
    }

    /// `P(K ≤ k)`: 0 below 0, `1 - p` on `[0, 1)`, 1 above; NaN for NaN or `p` outside
    /// `[0, 1]`.
    #[track_caller]
    pub fn cdf<'a>(k: impl IntoArg<'a>, p: impl IntoArg<'a>) -> Array {
        let (k, p) = promote_args_inexact("bernoulli.cdf", k, p);
        let invalid = k
            .isnan()
            .logical_or(p.isnan())
            .logical_or(p.lt(0.0))
            .logical_or(p.gt(1.0));
        let zero = Array::zeros(&[], k.dtype());
        let between = k.ge(0.0).logical_and(k.lt(1.0));
        where_(
            &invalid,
            f64::NAN,
            where_(
                k.lt(0.0),
                &zero,
                where_(&between, &(1.0 - &p), where_(k.ge(1.0), 1.0, &zero)),
            ),
        )
    }

    /// The quantile function: 0 for `q <= 1 - p`, else 1; NaN outside the ranges.
    #[track_caller]
    pub fn ppf<'a>(q: impl IntoArg<'a>, p: impl IntoArg<'a>) -> Array {
        let (q, p) = promote_args_inexact("bernoulli.ppf", q, p);
        let invalid = q
            .isnan()
            .logical_or(p.isnan())
            .logical_or(p.lt(0.0))
            .logical_or(p.gt(1.0))
            .logical_or(q.lt(0.0))
            .logical_or(q.gt(1.0));
        let zero = Array::zeros(&[], q.dtype());
        where_(&invalid, f64::NAN, where_(q.le(&(1.0 - &p)), &zero, 1.0))
    }
}

/// The binomial distribution of `n` trials of probability `p` (`jax.scipy.stats.binom`).
pub mod binom {
    use super::*;

    /// `log P(K = k)`, `-inf` outside `[loc, loc + n]`.
    #[track_caller]
    pub fn logpmf<'a>(
        k: impl IntoArg<'a>,
        n: impl IntoArg<'a>,
        p: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
    ) -> Array {
        let [k, n, p, loc] = promote4("binom.logpmf", k, n, p, loc);
        let y = &k - &loc;
        let comb = &gammaln(&(&n + 1.0)) - &(&gammaln(&(&y + 1.0)) + &gammaln(&(&(&n - &y) + 1.0)));
        let log_linear = &xlogy(&y, &p) + &xlog1py(&(&n - &y), &-&p);
        let log_probs = &comb + &log_linear;
        let certain = y
            .eq(0.0)
            .logical_and(n.eq(0.0))
            .logical_or(log_linear.eq(0.0));
        let log_probs = where_(&certain, 0.0, &log_probs);
        let inside = k.ge(&loc).logical_and(k.lt(&(&(&loc + &n) + 1.0)));
        where_(&inside, &log_probs, f64::NEG_INFINITY)
    }

    /// `P(K = k)`.
    #[track_caller]
    pub fn pmf<'a>(
        k: impl IntoArg<'a>,
        n: impl IntoArg<'a>,
        p: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
    ) -> Array {
        logpmf(k, n, p, loc).exp()
    }
}

/// The Dirichlet distribution (`jax.scipy.stats.dirichlet`).
pub mod dirichlet {
    use super::*;

    /// `log Dir(x; alpha)` for `x` of `K` (or `K - 1`, the last implied) entries along axis
    /// 0 and a 1-D `alpha` of `K`; `-inf` off the simplex.
    #[track_caller]
    pub fn logpdf(x: &Array, alpha: &Array) -> Array {
        let dt = common_inexact(&[x, alpha]);
        let (x, alpha) = (x.astype(dt), alpha.astype(dt));
        assert!(
            alpha.rank() == 1,
            "dirichlet.logpdf: alpha must be one-dimensional; got alpha.shape={:?}",
            alpha.shape()
        );
        let k = alpha.shape()[0];
        assert!(
            x.rank() >= 1 && (x.shape()[0] == k || x.shape()[0] + 1 == k),
            "dirichlet.logpdf: x must have either the same number of entries as alpha or one \
             entry fewer; got x.shape={:?}, alpha.shape={:?}",
            x.shape(),
            alpha.shape()
        );
        let x = if x.shape()[0] == k {
            x
        } else {
            let rest = 1.0 - &x.sum(0, true);
            Array::concatenate(&[x, rest], 0)
        };
        let normalize = &gammaln(&alpha).sum(None, false) - &gammaln(&alpha.sum(None, false));
        let mut alpha_b = alpha.clone();
        for _ in 1..x.rank() {
            alpha_b = alpha_b.expand_dims(-1);
        }
        let log_probs = &xlogy(&(&alpha_b - 1.0), &x).sum(0, false) - &normalize;
        let simplex = x
            .gt(0.0)
            .reduce_and(0)
            .logical_and((&x.sum(0, false) - 1.0).abs().lt(1e-6));
        where_(&simplex, &log_probs, f64::NEG_INFINITY)
    }

    /// `Dir(x; alpha)`.
    #[track_caller]
    pub fn pdf(x: &Array, alpha: &Array) -> Array {
        logpdf(x, alpha).exp()
    }
}

/// The multivariate normal distribution (`jax.scipy.stats.multivariate_normal`).
pub mod multivariate_normal {
    use super::*;
    use crate::lax::linalg::{cholesky, triangular_solve, TriangularSolveOptions};

    /// `log N(x; mean, cov)`: through the Cholesky factor of a `[n, n]` covariance (a scalar
    /// `cov` is a variance shared by every coordinate; a scalar `mean` makes a univariate
    /// normal), batched over the leading axes of `x` and `mean`. A batch of covariances is not
    /// supported yet.
    #[track_caller]
    pub fn logpdf(x: &Array, mean: &Array, cov: &Array) -> Array {
        let dt = common_inexact(&[x, mean, cov]);
        let (x, mean, cov) = (x.astype(dt), mean.astype(dt), cov.astype(dt));
        let log_2pi = (2.0 * std::f64::consts::PI).ln();
        if mean.rank() == 0 {
            return &(&(&(&x - &mean).powi(2) * -0.5) / &cov) - &(&(log_2pi + &cov.log()) * 0.5);
        }
        let n = mean.shape()[mean.rank() - 1];
        if cov.rank() == 0 {
            let y = &x - &mean;
            let sq = (&y * &y).sum(-1, false);
            return &(&(&sq * -0.5) / &cov) - &(&(log_2pi + &cov.log()) * (n as f64 / 2.0));
        }
        assert!(
            cov.rank() == 2 && cov.shape() == [n, n],
            "multivariate_normal.logpdf got incompatible shapes: mean {:?}, cov {:?} (a batch of \
             covariances is not supported yet)",
            mean.shape(),
            cov.shape()
        );
        let l = cholesky(&cov, true);
        let centered = &x - &mean;
        let batch: Vec<usize> = centered.shape()[..centered.rank() - 1].to_vec();
        let rows = centered.reshape([centered.size() / n.max(1), n]);
        let opts = TriangularSolveOptions {
            left_side: false,
            lower: true,
            transpose_a: true,
            conjugate_a: false,
            unit_diagonal: false,
        };
        let y = triangular_solve(&l, &rows, opts);
        let sq = (&y * &y).sum(-1, false).reshape(batch);
        let log_det = crate::numpy::diagonal(&l, 0, -2, -1).log().sum(-1, false);
        &(&(&sq * -0.5) - (n as f64 / 2.0 * log_2pi)) - &log_det
    }

    /// `N(x; mean, cov)`.
    #[track_caller]
    pub fn pdf(x: &Array, mean: &Array, cov: &Array) -> Array {
        logpdf(x, mean, cov).exp()
    }
}

/// The Pareto distribution of shape `b` (`jax.scipy.stats.pareto`), supported on
/// `x >= loc + scale`.
pub mod pareto {
    use super::*;

    /// `log Pareto(x; b)`, `-inf` below the support.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, b, loc, scale] = promote4("pareto.logpdf", x, b, loc, scale);
        let scaled = standardized(&x, &loc, &scale);
        let normalize = (&scale / &b).log();
        let log_probs = -(&normalize + &(&(&b + 1.0) * &scaled.log()));
        where_(x.lt(&(&loc + &scale)), f64::NEG_INFINITY, &log_probs)
    }

    /// `Pareto(x; b)`.
    #[track_caller]
    pub fn pdf<'a>(
        x: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        logpdf(x, b, loc, scale).exp()
    }

    /// `P(X ≤ x) = 1 - y^(-b)`, 0 below the support.
    #[track_caller]
    pub fn cdf<'a>(
        x: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, b, loc, scale] = promote4("pareto.cdf", x, b, loc, scale);
        let scaled = standardized(&x, &loc, &scale);
        let value = 1.0 - &scaled.pow(-&b);
        let zero = Array::zeros(&[], x.dtype());
        where_(x.lt(&(&loc + &scale)), &zero, &value)
    }

    /// `log P(X ≤ x)`, through `log1p`.
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, b, loc, scale] = promote4("pareto.logcdf", x, b, loc, scale);
        let scaled = standardized(&x, &loc, &scale);
        let value = (-scaled.pow(-&b)).log1p();
        where_(x.lt(&(&loc + &scale)), f64::NEG_INFINITY, &value)
    }

    /// `log P(X > x) = -b log y`, 0 below the support.
    #[track_caller]
    pub fn logsf<'a>(
        x: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, b, loc, scale] = promote4("pareto.logsf", x, b, loc, scale);
        let scaled = standardized(&x, &loc, &scale);
        let value = -(&b * &scaled.log());
        let zero = Array::zeros(&[], x.dtype());
        where_(x.lt(&(&loc + &scale)), &zero, &value)
    }

    /// `P(X > x)`.
    #[track_caller]
    pub fn sf<'a>(
        x: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        logsf(x, b, loc, scale).exp()
    }

    /// The quantile function `loc + scale (1 - q)^(-1/b)`, NaN outside `[0, 1]`.
    #[track_caller]
    pub fn ppf<'a>(
        q: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [q, b, loc, scale] = promote4("pareto.ppf", q, b, loc, scale);
        let inv_b: Array = 1.0 / &b;
        let exponent = -inv_b;
        let complement: Array = 1.0 - &q;
        let value = &loc + &(&scale * &complement.pow(&exponent));
        nan_outside_unit(&q, value)
    }
}

/// The geometric distribution of success probability `p` on `1, 2, ...`
/// (`jax.scipy.stats.geom`).
pub mod geom {
    use super::*;

    /// `log P(K = k) = (k - 1) log(1 - p) + log p`, `-inf` for `k - loc <= 0`.
    #[track_caller]
    pub fn logpmf<'a>(k: impl IntoArg<'a>, p: impl IntoArg<'a>, loc: impl IntoArg<'a>) -> Array {
        let v = promote_all("geom.logpmf", vec![arg(k), arg(p), arg(loc)]);
        let (k, p, loc) = (&v[0], &v[1], &v[2]);
        let x = k - loc;
        let log_probs = &xlog1py(&(&x - 1.0), &-p) + &p.log();
        where_(x.le(0.0), f64::NEG_INFINITY, &log_probs)
    }

    /// `P(K = k)`.
    #[track_caller]
    pub fn pmf<'a>(k: impl IntoArg<'a>, p: impl IntoArg<'a>, loc: impl IntoArg<'a>) -> Array {
        logpmf(k, p, loc).exp()
    }
}

/// `(x, loc, scale)` promoted, `z = (x - loc) / scale`, and whether `scale > 0`: the start of
/// every Gumbel function.
#[track_caller]
fn gumbel_z<'a>(
    op: &str,
    x: impl IntoArg<'a>,
    loc: impl IntoArg<'a>,
    scale: impl IntoArg<'a>,
) -> (Array, Array, Array, Array) {
    let (x, loc, scale) = promote3(op, x, loc, scale);
    let z = standardized(&x, &loc, &scale);
    let ok = scale.gt(0.0);
    (x, scale, z, ok)
}

/// NaN where `ok` is false, as JAX's distributions answer a non-positive scale.
fn nan_unless(ok: &Array, value: &Array) -> Array {
    where_(ok, value, f64::NAN)
}

/// The left-skewed Gumbel distribution (`jax.scipy.stats.gumbel_l`), the law of `-X` for a
/// Gumbel `X`. Both Gumbel modules differentiate `logpdf` in `scale` and `ppf` in `p`, where
/// JAX 0.10.2 raises (its `xlogy(-1, ·)` has an integer `-1`, whose float0 tangent its rule
/// multiplies); the values are JAX's.
pub mod gumbel_l {
    use super::*;

    /// `log f(x) = -log scale + z - exp(z)`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (_, scale, z, ok) = gumbel_z("gumbel_l.logpdf", x, loc, scale);
        nan_unless(&ok, &(&-scale.log() + &(&z - &z.exp())))
    }

    /// `f(x)`.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logpdf(x, loc, scale).exp()
    }

    /// `log P(X ≤ x) = log(1 - exp(-exp(z)))`.
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (_, _, z, ok) = gumbel_z("gumbel_l.logcdf", x, loc, scale);
        nan_unless(&ok, &(-(-z.exp()).expm1()).log())
    }

    /// `P(X ≤ x)`.
    #[track_caller]
    pub fn cdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logcdf(x, loc, scale).exp()
    }

    /// `log P(X > x) = -exp(z)`.
    #[track_caller]
    pub fn logsf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (_, _, z, ok) = gumbel_z("gumbel_l.logsf", x, loc, scale);
        nan_unless(&ok, &-z.exp())
    }

    /// `P(X > x)`.
    #[track_caller]
    pub fn sf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logsf(x, loc, scale).exp()
    }

    /// The quantile `loc + scale log(-log(1 - p))`, NaN outside `0 < p < 1`.
    #[track_caller]
    pub fn ppf<'a>(p: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (p, loc, scale) = promote3("gumbel_l.ppf", p, loc, scale);
        let ok = p.gt(0.0).bitwise_and(p.lt(1.0));
        let t = &scale * &(-(-&p).log1p()).log();
        nan_unless(&ok, &(&loc + &t))
    }
}

/// The right-skewed Gumbel distribution (`jax.scipy.stats.gumbel_r`), the extreme-value law.
pub mod gumbel_r {
    use super::*;

    /// `log f(x) = -log scale - (z + exp(-z))`.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (_, scale, z, ok) = gumbel_z("gumbel_r.logpdf", x, loc, scale);
        nan_unless(&ok, &(&-scale.log() + &-(&z + &(-&z).exp())))
    }

    /// `f(x)`.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logpdf(x, loc, scale).exp()
    }

    /// `log P(X ≤ x) = -exp(-z)`.
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let (_, _, z, ok) = gumbel_z("gumbel_r.logcdf", x, loc, scale);
        nan_unless(&ok, &-(-&z).exp())
    }

    /// `P(X ≤ x)`.
    #[track_caller]
    pub fn cdf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        logcdf(x, loc, scale).exp()
    }

    /// `P(X > x) = 1 - exp(-exp(-z))`.
    #[track_caller]
    pub fn sf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("gumbel_r.sf", x, loc, scale);
        let neg_z = &(&loc - &x) / &scale;
        nan_unless(&scale.gt(0.0), &(1.0 - &(-neg_z.exp()).exp()))
    }

    /// `log P(X > x) = log1mexp(exp(-z))`.
    #[track_caller]
    pub fn logsf<'a>(x: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (x, loc, scale) = promote3("gumbel_r.logsf", x, loc, scale);
        let neg_z = &(&loc - &x) / &scale;
        nan_unless(&scale.gt(0.0), &crate::nn::log1mexp(&neg_z.exp()))
    }

    /// The quantile `loc - scale log(-log p)`, NaN outside `0 < p < 1`.
    #[track_caller]
    pub fn ppf<'a>(p: impl IntoArg<'a>, loc: impl IntoArg<'a>, scale: impl IntoArg<'a>) -> Array {
        let (p, loc, scale) = promote3("gumbel_r.ppf", p, loc, scale);
        let ok = p.gt(0.0).bitwise_and(p.lt(1.0));
        let t = &scale * &(-p.log()).log();
        nan_unless(&ok, &(&loc - &t))
    }
}

/// The wrapped Cauchy distribution on `[0, 2π]` (`jax.scipy.stats.wrapcauchy`).
pub mod wrapcauchy {
    use super::*;

    /// `log((1 - c²) / (2π (1 + c² - 2c cos x)))`; `-inf` outside `[0, 2π]`, NaN unless
    /// `0 < c < 1`.
    #[track_caller]
    pub fn logpdf<'a>(x: impl IntoArg<'a>, c: impl IntoArg<'a>) -> Array {
        let (x, c) = promote_args_inexact("wrapcauchy.logpdf", x, c);
        let two_pi = 2.0 * std::f64::consts::PI;
        let cc = &c * &c;
        let value = &(&(1.0f64 - &cc).log() - two_pi.ln())
            - &(&(1.0f64 + &cc) - &(&(&c * 2.0) * &x.cos())).log();
        let inside = x.ge(0.0).bitwise_and(x.le(two_pi));
        let value = where_(&inside, &value, f64::NEG_INFINITY);
        nan_unless(&c.gt(0.0).bitwise_and(c.lt(1.0)), &value)
    }

    /// The density.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, c: impl IntoArg<'a>) -> Array {
        logpdf(x, c).exp()
    }
}

/// The negative binomial distribution of `n` successes with probability `p`
/// (`jax.scipy.stats.nbinom`).
pub mod nbinom {
    use super::*;

    /// `log P(K = k)`, `-inf` below `loc`.
    #[track_caller]
    pub fn logpmf<'a>(
        k: impl IntoArg<'a>,
        n: impl IntoArg<'a>,
        p: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
    ) -> Array {
        let [k, n, p, loc] = promote4("nbinom.logpmf", k, n, p, loc);
        let y = &k - &loc;
        let comb = &(&gammaln(&(&y + &n)) - &gammaln(&n)) - &gammaln(&(&y + 1.0));
        let linear = &xlogy(&n, &p) + &xlogy(&y, &(1.0 - &p));
        where_(k.lt(&loc), f64::NEG_INFINITY, &(&comb + &linear))
    }

    /// `P(K = k)`.
    #[track_caller]
    pub fn pmf<'a>(
        k: impl IntoArg<'a>,
        n: impl IntoArg<'a>,
        p: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
    ) -> Array {
        logpmf(k, n, p, loc).exp()
    }
}

/// The beta-binomial distribution (`jax.scipy.stats.betabinom`).
pub mod betabinom {
    use super::*;

    /// `log P(K = k)` for `n` trials with a Beta(`a`, `b`) success probability; `-inf` off the
    /// support, NaN for `n < 0`, `a <= 0` or `b <= 0`.
    #[track_caller]
    pub fn logpmf<'a>(
        k: impl IntoArg<'a>,
        n: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
    ) -> Array {
        let v = promote_all(
            "betabinom.logpmf",
            vec![arg(k), arg(n), arg(a), arg(b), arg(loc)],
        );
        let (k, n, a, b, loc) = (&v[0], &v[1], &v[2], &v[3], &v[4]);
        let y = &k.floor() - loc;
        let combiln = -(&n.log1p() + &betaln(&(&(n - &y) + 1.0), &(&y + 1.0)));
        let beta_lns = &betaln(&(&y + a), &(&(n - &y) + b)) - &betaln(a, b);
        let log_probs = &combiln + &beta_lns;
        let log_probs = where_(y.eq(0.0).bitwise_and(n.eq(0.0)), 0.0, &log_probs);
        let off = y.lt(&-loc).logical_or(y.gt(n)).logical_or((&y + a).le(0.0));
        let log_probs = where_(&off, f64::NEG_INFINITY, &log_probs);
        let bad = n.lt(0.0).logical_or(a.le(0.0)).logical_or(b.le(0.0));
        where_(&bad, f64::NAN, &log_probs)
    }

    /// `P(K = k)`.
    #[track_caller]
    pub fn pmf<'a>(
        k: impl IntoArg<'a>,
        n: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
    ) -> Array {
        logpmf(k, n, a, b, loc).exp()
    }
}

/// The generalized normal distribution of shape `beta` (`jax.scipy.stats.gennorm`).
pub mod gennorm {
    use super::*;

    /// `log(beta / 2) - lgamma(1 / beta) - |x|^beta`.
    #[track_caller]
    pub fn logpdf<'a>(x: impl IntoArg<'a>, beta: impl IntoArg<'a>) -> Array {
        let (x, beta) = promote_args_inexact("gennorm.logpdf", x, beta);
        &(&(&beta * 0.5).log() - &lax::lgamma(&(1.0 / &beta))) - &x.abs().pow(&beta)
    }

    /// The density.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, beta: impl IntoArg<'a>) -> Array {
        logpdf(x, beta).exp()
    }

    /// `P(X ≤ x) = (1 + sign(x) P(1/beta, |x|^beta)) / 2`.
    #[track_caller]
    pub fn cdf<'a>(x: impl IntoArg<'a>, beta: impl IntoArg<'a>) -> Array {
        let (x, beta) = promote_args_inexact("gennorm.cdf", x, beta);
        let p = lax::igamma(&(1.0 / &beta), &x.abs().pow(&beta));
        &(1.0 + &(&x.sign() * &p)) * 0.5
    }
}

/// The normal distribution truncated to `[a, b]` in standard units, `[loc + a·scale, loc +
/// b·scale]` (`jax.scipy.stats.truncnorm`). The normalising mass is computed in log space
/// as JAX computes it: in the left tail, mirrored into it from the right, and through
/// `log1p` in the middle, so that extreme bounds (`a = 30`, `b = -40`) stay finite where a
/// plain difference of CDFs would cancel to zero. NaN where `a >= b`.
pub mod truncnorm {
    use super::*;
    use crate::scipy::special::{log_ndtr, logsumexp, ndtr, LogsumexpOptions};

    /// `x`, `a`, `b`, `loc` and `scale` promoted to one inexact dtype and broadcast.
    #[track_caller]
    fn promote5<'a>(
        op: &str,
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> [Array; 5] {
        let v = promote_all(op, vec![arg(x), arg(a), arg(loc), arg(scale), arg(b)]);
        [
            v[0].clone(),
            v[1].clone(),
            v[4].clone(),
            v[2].clone(),
            v[3].clone(),
        ]
    }

    /// `log(exp(x) - exp(y))`, as JAX's `_log_diff`: a signed `logsumexp` of the pair.
    fn log_diff(x: &Array, y: &Array) -> Array {
        let pair = Array::stack(&[x.clone(), y.clone()], 0);
        let signs = Array::stack(
            &[
                Array::ones(x.shape(), x.dtype()),
                Array::full(y.shape(), -1.0, y.dtype()),
            ],
            0,
        );
        logsumexp(
            &pair,
            0,
            LogsumexpOptions {
                b: Some(&signs),
                ..Default::default()
            },
        )
    }

    /// `log(Φ(b) - Φ(a))`, JAX's `_log_gauss_mass`: an interval in the right tail is mirrored
    /// into the left one (where `log_ndtr` is accurate), and one straddling 0 is
    /// `log1p(-Φ(a) - Φ(-b))`.
    fn log_gauss_mass(a: &Array, b: &Array) -> Array {
        let case_left = b.le(0.0);
        let case_right = a.gt(0.0);
        let case_central = case_left.logical_or(&case_right).logical_not();
        let a_tail = where_(&case_right, &-b, a);
        let b_tail = where_(&case_right, &-a, b);
        let mass_tail = log_diff(&log_ndtr(&b_tail, 3), &log_ndtr(&a_tail, 3));
        let mass_central = lax::log1p(&(&-&ndtr(a) - &ndtr(&-b)));
        where_(&case_central, &mass_central, &mass_tail)
    }

    /// `log f(x)`: the normal log density less the log mass of `[a, b]`; `-inf` outside it.
    #[track_caller]
    pub fn logpdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, a, b, loc, scale] = promote5("truncnorm.logpdf", x, a, b, loc, scale);
        let val = &norm::logpdf(&x, &loc, &scale) - &log_gauss_mass(&a, &b);
        let x_scaled = standardized(&x, &loc, &scale);
        let val = where_(
            x_scaled.lt(&a).logical_or(x_scaled.gt(&b)),
            f64::NEG_INFINITY,
            &val,
        );
        where_(a.ge(&b), f64::NAN, &val)
    }

    /// The density.
    #[track_caller]
    pub fn pdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        logpdf(x, a, b, loc, scale).exp()
    }

    /// `log P(X ≤ x)`: `log mass[a, x] - log mass[a, b]`, or `log1p(-sf)` once the CDF is
    /// above `e^-0.1` (where the difference would cancel); 0 above `b`, `-inf` below `a`.
    #[track_caller]
    pub fn logcdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, a, b, loc, scale] = promote5("truncnorm.logcdf", x, a, b, loc, scale);
        let x = standardized(&x, &loc, &scale);
        let mass_ab = log_gauss_mass(&a, &b);
        let logcdf = &log_gauss_mass(&a, &x) - &mass_ab;
        let logsf = &log_gauss_mass(&x, &b) - &mass_ab;
        let near_one = lax::log1p(&-&logsf.exp());
        let zero = Array::zeros_like(&x);
        let neg_inf = Array::full(x.shape(), f64::NEG_INFINITY, x.dtype());
        let value = crate::numpy::select(
            &[&x.ge(&b), &x.le(&a), &logcdf.gt(-0.1), &x.gt(&a)],
            &[&zero, &neg_inf, &near_one, &logcdf],
            0.0,
        );
        where_(a.ge(&b), f64::NAN, &value)
    }

    /// `P(X ≤ x)`.
    #[track_caller]
    pub fn cdf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        logcdf(x, a, b, loc, scale).exp()
    }

    /// `log P(X > x)`, as the log CDF of the mirrored distribution.
    #[track_caller]
    pub fn logsf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        let [x, a, b, loc, scale] = promote5("truncnorm.logsf", x, a, b, loc, scale);
        logcdf(&-&x, &-&b, &-&a, &-&loc, &scale)
    }

    /// `P(X > x)`.
    #[track_caller]
    pub fn sf<'a>(
        x: impl IntoArg<'a>,
        a: impl IntoArg<'a>,
        b: impl IntoArg<'a>,
        loc: impl IntoArg<'a>,
        scale: impl IntoArg<'a>,
    ) -> Array {
        logsf(x, a, b, loc, scale).exp()
    }
}

/// The von Mises distribution of concentration `kappa` on the circle
/// (`jax.scipy.stats.vonmises`), normalised over `[-π, π]`.
pub mod vonmises {
    use super::*;

    /// `kappa (cos x - 1) - log(2π i0e(kappa))`, the log of `e^(kappa cos x) / (2π I0(kappa))`
    /// with the exponential scaling taken out of the Bessel function so that a large
    /// `kappa` does not overflow; NaN unless `kappa > 0`.
    #[track_caller]
    pub fn logpdf<'a>(x: impl IntoArg<'a>, kappa: impl IntoArg<'a>) -> Array {
        let (x, kappa) = promote_args_inexact("vonmises.logpdf", x, kappa);
        let value = &(&kappa * &(&x.cos() - 1.0))
            - &(2.0 * std::f64::consts::PI * &lax::bessel_i0e(&kappa)).log();
        where_(kappa.gt(0.0), &value, f64::NAN)
    }

    /// The density.
    #[track_caller]
    pub fn pdf<'a>(x: impl IntoArg<'a>, kappa: impl IntoArg<'a>) -> Array {
        logpdf(x, kappa).exp()
    }
}

/// The multinomial distribution of `n` draws over the categories of the last axis of `p`
/// (`jax.scipy.stats.multinomial`).
pub mod multinomial {
    use super::*;

    /// `log(n! Π p_i^x_i / x_i!)` over the last axis, `-inf` unless the counts add up to
    /// `n`. The counts `x` and `n` must be integers; they compute in `p`'s dtype. As in JAX,
    /// the check adds up every element of `x` (not each row), so for a batch of count vectors
    /// only a batch that sums to `n` in total is in the support: `vmap` over the rows to check
    /// each one.
    #[track_caller]
    pub fn logpmf<'a>(x: impl IntoArg<'a>, n: impl IntoArg<'a>, p: impl IntoArg<'a>) -> Array {
        let p = crate::numpy::inexact(&arg(p));
        let (x, n) = (arg(x), arg(n));
        // Promoted for the dtype check only: `n` keeps its shape (a scalar `n` is not
        // broadcast against the counts, which would make it a batch).
        let (x_promoted, _) = jaxrs_runtime::promote_args("multinomial.logpmf", &x, &n);
        assert!(
            x_promoted.dtype().is_int(),
            "multinomial.logpmf: x and n must be of integer type; got x.dtype={:?}, n.dtype={:?} \
             at {}",
            x.dtype(),
            n.dtype(),
            std::panic::Location::caller()
        );
        let (x, n) = (x.astype(p.dtype()), n.astype(p.dtype()));
        let terms = &xlogy(&x, &p) - &gammaln(&(&x + 1.0));
        let log_probs = &gammaln(&(&n + 1.0)) + &terms.sum(-1, false);
        where_(x.sum(None, false).eq(&n), &log_probs, f64::NEG_INFINITY)
    }

    /// `P(X = x)`.
    #[track_caller]
    pub fn pmf<'a>(x: impl IntoArg<'a>, n: impl IntoArg<'a>, p: impl IntoArg<'a>) -> Array {
        logpmf(x, n, p).exp()
    }
}

/// `jax.scipy.stats.sem(a, axis=0, ddof=1, nan_policy)`: the standard error of the mean,
/// `std(a, ddof) / sqrt(n)` over `axis` (every element when `None`). `nan_policy` is
/// `"propagate"` (a NaN makes the result NaN) or `"omit"` (NaNs are left out of the standard
/// deviation and the count).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::stats;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]);
/// let se = stats::sem(&x, Some(0), 1, "propagate", false).item::<f32>();
/// assert!((se - 0.6454972).abs() < 1e-6);
/// ```
#[track_caller]
pub fn sem(a: &Array, axis: Option<i64>, ddof: usize, nan_policy: &str, keepdims: bool) -> Array {
    let b = crate::numpy::inexact(a);
    match nan_policy {
        "propagate" => {
            let size = match axis {
                None => b.size(),
                Some(k) => b.shape()[crate::numpy::norm_axis("sem", k, b.shape())],
            };
            crate::numpy::std(&b, axis, keepdims, ddof) / (size as f64).sqrt()
        }
        "omit" => {
            let count = crate::numpy::isnan(&b)
                .logical_not()
                .astype(b.dtype())
                .sum(axis, keepdims);
            crate::numpy::nanstd(&b, axis, keepdims, ddof) / count.sqrt()
        }
        other => panic!(
            "sem: nan_policy must be \"propagate\" or \"omit\", got {other:?} at {}",
            std::panic::Location::caller()
        ),
    }
}

/// What [`mode`] returns (JAX's `ModeResult`): the most common value of each slice and how
/// often it occurs.
#[derive(Debug, Clone)]
pub struct ModeResult {
    /// The modal values, in the input's dtype; the smallest of those tied for most common.
    pub mode: Array,
    /// How many times each occurs (int64).
    pub count: Array,
}

/// `jax.scipy.stats.mode(a, axis, nan_policy="propagate", keepdims)`: the most common value
/// along `axis` (`None`: of the flattened array) and its count. NaNs count as one value, as
/// JAX's `unique` groups them. A slice of length 0 gives NaN and a count of 0, both float64,
/// as JAX's. JAX's other `nan_policy`s raise, so jaxrs has only `"propagate"`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::stats;
///
/// let x = Array::from_vec(vec![2i32, 4, 1, 1, 3, 4, 4, 2, 3], &[9]);
/// let m = stats::mode(&x, Some(0), false);
/// assert_eq!((m.mode.item::<i32>(), m.count.item::<i64>()), (4, 3));
/// ```
#[track_caller]
pub fn mode(a: &Array, axis: Option<i64>, keepdims: bool) -> ModeResult {
    use crate::numpy as jnp;
    let x = if a.rank() == 0 {
        a.reshape([1])
    } else {
        a.clone()
    };
    let (x, axis, out_shape) = match axis {
        None => {
            let kept = if keepdims { vec![1; x.rank()] } else { vec![] };
            (x.reshape([x.size()]), 0, kept)
        }
        Some(k) => {
            let k = jnp::norm_axis("mode", k, x.shape());
            let kept: Vec<usize> = x
                .shape()
                .iter()
                .enumerate()
                .filter_map(|(i, &s)| match (i == k, keepdims) {
                    (true, true) => Some(1),
                    (true, false) => None,
                    _ => Some(s),
                })
                .collect();
            (x, k, kept)
        }
    };
    let n = x.shape()[axis];
    if n == 0 {
        return ModeResult {
            mode: Array::full(&out_shape, f64::NAN, crate::DType::F64),
            count: Array::zeros(&out_shape, crate::DType::F64),
        };
    }
    let moved = jnp::moveaxis(&x, axis as i64, 0);
    let columns = moved.reshape([n, moved.size() / n]);
    let (mode, count) = crate::vmap(|column: Array| mode_1d(&column), 1, 0)(columns);
    ModeResult {
        mode: mode.reshape(out_shape.clone()),
        count: count.reshape(out_shape),
    }
}

/// The mode of a vector and its count: sorted (NaN last), cut into runs of equal values (all
/// NaNs one run), each position counted by the length of its run; the first longest run is
/// the smallest of the most common values, as `unique` then `argmax` gives it in JAX.
fn mode_1d(x: &Array) -> (Array, Array) {
    use crate::numpy as jnp;
    use crate::DType;
    let n = x.size();
    let sorted = jnp::sort(x, 0, Default::default());
    let (next, prev) = (sorted.slice_axis(0, 1, n), sorted.slice_axis(0, 0, n - 1));
    let both_nan = jnp::isnan(&next).logical_and(jnp::isnan(&prev));
    let new_run = next.ne(&prev).logical_and(both_nan.logical_not());
    let starts = Array::concatenate(&[Array::ones(&[1], DType::Bool), new_run], 0);
    let run = jnp::cumsum(&starts.astype(DType::I64), 0);
    let run_length = jnp::searchsorted(&run, &run, jnp::Side::Right)
        - jnp::searchsorted(&run, &run, jnp::Side::Left);
    let first_longest = run_length.argmax(0, false);
    (
        sorted.take(&first_longest, 0),
        run_length.take(&first_longest, 0).astype(DType::I64),
    )
}

/// `jax.scipy.stats.rankdata(a, method="average", axis=None)`: the ranks of the elements,
/// from 1, with ties ranked by `method`: `"average"`, `"min"`, `"max"`, `"dense"` or
/// `"ordinal"` (by position). Over `axis` each slice is ranked alone; without one, the
/// flattened array. A slice holding a NaN ranks as all NaN. The ranks are float64, JAX's
/// default float under x64 (as its goldens are made).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::stats;
///
/// let x = Array::from_vec(vec![3.0f32, 1.0, 4.0, 1.0], &[4]);
/// let r = stats::rankdata(&x, "average", None).to_vec::<f64>();
/// assert_eq!(r, vec![3.0, 1.5, 4.0, 1.5]);
/// ```
#[track_caller]
pub fn rankdata(a: &Array, method: &str, axis: Option<i64>) -> Array {
    let loc = std::panic::Location::caller();
    if !["average", "min", "max", "dense", "ordinal"].contains(&method) {
        panic!("rankdata: unknown method {method:?} at {loc}");
    }
    let Some(axis) = axis else {
        return rank_1d(&a.reshape(vec![a.size()]), method);
    };
    let k = crate::numpy::norm_axis("rankdata", axis, a.shape());
    let moved = crate::numpy::moveaxis(a, k as i64, -1);
    let n = a.shape()[k];
    let rows = moved.reshape(vec![moved.size() / n.max(1), n]);
    let method = method.to_string();
    let ranked = crate::vmap(move |row: Array| rank_1d(&row, &method), 0, 0)(rows);
    crate::numpy::moveaxis(&ranked.reshape(moved.shape().to_vec()), -1, k as i64)
}

/// [`rankdata`] of one vector, as JAX's `_rankdata`: sorted, then ranked by position, by the
/// count of distinct values so far, or by the searchsorted ends of each run of ties.
fn rank_1d(a: &Array, method: &str) -> Array {
    use crate::numpy as jnp;
    use crate::DType;
    let n = a.size();
    let out = DType::F64;
    if n == 0 {
        return Array::zeros(&[0], out);
    }
    let sorter = jnp::argsort(a, -1, Default::default());
    let inverse = sorter.argsort(-1);
    let ranks = match method {
        "ordinal" => (inverse + 1i64).astype(out),
        "dense" => {
            let sorted = a.take(&sorter, 0);
            let new_run = Array::concatenate(
                &[
                    Array::ones(&[1], DType::Bool),
                    sorted
                        .slice_axis(0, 1, n)
                        .ne(sorted.slice_axis(0, 0, n - 1)),
                ],
                0,
            );
            jnp::cumsum(&new_run.astype(DType::I64), 0)
                .take(&inverse, 0)
                .astype(out)
        }
        _ => {
            let sorted = a.take(&sorter, 0);
            let below = jnp::searchsorted(&sorted, a, jnp::Side::Left).astype(out) + 1.0;
            let through = jnp::searchsorted(&sorted, a, jnp::Side::Right).astype(out);
            match method {
                "min" => below,
                "max" => through,
                _ => (below + through) * 0.5,
            }
        }
    };
    let has_nan = jnp::any(&jnp::isnan(a), None, false);
    where_(&has_nan, Array::full(&[n], f64::NAN, out), &ranks)
}
