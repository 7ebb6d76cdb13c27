//! The checks every JAX-surface name goes through, read from the golden files that
//! `tests/golden/jaxcases.py` writes (`jnp_*.json`, `lax_*.json`): a case's outputs eagerly and
//! under `jit`, its JVP and VJP against JAX's, `check_grads` for float64 cases, and `vmap` with
//! the batch axis first and last. A test file maps op names to Rust calls with an [`Apply`]
//! function and calls [`check_file`].
//!
//! The jitted checks are grouped: one program holds every case of a file (and one every
//! vmapped case, one every derivative), so a file costs a handful of compiles, not one per
//! case. Eager calls come first and one at a time, so a failure names its case.
#![allow(dead_code)]

use super::golden::{array, dtype, f64_parts, first_mismatch, operand, shape, In};
use jaxrs::prelude::*;
use serde_json::Value;

/// Maps a case to Rust calls: the op name, its params and its inputs (arrays may be traced),
/// to its outputs.
pub type Apply = fn(op: &str, params: &Value, inputs: &[In]) -> Vec<Array>;

/// Derivative data of a case: which inputs, the tangents or cotangents, JAX's results.
pub struct Derivative {
    pub wrt: Vec<usize>,
    pub seeds: Vec<Array>,
    pub want: Vec<Value>,
    pub rtol: f64,
    pub atol: f64,
}

pub struct Batched {
    pub axes: Vec<Option<usize>>,
    pub inputs: Vec<In>,
    pub want: Vec<Value>,
}

pub struct Case {
    pub name: String,
    pub op: String,
    pub params: Value,
    pub inputs: Vec<In>,
    pub want: Vec<Value>,
    pub rtol: f64,
    pub atol: f64,
    pub jit: bool,
    pub check_grads: bool,
    pub jvp: Option<Derivative>,
    pub vjp: Option<Derivative>,
    pub vmap: Option<Batched>,
}

fn derivative(v: &Value, seeds_key: &str) -> Derivative {
    Derivative {
        wrt: v["wrt"]
            .as_array()
            .expect("wrt")
            .iter()
            .map(|i| i.as_u64().expect("index") as usize)
            .collect(),
        seeds: v[seeds_key]
            .as_array()
            .expect("seeds")
            .iter()
            .map(array)
            .collect(),
        want: v["outputs"].as_array().expect("outputs").clone(),
        rtol: v["rtol"].as_f64().unwrap_or(0.0),
        atol: v["atol"].as_f64().unwrap_or(0.0),
    }
}

/// Reads `tests/golden/{file}.json`.
pub fn load_cases(file: &str) -> Vec<Case> {
    let path = format!("{}/tests/golden/{file}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("golden JSON");
    doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().expect("name").to_string(),
            op: c["op"].as_str().expect("op").to_string(),
            params: c["params"].clone(),
            inputs: c["inputs"]
                .as_array()
                .expect("inputs")
                .iter()
                .map(operand)
                .collect(),
            want: c["outputs"].as_array().expect("outputs").clone(),
            rtol: c["rtol"].as_f64().unwrap_or(0.0),
            atol: c["atol"].as_f64().unwrap_or(0.0),
            jit: c.get("jit").and_then(Value::as_bool).unwrap_or(true),
            check_grads: c
                .get("check_grads")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            jvp: c.get("jvp").map(|v| derivative(v, "tangents")),
            vjp: c.get("vjp").map(|v| derivative(v, "cotangents")),
            vmap: c.get("vmap").map(|v| Batched {
                axes: v["axes"]
                    .as_array()
                    .expect("axes")
                    .iter()
                    .map(|a| a.as_u64().map(|a| a as usize))
                    .collect(),
                inputs: v["inputs"]
                    .as_array()
                    .expect("inputs")
                    .iter()
                    .map(operand)
                    .collect(),
                want: v["outputs"].as_array().expect("outputs").clone(),
            }),
        })
        .collect()
}

