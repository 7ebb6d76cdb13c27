//! The array printer against numpy and JAX 0.10.2: `tests/golden/print.json` (written by
//! `tests/golden/gen_print.py`) holds numpy's `str(x)` (jaxrs's `Display`) and the `Debug`
//! derived from JAX's `repr(x)` for scalars, vectors, matrices, 3-d and 4-d arrays, empty
//! arrays, summarised arrays past 1000 elements, scientific notation, non-finite values and
//! every dtype, weak scalars included.

use jaxrs::prelude::*;
mod common;

use common::golden::{dtype, int, int_array, number, shape};
use serde_json::Value;

fn build(arr: &Value) -> Array {
    let dtype = dtype(&arr["dtype"]);
    let shape = shape(&arr["shape"]);
    let data = arr["data"].as_array().expect("data");
    if arr["weak"].as_bool().expect("weak") {
        assert!(shape.is_empty(), "weak cases are Rust scalars");
        return match dtype {
            DType::F64 => Array::weak_scalar(number(&data[0])),
            DType::I64 => Array::weak_scalar(data[0].as_i64().expect("int")),
            DType::Bool => Array::weak_scalar(data[0].as_bool().expect("bool")),
            other => panic!("no Rust scalar is weakly typed {other:?}"),
        };
    }
    match dtype {
        // `[re, im]` pairs.
        d if d.is_complex() => common::golden::array(arr),
        // Read exactly: through f64 64-bit integers would lose digits.
        d if d.is_int() => {
            let ints: Vec<i128> = data.iter().map(int).collect();
            int_array(&ints, &shape, d)
        }
        _ => {
            let values: Vec<f64> = data.iter().map(number).collect();
            Array::from_f64s(&values, &shape, dtype)
        }
    }
}

#[test]
fn display_and_debug_match_numpy_and_jax() {
    let path = format!("{}/tests/golden/print.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("golden JSON");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() > 100, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in cases {
        let name = c["name"].as_str().expect("name");
        let x = build(&c["array"]);
        for (what, got, want) in [
            ("Display", format!("{x}"), &c["str"]),
            ("Debug", format!("{x:?}"), &c["debug"]),
        ] {
            let want = want.as_str().expect("golden string");
            if got != want {
                failures.push(format!("{name} {what}:\n got:\n{got}\nwant:\n{want}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn a_summary_stays_short() {
    let x = Array::arange(0.0, 5000.0, 1.0, DType::F32);
    let debug = format!("{x:?}");
    assert!(debug.len() < 120, "{debug}");
    let m = Array::arange(0.0, 1600.0, 1.0, DType::F32).reshape([40, 40]);
    assert_eq!(format!("{m}").lines().count(), 7, "{m}");
}

#[test]
fn a_tracer_prints_its_aval() {
    let seen = std::sync::Mutex::new(Vec::new());
    let f = jit(|(x, s): (Array, Array)| {
        seen.lock()
            .unwrap()
            .push((format!("{x:?}"), format!("{x}"), format!("{s:?}")));
        &x * &s
    });
    let x = Array::zeros(&[3, 4], DType::F32);
    let _: Array = f.call((x, Array::weak_scalar(2.0)));
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen[0],
        (
            "Traced<f32[3,4]>".to_string(),
            "Traced<f32[3,4]>".to_string(),
            "Traced<~f64[]>".to_string()
        )
    );
}
