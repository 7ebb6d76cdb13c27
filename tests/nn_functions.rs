//! `jaxrs::nn`'s jax.nn activation functions against JAX 0.10.2
//! (`tests/golden/nn_functions.json`, written by `tests/golden/gen_nn_functions.py`): values
//! eagerly and under `jit`, JVP and VJP, `check_grads` and `vmap` (`tests/common/cases.rs`),
//! plus values at the kinks (0) of the relu-likes; and the reductions (`softmax`,
//! `log_softmax`, `logsumexp` with `b` and its sign, `logmeanexp`, `standardize`) over
//! several axes with `where` masks, `glu` and `one_hot`.

mod common;

use common::cases::{a, check_file, p_bool, p_f64, p_i64, p_opt_i64s, p_str};
use common::golden::In;
use jaxrs::nn;
use jaxrs::prelude::*;
use serde_json::Value;

fn apply(op: &str, params: &Value, inputs: &[In]) -> Vec<Array> {
    let x = a(inputs, 0);
    // `axis=None` is every axis.
    let axes = p_opt_i64s(params, "axes").unwrap_or_else(|| (0..x.rank() as i64).collect());
    let axes = || axes.clone();
    let mask = || p_bool(params, "where").then(|| a(inputs, 1));
    vec![match op {
        "nn.mish" => nn::mish(x),
        "nn.squareplus" => nn::squareplus(x, p_f64(params, "b")),
        "nn.sparse_plus" => nn::sparse_plus(x),
        "nn.sparse_sigmoid" => nn::sparse_sigmoid(x),
        "nn.log1mexp" => nn::log1mexp(x),
        "nn.glu" => nn::glu(x, p_i64(params, "axis")),
        "nn.softmax" => nn::softmax(x, axes(), mask()),
        "nn.log_softmax" => nn::log_softmax(x, axes(), mask()),
        "nn.logmeanexp" => nn::logmeanexp(x, axes(), mask(), p_bool(params, "keepdims")),
        "nn.standardize" => nn::standardize(x, axes(), None, None, 1e-5, mask()),
        "nn.logsumexp" => {
            let b = p_bool(params, "b").then(|| a(inputs, 1));
            nn::logsumexp(
                x,
                axes(),
                nn_options::special_options(b, p_bool(params, "keepdims")),
            )
        }
        "logsumexp_sign" => {
            let (out, sign) = jaxrs::scipy::special::logsumexp_with_sign(
                x,
                axes(),
                nn_options::special_options(Some(a(inputs, 1)), false),
            );
            return vec![out, sign];
        }
        "nn.one_hot" => nn::one_hot(
            x,
            p_i64(params, "n") as usize,
            DType::from_name(p_str(params, "dtype")).expect("dtype"),
            p_i64(params, "axis"),
        ),
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

mod nn_options {
    use jaxrs::scipy::special::LogsumexpOptions;
    use jaxrs::Array;

    pub fn special_options(b: Option<&Array>, keepdims: bool) -> LogsumexpOptions<'_> {
        LogsumexpOptions {
            b,
            keepdims,
            where_: None,
        }
    }
}

#[test]
fn nn_functions_match_jax() {
    let checked = check_file("nn_functions", apply);
    assert_eq!(checked, 118);
}
