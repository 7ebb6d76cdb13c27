//! numpy indexing as JAX 0.10.2's (x64 on): `x.index(s![..])` and `x.at(s![..]).op(v)` with
//! every mode, over ranks 1 to 4, checked against `tests/golden/indexing.json`
//! (`tests/golden/gen_indexing.py`). Each rank's cases run as one jitted program (masks,
//! which need concrete arrays, and a sample of the rest run eagerly); then gradients (VJPs
//! against JAX's, and `check_grads`), vmap with the batch axis first and not first, and the
//! errors of indexes that do not fit.

mod common;

use common::golden::{array, first_mismatch, number, shape};
use jaxrs::prelude::*;
use jaxrs::{IndexExpr, IndexMode};
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

fn doc() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/indexing.json");
        serde_json::from_str(&std::fs::read_to_string(path).expect("indexing.json")).unwrap()
    })
}

/// An encoded array as an `Array` of its dtype.
fn arr(v: &Value) -> Array {
    array(v)
}

/// An encoded index expression.
fn expr(entries: &Value) -> IndexExpr {
    let entries = entries.as_array().expect("entries");
    IndexExpr::new(
        entries
            .iter()
            .map(|e| {
                if let Some(i) = e.get("i") {
                    Index::Int(i.as_i64().unwrap())
                } else if let Some(sl) = e.get("sl") {
                    let part = |k: usize| sl[k].as_i64();
                    Index::slice(part(0), part(1), part(2))
                } else if e.get("n").is_some() {
                    Index::NewAxis
                } else if e.get("e").is_some() {
                    Index::Ellipsis
                } else if let Some(t) = e.get("t") {
                    Index::Array(Array::scalar(t.as_i64().unwrap() as i32))
                } else if let Some(a) = e.get("a").or_else(|| e.get("b")) {
                    Index::Array(arr(a))
                } else {
                    panic!("bad entry {e}")
                }
            })
            .collect(),
    )
}

fn mode(v: &Value) -> IndexMode {
    match v.as_str() {
        None => IndexMode::Default,
        Some("fill") => IndexMode::Fill,
        Some("clip") => IndexMode::Clip,
        Some("drop") => IndexMode::Drop,
        Some("promise_in_bounds") => IndexMode::PromiseInBounds,
        Some(other) => panic!("bad mode {other}"),
    }
}

fn has_mask(c: &Value) -> bool {
    c["idx"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e.get("b").is_some())
}

/// The case's operation on `x` (its update `v` given, so that it can be traced).
fn apply(x: &Array, c: &Value, v: Option<&Array>) -> Array {
    let e = expr(&c["idx"]);
    let mut at = x.at(e).mode(mode(&c["mode"]));
    if let Some(f) = c.get("fill_value").filter(|f| !f.is_null()) {
        at = at.fill_value(number(f));
    }
    let v = || v.expect("an update");
    match c["op"].as_str().unwrap() {
        "get" if c["mode"].is_null() => x.index(expr(&c["idx"])),
        "get" => at.get(),
        "set" => at.set(v()),
        "add" => at.add(v()),
        "mul" => at.mul(v()),
        "min" => at.min(v()),
        "max" => at.max(v()),
        other => panic!("bad op {other}"),
    }
}

fn update(c: &Value) -> Option<Array> {
    c.get("v").filter(|v| !v.is_null()).map(arr)
}

fn check(got: &Array, want: &Value, what: &str) {
    assert_eq!(
        got.shape(),
        shape(&want["shape"]).as_slice(),
        "{what}: shape"
    );
    let want: Vec<f64> = want["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(number)
        .collect();
    let got = got.astype(DType::F64).to_vec::<f64>();
    if let Some((i, g, w)) = first_mismatch(&got, &want, 0.0, 0.0) {
        panic!("{what}: element {i} is {g}, JAX gives {w}");
    }
}

fn describe(rank: &str, k: usize, c: &Value) -> String {
    format!(
        "rank {rank} case {k}: {} {} mode {}",
        c["idx"], c["op"], c["mode"]
    )
}

/// Cases per compiled program.
const CHUNK: usize = 100;

#[test]
fn reads_and_updates_match_jax_under_jit() {
    let mut total = 0;
    for (rank, cases) in doc()["cases"].as_object().unwrap() {
        let x = arr(&doc()["x"][rank]);
        let cases: Vec<(usize, &Value)> = cases
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(_, c)| !has_mask(c))
            .collect();
        let vs: Vec<Option<Array>> = cases.iter().map(|(_, c)| update(c)).collect();
        // One program for many cases of the rank.
        for (chunk, vs) in cases.chunks(CHUNK).zip(vs.chunks(CHUNK)) {
            let all = jit(|x: Array| {
                chunk
                    .iter()
                    .zip(vs)
                    .map(|((_, c), v)| apply(&x, c, v.as_ref()))
                    .collect::<Vec<Array>>()
            })
            .call(x.clone());
            for ((k, c), got) in chunk.iter().zip(&all) {
                check(got, &c["want"], &describe(rank, *k, c));
            }
        }
        total += cases.len();
    }
    assert!(total >= 300, "only {total} jitted cases");
}

