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
//! Here so far: `norm` (without the functions that need `log_ndtr` and `ndtri`), `expon`,
//! `laplace`, `logistic`, `cauchy` and `uniform`;
//! API.md lists the rest as not yet.

use crate::{lax, where_, Array, IntoArg};
use jaxrs_runtime::promote_args_inexact;

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
