//! `check_grads`: forward and reverse mode against central finite differences, like
//! `jax.test_util.check_grads`.

use crate::autodiff::{jvp, vjp};
use crate::tree::{try_tree_unflatten, Tree};
use crate::{Array, DType};
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
    a.iter().zip(b).map(|(x, y)| x.to_f64_vec().iter().zip(y.to_f64_vec()).map(|(p, q)| p * q).sum::<f64>()).sum()
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
    let plus: Vec<Array> = x.iter().zip(&v).map(|(a, d)| a + d * eps).collect();
    let minus: Vec<Array> = x.iter().zip(&v).map(|(a, d)| a - d * eps).collect();
    let numeric: Vec<Array> = f(plus).iter().zip(f(minus)).map(|(p, m)| (p - m) / (2.0 * eps)).collect();
    assert_close("forward mode vs finite differences", &tangent, &numeric, tol);
}

fn check_vjp(f: FlatFn, x: &[Array], tol: f64) {
    let v: Vec<Array> = x.iter().map(random_like).collect();
    let (y, pullback) = vjp(f, &x.to_vec());
    let u: Vec<Array> = y.iter().map(random_like).collect();
    let w: Vec<Array> = pullback.call(&u);
    let (_, t) = jvp(f, &x.to_vec(), &v);
    let (lhs, rhs) = (inner(&w, &v), inner(&u, &t));
    if (lhs - rhs).abs() > tol * (1.0 + rhs.abs()) {
        panic!("check_grads: reverse mode fails <vjp(u), v> = <u, jvp(v)>: {lhs} vs {rhs} (tolerance {tol})");
    }
}

fn check_flat(f: FlatFn, x: &[Array], order: usize, modes: Modes) {
    let dtype = x.iter().map(Array::dtype).find(|d| d.is_float()).unwrap_or(DType::F32);
    let (tol, eps) = tolerance(dtype);
    if modes != Modes::Reverse {
        check_jvp(f, x, tol, eps);
    }
    if modes != Modes::Forward {
        check_vjp(f, x, tol);
    }
    if order > 1 {
        if modes != Modes::Reverse {
            let v: Vec<Array> = x.iter().map(random_like).collect();
            let derivative = |p: Vec<Array>| jvp(f, &p, &v).1;
            check_flat(&derivative, x, order - 1, modes);
        }
        if modes != Modes::Forward {
            let u: Vec<Array> = f(x.to_vec()).iter().map(random_like).collect();
            let derivative = |p: Vec<Array>| vjp(f, &p).1.call(&u);
            check_flat(&derivative, x, order - 1, modes);
        }
    }
}

/// Checks `f`'s derivatives at `args` up to `order`, in forward and reverse mode: forward mode
/// against central finite differences along a random direction, reverse mode against forward
/// mode by `<vjp(u), v> = <u, jvp(v)>`, then the same for the derivative functions themselves
/// when `order > 1`. Panics with the failing comparison. Use float64 inputs for tight checks.
///
/// ```ignore
/// check_grads(|x: Array| x.tanh().sum(None, false), &x, 2);
/// ```
pub fn check_grads<A: Tree, R: Tree>(f: impl Fn(A) -> R, args: &A, order: usize) {
    check_grads_with(f, args, order, Modes::Both)
}

/// [`check_grads`] in the given modes only (e.g. forward for a function with a
/// reverse-mode-only rule, reverse for one that is not forward-differentiable).
pub fn check_grads_with<A: Tree, R: Tree>(f: impl Fn(A) -> R, args: &A, order: usize, modes: Modes) {
    let (leaves, def) = args.flatten();
    let flat = |xs: Vec<Array>| -> Vec<Array> {
        let a: A = try_tree_unflatten(&def, xs).unwrap_or_else(|e| panic!("check_grads: {e}"));
        f(a).flatten().0
    };
    check_flat(&flat, &leaves, order, modes);
}
