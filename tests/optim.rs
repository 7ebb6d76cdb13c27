//! `jaxrs::optim` against optax 0.2.8: every optimizer and schedule for 10 steps on a two-leaf
//! tree with fixed gradients (`tests/golden/gen_optim.py` writes `tests/golden/optim.json`).

use jaxrs::optim::{self, GradientTransformation, Mask};
use jaxrs::prelude::*;
use serde_json::Value;

#[derive(Tree, Clone)]
struct Params {
    w: Array,
    b: Array,
}

fn golden() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/optim.json"
    ))
    .expect("tests/golden/optim.json");
    serde_json::from_str(&text).unwrap()
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

fn assert_close(case: &str, step: usize, leaf: &str, got: &[f32], want: &[f32]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-6 * w.abs().max(1.0);
        assert!(
            (g - w).abs() <= tol,
            "{case}: step {step}, {leaf}[{i}]: got {g}, optax {w} (diff {})",
            (g - w).abs()
        );
    }
}

fn assert_params(case: &str, step: usize, got: &Params, want: &Value) {
    assert_close(case, step, "w", &got.w.to_vec::<f32>(), &floats(&want["w"]));
    assert_close(case, step, "b", &got.b.to_vec::<f32>(), &floats(&want["b"]));
}

fn run<O: GradientTransformation>(name: &str, opt: O, golden: &Value) {
    let mut params = params_of(&golden["params0"]);
    let mut state = opt.init(&params);
    let want = golden["cases"][name]
        .as_array()
        .unwrap_or_else(|| panic!("no case {name}"));
    for (t, grads) in golden["grads"].as_array().unwrap().iter().enumerate() {
        let (updates, next) = opt.update(params_of(grads), state, Some(&params));
        params = optim::apply_updates(&params, &updates);
        state = next;
        assert_params(name, t, &params, &want[t]);
    }
}

fn schedule(name: &str) -> optim::Schedule {
    match name {
        "constant" => optim::constant_schedule(0.05),
        "linear" => optim::linear_schedule(0.1, 0.01, 5, 0),
        "linear_begin" => optim::linear_schedule(0.1, 0.01, 4, 3),
        "exponential" => optim::exponential_decay(0.1, 2, 0.5, 0, false, None),
        "exponential_staircase" => optim::exponential_decay(0.1, 3, 0.5, 2, true, Some(0.02)),
        "warmup_cosine" => optim::warmup_cosine_decay_schedule(0.0, 1e-2, 3, 10, 1e-3),
        other => panic!("no schedule {other}"),
    }
}

#[test]
fn schedules_match_optax() {
    let golden = golden();
    let schedules = golden["schedules"].as_object().unwrap();
    assert_eq!(schedules.len(), 6);
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

#[test]
fn optimizers_match_optax() {
    let g = golden();
    run("sgd", optim::sgd(0.1), &g);
    run("momentum", optim::momentum(0.1, 0.9), &g);
    run("nesterov", optim::nesterov(0.1, 0.9), &g);
    run("adam", optim::adam(1e-2, 0.9, 0.999, 1e-8), &g);
    run("adam_b", optim::adam(3e-2, 0.8, 0.99, 1e-6), &g);
    run(
        "adamw",
        optim::adamw(1e-2, 0.9, 0.999, 1e-8, 0.1, Mask::All),
        &g,
    );
    run(
        "adamw_masked",
        optim::adamw(1e-2, 0.9, 0.999, 1e-8, 0.1, Mask::paths(|p| p == "w")),
        &g,
    );
    run("rmsprop", optim::rmsprop(1e-2, 0.9, 1e-8), &g);
    run(
        "clip_adam",
        optim::chain((
            optim::clip_by_global_norm(1.0),
            optim::adam(1e-2, 0.9, 0.999, 1e-8),
        )),
        &g,
    );
    run(
        "decayed_sgd",
        optim::chain((optim::add_decayed_weights(0.05, Mask::All), optim::sgd(0.1))),
        &g,
    );
    run(
        "adam_warmup_cosine",
        optim::adam(schedule("warmup_cosine"), 0.9, 0.999, 1e-8),
        &g,
    );
    run("sgd_exponential", optim::sgd(schedule("exponential")), &g);
    run(
        "sgd_exponential_staircase",
        optim::sgd(schedule("exponential_staircase")),
        &g,
    );
    run("sgd_linear", optim::sgd(schedule("linear")), &g);
    run("sgd_constant", optim::sgd(schedule("constant")), &g);
    run(
        "scale_by_schedule",
        optim::chain((optim::scale_by_schedule(optim::linear_schedule(
            -0.1, -0.01, 5, 0,
        )),)),
        &g,
    );
}

/// A mask given as a tree of flags decays the same leaves as the path predicate.
#[test]
fn mask_from_tree_matches_paths() {
    #[derive(Tree)]
    struct Flags {
        w: bool,
        b: bool,
    }
    let g = golden();
    let mask = Mask::from_tree(&Flags { w: true, b: false });
    run(
        "adamw_masked",
        optim::adamw(1e-2, 0.9, 0.999, 1e-8, 0.1, mask),
        &g,
    );
}

type Opt = optim::Chain<(optim::ClipByGlobalNorm, optim::AdamW)>;
type OptState = optim::State<Opt, Params>;

fn optimizer() -> Opt {
    let lr = optim::warmup_cosine_decay_schedule(0.0, 1e-2, 3, 10, 1e-3);
    optim::chain((
        optim::clip_by_global_norm(1.0),
        optim::adamw(lr, 0.9, 0.999, 1e-8, 0.1, Mask::paths(|p| p == "w")),
    ))
}

/// A whole step jitted, parameters and optimizer state donated: the schedule's count, the
/// moments and the clip all trace, and the trajectory matches the eager one.
#[jit(donate = (0, 1))]
fn train_step(params: Params, opt_state: OptState, grads: Params) -> (Params, OptState) {
    let (updates, opt_state) = optimizer().update(grads, opt_state, Some(&params));
    (optim::apply_updates(&params, &updates), opt_state)
}

#[test]
fn jitted_step_with_donation_matches_eager() {
    let g = golden();
    let opt = optimizer();
    let mut eager = params_of(&g["params0"]);
    let mut eager_state = opt.init(&eager);
    let mut params = params_of(&g["params0"]);
    let mut state: OptState = opt.init(&params);
    for (t, grads) in g["grads"].as_array().unwrap().iter().enumerate() {
        let (updates, next) = opt.update(params_of(grads), eager_state, Some(&eager));
        eager = optim::apply_updates(&eager, &updates);
        eager_state = next;
        let (p, s) = train_step(params, state, params_of(grads));
        (params, state) = (p, s);
        assert_close(
            "jit",
            t,
            "w",
            &params.w.to_vec::<f32>(),
            &eager.w.to_vec::<f32>(),
        );
        assert_close(
            "jit",
            t,
            "b",
            &params.b.to_vec::<f32>(),
            &eager.b.to_vec::<f32>(),
        );
    }
    assert_eq!(state.1 .0.count.item::<i32>(), 10);
    assert_eq!(state.1 .2.as_ref().unwrap().count.item::<i32>(), 10);
    assert_eq!(
        train_step::jit_site().cache_misses(),
        1,
        "one compile for all ten steps"
    );
}
