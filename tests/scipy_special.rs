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

fn apply(op: &str, _params: &Value, x: &[In]) -> Vec<Array> {
    let x0 = || a(x, 0);
    let x1 = || a(x, 1);
    vec![match op {
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
        other => panic!("unknown op {other}"),
    }]
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
