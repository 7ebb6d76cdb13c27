//! Every op against JAX 0.10.2: the golden files in `tests/golden/` (written by
//! `tests/golden/gen.py`) hold inputs and JAX's outputs; each case runs eagerly and under
//! `jit`, and both must match JAX within the case's tolerance, with the same dtype, shape
//! and (for Rust-scalar operands) weak type.

use jaxrs::prelude::*;
mod common;

use common::golden::*;
use serde_json::Value;

struct Case {
    name: String,
    op: String,
    params: Value,
    inputs: Vec<In>,
    want: Value,
    rtol: f64,
    atol: f64,
    want_weak: Option<bool>,
}

fn load(file: &str) -> Vec<Case> {
    let path = format!("{}/tests/golden/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("golden JSON");
    doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().to_string(),
            op: c["op"].as_str().unwrap().to_string(),
            params: c["params"].clone(),
            inputs: c["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(operand)
                .collect(),
            want: c["output"].clone(),
            rtol: c["rtol"].as_f64().unwrap_or(0.0),
            atol: c["atol"].as_f64().unwrap_or(0.0),
            want_weak: c.get("output_weak_type").and_then(Value::as_bool),
        })
        .collect()
}

/// Runs `c` under `jit`: its array operands become the jitted function's inputs.
fn apply_jit(c: &Case) -> Array {
    let arrays: Vec<Array> = c
        .inputs
        .iter()
        .filter_map(|i| {
            if let In::Arr(a) = i {
                Some(a.clone())
            } else {
                None
            }
        })
        .collect();
    let f = jit(|xs: Vec<Array>| {
        let mut it = xs.into_iter();
        let ins: Vec<In> = c
            .inputs
            .iter()
            .map(|i| {
                if let In::Arr(_) = i {
                    In::Arr(it.next().unwrap())
                } else {
                    i.clone()
                }
            })
            .collect();
        apply(&c.op, &c.params, &ins)
    });
    f.call(arrays)
}

fn check(c: &Case, got: &Array, mode: &str) -> Result<(), String> {
    let want_dtype = dtype(&c.want["dtype"]);
    let want_shape = shape(&c.want["shape"]);
    if got.dtype() != want_dtype || got.shape() != want_shape.as_slice() {
        return Err(format!(
            "{mode}: got {:?}, want {}{want_shape:?}",
            got.aval(),
            want_dtype.name()
        ));
    }
    if let Some(w) = c.want_weak {
        if got.is_weak() != w {
            return Err(format!(
                "{mode}: weak type {} but JAX says {w}",
                got.is_weak()
            ));
        }
    }
    let want: Vec<f64> = c.want["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(number)
        .collect();
    if let Some((i, g, w)) = first_mismatch(&got.to_f64_vec(), &want, c.rtol, c.atol) {
        return Err(format!(
            "{mode}: element {i}: got {g}, want {w} (rtol {}, atol {})",
            c.rtol, c.atol
        ));
    }
    Ok(())
}

fn run_file(file: &str) {
    let cases = load(file);
    assert!(!cases.is_empty(), "{file} has no cases");
    let mut failures = Vec::new();
    for c in &cases {
        let eager = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            apply(&c.op, &c.params, &c.inputs)
        }));
        let jitted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| apply_jit(c)));
        for (mode, result) in [("eager", eager), ("jit", jitted)] {
            match result {
                Ok(got) => {
                    if let Err(e) = check(c, &got, mode) {
                        failures.push(format!("{}: {e}", c.name));
                    }
                }
                Err(p) => {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
                    failures.push(format!(
                        "{}: {mode} panicked: {}",
                        c.name,
                        msg.unwrap_or_default()
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases in {file} differ from JAX:\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn elementwise_ops_match_jax() {
    run_file("ops_elementwise.json");
}

#[test]
fn reductions_match_jax() {
    run_file("ops_reduce.json");
}

#[test]
fn shape_ops_match_jax() {
    run_file("ops_shape.json");
}

#[test]
fn index_ops_match_jax() {
    run_file("ops_index.json");
}

#[test]
fn linalg_ops_match_jax() {
    run_file("ops_linalg.json");
}

#[test]
fn constructors_and_casts_match_jax() {
    run_file("ops_misc.json");
}

#[test]
fn numeric_helpers_match_jax() {
    run_file("ops_numeric.json");
}

#[test]
fn sorting_matches_jax() {
    run_file("ops_sort.json");
}

#[test]
fn indexed_updates_match_jax() {
    run_file("ops_scatter.json");
}

#[test]
fn einsum_matches_jax() {
    run_file("ops_einsum.json");
}
