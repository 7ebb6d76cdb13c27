//! `#[jit]` and `jit(f)`: caching, retracing and its explanation, static and traced scalars,
//! donation, threads, error messages.

use jaxrs::prelude::*;
use jaxrs::{make_jaxpr, stablehlo};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn arr(v: &[f32]) -> Array {
    Array::from_slice(v, &[v.len()])
}

fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("must panic");
    err.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[jit]
fn affine(x: &Array, scale: f32) -> Array {
    x * scale + 1.0
}

#[test]
fn same_avals_hit_the_cache_and_a_new_shape_retraces_with_a_reason() {
    let before = affine::jit_site().cache_misses();
    assert_eq!(
        affine(&arr(&[1.0, 2.0, 3.0]), 2.0).to_vec::<f32>(),
        vec![3.0, 5.0, 7.0]
    );
    // A new value of a traced scalar is not a new signature.
    assert_eq!(
        affine(&arr(&[1.0, 2.0, 3.0]), 3.0).to_vec::<f32>(),
        vec![4.0, 7.0, 10.0]
    );
    assert_eq!(
        affine(&arr(&[0.0, 0.0, 0.0]), 0.5).to_vec::<f32>(),
        vec![1.0, 1.0, 1.0]
    );
    assert_eq!(affine::jit_site().cache_misses(), before + 1);
    assert_eq!(
        affine(&arr(&[1.0, 2.0, 3.0, 4.0]), 1.0).to_vec::<f32>(),
        vec![2.0, 3.0, 4.0, 5.0]
    );
    assert_eq!(affine::jit_site().cache_misses(), before + 2);
    let why = affine::jit_site()
        .last_miss_explanation()
        .expect("explained");
    assert!(why.contains("f32[3]") && why.contains("f32[4]"), "{why}");
    assert!(why.contains("affine"), "{why}");
}

#[jit(static = n)]
fn power_sum(x: &Array, n: i32) -> Array {
    x.powi(n).sum(None, false)
}

#[test]
fn a_new_static_value_retraces_and_says_so() {
    let x = arr(&[1.0, 2.0]);
    assert_eq!(power_sum(&x, 2).item::<f32>(), 5.0);
    assert_eq!(power_sum(&x, 2).item::<f32>(), 5.0);
    assert_eq!(power_sum::jit_site().cache_misses(), 1);
    assert_eq!(power_sum(&x, 3).item::<f32>(), 9.0);
    assert_eq!(power_sum::jit_site().cache_misses(), 2);
    let why = power_sum::jit_site().last_miss_explanation().unwrap();
    assert!(
        why.contains("static") && why.contains('2') && why.contains('3'),
        "{why}"
    );
}

#[jit(static = lr)]
fn scaled(x: &Array, lr: f64) -> Array {
    x * lr
}

#[test]
fn float_statics_are_keyed_by_value() {
    let x = arr(&[2.0]);
    assert_eq!(scaled(&x, 0.5).item::<f32>(), 1.0);
    assert_eq!(scaled(&x, 0.5).item::<f32>(), 1.0);
    assert_eq!(scaled(&x, 0.25).item::<f32>(), 0.5);
    assert_eq!(scaled::jit_site().cache_misses(), 2);
}

#[jit(donate = x)]
fn double_in_place(x: Array) -> Array {
    &x * 2.0
}

#[test]
fn a_donated_unshared_buffer_is_reused_for_the_output() {
    let x = Array::from_vec(vec![1.0f32; 1024], &[1024]);
    let y = double_in_place(x);
    assert_eq!(y.to_vec::<f32>(), vec![2.0f32; 1024]);
    let stats = double_in_place::jit_site()
        .last_compiled_memory_stats()
        .expect("stats");
    assert_eq!(stats.alias_bytes, 4096, "{stats:?}");
    // And the buffer really goes: donate one we can still observe through the executable's
    // own view (the output of a previous call, moved in).
    let z = double_in_place(y);
    assert_eq!(z.to_vec::<f32>(), vec![4.0f32; 1024]);
}

