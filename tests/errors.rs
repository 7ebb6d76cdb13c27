//! The messages of mistakes a user can make with arrays and transformations: each names what
//! is wrong, the types involved and the user's line.
//!
//! And what reaches stderr: nothing for a failure `try_run` returns, no XLA log lines unless
//! asked for (both read from a child process).

use jaxrs::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("must panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn v(n: usize) -> Array {
    Array::from_vec((0..n).map(|i| i as f32).collect(), &[n])
}

#[test]
fn grad_of_a_non_scalar_function() {
    let line = line!() + 1;
    let msg = message(|| drop(grad(|x: Array| x.sin())(v(3))));
    assert!(
        msg.contains("real scalar") && msg.contains("f32[3]"),
        "{msg}"
    );
    assert!(msg.contains(&format!("tests/errors.rs:{line}")), "{msg}");
}

#[test]
fn grad_with_respect_to_an_integer() {
    let ints = Array::from_vec(vec![1i32, 2], &[2]);
    let msg = message(|| drop(grad(|x: Array| x.astype(DType::F32).sum(None, false))(ints)));
    assert!(
        msg.contains("i32[2]") && msg.contains("floating-point"),
        "{msg}"
    );
}

#[test]
fn jvp_with_mismatched_tangents() {
    let msg = message(|| drop(jvp(|x: Array| x.sin(), &v(3), &v(4))));
    assert!(msg.contains("f32[4]") && msg.contains("f32[3]"), "{msg}");
}

#[test]
fn a_leaked_tracer() {
    let leaked = std::cell::RefCell::new(None);
    let _ = grad(|x: Array| {
        *leaked.borrow_mut() = Some(x.clone());
        x.sum(None, false)
    })(v(2));
    let leaked = leaked.into_inner().expect("kept");
    let msg = message(|| drop(grad(|y: Array| (&y * &leaked).sum(None, false))(v(2))));
    assert!(msg.contains("leaked") && msg.contains("f32[2]"), "{msg}");
}

#[test]
fn reading_a_traced_value() {
    let msg = message(|| {
        drop(grad(|x: Array| {
            Array::scalar(x.sum(None, false).item::<f32>())
        })(v(2)))
    });
    assert!(
        msg.contains("traced") && msg.contains("tests/errors.rs"),
        "{msg}"
    );
}

#[jit]
fn reads_inside_jit(x: &Array) -> Array {
    Array::from_vec(x.to_vec::<f32>(), &[2])
}

#[test]
fn reading_a_traced_value_names_the_method_the_transformation_and_what_to_do() {
    let line = line!() + 3;
    let msg = message(|| {
        drop(grad(|x: Array| {
            Array::scalar(x.sum(None, false).item::<f32>())
        })(v(2)));
    });
    assert!(
        msg.starts_with("item: this array is traced inside grad (f32[]), so it has no value yet"),
        "{msg}"
    );
    assert!(msg.contains(&format!("tests/errors.rs:{line}")), "{msg}");
    assert!(
        msg.contains("after the call") && msg.contains("`cond`") && msg.contains("`where_`"),
        "{msg}"
    );

    let msg = message(|| drop(reads_inside_jit(&v(2))));
    assert!(
        msg.starts_with("to_vec: this array is traced inside jit `reads_inside_jit` (f32[2])"),
        "{msg}"
    );

    let msg = message(|| drop(vmap(|x: Array| Array::scalar(x.item::<f32>()), 0, 0)(v(3))));
    assert!(
        msg.starts_with("item: this array is traced inside vmap (f32[])"),
        "{msg}"
    );

    let msg = message(|| {
        drop(scan(
            |c: Array, x: Array| (&c + x.to_f64_vec()[0], ()),
            Array::scalar(0.0f32),
            v(3),
        ))
    });
    assert!(
        msg.starts_with("to_f64_vec: this array is traced inside scan (f32[])"),
        "{msg}"
    );
}

#[test]
fn reading_a_leaked_tracer() {
    let leaked = std::cell::RefCell::new(None);
    let _ = grad(|x: Array| {
        *leaked.borrow_mut() = Some(x.clone());
        x.sum(None, false)
    })(v(2));
    let leaked = leaked.into_inner().expect("kept");
    let msg = message(|| drop(leaked.to_vec::<f32>()));
    assert!(
        msg.starts_with(
            "to_vec: this array is a tracer (f32[2]) of a transformation that has finished"
        ),
        "{msg}"
    );
}

#[test]
fn reading_the_wrong_dtype() {
    let msg = message(|| drop(v(2).to_vec::<i32>()));
    assert!(
        msg.contains("float32") && msg.contains("int32") && msg.contains("astype"),
        "{msg}"
    );
}

#[test]
fn matmul_with_mismatched_contraction() {
    let a = Array::zeros(&[2, 3], DType::F32);
    let b = Array::zeros(&[4, 5], DType::F32);
    let line = line!() + 1;
    let msg = message(|| drop(a.matmul(&b)));
    assert!(
        msg.contains("matmul") && msg.contains("f32[2,3]") && msg.contains("f32[4,5]"),
        "{msg}"
    );
    assert!(msg.contains(&format!("tests/errors.rs:{line}")), "{msg}");
}

#[test]
fn an_axis_out_of_range() {
    let msg = message(|| drop(v(3).sum(2, false)));
    assert!(
        msg.contains("axis 2") && msg.contains("rank 1") && msg.contains("tests/errors.rs"),
        "{msg}"
    );
}

