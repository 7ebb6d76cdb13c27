//! A process may end while XLA programs it launched are still running: `main` returns (or
//! `std::process::exit` is called) without reading any result. Before the runtime awaited
//! in-flight work at exit, the CPU plugin's static destructors could run under its worker
//! threads and the process died with SIGSEGV now and then.
//!
//! The plugin's threads also first use statics in the middle of a program's first run (an
//! SPMD program over 8 devices does), so a process whose last act is the first run of a
//! sharded program is a case of its own: the README's pjit example crashed so in 4 of 60 runs.
//!
//! The test re-runs its own binary as the child (an environment variable selects the child's
//! part), many times, and wants every child to exit with status 0.

use jaxrs::prelude::*;
use jaxrs::{conv_general_dilated, Mesh, Padding, P};
use std::process::Command;

const CHILD: &str = "JAXRS_EXIT_SAFETY_CHILD";
const RUNS: usize = 48;

/// The children's parts, taken in turn.
const MODES: [&str; 3] = ["return", "exit", "sharded-first-run"];

#[jit]
fn matmul_chain(a: &Array) -> Array {
    let mut x = a.clone();
    for _ in 0..6 {
        x = x.matmul(a).tanh();
    }
    x
}

#[jit(in_shardings = (P!["dp", None], P![None, "mp"]), out_shardings = P!["dp", "mp"])]
fn sharded_layer(x: &Array, w: &Array) -> Array {
    let h = x.matmul(w).tanh();
    h.matmul(w).tanh()
}

/// Launches sizeable programs (one device and all 8) and returns without awaiting any.
fn launch_and_leave(exit_directly: bool) {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    let a = Array::ones(&[384, 384], DType::F32) / 384.0;
    let chained = matmul_chain(&a);

    let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"]).unwrap();
    let _m = mesh.enter();
    let x = Array::ones(&[256, 512], DType::F32);
    let w = Array::ones(&[512, 512], DType::F32) / 512.0;
    let sharded = sharded_layer(&x, &w);

    let images = Array::ones(&[16, 32, 32, 16], DType::F32);
    let kernel = Array::ones(&[3, 3, 16, 32], DType::F32) / 144.0;
    let conv = jit(|(x, k): (Array, Array)| {
        conv_general_dilated(
            &x,
            &k,
            &[1, 1],
            Padding::Same,
            &[],
            &[],
            Some(("NHWC", "HWIO", "NHWC")),
            1,
        )
    })
    .call((images, kernel));

    if exit_directly {
        std::process::exit(0);
    }
    // Dropped unread: the buffers are released while their programs may still run.
    drop((chained, sharded, conv));
}

/// The README's pjit example: the last thing the process does is launch a sharded program
/// for the first time, with no compile after it.
fn first_sharded_run_and_leave() {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"]).unwrap();
    let _m = mesh.enter();
    let x = Array::ones(&[8, 16], DType::F32);
    let w = Array::ones(&[16, 16], DType::F32) / 16.0;
    let y = sharded_layer(&x, &w);
    assert_eq!(y.addressable_shards()[0].data.shape(), &[4, 4]);
}

#[test]
fn a_process_that_ends_with_programs_in_flight_exits_cleanly() {
    if let Some(mode) = std::env::var_os(CHILD) {
        match mode.to_str() {
            Some("sharded-first-run") => first_sharded_run_and_leave(),
            Some(mode) => launch_and_leave(mode == "exit"),
            None => panic!("{CHILD} is not UTF-8"),
        }
        return;
    }
    let mut failures = Vec::new();
    for run in 0..RUNS {
        let mode = MODES[run % MODES.len()];
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_process_that_ends_with_programs_in_flight_exits_cleanly",
                "--test-threads=1",
                "--quiet",
            ])
            .env(CHILD, mode)
            .output()
            .unwrap();
        if !out.status.success() {
            failures.push(format!(
                "run {run} ({mode}): {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {RUNS} children failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
