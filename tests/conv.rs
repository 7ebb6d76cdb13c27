//! Convolution and pooling against JAX 0.10.2: `conv_general_dilated` over strides,
//! SAME/VALID/explicit padding, lhs/rhs dilation, feature groups, 1-D/2-D/3-D and the
//! NCHW/OIHW and NHWC/HWIO layouts (values eager and jitted, JVP, VJP for both operands, vmap
//! over either or both operands), and `reduce_window_max`/`reduce_window_sum` with flax's
//! `max_pool`/`avg_pool` on top. `tests/golden/conv.json` holds JAX's numbers;
//! `tests/golden/gen_conv.py` writes it. Numerical `check_grads` runs in f64 on top.

mod common;

use common::golden::{array, first_mismatch, usizes};
use common::panic_message;
use jaxrs::prelude::*;
use jaxrs::{
    avg_pool, check_grads, conv_general_dilated, jit, jvp, max_pool, reduce_window_max,
    reduce_window_sum, vjp, vmap, Padding,
};
use serde_json::Value;

fn golden() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/conv.json"
    ))
    .expect("tests/golden/conv.json");
    serde_json::from_str(&text).expect("valid JSON")
}

fn assert_close(name: &str, what: &str, got: &Array, want: &Value) {
    let want = array(want);
    assert_eq!(got.shape(), want.shape(), "{name} {what}: shape");
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    if let Some((i, a, b)) = first_mismatch(&g, &w, 1e-4, 1e-4) {
        panic!("{name} {what}[{i}]: jaxrs {a} vs JAX {b}");
    }
}

fn padding(v: &Value) -> Padding {
    match v {
        Value::String(s) if s == "SAME" => Padding::Same,
        Value::String(s) if s == "VALID" => Padding::Valid,
        Value::Array(pairs) => Padding::Explicit(
            pairs
                .iter()
                .map(|p| (p[0].as_i64().unwrap(), p[1].as_i64().unwrap()))
                .collect(),
        ),
        other => panic!("bad padding {other}"),
    }
}

/// A conv case's function of (lhs, rhs).
fn conv_fn(case: &Value) -> impl Fn(&Array, &Array) -> Array + Clone {
    let strides = usizes(&case["strides"]);
    let pad = padding(&case["padding"]);
    let lhs_dil = usizes(&case["lhs_dilation"]);
    let rhs_dil = usizes(&case["rhs_dilation"]);
    let dn: Option<Vec<String>> = case["dimension_numbers"]
        .as_array()
        .map(|v| v.iter().map(|s| s.as_str().unwrap().to_string()).collect());
    let groups = case["feature_group_count"].as_u64().unwrap() as usize;
    move |l: &Array, r: &Array| {
        let dn = dn
            .as_ref()
            .map(|d| (d[0].as_str(), d[1].as_str(), d[2].as_str()));
        conv_general_dilated(l, r, &strides, pad.clone(), &lhs_dil, &rhs_dil, dn, groups)
    }
}

