//! `jaxrs::lax::gather` and the `lax::scatter*` family with explicit dimension numbers and each
//! out-of-bounds mode, against JAX 0.10.2 (`tests/golden/lax_slicing.json`, written by
//! `tests/golden/gen_lax_slicing.py`): values eagerly and under `jit`, JVP and VJP,
//! `check_grads`, and `vmap` with the batch axis first and last (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_bool, p_i64s};
use common::golden::In;
use jaxrs::lax::{
    self, GatherDimensionNumbers, GatherOptions, GatherScatterMode, ScatterDimensionNumbers,
    ScatterOptions,
};
use jaxrs::prelude::*;
use serde_json::Value;

fn dims(p: &Value, key: &str) -> Vec<usize> {
    p_i64s(p, key).into_iter().map(|v| v as usize).collect()
}

/// The case's `mode`, `None` where JAX was given none.
fn mode(p: &Value) -> Option<GatherScatterMode> {
    p.get("mode")
        .and_then(Value::as_str)
        .map(|m| GatherScatterMode::from_any(Some(m)))
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    if op == "lax.gather" {
        let d = GatherDimensionNumbers {
            offset_dims: dims(p, "offset_dims"),
            collapsed_slice_dims: dims(p, "collapsed_slice_dims"),
            start_index_map: dims(p, "start_index_map"),
            operand_batching_dims: dims(p, "operand_batching_dims"),
            start_indices_batching_dims: dims(p, "start_indices_batching_dims"),
        };
        let options = GatherOptions {
            mode: mode(p),
            fill_value: p.get("fill_value").and_then(Value::as_f64),
            ..Default::default()
        };
        return vec![lax::gather(
            a(x, 0),
            a(x, 1),
            &d,
            &dims(p, "slice_sizes"),
            options,
        )];
    }
    let d = ScatterDimensionNumbers {
        update_window_dims: dims(p, "update_window_dims"),
        inserted_window_dims: dims(p, "inserted_window_dims"),
        scatter_dims_to_operand_dims: dims(p, "scatter_dims_to_operand_dims"),
        operand_batching_dims: dims(p, "operand_batching_dims"),
        scatter_indices_batching_dims: dims(p, "scatter_indices_batching_dims"),
    };
    let options = ScatterOptions {
        mode: mode(p),
        unique_indices: p_bool(p, "unique_indices"),
        ..Default::default()
    };
    if op == "lax.scatter_apply" {
        let func: fn(&Array) -> Array = match p["func"].as_str().unwrap() {
            "sin" => |v| lax::sin(v),
            "double" => |v| v * 2.0,
            "neg" => |v| -v,
            other => panic!("unknown func {other}"),
        };
        let update_shape = dims(p, "update_shape");
        return vec![lax::scatter_apply(
            a(x, 0),
            a(x, 1),
            func,
            &d,
            &update_shape,
            options,
        )];
    }
    let f = match op {
        "lax.scatter" => lax::scatter,
        "lax.scatter_add" => lax::scatter_add,
        "lax.scatter_sub" => lax::scatter_sub,
        "lax.scatter_mul" => lax::scatter_mul,
        "lax.scatter_min" => lax::scatter_min,
        "lax.scatter_max" => lax::scatter_max,
        other => panic!("no case for {other}"),
    };
    vec![f(a(x, 0), a(x, 1), a(x, 2), &d, options)]
}

#[test]
fn gather_and_scatters_match_jax() {
    assert!(check_file("lax_slicing", apply) >= 45);
}

#[test]
fn gather_scatter_mode_from_any_reads_jax_strings() {
    use GatherScatterMode::*;
    assert_eq!(GatherScatterMode::from_any(None), FillOrDrop);
    assert_eq!(GatherScatterMode::from_any(Some("fill")), FillOrDrop);
    assert_eq!(GatherScatterMode::from_any(Some("drop")), FillOrDrop);
    assert_eq!(GatherScatterMode::from_any(Some("clip")), Clip);
    assert_eq!(
        GatherScatterMode::from_any(Some("promise_in_bounds")),
        PromiseInBounds
    );
}

#[test]
#[should_panic(expected = "unknown gather mode \"wrap\"")]
fn gather_scatter_mode_from_any_names_an_unknown_mode() {
    GatherScatterMode::from_any(Some("wrap"));
}

#[test]
#[should_panic(expected = "lax.scatter_add")]
fn scatter_refuses_updates_of_another_dtype() {
    let x = Array::zeros(&[3], DType::F32);
    let i = Array::from_vec(vec![0i32], &[1, 1]);
    let u = Array::zeros(&[1], DType::F64);
    let d = ScatterDimensionNumbers {
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        ..Default::default()
    };
    lax::scatter_add(&x, &i, &u, &d, ScatterOptions::default());
}
