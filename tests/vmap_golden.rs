//! vmap against JAX 0.10.2: the seed's section 2 (per-example losses of a linear model over a
//! batch and over [time, batch], per-example gradients with vmap(grad), the gradient of the
//! batch's mean loss with grad(vmap)) and a batched MLP. `tests/golden/vmap.json` holds JAX's
//! inputs and outputs; `tests/golden/gen_vmap.py` writes it.

mod common;

use common::golden::{apply, array, first_mismatch, number, operand, In};
use jaxrs::prelude::*;
use jaxrs::{grad, jit};
use serde_json::Value;

#[derive(Tree, Clone, Debug)]
struct Linear {
    w: Array,
    b: Array,
}

/// The seed's per-example loss: `pred = x @ params['w'] + params['b']; mean((pred - y)**2)`.
fn loss(params: &Linear, x: &Array, y: &Array) -> Array {
    let pred = x.matmul(&params.w) + &params.b;
    (pred - y).powi(2).mean(None, false)
}

/// The same loss, made the losses of a batch by the attribute (as `jax.vmap` decorates).
#[vmap(in_axes = (None, 0, 0))]
fn example_loss(params: &Linear, x: &Array, y: &Array) -> Array {
    loss(params, x, y)
}

fn mlp_loss(layers: &[Linear], x: &Array, y: &Array) -> Array {
    let mut h = x.clone();
    for (i, l) in layers.iter().enumerate() {
        h = h.matmul(&l.w) + &l.b;
        if i + 1 < layers.len() {
            h = h.tanh();
        }
    }
    (h - y).powi(2).mean(None, false)
}

fn linear(v: &Value) -> Linear {
    Linear {
        w: array(&v["w"]),
        b: array(&v["b"]),
    }
}

fn assert_matches(name: &str, what: &str, got: &Array, want: &Value, rtol: f64, atol: f64) {
    let want_arr = array(want);
    assert_eq!(got.shape(), want_arr.shape(), "{name} {what}: shape");
    let (g, w) = (got.to_f64_vec(), want_arr.to_f64_vec());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= atol + rtol * b.abs(),
            "{name} {what}[{i}]: jaxrs {a} vs JAX {b}\n jaxrs {g:?}\n JAX   {w:?}"
        );
    }
}

