//! Every op against JAX 0.10.2: the golden files in `tests/golden/` (written by
//! `tests/golden/gen.py`) hold inputs and JAX's outputs; each case runs eagerly and under
//! `jit`, and both must match JAX within the case's tolerance, with the same dtype, shape
//! and (for Rust-scalar operands) weak type.

use jaxrs::prelude::*;
use jaxrs::{stop_gradient, where_, DotDims};
use serde_json::Value;

/// An operand of a case: an array, or a Rust scalar literal.
#[derive(Clone)]
enum In {
    Arr(Array),
    Float(f64),
    Int(i64),
    Bool(bool),
}

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

fn number(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().expect("number"),
        Value::Bool(b) => *b as u8 as f64,
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("bad number {other}"),
        },
        other => panic!("bad number {other}"),
    }
}

fn dtype(v: &Value) -> DType {
    DType::from_name(v.as_str().expect("dtype name")).expect("known dtype")
}

fn shape(v: &Value) -> Vec<usize> {
    v.as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("ints")
        .iter()
        .map(|d| d.as_i64().expect("int"))
        .collect()
}

fn usizes(v: &Value) -> Vec<usize> {
    ints(v).into_iter().map(|x| x as usize).collect()
}

fn array(v: &Value) -> Array {
    let values: Vec<f64> = v["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(number)
        .collect();
    Array::from_f64s(&values, &shape(&v["shape"]), dtype(&v["dtype"]))
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
                .map(|i| match i.get("scalar") {
                    Some(Value::Bool(b)) => In::Bool(*b),
                    Some(Value::Number(n)) if n.is_f64() => In::Float(n.as_f64().unwrap()),
                    Some(Value::Number(n)) => In::Int(n.as_i64().unwrap()),
                    Some(other) => panic!("bad scalar {other}"),
                    None => In::Arr(array(i)),
                })
                .collect(),
            want: c["output"].clone(),
            rtol: c["rtol"].as_f64().unwrap_or(0.0),
            atol: c["atol"].as_f64().unwrap_or(0.0),
            want_weak: c.get("output_weak_type").and_then(Value::as_bool),
        })
        .collect()
}

fn arr(x: &In) -> &Array {
    match x {
        In::Arr(a) => a,
        _ => panic!("expected an array operand"),
    }
}

/// `x <op> y` where either side may be a Rust scalar.
fn binary(op: &str, x: &In, y: &In) -> Array {
    macro_rules! with_rhs {
        ($a:expr, $m:ident) => {
            match y {
                In::Arr(b) => $a.$m(b),
                In::Float(s) => $a.$m(*s),
                In::Int(s) => $a.$m(*s),
                In::Bool(s) => $a.$m(*s),
            }
        };
    }
    macro_rules! dispatch {
        ($a:expr) => {
            match op {
                "add" => with_rhs!($a, add),
                "sub" => with_rhs!($a, sub),
                "mul" => with_rhs!($a, mul),
                "div" => with_rhs!($a, div),
                "rem" => with_rhs!($a, rem),
                "pow" => with_rhs!($a, pow),
                "maximum" => with_rhs!($a, maximum),
                "minimum" => with_rhs!($a, minimum),
                "eq" => with_rhs!($a, eq),
                "ne" => with_rhs!($a, ne),
                "lt" => with_rhs!($a, lt),
                "le" => with_rhs!($a, le),
                "gt" => with_rhs!($a, gt),
                "ge" => with_rhs!($a, ge),
                "logical_and" => with_rhs!($a, logical_and),
                "logical_or" => with_rhs!($a, logical_or),
                other => panic!("unknown binary op {other}"),
            }
        };
    }
    match (x, y) {
        (In::Arr(a), _) => dispatch!(a),
        (In::Float(s), In::Arr(b)) => match op {
            "sub" => *s - b,
            "div" => *s / b,
            "add" => *s + b,
            "mul" => *s * b,
            other => panic!("scalar-left {other} not covered"),
        },
        _ => panic!("two scalars"),
    }
}

