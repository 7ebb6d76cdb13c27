//! `jaxrs::numpy::linalg` (norms and the array-API products) against JAX 0.10.2
//! (`tests/golden/jnp_linalg.json`, written by `tests/golden/gen_jnp_linalg.py`): values
//! eagerly and under `jit`, JVP and VJP, `check_grads`, and `vmap` with the batch axis first
//! and last (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_bool, p_i64};
use common::golden::In;
use jaxrs::numpy as jnp;
use jaxrs::numpy::linalg::{self, NormOrd};
use jaxrs::prelude::*;
use serde_json::Value;

fn ord(p: &Value) -> Option<NormOrd> {
    match p.get("ord")? {
        Value::String(s) if s == "inf" => Some(NormOrd::Inf),
        Value::String(s) if s == "-inf" => Some(NormOrd::NegInf),
        Value::String(s) => Some(NormOrd::from(s.as_str())),
        v => Some(NormOrd::from(v.as_f64().expect("ord"))),
    }
}

fn axis(p: &Value) -> Option<Vec<i64>> {
    match p.get("axis")? {
        Value::Array(v) => Some(v.iter().map(|a| a.as_i64().unwrap()).collect()),
        v => Some(vec![v.as_i64().expect("axis")]),
    }
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let keepdims = p_bool(p, "keepdims");
    vec![match op {
        "jnp.linalg.norm" => match axis(p) {
            Some(ax) => linalg::norm(a(x, 0), ord(p), ax, keepdims),
            None => linalg::norm(a(x, 0), ord(p), None, keepdims),
        },
        "jnp.linalg.vector_norm" => match axis(p) {
            Some(ax) => linalg::vector_norm(a(x, 0), ax, keepdims, ord(p)),
            None => linalg::vector_norm(a(x, 0), None, keepdims, ord(p)),
        },
        "jnp.linalg.matrix_norm" => linalg::matrix_norm(a(x, 0), keepdims, ord(p)),
        "jnp.linalg.matmul" => linalg::matmul(a(x, 0), a(x, 1), None),
        "jnp.linalg.matrix_transpose" => linalg::matrix_transpose(a(x, 0)),
        "jnp.linalg.diagonal" => linalg::diagonal(a(x, 0), p_i64(p, "offset")),
        "jnp.linalg.trace" => linalg::trace(a(x, 0), p_i64(p, "offset")),
        "jnp.linalg.outer" => linalg::outer(a(x, 0), a(x, 1)),
        "jnp.linalg.vecdot" => linalg::vecdot(a(x, 0), a(x, 1), p_i64(p, "axis"), None),
        "jnp.linalg.tensordot" => linalg::tensordot(a(x, 0), a(x, 1), 2, None),
        "jnp.linalg.cross" => linalg::cross(a(x, 0), a(x, 1), p_i64(p, "axis")),
        "jnp.linalg.multi_dot" => {
            let arrays: Vec<&Array> = (0..x.len()).map(|i| a(x, i)).collect();
            linalg::multi_dot(&arrays)
        }
        "jnp.linalg.matrix_power" => linalg::matrix_power(a(x, 0), p_i64(p, "n")),
        other => panic!("no case for {other}"),
    }]
}

#[test]
fn linalg_matches_jax() {
    assert!(check_file("jnp_linalg", apply) >= 62);
}

#[test]
fn the_spectral_norm_is_the_largest_singular_value() {
    // ones(2, 2) has singular values 2 and 0.
    let two = linalg::norm(
        &Array::ones(&[2, 2], DType::F32),
        Some(NormOrd::P(2.0)),
        None,
        false,
    );
    assert!((two.item::<f32>() - 2.0).abs() < 1e-6);
}

#[test]
#[should_panic(expected = "invalid order")]
fn a_matrix_norm_of_order_three_is_refused() {
    linalg::norm(
        &Array::ones(&[2, 2], DType::F32),
        Some(NormOrd::P(3.0)),
        None,
        false,
    );
}

#[test]
#[should_panic(expected = "improper number of axes")]
fn norm_over_three_axes_with_an_order_is_refused() {
    let x = Array::ones(&[2, 2, 2], DType::F32);
    linalg::norm(&x, Some(NormOrd::P(1.0)), [0, 1, 2], false);
}

#[test]
fn norm_of_the_flattened_array_is_the_array_method() {
    let x = jnp::arange(6.0, None, None, Some(DType::F32)).reshape([2, 3]);
    assert_eq!(
        linalg::norm(&x, None, None, false).item::<f32>(),
        x.norm().item::<f32>()
    );
}
