//! The rest of `jaxrs::optim` against optax 0.2.8: the other optimizers, the wrappers, the
//! schedules and the losses (`tests/golden/gen_optim_extra.py` writes
//! `tests/golden/optim_extra.json`; the parameters and gradients are `optim.json`'s). Each
//! optimizer runs 10 steps on a two-leaf tree, as `tests/optim.rs`.

use jaxrs::optim::{self, GradientTransformation, Labels, Mask};
use jaxrs::prelude::*;
use serde_json::Value;

#[derive(Tree, Clone)]
struct Params {
    w: Array,
    b: Array,
}

fn read(name: &str) -> Value {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{path}"));
    serde_json::from_str(&text).unwrap()
}

struct Golden {
    base: Value,
    extra: Value,
}

fn golden() -> Golden {
    Golden {
        base: read("optim.json"),
        extra: read("optim_extra.json"),
    }
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn params_of(v: &Value) -> Params {
    Params {
        w: Array::from_vec(floats(&v["w"]), &[2, 3]),
        b: Array::from_vec(floats(&v["b"]), &[3]),
    }
}

fn assert_close(case: &str, step: usize, leaf: &str, got: &[f32], want: &[f32], rtol: f32) {
    assert_eq!(got.len(), want.len(), "{case}: {leaf} length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = rtol * w.abs().max(1.0);
        assert!(
            (g - w).abs() <= tol,
            "{case}: step {step}, {leaf}[{i}]: got {g}, optax {w} (diff {})",
            (g - w).abs()
        );
    }
}

fn assert_params(case: &str, step: usize, got: &Params, want: &Value) {
    assert_close(
        case,
        step,
        "w",
        &got.w.to_vec::<f32>(),
        &floats(&want["w"]),
        1e-6,
    );
    assert_close(
        case,
        step,
        "b",
        &got.b.to_vec::<f32>(),
        &floats(&want["b"]),
        1e-6,
    );
}

/// The gradient of step `t`, with w[0, 0] NaN at the golden's NaN steps when `nan`.
fn grads_at(g: &Golden, t: usize, nan: bool) -> Params {
    let mut p = params_of(&g.base["grads"][t]);
    let nan_steps: Vec<usize> = g.extra["nan_steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    if nan && nan_steps.contains(&t) {
        let mut w = p.w.to_vec::<f32>();
        w[0] = f32::NAN;
        p.w = Array::from_vec(w, &[2, 3]);
    }
    p
}

fn run_on<O: GradientTransformation>(section: &str, name: &str, opt: O, g: &Golden) {
    let mut params = params_of(&g.base["params0"]);
    let mut state = opt.init(&params);
    let want = g.extra[section][name]
        .as_array()
        .unwrap_or_else(|| panic!("no case {section}.{name}"));
    for (t, want) in want.iter().enumerate() {
        let grads = grads_at(g, t, section == "nan_cases");
        let (updates, next) = opt.update(grads, state, Some(&params));
        params = optim::apply_updates(&params, &updates);
        state = next;
        assert_params(name, t, &params, want);
    }
}

fn run<O: GradientTransformation>(name: &str, opt: O, g: &Golden) {
    run_on("cases", name, opt, g);
}

fn wd_mask() -> Mask {
    Mask::paths(|p| p == "w")
}

#[test]
fn optimizers_match_optax() {
    let g = golden();
    run("adagrad", optim::adagrad(0.1, 0.1, 1e-7), &g);
    run(
        "adadelta",
        optim::adadelta(0.5, 0.9, 1e-6, 0.01, Mask::All),
        &g,
    );
    run("adamax", optim::adamax(1e-2, 0.9, 0.999, 1e-8), &g);
    run(
        "adamaxw",
        optim::adamaxw(1e-2, 0.9, 0.999, 1e-8, 0.1, Mask::All),
        &g,
    );
    run("amsgrad", optim::amsgrad(1e-2, 0.9, 0.999, 1e-8, 0.0), &g);
    run("lion", optim::lion(1e-3, 0.9, 0.99, 1e-3, Mask::All), &g);
    run(
        "lamb",
        optim::lamb(1e-2, 0.9, 0.999, 1e-6, 0.0, 0.01, Mask::All),
        &g,
    );
    run(
        "lars",
        optim::lars(0.1, 0.01, Mask::All, 0.001, 0.0, Mask::All, 0.9, false),
        &g,
    );
    run(
        "lars_nesterov",
        optim::lars(0.1, 0.01, Mask::All, 0.01, 0.0, Mask::All, 0.8, true),
        &g,
    );
    run("nadam", optim::nadam(1e-2, 0.9, 0.999, 1e-8, 0.0), &g);
    run(
        "nadamw",
        optim::nadamw(1e-2, 0.9, 0.999, 1e-8, 0.0, 0.1, wd_mask()),
        &g,
    );
    run(
        "adabelief",
        optim::adabelief(1e-2, 0.9, 0.999, 1e-16, 1e-16),
        &g,
    );
    run("yogi", optim::yogi(1e-2, 0.9, 0.999, 1e-3), &g);
    run(
        "novograd",
        optim::novograd(1e-2, 0.9, 0.25, 1e-6, 0.0, 0.01),
        &g,
    );
    run("sm3", optim::sm3(0.1, 0.9), &g);
    run("adafactor", optim::adafactor(1e-2), &g);
    run(
        "adafactor_factored",
        optim::adafactor(1e-2)
            .min_dim_size_to_factor(2)
            .momentum(Some(0.9))
            .weight_decay_rate(Some(0.01)),
        &g,
    );
    run(
        "rmsprop_centered",
        optim::rmsprop(1e-2, 0.9, 1e-8).centered(true).momentum(0.9),
        &g,
    );
    run(
        "rmsprop_nesterov",
        optim::rmsprop(1e-2, 0.9, 1e-8)
            .momentum(0.9)
            .nesterov(true)
            .eps_in_sqrt(false)
            .bias_correction(true),
        &g,
    );
    run(
        "adan",
        optim::adan(1e-2, 0.98, 0.92, 0.99, 1e-8, 1e-8, 0.01, Mask::All),
        &g,
    );
    run("fromage", optim::fromage(1e-2, 1e-6), &g);
    run("sign_sgd", optim::sign_sgd(1e-2), &g);
    run("signum", optim::signum(1e-2, 0.9), &g);
    run("rprop", optim::rprop(1e-2, 0.5, 1.2, 1e-6, 50.0), &g);
    run(
        "optimistic_gradient_descent",
        optim::optimistic_gradient_descent(1e-2, 1.0, 1.0),
        &g,
    );
    run(
        "optimistic_adam",
        optim::optimistic_adam(1e-2, None, 0.9, 0.999, 1e-8, 0.0),
        &g,
    );
    run(
        "optimistic_adam_v2",
        optim::optimistic_adam_v2(1e-2, 1.0, 1.0, 0.9, 0.999, 1e-8, 0.0),
        &g,
    );
    run(
        "dog",
        optim::chain((
            optim::scale_by_distance_over_gradients(1e-6, 1e-8, 1.0),
            optim::scale(-1.0),
        )),
        &g,
    );
    run(
        "param_block_norm",
        optim::chain((optim::scale_by_param_block_norm(1e-3), optim::sgd(0.1))),
        &g,
    );
}

#[test]
fn transformations_match_optax() {
    let g = golden();
    run(
        "clip",
        optim::chain((optim::clip(0.5), optim::sgd(0.1))),
        &g,
    );
    run(
        "clip_by_block_rms",
        optim::chain((optim::clip_by_block_rms(0.5), optim::sgd(0.1))),
        &g,
    );
    run(
        "adaptive_grad_clip",
        optim::chain((optim::adaptive_grad_clip(0.1, 1e-3), optim::sgd(0.1))),
        &g,
    );
    run(
        "trust_ratio",
        optim::chain((optim::scale_by_trust_ratio(0.0, 1.0, 0.0), optim::sgd(0.1))),
        &g,
    );
    run(
        "centralize",
        optim::chain((optim::centralize(), optim::sgd(0.1))),
        &g,
    );
    run(
        "normalize_by_update_norm",
        optim::chain((optim::normalize_by_update_norm(1.0, 1e-6), optim::sgd(0.1))),
        &g,
    );
    run(
        "keep_params_nonnegative",
        optim::chain((optim::sgd(0.5), optim::keep_params_nonnegative())),
        &g,
    );
    run(
        "apply_every",
        optim::chain((optim::apply_every(3), optim::sgd(0.1))),
        &g,
    );
    run(
        "ema",
        optim::chain((optim::ema(0.9, true), optim::sgd(0.1))),
        &g,
    );
    run(
        "ema_no_debias",
        optim::chain((optim::ema(0.9, false), optim::sgd(0.1))),
        &g,
    );
    run(
        "identity",
        optim::chain((optim::identity(), optim::sgd(0.1))),
        &g,
    );
    run("set_to_zero", optim::set_to_zero(), &g);
    run("scale", optim::scale(-0.05), &g);
    run(
        "stateless_with_tree_map",
        optim::chain((
            optim::stateless_with_tree_map(|g, p| g * p.unwrap()),
            optim::sgd(0.1),
        )),
        &g,
    );
    // The same function through `stateless`, on the leaves.
    run(
        "stateless_with_tree_map",
        optim::chain((
            optim::stateless(|g, p| g.iter().zip(p.unwrap()).map(|(g, p)| g * p).collect()),
            optim::sgd(0.1),
        )),
        &g,
    );
}

#[test]
fn wrappers_match_optax() {
    let g = golden();
    run(
        "masked_adam",
        optim::masked(optim::adam(1e-2, 0.9, 0.999, 1e-8), wd_mask()),
        &g,
    );
    run(
        "masked_clip",
        optim::chain((
            optim::masked(optim::clip_by_global_norm(1.0), wd_mask()),
            optim::sgd(0.1),
        )),
        &g,
    );
    run(
        "freeze",
        optim::chain((optim::freeze(Mask::paths(|p| p == "b")), optim::sgd(0.1))),
        &g,
    );
    run(
        "selective_transform",
        optim::selective_transform(optim::adam(1e-2, 0.9, 0.999, 1e-8), wd_mask()),
        &g,
    );
    run(
        "multi_transform",
        optim::multi_transform(
            (
                optim::adam(1e-2, 0.9, 0.999, 1e-8),
                optim::momentum(0.1, 0.9),
            ),
            Labels::paths(|p| if p == "w" { 0 } else { 1 }),
        ),
        &g,
    );
    run(
        "multi_steps",
        optim::MultiSteps::new(optim::adam(1e-2, 0.9, 0.999, 1e-8), 3),
        &g,
    );
    run(
        "multi_steps_sum",
        optim::MultiSteps::new(optim::sgd(0.1), 2).use_grad_mean(false),
        &g,
    );
    run(
        "inject_schedule",
        optim::inject_hyperparams(
            |h| optim::adam(h["learning_rate"].clone(), 0.9, 0.999, 1e-8),
            vec![(
                "learning_rate",
                optim::linear_schedule(1e-2, 1e-3, 6, 0).into(),
            )],
        ),
        &g,
    );
    run(
        "inject_constant",
        optim::inject_hyperparams(
            |h| optim::sgd(h["learning_rate"].clone()),
            vec![("learning_rate", 0.1.into())],
        ),
        &g,
    );
    run(
        "conditionally_mask",
        optim::conditionally_mask(optim::sgd(0.1), |step| step.rem(3).ne(1)),
        &g,
    );
    run(
        "conditionally_transform",
        optim::chain((
            optim::conditionally_transform(optim::scale(0.1), |step| step.ge(4)),
            optim::sgd(1.0),
        )),
        &g,
    );
    run(
        "flatten_adam",
        optim::flatten(optim::adam(1e-2, 0.9, 0.999, 1e-8)),
        &g,
    );
    run_on(
        "nan_cases",
        "apply_if_finite",
        optim::apply_if_finite(optim::adam(1e-2, 0.9, 0.999, 1e-8), 2),
        &g,
    );
    run_on(
        "nan_cases",
        "zero_nans",
        optim::chain((optim::zero_nans(), optim::adam(1e-2, 0.9, 0.999, 1e-8))),
        &g,
    );
    run_on(
        "nan_cases",
        "multi_steps_skip",
        optim::MultiSteps::new(optim::sgd(0.1), 2).should_skip_update_fn(optim::skip_not_finite),
        &g,
    );
    run_on(
        "nan_cases",
        "multi_steps_skip_large",
        optim::MultiSteps::new(optim::sgd(0.1), 2)
            .should_skip_update_fn(|u, s| optim::skip_large_updates(u, s, 4.0)),
        &g,
    );
}

#[test]
fn lookahead_matches_optax() {
    let g = golden();
    let opt = optim::lookahead(optim::adam(1e-2, 0.9, 0.999, 1e-8), 3, 0.5, false);
    let mut params = optim::LookaheadParams::init_synced(params_of(&g.base["params0"]));
    let mut state = opt.init(&params);
    for (t, want) in g.extra["lookahead"].as_array().unwrap().iter().enumerate() {
        let (updates, next) = opt.update(grads_at(&g, t, false), state, &params);
        params = optim::apply_updates(&params, &updates);
        state = next;
        assert_params("lookahead.fast", t, &params.fast, &want["fast"]);
        assert_params("lookahead.slow", t, &params.slow, &want["slow"]);
    }
}

fn schedule(name: &str) -> optim::Schedule {
    use optim::*;
    match name {
        "polynomial" => polynomial_schedule(0.1, 0.01, 2.0, 10, 3),
        "piecewise_constant" => piecewise_constant_schedule(0.1, &[(3, 0.5), (8, 0.1)]),
        "piecewise_interpolate_linear" => {
            piecewise_interpolate_schedule(Interpolate::Linear, 0.1, &[(4, 0.5), (10, 0.2)])
        }
        "piecewise_interpolate_cosine" => {
            piecewise_interpolate_schedule(Interpolate::Cosine, 0.1, &[(4, 0.5), (10, 0.2)])
        }
        "warmup_constant" => warmup_constant_schedule(0.0, 0.1, 5),
        "warmup_exponential_decay" => {
            warmup_exponential_decay_schedule(0.0, 0.1, 4, 3, 0.5, 2, true, Some(0.01))
        }
        "warmup_cosine_exponent" => {
            warmup_cosine_decay_schedule_with_exponent(0.0, 0.1, 3, 20, 0.01, 2.0)
        }
        "cosine_decay_exponent" => cosine_decay_schedule(0.1, 15, 0.1, 0.5),
        "sgdr" => sgdr_schedule(&[
            CosineCycle {
                init_value: 0.0,
                peak_value: 0.1,
                warmup_steps: 2,
                decay_steps: 8,
                end_value: 0.01,
            },
            CosineCycle {
                init_value: 0.01,
                peak_value: 0.05,
                warmup_steps: 3,
                decay_steps: 10,
                end_value: 0.0,
            },
        ]),
        "linear_onecycle" => linear_onecycle_schedule(20, 0.1, 0.3, 0.85, 25.0, 1e4),
        "cosine_onecycle" => cosine_onecycle_schedule(20, 0.1, 0.25, 25.0, 1e4),
        other => panic!("no schedule {other}"),
    }
}

#[test]
fn schedules_match_optax() {
    let g = golden();
    let schedules = g.extra["schedules"].as_object().unwrap();
    assert_eq!(schedules.len(), 11);
    for (name, values) in schedules {
        let s = schedule(name);
        for (step, want) in floats(values).iter().enumerate() {
            let got = s.value(step as i32);
            assert!(
                (got - want).abs() <= 1e-6 * want.abs().max(1e-3),
                "{name} at {step}: got {got}, optax {want}"
            );
        }
    }
}

fn input(v: &Value) -> Array {
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    match v["dtype"].as_str().unwrap() {
        "int32" => Array::from_vec(
            v["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap() as i32)
                .collect(),
            &shape,
        ),
        _ => Array::from_vec(floats(&v["values"]), &shape),
    }
}

#[test]
fn losses_and_tree_utilities_match_optax() {
    let g = golden();
    let cases = g.extra["losses"].as_object().unwrap();
    let mut seen = 0;
    for (name, case) in cases {
        let x: Vec<Array> = case["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(input)
            .collect();
        let got = match name.as_str() {
            "l2_loss" => optim::l2_loss(&x[0], Some(&x[1])),
            "l2_loss_single" => optim::l2_loss(&x[0], None),
            "squared_error" => optim::squared_error(&x[0], Some(&x[1])),
            "huber_loss" => optim::huber_loss(&x[0], Some(&x[1]), 0.7),
            "log_cosh" => optim::log_cosh(&x[0], Some(&x[1])),
            "cosine_similarity" => optim::cosine_similarity(&x[0], &x[1], 1e-3),
            "cosine_distance" => optim::cosine_distance(&x[0], &x[1], 1e-3),
            "kl_divergence" => optim::kl_divergence(&x[0], &x[1]),
            "convex_kl_divergence" => optim::convex_kl_divergence(&x[0], &x[1]),
            "generalized_kl_divergence" => optim::losses::generalized_kl_divergence(&x[0], &x[1]),
            "hinge_loss" => optim::hinge_loss(&x[0], &x[1]),
            "smooth_labels" => optim::smooth_labels(&x[0], 0.1),
            "sigmoid_focal_loss" => optim::sigmoid_focal_loss(&x[0], &x[1], Some(0.25), 2.0),
            "sigmoid_focal_loss_no_alpha" => optim::sigmoid_focal_loss(&x[0], &x[1], None, 1.5),
            "softmax_cross_entropy" => optim::softmax_cross_entropy(&x[0], &x[1]),
            "safe_softmax_cross_entropy" => optim::safe_softmax_cross_entropy(&x[0], &x[1]),
            "ntxent" => optim::ntxent(&x[0], &x[1], 0.5),
            "ctc_loss" => optim::ctc_loss(&x[0], &x[1], &x[2], &x[3], 0, -1e5),
            "ctc_forward_phi" => {
                optim::ctc_loss_with_forward_probs(&x[0], &x[1], &x[2], &x[3], 0, -1e5).1
            }
            "ctc_forward_emit" => {
                optim::ctc_loss_with_forward_probs(&x[0], &x[1], &x[2], &x[3], 0, -1e5).2
            }
            "incremental_update" => optim::incremental_update(&x[0], &x[1], &Array::scalar(0.3f32)),
            "periodic_update_on" => optim::periodic_update(&x[0], &x[1], &Array::scalar(4i32), 2),
            "periodic_update_off" => optim::periodic_update(&x[0], &x[1], &Array::scalar(3i32), 2),
            "scale_gradient_value" => optim::scale_gradient(&x[0], 0.25),
            "scale_gradient_grad" => {
                grad(|x: Array| optim::scale_gradient(&x, 0.25).powi(3).sum(None, false))(
                    x[0].clone(),
                )
            }
            other => panic!("no loss {other}"),
        };
        let want = floats(&case["values"]);
        let shape: Vec<usize> = case["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(got.shape(), shape.as_slice(), "{name}: shape");
        assert_close(name, 0, "value", &got.to_vec::<f32>(), &want, 2e-6);
        seen += 1;
    }
    assert_eq!(seen, 25);
}

/// RAdam's rectification `ro = ro_inf - 2 t b2^t / (1 - b2^t)` cancels ~1994 against 1999,
/// so the last bit of `b2^t` reaches the step: XLA's CPU `pow` in optax's run (the count a
/// run-time value) is a bit off the correctly rounded power jaxrs's constant-folded eager
/// step gets (the bits of 0.999^3 are 1065302936 in optax's run, 1065302935 correctly
/// rounded), which moves the
/// rectified steps by about 2e-6 relative. The tolerance is 5e-6 for that alone; every
/// other case holds to 1e-6.
#[test]
fn radam_matches_optax() {
    let g = golden();
    let opt = optim::radam(1e-2, 0.9, 0.999, 1e-8, 0.0, 5.0);
    let mut params = params_of(&g.base["params0"]);
    let mut state = opt.init(&params);
    for (t, want) in g.extra["cases"]["radam"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let (updates, next) = opt.update(grads_at(&g, t, false), state, Some(&params));
        params = optim::apply_updates(&params, &updates);
        state = next;
        let w = floats(&want["w"]);
        let b = floats(&want["b"]);
        assert_close("radam", t, "w", &params.w.to_vec::<f32>(), &w, 5e-6);
        assert_close("radam", t, "b", &params.b.to_vec::<f32>(), &b, 5e-6);
    }
}
