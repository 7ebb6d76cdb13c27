//! The rest of `jax.random` against JAX 0.10.2, bit for bit: `tests/golden/random_samplers.json`
//! (written by `tests/golden/gen_random_samplers.py`) holds each sampler's draws for given
//! seeds and arguments. Every case runs eagerly and inside `jit`; the `vmap` cases map over a
//! batch of keys under `jit`. A case's `ulps` (0 for nearly all) is how far an
//! element may be from JAX's jitted draws, its `eager_ulps` from JAX's eager ones. Where the
//! two differ (the Gamma family: inside `jax.jit` XLA folds the arithmetic on constant
//! parameters, see the generator), jaxrs's draws are JAX's eager ones, eagerly and jitted;
//! `orthogonal` and `multivariate_normal` factor matrices with jaxrs's kernels, not LAPACK, so
//! they are compared to a relative tolerance.

mod common;

use common::bits_of;
use jaxrs::prelude::*;
use jaxrs::random::{self, CategoricalOptions, CovFactor, GumbelMode};
use jaxrs::IntoArg;
use jaxrs::{eval_shape, ShapeDtypeStruct};
use serde_json::Value;

struct Case {
    name: String,
    fn_name: String,
    seeds: Vec<u64>,
    vmap: bool,
    args: Value,
    dtype: String,
    shape: Vec<usize>,
    ulps: u64,
    bits: Vec<i64>,
    eager_ulps: u64,
    /// JAX's eager draws where they are not its jitted ones.
    eager_bits: Option<Vec<i64>>,
    rtol: Option<(f64, Vec<f64>)>,
}

fn cases() -> Vec<Case> {
    let path = format!(
        "{}/tests/golden/random_samplers.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("golden JSON");
    let ints = |v: &Value| -> Vec<i64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect()
    };
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().into(),
            fn_name: c["fn"].as_str().unwrap().into(),
            seeds: ints(&c["seeds"]).into_iter().map(|s| s as u64).collect(),
            vmap: c["vmap"].as_bool().unwrap(),
            args: c["args"].clone(),
            dtype: c["dtype"].as_str().unwrap().into(),
            shape: ints(&c["shape"]).into_iter().map(|d| d as usize).collect(),
            ulps: c["ulps"].as_u64().unwrap(),
            bits: ints(&c["bits"]),
            eager_ulps: c["eager_ulps"].as_u64().unwrap(),
            eager_bits: c.get("eager_bits").map(ints),
            rtol: c.get("rtol").map(|r| {
                let values = c["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                (r.as_f64().unwrap(), values)
            }),
        })
        .collect()
}

fn dtype_of(name: &str) -> DType {
    DType::from_name(name).unwrap_or_else(|| panic!("dtype {name}"))
}

/// A sampler parameter as the generator passed it: a Python scalar or an array.
#[derive(Clone)]
enum Param {
    Number(f64),
    Array(Array),
}

impl<'a> IntoArg<'a> for &'a Param {
    fn into_arg(self) -> jaxrs::internals::Operand<'a> {
        match self {
            Param::Number(v) => v.into_arg(),
            Param::Array(a) => a.into_arg(),
        }
    }
}

fn param(v: &Value) -> Param {
    if let Some(x) = v.as_f64() {
        return Param::Number(x);
    }
    let dtype = dtype_of(v["dtype"].as_str().unwrap());
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let data: Vec<f64> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    Param::Array(Array::from_vec(data, &shape).astype(dtype))
}

fn array(v: &Value) -> Array {
    match param(v) {
        Param::Array(a) => a,
        Param::Number(_) => panic!("an array argument"),
    }
}

