//! `#[remat]` and `remat(f)`: gradients equal to plain reverse mode under every policy, eagerly
//! and under jit; the recomputation kept apart by `stablehlo.optimization_barrier`; compiled
//! temp memory of a deep MLP's gradient at least halved; forward mode, `check_grads` and
//! grad-of-grad through remat.

use jaxrs::prelude::*;
use jaxrs::{check_grads, check_grads_with, make_jaxpr, scan, stablehlo, value_and_grad, Modes};

#[path = "../benches/common/remat_model.rs"]
mod remat_model;
use remat_model::rand;

type Params = Vec<(Array, Array)>;

/// `n` blocks of `W1: [d, h]`, `W2: [h, d]`, scaled so that activations stay O(1).
fn params(n: usize, d: usize, h: usize, dtype: DType) -> Params {
    (0..n)
        .map(|i| {
            (
                rand(&[d, h], 100 + 2 * i as u64, (1.0 / d as f64).sqrt(), dtype),
                rand(&[h, d], 101 + 2 * i as u64, (1.0 / h as f64).sqrt(), dtype),
            )
        })
        .collect()
}

/// The seed's residual block.
fn block_plain(x: &Array, w1: &Array, w2: &Array) -> Array {
    x + x.matmul(w1).gelu().matmul(w2)
}

/// The same block, rematerialised.
#[remat]
fn block(x: &Array, w1: &Array, w2: &Array) -> Array {
    x + x.matmul(w1).gelu().matmul(w2)
}

/// The block with its hidden values named, for `save_only_these_names`.
fn block_named(x: &Array, w1: &Array, w2: &Array) -> Array {
    let h = checkpoint_name(&x.matmul(w1), "pre");
    let g = checkpoint_name(&h.gelu(), "act");
    x + g.matmul(w2)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Plain,
    Macro,
    Policy(usize),
}

fn policies() -> Vec<RematPolicy> {
    vec![
        RematPolicy::NothingSaveable,
        RematPolicy::DotsSaveable,
        RematPolicy::EverythingSaveable,
        RematPolicy::save_only_these_names(["act"]),
        RematPolicy::save_only_these_names(["pre", "act"]),
    ]
}

/// `mean(x^2)` after the blocks.
fn loss(p: &Params, x: &Array, mode: Mode) -> Array {
    let mut h = x.clone();
    for (w1, w2) in p {
        h = match mode {
            Mode::Plain => block_plain(&h, w1, w2),
            Mode::Macro => block(&h, w1, w2),
            Mode::Policy(i) => {
                remat(|(x, w1, w2): (Array, Array, Array)| block_named(&x, &w1, &w2))
                    .policy(policies()[i].clone())
                    .call((h, w1.clone(), w2.clone()))
            }
        };
    }
    (&h * &h).mean(None, false)
}

/// Largest elementwise difference relative to the largest magnitude, over all leaves.
fn rel_diff(got: &Params, want: &Params) -> f64 {
    let flat = |p: &Params| -> Vec<Vec<f64>> {
        p.iter()
            .flat_map(|(a, b)| [a.to_f64_vec(), b.to_f64_vec()])
            .collect()
    };
    let (g, w) = (flat(got), flat(want));
    let mut worst: f64 = 0.0;
    for (g, w) in g.iter().zip(&w) {
        let scale = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 0.0, "a zero gradient: the test would prove nothing");
        for (a, b) in g.iter().zip(w) {
            worst = worst.max((a - b).abs() / scale);
        }
    }
    worst
}

fn grads(p: &Params, x: &Array, mode: Mode) -> Params {
    grad(|p: Params| loss(&p, x, mode))(p.clone())
}

fn jit_grads(p: &Params, x: &Array, mode: Mode) -> Params {
    jit(|(p, x): (Params, Array)| grad(|p: Params| loss(&p, &x, mode))(p))
        .call((p.clone(), x.clone()))
}