/// Panics unless `got` has `want`'s dtype and shape and its values within tolerance.
pub fn assert_matches(what: &str, got: &Array, want: &Value, rtol: f64, atol: f64) {
    let (want_dtype, want_shape) = (dtype(&want["dtype"]), shape(&want["shape"]));
    assert_eq!(got.dtype(), want_dtype, "{what}: dtype");
    assert_eq!(got.shape(), &want_shape[..], "{what}: shape");
    let want_values = f64_parts(&array(want));
    if let Some((i, g, w)) = first_mismatch(&f64_parts(got), &want_values, rtol, atol) {
        panic!("{what}: element {i} is {g}, JAX gives {w} (rtol {rtol}, atol {atol})");
    }
}

fn assert_all(what: &str, got: &[Array], want: &[Value], rtol: f64, atol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: number of outputs");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_matches(&format!("{what} output {k}"), g, w, rtol, atol);
    }
}

/// The array operands of `inputs`, in order (Rust scalars stay Rust scalars).
fn arrays_of(inputs: &[In]) -> Vec<Array> {
    inputs
        .iter()
        .filter_map(|i| match i {
            In::Arr(a) => Some(a.clone()),
            _ => None,
        })
        .collect()
}

/// `inputs` with its array operands replaced, in order, by `arrays`.
fn with_arrays(inputs: &[In], arrays: &[Array]) -> Vec<In> {
    let mut next = arrays.iter();
    inputs
        .iter()
        .map(|i| match i {
            In::Arr(_) => In::Arr(next.next().expect("enough arrays").clone()),
            other => other.clone(),
        })
        .collect()
}

/// `inputs` with input `wrt[k]` replaced by `values[k]`.
fn with_wrt(inputs: &[In], wrt: &[usize], values: &[Array]) -> Vec<In> {
    let mut out = inputs.to_vec();
    for (&i, v) in wrt.iter().zip(values) {
        out[i] = In::Arr(v.clone());
    }
    out
}

fn float_inputs(inputs: &[In], wrt: &[usize]) -> Vec<Array> {
    wrt.iter()
        .map(|&i| match &inputs[i] {
            In::Arr(a) => a.clone(),
            _ => panic!("wrt names a scalar input"),
        })
        .collect()
}

/// The permutation moving axis 0 of a rank-`rank` array to the end.
fn zero_to_last(rank: usize) -> Vec<usize> {
    (1..rank).chain([0]).collect()
}

/// The permutation moving the last axis of a rank-`rank` array to the front.
fn last_to_zero(rank: usize) -> Vec<usize> {
    [rank - 1].into_iter().chain(0..rank - 1).collect()
}

/// Every check of every case in `tests/golden/{file}.json`; `apply` maps cases to Rust calls.
/// Returns the number of cases checked (a test may assert it covers what it expects). With
/// `JAXRS_CASES` set, only the cases whose name contains it are checked (to debug or time one
/// op: `JAXRS_CASES=sp.hyp2f1 cargo test --test scipy_special`).
pub fn check_file(file: &str, apply: Apply) -> usize {
    let mut cases = load_cases(file);
    assert!(!cases.is_empty(), "{file}: no cases");
    if let Ok(only) = std::env::var("JAXRS_CASES") {
        cases.retain(|c| c.name.contains(&only));
    }
    check_eager(&cases, apply);
    check_jit(&cases, apply);
    check_vmap(&cases, apply);
    check_derivatives(&cases, apply);
    check_numerical_grads(&cases, apply);
    cases.len()
}

pub fn check_eager(cases: &[Case], apply: Apply) {
    for c in cases {
        let got = apply(&c.op, &c.params, &c.inputs);
        assert_all(
            &format!("{} (eager)", c.name),
            &got,
            &c.want,
            c.rtol,
            c.atol,
        );
    }
}

