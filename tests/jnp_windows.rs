//! `jaxrs::numpy`'s window functions and `i0` against JAX 0.10.2
//! (`tests/golden/jnp_windows.json`, written by `tests/golden/gen_jnp_windows.py`): values
//! eagerly and under `jit`; `i0`'s JVP and VJP, `check_grads` and `vmap` too
//! (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_f64, p_i64};
use common::golden::In;
use jaxrs::numpy as jnp;
use jaxrs::prelude::*;
use serde_json::Value;

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let m = || p_i64(p, "m") as usize;
    vec![match op {
        "jnp.bartlett" => jnp::bartlett(m()),
        "jnp.blackman" => jnp::blackman(m()),
        "jnp.hamming" => jnp::hamming(m()),
        "jnp.hanning" => jnp::hanning(m()),
        "jnp.kaiser" => jnp::kaiser(m(), p_f64(p, "beta")),
        "jnp.i0" => jnp::i0(a(x, 0)),
        other => panic!("no case for {other}"),
    }]
}

#[test]
fn windows_and_i0_match_jax() {
    assert!(check_file("jnp_windows", apply) >= 28);
}
