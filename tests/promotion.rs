//! jaxrs's dtype rule is JAX's with `jax_enable_x64`, checked against JAX 0.10.2
//! (`tests/golden/promotion.json`, written by `tests/golden/gen_promotion.py`):
//!
//! - the dtype and weak type of `a + b` and of [`jaxrs::result_type`] for every pair of the 13
//!   dtypes, each operand weak and strong (676 pairs, traced once);
//! - a Rust integer that does not fit an integer array's dtype wraps as JAX wraps a Python int
//!   (`uint8 [250, 2] + 300` is `[38, 46]`), eagerly and under `jit`; a float filling an integer
//!   array truncates and saturates;
//! - reductions promote as JAX's (`sum` of four int8 100s is 400 as int64, `mean` of int32 is
//!   float32), eagerly and under `jit`.

use jaxrs::internals::prims::Convert;
use jaxrs::internals::{bind1, Operand};
use jaxrs::prelude::*;
use serde_json::Value;
mod common;

use common::golden::*;

fn golden() -> Value {
    let path = format!("{}/tests/golden/promotion.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("golden JSON")
}

fn section<'a>(doc: &'a Value, key: &str) -> &'a [Value] {
    doc[key].as_array().expect("section")
}

/// A `[dtype, weak]` pair of the file.
fn typed(v: &Value) -> (DType, bool) {
    (dtype(&v[0]), v[1].as_bool().expect("weak flag"))
}

/// A 0-d operand of `dtype`, weakly typed if `weak` (as a Rust scalar converted to `dtype`
/// would be).
fn operand_of(dtype: DType, weak: bool) -> Array {
    let x = Array::zeros(&[], dtype);
    if weak {
        bind1(Convert { dtype, weak: true }, &[Operand::from(&x)])
    } else {
        x
    }
}