#[test]
fn conv_matches_jax() {
    let g = golden();
    assert_eq!(g["conv"].as_array().unwrap().len(), 12);
    for case in g["conv"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let f = conv_fn(case);
        let (lhs, rhs) = (array(&case["lhs"]), array(&case["rhs"]));
        assert_close(name, "eager", &f(&lhs, &rhs), &case["out"]);

        let fj = f.clone();
        let jitted = jit(move |(l, r): (Array, Array)| fj(&l, &r));
        assert_close(
            name,
            "jit",
            &jitted.call((lhs.clone(), rhs.clone())),
            &case["out"],
        );

        let fj = f.clone();
        let (_, tangent) = jvp(
            move |(l, r): (Array, Array)| fj(&l, &r),
            &(lhs.clone(), rhs.clone()),
            &(array(&case["tlhs"]), array(&case["trhs"])),
        );
        assert_close(name, "jvp", &tangent, &case["tangent"]);

        let fj = f.clone();
        let (_, pullback) = vjp(
            move |(l, r): (Array, Array)| fj(&l, &r),
            &(lhs.clone(), rhs.clone()),
        );
        let (ct_lhs, ct_rhs) = pullback.call(&array(&case["ct"]));
        assert_close(name, "vjp lhs", &ct_lhs, &case["ct_lhs"]);
        assert_close(name, "vjp rhs", &ct_rhs, &case["ct_rhs"]);

        let (vlhs, vrhs) = (array(&case["vlhs"]), array(&case["vrhs"]));
        let fv = f.clone();
        let y = vmap(
            move |(l, r): (Array, Array)| fv(&l, &r),
            (Some(0i64), None::<i64>),
            0,
        )((vlhs.clone(), rhs.clone()));
        assert_close(name, "vmap lhs", &y, &case["vmap_lhs"]);
        let fv = f.clone();
        let y = vmap(
            move |(l, r): (Array, Array)| fv(&l, &r),
            (None::<i64>, Some(0i64)),
            0,
        )((lhs.clone(), vrhs.clone()));
        assert_close(name, "vmap rhs", &y, &case["vmap_rhs"]);
        let fv = f.clone();
        let y = vmap(move |(l, r): (Array, Array)| fv(&l, &r), 0, 0)((vlhs, vrhs));
        assert_close(name, "vmap both", &y, &case["vmap_both"]);
    }
}

/// A pool case's function of its input.
fn pool_fn(case: &Value) -> impl Fn(&Array) -> Array + Clone {
    let kind = case["kind"].as_str().unwrap().to_string();
    let window = usizes(&case["window"]);
    let strides = usizes(&case["strides"]);
    let pad = padding(&case["padding"]);
    move |x: &Array| match kind.as_str() {
        "max_pool" => max_pool(x, &window, &strides, pad.clone()),
        "avg_pool" => avg_pool(x, &window, &strides, pad.clone()),
        "reduce_window_max" => reduce_window_max(x, &window, &strides, pad.clone()),
        "reduce_window_sum" => reduce_window_sum(x, &window, &strides, pad.clone()),
        other => panic!("unknown pool kind {other}"),
    }
}

#[test]
fn pooling_matches_jax() {
    let g = golden();
    assert_eq!(g["pool"].as_array().unwrap().len(), 11);
    for case in g["pool"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let f = pool_fn(case);
        let x = array(&case["x"]);
        assert_close(name, "eager", &f(&x), &case["out"]);
        let fj = f.clone();
        assert_close(
            name,
            "jit",
            &jit(move |x: Array| fj(&x)).call(x.clone()),
            &case["out"],
        );
        let fj = f.clone();
        let (_, tangent) = jvp(move |x: Array| fj(&x), &x, &array(&case["t"]));
        assert_close(name, "jvp", &tangent, &case["tangent"]);
        let fj = f.clone();
        let (_, pullback) = vjp(move |x: Array| fj(&x), &x);
        assert_close(
            name,
            "vjp",
            &pullback.call(&array(&case["ct"])),
            &case["ct_x"],
        );
        let fv = f.clone();
        let y = vmap(move |x: Array| fv(&x), 0, 0)(array(&case["vx"]));
        assert_close(name, "vmap", &y, &case["vmap"]);
    }
}

fn f64_normal(seed: u32, shape: &[usize]) -> Array {
    // A deterministic spread of distinct values (no ties for max pooling).
    let n: usize = shape.iter().product();
    let data: Vec<f64> = (0..n)
        .map(|i| (((i as u64 * 2654435761 + seed as u64 * 97) % 1009) as f64) / 400.0 - 1.2)
        .collect();
    Array::from_vec(data, shape)
}