#[test]
fn a_donated_buffer_shared_with_a_clone_stays_readable() {
    let x = Array::from_vec(vec![3.0f32; 8], &[8]);
    let keep = x.clone();
    let y = double_in_place(x);
    assert_eq!(y.to_vec::<f32>(), vec![6.0f32; 8]);
    assert!(!keep.is_deleted());
    assert_eq!(keep.to_vec::<f32>(), vec![3.0f32; 8]);
}

#[test]
fn closures_donate_through_jit_with_ownership() {
    let f = jit(|x: Array| &x + 1.0).donate_argument();
    let x = Array::from_vec(vec![1.0f32; 16], &[16]);
    let y: Array = f.call(x);
    assert_eq!(y.to_vec::<f32>(), vec![2.0f32; 16]);
    assert_eq!(
        f.site().last_compiled_memory_stats().unwrap().alias_bytes,
        64
    );
}

#[test]
fn closures_donate_chosen_tuple_elements() {
    // JAX's donate_argnums=(0, 2): the parameters and the state, not the batch.
    let step = jit(|(w, x, s): (Array, Array, Array)| {
        let w2 = &w - &x * 0.5;
        let s2 = &s + 1.0;
        (w2, s2)
    })
    .donate_argnums(&[0, 2]);
    let (w, x, s) = (
        Array::from_vec(vec![1.0f32; 16], &[16]),
        Array::from_vec(vec![2.0f32; 16], &[16]),
        Array::from_vec(vec![0.0f32; 16], &[16]),
    );
    let (w2, s2): (Array, Array) = step.call((w, x.clone(), s));
    assert_eq!(w2.to_vec::<f32>(), vec![0.0f32; 16]);
    assert_eq!(s2.to_vec::<f32>(), vec![1.0f32; 16]);
    // Both results reuse a donated buffer; the batch is read again.
    let stats = step.site().last_compiled_memory_stats().unwrap();
    assert_eq!(stats.alias_bytes, 2 * 64);
    assert_eq!(x.to_vec::<f32>(), vec![2.0f32; 16]);
    // The same program serves the next call; a donated element passed twice is refused.
    let (w3, _): (Array, Array) = step.call((w2, x.clone(), s2));
    assert_eq!(w3.to_vec::<f32>(), vec![-1.0f32; 16]);
    assert_eq!(step.site().cache_misses(), 1);
    let again = w3.clone();
    let err = try_run(|| {
        let _: (Array, Array) = step.call((w3, x.clone(), again));
    })
    .expect_err("donated and passed again");
    assert!(matches!(err, jaxrs::Error::DonatedBufferUsed(_)), "{err}");
}

#[test]
fn donate_argnums_names_what_does_not_fit() {
    let f = jit(|x: Array| &x + 1.0).donate_argnums(&[0]);
    let msg = panic_message(|| {
        let _: Array = f.call(Array::zeros(&[2], DType::F32));
    });
    assert!(
        msg.contains("donate_argnums([0]) needs a tuple argument"),
        "{msg}"
    );
    let g = jit(|(a, b): (Array, Array)| &a + &b).donate_argnums(&[2]);
    let msg = panic_message(|| {
        let _: Array = g.call((
            Array::zeros(&[2], DType::F32),
            Array::zeros(&[2], DType::F32),
        ));
    });
    assert!(
        msg.contains("names element 2, but the argument tuple has 2 elements"),
        "{msg}"
    );
}

#[derive(Tree, Clone, Debug)]
struct Linear {
    w: Array,
    b: Array,
}

#[jit(donate = params)]
fn sgd_step(params: Linear, x: &Array, y: &Array, lr: f32) -> (Linear, Array) {
    // Least squares on a linear model, with its gradient written out.
    let pred = x.matmul(&params.w) + &params.b;
    let err = &pred - y;
    let n = x.shape()[0] as f32;
    let loss = (&err * &err).mean(None, false);
    let gw = x.t().matmul(&err) * (2.0 / n);
    let gb = err.sum(0, false) * (2.0 / n);
    let updated = Linear {
        w: &params.w - &gw * lr,
        b: &params.b - &gb * lr,
    };
    (updated, loss)
}

