//! `jaxrs::random` against JAX 0.10.2's `jax.random`, bit for bit: the golden file
//! `tests/golden/random.json` (written by `tests/golden/gen_random.py`) holds, per case, the
//! function, its key's seed, its arguments and JAX's output as bit patterns. Every case runs
//! eagerly and inside `jit`; the `vmap` cases map over a batch of keys (`u32[n, 2]`), under
//! `jit` too.

use jaxrs::prelude::*;
use jaxrs::random;
use serde_json::Value;

struct Case {
    name: String,
    fn_name: String,
    seeds: Vec<u64>,
    vmap: bool,
    args: Value,
    dtype: String,
    shape: Vec<usize>,
    bits: Vec<i64>,
}

fn cases() -> Vec<Case> {
    let path = format!("{}/tests/golden/random.json", env!("CARGO_MANIFEST_DIR"));
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
            bits: ints(&c["bits"]),
        })
        .collect()
}

fn dtype_of(name: &str) -> DType {
    DType::from_name(name).unwrap_or_else(|| panic!("dtype {name}"))
}

/// The function a case calls, on one key.
fn sampler(c: &Case) -> impl Fn(&Array) -> Array + Clone + 'static {
    let a = c.args.clone();
    let fn_name = c.fn_name.clone();
    move |key: &Array| {
        let shape: Vec<usize> = a["shape"]
            .as_array()
            .map(|s| s.iter().map(|d| d.as_u64().unwrap() as usize).collect())
            .unwrap_or_default();
        let dtype = || dtype_of(a["dtype"].as_str().unwrap());
        let f = |k: &str| a[k].as_f64().unwrap();
        let n = || a["n"].as_u64().unwrap() as usize;
        match fn_name.as_str() {
            "key" => key.clone(),
            "split" => random::split(key, n()),
            "fold_in" => random::fold_in(key, a["data"].as_u64().unwrap() as u32),
            "uniform" => random::uniform(key, &shape, dtype()),
            "uniform_range" => {
                random::uniform_range(key, &shape, dtype(), f("minval"), f("maxval"))
            }
            "normal" => random::normal(key, &shape, dtype()),
            "truncated_normal" => {
                random::truncated_normal(key, f("lower"), f("upper"), &shape, dtype())
            }
            "bernoulli" => random::bernoulli(key, f("p"), &shape),
            "categorical" => {
                let values: Vec<f32> = a["logits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap() as f32)
                    .collect();
                let lshape: Vec<usize> = a["logits_shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap() as usize)
                    .collect();
                let logits = Array::from_vec(values, &lshape);
                random::categorical(key, &logits, a["axis"].as_i64().unwrap())
            }
            "permutation" => random::permutation(key, n()),
            "randint" => random::randint(
                key,
                &shape,
                a["minval"].as_i64().unwrap(),
                a["maxval"].as_i64().unwrap(),
                dtype(),
            ),
            other => panic!("unknown function {other}"),
        }
    }
}

/// The output's bit patterns, in the golden file's encoding.
fn bits_of(x: &Array) -> Vec<i64> {
    match x.dtype() {
        DType::F32 => x
            .to_vec::<f32>()
            .iter()
            .map(|v| v.to_bits() as i64)
            .collect(),
        DType::BF16 => x
            .to_vec::<half::bf16>()
            .iter()
            .map(|v| v.to_bits() as i64)
            .collect(),
        DType::F16 => x
            .to_vec::<half::f16>()
            .iter()
            .map(|v| v.to_bits() as i64)
            .collect(),
        DType::U32 => x.to_vec::<u32>().iter().map(|&v| v as i64).collect(),
        DType::I32 => x.to_vec::<i32>().iter().map(|&v| v as i64).collect(),
        DType::U8 => x.to_vec::<u8>().iter().map(|&v| v as i64).collect(),
        DType::I8 => x.to_vec::<i8>().iter().map(|&v| v as i64).collect(),
        DType::Bool => x.to_vec::<bool>().iter().map(|&v| v as i64).collect(),
        other => panic!("unexpected dtype {other:?}"),
    }
}

fn check(c: &Case, how: &str, got: &Array, failures: &mut Vec<String>) {
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
    let got = bits_of(got);
    let bad = got.iter().zip(&c.bits).filter(|(a, b)| a != b).count();
    if bad > 0 {
        let first = got.iter().zip(&c.bits).position(|(a, b)| a != b).unwrap();
        failures.push(format!(
            "{} ({how}): {bad} of {} elements differ, first at {first}: got {:#x}, want {:#x}",
            c.name,
            c.bits.len(),
            got[first],
            c.bits[first]
        ));
    }
}

fn run_cases(filter: impl Fn(&Case) -> bool) {
    let mut failures = Vec::new();
    let mut ran = 0;
    for c in cases().iter().filter(|c| filter(c)) {
        ran += 1;
        let f = sampler(c);
        if c.vmap {
            let keys: Vec<Array> = c.seeds.iter().map(|&s| random::key(s)).collect();
            let keys = Array::stack(&keys, 0);
            let g = f.clone();
            let batched = vmap(move |k: Array| g(&k), 0, 0)(keys.clone());
            // Outside jit, vmap runs op by op: a draw scaled to a range rounds its
            // `u * span + min` twice where XLA's fused program rounds once (see the module
            // docs), so only jit(vmap) is bit-exact there.
            if c.fn_name != "truncated_normal" {
                check(c, "vmap", &batched, &mut failures);
            }
            let g = f.clone();
            let jitted = jit(move |k: Array| vmap(|k: Array| g(&k), 0, 0)(k)).call(keys);
            check(c, "jit(vmap)", &jitted, &mut failures);
        } else {
            let key = random::key(c.seeds[0]);
            check(c, "eager", &f(&key), &mut failures);
            let g = f.clone();
            check(
                c,
                "jit",
                &jit(move |k: Array| g(&k)).call(key),
                &mut failures,
            );
        }
    }
    assert!(ran > 0, "no cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn keys_split_and_fold_in_match_jax() {
    run_cases(|c| matches!(c.fn_name.as_str(), "key" | "split" | "fold_in"));
}

#[test]
fn uniform_and_normal_match_jax() {
    run_cases(|c| matches!(c.fn_name.as_str(), "uniform" | "uniform_range" | "normal"));
}

#[test]
fn truncated_normal_and_bernoulli_match_jax() {
    run_cases(|c| matches!(c.fn_name.as_str(), "truncated_normal" | "bernoulli"));
}

#[test]
fn categorical_and_permutation_match_jax() {
    run_cases(|c| matches!(c.fn_name.as_str(), "categorical" | "permutation"));
}

#[test]
fn randint_matches_jax() {
    run_cases(|c| c.fn_name == "randint");
}
