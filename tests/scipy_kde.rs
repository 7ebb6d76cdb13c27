//! `jaxrs::scipy::stats::gaussian_kde` against JAX 0.10.2 (`tests/golden/scipy_kde.json`,
//! written by `tests/golden/gen_scipy_kde.py`): the estimator's arrays and every method,
//! eagerly and under `jit`, JVP and VJP through the construction in the data, weights,
//! bandwidth factor and points, `check_grads`, and `vmap` (`tests/common/cases.rs`); resample
//! for two keys and three shapes; the estimator as a pytree through `jit`, `vmap` and `grad`;
//! and the panics where JAX raises.

mod common;

use common::cases::{a, check_file, p_str};
use common::golden::In;
use jaxrs::prelude::*;
use jaxrs::scipy::stats::{
    gaussian_kde, gaussian_kde_with, BwMethod, GaussianKde, GaussianKdeOptions,
};
use serde_json::Value;

/// The generator's `CALLABLE` bandwidth: `0.5 + 0.1 * mean(dataset²)`.
fn callable_bw(k: &GaussianKde) -> Array {
    &(&k.dataset.powi(2).mean(None, false) * 0.1) + 0.5
}

/// The estimator from a case's leading inputs (dataset, weights?, factor?), and the rest.
fn split<'i>(params: &Value, inputs: &'i [In]) -> (GaussianKde, &'i [In]) {
    let weighted = params["weighted"].as_bool().unwrap();
    let weights = weighted.then(|| a(inputs, 1));
    let mut next = 1 + weighted as usize;
    let factor;
    let bw_method = match &params["bw"] {
        Value::Number(f) => BwMethod::Scalar(f.as_f64().unwrap()),
        Value::String(s) if s == "array" => {
            factor = a(inputs, next).clone();
            next += 1;
            BwMethod::Factor(&factor)
        }
        Value::String(s) if s == "callable" => BwMethod::Callable(&callable_bw),
        Value::String(s) => BwMethod::from(s.as_str()),
        other => panic!("bad bw {other}"),
    };
    let opts = GaussianKdeOptions { bw_method, weights };
    (gaussian_kde_with(a(inputs, 0), opts), &inputs[next..])
}

/// `integrate_box_1d` with array limits, or Rust numbers (weakly typed, as JAX's Python
/// scalars).
fn integrate_box_1d(kde: &GaussianKde, low: &In, high: &In) -> Array {
    match (low, high) {
        (In::Arr(low), In::Arr(high)) => kde.integrate_box_1d(low, high),
        (In::Float(low), In::Float(high)) => kde.integrate_box_1d(*low, *high),
        _ => panic!("limits are two arrays or two floats"),
    }
}

