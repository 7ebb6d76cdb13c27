//! `jaxrs::lax`'s elementwise primitives against JAX 0.10.2
//! (`tests/golden/lax_elementwise.json`, written by `tests/golden/gen_lax_elementwise.py`):
//! values eagerly and under `jit`, JVP and VJP, `check_grads`, and `vmap` with the batch axis
//! first and last (`tests/common/cases.rs`); and lax's refusal to promote.

mod common;

use common::cases::{a, check_file, p_i64, p_str};
use common::golden::In;
use common::panic_message;
use jaxrs::lax::{self, RoundingMethod};
use jaxrs::prelude::*;
use serde_json::Value;

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let x0 = || a(x, 0);
    let x1 = || a(x, 1);
    let dt = |k: &str| DType::from_name(p_str(p, k)).expect("dtype");
    let unary: Option<fn(&Array) -> Array> = match op {
        "lax.exp" => Some(lax::exp),
        "lax.exp2" => Some(lax::exp2),
        "lax.expm1" => Some(lax::expm1),
        "lax.log" => Some(lax::log),
        "lax.log1p" => Some(lax::log1p),
        "lax.logistic" => Some(lax::logistic),
        "lax.sqrt" => Some(lax::sqrt),
        "lax.rsqrt" => Some(lax::rsqrt),
        "lax.cbrt" => Some(lax::cbrt),
        "lax.sin" => Some(lax::sin),
        "lax.cos" => Some(lax::cos),
        "lax.tan" => Some(lax::tan),
        "lax.asin" => Some(lax::asin),
        "lax.acos" => Some(lax::acos),
        "lax.atan" => Some(lax::atan),
        "lax.sinh" => Some(lax::sinh),
        "lax.cosh" => Some(lax::cosh),
        "lax.tanh" => Some(lax::tanh),
        "lax.asinh" => Some(lax::asinh),
        "lax.acosh" => Some(lax::acosh),
        "lax.atanh" => Some(lax::atanh),
        "lax.erf" => Some(lax::erf),
        "lax.erfc" => Some(lax::erfc),
        "lax.erf_inv" => Some(lax::erf_inv),
        "lax.lgamma" => Some(lax::lgamma),
        "lax.digamma" => Some(lax::digamma),
        "lax.neg" => Some(lax::neg),
        "lax.abs" => Some(lax::abs),
        "lax.sign" => Some(lax::sign),
        "lax.square" => Some(lax::square),
        "lax.reciprocal" => Some(lax::reciprocal),
        "lax.floor" => Some(lax::floor),
        "lax.ceil" => Some(lax::ceil),
        "lax.is_finite" => Some(lax::is_finite),
        "lax.bitwise_not" => Some(lax::bitwise_not),
        "lax.population_count" => Some(lax::population_count),
        "lax.clz" => Some(lax::clz),
        _ => None,
    };
    if let Some(f) = unary {
        return vec![f(x0())];
    }
    let binary: Option<fn(&Array, &Array) -> Array> = match op {
        "lax.add" => Some(lax::add),
        "lax.sub" => Some(lax::sub),
        "lax.mul" => Some(lax::mul),
        "lax.div" => Some(lax::div),
        "lax.rem" => Some(lax::rem),
        "lax.pow" => Some(lax::pow),
        "lax.max" => Some(lax::max),
        "lax.min" => Some(lax::min),
        "lax.atan2" => Some(lax::atan2),
        "lax.nextafter" => Some(lax::nextafter),
        "lax.bitwise_and" => Some(lax::bitwise_and),
        "lax.bitwise_or" => Some(lax::bitwise_or),
        "lax.bitwise_xor" => Some(lax::bitwise_xor),
        "lax.shift_left" => Some(lax::shift_left),
        "lax.shift_right_arithmetic" => Some(lax::shift_right_arithmetic),
        "lax.shift_right_logical" => Some(lax::shift_right_logical),
        "lax.eq" => Some(lax::eq),
        "lax.ne" => Some(lax::ne),
        "lax.lt" => Some(lax::lt),
        "lax.le" => Some(lax::le),
        "lax.gt" => Some(lax::gt),
        "lax.ge" => Some(lax::ge),
        _ => None,
    };
    if let Some(f) = binary {
        return vec![f(x0(), x1())];
    }
    vec![match op {
        "lax.integer_pow" => lax::integer_pow(x0(), p_i64(p, "y") as i32),
        "lax.round" => {
            let method = p["method"].as_i64().map(|m| match m {
                0 => RoundingMethod::AwayFromZero,
                _ => RoundingMethod::ToNearestEven,
            });
            lax::round(x0(), method)
        }
        "lax.clamp" => lax::clamp(x0(), x1(), a(x, 2)),
        "lax.select" => lax::select(x0(), x1(), a(x, 2)),
        "lax.select_n" => {
            let cases: Vec<&Array> = (1..x.len()).map(|i| a(x, i)).collect();
            lax::select_n(x0(), &cases)
        }
        "lax.convert_element_type" => lax::convert_element_type(x0(), dt("dtype")),
        "lax.bitcast_convert_type" => lax::bitcast_convert_type(x0(), dt("dtype")),
        "lax.reduce_precision" => lax::reduce_precision(
            x0(),
            p_i64(p, "exponent_bits") as u32,
            p_i64(p, "mantissa_bits") as u32,
        ),
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn lax_elementwise_matches_jax() {
    check_file("lax_elementwise", apply);
}

#[test]
fn lax_does_not_promote() {
    let f32s = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    let f64s = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    let ints = Array::from_vec(vec![1i32, 2], &[2]);
    let msg = panic_message(|| {
        lax::add(&f32s, &f64s);
    });
    assert!(
        msg.contains("lax.add")
            && msg.contains("float32, float64")
            && msg.contains("lax_elementwise.rs"),
        "{msg}"
    );
    let msg = panic_message(|| {
        lax::exp(&ints);
    });
    assert!(msg.contains("lax.exp") && msg.contains("int32"), "{msg}");
    let msg = panic_message(|| {
        lax::shift_left(&f32s, &f32s);
    });
    assert!(
        msg.contains("lax.shift_left") && msg.contains("float32"),
        "{msg}"
    );
    let three = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
    let msg = panic_message(|| {
        lax::mul(&f32s, &three);
    });
    assert!(msg.contains("lax.mul") && msg.contains("shapes"), "{msg}");
}
