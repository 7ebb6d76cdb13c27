//! Control flow: scan (the seed's RNN against JAX, gradients, one while loop whatever the
//! length), fori_loop, while_loop, cond and switch.

mod common;

use common::golden::array;
use jaxrs::prelude::*;
use jaxrs::{
    check_grads, check_grads_with, cond, fori_loop, scan, scan_with, stablehlo, switch, while_loop,
    Modes, ScanOptions,
};
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn panic_message(err: &(dyn std::any::Any + Send)) -> String {
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/control.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("control.json")).expect("JSON")
}

fn assert_close(what: &str, got: &Array, want: &Value, tol: f32) {
    let want = array(want);
    assert_eq!(got.shape(), want.shape(), "{what}");
    for (i, (g, w)) in got
        .to_vec::<f32>()
        .iter()
        .zip(want.to_vec::<f32>())
        .enumerate()
    {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: {g} vs JAX {w}"
        );
    }
}

#[derive(Tree, Clone)]
struct Rnn {
    w_hh: Array,
    w_xh: Array,
    b: Array,
    w_hy: Array,
}

fn rnn(p: &Rnn, h0: Array, xs: Array) -> (Array, Array) {
    scan(
        |h: Array, x: Array| {
            let h = (h.matmul(&p.w_hh) + x.matmul(&p.w_xh) + &p.b).tanh();
            let y = h.matmul(&p.w_hy);
            (h, y)
        },
        h0,
        xs,
    )
}

#[test]
fn the_seeds_rnn_matches_jax_forward_and_backward() {
    let g = golden();
    let i = &g["inputs"];
    let params = Rnn {
        w_hh: array(&i["w_hh"]),
        w_xh: array(&i["w_xh"]),
        b: array(&i["b"]),
        w_hy: array(&i["w_hy"]),
    };
    let (h0, xs) = (array(&i["h0"]), array(&i["xs"]));
    let (h_t, ys) = rnn(&params, h0.clone(), xs.clone());
    assert_close("hT", &h_t, &g["h_t"], 1e-5);
    assert_close("ys", &ys, &g["ys"], 1e-5);

    let loss = |(p, h0): (Rnn, Array)| rnn(&p, h0, xs.clone()).1.powi(2).sum(None, false);
    let (dp, dh0) = grad(loss)((params.clone(), h0.clone()));
    let want = &g["grads"];
    assert_close("d w_hh", &dp.w_hh, &want["w_hh"], 1e-4);
    assert_close("d w_xh", &dp.w_xh, &want["w_xh"], 1e-4);
    assert_close("d b", &dp.b, &want["b"], 1e-4);
    assert_close("d w_hy", &dp.w_hy, &want["w_hy"], 1e-4);
    assert_close("d h0", &dh0, &want["h0"], 1e-4);

    // The same under jit.
    let step = jit(|(p, h0, xs): (Rnn, Array, Array)| {
        grad(|(p, h0): (Rnn, Array)| rnn(&p, h0, xs.clone()).1.powi(2).sum(None, false))((p, h0))
    });
    let (dp, dh0): (Rnn, Array) = step.call((params, h0, xs));
    assert_close("jit d w_hh", &dp.w_hh, &want["w_hh"], 1e-4);
    assert_close("jit d h0", &dh0, &want["h0"], 1e-4);
}

fn f64s(shape: &[usize], seed: u64) -> Array {
    let n: usize = shape.iter().product();
    let mut s = seed | 1;
    let v: Vec<f64> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    Array::from_f64s(&v, shape, DType::F64)
}

#[test]
fn scan_passes_check_grads() {
    let w = f64s(&[3, 3], 3);
    let step = |(h0, xs): (Array, Array)| {
        let (h, ys) = scan(
            |h: Array, x: Array| {
                let h = (h.matmul(&w) + &x).tanh();
                (h.clone(), h.sin())
            },
            h0,
            xs,
        );
        (h, ys)
    };
    let args = (f64s(&[2, 3], 5), f64s(&[4, 2, 3], 7));
    check_grads_with(step, &args, 2, Modes::Forward);
    check_grads_with(step, &args, 1, Modes::Reverse);
    // Reverse mode with respect to the captured weights (loop-invariant residuals), too.
    let (h0, xs) = args.clone();
    check_grads_with(
        |w: Array| {
            scan(
                |h: Array, x: Array| ((h.matmul(&w) + &x).tanh(), ()),
                h0.clone(),
                xs.clone(),
            )
            .0
        },
        &f64s(&[3, 3], 9),
        1,
        Modes::Reverse,
    );
    // reverse = true and unroll.
    for options in [
        ScanOptions {
            reverse: true,
            ..Default::default()
        },
        ScanOptions {
            unroll: 3,
            ..Default::default()
        },
    ] {
        check_grads(
            |(h0, xs): (Array, Array)| {
                scan_with(
                    |h: Array, x: Array| {
                        let h = (&h * &x).sin() + &x;
                        (h.clone(), h * 2.0)
                    },
                    h0,
                    xs,
                    options,
                )
            },
            &(f64s(&[3], 1), f64s(&[5, 3], 2)),
            1,
        );
    }
}

