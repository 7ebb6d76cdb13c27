//! Shapes too large to exist stop at the user's line as `Error::ShapeTooLarge` (returned by
//! `try_run`), before XLA sees them: XLA's int64 sizes overflow at 2^63 bytes and it throws a
//! C++ exception out of its compiler, which aborts the process. And arrays filled with one
//! value are built where they live, with one copy at the peak.

use jaxrs::prelude::*;
use std::process::Command;

/// The error `f` stops with, which must be `ShapeTooLarge`, as its message.
fn shape_error(f: impl FnOnce() -> Array) -> String {
    match try_run(f) {
        Err(jaxrs::Error::ShapeTooLarge(message)) => message,
        Err(other) => panic!("expected ShapeTooLarge, got {other:?}"),
        Ok(x) => panic!(
            "expected ShapeTooLarge, got an array of shape {:?}",
            x.shape()
        ),
    }
}

#[test]
fn an_eager_broadcast_to_2_to_63_bytes_is_an_error_not_an_abort() {
    let x = Array::scalar(1.0f32);
    let message = shape_error(|| x.broadcast_to(&[1 << 31, 1 << 31]));
    assert!(
        message.starts_with(
            "broadcast_in_dim: f32[2147483648,2147483648] would take more than 2^64 bytes"
        ),
        "{message}"
    );
    assert!(
        message.contains("more than the 2^48 any device can address"),
        "{message}"
    );
    assert!(
        message.contains("tests/huge_shapes.rs:"),
        "names the user's line: {message}"
    );
    // The engine goes on working after the refusal.
    assert_eq!(x.broadcast_to(&[3]).to_vec::<f32>(), vec![1.0; 3]);
}

#[test]
fn a_traced_shape_past_the_device_limit_is_an_error_before_xla_compiles_it() {
    let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    let huge = jit(|x: Array| {
        x.reshape([1, 2])
            .broadcast_to(&[1 << 36, 1 << 24, 2])
            .sum(None, false)
    });
    let message = shape_error(|| huge.call(x.clone()));
    assert!(
        message.contains(
            "broadcast_in_dim: f32[68719476736,16777216,2] would take 9223372036854775808 bytes"
        ),
        "{message}"
    );
    assert!(message.contains("huge_shapes.rs"), "{message}");
    let ok = jit(|x: Array| x.broadcast_to(&[4, 2]).sum(None, false));
    assert_eq!(ok.call(x).item::<f32>(), 12.0);
}

#[test]
fn reshaping_an_empty_array_to_a_shape_whose_count_wraps_is_refused() {
    // 2^32 * 2^32 wraps to 0 in 64 bits: an unchecked product let this pass for the empty
    // array's 0 elements (release) or panicked with "attempt to multiply with overflow"
    // and no user line (debug).
    let empty = Array::zeros(&[0], DType::F32);
    let message = shape_error(|| empty.reshape([1i64 << 32, 1 << 32]));
    assert!(
        message.starts_with(
            "reshape: f32[4294967296,4294967296] has more elements than a 64-bit count holds"
        ),
        "{message}"
    );
    assert!(message.contains("huge_shapes.rs"), "{message}");
    assert_eq!(empty.reshape([0, 5]).shape(), &[0, 5]);
}

#[test]
fn full_of_an_impossible_shape_is_an_error_naming_it() {
    let message = shape_error(|| Array::zeros(&[1 << 40, 1 << 40], DType::F64));
    assert!(
        message.starts_with("Array::full: f64[1099511627776,1099511627776] has more elements"),
        "{message}"
    );
    assert!(message.contains("huge_shapes.rs"), "{message}");
    let message = shape_error(|| Array::ones(&[usize::MAX, 2], DType::F32));
    assert!(
        message.contains("more elements than a 64-bit count holds"),
        "{message}"
    );
}

#[test]
fn from_slice_with_a_wrapping_shape_names_it() {
    let data = [0.0f32; 0];
    let message = std::panic::catch_unwind(|| Array::from_slice(&data, &[1 << 32, 1 << 32]))
        .expect_err("a shape of 2^64 elements does not fit 0 values");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("do not fill shape [4294967296, 4294967296] (more than 2^64 elements)"),
        "{message}"
    );
}

const CHILD: &str = "JAXRS_HUGE_SHAPES_CHILD";

/// A field of `/proc/self/status` in bytes (`VmRSS`, `VmHWM`).
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .expect("the field");
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// In a fresh process (the peak is per process): the peak resident memory that making a
/// 1 GiB array of zeros adds.
fn child_peak_of_a_1gib_zeros() {
    let warm = Array::zeros(&[1 << 17], DType::F32); // the client and the broadcast path, warm
    assert_eq!(warm.sum(None, false).item::<f32>(), 0.0);
    let before = status_bytes("VmHWM:");
    let zeros = Array::zeros(&[1 << 28], DType::F32);
    zeros.block_until_ready();
    let peak = status_bytes("VmHWM:") - before;
    assert_eq!(zeros.max(None, false).item::<f32>(), 0.0);
    assert_eq!(zeros.min(None, false).item::<f32>(), 0.0);
    println!("peak-growth {peak}");
}

#[test]
fn zeros_of_a_gibibyte_peaks_at_one_copy() {
    if std::env::var_os(CHILD).is_some() {
        return child_peak_of_a_1gib_zeros();
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "zeros_of_a_gibibyte_peaks_at_one_copy",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peak: u64 = stdout
        .lines()
        .find_map(|l| l.split("peak-growth ").nth(1))
        .unwrap_or_else(|| {
            panic!(
                "the child reports no peak: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .trim()
        .parse()
        .unwrap();
    let gib = 1u64 << 30;
    // One copy is 1 GiB; staging on the host first made it 2 GiB.
    assert!(
        peak < gib + gib / 4,
        "the peak grew by {peak} bytes for a 1 GiB array"
    );
    assert!(
        peak >= gib - gib / 16,
        "the zeros were not all written? the peak grew by {peak}"
    );
}

#[test]
fn host_built_constructors_check_their_shape_before_allocating() {
    let message = shape_error(|| Array::arange(0.0, f64::INFINITY, 1.0, DType::F32));
    assert!(
        message.starts_with("Array::arange: f32[18446744073709551615]"),
        "{message}"
    );
    let message = shape_error(|| Array::eye(1 << 33, DType::F32));
    assert!(
        message.starts_with("Array::eye: f32[8589934592,8589934592] has more elements"),
        "{message}"
    );
    let message = shape_error(|| Array::linspace(0.0, 1.0, 1 << 60, true, DType::F64));
    assert!(
        message.starts_with("Array::linspace: f64[1152921504606846976] would take"),
        "{message}"
    );
    assert!(message.contains("huge_shapes.rs"), "{message}");
    assert_eq!(Array::eye(2, DType::I32).to_vec::<i32>(), vec![1, 0, 0, 1]);
}
