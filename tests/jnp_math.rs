//! `jaxrs::numpy`'s elementwise functions against JAX 0.10.2 (`tests/golden/jnp_math.json`,
//! written by `tests/golden/gen_jnp_math.py`): values eagerly and under `jit`, JVP and VJP,
//! `check_grads`, and `vmap` with the batch axis first and last (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file};
use common::golden::In;
use jaxrs::numpy as jnp;
use jaxrs::prelude::*;
use serde_json::Value;

fn apply(op: &str, _p: &Value, x: &[In]) -> Vec<Array> {
    vec![match op {
        "jnp.sqrt" => jnp::sqrt(a(x, 0)),
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn jnp_math_matches_jax() {
    check_file("jnp_math", apply);
}