/// The function a case calls, on one key.
fn sampler(c: &Case) -> impl Fn(&Array) -> Array + Clone + 'static {
    let a = c.args.clone();
    let fn_name = c.fn_name.clone();
    move |key: &Array| {
        let shape: Option<Vec<usize>> = a.get("shape").map(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect()
        });
        let shape_opt = shape.as_deref();
        let shape_or_empty = shape.clone().unwrap_or_default();
        let dtype = || dtype_of(a["dtype"].as_str().unwrap());
        let p = |k: &str| param(&a[k]);
        let usize_arg = |k: &str| a[k].as_u64().unwrap() as usize;
        match fn_name.as_str() {
            "bits" => random::bits(key, &shape_or_empty, dtype()),
            "exponential" => random::exponential(key, &shape_or_empty, dtype()),
            "laplace" => random::laplace(key, &shape_or_empty, dtype()),
            "logistic" => random::logistic(key, &shape_or_empty, dtype()),
            "cauchy" => random::cauchy(key, &shape_or_empty, dtype()),
            "maxwell" => random::maxwell(key, &shape_or_empty, dtype()),
            "gumbel" => {
                let mode = match a["mode"].as_str().unwrap() {
                    "low" => GumbelMode::Low,
                    _ => GumbelMode::High,
                };
                random::gumbel(key, &shape_or_empty, dtype(), mode)
            }
            "lognormal" => random::lognormal(key, &p("sigma"), shape_opt, dtype()),
            "pareto" => random::pareto(key, &p("b"), shape_opt, dtype()),
            "rayleigh" => random::rayleigh(key, &p("scale"), shape_opt, dtype()),
            "wald" => random::wald(key, &p("mean"), shape_opt, dtype()),
            "weibull_min" => random::weibull_min(
                key,
                &p("scale"),
                &p("concentration"),
                &shape_or_empty,
                dtype(),
            ),
            "double_sided_maxwell" => {
                random::double_sided_maxwell(key, &p("loc"), &p("scale"), &shape_or_empty, dtype())
            }
            "triangular" => {
                random::triangular(key, &p("left"), &p("mode"), &p("right"), shape_opt, dtype())
            }
            "rademacher" => random::rademacher(key, &shape_or_empty, dtype()),
            "geometric" => random::geometric(key, &p("p"), shape_opt, dtype()),
            "bernoulli_array" => random::bernoulli_array(key, &array(&a["p"]), shape_opt),
            "choice" => {
                let probs = a.get("p").map(array);
                let replace = a["replace"].as_bool().unwrap();
                let axis = a.get("axis").map_or(0, |x| x.as_i64().unwrap());
                match a["a"].as_u64() {
                    Some(n) => random::choice(
                        key,
                        n as usize,
                        &shape_or_empty,
                        replace,
                        probs.as_ref(),
                        axis,
                    ),
                    None => random::choice(
                        key,
                        array(&a["a"]),
                        &shape_or_empty,
                        replace,
                        probs.as_ref(),
                        axis,
                    ),
                }
            }
            "permutation_array" => random::permutation_array(
                key,
                &array(&a["x"]),
                a["axis"].as_i64().unwrap(),
                a["independent"].as_bool().unwrap(),
            ),
            "categorical_with" => random::categorical_with(
                key,
                &array(&a["logits"]),
                CategoricalOptions {
                    axis: a["axis"].as_i64().unwrap(),
                    shape: shape_opt,
                    replace: a["replace"].as_bool().unwrap(),
                },
            ),
            "gamma" => random::gamma(key, &p("a"), shape_opt, dtype()),
            "loggamma" => random::loggamma(key, &p("a"), shape_opt, dtype()),
            "beta" => random::beta(key, &p("a"), &p("b"), shape_opt, dtype()),
            "dirichlet" => random::dirichlet(key, &array(&a["alpha"]), shape_opt, dtype()),
            "chisquare" => random::chisquare(key, &p("df"), shape_opt, dtype()),
            "f" => random::f(key, &p("dfnum"), &p("dfden"), shape_opt, dtype()),
            "t" => random::t(key, &p("df"), shape_opt, dtype()),
            "generalized_normal" => {
                random::generalized_normal(key, a["p"].as_f64().unwrap(), &shape_or_empty, dtype())
            }
            "ball" => random::ball(
                key,
                usize_arg("d"),
                a["p"].as_f64().unwrap(),
                &shape_or_empty,
                dtype(),
            ),
            "poisson" => random::poisson(key, &p("lam"), shape_opt, dtype()),
            "binomial" => random::binomial(key, &p("n"), &p("p"), shape_opt, dtype()),
            "multinomial" => random::multinomial(key, &p("n"), &array(&a["p"]), shape_opt, dtype()),
            "orthogonal" => random::orthogonal(
                key,
                usize_arg("n"),
                &shape_or_empty,
                dtype(),
                a.get("m").map(|m| m.as_u64().unwrap() as usize),
            ),
            "multivariate_normal" => {
                let method = match a["method"].as_str().unwrap() {
                    "cholesky" => CovFactor::Cholesky,
                    "eigh" => CovFactor::Eigh,
                    _ => CovFactor::Svd,
                };
                random::multivariate_normal(
                    key,
                    &array(&a["mean"]),
                    &array(&a["cov"]),
                    shape_opt,
                    dtype(),
                    method,
                )
            }
            other => panic!("unknown sampler {other}"),
        }
    }
}