#[test]
fn reads_and_updates_match_jax_eagerly() {
    let mut masks = 0;
    for (rank, cases) in doc()["cases"].as_object().unwrap() {
        let x = arr(&doc()["x"][rank]);
        for (k, c) in cases.as_array().unwrap().iter().enumerate() {
            // Every mask (concrete only) and a sample of the rest.
            if !has_mask(c) && k % 10 != 0 {
                continue;
            }
            masks += has_mask(c) as usize;
            let v = update(c);
            check(&apply(&x, c, v.as_ref()), &c["want"], &describe(rank, k, c));
        }
    }
    assert!(masks >= 8, "only {masks} mask cases");
}

#[test]
fn vjps_and_jvps_match_jax() {
    for (rank, cases) in doc()["grads"].as_object().unwrap() {
        let x = arr(&doc()["x"][rank]);
        let cases = cases.as_array().unwrap();
        let cts: Vec<Array> = cases.iter().map(|c| arr(&c["ct"])).collect();
        let vs: Vec<Option<Array>> = cases.iter().map(update).collect();
        let txs: Vec<Array> = cases.iter().map(|c| arr(&c["tx"])).collect();
        let tvs: Vec<Option<Array>> = cases
            .iter()
            .map(|c| c.get("tv").filter(|t| !t.is_null()).map(arr))
            .collect();
        // The VJP of each case with JAX's cotangent and its JVP with JAX's tangents, all of a
        // rank in one program.
        let grads = jit(|x: Array| {
            let mut out = Vec::new();
            for (k, c) in cases.iter().enumerate() {
                let (ct, v, tx) = (&cts[k], &vs[k], &txs[k]);
                match (c["op"].as_str().unwrap(), v, &tvs[k]) {
                    ("get", _, _) | ("mul", _, _) => {
                        out.push(grad(|x: Array| {
                            (apply(&x, c, v.as_ref()) * ct).sum(None, false)
                        })(x.clone()));
                        out.push(jvp(|x: Array| apply(&x, c, v.as_ref()), &x, tx).1);
                    }
                    (_, Some(v), Some(tv)) => {
                        let (dx, dv) = grad(|(x, v): (Array, Array)| {
                            (apply(&x, c, Some(&v)) * ct).sum(None, false)
                        })((x.clone(), v.clone()));
                        out.push(dx);
                        out.push(dv);
                        let f = |(x, v): (Array, Array)| apply(&x, c, Some(&v));
                        out.push(jvp(f, &(x.clone(), v.clone()), &(tx.clone(), tv.clone())).1);
                    }
                    _ => unreachable!(),
                }
            }
            out
        })
        .call(x.clone());
        let mut got = grads.iter();
        for (k, c) in cases.iter().enumerate() {
            let what = describe(rank, k, c);
            check(got.next().unwrap(), &c["dx"], &format!("{what}: dx"));
            if !c["dv"].is_null() {
                check(got.next().unwrap(), &c["dv"], &format!("{what}: dv"));
            }
            check(got.next().unwrap(), &c["ty"], &format!("{what}: jvp"));
        }
    }
}

