//! The derivative of every differentiable op against JAX 0.10.2: `tests/golden/grads.json`
//! (written by `tests/golden/gen_grads.py`) holds, per case, the op's inputs, a cotangent `ct`
//! and JAX's `jax.vjp(f, *primals)[1](ct)`, and tangents and JAX's `jax.jvp` output, where
//! `f` is the op as a function of the case's float inputs (`diff`; integer indices, conditions
//! and Rust scalars are held fixed). Each case runs `vjp` + `Pullback::call` and `jvp`
//! eagerly and under `jit`; all must match JAX within the case's tolerance, with JAX's dtypes
//! and shapes. The op names map to the Rust API exactly as in `tests/golden_ops.rs`.

use jaxrs::prelude::*;
mod common;

use common::golden::*;
use jaxrs::{jvp, vjp};
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};

struct Case {
    name: String,
    op: String,
    params: Value,
    inputs: Vec<In>,
    /// Positions in `inputs` of the differentiated (float array) operands.
    diff: Vec<usize>,
    output: Value,
    ct: Array,
    vjp: Vec<Value>,
    tangents: Vec<Array>,
    jvp: Value,
    jvp_supported: bool,
    rtol: f64,
    atol: f64,
}

// ---------------------------------------------------------------------------------------------
// Reading the golden file (helpers as in tests/golden_ops.rs)

fn load() -> Vec<Case> {
    let path = format!("{}/tests/golden/grads.json", env!("CARGO_MANIFEST_DIR"));
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
            diff: usizes(&c["diff"]),
            output: c["output"].clone(),
            ct: array(&c["ct"]),
            vjp: c["vjp"].as_array().unwrap().clone(),
            tangents: c["tangents"]
                .as_array()
                .unwrap()
                .iter()
                .map(array)
                .collect(),
            jvp: c["jvp"].clone(),
            jvp_supported: c["jvp_supported"].as_bool().unwrap(),
            rtol: c["rtol"].as_f64().unwrap(),
            atol: c["atol"].as_f64().unwrap(),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Op names -> the Rust API (as in tests/golden_ops.rs, differentiable ops only)

fn op_of_diff(c: &Case) -> impl Fn(Vec<Array>) -> Array + '_ {
    move |d: Vec<Array>| {
        let mut ins = c.inputs.clone();
        assert_eq!(d.len(), c.diff.len(), "{}: operand count", c.name);
        for (&i, a) in c.diff.iter().zip(d) {
            ins[i] = In::Arr(a);
        }
        apply(&c.op, &c.params, &ins)
    }
}

fn primals(c: &Case) -> Vec<Array> {
    c.diff.iter().map(|&i| arr(&c.inputs[i]).clone()).collect()
}

/// What one mode computed: the output, the VJP per differentiated operand, the JVP.
struct Got {
    output: Array,
    vjp: Vec<Array>,
    jvp: Option<Array>,
}

fn run_eager(c: &Case) -> Got {
    let f = op_of_diff(c);
    let xs = primals(c);
    let (output, pullback) = vjp(&f, &xs);
    let grads: Vec<Array> = pullback.call(&c.ct);
    let jv = c.jvp_supported.then(|| jvp(&f, &xs, &c.tangents).1);
    Got {
        output,
        vjp: grads,
        jvp: jv,
    }
}

/// The same under `jit`: one program computing the output, the VJP and (when jaxrs has a
/// forward-mode rule for the op) the JVP.
fn run_jit(c: &Case) -> Got {
    let f = op_of_diff(c);
    let xs = primals(c);
    if c.jvp_supported {
        let step = jit(|(xs, ct, ts): (Vec<Array>, Array, Vec<Array>)| {
            let (y, pullback) = vjp(&f, &xs);
            let g: Vec<Array> = pullback.call(&ct);
            let (_, t) = jvp(&f, &xs, &ts);
            (y, g, t)
        });
        let (output, vjp, jv) = step.call((xs, c.ct.clone(), c.tangents.clone()));
        Got {
            output,
            vjp,
            jvp: Some(jv),
        }
    } else {
        let step = jit(|(xs, ct): (Vec<Array>, Array)| {
            let (y, pullback) = vjp(&f, &xs);
            let g: Vec<Array> = pullback.call(&ct);
            (y, g)
        });
        let (output, vjp) = step.call((xs, c.ct.clone()));
        Got {
            output,
            vjp,
            jvp: None,
        }
    }
}

