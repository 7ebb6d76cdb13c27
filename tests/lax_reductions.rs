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

/// `lax.reduce` with the computation the case names.
fn generic_reduce(p: &Value, x: &Array) -> Vec<Array> {
    let dims: Vec<usize> = p_i64s(p, "dimensions")
        .iter()
        .map(|&d| d as usize)
        .collect();
    let init = |v: f64| Array::full(&[], v, x.dtype());
    let one = |f: fn(&Array, &Array) -> Array, v: f64| {
        vec![lax::reduce(
            x.clone(),
            init(v),
            |a: Array, b: Array| f(&a, &b),
            &dims,
        )]
    };
    match p_str(p, "computation") {
        "add" => one(lax::add, 0.0),
        "mul" => one(lax::mul, 1.0),
        "max" => one(lax::max, f64::NEG_INFINITY),
        "min" => one(lax::min, f64::INFINITY),
        "logaddexp" => one(|a, b| jaxrs::numpy::logaddexp(a, b), f64::NEG_INFINITY),
        "argmax" => {
            let idx = lax::broadcasted_iota(DType::I32, x.shape(), 1);
            let (v, i) = lax::reduce(
                (x.clone(), idx),
                (init(f64::NEG_INFINITY), Array::zeros(&[], DType::I32)),
                |(va, ia): (Array, Array), (vb, ib): (Array, Array)| {
                    let take_a = va.ge(&vb);
                    (where_(&take_a, &va, &vb), where_(&take_a, &ia, &ib))
                },
                &dims,
            );
            vec![v, i]
        }
        other => panic!("unknown computation {other}"),
    }
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    if op == "lax.reduce" {
        return generic_reduce(p, a(x, 0));
    }
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