#[test]
fn a_tree_of_parameters_is_donated_and_updated() {
    let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
    let y = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3, 1]);
    let mut params = Linear {
        w: Array::zeros(&[2, 1], DType::F32),
        b: Array::zeros(&[1], DType::F32),
    };
    let mut losses = vec![];
    for _ in 0..50 {
        let (p, loss) = sgd_step(params, &x, &y, 0.02);
        params = p;
        losses.push(loss.item::<f32>());
    }
    assert_eq!(sgd_step::jit_site().cache_misses(), 1);
    assert!(losses[49] < losses[0] * 0.05, "{losses:?}");
    // The same steps run eagerly give the same numbers.
    let mut eager = Linear {
        w: Array::zeros(&[2, 1], DType::F32),
        b: Array::zeros(&[1], DType::F32),
    };
    for (step, want) in losses.iter().enumerate().take(5) {
        let pred = x.matmul(&eager.w) + &eager.b;
        let err = &pred - &y;
        let loss = (&err * &err).mean(None, false).item::<f32>();
        assert!(
            (loss - want).abs() <= 1e-6 * want.abs().max(1.0),
            "step {step}: {loss} vs {want}"
        );
        let gw = x.t().matmul(&err) * (2.0 / 3.0);
        let gb = err.sum(0, false) * (2.0 / 3.0);
        eager = Linear {
            w: &eager.w - &gw * 0.02,
            b: &eager.b - &gb * 0.02,
        };
    }
}

#[jit]
fn mlp(x: &Array, w1: &Array, w2: &Array) -> Array {
    x.matmul(w1).gelu().matmul(w2).log_softmax(-1)
}

#[test]
fn jit_equals_eager() {
    let x = Array::from_vec((0..12).map(|i| i as f32 * 0.1 - 0.5).collect(), &[3, 4]);
    let w1 = Array::from_vec(
        (0..20).map(|i| ((i * 7) % 11) as f32 * 0.1 - 0.5).collect(),
        &[4, 5],
    );
    let w2 = Array::from_vec(
        (0..10).map(|i| ((i * 3) % 7) as f32 * 0.2 - 0.6).collect(),
        &[5, 2],
    );
    let jitted = mlp(&x, &w1, &w2).to_vec::<f32>();
    let eager = x
        .matmul(&w1)
        .gelu()
        .matmul(&w2)
        .log_softmax(-1)
        .to_vec::<f32>();
    for (a, b) in jitted.iter().zip(&eager) {
        assert!((a - b).abs() <= 1e-6, "{jitted:?} vs {eager:?}");
    }
}

#[test]
fn four_threads_share_one_jitted_function() {
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..50 {
                    let v = (t * 100 + i) as f32;
                    let y = affine(&arr(&[v, v + 1.0]), 2.0);
                    assert_eq!(y.to_vec::<f32>(), vec![2.0 * v + 1.0, 2.0 * v + 3.0]);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
}

const MISMATCH_LINE: u32 = line!() + 3;
#[jit]
fn mismatched(a: &Array, b: &Array) -> Array {
    a + b
}

#[test]
fn a_shape_mismatch_names_the_op_the_shapes_and_the_users_line() {
    let line = MISMATCH_LINE;
    let err = catch_unwind(AssertUnwindSafe(|| {
        mismatched(&arr(&[1.0, 2.0, 3.0]), &arr(&[1.0; 4]))
    }))
    .expect_err("must panic");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("add"), "{msg}");
    assert!(msg.contains("f32[3]") && msg.contains("f32[4]"), "{msg}");
    assert!(msg.contains(&format!("tests/jit.rs:{line}")), "{msg}");
}