/// The seed's §4: six residual `gelu(x W1) W2` blocks, each rematerialised, give the same
/// gradients as without remat, eagerly and under jit.
#[test]
fn six_residual_blocks_match_plain_gradients() {
    let (b, d, h) = (8, 16, 32);
    let p = params(6, d, h, DType::F32);
    let x = rand(&[b, d], 7, 1.0, DType::F32);
    let want = grads(&p, &x, Mode::Plain);
    let got = grads(&p, &x, Mode::Macro);
    let eager = rel_diff(&got, &want);
    assert!(eager <= 1e-6, "eager: relative difference {eager}");

    let want_jit = jit_grads(&p, &x, Mode::Plain);
    let got_jit = jit_grads(&p, &x, Mode::Macro);
    let jitted = rel_diff(&got_jit, &want_jit);
    assert!(jitted <= 1e-6, "jit: relative difference {jitted}");
    // And jit agrees with eager (looser: XLA fuses differently).
    let across = rel_diff(&got_jit, &want);
    assert!(across <= 1e-5, "jit vs eager: relative difference {across}");
}

/// Every policy computes the same gradients.
#[test]
fn every_policy_gives_the_plain_gradients() {
    let (b, d, h) = (4, 8, 16);
    let p = params(3, d, h, DType::F32);
    let x = rand(&[b, d], 8, 1.0, DType::F32);
    let want = grads(&p, &x, Mode::Plain);
    let want_jit = jit_grads(&p, &x, Mode::Plain);
    for (i, policy) in policies().iter().enumerate() {
        let eager = rel_diff(&grads(&p, &x, Mode::Policy(i)), &want);
        assert!(eager <= 1e-6, "{policy} eager: relative difference {eager}");
        let jitted = rel_diff(&jit_grads(&p, &x, Mode::Policy(i)), &want_jit);
        assert!(jitted <= 1e-6, "{policy} jit: relative difference {jitted}");
    }
}

/// The recomputation reads its inputs through `stablehlo.optimization_barrier` in the
/// gradient's program; the primal program has none (nothing to keep apart).
#[test]
fn the_gradient_program_has_an_optimization_barrier() {
    let p = params(2, 4, 8, DType::F32);
    let x = rand(&[2, 4], 9, 1.0, DType::F32);
    let text = stablehlo(
        |p: Params| grad(|p: Params| loss(&p, &x, Mode::Macro))(p),
        &p,
    );
    assert_eq!(
        text.matches("\"stablehlo.optimization_barrier\"").count(),
        2,
        "one barrier per block:\n{text}"
    );
    let primal = stablehlo(|p: Params| loss(&p, &x, Mode::Macro), &p);
    assert!(!primal.contains("optimization_barrier"), "{primal}");
    // The jaxpr of the primal shows one `remat` equation per block, with its policy.
    let jaxpr = make_jaxpr(|p: Params| loss(&p, &x, Mode::Macro), &p).to_string();
    assert_eq!(
        jaxpr.matches("remat[policy=nothing_saveable").count(),
        2,
        "{jaxpr}"
    );
    // The plain gradient has no barrier; everything_saveable recomputes nothing, so none.
    let plain = stablehlo(
        |p: Params| grad(|p: Params| loss(&p, &x, Mode::Plain))(p),
        &p,
    );
    assert!(!plain.contains("optimization_barrier"));
    let everything = stablehlo(
        |p: Params| grad(|p: Params| loss(&p, &x, Mode::Policy(2)))(p),
        &p,
    );
    assert!(!everything.contains("optimization_barrier"));
}

/// `dots_saveable` recomputes the elementwise work but not the matrix products: the gradient
/// program has fewer `dot_general`s than with `nothing_saveable`.
#[test]
fn dots_saveable_does_not_recompute_the_products() {
    let p = params(1, 4, 8, DType::F32);
    let x = rand(&[2, 4], 10, 1.0, DType::F32);
    // Differentiate with respect to `x` too, so that every product has both cotangents.
    let dots = |mode| {
        stablehlo(
            |(p, x): (Params, Array)| grad(|(p, x): (Params, Array)| loss(&p, &x, mode))((p, x)),
            &(p.clone(), x.clone()),
        )
        .matches("\"stablehlo.dot_general\"")
        .count()
    };
    let (plain, nothing, dots_saved) = (
        dots(Mode::Plain),
        dots(Mode::Policy(0)),
        dots(Mode::Policy(1)),
    );
    // Plain: 2 forward + 4 backward. nothing_saveable recomputes both forward products;
    // dots_saveable recomputes none of them.
    assert_eq!(plain, 6);
    assert_eq!(nothing, 8);
    assert_eq!(dots_saved, 6);
}

