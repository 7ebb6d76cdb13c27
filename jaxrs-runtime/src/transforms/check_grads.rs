//! `check_grads`: forward and reverse mode against central finite differences, like
//! `jax.test_util.check_grads`.

use crate::core::array::Array;
use crate::dtype::DType;
use crate::transforms::grad::{jvp, vjp};
use crate::transforms::traced::rebuild;
use crate::tree::Tree;
use std::cell::Cell;

/// Which modes [`check_grads_with`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modes {
    Forward,
    Reverse,
    Both,
}

type FlatFn<'a> = &'a dyn Fn(Vec<Array>) -> Vec<Array>;

thread_local! {
    static SEED: Cell<u64> = const { Cell::new(0x9e37_79b9_7f4a_7c15) };
}

/// A deterministic random array like `x` (uniform in [-1, 1]).
fn random_like(x: &Array) -> Array {
    let values: Vec<f64> = (0..x.size())
        .map(|_| {
            SEED.with(|s| {
                let mut v = s.get();
                v ^= v << 13;
                v ^= v >> 7;
                v ^= v << 17;
                s.set(v);
                ((v >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            })
        })
        .collect();
    Array::from_f64s(&values, x.shape(), x.dtype())
}

fn inner(a: &[Array], b: &[Array]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            x.to_f64_vec()
                .iter()
                .zip(y.to_f64_vec())
                .map(|(p, q)| p * q)
                .sum::<f64>()
        })
        .sum()
}

/// Default tolerance and step for a dtype (JAX's defaults).
fn tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F64 => (1e-5, 1e-4),
        DType::F32 => (2e-3, 1e-2),
        _ => (1e-1, 1e-1),
    }
}

fn assert_close(what: &str, got: &[Array], want: &[Array], tol: f64) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        for (j, (a, b)) in g.to_f64_vec().iter().zip(w.to_f64_vec()).enumerate() {
            if (a - b).abs() > tol * (1.0 + b.abs()) {
                panic!("check_grads: {what}: output {i} element {j}: {a} vs {b} (tolerance {tol})");
            }
        }
    }
}

fn check_jvp(f: FlatFn, x: &[Array], tol: f64, eps: f64) {
    let v: Vec<Array> = x.iter().map(random_like).collect();
    let (_, tangent) = jvp(f, &x.to_vec(), &v);
    let numeric = numeric_jvp(f, x, &v, eps);
    assert_close(
        "forward mode vs finite differences",
        &tangent,
        &numeric,
        tol,
    );
}

/// `f`'s directional derivative along `v` by central differences.
fn numeric_jvp(f: FlatFn, x: &[Array], v: &[Array], eps: f64) -> Vec<Array> {
    let plus: Vec<Array> = x.iter().zip(v).map(|(a, d)| a + d * eps).collect();
    let minus: Vec<Array> = x.iter().zip(v).map(|(a, d)| a - d * eps).collect();
    f(plus)
        .iter()
        .zip(f(minus))
        .map(|(p, m)| (p - m) / (2.0 * eps))
        .collect()
}

/// Reverse mode by `<vjp(u), v> = <u, J v>`, with `J v` from finite differences and, when
/// forward mode is checked too, from `jvp`.
fn check_vjp(f: FlatFn, x: &[Array], tol: f64, eps: f64, with_jvp: bool) {
    let v: Vec<Array> = x.iter().map(random_like).collect();
    let (y, pullback) = vjp(f, &x.to_vec());
    let u: Vec<Array> = y.iter().map(random_like).collect();
    let w: Vec<Array> = pullback.call(&u);
    let lhs = inner(&w, &v);
    let numeric = inner(&u, &numeric_jvp(f, x, &v, eps));
    if (lhs - numeric).abs() > tol * (1.0 + numeric.abs()) {
        panic!("check_grads: reverse mode vs finite differences: <vjp(u), v> = {lhs} but <u, J v> = {numeric} (tolerance {tol})");
    }
    if with_jvp {
        let exact = inner(&u, &jvp(f, &x.to_vec(), &v).1);
        if (lhs - exact).abs() > tol * (1.0 + exact.abs()) {
            panic!("check_grads: reverse mode vs forward mode: <vjp(u), v> = {lhs} but <u, jvp(v)> = {exact} (tolerance {tol})");
        }
    }
}

fn check_flat(f: FlatFn, x: &[Array], order: usize, modes: Modes) {
    // The least precise float among inputs and outputs sets the tolerance.
    let outputs = f(x.to_vec());
    let (tol, eps) = x
        .iter()
        .chain(&outputs)
        .map(Array::dtype)
        .filter(|d| d.is_float())
        .map(tolerance)
        .fold((0.0, 0.0), |(t, e), (t2, e2)| {
            (f64::max(t, t2), f64::max(e, e2))
        });
    if modes != Modes::Reverse {
        check_jvp(f, x, tol, eps);
    }
    if modes != Modes::Forward {
        check_vjp(f, x, tol, eps, modes == Modes::Both);
    }
    if order > 1 {
        if modes != Modes::Reverse {
            let v: Vec<Array> = x.iter().map(random_like).collect();
            let derivative = |p: Vec<Array>| jvp(f, &p, &v).1;
            check_flat(&derivative, x, order - 1, modes);
        }
        if modes != Modes::Forward {
            let u: Vec<Array> = outputs.iter().map(random_like).collect();
            let derivative = |p: Vec<Array>| vjp(f, &p).1.call(&u);
            check_flat(&derivative, x, order - 1, modes);
        }
    }
}

/// Checks `f`'s derivatives at `args` up to `order`, in forward and reverse mode: forward mode
/// against central finite differences along a random direction, reverse mode by
/// `<vjp(u), v> = <u, J v>` against finite differences and against forward mode, then the same for the derivative functions themselves
/// when `order > 1`. Panics with the failing comparison. Use float64 inputs for tight checks.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![0.5f64, -1.0, 2.0], &[3]);
/// jaxrs::check_grads(|x: Array| x.tanh().sum(None, false), &x, 2);
/// ```
pub fn check_grads<A: Tree, R: Tree>(f: impl Fn(A) -> R, args: &A, order: usize) {
    check_grads_with(f, args, order, Modes::Both)
}

/// [`check_grads`] in the given modes only (e.g. forward for a function with a
/// reverse-mode-only rule, reverse for one that is not forward-differentiable).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{check_grads_with, Modes};
///
/// // A norm has a custom reverse-mode rule only: check it in reverse mode.
/// let x = Array::from_vec(vec![3.0f64, -4.0], &[2]);
/// check_grads_with(|x: Array| x.norm(), &x, 1, Modes::Reverse);
/// ```
pub fn check_grads_with<A: Tree, R: Tree>(
    f: impl Fn(A) -> R,
    args: &A,
    order: usize,
    modes: Modes,
) {
    let (leaves, def) = args.flatten();
    let flat = |xs: Vec<Array>| -> Vec<Array> {
        let a: A = rebuild("check_grads", &def, xs);
        f(a).flatten().0
    };
    check_flat(&flat, &leaves, order, modes);
}