#[test]
fn reverse_and_unrolled_scans_compute_the_same_thing() {
    let xs = Array::from_vec((1..=6).map(|i| i as f32).collect(), &[6]);
    let f = |c: Array, x: Array| (&c * 2.0 + &x, c.clone());
    let (c, ys) = scan(f, Array::scalar(0.0f32), xs.clone());
    assert_eq!(c.item::<f32>(), 120.0);
    assert_eq!(ys.to_vec::<f32>(), vec![0.0, 1.0, 4.0, 11.0, 26.0, 57.0]);
    let (c, ys) = scan_with(
        f,
        Array::scalar(0.0f32),
        xs.clone(),
        ScanOptions {
            unroll: 4,
            ..Default::default()
        },
    );
    assert_eq!(
        (c.item::<f32>(), ys.to_vec::<f32>()),
        (120.0, vec![0.0, 1.0, 4.0, 11.0, 26.0, 57.0])
    );
    let (c, ys) = scan_with(
        f,
        Array::scalar(0.0f32),
        xs,
        ScanOptions {
            reverse: true,
            ..Default::default()
        },
    );
    // From the last x to the first: 6, 17, 38, 79, 160, 321.
    assert_eq!(c.item::<f32>(), 321.0);
    assert_eq!(ys.to_vec::<f32>()[5], 0.0);
    // A scan without xs.
    let (c, ys) = scan_with(
        |c: Array, (): ()| (&c + 1.0, c.clone()),
        Array::scalar(0.0f32),
        (),
        ScanOptions {
            length: Some(4),
            ..Default::default()
        },
    );
    assert_eq!(
        (c.item::<f32>(), ys.to_vec::<f32>()),
        (4.0, vec![0.0, 1.0, 2.0, 3.0])
    );
}

#[test]
fn a_long_scan_is_one_while_loop_whatever_its_length() {
    let size = |t: usize| {
        let xs = Array::zeros(&[t, 4], DType::F32);
        let hlo = stablehlo(
            |xs: Array| {
                scan(
                    |c: Array, x: Array| ((&c + &x).tanh(), &c * 2.0),
                    Array::zeros(&[4], DType::F32),
                    xs,
                )
            },
            &xs,
        );
        assert_eq!(hlo.matches("stablehlo.while").count(), 1, "{hlo}");
        hlo.lines().count()
    };
    assert_eq!(size(10), size(1000));
}

#[test]
fn a_carry_that_changes_type_is_an_error_naming_the_leaf() {
    let err = catch_unwind(AssertUnwindSafe(|| {
        scan(
            |c: (Array, Array), x: Array| ((c.0.clone(), c.1.sum(None, true)), x),
            (
                Array::zeros(&[2], DType::F32),
                Array::zeros(&[3], DType::F32),
            ),
            Array::zeros(&[4, 2], DType::F32),
        )
    }))
    .expect_err("must panic");
    let msg = panic_message(&*err);
    assert!(
        msg.contains("carry[1]") && msg.contains("f32[3]") && msg.contains("f32[1]"),
        "{msg}"
    );
    assert!(msg.contains("tests/control.rs"), "{msg}");
}

#[test]
fn fori_loop_and_while_loop() {
    let r = fori_loop(
        2,
        6,
        |i: &Array, c: Array| c + i.astype(DType::F32),
        Array::scalar(0.0f32),
    );
    assert_eq!(r.item::<f32>(), 14.0);
    check_grads(
        |x: Array| fori_loop(0, 4, |_, c: Array| (&c * &x).sin(), x.clone()),
        &f64s(&[3], 11),
        2,
    );
    let w = while_loop(
        |c: &Array| c.lt(100.0),
        |c: Array| &c * &c,
        Array::scalar(1.5f32),
    );
    assert_eq!(w.item::<f32>(), 1.5f32.powi(16));
    check_grads_with(
        |c: Array| {
            while_loop(
                |c: &Array| c.sum(None, false).lt(40.0),
                |c: Array| &c * &c + 1.0,
                c,
            )
        },
        &f64s(&[2], 13),
        2,
        Modes::Forward,
    );
    let err = catch_unwind(|| {
        grad(|c: Array| while_loop(|c: &Array| c.lt(10.0), |c: Array| &c * 2.0, c))(Array::scalar(
            1.0f32,
        ))
    })
    .expect_err("reverse mode of while must refuse");
    let msg = panic_message(&*err);
    assert!(msg.contains("while_loop") && msg.contains("scan"), "{msg}");
}