/// A jitted value-and-gradient of a 12-block MLP at a batch where activations dominate.
fn mlp_temp_bytes(mode: Mode) -> i64 {
    let (b, d) = (512, 256);
    let p = params(12, d, d, DType::F32);
    let x = rand(&[b, d], 11, 1.0, DType::F32);
    let f = jit(move |(p, x): (Params, Array)| value_and_grad(|p: Params| loss(&p, &x, mode))(p));
    let (value, _) = f.call((p, x));
    assert!(value.item::<f32>().is_finite());
    f.site()
        .last_compiled_memory_stats()
        .expect("compiled memory stats")
        .temp_bytes
}

#[test]
fn remat_at_least_halves_the_temp_memory_of_a_deep_mlp() {
    let plain = mlp_temp_bytes(Mode::Plain);
    let remat = mlp_temp_bytes(Mode::Macro);
    eprintln!(
        "12-block MLP, B=512 D=256 f32: temp bytes without remat {plain}, with remat {remat} \
         ({:.2}x less)",
        plain as f64 / remat as f64
    );
    assert!(
        2 * remat <= plain,
        "remat temp bytes {remat} are not at most half of {plain}"
    );
}

/// Reverse mode through a rematerialised function agrees with finite differences and with
/// forward mode, to second order.
#[test]
fn check_grads_through_remat() {
    let x = rand(&[3, 4], 12, 1.0, DType::F64);
    let w1 = rand(&[4, 5], 13, 0.5, DType::F64);
    let w2 = rand(&[5, 4], 14, 0.5, DType::F64);
    let args = (x, w1, w2);
    check_grads_with(
        |(x, w1, w2): (Array, Array, Array)| block(&x, &w1, &w2),
        &args,
        1,
        Modes::Reverse,
    );
    for policy in policies() {
        let f =
            remat(|(x, w1, w2): (Array, Array, Array)| block_named(&x, &w1, &w2)).policy(policy);
        check_grads(|a: (Array, Array, Array)| f.call(a), &args, 2);
    }
}

/// grad of grad through remat equals grad of grad without it.
#[test]
fn grad_of_grad_through_remat() {
    let x = rand(&[5], 15, 1.0, DType::F64);
    let inner = |x: &Array| (x.sin() * x).exp();
    let f_remat = remat(move |x: Array| inner(&x));
    let first = |use_remat: bool| {
        let f_remat = f_remat.clone();
        move |x: Array| {
            let y = if use_remat {
                f_remat.call(x)
            } else {
                inner(&x)
            };
            y.sum(None, false)
        }
    };
    let second = |use_remat: bool| {
        let g = grad(first(use_remat));
        grad(move |x: Array| g(x).sum(None, false))
    };
    let want = second(false)(x.clone()).to_vec::<f64>();
    let got = second(true)(x.clone()).to_vec::<f64>();
    for (a, b) in got.iter().zip(&want) {
        assert!(
            (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
            "{got:?} vs {want:?}"
        );
    }
    // Under jit too.
    let jitted = jit(move |x: Array| second(true)(x)).call(x);
    for (a, b) in jitted.to_vec::<f64>().iter().zip(&want) {
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()));
    }
}