/// lhs shape, rhs shape, strides, padding, lhs dilation, rhs dilation, layouts, groups.
type GradConfig = (
    Vec<usize>,
    Vec<usize>,
    Vec<usize>,
    Padding,
    Vec<usize>,
    Vec<usize>,
    Option<(&'static str, &'static str, &'static str)>,
    usize,
);

#[test]
fn conv_check_grads() {
    let configs: Vec<GradConfig> = vec![
        (
            vec![2, 5, 4, 2],
            vec![2, 2, 2, 3],
            vec![1, 2],
            Padding::Same,
            vec![],
            vec![],
            Some(("NHWC", "HWIO", "NHWC")),
            1,
        ),
        (
            vec![1, 4, 5, 4],
            vec![4, 2, 3, 2],
            vec![2, 1],
            Padding::Explicit(vec![(1, 0), (2, 1)]),
            vec![],
            vec![2, 1],
            None,
            2,
        ),
        (
            vec![1, 2, 3, 3],
            vec![2, 2, 2, 2],
            vec![1, 1],
            Padding::Valid,
            vec![2, 1],
            vec![],
            None,
            1,
        ),
    ];
    for (ls, rs, strides, pad, ld, rd, dn, groups) in configs {
        let lhs = f64_normal(1, &ls);
        let rhs = f64_normal(2, &rs);
        check_grads(
            |(l, r): (Array, Array)| {
                conv_general_dilated(&l, &r, &strides, pad.clone(), &ld, &rd, dn, groups)
            },
            &(lhs, rhs),
            2,
        );
    }
}

#[test]
fn pool_check_grads() {
    let x = f64_normal(3, &[2, 5, 5, 2]);
    check_grads(
        |x: Array| max_pool(&x, &[2, 2], &[2, 1], Padding::Same),
        &x,
        2,
    );
    check_grads(
        |x: Array| avg_pool(&x, &[3, 2], &[1, 2], Padding::Valid),
        &x,
        2,
    );
    check_grads(
        |x: Array| {
            reduce_window_sum(
                &x,
                &[1, 2, 3, 1],
                &[1, 2, 1, 1],
                [(0, 0), (1, 0), (1, 1), (0, 0)],
            )
        },
        &x,
        2,
    );
}

#[test]
fn grad_through_a_small_cnn() {
    // conv -> relu -> max_pool -> avg_pool -> sum, differentiated end to end under jit and vmap.
    let x = f64_normal(4, &[3, 6, 6, 2]);
    let w = f64_normal(5, &[3, 3, 2, 4]);
    let loss = |w: &Array, x: &Array| {
        let y = conv_general_dilated(
            x,
            w,
            &[1, 1],
            Padding::Same,
            &[],
            &[],
            Some(("NHWC", "HWIO", "NHWC")),
            1,
        );
        let y = max_pool(&y.maximum(0.0), &[2, 2], &[2, 2], Padding::Valid);
        avg_pool(&y, &[3, 3], &[], Padding::Valid).sum(None, false)
    };
    let g_eager = grad(|w: Array| loss(&w, &x))(w.clone());
    let g_jit = jit(|w: Array| grad(|w: Array| loss(&w, &x))(w)).call(w.clone());
    assert_eq!(g_eager.shape(), w.shape());
    let (a, b) = (g_eager.to_f64_vec(), g_jit.to_f64_vec());
    assert!(first_mismatch(&a, &b, 1e-9, 1e-9).is_none());
    // Per-example gradients with vmap(grad) sum to the batch gradient.
    let per_example = vmap(
        |x: Array| grad(|w: Array| loss(&w, &x.expand_dims(0)))(w.clone()),
        0,
        0,
    )(x.clone());
    let summed = per_example.sum(0, false).to_f64_vec();
    assert!(first_mismatch(&summed, &a, 1e-9, 1e-9).is_none());
}

#[test]
fn stablehlo_has_one_convolution() {
    let x = Array::zeros(&[1, 4, 4, 1], DType::F32);
    let w = Array::zeros(&[2, 2, 1, 1], DType::F32);
    let text = stablehlo(
        |(x, w): (Array, Array)| {
            conv_general_dilated(
                &x,
                &w,
                &[1, 1],
                Padding::Same,
                &[],
                &[],
                Some(("NHWC", "HWIO", "NHWC")),
                1,
            )
        },
        &(x, w),
    );
    assert_eq!(text.matches("stablehlo.convolution").count(), 1, "{text}");
}

#[test]
fn bad_shapes_name_the_op_shapes_and_line() {
    let x = Array::zeros(&[1, 4, 4, 3], DType::F32);
    let w = Array::zeros(&[3, 3, 2, 8], DType::F32);
    let msg = panic_message(|| {
        conv_general_dilated(
            &x,
            &w,
            &[1, 1],
            Padding::Same,
            &[],
            &[],
            Some(("NHWC", "HWIO", "NHWC")),
            1,
        );
    });
    assert!(msg.starts_with("conv_general_dilated: "), "{msg}");
    assert!(
        msg.contains("f32[1,4,4,3]") && msg.contains("f32[3,3,2,8]"),
        "{msg}"
    );
    assert!(msg.contains("tests/conv.rs:"), "{msg}");

    let msg = panic_message(|| {
        conv_general_dilated(
            &x,
            &w,
            &[1, 1],
            Padding::Same,
            &[],
            &[],
            Some(("NHWC", "HWIX", "NHWC")),
            1,
        );
    });
    assert!(
        msg.contains("HWIX") && msg.contains("tests/conv.rs:"),
        "{msg}"
    );

    let msg = panic_message(|| {
        max_pool(
            &Array::zeros(&[4, 4], DType::F32),
            &[2, 2],
            &[],
            Padding::Valid,
        );
    });
    assert!(
        msg.starts_with("max_pool: ") && msg.contains("tests/conv.rs:"),
        "{msg}"
    );
}

/// vmap of per-example gradients through grouped convolutions (their transposes are
/// batch-grouped convolutions, whose batching rules differ), mapped along a non-leading axis,
/// against a loop over the examples.
#[test]
fn vmap_of_grouped_grads_matches_a_loop() {
    let dn = Some(("NCHW", "OIHW", "NCHW"));
    let loss = move |x: &Array, w: &Array| {
        let y = conv_general_dilated(x, w, &[1, 2], Padding::Same, &[], &[1, 2], dn, 2);
        (y.sin() * y).sum(None, false)
    };
    let grads =
        move |(x, w): (Array, Array)| grad(move |(x, w): (Array, Array)| loss(&x, &w))((x, w));
    let n = 3;
    let xs = f64_normal(6, &[2, n, 4, 5, 6]); // examples along axis 1
    let ws = f64_normal(7, &[6, 2, 2, n, 3]); // examples along axis 3
    for (x_axis, w_axis) in [(Some(1i64), None), (None, Some(3i64)), (Some(1), Some(3))] {
        // An unmapped operand is the first example alone.
        let x_in = match x_axis {
            Some(_) => xs.clone(),
            None => xs.slice_axis(1, 0, 1).squeeze([1]),
        };
        let w_in = match w_axis {
            Some(_) => ws.clone(),
            None => ws.slice_axis(3, 0, 1).squeeze([3]),
        };
        let (gx, gw) = vmap(grads, (x_axis, w_axis), 0)((x_in.clone(), w_in.clone()));
        for i in 0..n {
            let x = match x_axis {
                Some(_) => xs.slice_axis(1, i, i + 1).squeeze([1]),
                None => x_in.clone(),
            };
            let w = match w_axis {
                Some(_) => ws.slice_axis(3, i, i + 1).squeeze([3]),
                None => w_in.clone(),
            };
            let (ex, ew) = grads((x, w));
            let (gx_i, gw_i) = (
                gx.slice_axis(0, i, i + 1).squeeze([0]),
                gw.slice_axis(0, i, i + 1).squeeze([0]),
            );
            for (what, got, want) in [("lhs", &gx_i, &ex), ("rhs", &gw_i, &ew)] {
                let (a, b) = (got.to_f64_vec(), want.to_f64_vec());
                assert!(
                    first_mismatch(&a, &b, 1e-9, 1e-9).is_none(),
                    "{x_axis:?}/{w_axis:?} example {i} grad {what}"
                );
            }
        }
    }
}
