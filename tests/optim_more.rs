//! The smaller optax pieces of `jaxrs::optim` against optax 0.2.8: `polyak_sgd` and
//! `per_example_global_norm_clip` / `per_example_layer_norm_clip`
//! (`tests/golden/gen_optim_polyak.py`, `optim_polyak.json`), `noisy_sgd`
//! (`gen_optim_noise.py`, `optim_noise.json`), `snapshot` in a momentum-and-clip chain
//! (`gen_optim_snapshot.py`, `optim_snapshot.json`) and `power_iteration`
//! (`gen_optim_power_iteration.py`, `optim_power_iteration.json`). The optimizers run 10
//! steps on `optim_lbfgs.json`'s logistic regression.

use jaxrs::optim::{self, ExtraArgs, GradientTransformation, PolyakVariant};
use jaxrs::prelude::*;
use serde_json::Value;

/// optax's parameters, in the order of `jax.tree.leaves` of its dict (`b` before `w`).
#[derive(Tree, Clone)]
struct LogReg {
    b: Array,
    w: Array,
}

fn read(name: &str) -> Value {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{path}"));
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|x| match x.as_array() {
            Some(row) => row.iter().map(|y| y.as_f64().unwrap() as f32).collect(),
            None => vec![x.as_f64().unwrap() as f32],
        })
        .collect()
}

fn assert_close(what: &str, got: &[f32], want: &[f32], rtol: f32) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= rtol * w.abs().max(1.0),
            "{what}[{i}]: got {g}, optax {w}"
        );
    }
}

#[test]
fn polyak_sgd_matches_optax() {
    let g = read("optim_polyak.json");
    let d = &read("optim_lbfgs.json")["logreg"];
    let x = Array::from_vec(floats(&d["x"]), &[8, 3]);
    let y = Array::from_vec(floats(&d["y"]), &[8]);
    let half_l2 = 0.5 * d["l2"].as_f64().unwrap();
    let f = |p: &LogReg| {
        let z = x.matmul(&p.w) + &p.b;
        let nll = (z.exp().log1p() - &y * &z).mean(None, false);
        nll + p.w.powi(2).sum(None, false) * half_l2
    };
    let cases = [
        (
            "polyak_sgd",
            optim::polyak_sgd(1.0, 1.0, 0.0, 0.0, PolyakVariant::Sps),
        ),
        (
            "polyak_sgd_plus",
            optim::polyak_sgd(2.0, 0.5, 0.4, 1e-3, PolyakVariant::SpsPlus),
        ),
        (
            "polyak_sgd_fmin",
            optim::polyak_sgd(5.0, 1.0, 0.3, 0.0, PolyakVariant::Sps),
        ),
    ];
    for (name, opt) in cases {
        let mut params = LogReg {
            b: Array::from_vec(floats(&d["b0"]), &[1]),
            w: Array::from_vec(floats(&d["w0"]), &[3]),
        };
        let mut state = opt.init(&params);
        for (t, want) in g["polyak"][name].as_array().unwrap().iter().enumerate() {
            let (value, grad) = value_and_grad(|p: LogReg| f(&p))(params.clone());
            let extra = ExtraArgs::value(&value);
            let (u, s) = opt.update_with_extra_args(grad, state, Some(&params), &extra);
            (params, state) = (optim::apply_updates(&params, &u), s);
            let what = format!("{name} step {t}");
            assert_close(&what, &params.b.to_vec::<f32>(), &floats(&want["b"]), 1e-6);
            assert_close(&what, &params.w.to_vec::<f32>(), &floats(&want["w"]), 1e-6);
        }
    }
}

#[test]
fn per_example_global_norm_clip_matches_optax() {
    let g = read("optim_polyak.json");
    for case in g["per_example_global_norm_clip"].as_array().unwrap() {
        let clip = match &case["clip"] {
            Value::String(s) if s == "inf" => f64::INFINITY,
            v => v.as_f64().unwrap(),
        };
        let grads = (
            Array::from_vec(floats(&case["a"]), &[5, 3]),
            Array::from_vec(floats(&case["b"]), &[5, 2, 2]),
        );
        let (sum, num) = optim::per_example_global_norm_clip(&grads, clip);
        let what = format!("clip {clip}");
        assert_eq!(sum.1.shape(), &[2, 2], "{what}");
        assert_close(&what, &sum.0.to_vec::<f32>(), &floats(&case["sum_a"]), 1e-6);
        assert_close(&what, &sum.1.to_vec::<f32>(), &floats(&case["sum_b"]), 1e-6);
        assert_eq!(
            num.item::<i32>() as i64,
            case["num_clipped"].as_i64().unwrap(),
            "{what}"
        );
    }
}

