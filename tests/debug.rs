//! Looking inside compiled code (issue 11, item 9): `debug_print!` prints at run time from
//! jit, vmap, scan and grad (through the plugin's FFI extension: an XLA FFI custom call whose
//! handler is ours), and the NaN checker names the first operation that made a NaN with the
//! user's line.
//!
//! The print hook is process-wide and tests run in parallel: each test prints with its own
//! tag and reads back only its lines.

use jaxrs::prelude::*;
use std::sync::{Arc, Mutex, OnceLock};

fn lines() -> &'static Mutex<Vec<String>> {
    static LINES: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    LINES.get_or_init(|| {
        jaxrs::set_debug_print_hook(Some(Arc::new(|line: &str| {
            lines().lock().unwrap().push(line.to_string())
        })));
        Mutex::new(Vec::new())
    })
}

/// The lines printed so far that start with `tag`.
fn printed(tag: &str) -> Vec<String> {
    lines()
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.starts_with(tag))
        .cloned()
        .collect()
}

fn v(xs: &[f32]) -> Array {
    Array::from_vec(xs.to_vec(), &[xs.len()])
}

#[test]
fn prints_eagerly() {
    lines();
    debug_print!("eager: {} and {}", v(&[1.0, 2.5]), Array::scalar(3i32));
    assert_eq!(printed("eager:"), vec!["eager: [1.  2.5] and 3"]);
}

#[jit]
fn jitted_step(x: &Array, step: &Array) -> Array {
    let loss = (x * x).sum(None, false);
    debug_print!("jit: loss {} at step {}", loss, step);
    loss
}

#[test]
fn prints_inside_jit_once_per_call_with_the_run_values() {
    lines();
    for (i, s) in [1.0f32, 2.0].iter().enumerate() {
        let out = jitted_step(&v(&[*s, 1.0]), &Array::scalar(i as i32));
        out.block_until_ready();
    }
    assert_eq!(
        printed("jit:"),
        vec!["jit: loss 2.0 at step 0", "jit: loss 5.0 at step 1"]
    );
    let text = jitted_step::jit_site().last_stablehlo().unwrap();
    assert!(text.contains("jaxrs_host_callback"), "{text}");
}

#[test]
fn prints_each_example_under_vmap() {
    lines();
    let f = vmap(
        |x: Array| {
            debug_print!("vmap: x {}", x);
            &x + 1.0
        },
        0,
        0,
    );
    let out = f(Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]));
    assert_eq!(out.to_vec::<f32>(), vec![2.0, 3.0, 4.0, 5.0]);
    assert_eq!(printed("vmap:"), vec!["vmap: x [1. 2.]", "vmap: x [3. 4.]"]);
}

#[test]
fn prints_every_iteration_of_a_jitted_scan() {
    lines();
    let run = jit(|xs: Array| {
        let (total, _) = scan(
            |c: Array, x: Array| {
                let c = &c + &x;
                debug_print!("scan: carry {}", c);
                (c.clone(), c)
            },
            Array::scalar(0.0f32),
            xs,
        );
        total
    });
    let total = run.call(v(&[1.0, 2.0, 3.0]));
    assert_eq!(total.to_vec::<f32>(), vec![6.0]);
    assert_eq!(
        printed("scan:"),
        vec!["scan: carry 1.0", "scan: carry 3.0", "scan: carry 6.0"]
    );
}

#[test]
fn prints_the_primal_under_grad() {
    lines();
    let g = jit(grad(|x: Array| {
        debug_print!("grad: x {}", x);
        (&x * &x).sum(None, false)
    }));
    let dx = g.call(v(&[1.0, 2.0]));
    assert_eq!(dx.to_vec::<f32>(), vec![2.0, 4.0]);
    assert_eq!(printed("grad:"), vec!["grad: x [1. 2.]"]);
}

/// The NaN checker is process-wide: its tests run in a child process of their own so that
/// they do not stop the other tests' operations.
#[test]
fn debug_nans_names_the_op_and_line_in_a_jitted_function() {
    if std::env::var("JAXRS_DEBUG_NANS_CHILD").is_err() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "debug_nans_names_the_op_and_line_in_a_jitted_function",
                "--nocapture",
            ])
            .env("JAXRS_DEBUG_NANS_CHILD", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        return;
    }
    // Off: a NaN is returned silently.
    let f = jit(|x: Array| {
        let y = &x + 1.0;
        let z = y.log(); // the line the checker must name
        z * 2.0
    });
    let log_line = line!() - 3;
    assert!(f.call(v(&[-3.0])).to_vec::<f32>()[0].is_nan());

    jaxrs::config::set_debug_nans(true);
    assert!(jaxrs::config::debug_nans());
    // Fine values pass.
    assert_eq!(f.call(v(&[0.0])).to_vec::<f32>(), vec![0.0]);
    let err = try_run(|| f.call(v(&[-3.0]))).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, jaxrs::Error::FloatingPoint(_)), "{err:?}");
    assert!(
        msg.contains("invalid value (nan) encountered in log")
            && msg.contains(&format!("tests/debug.rs:{log_line}")),
        "{msg}"
    );
    // Eagerly too.
    let err = try_run(|| v(&[-1.0]).sqrt()).unwrap_err();
    assert!(err.to_string().contains("encountered in sqrt"), "{err}");
    jaxrs::config::set_debug_nans(false);
    assert!(f.call(v(&[-3.0])).to_vec::<f32>()[0].is_nan());
}

/// `JAXRS_DEBUG_NANS=1` turns the checker on from the environment (a child process, as above).
#[test]
fn debug_nans_from_the_environment() {
    if std::env::var("JAXRS_DEBUG_NANS").is_err() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "debug_nans_from_the_environment", "--nocapture"])
            .env("JAXRS_DEBUG_NANS", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        return;
    }
    assert!(jaxrs::config::debug_nans());
    let f = jit(|x: Array| (&x - 1.0).sqrt());
    let err = try_run(|| f.call(v(&[0.0]))).unwrap_err();
    assert!(err.to_string().contains("encountered in sqrt"), "{err}");
}
