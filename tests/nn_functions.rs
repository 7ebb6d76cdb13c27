//! `jaxrs::nn`'s jax.nn activation functions against JAX 0.10.2
//! (`tests/golden/nn_functions.json`, written by `tests/golden/gen_nn_functions.py`): values
//! eagerly and under `jit`, JVP and VJP, `check_grads` and `vmap` (`tests/common/cases.rs`),
//! plus values at the kinks (0) of the relu-likes.

mod common;

use common::cases::{a, check_file, p_bool, p_f64};
use common::golden::In;
use jaxrs::nn;
use jaxrs::prelude::*;
use serde_json::Value;

fn apply(op: &str, params: &Value, x: &[In]) -> Vec<Array> {
    let x = a(x, 0);
    vec![match op {
        "nn.relu" => nn::relu(x),
        "nn.sigmoid" => nn::sigmoid(x),
        "nn.log_sigmoid" => nn::log_sigmoid(x),
        "nn.silu" => nn::silu(x),
        "nn.swish" => nn::swish(x),
        "nn.softplus" => nn::softplus(x),
        "nn.tanh" => nn::tanh(x),
        "nn.identity" => nn::identity(x),
        "nn.gelu" => nn::gelu(x, p_bool(params, "approximate")),
        "nn.leaky_relu" => nn::leaky_relu(x, p_f64(params, "negative_slope")),
        "nn.elu" => nn::elu(x, p_f64(params, "alpha")),
        "nn.relu6" => nn::relu6(x),
        "nn.hard_tanh" => nn::hard_tanh(x),
        "nn.hard_sigmoid" => nn::hard_sigmoid(x),
        "nn.hard_silu" => nn::hard_silu(x),
        "nn.hard_swish" => nn::hard_swish(x),
        "nn.soft_sign" => nn::soft_sign(x),
        "nn.celu" => nn::celu(x, p_f64(params, "alpha")),
        "nn.selu" => nn::selu(x),
        other => panic!("nn_functions: no Rust call for {other}"),
    }]
}

#[test]
fn nn_functions_match_jax() {
    let checked = check_file("nn_functions", apply);
    assert_eq!(checked, 60);
}