#[test]
fn check_grads_of_reads_and_updates() {
    let x = Array::from_vec(
        (0..60).map(|v| (v as f64 * 0.37).sin()).collect(),
        &[3, 4, 5],
    );
    let rows = Array::from_vec(vec![2i32, 0, 2], &[3]);
    let cols = Array::from_vec(vec![1i32, -1], &[2, 1]);
    check_grads(|x: Array| x.index(s![.., 1..;2, ..;-1]), &x, 2);
    check_grads(|x: Array| x.index(s![&rows, .., 3]), &x, 1);
    check_grads(|x: Array| x.index(s![1, &cols, None, &rows]), &x, 1);
    // A 0-d integer array is a traced scalar: a dynamic slice.
    let i = Array::scalar(-2i32);
    check_grads(|x: Array| x.index(s![&i, 1..3, ..;-1]), &x, 1);
    let v = Array::from_vec((0..6).map(|v| v as f64 * 0.1 + 2.0).collect(), &[3, 2]);
    check_grads(
        |(x, v): (Array, Array)| x.at(s![.., 1..3, 0]).set(&v),
        &(x.clone(), v.clone()),
        1,
    );
    check_grads(
        |(x, v): (Array, Array)| {
            x.at(s![&rows, ..;2, 1])
                .add(v.index(s![.., 0]).reshape([3, 1]))
        },
        &(x.clone(), v.clone()),
        1,
    );
    check_grads(
        |(x, v): (Array, Array)| x.at(s![0, 1..4, 2..5;2]).max(&v),
        &(x.clone(), v.clone()),
        1,
    );
}

#[test]
fn vmap_with_the_batch_axis_anywhere() {
    for (k, c) in doc()["vmap"].as_array().unwrap().iter().enumerate() {
        let what = format!("vmap case {k}: {c:.80}", c = c["op"]);
        let got = match c["op"].as_str().unwrap() {
            "get" => {
                let e = expr(&c["idx"]);
                let axis = c["axis"].as_i64().unwrap();
                vmap(move |x: Array| x.index(e.clone()), axis, 0)(arr(&c["x"]))
            }
            "add" => {
                let e = expr(&c["idx"]);
                let axis = c["axis"].as_i64().unwrap();
                vmap(
                    move |(x, v): (Array, Array)| x.at(e.clone()).add(&v),
                    (axis, 0),
                    0,
                )((arr(&c["x"]), arr(&c["v"])))
            }
            "get_batched_idx" => {
                let x = arr(&c["x"]);
                vmap(move |i: Array| x.index(&i), 0, 0)(arr(&c["i"]))
            }
            "get_batched_both" => {
                let rank = arr(&c["x"]).rank() as i64;
                vmap(
                    |(x, i): (Array, Array)| x.index(s![.., &i]),
                    (rank - 1, 0),
                    0,
                )((arr(&c["x"]), arr(&c["i"])))
            }
            other => panic!("bad op {other}"),
        };
        check(&got, &c["want"], &what);
    }
}

#[test]
fn vmap_of_a_traced_scalar_index_is_a_gather_of_rows() {
    let x = Array::from_vec((0..20).map(|v| v as f32).collect(), &[5, 4]);
    let i = Array::from_vec(vec![3i32, -1, 0, 7, -9], &[5]);
    // Each example's 0-d index takes the dynamic-slice path; batched, it gathers per example.
    let per_example = vmap(|i: Array| x.index(s![&i, 1..]), 0, 0)(i.clone());
    let at_once = x.index(s![&i, 1..]);
    assert_eq!(per_example.to_vec::<f32>(), at_once.to_vec::<f32>());
    let cols = vmap(|i: Array| x.index(s![.., &i]), 0, 1)(i.clone());
    assert_eq!(cols.to_vec::<f32>(), x.index(s![.., &i]).to_vec::<f32>());
}

fn message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("must panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn assert_names(msg: &str, parts: &[&str], line: u32) {
    for p in parts {
        assert!(msg.contains(p), "missing {p:?} in: {msg}");
    }
    assert!(
        msg.contains(&format!("tests/indexing.rs:{line}")),
        "missing the user's line {line} in: {msg}"
    );
}