fn shape_param(params: &Value) -> Vec<usize> {
    params["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|s| s.as_u64().expect("dim") as usize)
        .collect()
}

fn apply(op: &str, params: &Value, inputs: &[In]) -> Vec<Array> {
    match op {
        "tree.jit_logpdf" => {
            let f = jit(|(k, x): (GaussianKde, Array)| k.logpdf(&x));
            return vec![f.call((gaussian_kde(a(inputs, 0)), a(inputs, 1).clone()))];
        }
        "tree.vmap_logpdf" => {
            let kdes = vmap(|d: Array| gaussian_kde(&d), 0, 0)(a(inputs, 0).clone());
            let x = a(inputs, 1);
            return vec![vmap(|k: GaussianKde| k.logpdf(x), 0, 0)(kdes)];
        }
        "gaussian_kde.resample_fields" => {
            let kde = GaussianKde {
                neff: a(inputs, 0).clone(),
                dataset: a(inputs, 1).clone(),
                weights: a(inputs, 2).clone(),
                covariance: a(inputs, 3).clone(),
                inv_cov: a(inputs, 4).clone(),
            };
            return vec![kde.resample(a(inputs, 5), &shape_param(params))];
        }
        "grad.logpdf" => {
            let g = grad(|(d, x): (Array, Array)| gaussian_kde(&d).logpdf(&x).sum(None, false));
            let (gd, gx) = g((a(inputs, 0).clone(), a(inputs, 1).clone()));
            return vec![gd, gx];
        }
        _ => {}
    }
    let (kde, rest) = split(params, inputs);
    let r = |i: usize| a(rest, i);
    vec![match op {
        "gaussian_kde" => return jaxrs::tree_leaves(&kde),
        "gaussian_kde.evaluate" => kde.evaluate(r(0)),
        "gaussian_kde.pdf" => kde.pdf(r(0)),
        "gaussian_kde.logpdf" => kde.logpdf(r(0)),
        "gaussian_kde.integrate_gaussian" => kde.integrate_gaussian(r(0), r(1)),
        "gaussian_kde.integrate_kde" => kde.integrate_kde(&gaussian_kde(r(0))),
        "gaussian_kde.integrate_box_1d" => integrate_box_1d(&kde, &rest[0], &rest[1]),
        "gaussian_kde.resample" => kde.resample(r(0), &shape_param(params)),
        other => panic!("no Rust call for {other} ({})", p_str(params, "bw")),
    }]
}

#[test]
fn gaussian_kde_matches_jax() {
    let n = check_file("scipy_kde", apply);
    assert_eq!(n, 217);
}

/// resample of an estimator holding JAX's own arrays draws JAX's samples: the chosen points
/// exactly, the noise to the last bits. In one dimension in float32 every draw is JAX's bit for
/// bit; elsewhere the Cholesky factor (jaxrs's kernel, not LAPACK's, in two dimensions) and
/// XLA's choice of where to fuse a multiply and an add into one rounding (jaxrs's XLA is not
/// jaxlib's) leave a few ulps.
#[test]
fn resample_is_jaxs_draw() {
    let cases = common::cases::load_cases("scipy_kde");
    let (mut exact, mut f32_1d) = (0, 0);
    for c in cases
        .iter()
        .filter(|c| c.op == "gaussian_kde.resample_fields")
    {
        let got = apply(&c.op, &c.params, &c.inputs).remove(0);
        let want = common::golden::array(&c.want[0]);
        assert_eq!(
            (got.shape(), got.dtype()),
            (want.shape(), want.dtype()),
            "{}",
            c.name
        );
        let (g, w) = (
            got.astype(DType::F64).to_vec::<f64>(),
            want.astype(DType::F64).to_vec::<f64>(),
        );
        let single = got.dtype() == DType::F32;
        if single && c.params["d"] == 1 {
            assert_eq!(g, w, "{}: not JAX's bits", c.name);
            f32_1d += 1;
        }
        exact += (g == w) as usize;
        let tol = if single { 4e-6 } else { 1e-14 };
        for (i, (g, w)) in g.iter().zip(&w).enumerate() {
            let ok = (g - w).abs() <= tol * (1.0 + w.abs());
            assert!(ok, "{} [{i}]: {g} vs JAX {w}", c.name);
        }
    }
    assert_eq!(f32_1d, 6);
    assert!(exact >= 10, "only {exact} of 24 draws are JAX's bits");
}

#[test]
fn the_estimator_is_jaxs_pytree() {
    let data = Array::from_vec(vec![0.0f64, 1.0, 3.0, 4.5, 2.0, -1.0], &[2, 3]);
    let kde = gaussian_kde(&data);
    let leaves = jaxrs::tree_leaves(&kde);
    assert_eq!(leaves.len(), 5);
    assert_eq!(leaves[1].shape(), &[2, 3]);
    assert_eq!(leaves[2].shape(), &[3]);
    assert_eq!(leaves[3].shape(), &[2, 2]);
    assert_eq!((kde.d(), kde.n()), (2, 3));
    // The neff of equal weights is n.
    assert!((leaves[0].item::<f64>() - 3.0).abs() < 1e-12);
}

/// resample (jitted inside, as JAX's) under `vmap` over keys draws what each key draws alone.
#[test]
fn resample_under_vmap_draws_each_keys_sample() {
    let data = Array::from_vec(vec![0.0f32, 1.0, 3.0, 4.5, 2.0, -1.0], &[6]);
    let kde = gaussian_kde(&data);
    let keys = jaxrs::random::split(&jaxrs::random::key(7), 3);
    let batched = vmap(|k: Array| kde.resample(&k, &[4]), 0, 0)(keys.clone());
    assert_eq!(batched.shape(), &[3, 1, 4]);
    for i in 0..3 {
        let key = keys.slice_axis(0, i, i + 1).reshape([2]);
        let alone = kde.resample(&key, &[4]).to_vec::<f32>();
        let row = batched
            .slice_axis(0, i, i + 1)
            .reshape([1, 4])
            .to_vec::<f32>();
        for (a, b) in alone.iter().zip(&row) {
            assert!(
                (a - b).abs() <= 1e-6 * (1.0 + a.abs()),
                "key {i}: {a} vs {b}"
            );
        }
    }
}

#[test]
#[should_panic(expected = "gaussian_kde: `weights` input should be of length n")]
fn weights_of_the_wrong_length_panic() {
    let data = Array::from_vec(vec![0.0f32, 1.0, 3.0], &[3]);
    let w = Array::from_vec(vec![1.0f32, 1.0], &[2]);
    gaussian_kde_with(
        &data,
        GaussianKdeOptions {
            weights: Some(&w),
            ..Default::default()
        },
    );
}

#[test]
#[should_panic(expected = "gaussian_kde: `dataset` input should have multiple elements")]
fn a_scalar_dataset_panics() {
    gaussian_kde(&Array::scalar(1.0f32));
}

#[test]
#[should_panic(expected = "gaussian_kde: `bw_method` should be 'scott', 'silverman'")]
fn an_unknown_bandwidth_rule_panics() {
    let data = Array::from_vec(vec![0.0f32, 1.0, 3.0], &[3]);
    gaussian_kde_with(
        &data,
        GaussianKdeOptions {
            bw_method: "normal_reference".into(),
            ..Default::default()
        },
    );
}

#[test]
#[should_panic(expected = "dynamically changing the bandwidth method is not supported")]
fn set_bandwidth_is_not_supported_as_in_jax() {
    let data = Array::from_vec(vec![0.0f32, 1.0, 3.0], &[3]);
    gaussian_kde(&data).set_bandwidth(BwMethod::Silverman);
}
