//! Keys inside traces, against JAX 0.10.2 with `jax_enable_x64` (`tests/golden/random_traced.json`,
//! written by `tests/golden/gen_random_traced.py`): `random::key` and `random::fold_in` take a
//! Rust integer or a 0-d integer array, concrete or traced, so a jitted step folds in its
//! traced step count with one compile and a `scan` body makes keys from its index.
//!
//! Also the compile that never ended: `split` + a vmapped `normal` inside `jit`, whose program
//! made the CPU plugin's code generation run forever, compiled here in a child process that
//! a time limit guards.

use jaxrs::prelude::*;
use jaxrs::random;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn golden() -> Value {
    let path = format!(
        "{}/tests/golden/random_traced.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("golden JSON")
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// A 0-d array of `dtype` holding `v` (which fits it).
fn int_scalar(v: i64, dtype: &str) -> Array {
    match dtype {
        "int32" => Array::scalar(v as i32),
        "int64" => Array::scalar(v),
        "uint32" => Array::scalar(v as u32),
        "int8" => Array::scalar(v as i8),
        "uint8" => Array::scalar(v as u8),
        other => panic!("dtype {other}"),
    }
}

fn base() -> Array {
    random::key(golden()["base_seed"].as_u64().unwrap())
}

#[test]
fn key_from_rust_integers_and_arrays_matches_jax() {
    let g = golden();
    for c in g["key_int"].as_array().unwrap() {
        let seed = c["seed"].as_i64().unwrap();
        assert_eq!(
            random::key(seed).to_vec::<u32>(),
            u32s(&c["key"]),
            "key({seed})"
        );
        if seed >= 0 {
            assert_eq!(random::key(seed as u64).to_vec::<u32>(), u32s(&c["key"]));
        }
    }
    let jitted = jit(|seed: Array| random::key(&seed));
    for c in g["key_array"].as_array().unwrap() {
        let (dtype, seed) = (c["dtype"].as_str().unwrap(), c["seed"].as_i64().unwrap());
        let x = int_scalar(seed, dtype);
        let what = format!("key({dtype} {seed})");
        assert_eq!(random::key(&x).to_vec::<u32>(), u32s(&c["key"]), "{what}");
        assert_eq!(
            jitted.call(x).to_vec::<u32>(),
            u32s(&c["jit"]),
            "jit {what}"
        );
    }
}

#[test]
fn fold_in_of_rust_integers_and_arrays_matches_jax() {
    let g = golden();
    let k = base();
    for c in g["fold_int"].as_array().unwrap() {
        let d = c["data"].as_u64().unwrap();
        let want = u32s(&c["key"]);
        assert_eq!(
            random::fold_in(&k, d as u32).to_vec::<u32>(),
            want,
            "fold_in {d}"
        );
        assert_eq!(
            random::fold_in(&k, d).to_vec::<u32>(),
            want,
            "fold_in {d}u64"
        );
    }
    let jitted = jit(|(k, d): (Array, Array)| random::fold_in(&k, &d));
    for c in g["fold_array"].as_array().unwrap() {
        let (dtype, d) = (c["dtype"].as_str().unwrap(), c["data"].as_i64().unwrap());
        let x = int_scalar(d, dtype);
        let what = format!("fold_in({dtype} {d})");
        assert_eq!(
            random::fold_in(&k, &x).to_vec::<u32>(),
            u32s(&c["key"]),
            "{what}"
        );
        let got = jitted.call((k.clone(), x));
        assert_eq!(got.to_vec::<u32>(), u32s(&c["jit"]), "jit {what}");
    }
}

#[test]
#[should_panic(expected = "out of bounds for uint32")]
fn fold_in_refuses_a_rust_integer_beyond_u32_as_jax_does() {
    random::fold_in(&random::key(0), -1);
}

#[jit]
fn step(key: &Array, t: i32) -> Array {
    random::uniform(&random::fold_in(key, t), &[3], DType::F32)
}

#[test]
fn a_jitted_step_folds_in_its_traced_count_with_one_compile() {
    let g = golden();
    let k = base();
    for c in g["steps"].as_array().unwrap() {
        let t = c["t"].as_i64().unwrap() as i32;
        let bits: Vec<u32> = step(&k, t)
            .to_vec::<f32>()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(bits, u32s(&c["bits"]), "step {t}");
    }
    assert_eq!(
        step::jit_site().cache_misses(),
        1,
        "one compile for 5 steps"
    );
}

#[test]
fn a_scan_body_makes_keys_from_its_index() {
    let g = golden();
    let s = &g["scan"];
    let n = s["n"].as_u64().unwrap() as usize;
    let k = base();
    let idx = Array::arange(0.0, n as f64, 1.0, DType::I32);
    let run = |(k, idx): (Array, Array)| {
        scan(
            |c: Array, i: Array| {
                let folded = random::fold_in(&k, &i);
                let draw = random::normal(&folded, &[2], DType::F32);
                let ys = (folded, random::key(&i), draw);
                (c, ys)
            },
            Array::scalar(0.0f32),
            idx,
        )
        .1
    };
    let (eager, jitted) = (run((k.clone(), idx.clone())), jit(run).call((k, idx)));
    for (how, (folded, keys, draws)) in [("eager", eager), ("jit", jitted)] {
        assert_eq!(folded.shape(), &[n, 2]);
        assert_eq!(folded.to_vec::<u32>(), u32s(&s["fold_in"]), "{how} fold_in");
        assert_eq!(keys.to_vec::<u32>(), u32s(&s["key"]), "{how} key");
        let bits: Vec<u32> = draws.to_vec::<f32>().iter().map(|x| x.to_bits()).collect();
        assert_eq!(bits, u32s(&s["normal"]), "{how} normal");
    }
}

const CHILD: &str = "JAXRS_COMPILE_HANG_CHILD";

/// The function of the report: 40 keys split inside `jit`, one normal draw per key under
/// `vmap`, its first element read with `at(0).get()` or with `slice_axis`.
fn split_then_vmapped_normal(form: &str) -> Array {
    let k = random::key(0);
    match form {
        "at" => jit(|k: Array| {
            vmap(
                |k: Array| random::normal(&k, &[2], DType::F32).at(0).get(),
                0,
                0,
            )(random::split(&k, 40))
        })
        .call(k),
        _ => jit(|k: Array| {
            vmap(
                |k: Array| {
                    random::normal(&k, &[2], DType::F32)
                        .slice_axis(0, 0, 1)
                        .reshape(Vec::<usize>::new())
                },
                0,
                0,
            )(random::split(&k, 40))
        })
        .call(k),
    }
}

#[test]
fn split_and_a_vmapped_draw_inside_jit_compile_in_bounded_time() {
    if let Ok(form) = std::env::var(CHILD) {
        let y = split_then_vmapped_normal(&form);
        assert_eq!(y.shape(), &[40]);
        // The same draws as a loop over the split keys, one `normal` each.
        let keys = random::split(&random::key(0), 40);
        let want: Vec<f32> = (0..40)
            .map(|i| {
                let key = keys.slice(&[i, 0], &[i + 1, 2], &[1, 1]).reshape([2]);
                random::normal(&key, &[2], DType::F32).to_vec::<f32>()[0]
            })
            .collect();
        assert_eq!(y.to_vec::<f32>(), want, "{form}");
        return;
    }
    // Generous: the programs compile in about a second; before the fix they never did.
    let limit = Duration::from_secs(120);
    for form in ["at", "slice_axis"] {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "split_and_a_vmapped_draw_inside_jit_compile_in_bounded_time",
                "--test-threads=1",
                "--quiet",
            ])
            .env(CHILD, form)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if start.elapsed() > limit {
                child.kill().unwrap();
                child.wait().unwrap();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut stderr);
        }
        match status {
            Some(s) => assert!(s.success(), "{form}: the child failed ({s}):\n{stderr}"),
            None => panic!("{form}: compiling did not end within {limit:?}:\n{stderr}"),
        }
    }
}

/// As in JAX's program, a split's counters and a read's index reach XLA as constants of the
/// program, not as arguments: `main` takes the key alone.
#[test]
fn a_split_inside_jit_embeds_its_counters_as_constants() {
    let module = stablehlo(
        |k: Array| {
            let keys = random::split(&k, 40);
            vmap(
                |k: Array| random::normal(&k, &[2], DType::F32).at(0).get(),
                0,
                0,
            )(keys)
        },
        &random::key(0),
    );
    let main = module
        .lines()
        .find(|l| l.contains("func.func public @main"))
        .expect("a main function");
    assert!(main.contains("@main(%arg0: tensor<2xui32>)"), "{main}");
    assert!(
        module.contains("\"stablehlo.constant\"() <{value = dense<0> : tensor<40xui32>}>"),
        "{module}"
    );
}