/// Forward mode through remat equals forward mode without it.
#[test]
fn jvp_through_remat() {
    let p = params(2, 4, 8, DType::F64);
    let x = rand(&[3, 4], 16, 1.0, DType::F64);
    let t = rand(&[3, 4], 17, 1.0, DType::F64);
    let run = |mode| {
        let p = p.clone();
        jvp(
            move |x: Array| {
                let mut h = x;
                for (w1, w2) in &p {
                    h = match mode {
                        Mode::Plain => block_plain(&h, w1, w2),
                        _ => block(&h, w1, w2),
                    };
                }
                h
            },
            &x,
            &t,
        )
    };
    let (y0, t0) = run(Mode::Plain);
    let (y1, t1) = run(Mode::Macro);
    for (a, b) in [(y1, y0), (t1, t0)] {
        for (u, v) in a.to_vec::<f64>().iter().zip(b.to_vec::<f64>()) {
            assert!((u - v).abs() <= 1e-12 * (1.0 + v.abs()), "{u} vs {v}");
        }
    }
}

/// Weights captured by a rematerialised closure get their gradients.
#[test]
fn captured_values_are_differentiated() {
    let w = rand(&[3, 3], 18, 1.0, DType::F64);
    let x = rand(&[2, 3], 19, 1.0, DType::F64);
    let f = |use_remat: bool| {
        let x = x.clone();
        move |w: Array| {
            let inner = |x: Array| x.matmul(&w).tanh();
            let y = if use_remat {
                remat(inner).call(x.clone())
            } else {
                inner(x.clone())
            };
            y.sum(None, false)
        }
    };
    let want = grad(f(false))(w.clone()).to_vec::<f64>();
    let got = grad(f(true))(w).to_vec::<f64>();
    assert!(got.iter().any(|v| *v != 0.0));
    for (a, b) in got.iter().zip(&want) {
        assert!((a - b).abs() <= 1e-12, "{got:?} vs {want:?}");
    }
}

/// The macro's forms: a static parameter, a traced Rust scalar, a policy, trees in and out,
/// stacked with `#[jit]`.
#[remat(policy = dots_saveable, static = times)]
fn repeated(x: &Array, w: &Array, scale: f32, times: usize) -> (Array, Array) {
    let mut h = x.clone();
    for _ in 0..times {
        h = h.matmul(w).tanh() * scale;
    }
    (h.clone(), h.sum(None, false))
}

#[jit]
#[remat(policy = save_only_these_names("h"))]
fn jitted_block(x: &Array, w: &Array) -> Array {
    checkpoint_name(&x.matmul(w), "h").sin()
}

#[test]
fn macro_forms() {
    let x = rand(&[2, 3], 20, 1.0, DType::F32);
    let w = rand(&[3, 3], 21, 1.0, DType::F32);
    let loss = |use_remat: bool| {
        let x = x.clone();
        move |w: Array| {
            let (h, s) = if use_remat {
                repeated(&x, &w, 0.5, 3)
            } else {
                let mut h = x.clone();
                for _ in 0..3 {
                    h = h.matmul(&w).tanh() * 0.5;
                }
                let s = h.sum(None, false);
                (h, s)
            };
            (&h * &h).sum(None, false) + s
        }
    };
    let want = grad(loss(false))(w.clone()).to_vec::<f32>();
    let got = grad(loss(true))(w.clone()).to_vec::<f32>();
    for (a, b) in got.iter().zip(&want) {
        assert!(
            (a - b).abs() <= 1e-6 * (1.0 + b.abs()),
            "{got:?} vs {want:?}"
        );
    }
    let g = grad(|w: Array| jitted_block(&x, &w).sum(None, false))(w.clone()).to_vec::<f32>();
    let want = grad(|w: Array| x.matmul(&w).sin().sum(None, false))(w).to_vec::<f32>();
    for (a, b) in g.iter().zip(&want) {
        assert!((a - b).abs() <= 1e-6 * (1.0 + b.abs()), "{g:?} vs {want:?}");
    }
}

/// Called outside any transformation, a rematerialised function just computes.
#[test]
fn primal_calls_compute_the_function() {
    let x = rand(&[2, 4], 22, 1.0, DType::F32);
    let p = params(1, 4, 8, DType::F32);
    let (w1, w2) = &p[0];
    let want = block_plain(&x, w1, w2).to_vec::<f32>();
    assert_eq!(block(&x, w1, w2).to_vec::<f32>(), want);
    let named = checkpoint_name(&x, "x");
    assert_eq!(named.to_vec::<f32>(), x.to_vec::<f32>());
}