#[test]
fn ir_and_stablehlo_can_be_printed_with_source_lines() {
    let x = arr(&[1.0, 2.0]);
    let jaxpr = make_jaxpr(|x: Array| affine(&x, 3.0).exp(), &x);
    let text = jaxpr.to_string();
    assert!(
        text.contains("mul") && text.contains("add") && text.contains("exp"),
        "{text}"
    );
    let hlo = stablehlo(|x: Array| affine(&x, 3.0).exp(), &x);
    assert!(hlo.contains("stablehlo.exponential"), "{hlo}");
    assert!(hlo.contains("tests/jit.rs"), "{hlo}");
}

/// As JAX's, a captured array reaches XLA as a constant of the program; one larger than
/// 16 KiB (a weight matrix) is an argument instead, so that the program text stays small.
#[test]
fn small_captured_arrays_are_embedded_and_large_ones_are_inputs() {
    let big = Array::from_vec(vec![1.5f32; 8192], &[8192]);
    let hlo = stablehlo(|x: Array| &x + &big, &Array::zeros(&[8192], DType::F32));
    assert!(!hlo.contains("1.5"), "the captured array was pasted in");
    assert!(hlo.contains("%arg1: tensor<8192xf32>"), "{hlo}");
    let f = jit(|x: Array| &x + &big);
    let y: Array = f.call(Array::ones(&[8192], DType::F32));
    assert_eq!(y.to_vec::<f32>(), vec![2.5f32; 8192]);

    let small = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
    let hlo = stablehlo(|x: Array| &x * &small, &Array::zeros(&[3], DType::F32));
    assert!(hlo.contains("@main(%arg0: tensor<3xf32>)"), "{hlo}");
    // The raw little-endian f32 bytes of 1, 2, 3.
    assert!(
        hlo.contains("dense<\"0x0000803F0000004000004040\"> : tensor<3xf32>"),
        "{hlo}"
    );
    let g = jit(|x: Array| &x * &small);
    let y: Array = g.call(Array::ones(&[3], DType::F32));
    assert_eq!(y.to_vec::<f32>(), vec![1.0, 2.0, 3.0]);
}

#[jit(donate = params, static = (mode, scale))]
fn named_step(params: Linear, x: &Array, mode: &str, scale: usize) -> Linear {
    let k = (mode.len() * scale) as f32;
    Linear {
        w: &params.w * k + x.sum(None, false),
        b: params.b,
    }
}

