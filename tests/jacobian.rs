//! `jaxrs::jacfwd`, `jacrev` and `hessian` against JAX 0.10.2 (`tests/golden/jacobian.json`,
//! written by `tests/golden/gen_jacobian.py`): the Jacobians and Hessians of five functions
//! (vector and matrix inputs, vector, matrix and scalar outputs) eagerly and under `jit`,
//! their own JVP and VJP (one order higher) against JAX's, and `vmap` over them; then trees
//! of inputs, and the refusal of integer inputs.

mod common;

use common::cases::{a, check_file, p_str};
use common::golden::In;
use jaxrs::numpy as jnp;
use jaxrs::prelude::*;
use serde_json::Value;

/// The functions of `gen_jacobian.py`, by name.
fn function(name: &str) -> fn(Array) -> Array {
    match name {
        "sin_times_sum" => |x| jnp::sin(&x) * jnp::sum(&x, None, false),
        "tanh_matvec" => |x| {
            let m = Array::from_vec(vec![0.5f64, -1.0, 2.0, 1.5, 0.25, -0.75], &[2, 3]);
            jnp::tanh(&jnp::matmul(&m.astype(x.dtype()), &x, None))
        },
        "cubic_sum" => |x| jnp::sum(&x.powi(3), None, false) + jnp::prod(&x, None, false),
        "matrix_square" => |x| jnp::matmul(&x, &x, None),
        "logdet_like" => {
            |x| jnp::sum(&jnp::log1p(&(&x * &x)), None, false) * jnp::trace(&x, Default::default())
        }
        other => panic!("unknown function {other}"),
    }
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let f = function(p_str(p, "fn"));
    let x0 = a(x, 0).clone();
    vec![match op {
        "jax.jacfwd" => jaxrs::jacfwd(f)(x0),
        "jax.jacrev" => jaxrs::jacrev(f)(x0),
        "jax.hessian" => jaxrs::hessian(f)(x0),
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn jacobians_match_jax() {
    check_file("jacobian", apply);
}

#[derive(Tree, Clone)]
struct Params {
    w: Array,
    b: Array,
}

#[test]
fn a_jacobian_over_a_tree_is_shaped_like_the_tree() {
    // y = w x + b for x = [1, 2]: dy/dw = diag-blocks of x, dy/db = I.
    let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    let f = |p: Params| &p.w * &x + &p.b;
    let p = Params {
        w: Array::from_vec(vec![0.5f64, -1.0], &[2]),
        b: Array::from_vec(vec![0.0f64, 3.0], &[2]),
    };
    let jacs = [
        jaxrs::jacfwd(f)(p.clone()),
        jaxrs::jacrev(f)(p.clone()),
        jaxrs::jacobian(f)(p.clone()),
    ];
    for jac in jacs {
        assert_eq!(jac.w.shape(), &[2, 2]);
        assert_eq!(jac.w.to_vec::<f64>(), vec![1.0, 0.0, 0.0, 2.0]);
        assert_eq!(jac.b.to_vec::<f64>(), vec![1.0, 0.0, 0.0, 1.0]);
    }
}

#[test]
fn jacobians_refuse_integer_inputs() {
    let err = std::panic::catch_unwind(|| {
        jaxrs::jacfwd(|x: Array| &x * 2)(Array::from_vec(vec![1i32, 2], &[2]));
    })
    .expect_err("should panic");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("jacfwd requires real-valued inputs") && msg.contains("jacobian.rs"),
        "{msg}"
    );
}
