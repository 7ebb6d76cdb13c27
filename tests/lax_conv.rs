//! `jaxrs::lax`'s convolution family, dimension numbers, shape tuples and generic
//! `reduce_window` against JAX 0.10.2 (`tests/golden/lax_conv.json`, written by
//! `tests/golden/gen_lax_conv.py`): values eagerly and under `jit`, JVP and VJP (JVP only
//! where JAX has no VJP), `check_grads`, and `vmap` with the batch axis first and last
//! (`tests/common/cases.rs`). The helpers returning shapes and dimension numbers are cases
//! with no inputs whose outputs are the int64 values JAX gave.

mod common;

use common::cases::{a, check_file, p_bool, p_i64, p_i64s, p_str};
use common::golden::In;
use jaxrs::lax;
use jaxrs::lax::{ConvDimensionNumbers, ConvGeneralDilatedDimensionNumbers, Monoid, Padding};
use jaxrs::prelude::*;
use serde_json::Value;

fn usizes(p: &Value, key: &str) -> Vec<usize> {
    p_i64s(p, key).into_iter().map(|v| v as usize).collect()
}

fn padding(p: &Value) -> Padding {
    match &p["padding"] {
        Value::String(s) => Padding::from(s.as_str()),
        Value::Array(pairs) => Padding::Explicit(
            pairs
                .iter()
                .map(|q| (q[0].as_i64().unwrap(), q[1].as_i64().unwrap()))
                .collect(),
        ),
        other => panic!("bad padding {other}"),
    }
}

fn pairs(p: &Value) -> Vec<(i64, i64)> {
    match padding(p) {
        Padding::Explicit(v) => v,
        other => panic!("explicit padding expected, got {other:?}"),
    }
}

fn dn(p: &Value) -> ConvGeneralDilatedDimensionNumbers {
    match &p["dn"] {
        Value::Null => None.into(),
        Value::Array(s) => (
            s[0].as_str().unwrap(),
            s[1].as_str().unwrap(),
            s[2].as_str().unwrap(),
        )
            .into(),
        Value::Object(_) => ConvDimensionNumbers::new(
            usizes(&p["dn"], "lhs_spec"),
            usizes(&p["dn"], "rhs_spec"),
            usizes(&p["dn"], "out_spec"),
        )
        .into(),
        other => panic!("bad dn {other}"),
    }
}

fn dn_strings(p: &Value) -> (&str, &str, &str) {
    let s = p["dn"].as_array().expect("string dimension numbers");
    (
        s[0].as_str().unwrap(),
        s[1].as_str().unwrap(),
        s[2].as_str().unwrap(),
    )
}

fn opt_usizes(p: &Value, key: &str) -> Vec<usize> {
    if p.get(key).is_some_and(|v| v.is_array()) {
        usizes(p, key)
    } else {
        vec![]
    }
}

fn ints(v: Vec<usize>) -> Array {
    let n = v.len();
    Array::from_vec(v.into_iter().map(|d| d as i64).collect::<Vec<i64>>(), &[n])
}