#[test]
fn recompile_explanations_name_parameters_and_fields() {
    let params = |rows: usize| Linear {
        w: Array::zeros(&[rows, 1], DType::F32),
        b: Array::zeros(&[1], DType::F32),
    };
    let site = named_step::jit_site();
    // Calls with `params` of `rows` rows and an `x` of `x_shape`; the explanation of the miss.
    let miss = |rows: usize, x_shape: &[usize], mode: &str, scale: usize| {
        drop(named_step(
            params(rows),
            &Array::zeros(x_shape, DType::F32),
            mode,
            scale,
        ));
        site.last_miss_explanation().unwrap()
    };
    assert!(miss(2, &[3], "ab", 1).ends_with("for the first time"));
    // A kept parameter.
    let why = miss(2, &[4, 3], "ab", 1);
    assert!(
        why.ends_with("because x changed from f32[3] to f32[4,3]"),
        "{why}"
    );
    // A field of a donated parameter.
    let why = miss(5, &[4, 3], "ab", 1);
    assert!(
        why.ends_with("because params.w changed from f32[2,1] to f32[5,1]"),
        "{why}"
    );
    // Static parameters: only the ones that changed, with their values.
    let why = miss(5, &[4, 3], "a, b", 1);
    assert!(
        why.ends_with(r#"because static mode changed from "ab" to "a, b""#),
        "{why}"
    );
    let why = miss(5, &[4, 3], "ab", 3);
    assert!(
        why.ends_with(
            r#"because static mode changed from "a, b" to "ab"; static scale changed from 1 to 3"#
        ),
        "{why}"
    );
    assert_eq!(site.cache_misses(), 5);
}

#[test]
fn a_jitted_closure_names_its_argument_by_position() {
    let f = jit(|(x, p): (Array, Linear)| &x + p.b);
    let p = |n: usize| Linear {
        w: Array::zeros(&[n], DType::F32),
        b: Array::zeros(&[1], DType::F32),
    };
    let _: Array = f.call((Array::zeros(&[2], DType::F32), p(1)));
    let _: Array = f.call((Array::zeros(&[2], DType::F32), p(3)));
    let why = f.site().last_miss_explanation().unwrap();
    assert!(
        why.ends_with("because arg[1].w changed from f32[1] to f32[3]"),
        "{why}"
    );
    let _: Array = f.call((Array::zeros(&[4], DType::F32), p(3)));
    let why = f.site().last_miss_explanation().unwrap();
    assert!(
        why.ends_with("because arg[0] changed from f32[2] to f32[4]"),
        "{why}"
    );

    let g = jit(|p: Linear| p.w).donate_argument();
    let _: Array = g.call(p(1));
    let _: Array = g.call(p(2));
    let why = g.site().last_miss_explanation().unwrap();
    assert!(
        why.ends_with("because arg.w changed from f32[1] to f32[2]"),
        "{why}"
    );
}

#[jit]
fn total(scale: &Array, xs: Vec<Array>) -> Array {
    xs.iter()
        .fold(scale.clone(), |acc, x| &acc + x.sum(None, false))
}

#[test]
fn a_changed_structure_is_named_by_parameter() {
    let one = Array::ones(&[1], DType::F32);
    assert_eq!(total(&one, vec![one.clone()]).to_vec::<f32>(), vec![2.0]);
    assert_eq!(
        total(&one, vec![one.clone(), one.clone()]).to_vec::<f32>(),
        vec![3.0]
    );
    let why = total::jit_site().last_miss_explanation().unwrap();
    assert!(
        why.ends_with("because the structure of xs changed from vec![*] to vec![*, *]"),
        "{why}"
    );
}

/// `a @ a` for a row-major n x n matrix of small integers (exact in f32 in any order).
fn host_square(a: &[f32], n: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; n * n];
    for i in 0..n {
        for k in 0..n {
            let aik = a[i * n + k];
            for j in 0..n {
                out[i * n + j] += aik * a[k * n + j];
            }
        }
    }
    out
}

/// `v` rounded to bf16 (nearest, ties to even), for finite `v`.
fn bf16_round(v: f32) -> f32 {
    let bits = v.to_bits();
    f32::from_bits((bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff_0000)
}

#[test]
fn results_read_at_once_wait_for_their_values() {
    // Dispatch is asynchronous: a jitted matmul's outputs are read before they are computed,
    // so every read path must wait for the value (in f32, bool, bf16, and a scalar).
    let n = 256;
    let values: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32).collect();
    let expected = host_square(&values, n);
    let a = Array::from_vec(values, &[n, n]);
    let f = jit(|a: Array| {
        let p = a.matmul(&a);
        let total = p.sum(None, false);
        let big = p.gt(1000.0);
        let half = p.astype(DType::BF16);
        (p, total, big, half)
    });
    for _ in 0..3 {
        let (p, total, big, half) = f.call(a.clone());
        // 67 million: past f32's exact integers, so XLA's summation order shows.
        let want: f64 = expected.iter().map(|&v| v as f64).sum();
        assert!((total.item::<f32>() as f64 - want).abs() <= want * 1e-5);
        assert_eq!(p.to_vec::<f32>(), expected);
        let flags: Vec<bool> = expected.iter().map(|&v| v > 1000.0).collect();
        assert_eq!(big.to_vec::<bool>(), flags);
        // Sums up to 4096 with integer entries: some lose bits in bf16, as in JAX.
        let rounded: Vec<f64> = expected.iter().map(|&v| bf16_round(v) as f64).collect();
        assert_eq!(half.to_f64_vec(), rounded);
    }
}