/// remat inside remat, and outputs that are inputs passed through or integers.
#[test]
fn nested_remat_and_passthrough_outputs() {
    let x = rand(&[4], 23, 1.0, DType::F64);
    let inner = remat(|x: Array| x.sin() * &x);
    let outer = |use_remat: bool| {
        let inner = inner.clone();
        move |x: Array| {
            let body = |x: Array| -> (Array, Array, Array) {
                let y = if use_remat {
                    inner.call(x.clone())
                } else {
                    x.sin() * &x
                };
                let n = Array::arange(0.0, 4.0, 1.0, DType::I32);
                (x.clone(), y.exp(), n)
            };
            let (x, y, n) = if use_remat {
                remat(body).policy(RematPolicy::DotsSaveable).call(x)
            } else {
                body(x)
            };
            (&x * &y).sum(None, false) + n.astype(DType::F64).sum(None, false)
        }
    };
    let want = grad(outer(false))(x.clone()).to_vec::<f64>();
    let got = grad(outer(true))(x.clone()).to_vec::<f64>();
    for (a, b) in got.iter().zip(&want) {
        assert!(
            (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
            "{got:?} vs {want:?}"
        );
    }
    check_grads(outer(true), &x, 2);
}

// --- remat and scan together ---------------------------------------------------------

fn scan_cell(h: &Array, x: &Array, w: &Array, u: &Array) -> Array {
    (h.matmul(w) + x.matmul(u)).tanh().gelu()
}

#[remat]
fn scan_cell_remat(h: &Array, x: &Array, w: &Array, u: &Array) -> Array {
    scan_cell(h, x, w, u)
}

/// 0: plain; 1: remat around the scan body; 2: scan inside remat.
fn scan_loss(w: &Array, u: &Array, xs: &Array, h0: &Array, mode: u8) -> Array {
    let run = |w: &Array, u: &Array, xs: &Array, h0: &Array, body_remat: bool| {
        let (h, hs) = scan(
            |h: Array, x: Array| {
                let h = if body_remat {
                    scan_cell_remat(&h, &x, w, u)
                } else {
                    scan_cell(&h, &x, w, u)
                };
                (h.clone(), h)
            },
            h0.clone(),
            xs.clone(),
        );
        (h * 2.0).sum(None, false) + hs.sum(None, false)
    };
    match mode {
        0 => run(w, u, xs, h0, false),
        1 => run(w, u, xs, h0, true),
        _ => remat(|(w, u, xs, h0): (Array, Array, Array, Array)| run(&w, &u, &xs, &h0, false))
            .call((w.clone(), u.clone(), xs.clone(), h0.clone())),
    }
}

#[test]
fn remat_around_a_scan_body_and_scan_inside_remat() {
    let (t, b, d) = (5, 3, 4);
    let w = rand(&[d, d], 1, 0.5, DType::F64);
    let u = rand(&[d, d], 2, 0.5, DType::F64);
    let xs = rand(&[t, b, d], 3, 1.0, DType::F64);
    let h0 = rand(&[b, d], 4, 1.0, DType::F64);
    let g = |mode: u8| {
        grad(|(w, u): (Array, Array)| scan_loss(&w, &u, &xs, &h0, mode))((w.clone(), u.clone()))
    };
    let (w0, u0) = g(0);
    for mode in [1u8, 2] {
        let (w1, u1) = g(mode);
        for (a, b) in [(&w1, &w0), (&u1, &u0)] {
            for (p, q) in a.to_vec::<f64>().iter().zip(b.to_vec::<f64>()) {
                assert!(
                    (p - q).abs() <= 1e-12 * (1.0 + q.abs()),
                    "mode {mode}: {p} vs {q}"
                );
            }
        }
        let jg = jit(|(w, u, xs, h0): (Array, Array, Array, Array)| {
            grad(|(w, u): (Array, Array)| scan_loss(&w, &u, &xs, &h0, mode))((w, u))
        })
        .call((w.clone(), u.clone(), xs.clone(), h0.clone()));
        for (p, q) in jg.0.to_vec::<f64>().iter().zip(w0.to_vec::<f64>()) {
            assert!(
                (p - q).abs() <= 1e-12 * (1.0 + q.abs()),
                "jit mode {mode}: {p} vs {q}"
            );
        }
        check_grads_with(
            |(w, u): (Array, Array)| scan_loss(&w, &u, &xs, &h0, mode),
            &(w.clone(), u.clone()),
            2,
            Modes::Both,
        );
    }
}

/// Remat around a scan body keeps only the carries per step: the jitted gradient needs less
/// temporary memory than without it.
#[test]
fn remat_around_a_scan_body_saves_memory() {
    let (t, b, d) = (16, 128, 128);
    let w = rand(&[d, d], 1, 0.05, DType::F64).astype(DType::F32);
    let u = rand(&[d, d], 2, 0.05, DType::F64).astype(DType::F32);
    let xs = rand(&[t, b, d], 3, 1.0, DType::F64).astype(DType::F32);
    let h0 = rand(&[b, d], 4, 1.0, DType::F64).astype(DType::F32);
    let temp = |mode: u8| {
        let f = jit(move |(w, u, xs, h0): (Array, Array, Array, Array)| {
            grad(|(w, u): (Array, Array)| scan_loss(&w, &u, &xs, &h0, mode))((w, u))
        });
        let _ = f.call((w.clone(), u.clone(), xs.clone(), h0.clone()));
        f.site()
            .last_compiled_memory_stats()
            .expect("stats")
            .temp_bytes
    };
    let (plain, body_remat) = (temp(0), temp(1));
    assert!(
        body_remat * 2 <= plain,
        "remat body: {body_remat} bytes vs plain {plain}"
    );
}

// --- stacked attributes ---------------------------------------------------------------

/// One example's block, for the stacked attributes below and their function twin.
fn example_block(x: &Array, w: &Array) -> Array {
    (x.matmul(w).tanh() * x).sin()
}

/// `#[remat]` outermost: `remat(vmap(f))`, with `w` unmapped.
#[remat]
#[vmap(in_axes = (0, None))]
fn remat_of_vmap(x: &Array, w: &Array) -> Array {
    example_block(x, w)
}

#[test]
fn remat_over_vmap_matches_the_function_twins() {
    let (b, n, d) = (3, 2, 4);
    let x = rand(&[b, n, d], 31, 1.0, DType::F64);
    let w = rand(&[d, d], 32, 0.5, DType::F64);
    let twin = |x: &Array, w: &Array| {
        remat(|(x, w): (Array, Array)| vmap(|x: Array| example_block(&x, &w), 0, 0)(x))
            .call((x.clone(), w.clone()))
    };
    let close = |what: &str, got: &Array, want: &Array| {
        assert_eq!(got.shape(), want.shape(), "{what}");
        for (p, q) in got.to_vec::<f64>().iter().zip(want.to_vec::<f64>()) {
            assert!(
                (p - q).abs() <= 1e-12 * (1.0 + q.abs()),
                "{what}: {p} vs {q}"
            );
        }
    };
    close("value", &remat_of_vmap(&x, &w), &twin(&x, &w));
    let loss_macro = |(x, w): (Array, Array)| remat_of_vmap(&x, &w).sum(None, false);
    let loss_twin = |(x, w): (Array, Array)| twin(&x, &w).sum(None, false);
    let (gx, gw) = grad(loss_macro)((x.clone(), w.clone()));
    let (tx, tw) = grad(loss_twin)((x.clone(), w.clone()));
    close("dx", &gx, &tx);
    close("dw", &gw, &tw);
    // The remat is outermost: one `remat` equation around the batched body, and the
    // gradient's program keeps the recomputation apart.
    let jaxpr = make_jaxpr(loss_macro, &(x.clone(), w.clone())).to_string();
    assert_eq!(jaxpr.matches("remat[").count(), 1, "{jaxpr}");
    let text = stablehlo(|a: (Array, Array)| grad(loss_macro)(a), &(x, w));
    assert!(
        text.contains("\"stablehlo.optimization_barrier\""),
        "no barrier in\n{text}"
    );
}
