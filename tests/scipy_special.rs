//! `jaxrs::scipy::special` against JAX 0.10.2 (`tests/golden/scipy_special.json`, written by
//! `tests/golden/gen_scipy_special.py`): values eagerly and under `jit`, JVP and VJP,
//! `check_grads`, and `vmap` with the batch axis first and last (`tests/common/cases.rs`);
//! and the refusals where JAX raises.

mod common;

use common::cases::{a, check_file};
use common::golden::In;
use jaxrs::prelude::*;
use jaxrs::scipy::special as sp;
use serde_json::Value;

fn apply(op: &str, params: &Value, x: &[In]) -> Vec<Array> {
    match op {
        "sp.sici" => {
            let (si, ci) = sp::sici(a(x, 0));
            vec![si, ci]
        }
        "sp.fresnel" => {
            let (s, c) = sp::fresnel(a(x, 0));
            vec![s, c]
        }
        _ => vec![apply_one(op, params, x)],
    }
}

/// The ops with one output.
fn apply_one(op: &str, params: &Value, x: &[In]) -> Array {
    let x0 = || a(x, 0);
    let x1 = || a(x, 1);
    match op {
        "sp.gammaln" => sp::gammaln(x0()),
        "sp.digamma" => sp::digamma(x0()),
        "sp.erf" => sp::erf(x0()),
        "sp.erfc" => sp::erfc(x0()),
        "sp.erfinv" => sp::erfinv(x0()),
        "sp.expit" => sp::expit(x0()),
        "sp.logit" => sp::logit(x0()),
        "sp.ndtr" => sp::ndtr(x0()),
        "sp.i0" => sp::i0(x0()),
        "sp.i0e" => sp::i0e(x0()),
        "sp.i1" => sp::i1(x0()),
        "sp.i1e" => sp::i1e(x0()),
        "sp.factorial" => sp::factorial(x0()),
        "sp.polygamma" => sp::polygamma(x0(), x1()),
        "sp.zeta" => sp::zeta(x0(), x1()),
        "sp.gammainc" => sp::gammainc(x0(), x1()),
        "sp.gammaincc" => sp::gammaincc(x0(), x1()),
        "sp.betainc" => sp::betainc(x0(), x1(), a(x, 2)),
        "sp.gammasgn" => sp::gammasgn(x0()),
        "sp.loggamma" => sp::loggamma(x0()),
        "sp.gamma" => sp::gamma(x0()),
        "sp.entr" => sp::entr(x0()),
        "sp.erfcx" => sp::erfcx(x0()),
        "sp.dawsn" => sp::dawsn(x0()),
        "sp.ndtri" => sp::ndtri(x0()),
        "sp.spence" => sp::spence(x0()),
        "sp.log_ndtr" => {
            let order = params
                .get("series_order")
                .map_or(3, |v| v.as_u64().unwrap());
            sp::log_ndtr(x0(), order as usize)
        }
        "sp.xlogy" => sp::xlogy(x0(), x1()),
        "sp.xlog1py" => sp::xlog1py(x0(), x1()),
        "sp.rel_entr" => sp::rel_entr(x0(), x1()),
        "sp.kl_div" => sp::kl_div(x0(), x1()),
        "sp.betaln" => sp::betaln(x0(), x1()),
        "sp.beta" => sp::beta(x0(), x1()),
        "sp.comb" => sp::comb(x0(), x1(), params["repetition"].as_bool().unwrap()),
        "sp.boxcox" => sp::boxcox(x0(), x1()),
        "sp.boxcox1p" => sp::boxcox1p(x0(), x1()),
        "sp.multigammaln" => sp::multigammaln(x0(), params["d"].as_u64().unwrap() as usize),
        "sp.poch" => sp::poch(x0(), x1()),
        "sp.softmax" => match params.get("axis") {
            Some(axis) => sp::softmax(x0(), axis.as_i64().unwrap()),
            None => sp::softmax(x0(), None),
        },
        "sp.log_softmax" => sp::log_softmax(x0(), params["axis"].as_i64().unwrap()),
        "sp.bessel_jn" => sp::bessel_jn(
            x0(),
            params["v"].as_u64().unwrap() as usize,
            params["n_iter"].as_u64().unwrap() as usize,
        ),
        "sp.bernoulli" => sp::bernoulli(params["n"].as_u64().unwrap() as usize),
        "sp.expi" => sp::expi(x0()),
        "sp.exp1" => sp::exp1(x0()),
        "sp.expn" => sp::expn(x0(), x1()),
        "sp.owens_t" => sp::owens_t(x0(), x1()),
        "sp.wofz" => sp::wofz(x0()),
        "sp.hyp1f1" => sp::hyp1f1(x0(), x1(), a(x, 2)),
        "sp.hyp2f1" => sp::hyp2f1(x0(), x1(), a(x, 2), a(x, 3)),
        "sp.sph_harm_y" => sp::sph_harm_y(
            x0(),
            x1(),
            a(x, 2),
            a(x, 3),
            params.get("n_max").map(|v| v.as_u64().unwrap() as usize),
        ),
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn scipy_special_matches_jax() {
    check_file("scipy_special", apply);
}

#[test]
#[should_panic(
    expected = "ndtr: x.dtype=bfloat16 is not supported (float32 or float64), as in JAX"
)]
fn ndtr_refuses_what_jax_refuses() {
    sp::ndtr(&Array::zeros(&[2], DType::BF16));
}

#[test]
#[should_panic(expected = "polygamma: n must be of an integer dtype, not float32, as in JAX")]
fn polygamma_wants_an_integer_order() {
    let x = Array::ones(&[2], DType::F32);
    sp::polygamma(&x, &x);
}

#[test]
#[should_panic(expected = "sph_harm_y: n must be of an integer dtype, not float32")]
fn sph_harm_y_wants_integer_degrees() {
    let x = Array::ones(&[2], DType::F32);
    sp::sph_harm_y(&x, &Array::zeros(&[2], DType::I32), &x, &x, 1);
}

#[test]
#[should_panic(
    expected = "sph_harm_y: n_max must be given to use sph_harm_y within transformations"
)]
fn sph_harm_y_needs_n_max_under_jit() {
    let n = Array::from_vec(vec![1i32, 2], &[2]);
    let x = Array::ones(&[2], DType::F64);
    jit(|n: Array| sp::sph_harm_y(&n, &n, &x, &x, None)).call(n);
}
