//! `jaxrs::scipy::stats` against JAX 0.10.2 (`tests/golden/scipy_stats.json`, written by
//! `tests/golden/gen_scipy_stats.py`): values eagerly and under `jit`, JVP and VJP in x, loc
//! and scale, `check_grads`, and `vmap` with the batch axis first and last
//! (`tests/common/cases.rs`); and Rust scalars for `loc` and `scale`, as JAX's defaults.

mod common;

use common::cases::{a, check_file};
use common::golden::In;
use jaxrs::prelude::*;
use jaxrs::scipy::stats::{
    bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom,
    gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm, pareto,
    poisson, t, truncnorm, uniform, vonmises, wrapcauchy,
};
use serde_json::Value;

fn apply(op: &str, params: &Value, x: &[In]) -> Vec<Array> {
    let n = |i: usize| a(x, i);
    let axis = params.get("axis").and_then(Value::as_i64);
    match op {
        "sem" => {
            let ddof = params["ddof"].as_u64().unwrap() as usize;
            let policy = params
                .get("nan_policy")
                .and_then(Value::as_str)
                .unwrap_or("propagate");
            let keepdims = params
                .get("keepdims")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            return vec![jaxrs::scipy::stats::sem(n(0), axis, ddof, policy, keepdims)];
        }
        "mode" => {
            let keepdims = params
                .get("keepdims")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let m = jaxrs::scipy::stats::mode(n(0), axis, keepdims);
            return vec![m.mode, m.count];
        }
        "rankdata" => {
            let method = params["method"].as_str().unwrap();
            return vec![jaxrs::scipy::stats::rankdata(n(0), method, axis)];
        }
        _ => {}
    }
    if let Some(out) = apply_shaped(op, x.len(), &n) {
        return vec![out];
    }
    let (v, loc, scale) = (a(x, 0), a(x, 1), a(x, 2));
    vec![match op {
        "norm.logpdf" => norm::logpdf(v, loc, scale),
        "gumbel_l.logpdf" => gumbel_l::logpdf(v, loc, scale),
        "gumbel_l.pdf" => gumbel_l::pdf(v, loc, scale),
        "gumbel_l.cdf" => gumbel_l::cdf(v, loc, scale),
        "gumbel_l.logcdf" => gumbel_l::logcdf(v, loc, scale),
        "gumbel_l.sf" => gumbel_l::sf(v, loc, scale),
        "gumbel_l.logsf" => gumbel_l::logsf(v, loc, scale),
        "gumbel_l.ppf" => gumbel_l::ppf(v, loc, scale),
        "gumbel_r.logpdf" => gumbel_r::logpdf(v, loc, scale),
        "gumbel_r.pdf" => gumbel_r::pdf(v, loc, scale),
        "gumbel_r.cdf" => gumbel_r::cdf(v, loc, scale),
        "gumbel_r.logcdf" => gumbel_r::logcdf(v, loc, scale),
        "gumbel_r.sf" => gumbel_r::sf(v, loc, scale),
        "gumbel_r.logsf" => gumbel_r::logsf(v, loc, scale),
        "gumbel_r.ppf" => gumbel_r::ppf(v, loc, scale),
        "norm.pdf" => norm::pdf(v, loc, scale),
        "norm.cdf" => norm::cdf(v, loc, scale),
        "norm.sf" => norm::sf(v, loc, scale),
        "expon.logpdf" => expon::logpdf(v, loc, scale),
        "expon.pdf" => expon::pdf(v, loc, scale),
        "expon.cdf" => expon::cdf(v, loc, scale),
        "expon.logcdf" => expon::logcdf(v, loc, scale),
        "expon.logsf" => expon::logsf(v, loc, scale),
        "expon.sf" => expon::sf(v, loc, scale),
        "expon.ppf" => expon::ppf(v, loc, scale),
        "laplace.logpdf" => laplace::logpdf(v, loc, scale),
        "laplace.pdf" => laplace::pdf(v, loc, scale),
        "laplace.cdf" => laplace::cdf(v, loc, scale),
        "logistic.logpdf" => logistic::logpdf(v, loc, scale),
        "logistic.pdf" => logistic::pdf(v, loc, scale),
        "logistic.cdf" => logistic::cdf(v, loc, scale),
        "logistic.sf" => logistic::sf(v, loc, scale),
        "logistic.ppf" => logistic::ppf(v, loc, scale),
        "logistic.isf" => logistic::isf(v, loc, scale),
        "cauchy.logpdf" => cauchy::logpdf(v, loc, scale),
        "cauchy.pdf" => cauchy::pdf(v, loc, scale),
        "cauchy.cdf" => cauchy::cdf(v, loc, scale),
        "cauchy.logcdf" => cauchy::logcdf(v, loc, scale),
        "cauchy.sf" => cauchy::sf(v, loc, scale),
        "cauchy.logsf" => cauchy::logsf(v, loc, scale),
        "cauchy.ppf" => cauchy::ppf(v, loc, scale),
        "cauchy.isf" => cauchy::isf(v, loc, scale),
        "uniform.logpdf" => uniform::logpdf(v, loc, scale),
        "uniform.pdf" => uniform::pdf(v, loc, scale),
        "uniform.cdf" => uniform::cdf(v, loc, scale),
        "uniform.ppf" => uniform::ppf(v, loc, scale),
        other => panic!("unknown op {other}"),
    }]
}

