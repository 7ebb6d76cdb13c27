//! A panic in user code leaves no poisoned state behind: after a failing call (a shape
//! mismatch) is caught, the same function works again, on the same thread and from several
//! threads at once. Test suites, servers and REPLs catch such panics and go on.

use jaxrs::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

const THREADS: usize = 8;

fn arr(v: &[f32]) -> Array {
    Array::from_slice(v, &[v.len()])
}

/// Runs `f`, which must panic, and returns its message.
fn failure(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("must panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// `good(t)` on this thread, then on [`THREADS`] threads at once; each checks its own result.
fn good_calls_everywhere(good: impl Fn(usize) + Sync) {
    good(0);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let good = &good;
            s.spawn(move || good(t));
        }
    });
    good(THREADS);
}

#[jit]
fn weighted_sum(x: &Array, w: &Array) -> Array {
    (x * w).sum(None, false)
}

#[test]
fn a_failed_trace_leaves_the_jit_cache_usable() {
    let msg = failure(|| drop(weighted_sum(&arr(&[1.0, 2.0]), &arr(&[1.0, 2.0, 3.0]))));
    assert!(msg.contains("f32[2]") && msg.contains("f32[3]"), "{msg}");
    assert_eq!(weighted_sum::jit_site().cache_size(), 0, "no half entry");
    good_calls_everywhere(|t| {
        let x = arr(&[1.0, 2.0, t as f32]);
        let got = weighted_sum(&x, &arr(&[1.0, 1.0, 2.0])).item::<f32>();
        assert_eq!(got, 3.0 + 2.0 * t as f32);
    });
    assert_eq!(weighted_sum::jit_site().cache_misses(), 1);
    // Failing again after a success leaves the compiled entry in place.
    let msg = failure(|| drop(weighted_sum(&arr(&[1.0, 2.0]), &arr(&[1.0, 2.0, 3.0]))));
    assert!(msg.contains("f32[2]"), "{msg}");
    assert_eq!(weighted_sum::jit_site().cache_size(), 1);
    assert_eq!(
        weighted_sum(&arr(&[2.0, 2.0, 2.0]), &arr(&[1.0, 1.0, 1.0])).item::<f32>(),
        6.0
    );
}

#[test]
fn a_failed_trace_leaves_a_jitted_closure_usable() {
    let f = jit(|(x, w): (Array, Array)| (&x * &w).sum(None, false));
    let msg = failure(|| drop::<Array>(f.call((arr(&[1.0, 2.0]), arr(&[1.0, 2.0, 3.0])))));
    assert!(msg.contains("f32[2]"), "{msg}");
    good_calls_everywhere(|t| {
        let got: Array = f.call((arr(&[t as f32, 1.0]), arr(&[2.0, 3.0])));
        assert_eq!(got.item::<f32>(), 2.0 * t as f32 + 3.0);
    });
}

/// A trace inside another one fails: the outer trace's frame is popped with the inner's.
#[test]
fn a_failed_jit_inside_grad_unwinds_both_traces() {
    let loss = |w: Array, x: &Array| weighted_sum(x, &w);
    let msg = failure(|| {
        drop(grad(|w: Array| loss(w, &arr(&[1.0, 2.0, 3.0])))(arr(&[
            1.0, 2.0,
        ])))
    });
    assert!(msg.contains("f32[2]") && msg.contains("f32[3]"), "{msg}");
    good_calls_everywhere(|t| {
        let x = arr(&[1.0, t as f32]);
        let g = grad(|w: Array| loss(w, &x))(arr(&[5.0, 5.0]));
        assert_eq!(g.to_vec::<f32>(), vec![1.0, t as f32]);
    });
}

#[test]
fn a_failed_grad_trace_leaves_grad_usable() {
    let f = |(w, x): (Array, Array)| (&w * &x).sum(None, false);
    let msg = failure(|| drop(grad(f)((arr(&[1.0, 2.0]), arr(&[1.0, 2.0, 3.0])))));
    assert!(msg.contains("f32[2]") && msg.contains("f32[3]"), "{msg}");
    good_calls_everywhere(|t| {
        let (gw, gx) = grad(f)((arr(&[1.0, 2.0]), arr(&[t as f32, 4.0])));
        assert_eq!(gw.to_vec::<f32>(), vec![t as f32, 4.0]);
        assert_eq!(gx.to_vec::<f32>(), vec![1.0, 2.0]);
    });
}

#[test]
fn a_failed_vmap_trace_leaves_vmap_usable() {
    let w = arr(&[1.0, 2.0, 3.0]);
    let dot = |x: Array| (&x * &w).sum(None, false);
    let rows = |n: usize, k: usize, t: f32| {
        Array::from_vec((0..n * k).map(|i| i as f32 + t).collect(), &[n, k])
    };
    let msg = failure(|| drop(vmap(dot, 0, 0)(rows(2, 2, 0.0))));
    assert!(msg.contains("f32[2]") && msg.contains("f32[3]"), "{msg}");
    good_calls_everywhere(|t| {
        let got = vmap(dot, 0, 0)(rows(2, 3, t as f32)).to_vec::<f32>();
        let t = t as f32;
        assert_eq!(got, vec![8.0 + 6.0 * t, 26.0 + 6.0 * t]);
    });
}

#[test]
fn a_failed_scan_trace_leaves_scan_usable() {
    let step = |h: Array, x: Array| {
        let h = &h + &x;
        (h.clone(), h)
    };
    let msg = failure(|| {
        drop(scan(
            step,
            arr(&[0.0, 0.0]),
            Array::ones(&[4, 3], DType::F32),
        ))
    });
    assert!(msg.contains("f32[2]") && msg.contains("f32[3]"), "{msg}");
    good_calls_everywhere(|t| {
        let xs = Array::full(&[4, 2], t as f64, DType::F32);
        let (h, hs) = scan(step, arr(&[0.0, 1.0]), xs);
        let t = t as f32;
        assert_eq!(h.to_vec::<f32>(), vec![4.0 * t, 1.0 + 4.0 * t]);
        assert_eq!(hs.shape(), &[4, 2]);
    });
}

#[test]
fn a_failed_eager_op_leaves_eager_ops_usable() {
    let msg = failure(|| drop(&arr(&[1.0, 2.0]) + &arr(&[1.0, 2.0, 3.0])));
    assert!(msg.contains("add") && msg.contains("f32[3]"), "{msg}");
    good_calls_everywhere(|t| {
        let got = (&arr(&[1.0, 2.0]) * t as f32).to_vec::<f32>();
        assert_eq!(got, vec![t as f32, 2.0 * t as f32]);
    });
}

/// A panic in the user's own code (not an op) in the middle of a trace.
#[test]
fn a_user_panic_mid_trace_pops_the_trace() {
    #[jit(static = fail)]
    fn checked(x: &Array, fail: bool) -> Array {
        let y = x * 2.0;
        if fail {
            panic!("the user's own check failed");
        }
        y
    }
    let msg = failure(|| drop(checked(&arr(&[1.0]), true)));
    assert!(msg.contains("the user's own check"), "{msg}");
    // Not tracing any more: an eager op runs, a jitted call compiles.
    assert_eq!((&arr(&[1.0]) + 1.0).to_vec::<f32>(), vec![2.0]);
    good_calls_everywhere(|t| {
        assert_eq!(
            checked(&arr(&[t as f32]), false).to_vec::<f32>(),
            vec![2.0 * t as f32]
        );
    });
}