#[test]
fn indexes_that_do_not_fit_say_why() {
    let x = Array::zeros(&[2, 3], DType::F32);
    let line = line!() + 1;
    let msg = message(|| drop(x.index(s![0, 1, 2])));
    assert_names(
        &msg,
        &[
            "index",
            "too many indices",
            "2-dimensional",
            "3",
            "f32[2,3]",
        ],
        line,
    );
    let line = line!() + 1;
    let msg = message(|| drop(x.index(s![..., 0, ...])));
    assert_names(&msg, &["index", "single ellipsis"], line);
    let f = Array::from_vec(vec![0.0f32, 1.0], &[2]);
    let line = line!() + 1;
    let msg = message(|| drop(x.index(s![&f])));
    assert_names(
        &msg,
        &["index", "integers or booleans", "float32", "f32[2]"],
        line,
    );
    let mask = Array::from_vec(vec![true, false], &[2]);
    let msg = message(|| {
        drop(jit(|m: Array| x.index(&m)).call(mask.clone()));
    });
    assert!(msg.contains("boolean mask must be concrete"), "{msg}");
    assert!(
        msg.contains("NonConcreteBooleanIndexError") && msg.contains("where_"),
        "{msg}"
    );
    let wrong = Array::from_vec(vec![true, false, true], &[3]);
    let line = line!() + 1;
    let msg = message(|| drop(x.index(&wrong)));
    assert_names(&msg, &["index", "[3]", "[2]", "bool[3]"], line);
    let line = line!() + 1;
    let msg = message(|| drop(x.at(s![.., 0]).set(Array::zeros(&[3], DType::F32))));
    assert_names(&msg, &["at.set", "[3]", "[2]", "f32[2,3]"], line);
}

#[test]
fn static_indexing_lowers_to_slice_and_traced_to_dynamic_slice() {
    let x = Array::zeros(&[4, 5], DType::F32);
    let hlo = stablehlo(|x: Array| x.index(s![1..-1, ..;-2]), &x);
    assert!(
        hlo.contains("stablehlo.slice") && hlo.contains("stablehlo.reverse"),
        "{hlo}"
    );
    assert!(!hlo.contains("gather"), "{hlo}");
    let hlo = stablehlo(
        |(x, i): (Array, Array)| x.index(s![&i, 1..3]),
        &(x.clone(), Array::scalar(2i32)),
    );
    assert!(hlo.contains("stablehlo.dynamic_slice"), "{hlo}");
    let idx = Array::from_vec(vec![0i32, 3], &[2]);
    let hlo = stablehlo(
        |(x, i): (Array, Array)| x.index(s![.., &i]),
        &(x.clone(), idx.clone()),
    );
    assert!(
        hlo.contains("stablehlo.gather")
            && hlo.contains("offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1"),
        "{hlo}"
    );
    let hlo = stablehlo(
        |(x, i): (Array, Array)| x.at(s![.., &i]).add(1.0),
        &(x.clone(), idx.clone()),
    );
    assert!(
        hlo.contains("update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1"),
        "{hlo}"
    );
}

#[test]
fn the_macro_reads_every_form() {
    let (a, b) = (1usize, 3i64);
    let idx = Array::from_vec(vec![0i32], &[1]);
    let e =
        s![0, -1, 1..-1, ..2, -3.., .., ..;-1, 1..;2, a..b, 2..=3, ..=-1, None, NewAxis, ..., &idx];
    let want = "IndexExpr([0, -1, 1:-1:1, :2:1, -3::1, ::1, ::-1, 1::2, 1:3:1, 2:4:1, ::1, None, \
                None, ..., i32[1]])";
    assert_eq!(format!("{e:?}"), want);
    // A range held in a variable is a slice too, and a step may follow it.
    let r = 1..4;
    assert_eq!(
        format!("{:?}", s![r.clone(); 2, r]),
        "IndexExpr([1:4:2, 1:4:1])"
    );
    assert_eq!(format!("{:?}", s![]), "IndexExpr([])");
}

#[test]
fn fill_values_per_dtype_are_jaxs() {
    let far = Array::from_vec(vec![5i32, 0], &[2]);
    let get = |x: Array| x.at(&far).mode(IndexMode::Fill).get();
    let i = get(Array::from_vec(vec![1i32, 2], &[2]));
    assert_eq!(i.to_vec::<i32>(), vec![i32::MIN, 1]);
    let u = get(Array::from_vec(vec![1u8, 2], &[2]));
    assert_eq!(u.to_vec::<u8>(), vec![u8::MAX, 1]);
    let b = get(Array::from_vec(vec![false, false], &[2]));
    assert_eq!(b.to_vec::<bool>(), vec![true, false]);
    let f = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    let filled = f.at(&far).mode(IndexMode::Fill).fill_value(-1.0).get();
    assert_eq!(filled.to_vec::<f32>(), vec![-1.0, 1.0]);
}