/// The distributions with shape parameters (`x, a, b, loc, scale` and the like) and the
/// discrete and multivariate ones.
fn apply_shaped<'a>(op: &str, arity: usize, n: &dyn Fn(usize) -> &'a Array) -> Option<Array> {
    Some(match (op, arity) {
        ("norm.logcdf", _) => norm::logcdf(n(0), n(1), n(2)),
        ("norm.logsf", _) => norm::logsf(n(0), n(1), n(2)),
        ("norm.ppf", _) => norm::ppf(n(0), n(1), n(2)),
        ("norm.isf", _) => norm::isf(n(0), n(1), n(2)),
        ("beta.logpdf", _) => beta::logpdf(n(0), n(1), n(2), n(3), n(4)),
        ("beta.pdf", _) => beta::pdf(n(0), n(1), n(2), n(3), n(4)),
        ("beta.cdf", _) => beta::cdf(n(0), n(1), n(2), n(3), n(4)),
        ("beta.logcdf", _) => beta::logcdf(n(0), n(1), n(2), n(3), n(4)),
        ("beta.sf", _) => beta::sf(n(0), n(1), n(2), n(3), n(4)),
        ("beta.logsf", _) => beta::logsf(n(0), n(1), n(2), n(3), n(4)),
        ("gamma.logpdf", _) => gamma::logpdf(n(0), n(1), n(2), n(3)),
        ("gamma.pdf", _) => gamma::pdf(n(0), n(1), n(2), n(3)),
        ("gamma.cdf", _) => gamma::cdf(n(0), n(1), n(2), n(3)),
        ("gamma.logcdf", _) => gamma::logcdf(n(0), n(1), n(2), n(3)),
        ("gamma.sf", _) => gamma::sf(n(0), n(1), n(2), n(3)),
        ("gamma.logsf", _) => gamma::logsf(n(0), n(1), n(2), n(3)),
        ("chi2.logpdf", _) => chi2::logpdf(n(0), n(1), n(2), n(3)),
        ("chi2.pdf", _) => chi2::pdf(n(0), n(1), n(2), n(3)),
        ("chi2.cdf", _) => chi2::cdf(n(0), n(1), n(2), n(3)),
        ("chi2.logcdf", _) => chi2::logcdf(n(0), n(1), n(2), n(3)),
        ("chi2.sf", _) => chi2::sf(n(0), n(1), n(2), n(3)),
        ("chi2.logsf", _) => chi2::logsf(n(0), n(1), n(2), n(3)),
        ("t.logpdf", _) => t::logpdf(n(0), n(1), n(2), n(3)),
        ("t.pdf", _) => t::pdf(n(0), n(1), n(2), n(3)),
        ("poisson.logpmf", _) => poisson::logpmf(n(0), n(1), n(2)),
        ("poisson.pmf", _) => poisson::pmf(n(0), n(1), n(2)),
        ("poisson.cdf", _) => poisson::cdf(n(0), n(1), n(2)),
        ("poisson.entropy", _) => poisson::entropy(n(0), n(1)),
        ("bernoulli.logpmf", _) => bernoulli::logpmf(n(0), n(1), n(2)),
        ("bernoulli.pmf", _) => bernoulli::pmf(n(0), n(1), n(2)),
        ("bernoulli.cdf", _) => bernoulli::cdf(n(0), n(1)),
        ("bernoulli.ppf", _) => bernoulli::ppf(n(0), n(1)),
        ("binom.logpmf", _) => binom::logpmf(n(0), n(1), n(2), n(3)),
        ("binom.pmf", _) => binom::pmf(n(0), n(1), n(2), n(3)),
        ("dirichlet.logpdf", _) => dirichlet::logpdf(n(0), n(1)),
        ("dirichlet.pdf", _) => dirichlet::pdf(n(0), n(1)),
        ("multivariate_normal.logpdf", _) => multivariate_normal::logpdf(n(0), n(1), n(2)),
        ("multivariate_normal.pdf", _) => multivariate_normal::pdf(n(0), n(1), n(2)),
        ("pareto.logpdf", _) => pareto::logpdf(n(0), n(1), n(2), n(3)),
        ("pareto.pdf", _) => pareto::pdf(n(0), n(1), n(2), n(3)),
        ("pareto.cdf", _) => pareto::cdf(n(0), n(1), n(2), n(3)),
        ("pareto.logcdf", _) => pareto::logcdf(n(0), n(1), n(2), n(3)),
        ("pareto.sf", _) => pareto::sf(n(0), n(1), n(2), n(3)),
        ("pareto.logsf", _) => pareto::logsf(n(0), n(1), n(2), n(3)),
        ("pareto.ppf", _) => pareto::ppf(n(0), n(1), n(2), n(3)),
        ("geom.logpmf", _) => geom::logpmf(n(0), n(1), n(2)),
        ("geom.pmf", _) => geom::pmf(n(0), n(1), n(2)),
        ("wrapcauchy.logpdf", _) => wrapcauchy::logpdf(n(0), n(1)),
        ("wrapcauchy.pdf", _) => wrapcauchy::pdf(n(0), n(1)),
        ("nbinom.logpmf", _) => nbinom::logpmf(n(0), n(1), n(2), n(3)),
        ("nbinom.pmf", _) => nbinom::pmf(n(0), n(1), n(2), n(3)),
        ("betabinom.logpmf", _) => betabinom::logpmf(n(0), n(1), n(2), n(3), n(4)),
        ("betabinom.pmf", _) => betabinom::pmf(n(0), n(1), n(2), n(3), n(4)),
        ("gennorm.logpdf", _) => gennorm::logpdf(n(0), n(1)),
        ("gennorm.pdf", _) => gennorm::pdf(n(0), n(1)),
        ("gennorm.cdf", _) => gennorm::cdf(n(0), n(1)),
        ("truncnorm.logpdf", _) => truncnorm::logpdf(n(0), n(1), n(2), n(3), n(4)),
        ("truncnorm.pdf", _) => truncnorm::pdf(n(0), n(1), n(2), n(3), n(4)),
        ("truncnorm.cdf", _) => truncnorm::cdf(n(0), n(1), n(2), n(3), n(4)),
        ("truncnorm.logcdf", _) => truncnorm::logcdf(n(0), n(1), n(2), n(3), n(4)),
        ("truncnorm.sf", _) => truncnorm::sf(n(0), n(1), n(2), n(3), n(4)),
        ("truncnorm.logsf", _) => truncnorm::logsf(n(0), n(1), n(2), n(3), n(4)),
        ("vonmises.logpdf", _) => vonmises::logpdf(n(0), n(1)),
        ("vonmises.pdf", _) => vonmises::pdf(n(0), n(1)),
        ("multinomial.logpmf", _) => multinomial::logpmf(n(0), n(1), n(2)),
        ("multinomial.pmf", _) => multinomial::pmf(n(0), n(1), n(2)),
        _ => return None,
    })
}

