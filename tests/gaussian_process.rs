//! `examples/gaussian_process.rs` against its JAX twin (`examples/jax/gaussian_process.py`,
//! whose figures are committed in `tests/golden/gaussian_process.json`): the loss of each
//! of the 300 Adam steps on the marginal likelihood, the fitted hyperparameters and the
//! held-out figures, all in float64.

#[path = "../examples/gaussian_process.rs"]
mod gaussian_process;

use serde_json::Value;

fn golden() -> Value {
    let path = format!(
        "{}/tests/golden/gaussian_process.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).expect("golden")).expect("JSON")
}

fn close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol * (1.0 + want.abs()),
        "{what}: jaxrs {got}, JAX {want}"
    );
}

#[test]
fn the_fit_matches_its_jax_twin_step_by_step() {
    let want = golden();
    let got = gaussian_process::fit(gaussian_process::STEPS);
    let losses = want["losses"].as_array().expect("losses");
    assert_eq!(got.losses.len(), losses.len());
    for (step, (g, w)) in got.losses.iter().zip(losses).enumerate() {
        close(
            &format!("loss at step {step}"),
            *g,
            w.as_f64().unwrap(),
            1e-9,
        );
    }
    for (name, g) in [
        ("amplitude", got.amplitude),
        ("length_scale", got.length_scale),
        ("noise", got.noise),
        ("final_nll", got.final_nll),
        ("test_rmse", got.test_rmse),
        ("mean_std", got.mean_std),
        ("coverage", got.coverage),
    ] {
        close(name, g, want[name].as_f64().unwrap(), 1e-8);
    }
}
