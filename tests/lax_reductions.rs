//! `jaxrs::lax`'s reductions, cumulative reductions and sorts against JAX 0.10.2
//! (`tests/golden/lax_reductions.json`, written by `tests/golden/gen_lax_reductions.py`): values
//! eagerly and under `jit`, JVP and VJP, `check_grads`, and `vmap` with the batch axis first
//! and last (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_bool, p_i64, p_i64s, p_str};
use common::golden::In;
use jaxrs::lax;
use jaxrs::prelude::*;
use serde_json::Value;

fn pair((x, y): (Array, Array)) -> Vec<Array> {
    vec![x, y]
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let x0 = || a(x, 0);
    let axes = || p_i64s(p, "axes");
    let axis = || p_i64(p, "axis");
    let rev = || p_bool(p, "reverse");
    vec![match op {
        "lax.reduce_sum" => lax::reduce_sum(x0(), &axes()),
        "lax.reduce_prod" => lax::reduce_prod(x0(), &axes()),
        "lax.reduce_max" => lax::reduce_max(x0(), &axes()),
        "lax.reduce_min" => lax::reduce_min(x0(), &axes()),
        "lax.reduce_and" => lax::reduce_and(x0(), &axes()),
        "lax.reduce_or" => lax::reduce_or(x0(), &axes()),
        "lax.reduce_xor" => lax::reduce_xor(x0(), &axes()),
        "lax.argmax" | "lax.argmin" => {
            let dt = DType::from_name(p_str(p, "index_dtype")).expect("a dtype");
            if op == "lax.argmax" {
                lax::argmax(x0(), axis(), dt)
            } else {
                lax::argmin(x0(), axis(), dt)
            }
        }
        "lax.cumsum" => lax::cumsum(x0(), axis(), rev()),
        "lax.cumprod" => lax::cumprod(x0(), axis(), rev()),
        "lax.cummax" => lax::cummax(x0(), axis(), rev()),
        "lax.cummin" => lax::cummin(x0(), axis(), rev()),
        "lax.cumlogsumexp" => lax::cumlogsumexp(x0(), axis(), rev()),
        "lax.sort" => {
            let ops: Vec<&Array> = (0..x.len()).map(|i| a(x, i)).collect();
            return lax::sort(
                &ops,
                p_i64(p, "dimension"),
                true,
                p_i64(p, "num_keys") as usize,
            );
        }
        "lax.sort_key_val" => {
            return pair(lax::sort_key_val(
                x0(),
                a(x, 1),
                p_i64(p, "dimension"),
                true,
            ))
        }
        "lax.top_k" => return pair(lax::top_k(x0(), p_i64(p, "k") as usize, axis())),
        "lax.approx_max_k" => {
            return pair(lax::approx_max_k(
                x0(),
                p_i64(p, "k") as usize,
                p_i64(p, "reduction_dimension"),
                0.95,
            ))
        }
        "lax.approx_min_k" => {
            return pair(lax::approx_min_k(
                x0(),
                p_i64(p, "k") as usize,
                p_i64(p, "reduction_dimension"),
                0.95,
            ))
        }
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn lax_reductions_match_jax() {
    check_file("lax_reductions", apply);
}