fn compare(c: &Case, what: &str, got: &Array, want: &Value) -> Result<(), String> {
    let want_dtype = dtype(&want["dtype"]);
    let want_shape = shape(&want["shape"]);
    if got.dtype() != want_dtype || got.shape() != want_shape.as_slice() {
        return Err(format!(
            "{what}: got {:?}, want {}{want_shape:?}",
            got.aval(),
            want_dtype.name()
        ));
    }
    let want: Vec<f64> = want["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(number)
        .collect();
    let got_v = got.to_f64_vec();
    if let Some((i, g, w)) = first_mismatch(&got_v, &want, c.rtol, c.atol) {
        return Err(format!(
            "{what}: element {i}: got {g}, want {w} (rtol {}, atol {}); got {got_v:?}, want {want:?}",
            c.rtol, c.atol
        ));
    }
    Ok(())
}

fn check(c: &Case, got: &Got, mode: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let mut push = |r: Result<(), String>| {
        if let Err(e) = r {
            errs.push(format!("{mode}: {e}"));
        }
    };
    push(compare(c, "output", &got.output, &c.output));
    if got.vjp.len() != c.vjp.len() {
        push(Err(format!("{} VJPs, want {}", got.vjp.len(), c.vjp.len())));
    }
    for (k, (g, w)) in got.vjp.iter().zip(&c.vjp).enumerate() {
        push(compare(c, &format!("vjp[{k}]"), g, w));
    }
    if let Some(jv) = &got.jvp {
        push(compare(c, "jvp", jv, &c.jvp));
    }
    errs
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Runs every case whose op is in `ops`, except those named in `skip` (or only those named in
/// `only`, when not empty), eagerly and under jit, and asserts that all match JAX.
fn run_cases(ops: &[&str], skip: &[&str], only: &[&str]) {
    let all = load();
    for name in skip.iter().chain(only) {
        assert!(
            all.iter()
                .any(|c| c.name == *name && ops.contains(&c.op.as_str())),
            "no case {name} among {ops:?}"
        );
    }
    let cases: Vec<Case> = all
        .into_iter()
        .filter(|c| ops.contains(&c.op.as_str()))
        .filter(|c| !skip.contains(&c.name.as_str()))
        .filter(|c| only.is_empty() || only.contains(&c.name.as_str()))
        .collect();
    assert!(!cases.is_empty(), "no cases for {ops:?}");
    let mut failures = Vec::new();
    for c in &cases {
        for (mode, run) in [
            ("eager", run_eager as fn(&Case) -> Got),
            ("jit", run_jit as fn(&Case) -> Got),
        ] {
            match catch_unwind(AssertUnwindSafe(|| run(c))) {
                Ok(got) => failures.extend(
                    check(c, &got, mode)
                        .into_iter()
                        .map(|e| format!("{}: {e}", c.name)),
                ),
                Err(p) => {
                    failures.push(format!("{}: {mode} panicked: {}", c.name, panic_message(p)))
                }
            }
        }
        if !c.jvp_supported {
            // A reverse-mode-only op (a custom_vjp, like JAX's) refuses forward mode clearly.
            let r = catch_unwind(AssertUnwindSafe(|| {
                jvp(op_of_diff(c), &primals(c), &c.tangents)
            }));
            match r {
                Ok(_) => failures.push(format!("{}: jvp of a custom_vjp op did not panic", c.name)),
                Err(p) => {
                    let msg = panic_message(p);
                    if !msg.contains("reverse mode only") {
                        failures.push(format!("{}: unexpected jvp panic: {msg}", c.name));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures in {} cases:\n{}",
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

const UNARY: &[&str] = &[
    "neg",
    "exp",
    "log",
    "log1p",
    "expm1",
    "tanh",
    "logistic",
    "sin",
    "cos",
    "sqrt",
    "rsqrt",
    "abs",
    "sign",
    "floor",
    "ceil",
    "round",
    "erf",
    "relu",
    "gelu_tanh",
    "gelu_exact",
    "integer_pow",
];
const BINARY: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "floor_divide",
    "fmod",
    "pow",
    "maximum",
    "minimum",
    "where",
];
const REDUCE: &[&str] = &[
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "logsumexp",
    "softmax",
    "log_softmax",
    "cumsum",
];
const LINALG: &[&str] = &["matmul", "dot_general", "norm", "einsum"];
const SHAPE: &[&str] = &[
    "reshape",
    "transpose",
    "broadcast_to",
    "expand_dims",
    "squeeze",
    "concatenate",
    "stack",
    "slice",
    "pad",
];
const INDEX: &[&str] = &[
    "dynamic_slice",
    "dynamic_update_slice",
    "take",
    "take_along_axis",
    "astype",
];
const NUMERIC: &[&str] = &[
    "softplus",
    "logaddexp",
    "clip",
    "nan_to_num",
    "var",
    "std",
    "tril",
    "triu",
];
const SORT: &[&str] = &["sort", "top_k_values"];
const SCATTER: &[&str] = &["at_set", "at_add", "at_mul", "at_min", "at_max", "at_get"];

#[test]
fn every_case_has_a_test() {
    let groups = [
        UNARY, BINARY, REDUCE, LINALG, SHAPE, INDEX, NUMERIC, SORT, SCATTER,
    ];
    for c in load() {
        assert!(
            groups.iter().any(|g| g.contains(&c.op.as_str())),
            "{}: op {} is in no test",
            c.name,
            c.op
        );
    }
}

#[test]
fn unary_derivatives_match_jax() {
    run_cases(UNARY, &[], &[]);
}

#[test]
fn binary_derivatives_match_jax() {
    run_cases(BINARY, &[], &[]);
}

#[test]
fn reduction_derivatives_match_jax() {
    run_cases(REDUCE, &[], &[]);
}

#[test]
fn linalg_derivatives_match_jax() {
    run_cases(LINALG, &[], &[]);
}

#[test]
fn shape_op_derivatives_match_jax() {
    run_cases(SHAPE, &[], &[]);
}

#[test]
fn index_and_cast_derivatives_match_jax() {
    run_cases(INDEX, &[], &[]);
}

#[test]
fn numeric_helper_derivatives_match_jax() {
    run_cases(NUMERIC, &[], &[]);
}

#[test]
fn sort_derivatives_match_jax() {
    run_cases(SORT, &[], &[]);
}

#[test]
fn indexed_update_derivatives_match_jax() {
    run_cases(SCATTER, &[], &[]);
}