/// All jittable cases as one jitted program.
pub fn check_jit(cases: &[Case], apply: Apply) {
    let cases: Vec<&Case> = cases.iter().filter(|c| c.jit).collect();
    let args: Vec<Vec<Array>> = cases.iter().map(|c| arrays_of(&c.inputs)).collect();
    let all = jit(|args: Vec<Vec<Array>>| -> Vec<Vec<Array>> {
        cases
            .iter()
            .zip(&args)
            .map(|(c, a)| apply(&c.op, &c.params, &with_arrays(&c.inputs, a)))
            .collect()
    })
    .call(args);
    for (c, got) in cases.iter().zip(&all) {
        assert_all(&format!("{} (jit)", c.name), got, &c.want, c.rtol, c.atol);
    }
}

/// Every vmapped case, inside one jitted program, twice: the batch axis first (inputs and
/// outputs), then last.
pub fn check_vmap(cases: &[Case], apply: Apply) {
    let cases: Vec<&Case> = cases.iter().filter(|c| c.vmap.is_some()).collect();
    if cases.is_empty() {
        return;
    }
    for last in [false, true] {
        let args: Vec<Vec<Array>> = cases
            .iter()
            .map(|c| {
                let b = c.vmap.as_ref().unwrap();
                let mut arrays = Vec::new();
                for (input, axis) in b.inputs.iter().zip(&b.axes) {
                    if let (In::Arr(a), Some(_)) = (input, axis) {
                        arrays.push(if last {
                            a.transpose(zero_to_last(a.rank()))
                        } else {
                            a.clone()
                        });
                    } else if let In::Arr(a) = input {
                        arrays.push(a.clone());
                    }
                }
                arrays
            })
            .collect();
        let all = jit(|args: Vec<Vec<Array>>| -> Vec<Vec<Array>> {
            cases
                .iter()
                .zip(args)
                .map(|(c, arrays)| {
                    let b = c.vmap.as_ref().unwrap();
                    let in_axes: Vec<Option<i64>> = b
                        .inputs
                        .iter()
                        .zip(&b.axes)
                        .filter(|(i, _)| matches!(i, In::Arr(_)))
                        .map(|(_, ax)| ax.map(|_| if last { -1 } else { 0 }))
                        .collect();
                    let out_axis: i64 = if last { -1 } else { 0 };
                    let inputs = &b.inputs;
                    vmap(
                        move |xs: Vec<Array>| apply(&c.op, &c.params, &with_arrays(inputs, &xs)),
                        in_axes,
                        out_axis,
                    )(arrays)
                })
                .collect()
        })
        .call(args);
        for (c, got) in cases.iter().zip(all) {
            let got: Vec<Array> = if last {
                got.iter()
                    .map(|g| g.transpose(last_to_zero(g.rank())))
                    .collect()
            } else {
                got
            };
            let what = format!(
                "{} (vmap, batch axis {})",
                c.name,
                if last { "last" } else { "first" }
            );
            assert_all(&what, &got, &c.vmap.as_ref().unwrap().want, c.rtol, c.atol);
        }
    }
}