#[test]
fn every_pair_of_dtypes_promotes_as_jax() {
    let doc = golden();
    let pairs = section(&doc, "pairs");
    assert_eq!(pairs.len(), (2 * DType::ALL.len()).pow(2));
    let kinds: Vec<(DType, bool)> = DType::ALL
        .into_iter()
        .flat_map(|d| [(d, false), (d, true)])
        .collect();
    let operands: Vec<Array> = kinds.iter().map(|&(d, w)| operand_of(d, w)).collect();
    let index = |t: (DType, bool)| kinds.iter().position(|&k| k == t).expect("kind");
    let wanted: Vec<(usize, usize)> = pairs
        .iter()
        .map(|c| (index(typed(&c["a"])), index(typed(&c["b"]))))
        .collect();
    // One trace for all pairs: the result types are known when the program is built.
    let jaxpr = make_jaxpr(
        |xs: Vec<Array>| -> Vec<Array> { wanted.iter().map(|&(i, j)| &xs[i] + &xs[j]).collect() },
        &operands,
    );
    let out = jaxpr.jaxpr.out_avals();
    let mut wrong = Vec::new();
    for (c, aval) in pairs.iter().zip(&out) {
        let (a, b) = (typed(&c["a"]), typed(&c["b"]));
        let add = typed(&c["add"]);
        if (aval.dtype, aval.weak) != add {
            wrong.push(format!(
                "{a:?} + {b:?}: {:?}, JAX {add:?}",
                (aval.dtype, aval.weak)
            ));
        }
        let rt = typed(&c["result_type"]);
        let got = jaxrs::result_type(&[a, b]);
        if got != rt {
            wrong.push(format!("result_type({a:?}, {b:?}): {got:?}, JAX {rt:?}"));
        }
        // The op's rule, asked directly.
        if DType::promote(a.0, a.1, b.0, b.1) != add {
            wrong.push(format!("DType::promote({a:?}, {b:?}) != JAX {add:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differences:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Eagerly, a weak operand of each kind meets a strong array: the same rule through the
/// eager path (a few pairs; the traced test covers them all).
#[test]
fn eager_operations_promote_as_traced_ones() {
    let u8s = Array::from_vec(vec![1u8, 2], &[2]);
    let i8s = Array::from_vec(vec![1i8, 2], &[2]);
    assert_eq!((&u8s + &i8s).dtype(), DType::I16);
    assert_eq!((&u8s + 2).dtype(), DType::U8);
    let f = &i8s * 2.5;
    assert_eq!((f.dtype(), f.is_weak()), (DType::F64, true));
    let i = Array::weak_scalar(3i32);
    assert_eq!((i.dtype(), i.is_weak()), (DType::I64, true));
    let u64s = Array::from_vec(vec![1u64, 2], &[2]);
    assert_eq!(
        (&u64s + &Array::from_vec(vec![1i64, 2], &[2])).dtype(),
        DType::F64
    );
    assert_eq!((&u64s + u64::MAX).to_vec::<u64>(), vec![0, 1]);
}

/// `x <op> s` for a literal case, `s` a Rust integer.
fn literal_op(op: &str, x: &Array, s: i64) -> Array {
    match op {
        "add" => x + s,
        "mul" => x * s,
        "maximum" => x.maximum(s),
        "where" => where_(x.gt(100), x, s),
        "at_set" => x.at(0).set(s),
        other => panic!("unknown literal op {other}"),
    }
}

#[test]
fn rust_integers_wrap_into_the_arrays_dtype_as_in_jax() {
    let doc = golden();
    let cases: Vec<&Value> = section(&doc, "literals")
        .iter()
        .filter(|c| c["op"] != "full")
        .collect();
    assert!(cases.len() >= 300);
    let mut wrong = Vec::new();
    let mut check = |c: &Value, got: &Array, how: &str| {
        let want = array(&c["output"]);
        let s = &c["scalar"];
        if got.dtype() != want.dtype() || int_values(got) != int_values(&want) {
            wrong.push(format!(
                "{how} {} {:?} {} {s}: {:?} {:?}, JAX {:?}",
                c["x"]["dtype"],
                int_values(&array(&c["x"])),
                c["op"],
                got.dtype(),
                int_values(got),
                int_values(&want)
            ));
        }
    };
    for c in &cases {
        let x = array(&c["x"]);
        let s = int(&c["scalar"]) as i64;
        check(c, &literal_op(c["op"].as_str().unwrap(), &x, s), "eager");
    }
    // Under jit the literals are constants of the program: one program per dtype.
    for dt in DType::ALL.into_iter().filter(|d| d.is_int()) {
        let group: Vec<&Value> = cases
            .iter()
            .copied()
            .filter(|c| dtype(&c["x"]["dtype"]) == dt)
            .collect();
        let x = array(&group[0]["x"]);
        let f = jit(|x: Array| -> Vec<Array> {
            group
                .iter()
                .map(|c| literal_op(c["op"].as_str().unwrap(), &x, int(&c["scalar"]) as i64))
                .collect()
        });
        for (c, got) in group.iter().zip(f.call(x)) {
            check(c, &got, "jit");
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differences:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn floats_filling_integer_arrays_truncate_and_saturate_as_in_jax() {
    let doc = golden();
    let mut n = 0;
    for c in section(&doc, "literals")
        .iter()
        .filter(|c| c["op"] == "full")
    {
        let v = number(&c["value"]);
        let dt = dtype(&c["dtype"]);
        let got = Array::full(&[2], v, dt);
        let want = array(&c["output"]);
        assert_eq!(got.dtype(), want.dtype(), "full({v}, {dt:?})");
        assert_eq!(int_values(&got), int_values(&want), "full({v}, {dt:?})");
        n += 1;
    }
    assert_eq!(n, 90);
}

/// A reduction of the golden file by name; `None` for one jaxrs lacks.
fn reduction(op: &str, x: &Array) -> Option<Array> {
    Some(match op {
        "sum" => x.sum(None, false),
        "prod" => x.prod(None, false),
        "cumsum" => x.cumsum(0),
        "max" => x.max(None, false),
        "mean" => x.mean(None, false),
        "var" => x.var(None, false, 0),
        "std" => x.std(None, false, 0),
        "cumprod" => x.cumprod(0),
        other => panic!("unknown reduction {other}"),
    })
}

fn same_values(got: &Array, want: &Array) -> bool {
    if want.dtype().is_float() {
        let tol = match want.dtype() {
            DType::F64 => 1e-12,
            DType::F32 => 1e-6,
            _ => 1e-2,
        };
        let g = got.astype(DType::F64).to_vec::<f64>();
        let w = want.astype(DType::F64).to_vec::<f64>();
        first_mismatch(&g, &w, tol, tol).is_none()
    } else {
        int_values(got) == int_values(want)
    }
}

#[test]
fn reductions_promote_as_jax() {
    let doc = golden();
    let cases = section(&doc, "reductions");
    let mut wrong = Vec::new();
    let mut check = |c: &Value, got: &Array, how: &str| {
        let want = array(&c["output"]);
        if got.dtype() != want.dtype() || got.shape() != want.shape() || !same_values(got, &want) {
            wrong.push(format!(
                "{how} {} of {}: {:?} {:?}, JAX {:?} {:?}",
                c["op"],
                c["x"]["dtype"],
                got.dtype(),
                got.to_f64_vec(),
                want.dtype(),
                want.to_f64_vec()
            ));
        }
    };
    for c in cases {
        let x = array(&c["x"]);
        if let Some(got) = reduction(c["op"].as_str().unwrap(), &x) {
            check(c, &got, "eager");
        }
    }
    for dt in DType::ALL {
        let group: Vec<&Value> = cases
            .iter()
            .filter(|c| dtype(&c["x"]["dtype"]) == dt && c["op"] != "cumprod")
            .collect();
        if group.is_empty() {
            // No reduction cases of this dtype (complex: see tests/complex.rs).
            continue;
        }
        let f = jit(|x: Array| -> Vec<Array> {
            group
                .iter()
                .filter_map(|c| reduction(c["op"].as_str().unwrap(), &x))
                .collect()
        });
        for (c, got) in group.iter().zip(f.call(array(&group[0]["x"]))) {
            check(c, &got, "jit");
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differences:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