/// Which of JAX's draws a result is compared with.
#[derive(Clone, Copy)]
enum Against {
    /// `jax.jit`'s, within `ulps`.
    Jitted,
    /// JAX's eager ones, within `eager_ulps`.
    Eager,
}

fn check(c: &Case, how: &str, got: &Array, against: Against, failures: &mut Vec<String>) {
    let (bits, ulps) = match against {
        Against::Jitted => (&c.bits, c.ulps),
        Against::Eager => (c.eager_bits.as_ref().unwrap_or(&c.bits), c.eager_ulps),
    };
    let want_dtype = dtype_of(&c.dtype);
    if got.dtype() != want_dtype || got.shape() != c.shape.as_slice() {
        failures.push(format!(
            "{} ({how}): got {:?} {:?}, want {:?} {:?}",
            c.name,
            got.dtype(),
            got.shape(),
            want_dtype,
            c.shape
        ));
        return;
    }
    if let Some((rtol, want)) = &c.rtol {
        if c.fn_name == "multivariate_normal" && c.args["method"] != "cholesky" {
            check_up_to_eigenvector_signs(c, *rtol, got, want, how, failures);
            return;
        }
        let got = got.astype(DType::F64).to_vec::<f64>();
        let bad: Vec<String> = got
            .iter()
            .zip(want)
            .enumerate()
            .filter(|(_, (g, w))| (*g - *w).abs() > rtol * w.abs().max(1.0))
            .map(|(i, (g, w))| format!("[{i}] {g} vs {w}"))
            .collect();
        if !bad.is_empty() {
            failures.push(format!("{} ({how}): {}", c.name, bad.join(", ")));
        }
        return;
    }
    let got = bits_of(got);
    let bad = got
        .iter()
        .zip(bits)
        .filter(|(a, b)| a.abs_diff(**b) > ulps)
        .count();
    if bad > 0 {
        let first = got
            .iter()
            .zip(bits)
            .position(|(a, b)| a.abs_diff(*b) > ulps)
            .unwrap();
        failures.push(format!(
            "{} ({how}): {bad} of {} elements differ, first at {first}: got {:#x}, want {:#x}",
            c.name,
            bits.len(),
            got[first],
            bits[first]
        ));
    }
}