#[test]
fn cond_and_switch() {
    let x = Array::from_vec(vec![0.5f32, -1.0], &[2]);
    let f = |p: bool| {
        cond(
            &Array::scalar(p),
            |x: Array| x.sin() * 2.0,
            |x: Array| x.cos(),
            x.clone(),
        )
    };
    assert_eq!(
        f(true).to_vec::<f32>(),
        vec![0.5f32.sin() * 2.0, (-1.0f32).sin() * 2.0]
    );
    assert_eq!(
        f(false).to_vec::<f32>(),
        vec![0.5f32.cos(), (-1.0f32).cos()]
    );
    let branches: [&dyn Fn(Array) -> Array; 3] = [&|x| x * 1.0, &|x| x * 2.0, &|x| x * 3.0];
    for (i, want) in [(-1, 1.0f32), (0, 1.0), (1, 2.0), (2, 3.0), (7, 3.0)] {
        let y = switch(&Array::scalar(i), &branches, Array::scalar(1.0f32));
        assert_eq!(y.item::<f32>(), want, "index {i} (clamped)");
    }
    for p in [true, false] {
        let w = f64s(&[2], 17);
        check_grads(
            |(x, w): (Array, Array)| {
                cond(
                    &Array::scalar(p),
                    |x: Array| (&x * &w).sin(),
                    |x: Array| x.exp() + &w,
                    x,
                )
            },
            &(f64s(&[2], 19), w.clone()),
            2,
        );
    }
    // Under jit the predicate is traced: one program serves both branches.
    let g = jit(|(p, x): (Array, Array)| cond(&p, |x: Array| x * 2.0, |x: Array| x * -1.0, x));
    let a: Array = g.call((Array::scalar(true), Array::scalar(3.0f32)));
    let b: Array = g.call((Array::scalar(false), Array::scalar(3.0f32)));
    assert_eq!((a.item::<f32>(), b.item::<f32>()), (6.0, -3.0));
    assert_eq!(g.site().cache_misses(), 1);
    let err = catch_unwind(|| {
        cond(
            &Array::scalar(true),
            |x: Array| x.clone(),
            |x: Array| x.sum(None, true),
            Array::zeros(&[3], DType::F32),
        )
    })
    .expect_err("branches disagree");
    let msg = panic_message(&*err);
    assert!(
        msg.contains("cond: the true branch") && msg.contains("f32[3]") && msg.contains("f32[1]"),
        "{msg}"
    );
}

/// The seed's RNN cell as a `#[scan]` step: the carry, one slice of xs, then the weights
/// (loop-invariant: passed once, not scanned).
#[jaxrs::scan]
fn rnn_cell(h: Array, x: &Array, p: &Rnn) -> (Array, Array) {
    let h = (h.matmul(&p.w_hh) + x.matmul(&p.w_xh) + &p.b).tanh();
    let y = h.matmul(&p.w_hy);
    (h, y)
}

/// The same cell, rematerialised: `scan(remat(cell))`, "remat the scan body".
#[jaxrs::scan]
#[remat]
fn rnn_cell_remat(h: Array, x: &Array, p: &Rnn) -> (Array, Array) {
    let h = (h.matmul(&p.w_hh) + x.matmul(&p.w_xh) + &p.b).tanh();
    let y = h.matmul(&p.w_hy);
    (h, y)
}

#[jaxrs::scan(reverse, unroll = 2)]
fn running_sum((total, count): (Array, Array), x: Array) -> ((Array, Array), Array) {
    let total = &total + &x;
    ((total.clone(), &count + 1.0), total)
}

#[jaxrs::scan(length = 3)]
fn countdown(c: Array, _: ()) -> (Array, Array) {
    (&c - 1.0, c)
}