/// Every case's JVP and VJP, in one jitted program, against JAX's.
pub fn check_derivatives(cases: &[Case], apply: Apply) {
    let cases: Vec<&Case> = cases
        .iter()
        .filter(|c| c.jit && (c.jvp.is_some() || c.vjp.is_some()))
        .collect();
    if cases.is_empty() {
        return;
    }
    type Seeds = (Vec<Array>, Vec<Array>, Vec<Array>);
    let args: Vec<Seeds> = cases
        .iter()
        .map(|c| {
            let jvp_seeds = c.jvp.as_ref().map(|d| d.seeds.clone()).unwrap_or_default();
            let vjp_seeds = c.vjp.as_ref().map(|d| d.seeds.clone()).unwrap_or_default();
            (arrays_of(&c.inputs), jvp_seeds, vjp_seeds)
        })
        .collect();
    let all = jit(|args: Vec<Seeds>| -> Vec<(Vec<Array>, Vec<Array>)> {
        cases
            .iter()
            .zip(args)
            .map(|(c, (arrays, tangents, cotangents))| {
                let inputs = with_arrays(&c.inputs, &arrays);
                let jvp_out = c.jvp.as_ref().map_or_else(Vec::new, |d| {
                    let f = |w: Vec<Array>| apply(&c.op, &c.params, &with_wrt(&inputs, &d.wrt, &w));
                    jvp(f, &float_inputs(&inputs, &d.wrt), &tangents).1
                });
                let vjp_out = c.vjp.as_ref().map_or_else(Vec::new, |d| {
                    let f = |w: Vec<Array>| apply(&c.op, &c.params, &with_wrt(&inputs, &d.wrt, &w));
                    vjp(f, &float_inputs(&inputs, &d.wrt)).1.call(&cotangents)
                });
                (jvp_out, vjp_out)
            })
            .collect()
    })
    .call(args);
    for (c, (jvp_got, vjp_got)) in cases.iter().zip(all) {
        if let Some(d) = &c.jvp {
            assert_all(
                &format!("{} (jvp)", c.name),
                &jvp_got,
                &d.want,
                d.rtol,
                d.atol,
            );
        }
        if let Some(d) = &c.vjp {
            assert_all(
                &format!("{} (vjp)", c.name),
                &vjp_got,
                &d.want,
                d.rtol,
                d.atol,
            );
        }
    }
}

/// `check_grads` (first order, both modes) on the cases that ask for it, each jitted.
pub fn check_numerical_grads(cases: &[Case], apply: Apply) {
    for c in cases.iter().filter(|c| c.check_grads) {
        let d = c
            .vjp
            .as_ref()
            .or(c.jvp.as_ref())
            .expect("check_grads needs wrt");
        let f = jit(|w: Vec<Array>| apply(&c.op, &c.params, &with_wrt(&c.inputs, &d.wrt, &w)));
        let at = float_inputs(&c.inputs, &d.wrt);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_grads(|w: Vec<Array>| f.call(w), &at, 1)
        }));
        if let Err(e) = result {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{} (check_grads): {msg}", c.name);
        }
    }
}

/// A param as an i64 (panics, naming the key, when absent).
pub fn p_i64(params: &Value, key: &str) -> i64 {
    params[key]
        .as_i64()
        .unwrap_or_else(|| panic!("param {key} missing or not an integer: {params}"))
}

/// A param as an f64.
pub fn p_f64(params: &Value, key: &str) -> f64 {
    params[key]
        .as_f64()
        .unwrap_or_else(|| panic!("param {key} missing or not a number: {params}"))
}

/// An optional integer param (absent or null: `None`).
pub fn p_opt_i64(params: &Value, key: &str) -> Option<i64> {
    params.get(key).and_then(Value::as_i64)
}

/// A param list of integers.
pub fn p_i64s(params: &Value, key: &str) -> Vec<i64> {
    params[key]
        .as_array()
        .unwrap_or_else(|| panic!("param {key} missing or not a list: {params}"))
        .iter()
        .map(|v| v.as_i64().expect("integer"))
        .collect()
}

/// An optional param list of integers (absent or null: `None`).
pub fn p_opt_i64s(params: &Value, key: &str) -> Option<Vec<i64>> {
    params
        .get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|v| v.as_i64().expect("integer")).collect())
}

pub fn p_bool(params: &Value, key: &str) -> bool {
    params.get(key).and_then(Value::as_bool).unwrap_or(false)
}

pub fn p_str<'a>(params: &'a Value, key: &str) -> &'a str {
    params[key]
        .as_str()
        .unwrap_or_else(|| panic!("param {key} missing or not a string: {params}"))
}

/// The array operand `i` of a case.
pub fn a(inputs: &[In], i: usize) -> &Array {
    match &inputs[i] {
        In::Arr(x) => x,
        _ => panic!("input {i} is not an array"),
    }
}