fn monoid(name: &str) -> Monoid {
    match name {
        "add" => Monoid::Add,
        "mul" => Monoid::Mul,
        "max" => Monoid::Max,
        "min" => Monoid::Min,
        "or" => Monoid::BitwiseOr,
        "and" => Monoid::BitwiseAnd,
        other => panic!("unknown computation {other}"),
    }
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let one = |y: Array| vec![y];
    match op {
        "lax.conv_general_dilated"
        | "lax.ConvDimensionNumbers"
        | "lax.ConvGeneralDilatedDimensionNumbers" => one(lax::conv_general_dilated(
            a(x, 0),
            a(x, 1),
            &usizes(p, "strides"),
            padding(p),
            &usizes(p, "lhs_dilation"),
            &usizes(p, "rhs_dilation"),
            dn(p),
            p_i64(p, "fgc") as usize,
            p_i64(p, "bgc") as usize,
            None,
            p.get("preferred")
                .and_then(Value::as_str)
                .map(|s| DType::from_name(s).expect("dtype")),
        )),
        "lax.conv" => one(lax::conv(
            a(x, 0),
            a(x, 1),
            &usizes(p, "strides"),
            p_str(p, "padding"),
            None,
            None,
        )),
        "lax.conv_with_general_padding" => one(lax::conv_with_general_padding(
            a(x, 0),
            a(x, 1),
            &usizes(p, "strides"),
            padding(p),
            &usizes(p, "lhs_dilation"),
            &usizes(p, "rhs_dilation"),
            None,
            None,
        )),
        "lax.conv_transpose" => one(lax::conv_transpose(
            a(x, 0),
            a(x, 1),
            &usizes(p, "strides"),
            padding(p),
            &usizes(p, "rhs_dilation"),
            dn(p),
            p_bool(p, "transpose_kernel"),
            None,
            None,
            p_bool(p, "consistent"),
        )),
        "lax.conv_general_dilated_patches" => one(lax::conv_general_dilated_patches(
            a(x, 0),
            &usizes(p, "filter_shape"),
            &usizes(p, "strides"),
            padding(p),
            &usizes(p, "lhs_dilation"),
            &usizes(p, "rhs_dilation"),
            dn(p),
            None,
            None,
        )),
        "lax.conv_general_dilated_local" => one(lax::conv_general_dilated_local(
            a(x, 0),
            a(x, 1),
            &usizes(p, "strides"),
            padding(p),
            &usizes(p, "filter_shape"),
            &[],
            &usizes(p, "rhs_dilation"),
            dn(p),
            None,
        )),
        "lax.conv_dimension_numbers" => {
            let d = lax::conv_dimension_numbers(
                &usizes(p, "lhs_shape"),
                &usizes(p, "rhs_shape"),
                dn(p),
            );
            vec![ints(d.lhs_spec), ints(d.rhs_spec), ints(d.out_spec)]
        }
        "lax.conv_general_permutations" => {
            let (l, r, o) = lax::conv_general_permutations(dn_strings(p));
            vec![ints(l), ints(r), ints(o)]
        }
        "lax.conv_shape_tuple" => one(ints(lax::conv_shape_tuple(
            &usizes(p, "lhs_shape"),
            &usizes(p, "rhs_shape"),
            &usizes(p, "strides"),
            padding(p),
            p_i64(p, "bgc") as usize,
        ))),
        "lax.conv_general_shape_tuple" => one(ints(lax::conv_general_shape_tuple(
            &usizes(p, "lhs_shape"),
            &usizes(p, "rhs_shape"),
            &usizes(p, "strides"),
            padding(p),
            dn_strings(p),
        ))),
        "lax.conv_transpose_shape_tuple" => one(ints(lax::conv_transpose_shape_tuple(
            &usizes(p, "lhs_shape"),
            &usizes(p, "rhs_shape"),
            &usizes(p, "strides"),
            padding(p),
            dn_strings(p),
        ))),
        "lax.reduce_window_shape_tuple" => one(ints(lax::reduce_window_shape_tuple(
            &usizes(p, "shape"),
            &usizes(p, "window"),
            &usizes(p, "strides"),
            &pairs(p),
            &opt_usizes(p, "base_dilation"),
            &opt_usizes(p, "window_dilation"),
        ))),
        "lax.reduce_window" => {
            let xa = a(x, 0);
            // As JAX's golden passes it: a concrete scalar of the operand's dtype.
            let init = match &p["init"] {
                Value::String(s) if s == "inf" => f64::INFINITY,
                Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
                Value::Bool(b) => f64::from(u8::from(*b)),
                Value::Number(n) => n.as_f64().unwrap(),
                other => panic!("bad init {other}"),
            };
            let init = Array::full(&[], init, xa.dtype());
            one(lax::reduce_window(
                xa,
                &init,
                monoid(p_str(p, "computation")),
                &usizes(p, "window"),
                &usizes(p, "strides"),
                padding(p),
                &usizes(p, "base_dilation"),
                &usizes(p, "window_dilation"),
            ))
        }
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn lax_conv_matches_jax() {
    let n = check_file("lax_conv", apply);
    assert!(n >= 60, "{n} cases");
}

/// The three forms of `dimension_numbers` give one convolution, and a weak scalar init value
/// takes the operand's dtype (values JAX gave: `lax.reduce_window(x, 0.0, lax.max, (2,),
/// (1,), "VALID")` of `[-1, -3, 2]` in float32 is `[0, 2]`).
#[test]
fn forms_agree() {
    let x = Array::arange(0.0, 40.0, 1.0, DType::F32).reshape([1, 5, 4, 2]);
    let w = Array::arange(0.0, 24.0, 0.5, DType::F32).reshape([2, 2, 2, 6]);
    let nhwc = ("NHWC", "HWIO", "NHWC");
    let numbers = lax::conv_dimension_numbers(x.shape(), w.shape(), nhwc);
    let a = lax::conv_general_dilated(&x, &w, &[1, 1], "SAME", &[], &[], nhwc, 1, 1, None, None);
    let b = lax::conv_general_dilated(
        &x,
        &w,
        &[1, 1],
        "SAME",
        &[],
        &[],
        Some(nhwc),
        1,
        1,
        None,
        None,
    );
    let c = lax::conv_general_dilated(&x, &w, &[1, 1], "SAME", &[], &[], numbers, 1, 1, None, None);
    let d = jaxrs::conv_general_dilated(&x, &w, &[1, 1], Padding::Same, &[], &[], Some(nhwc), 1);
    for y in [&b, &c, &d] {
        assert_eq!(a.to_vec::<f32>(), y.to_vec::<f32>());
    }
    let v = Array::from_vec(vec![-1.0f32, -3.0, 2.0], &[3]);
    let y = lax::reduce_window(&v, 0.0, Monoid::Max, &[2], &[1], "VALID", &[], &[]);
    assert_eq!(y.dtype(), DType::F32);
    assert_eq!(y.to_vec::<f32>(), vec![0.0, 2.0]);
}