fn apply(c: &Case, x: &[In]) -> Array {
    let p = &c.params;
    let axes = |k: &str| -> Option<Vec<i64>> { p[k].as_array().map(|_| ints(&p[k])) };
    let axis = || p["axis"].as_i64().expect("axis");
    let keepdims = || p["keepdims"].as_bool().unwrap_or(false);
    macro_rules! reduce {
        ($m:ident) => {
            match axes("axes") {
                None => arr(&x[0]).$m(None, keepdims()),
                Some(list) => arr(&x[0]).$m(list, keepdims()),
            }
        };
    }
    let all: Vec<Array> = x
        .iter()
        .filter_map(|i| {
            if let In::Arr(a) = i {
                Some(a.clone())
            } else {
                None
            }
        })
        .collect();
    match c.op.as_str() {
        "add" | "sub" | "mul" | "div" | "rem" | "pow" | "maximum" | "minimum" | "eq" | "ne"
        | "lt" | "le" | "gt" | "ge" | "logical_and" | "logical_or" => binary(&c.op, &x[0], &x[1]),
        "neg" => -arr(&x[0]),
        "exp" => arr(&x[0]).exp(),
        "log" => arr(&x[0]).log(),
        "log1p" => arr(&x[0]).log1p(),
        "expm1" => arr(&x[0]).expm1(),
        "tanh" => arr(&x[0]).tanh(),
        "logistic" => arr(&x[0]).logistic(),
        "sin" => arr(&x[0]).sin(),
        "cos" => arr(&x[0]).cos(),
        "sqrt" => arr(&x[0]).sqrt(),
        "rsqrt" => arr(&x[0]).rsqrt(),
        "abs" => arr(&x[0]).abs(),
        "sign" => arr(&x[0]).sign(),
        "floor" => arr(&x[0]).floor(),
        "ceil" => arr(&x[0]).ceil(),
        "round" => arr(&x[0]).round(),
        "erf" => arr(&x[0]).erf(),
        "relu" => arr(&x[0]).relu(),
        "gelu_tanh" => arr(&x[0]).gelu(),
        "gelu_exact" => arr(&x[0]).gelu_exact(),
        "logical_not" => arr(&x[0]).logical_not(),
        "integer_pow" => arr(&x[0]).powi(p["n"].as_i64().unwrap() as i32),
        "where" => {
            let pick = |i: &In| match i {
                In::Arr(a) => jaxrs::ops::Arg::Array(std::borrow::Cow::Owned(a.clone())),
                In::Float(s) => jaxrs::IntoArg::into_arg(*s),
                In::Int(s) => jaxrs::IntoArg::into_arg(*s),
                In::Bool(s) => jaxrs::IntoArg::into_arg(*s),
            };
            where_(arr(&x[0]), pick(&x[1]), pick(&x[2]))
        }
        "sum" => reduce!(sum),
        "mean" => reduce!(mean),
        "max" => reduce!(max),
        "min" => reduce!(min),
        "prod" => reduce!(prod),
        "logsumexp" => reduce!(logsumexp),
        "argmax" => arr(&x[0]).argmax(axis(), keepdims()),
        "argmin" => arr(&x[0]).argmin(axis(), keepdims()),
        "softmax" => arr(&x[0]).softmax(axis()),
        "log_softmax" => arr(&x[0]).log_softmax(axis()),
        "cumsum" => arr(&x[0]).cumsum(axis()),
        "reshape" => arr(&x[0]).reshape(ints(&p["shape"])),
        "transpose" => arr(&x[0]).transpose(ints(&p["perm"])),
        "broadcast_to" => arr(&x[0]).broadcast_to(&usizes(&p["shape"])),
        "expand_dims" => arr(&x[0]).expand_dims(axis()),
        "squeeze" => arr(&x[0]).squeeze(ints(&p["axes"])),
        "concatenate" => Array::concatenate(&all, axis()),
        "stack" => Array::stack(&all, axis()),
        "slice" => arr(&x[0]).slice(
            &usizes(&p["start"]),
            &usizes(&p["limit"]),
            &usizes(&p["strides"]),
        ),
        "pad" => arr(&x[0]).pad(
            &ints(&p["low"]),
            &ints(&p["high"]),
            &ints(&p["interior"]),
            number(&p["value"]),
        ),
        "dynamic_slice" => all[0].dynamic_slice(&all[1..], &usizes(&p["sizes"])),
        "dynamic_update_slice" => all[0].dynamic_update_slice(&all[1], &all[2..]),
        "take" => all[0].take(&all[1], axis()),
        "one_hot" => Array::one_hot(
            &all[0],
            p["num_classes"].as_u64().unwrap() as usize,
            dtype(&p["dtype"]),
        ),
        "matmul" => all[0].matmul(&all[1]),
        "dot_general" => {
            let (c_, b_) = (&p["contracting"], &p["batch"]);
            let dims = DotDims {
                lhs_contract: usizes(&c_[0]),
                rhs_contract: usizes(&c_[1]),
                lhs_batch: usizes(&b_[0]),
                rhs_batch: usizes(&b_[1]),
            };
            all[0].dot_general(&all[1], &dims)
        }
        "iota" => Array::iota(
            dtype(&p["dtype"]),
            &usizes(&p["shape"]),
            p["dimension"].as_u64().unwrap() as usize,
        ),
        "astype" => all[0].astype(dtype(&p["dtype"])),
        "stop_gradient" => stop_gradient(&all[0]),
        "arange" => Array::arange(
            number(&p["start"]),
            number(&p["stop"]),
            number(&p["step"]),
            dtype(&p["dtype"]),
        ),
        "eye" => Array::eye(p["n"].as_u64().unwrap() as usize, dtype(&p["dtype"])),
        "zeros" => Array::zeros(&usizes(&p["shape"]), dtype(&p["dtype"])),
        "ones" => Array::ones(&usizes(&p["shape"]), dtype(&p["dtype"])),
        "full" => Array::full(
            &usizes(&p["shape"]),
            number(&p["value"]),
            dtype(&p["dtype"]),
        ),
        other => panic!("no Rust mapping for op {other}"),
    }
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
        apply(c, &ins)
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
    let got_v = got.to_f64_vec();
    for (i, (g, w)) in got_v.iter().zip(&want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= c.atol + c.rtol * w.abs()
        };
        if !ok {
            return Err(format!(
                "{mode}: element {i}: got {g}, want {w} (rtol {}, atol {})",
                c.rtol, c.atol
            ));
        }
    }
    Ok(())
}

fn run_file(file: &str) {
    let cases = load(file);
    assert!(!cases.is_empty(), "{file} has no cases");
    let mut failures = Vec::new();
    for c in &cases {
        let eager = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| apply(c, &c.inputs)));
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
