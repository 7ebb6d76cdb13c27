//! `jaxrs::lax`'s special functions, `mulhi` and `ragged_dot` against JAX 0.10.2
//! (`tests/golden/lax_special.json`, written by `tests/golden/gen_lax_special.py`): values
//! eagerly and under `jit`, JVP and VJP, `check_grads`, and `vmap` with the batch axis first
//! and last (`tests/common/cases.rs`); mulhi's 64-bit values exactly; and the panics where
//! JAX raises.

mod common;

use common::cases::{a, check_file, load_cases};
use common::golden::{int, int_values, In};
use common::panic_message;
use jaxrs::lax;
use jaxrs::prelude::*;
use serde_json::Value;

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let x0 = || a(x, 0);
    let x1 = || a(x, 1);
    if op == "lax.random_gamma_grad:jvp" {
        // Forward mode through random_gamma_grad's while loops, as `jax.jvp` of it.
        let (y, t) = jvp(
            |v: Vec<Array>| lax::random_gamma_grad(&v[0], &v[1]),
            &vec![x0().clone(), x1().clone()],
            &vec![a(x, 2).clone(), a(x, 3).clone()],
        );
        return vec![y, t];
    }
    vec![match op {
        "lax.bessel_i0e" => lax::bessel_i0e(x0()),
        "lax.bessel_i1e" => lax::bessel_i1e(x0()),
        "lax.zeta" => lax::zeta(x0(), x1()),
        "lax.polygamma" => lax::polygamma(x0(), x1()),
        "lax.mulhi" => lax::mulhi(x0(), x1()),
        "lax.igamma" => lax::igamma(x0(), x1()),
        "lax.igammac" => lax::igammac(x0(), x1()),
        "lax.igamma_grad_a" => lax::igamma_grad_a(x0(), x1()),
        "lax.random_gamma_grad" => lax::random_gamma_grad(x0(), x1()),
        "lax.betainc" => lax::betainc(x0(), x1(), a(x, 2)),
        "lax.ragged_dot" => {
            let preferred = p
                .get("preferred_element_type")
                .and_then(Value::as_str)
                .map(|d| DType::from_name(d).expect("dtype"));
            lax::ragged_dot(x0(), x1(), a(x, 2), None, preferred)
        }
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn lax_special_matches_jax() {
    check_file("lax_special", apply);
}

/// The golden comparison reads values as f64; 64-bit products need every bit.
#[test]
fn mulhi_is_exact() {
    let mut n = 0;
    for c in load_cases("lax_special")
        .into_iter()
        .filter(|c| c.op == "lax.mulhi")
    {
        let got = lax::mulhi(a(&c.inputs, 0), a(&c.inputs, 1));
        let want: Vec<i128> = c.want[0]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(int)
            .collect();
        assert_eq!(int_values(&got), want, "{}", c.name);
        n += 1;
    }
    assert_eq!(n, 8);
}

/// Where JAX raises (zeta has no derivative; polygamma none in m; mulhi takes integers,
/// zeta floats), jaxrs panics, naming the op.
#[test]
fn special_functions_refuse_what_jax_refuses() {
    let x = Array::from_vec(vec![2.0f64, 3.0], &[2]);
    let q = Array::from_vec(vec![1.5f64, 2.0], &[2]);
    let msg = panic_message(|| {
        jvp(|v: Array| lax::zeta(&x, &v), &q, &q);
    });
    assert!(
        msg.contains("zeta") && msg.contains("not implemented"),
        "{msg}"
    );
    let msg = panic_message(|| {
        grad(|m: Array| lax::polygamma(&m, &q).sum(None, false))(x.clone());
    });
    assert!(msg.contains("polygamma") && msg.contains("m"), "{msg}");
    let msg = panic_message(|| {
        lax::mulhi(&x, &x);
    });
    assert!(
        msg.contains("lax.mulhi") && msg.contains("float64"),
        "{msg}"
    );
    let ints = Array::from_vec(vec![1i32, 2], &[2]);
    let msg = panic_message(|| {
        lax::zeta(&ints, &ints);
    });
    assert!(msg.contains("lax.zeta") && msg.contains("int32"), "{msg}");
    let msg = panic_message(|| {
        grad(|a: Array| lax::igamma_grad_a(&a, &q).sum(None, false))(x.clone());
    });
    assert!(
        msg.contains("igamma_grad_a") && msg.contains("not implemented"),
        "{msg}"
    );
    let half = Array::from_vec(vec![0.5f64, 0.25], &[2]);
    let msg = panic_message(|| {
        grad(|a: Array| lax::betainc(&a, &q, &half).sum(None, false))(x.clone());
    });
    assert!(msg.contains("betainc") && msg.contains("a and b"), "{msg}");
    // random_gamma_grad is loops, as in JAX: reverse mode is the while loop's error.
    let msg = panic_message(|| {
        grad(|a: Array| lax::random_gamma_grad(&a, &q).sum(None, false))(x.clone());
    });
    assert!(msg.contains("while"), "{msg}");
    let msg = panic_message(|| {
        lax::igamma(&x, &Array::from_vec(vec![1.0f32, 2.0], &[2]));
    });
    assert!(
        msg.contains("lax.igamma") && msg.contains("float64, float32"),
        "{msg}"
    );
    let lhs = Array::ones(&[4, 3], DType::F32);
    let rhs = Array::ones(&[2, 2, 5], DType::F32);
    let sizes = Array::from_vec(vec![2i32, 2], &[2]);
    let msg = panic_message(|| {
        lax::ragged_dot(&lhs, &rhs, &sizes, None, None);
    });
    assert!(
        msg.contains("lax.ragged_dot") && msg.contains("f32[2,2,5]"),
        "{msg}"
    );
}

/// JAX's rule: igamma's derivative in `a` is igamma_grad_a (the golden file checks both
/// against JAX; this checks that grad uses the one).
#[test]
fn igamma_grad_in_a_is_igamma_grad_a() {
    let a = Array::from_vec(vec![0.7f64, 2.5, 6.0], &[3]);
    let x = Array::from_vec(vec![0.3f64, 4.0, 5.5], &[3]);
    let g = grad(|a: Array| lax::igamma(&a, &x).sum(None, false))(a.clone());
    let want = lax::igamma_grad_a(&a, &x);
    assert_eq!(g.to_vec::<f64>(), want.to_vec::<f64>());
}