#[test]
fn try_run_passes_programmer_errors_through() {
    // Shape mistakes are not environmental failures: try_run lets them unwind.
    let msg = message(|| drop(try_run(|| &v(2) + &v(3))));
    assert!(msg.contains("add") && msg.contains("f32[2]"), "{msg}");
    assert_eq!(
        try_run(|| (&v(2) + 1.0).to_vec::<f32>()).expect("fine"),
        vec![1.0, 2.0]
    );
}

#[test]
fn cond_speaks_of_cond_and_its_true_and_false_branches() {
    let pred = Array::scalar(true);
    let line = line!() + 2;
    let msg = message(|| {
        drop(cond(
            &pred,
            |x: Array| x.sum(None, false),
            |x: Array| x,
            v(3),
        ));
    });
    assert!(
        msg.starts_with(
            "cond: the true branch returns f32[] for output but the false branch returns f32[3]"
        ),
        "{msg}"
    );
    assert!(msg.contains(&format!("tests/errors.rs:{line}")), "{msg}");
    assert!(
        !msg.contains("switch") && !msg.contains("branch 1"),
        "{msg}"
    );

    let msg = message(|| {
        drop(cond(
            &pred,
            |x: Array| vec![x.clone(), x],
            |x: Array| vec![x],
            v(3),
        ))
    });
    assert!(
        msg.starts_with(
            "cond: the true branch returns vec![*, *] but the false branch returns vec![*]"
        ),
        "{msg}"
    );

    let msg = message(|| {
        drop(cond(
            &Array::scalar(1.0f32),
            |x: Array| x,
            |x: Array| x,
            v(3),
        ))
    });
    assert!(
        msg.starts_with("cond: the predicate must be a bool scalar, not f32[]"),
        "{msg}"
    );

    // switch keeps its own words.
    let same = |x: Array| x;
    let total = |x: Array| x.sum(None, false);
    let branches: [&dyn Fn(Array) -> Array; 2] = [&same, &total];
    let msg = message(|| drop(switch(&Array::scalar(0i32), &branches, v(3))));
    assert!(
        msg.starts_with("switch: branch 1 returns f32[] for output but branch 0 returns f32[3]"),
        "{msg}"
    );
}

/// Set in the child process of [`try_run_prints_nothing_for_the_failure_it_returns`].
const TRY_RUN_CHILD: &str = "JAXRS_TEST_TRY_RUN_CHILD";

/// Runs in a child process (whose stderr the test reads) with a broken environment: a bad
/// `JAXRS_CPU_DEVICES` makes creating the client fail.
#[test]
fn try_run_child() {
    if std::env::var_os(TRY_RUN_CHILD).is_none() {
        return;
    }
    let got = try_run(|| Array::ones(&[2], DType::F32));
    assert!(
        matches!(&got, Err(e) if e.to_string().contains("JAXRS_CPU_DEVICES")),
        "{:?}",
        got.map(|_| ())
    );
    // Outside try_run the same failure is a panic, printed as usual.
    let msg = message(|| drop(Array::ones(&[2], DType::F32)));
    assert!(msg.contains("JAXRS_CPU_DEVICES"), "{msg}");
    // So is a programmer error inside try_run.
    let msg = message(|| drop(try_run(|| panic!("a programmer error"))));
    assert_eq!(msg, "a programmer error");
    println!("child done");
}

/// Runs the test `name` of this binary alone in a child process with `env` added to (and the
/// logging variables removed from) this one's, and returns its stderr once it passed.
fn stderr_of_child(name: &str, env: &[(&str, &str)]) -> String {
    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"));
    child.args(["--exact", name, "--nocapture", "--test-threads=1"]);
    for var in ["RUST_LOG", "JAXRS_XLA_LOG", "TF_CPP_MIN_LOG_LEVEL"] {
        child.env_remove(var);
    }
    let out = child
        .envs(env.iter().copied())
        .output()
        .expect("the test binary runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains("child done"),
        "{stdout}\n{stderr}"
    );
    stderr.into_owned()
}

#[test]
fn try_run_prints_nothing_for_the_failure_it_returns() {
    let stderr = stderr_of_child(
        "try_run_child",
        &[(TRY_RUN_CHILD, "1"), ("JAXRS_CPU_DEVICES", "none")],
    );
    // Printed once: the panic outside try_run; the one try_run returned was silent.
    assert_eq!(
        stderr.matches("JAXRS_CPU_DEVICES must be").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("a programmer error"), "{stderr}");
}

/// Set in the child process of [`xla_logs_are_quiet_unless_asked`].
const XLA_LOG_CHILD: &str = "JAXRS_TEST_XLA_LOG_CHILD";

#[test]
fn xla_log_child() {
    if std::env::var_os(XLA_LOG_CHILD).is_none() {
        return;
    }
    assert_eq!((&v(2) + 1.0).to_vec::<f32>(), vec![1.0, 2.0]);
    println!("child done");
}

#[test]
fn xla_logs_are_quiet_unless_asked() {
    let quiet = stderr_of_child("xla_log_child", &[(XLA_LOG_CHILD, "1")]);
    assert!(
        !quiet.contains("absl") && !quiet.contains("I0000"),
        "{quiet}"
    );
    let asked = stderr_of_child(
        "xla_log_child",
        &[(XLA_LOG_CHILD, "1"), ("JAXRS_XLA_LOG", "1")],
    );
    assert!(asked.contains("cpu_device_count"), "{asked}");
}