#[test]
fn noisy_sgd_matches_optax() {
    let g = read("optim_noise.json");
    let d = &read("optim_lbfgs.json")["logreg"];
    let x = Array::from_vec(floats(&d["x"]), &[8, 3]);
    let y = Array::from_vec(floats(&d["y"]), &[8]);
    let half_l2 = 0.5 * d["l2"].as_f64().unwrap();
    let f = |p: LogReg| {
        let z = x.matmul(&p.w) + &p.b;
        let nll = (z.exp().log1p() - &y * &z).mean(None, false);
        nll + p.w.powi(2).sum(None, false) * half_l2
    };
    let cases = [
        (
            "noisy_sgd",
            optim::noisy_sgd(0.1, 0.01, 0.55, &jaxrs::random::key(0)),
        ),
        (
            "noisy_sgd_eta",
            optim::noisy_sgd(0.05, 0.3, 0.8, &jaxrs::random::key(42)),
        ),
    ];
    for (name, opt) in cases {
        let mut params = LogReg {
            b: Array::from_vec(floats(&d["b0"]), &[1]),
            w: Array::from_vec(floats(&d["w0"]), &[3]),
        };
        let mut state = opt.init(&params);
        for (t, want) in g[name].as_array().unwrap().iter().enumerate() {
            let grad = grad(f)(params.clone());
            let (u, s) = opt.update(grad, state, Some(&params));
            (params, state) = (optim::apply_updates(&params, &u), s);
            let what = format!("{name} step {t}");
            assert_close(&what, &params.b.to_vec::<f32>(), &floats(&want["b"]), 1e-6);
            assert_close(&what, &params.w.to_vec::<f32>(), &floats(&want["w"]), 1e-6);
        }
    }
}

#[test]
fn per_example_layer_norm_clip_matches_optax() {
    let g = read("optim_polyak.json");
    for case in g["per_example_layer_norm_clip"].as_array().unwrap() {
        let clip = case["clip"].as_f64().unwrap();
        let uniform = case["uniform"].as_bool().unwrap();
        let grads = (
            Array::from_vec(floats(&case["a"]), &[4, 3]),
            Array::from_vec(floats(&case["b"]), &[4, 2, 5]),
        );
        let (sum, num) = optim::per_example_layer_norm_clip(&grads, clip, uniform);
        let what = format!("clip {clip}, uniform {uniform}");
        assert_eq!(sum.1.shape(), &[2, 5], "{what}");
        assert_close(&what, &sum.0.to_vec::<f32>(), &floats(&case["sum_a"]), 1e-6);
        assert_close(&what, &sum.1.to_vec::<f32>(), &floats(&case["sum_b"]), 1e-6);
        let want: Vec<i64> = case["num_clipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_i64().unwrap())
            .collect();
        assert_eq!(
            vec![num.0.item::<i32>() as i64, num.1.item::<i32>() as i64],
            want,
            "{what}"
        );
    }
}

#[test]
fn snapshot_matches_optax() {
    let g = read("optim_snapshot.json");
    let d = &read("optim_lbfgs.json")["logreg"];
    let x = Array::from_vec(floats(&d["x"]), &[8, 3]);
    let y = Array::from_vec(floats(&d["y"]), &[8]);
    let half_l2 = 0.5 * d["l2"].as_f64().unwrap();
    let f = |p: LogReg| {
        let z = x.matmul(&p.w) + &p.b;
        let nll = (z.exp().log1p() - &y * &z).mean(None, false);
        nll + p.w.powi(2).sum(None, false) * half_l2
    };
    let opt = optim::chain((
        optim::momentum(0.1, 0.9),
        optim::snapshot("norm_before_clip", |leaves| optim::global_norm(&leaves)),
        optim::clip_by_global_norm(0.05),
    ));
    let mut params = LogReg {
        b: Array::from_vec(floats(&d["b0"]), &[1]),
        w: Array::from_vec(floats(&d["w0"]), &[3]),
    };
    let mut state = opt.init(&params);
    assert_close(
        "init",
        &[state.1.measurement.item::<f32>()],
        &[g["init"].as_f64().unwrap() as f32],
        1e-6,
    );
    for (t, want) in g["steps"].as_array().unwrap().iter().enumerate() {
        let grad = grad(f)(params.clone());
        let (u, s) = opt.update(grad, state, Some(&params));
        (params, state) = (optim::apply_updates(&params, &u), s);
        let what = format!("snapshot step {t}");
        let p = &want["params"];
        assert_close(&what, &params.b.to_vec::<f32>(), &floats(&p["b"]), 1e-6);
        assert_close(&what, &params.w.to_vec::<f32>(), &floats(&p["w"]), 1e-6);
        assert_close(
            &what,
            &[state.1.measurement.item::<f32>()],
            &[want["measurement"].as_f64().unwrap() as f32],
            1e-6,
        );
    }
}

#[test]
fn power_iteration_matches_optax() {
    let g = read("optim_power_iteration.json");
    let m = Array::from_vec(floats(&g["matrix"]), &[6, 6]);
    let v0 = Array::from_vec(floats(&g["v0"]), &[6]);
    let diag = Array::from_vec(floats(&g["diag"]), &[6]);
    for case in g["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let (eig, vec) = match name {
            "default" => optim::power_iteration(&m, None, 100, 1e-6, None),
            "key7" => optim::power_iteration(&m, None, 100, 1e-6, Some(&jaxrs::random::key(7))),
            "v0_3_iters" => optim::power_iteration(&m, Some(&v0), 3, 1e-6, None),
            "callable" => optim::power_iteration_fn(|v: &Array| &diag * v, &v0, 100, 1e-5),
            _ => unreachable!("{name}"),
        };
        assert_close(
            name,
            &[eig.item::<f32>()],
            &[case["eig"].as_f64().unwrap() as f32],
            1e-5,
        );
        assert_close(name, &vec.to_vec::<f32>(), &floats(&case["vec"]), 1e-5);
    }
}
