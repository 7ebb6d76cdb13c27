//! `jaxrs::scipy::stats` against JAX 0.10.2 (`tests/golden/scipy_stats.json`, written by
//! `tests/golden/gen_scipy_stats.py`): values eagerly and under `jit`, JVP and VJP in x, loc
//! and scale, `check_grads`, and `vmap` with the batch axis first and last
//! (`tests/common/cases.rs`); and Rust scalars for `loc` and `scale`, as JAX's defaults.

mod common;

use common::cases::{a, check_file};
use common::golden::In;
use jaxrs::prelude::*;
use jaxrs::scipy::stats::{cauchy, expon, laplace, logistic, norm, uniform};
use serde_json::Value;

fn apply(op: &str, _params: &Value, x: &[In]) -> Vec<Array> {
    let (v, loc, scale) = (a(x, 0), a(x, 1), a(x, 2));
    vec![match op {
        "norm.logpdf" => norm::logpdf(v, loc, scale),
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