#[test]
fn scipy_stats_match_jax() {
    check_file("scipy_stats", apply);
}

/// JAX's `norm.logpdf(x)` (defaults `loc=0, scale=1`) is `norm::logpdf(&x, 0.0, 1.0)`: Rust
/// scalars are weak, so the result keeps `x`'s dtype.
#[test]
fn rust_scalars_stand_for_jax_defaults() {
    let x = Array::from_vec(vec![0.0f32, 2.0], &[2]);
    let logp = norm::logpdf(&x, 0.0, 1.0);
    assert_eq!(logp.dtype(), DType::F32);
    let expected = [-0.918_938_5f32, -2.918_938_5];
    for (got, want) in logp.to_vec::<f32>().iter().zip(expected) {
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
    // An int32 array with Rust float scalars computes in float64, as JAX's
    // `expon.cdf(int32_array, 0.0, 1.0)` does under x64; with integer scalars, in float32.
    let ints = Array::from_vec(vec![0i32, 1], &[2]);
    assert_eq!(expon::cdf(&ints, 0.0, 1.0).dtype(), DType::F64);
    assert_eq!(expon::cdf(&ints, 0, 1).dtype(), DType::F32);
    let longs = Array::from_vec(vec![0i64, 1], &[2]);
    assert_eq!(
        uniform::cdf(&longs, 0.0, 2.0).to_vec::<f64>(),
        vec![0.0, 0.5]
    );
}
