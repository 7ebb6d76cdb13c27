//! Soak and stress: many threads calling jitted functions at once get exact results; a long
//! run of jitted train steps keeps resident memory flat (ignored by default, run with
//! `cargo test --release --test stress -- --ignored soak`); an allocation far beyond memory
//! and a program XLA rejects are typed `Error`s, not aborts.

use jaxrs::prelude::*;
use jaxrs::Error;

const THREADS: usize = 8;
const CALLS_PER_THREAD: usize = 200;

#[jit]
fn shared_affine(x: &Array, scale: f32) -> Array {
    x * scale + 1.0
}

#[jit]
fn own_square_sum(x: &Array) -> Array {
    (x * x).sum(None, false)
}

#[test]
fn eight_threads_call_the_same_and_different_jitted_functions() {
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                // Each thread owns a closure of its own shape, so compiles race with calls.
                let len = t + 1;
                let own = jit(move |x: Array| (&x * (t as f32)).sum(None, false));
                for i in 0..CALLS_PER_THREAD {
                    let v = (t * 1000 + i) as f32;
                    let y = shared_affine(&Array::from_slice(&[v, -v], &[2]), 2.0);
                    assert_eq!(y.to_vec::<f32>(), vec![2.0 * v + 1.0, 1.0 - 2.0 * v]);

                    let xs: Vec<f32> = (0..len).map(|k| (k + i) as f32).collect();
                    let want: f32 = xs.iter().sum::<f32>() * t as f32;
                    let got: Array = own.call(Array::from_slice(&xs, &[len]));
                    assert_eq!(got.item::<f32>(), want, "thread {t} call {i}");

                    let sq: f32 = xs.iter().map(|x| x * x).sum();
                    let got = own_square_sum(&Array::from_slice(&xs, &[len])).item::<f32>();
                    assert_eq!(got, sq, "thread {t} call {i}");
                }
            });
        }
    });
    assert_eq!(shared_affine::jit_site().cache_misses(), 1);
    assert_eq!(own_square_sum::jit_site().cache_misses(), THREADS as u64);
}

#[derive(Tree, Clone, Debug)]
struct Linear {
    w: Array,
    b: Array,
}

#[jit(donate = params)]
fn train_step(params: Linear, x: &Array, y: &Array, lr: f32) -> (Linear, Array) {
    let err = &(x.matmul(&params.w) + &params.b) - y;
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

/// Resident set size of this process in bytes, from `/proc/self/statm` (its second field,
/// in pages).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.parse().ok())
        .expect("statm's resident field");
    const PAGE: u64 = 4096;
    pages * PAGE
}

#[test]
#[ignore = "soak: seconds in release, a run of its own; run with --ignored soak"]
fn soak_100k_jitted_steps() {
    let steps: usize = std::env::var("JAXRS_SOAK_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    const WARM_UP: usize = 1_000;
    const MAX_GROWTH: u64 = 16 << 20;
    let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[4, 2]);
    let y = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4, 1]);
    let mut params = Linear {
        w: Array::zeros(&[2, 1], DType::F32),
        b: Array::zeros(&[1], DType::F32),
    };
    let mut first_loss = None;
    let mut last_loss = 0.0;
    let mut warm = 0;
    let start = std::time::Instant::now();
    for step in 0..steps {
        let (p, loss) = train_step(params, &x, &y, 0.01);
        params = p;
        // Reading every step keeps the queue from growing; reading is part of a real loop.
        last_loss = loss.item::<f32>();
        first_loss.get_or_insert(last_loss);
        if step + 1 == WARM_UP {
            warm = resident_bytes();
        }
    }
    let end = resident_bytes();
    let growth = end.saturating_sub(warm);
    println!(
        "soak: {steps} steps in {:.1?}; resident after {WARM_UP} steps {:.1} MiB, at the end \
         {:.1} MiB, growth {:.2} MiB; loss {:.4} -> {last_loss:.6}",
        start.elapsed(),
        warm as f64 / (1 << 20) as f64,
        end as f64 / (1 << 20) as f64,
        growth as f64 / (1 << 20) as f64,
        first_loss.unwrap_or_default(),
    );
    assert_eq!(train_step::jit_site().cache_misses(), 1);
    assert!(last_loss.is_finite() && last_loss < first_loss.unwrap());
    assert!(growth < MAX_GROWTH, "resident memory grew {growth} bytes");
}

const CHILD: &str = "JAXRS_STRESS_CHILD";

/// Runs the test `name` of this binary again in a child process with [`CHILD`] set, so an
/// abort there fails the test instead of killing the suite; returns its stdout.
fn in_child(name: &str) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child {name} failed ({:?}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn an_allocation_far_beyond_memory_is_a_typed_error() {
    if std::env::var_os(CHILD).is_none() {
        let out = in_child("an_allocation_far_beyond_memory_is_a_typed_error");
        assert!(out.contains("typed error: OutOfMemory"), "{out}");
        return;
    }
    // A TiB of f32s, produced by a jitted program so the device allocates it.
    let huge = jit(|x: Array| x.broadcast_to(&[1 << 38]));
    match try_run(|| {
        huge.call(Array::from_slice(&[1.0f32], &[1]))
            .shape()
            .to_vec()
    }) {
        Err(e @ Error::OutOfMemory { .. }) => println!("typed error: OutOfMemory: {e}"),
        Err(e) => println!("typed error: other: {e:?}"),
        Ok(shape) => println!("no error: {shape:?}"),
    }
}

#[test]
fn a_program_xla_rejects_is_a_typed_compile_error() {
    use jaxrs::internals::{client, compile_options};
    let client = client();
    // Well-formed MLIR whose types disagree: the parser accepts it, the verifier does not.
    let mistyped = "module @bad {\n  func.func public @main(%a: tensor<4xf32>) -> tensor<8xf32> {\n    \
                    %0 = stablehlo.add %a, %a : tensor<8xf32>\n    return %0 : tensor<8xf32>\n  }\n}\n";
    for text in [mistyped, "this is not MLIR"] {
        match client.compile(text, &compile_options()) {
            Err(Error::Compile { message }) => assert!(!message.is_empty()),
            Err(e) => panic!("expected Error::Compile, got {e:?}"),
            Ok(_) => panic!("XLA compiled {text:?}"),
        }
    }
}

#[test]
fn a_host_built_array_far_beyond_memory_is_a_typed_error() {
    if std::env::var_os(CHILD).is_none() {
        let out = in_child("a_host_built_array_far_beyond_memory_is_a_typed_error");
        assert!(out.contains("typed error: OutOfMemory"), "{out}");
        return;
    }
    match try_run(|| Array::zeros(&[1 << 38], DType::F32).shape().to_vec()) {
        Err(e @ Error::OutOfMemory { .. }) => println!("typed error: OutOfMemory: {e}"),
        Err(e) => println!("typed error: other: {e:?}"),
        Ok(shape) => println!("no error: {shape:?}"),
    }
}
