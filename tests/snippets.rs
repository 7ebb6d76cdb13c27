//! Whole programs that combine `grad` with `jit` and trees, against JAX 0.10.2:
//! `tests/golden/snippets.json` (written by `tests/golden/gen_grads.py`, which holds the JAX
//! side of each program) has the inputs and JAX's results.

mod common;

use common::golden::array;
use jaxrs::prelude::*;
use jaxrs::Argnum;
use jaxrs::{grad, jvp, stablehlo, value_and_grad, value_and_grad_argnums, value_and_grad_aux};
use serde_json::Value;

fn snippet(name: &str) -> Value {
    let path = format!("{}/tests/golden/snippets.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("snippets JSON");
    assert_eq!(doc["jax_version"], "0.10.2");
    doc["snippets"][name].clone()
}

fn tol(s: &Value) -> (f64, f64) {
    (s["rtol"].as_f64().unwrap(), s["atol"].as_f64().unwrap())
}

/// `got` equals JAX's `want` (dtype, shape, and every element within `atol + rtol * |want|`).
#[track_caller]
fn assert_close(what: &str, got: &Array, want: &Value, (rtol, atol): (f64, f64)) {
    let want = array(want);
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= atol + rtol * b.abs(),
            "{what}: element {i}: got {a}, JAX {b} (rtol {rtol}, atol {atol})\ngot {g:?}\nJAX {w:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The model of snippets 7 and 1: in -> hidden (tanh) -> out

#[derive(Tree, Clone, Debug)]
struct Params {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
}

impl Params {
    fn from_json(v: &Value) -> Params {
        Params {
            w1: array(&v["w1"]),
            b1: array(&v["b1"]),
            w2: array(&v["w2"]),
            b2: array(&v["b2"]),
        }
    }

    #[track_caller]
    fn assert_close(&self, what: &str, want: &Value, tol: (f64, f64)) {
        assert_close(&format!("{what}.w1"), &self.w1, &want["w1"], tol);
        assert_close(&format!("{what}.b1"), &self.b1, &want["b1"], tol);
        assert_close(&format!("{what}.w2"), &self.w2, &want["w2"], tol);
        assert_close(&format!("{what}.b2"), &self.b2, &want["b2"], tol);
    }
}

#[derive(Tree, Debug)]
struct Metrics {
    mse: Array,
    mean_pred: Array,
}

fn predict(p: &Params, x: &Array) -> Array {
    let h = (x.matmul(&p.w1) + &p.b1).tanh();
    h.matmul(&p.w2) + &p.b2
}

/// `loss_with_aux` of gen_grads.py: `(mse, {"mse": mse, "mean_pred": mean(pred)})`.
fn loss_with_aux(p: &Params, x: &Array, y: &Array) -> (Array, Metrics) {
    let pred = predict(p, x);
    let mse = (&pred - y).powi(2).mean(None, false);
    let metrics = Metrics {
        mse: mse.clone(),
        mean_pred: pred.mean(None, false),
    };
    (mse, metrics)
}

/// The ops (their names, sorted) of a StableHLO module that are located at a line of this
/// file: the user's computation, as opposed to the ops autodiff adds, which are located at
/// their rule in jaxrs-runtime. Region terminators are left out.
fn user_ops(hlo: &str) -> Vec<String> {
    let mut ops: Vec<String> = hlo
        .lines()
        .filter(|l| l.contains("loc(\"tests/snippets.rs\""))
        .filter_map(|l| l.split('"').nth(1).map(str::to_string))
        .filter(|op| op != "stablehlo.return")
        .collect();
    ops.sort();
    ops
}

/// How many times `op` (e.g. `stablehlo.tanh`) appears, wherever it is located.
fn count(hlo: &str, op: &str) -> usize {
    hlo.matches(&format!("\"{op}\"(")).count()
}

/// Snippet 7: `jax.jit(jax.value_and_grad(loss_with_aux, has_aux=True))(params, x, y)`.
#[test]
fn snippet7_jitted_value_and_grad_with_aux_matches_jax() {
    let s = snippet("mlp_aux");
    let tol = tol(&s);
    let params = Params::from_json(&s["params"]);
    let (x, y) = (array(&s["x"]), array(&s["y"]));

    let check = |what: &str, ((loss, aux), grads): ((Array, Metrics), Params)| {
        assert_close(&format!("{what}: loss"), &loss, &s["loss"], tol);
        assert_close(&format!("{what}: aux.mse"), &aux.mse, &s["aux"]["mse"], tol);
        assert_close(
            &format!("{what}: aux.mean_pred"),
            &aux.mean_pred,
            &s["aux"]["mean_pred"],
            tol,
        );
        grads.assert_close(&format!("{what}: grads"), &s["grads"], tol);
    };

    // value_and_grad_argnums with Argnum<0>: x and y are arguments, not differentiated.
    let vg = |(p, x, y): (Params, Array, Array)| {
        value_and_grad_argnums::<_, _, Argnum<0>, _>(|(p, x, y): (Params, Array, Array)| {
            loss_with_aux(&p, &x, &y)
        })((p, x, y))
    };
    let step = jit(vg);
    check(
        "jit(value_and_grad_argnums)",
        step.call((params.clone(), x.clone(), y.clone())),
    );
    // value_and_grad_aux of a closure capturing x and y (constants of the jitted program).
    let step2 = jit(|p: Params| value_and_grad_aux(|p: Params| loss_with_aux(&p, &x, &y))(p));
    check("jit(value_and_grad_aux)", step2.call(params.clone()));
    // Eagerly, the same.
    check("eager", vg((params.clone(), x.clone(), y.clone())));

    // The jitted step holds the forward computation once. Counting rule, over the StableHLO
    // text of the step (what `stablehlo` prints, before XLA's own simplifications):
    // - every op carries its source location; the forward computation's ops are located at
    //   this file's lines, the backward pass's at their rule in jaxrs-runtime. The ops located
    //   here must be exactly (same names, same number of each) those of the forward-only
    //   program `loss_with_aux` under jit: nothing of the forward pass is traced twice;
    // - `tanh` appears exactly once in the whole step: its derivative 1 - tanh^2 reuses the
    //   forward output instead of recomputing it;
    // - `dot_general`: 2 located here (x @ w1, h @ w2); see
    //   `backward_pass_computes_no_cotangent_for_constants` for the backward ones.
    let hlo = stablehlo(vg, &(params.clone(), x.clone(), y.clone()));
    let forward = stablehlo(
        |(p, x, y): (Params, Array, Array)| loss_with_aux(&p, &x, &y),
        &(params.clone(), x.clone(), y.clone()),
    );
    assert_eq!(user_ops(&hlo), user_ops(&forward), "{hlo}\n---\n{forward}");
    assert_eq!(count(&forward, "stablehlo.tanh"), 1, "{forward}");
    assert_eq!(count(&hlo, "stablehlo.tanh"), 1, "{hlo}");
    let here = |op: &str| user_ops(&hlo).iter().filter(|o| *o == op).count();
    assert_eq!(here("stablehlo.dot_general"), 2, "{hlo}");
}

/// The backward pass of the MLP needs 3 `dot_general`s (dW2 = h^T g, dh = g w2^T,
/// dW1 = x^T dz), none for x, which is not differentiated.
#[test]
fn backward_pass_computes_no_cotangent_for_constants() {
    let s = snippet("mlp_aux");
    let params = Params::from_json(&s["params"]);
    let (x, y) = (array(&s["x"]), array(&s["y"]));
    let vg = |(p, x, y): (Params, Array, Array)| {
        value_and_grad_argnums::<_, _, Argnum<0>, _>(|(p, x, y): (Params, Array, Array)| {
            loss_with_aux(&p, &x, &y)
        })((p, x, y))
    };
    let hlo = stablehlo(vg, &(params.clone(), x.clone(), y.clone()));
    let closure = stablehlo(
        |p: Params| value_and_grad_aux(|p: Params| loss_with_aux(&p, &x, &y))(p),
        &params,
    );
    assert_eq!(
        (
            count(&hlo, "stablehlo.dot_general"),
            count(&closure, "stablehlo.dot_general")
        ),
        (5, 5),
        "{hlo}\n---\n{closure}"
    );
}

/// `mse` of the model (snippet 1's loss).
fn mse_loss(p: &Params, x: &Array, y: &Array) -> Array {
    (&predict(p, x) - y).powi(2).mean(None, false)
}

/// Snippet 1: one SGD step, parameters donated, gradient by `value_and_grad` inside.
#[jit(donate = params)]
fn sgd_step(params: Params, x: &Array, y: &Array) -> (Params, Array) {
    let (loss, g) = value_and_grad(|p: Params| mse_loss(&p, x, y))(params.clone());
    let updated = tree_map2(&params, &g, |p, d| p - d * 0.1);
    (updated, loss)
}

/// Snippet 1: `jax.jit(step, donate_argnums=0)` run 20 times from a fixed start.
#[test]
fn snippet1_jitted_sgd_with_donated_params_follows_jax_for_20_steps() {
    let s = snippet("sgd");
    let tol = tol(&s);
    assert_eq!(s["lr"].as_f64(), Some(0.1));
    let steps = s["steps"].as_u64().unwrap() as usize;
    let (x, y) = (array(&s["x"]), array(&s["y"]));
    let mut params = Params::from_json(&s["params"]);
    let mut losses = Vec::new();
    for _ in 0..steps {
        let (p, loss) = sgd_step(params, &x, &y);
        params = p;
        losses.push(loss);
    }
    assert_eq!(sgd_step::jit_site().cache_misses(), 1);
    let stats = sgd_step::jit_site()
        .last_compiled_memory_stats()
        .expect("stats");
    let param_bytes: usize = params.flatten().0.iter().map(|a| a.size() * 4).sum();
    assert_eq!(stats.alias_bytes as usize, param_bytes, "{stats:?}");
    assert_close("losses", &Array::stack(&losses, 0), &s["losses"], tol);
    params.assert_close("final params", &s["final_params"], tol);
}

/// `f(x) = sum(tanh(x)^3 * x)`.
fn hvp_f(x: &Array) -> Array {
    (x.tanh().powi(3) * x).sum(None, false)
}

/// Hessian-vector product by forward-over-reverse: `jax.jvp(jax.grad(f), (x,), (v,))`.
#[test]
fn hessian_vector_product_matches_jax() {
    let s = snippet("hvp");
    let tol = tol(&s);
    let (x, v) = (array(&s["x"]), array(&s["v"]));
    let hvp = |(x, v): (Array, Array)| jvp(grad(|x: Array| hvp_f(&x)), &x, &v);
    let (g, hv) = hvp((x.clone(), v.clone()));
    assert_close("grad", &g, &s["grad"], tol);
    assert_close("hvp", &hv, &s["hvp"], tol);
    let (g, hv) = jit(hvp).call((x, v));
    assert_close("jit: grad", &g, &s["grad"], tol);
    assert_close("jit: hvp", &hv, &s["hvp"], tol);
}

/// `grad(grad(g))` (and a third order) of a scalar function of a scalar, float64.
#[test]
fn nested_grad_of_a_scalar_function_matches_jax() {
    let s = snippet("grad_grad");
    let tol = tol(&s);
    let x = array(&s["s"]);
    let g = |s: Array| &s.sin() * &s.powi(3) + (-(&s * &s)).exp();
    assert_close("g", &g(x.clone()), &s["value"], tol);
    let d1 = grad(g);
    let d2 = grad(&d1);
    let d3 = grad(&d2);
    assert_close("g'", &d1(x.clone()), &s["d1"], tol);
    assert_close("g''", &d2(x.clone()), &s["d2"], tol);
    assert_close("g'''", &d3(x.clone()), &s["d3"], tol);
    assert_close("jit(g'')", &jit(&d2).call(x), &s["d2"], tol);
}

#[jit]
fn inner_jitted(x: &Array) -> Array {
    x.sin() * x
}

/// `sum(jit(sin(x) * x)^2)`.
fn outer(x: &Array) -> Array {
    inner_jitted(x).powi(2).sum(None, false)
}

/// `grad` inside `jit`, and a `#[jit]` function inside `grad`.
#[test]
fn grad_in_jit_and_jit_in_grad_match_jax() {
    let s = snippet("grad_jit");
    let tol = tol(&s);
    let x = array(&s["x"]);

    let softplus_sum = |x: Array| (x.exp().log1p() * &x).sum(None, false);
    let g = jit(|x: Array| grad(softplus_sum)(x)).call(x.clone());
    assert_close("jit(grad(f))", &g, &s["grad_in_jit"], tol);

    let (value, g) = value_and_grad(|x: Array| outer(&x))(x.clone());
    assert_close(
        "value of f with jit inside",
        &value,
        &s["jit_in_grad_value"],
        tol,
    );
    assert_close("grad(f with jit inside)", &g, &s["jit_in_grad"], tol);
    assert_close(
        "grad(f with jit inside), grad form",
        &grad(|x: Array| outer(&x))(x.clone()),
        &s["jit_in_grad"],
        tol,
    );

    let g = jit(|x: Array| grad(|x: Array| outer(&x))(x)).call(x.clone());
    assert_close("jit(grad(f with jit inside))", &g, &s["jit_grad_jit"], tol);
    // The jitted function still works on its own (compiled, not inlined) and agrees with
    // the same ops run eagerly.
    let direct = inner_jitted(&x).to_f64_vec();
    let eager = (x.sin() * &x).to_f64_vec();
    for (a, b) in direct.iter().zip(&eager) {
        assert!(
            (a - b).abs() <= 1e-15 * b.abs().max(1.0),
            "{direct:?} vs {eager:?}"
        );
    }
}