fn load() -> Vec<Value> {
    let path = format!("{}/tests/golden/vmap.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("golden JSON");
    assert_eq!(doc["jax_version"], "0.10.2");
    doc["cases"].as_array().expect("cases").clone()
}

#[test]
fn vmap_matches_jax() {
    let cases = load();
    assert_eq!(cases.len(), 8);
    for c in &cases {
        let name = c["name"].as_str().expect("name");
        let (rtol, atol) = (c["rtol"].as_f64().unwrap(), c["atol"].as_f64().unwrap());
        let x = array(&c["inputs"]["x"]);
        let want = &c["output"];
        let check = |what: &str, got: &Array, want: &Value| {
            assert_matches(name, what, got, want, rtol, atol)
        };
        match c["fn"].as_str().expect("fn") {
            "example_loss" => {
                let p = linear(&c["params"]);
                let y = array(&c["inputs"]["y"]);
                let got = if c["in_axes"][1] == 0 {
                    example_loss(&p, &x, &y)
                } else {
                    // in_axes = (None, -1, 0): the examples of x along its last axis.
                    vmap(
                        |(p, x, y): (Linear, Array, Array)| loss(&p, &x, &y),
                        (None, -1, 0),
                        0,
                    )((p, x, y))
                };
                check("losses", &got, want);
            }
            "example_loss_nested" => {
                // vmap over time of the batched loss: x is [T, B, in].
                let p = linear(&c["params"]);
                let y = array(&c["inputs"]["y"]);
                let over_time = vmap(
                    |(p, x, y): (Linear, Array, Array)| example_loss(&p, &x, &y),
                    (None, 0, 0),
                    0,
                );
                check(
                    "losses",
                    &over_time((p.clone(), x.clone(), y.clone())),
                    want,
                );
                // The same program compiled.
                let compiled = jit(|a: (Linear, Array, Array)| over_time(a));
                check("losses under jit", &compiled.call((p, x, y)), want);
            }
            "example_loss_grad" => {
                let p = linear(&c["params"]);
                let y = array(&c["inputs"]["y"]);
                let per_example = vmap(
                    |(p, x, y): (Linear, Array, Array)| grad(|p: Linear| loss(&p, &x, &y))(p),
                    (None, 0, 0),
                    0,
                );
                let g: Linear = per_example((p, x, y));
                check("w grads", &g.w, &want["w"]);
                check("b grads", &g.b, &want["b"]);
            }
            "example_loss_mean_grad" => {
                let p = linear(&c["params"]);
                let y = array(&c["inputs"]["y"]);
                let g = grad(|p: Linear| example_loss(&p, &x, &y).mean(None, false))(p);
                check("w grad", &g.w, &want["w"]);
                check("b grad", &g.b, &want["b"]);
            }
            "predict" => {
                let p = linear(&c["params"]);
                let predict = vmap(
                    |(p, x): (Linear, Array)| x.matmul(&p.w) + &p.b,
                    (None, 0),
                    1,
                );
                check("predictions", &predict((p, x)), want);
            }
            "mlp_loss" => {
                let layers: Vec<Linear> =
                    c["params"].as_array().unwrap().iter().map(linear).collect();
                let y = array(&c["inputs"]["y"]);
                let batched = vmap(
                    |(l, x, y): (Vec<Linear>, Array, Array)| mlp_loss(&l, &x, &y),
                    (None, 0, 0),
                    0,
                );
                let compiled = jit(|a: (Vec<Linear>, Array, Array)| batched(a));
                check("losses", &compiled.call((layers, x, y)), want);
            }
            "mlp_loss_grad" => {
                let layers: Vec<Linear> =
                    c["params"].as_array().unwrap().iter().map(linear).collect();
                let y = array(&c["inputs"]["y"]);
                let per_example = vmap(
                    |(l, x, y): (Vec<Linear>, Array, Array)| {
                        grad(|l: Vec<Linear>| mlp_loss(&l, &x, &y))(l)
                    },
                    (None, 0, 0),
                    0,
                );
                let compiled = jit(|a: (Vec<Linear>, Array, Array)| per_example(a));
                let g: Vec<Linear> = compiled.call((layers, x, y));
                for (i, (gl, wl)) in g.iter().zip(want.as_array().unwrap()).enumerate() {
                    check(&format!("layer {i} w grads"), &gl.w, &wl["w"]);
                    check(&format!("layer {i} b grads"), &gl.b, &wl["b"]);
                }
            }
            other => panic!("unknown case fn {other}"),
        }
    }
}

/// One op at a time under vmap (`tests/golden/ops_vmap.json`): the op's array operands batched
/// as the case's `in_axes` says (`null`: shared), its Rust scalars held fixed; eagerly and
/// under jit.
#[test]
fn single_ops_batch_as_jax() {
    let path = format!("{}/tests/golden/ops_vmap.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("golden JSON");
    assert_eq!(doc["jax_version"], "0.10.2");
    for c in doc["cases"].as_array().expect("cases") {
        let name = c["name"].as_str().expect("name");
        let op = c["op"].as_str().expect("op");
        let ins: Vec<In> = c["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(operand)
            .collect();
        let arrays: Vec<Array> = ins
            .iter()
            .filter_map(|i| match i {
                In::Arr(a) => Some(a.clone()),
                _ => None,
            })
            .collect();
        let in_axes: Vec<Option<i64>> = c["in_axes"]
            .as_array()
            .unwrap()
            .iter()
            .map(Value::as_i64)
            .collect();
        let scalars: Vec<In> = ins[arrays.len()..].to_vec();
        let per_example = |xs: Vec<Array>| {
            let mut all: Vec<In> = xs.into_iter().map(In::Arr).collect();
            all.extend(scalars.iter().cloned());
            apply(op, &c["params"], &all)
        };
        let batched = vmap(per_example, in_axes.clone(), 0);
        let want = array(&c["output"]);
        let want_v: Vec<f64> = c["output"]["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(number)
            .collect();
        let (rtol, atol) = (c["rtol"].as_f64().unwrap(), c["atol"].as_f64().unwrap());
        let eager = batched(arrays.clone());
        let compiled = jit(|xs: Vec<Array>| batched(xs)).call(arrays);
        for (mode, got) in [("eager", eager), ("jit", compiled)] {
            assert_eq!(got.aval(), want.aval(), "{name} ({mode}): dtype and shape");
            if let Some((i, g, w)) = first_mismatch(&got.to_f64_vec(), &want_v, rtol, atol) {
                panic!("{name} ({mode}): element {i}: jaxrs {g}, JAX {w}");
            }
        }
    }
}