/// `multivariate_normal` by eigh or SVD: `x - mean` is `V diag(sqrt(w)) z` with JAX's `z`
/// (the same normal draws) but eigenvectors `V` whose signs are the kernel's, so the draws'
/// coordinates along each eigenvector agree with JAX's up to sign.
fn check_up_to_eigenvector_signs(
    c: &Case,
    rtol: f64,
    got: &Array,
    want: &[f64],
    how: &str,
    failures: &mut Vec<String>,
) {
    let mean = array(&c.args["mean"]).astype(DType::F64);
    let cov = array(&c.args["cov"]).astype(DType::F64);
    let (_, v) = jaxrs::numpy::linalg::eigh(&cov, None, true);
    let n = mean.shape()[0];
    let v = v.to_vec::<f64>();
    let mean = mean.to_vec::<f64>();
    let got = got.astype(DType::F64).to_vec::<f64>();
    let coordinates = |x: &[f64]| -> Vec<f64> {
        x.chunks(n)
            .flat_map(|row| {
                (0..n)
                    .map(|j| {
                        (0..n)
                            .map(|i| v[i * n + j] * (row[i] - mean[i]))
                            .sum::<f64>()
                            .abs()
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (g, w) = (coordinates(&got), coordinates(want));
    let bad: Vec<String> = g
        .iter()
        .zip(&w)
        .enumerate()
        .filter(|(_, (g, w))| (*g - *w).abs() > rtol * w.abs().max(1.0))
        .map(|(i, (g, w))| format!("[{i}] |{g}| vs |{w}|"))
        .collect();
    if !bad.is_empty() {
        failures.push(format!("{} ({how}): {}", c.name, bad.join(", ")));
    }
}

fn run_cases(filter: impl Fn(&str) -> bool) {
    let mut failures = Vec::new();
    let mut ran = 0;
    for c in cases().iter().filter(|c| filter(&c.fn_name)) {
        ran += 1;
        let f = sampler(c);
        if c.vmap {
            let keys: Vec<Array> = c.seeds.iter().map(|&s| random::key(s)).collect();
            let keys = Array::stack(&keys, 0);
            let g = f.clone();
            let jitted = jit(move |k: Array| vmap(|k: Array| g(&k), 0, 0)(k)).call(keys);
            for against in [Against::Jitted, Against::Eager] {
                check(c, "jit(vmap)", &jitted, against, &mut failures);
            }
        } else {
            let key = random::key(c.seeds[0]);
            check(c, "eager", &f(&key), Against::Eager, &mut failures);
            let g = f.clone();
            let jitted = jit(move |k: Array| g(&k)).call(key);
            for against in [Against::Jitted, Against::Eager] {
                check(c, "jit", &jitted, against, &mut failures);
            }
        }
    }
    assert!(ran > 0, "no cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bits_match_jax() {
    run_cases(|f| f == "bits");
}

#[test]
fn closed_form_samplers_match_jax() {
    run_cases(|f| {
        matches!(
            f,
            "exponential"
                | "laplace"
                | "logistic"
                | "cauchy"
                | "maxwell"
                | "gumbel"
                | "lognormal"
                | "pareto"
                | "rayleigh"
                | "wald"
                | "weibull_min"
                | "double_sided_maxwell"
                | "triangular"
        )
    });
}

#[test]
fn discrete_samplers_and_selections_match_jax() {
    run_cases(|f| {
        matches!(
            f,
            "rademacher"
                | "geometric"
                | "bernoulli_array"
                | "choice"
                | "permutation_array"
                | "categorical_with"
        )
    });
}

#[test]
fn gamma_family_matches_jax() {
    run_cases(|f| {
        matches!(
            f,
            "gamma"
                | "loggamma"
                | "beta"
                | "dirichlet"
                | "chisquare"
                | "f"
                | "t"
                | "generalized_normal"
                | "ball"
        )
    });
}

#[test]
fn poisson_binomial_and_multinomial_match_jax() {
    run_cases(|f| matches!(f, "poisson" | "binomial" | "multinomial"));
}

#[test]
fn factored_samplers_match_jax() {
    run_cases(|f| matches!(f, "orthogonal" | "multivariate_normal"));
}

#[test]
fn raw_keys_are_their_own_data() {
    let key = random::key(42);
    // `jax.random.key_data(jax.random.key(42))` is [0, 42], as `PRNGKey(42)` is.
    assert_eq!(random::key_data(&key).to_vec::<u32>(), vec![0, 42]);
    let keys = random::split(&key, 3);
    assert_eq!(
        random::wrap_key_data(&keys).to_vec::<u32>(),
        keys.to_vec::<u32>()
    );
    assert_eq!(random::key_impl(&keys), "threefry2x32");
    assert_eq!(random::clone(&key).to_vec::<u32>(), vec![0, 42]);
}

/// `jax.random.key_dtype()` prints `key<fry>`, is the same for "threefry2x32", and
/// `eval_shape(key_data, ShapeDtypeStruct((3,), key_dtype()))` is `uint32[3, 2]`: the raw
/// layout jaxrs's abstract keys take.
#[test]
fn key_dtype_describes_raw_threefry_keys_as_jax_does() {
    let dtype = random::key_dtype(None);
    assert_eq!(dtype.to_string(), "key<fry>");
    assert_eq!(dtype, random::key_dtype(Some("threefry2x32")));
    assert_eq!(dtype.impl_name(), random::key_impl(&random::key(0)));
    let abstract_keys = dtype.shape_dtype_struct(&[3]);
    assert_eq!(abstract_keys, ShapeDtypeStruct::new([3, 2], DType::U32));
    // Abstract keys trace through a sampler as concrete ones do.
    let out = eval_shape(
        |k: Array| random::uniform(&k, &[4], DType::F32),
        &jaxrs::tree::TreeOf::leaf(dtype.shape_dtype_struct(&[])),
    );
    assert_eq!(out.leaves(), &[ShapeDtypeStruct::new([4], DType::F32)]);
    let msg = common::panic_message(|| {
        random::key_dtype(Some("rbg"));
    });
    assert!(
        msg.contains("only the threefry2x32 generator, not \"rbg\""),
        "{msg}"
    );
    let msg = common::panic_message(|| {
        random::key_dtype(Some("foo"));
    });
    assert!(
        msg.contains("unrecognized PRNG implementation \"foo\""),
        "{msg}"
    );
}

#[test]
#[should_panic(expected = "keys are u32[..., 2] arrays")]
fn wrapping_data_of_the_wrong_shape_is_refused() {
    random::wrap_key_data(&Array::from_vec(vec![1u32, 2, 3], &[3]));
}

#[test]
#[should_panic(expected = "cannot take a larger sample (size 6) than the population (size 5)")]
fn choice_without_replacement_refuses_too_many_draws() {
    random::choice(&random::key(0), 5, &[6], false, None, 0);
}

/// The derivatives of the Gamma family in its parameters, `d/dp sum(w * sampler(key, p))`
/// with `w = 1, 2, ...`, against `jax.grad` (JAX's implicit reparameterization through
/// `random_gamma_grad`), under `jit` and eagerly.
#[test]
fn gamma_family_derivatives_match_jax() {
    let path = format!(
        "{}/tests/golden/random_samplers.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cases = doc["grads"].as_array().expect("grads");
    assert!(!cases.is_empty());
    for c in cases {
        let name = c["name"].as_str().unwrap().to_string();
        let fn_name = c["fn"].as_str().unwrap().to_string();
        let key = random::key(c["seed"].as_u64().unwrap());
        let value: Vec<f32> = c["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let want: Vec<f64> = c["grad"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let n = value.len();
        let p = Array::from_vec(value, &[n]);
        let loss = move |p: Array| {
            let f32_ = DType::F32;
            let x = match fn_name.as_str() {
                "gamma" => random::gamma(&key, &p, None, f32_),
                "loggamma" => random::loggamma(&key, &p, None, f32_),
                "beta" => random::beta(&key, &p, 2.0, None, f32_),
                "dirichlet" => random::dirichlet(&key, &p, Some(&[2]), f32_),
                "chisquare" => random::chisquare(&key, &p, None, f32_),
                "t" => random::t(&key, &p, None, f32_),
                other => panic!("unknown sampler {other}"),
            };
            let w = Array::arange(1.0, x.size() as f64 + 1.0, 1.0, DType::F32).reshape(x.shape());
            (&x * &w).sum(None, false)
        };
        let jitted = {
            let loss = loss.clone();
            jit(move |p: Array| grad(loss.clone())(p)).call(p.clone())
        };
        for (how, got) in [("jit", jitted), ("eager", grad(loss)(p))] {
            let got = got.astype(DType::F64).to_vec::<f64>();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                    "{name} ({how}) [{i}]: {g} vs JAX's {w}"
                );
            }
        }
    }
}