#[test]
fn the_scan_attribute_matches_the_function() {
    let g = golden();
    let i = &g["inputs"];
    let params = Rnn {
        w_hh: array(&i["w_hh"]),
        w_xh: array(&i["w_xh"]),
        b: array(&i["b"]),
        w_hy: array(&i["w_hy"]),
    };
    let (h_t, ys) = rnn_cell(array(&i["h0"]), &array(&i["xs"]), &params);
    assert_close("hT", &h_t, &g["h_t"], 1e-5);
    assert_close("ys", &ys, &g["ys"], 1e-5);
    let ((total, count), partial) = running_sum(
        (Array::scalar(0.0f32), Array::scalar(0.0f32)),
        Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]),
    );
    assert_eq!((total.item::<f32>(), count.item::<f32>()), (6.0, 3.0));
    assert_eq!(partial.to_vec::<f32>(), vec![6.0, 5.0, 3.0]);
    let (c, ys) = countdown(Array::scalar(10.0f32), ());
    assert_eq!(
        (c.item::<f32>(), ys.to_vec::<f32>()),
        (7.0, vec![10.0, 9.0, 8.0])
    );
}

/// `#[scan] #[remat]` gives the plain `#[scan]` step's results and gradients, and the
/// gradient's loop recomputes the step behind an `optimization_barrier`.
#[test]
fn a_rematerialised_scan_step_matches_the_plain_one() {
    let g = golden();
    let i = &g["inputs"];
    let params = Rnn {
        w_hh: array(&i["w_hh"]),
        w_xh: array(&i["w_xh"]),
        b: array(&i["b"]),
        w_hy: array(&i["w_hy"]),
    };
    let (h0, xs) = (array(&i["h0"]), array(&i["xs"]));
    let close = |what: &str, got: &Array, want: &Array| {
        assert_eq!(got.shape(), want.shape(), "{what}");
        for (p, q) in got.to_vec::<f32>().iter().zip(want.to_vec::<f32>()) {
            assert!(
                (p - q).abs() <= 1e-5 * (1.0 + q.abs()),
                "{what}: {p} vs {q}"
            );
        }
    };
    let (h_plain, ys_plain) = rnn_cell(h0.clone(), &xs, &params);
    let (h_remat, ys_remat) = rnn_cell_remat(h0.clone(), &xs, &params);
    close("hT", &h_remat, &h_plain);
    close("ys", &ys_remat, &ys_plain);
    let loss = |use_remat: bool| {
        let (h0, xs) = (h0.clone(), xs.clone());
        move |p: Rnn| {
            let (h, ys) = if use_remat {
                rnn_cell_remat(h0.clone(), &xs, &p)
            } else {
                rnn_cell(h0.clone(), &xs, &p)
            };
            (&h * &h).sum(None, false) + ys.sin().sum(None, false)
        }
    };
    let want = grad(loss(false))(params.clone());
    let got = grad(loss(true))(params.clone());
    close("dw_hh", &got.w_hh, &want.w_hh);
    close("dw_xh", &got.w_xh, &want.w_xh);
    close("db", &got.b, &want.b);
    close("dw_hy", &got.w_hy, &want.w_hy);
    let text = stablehlo(|p: Rnn| grad(loss(true))(p), &params);
    let barrier = text
        .find("\"stablehlo.optimization_barrier\"")
        .unwrap_or_else(|| panic!("no barrier in\n{text}"));
    assert!(
        text[..barrier].contains("stablehlo.while"),
        "the barrier is not inside a loop:\n{text}"
    );
    let plain = stablehlo(|p: Rnn| grad(loss(false))(p), &params);
    assert!(!plain.contains("optimization_barrier"), "{plain}");
}

/// The backward loop of a scan computes cotangents only for what is differentiated: with
/// respect to the weights alone, the data's cotangents are not stacked.
#[test]
fn the_backward_scan_skips_cotangents_nobody_needs() {
    let w = Array::from_vec(vec![0.5f32, -0.25, 0.125, 0.75], &[2, 2]);
    let xs = Array::from_vec((0..10).map(|i| i as f32 * 0.1).collect(), &[5, 2]);
    let rnn = |w: &Array, xs: Array| {
        scan(
            |h: Array, x: Array| ((h.matmul(w) + x).tanh(), ()),
            Array::zeros(&[2], DType::F32),
            xs,
        )
        .0
        .sum(None, false)
    };
    let weights_only = stablehlo(
        |(w, xs): (Array, Array)| grad(|w: Array| rnn(&w, xs.clone()))(w),
        &(w.clone(), xs.clone()),
    );
    let both = stablehlo(
        |(w, xs): (Array, Array)| grad(|(w, xs): (Array, Array)| rnn(&w, xs))((w, xs)),
        &(w, xs),
    );
    let stacked = |hlo: &str| hlo.matches("stablehlo.dynamic_update_slice").count();
    assert_eq!(stacked(&both), stacked(&weights_only) + 1, "{weights_only}");
}
