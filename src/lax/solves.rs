//! `lax.custom_root` and `lax.custom_linear_solve`: a solver's answer, differentiated by the
//! implicit function theorem rather than through the solver's iterations.
//!
//! One difference from JAX, forced by Rust: JAX differentiates with respect to whatever `f`
//! (or `matvec`) closes over, by converting the closure. A Rust closure's captures cannot be
//! found that way, so the values to differentiate with respect to are passed explicitly as
//! `params` (any tree of arrays) and `f` takes them as its first argument; a capture gets no
//! gradient. Both are reverse-mode only (built on [`custom_vjp`](crate::custom_vjp)), where
//! JAX's also have forward mode.

use crate::{custom_vjp, stop_gradient, tree_map, vjp, Array, Tree};
use std::sync::Arc;

/// A linear solver as `custom_root`'s `tangent_solve` and `custom_linear_solve`'s `solve`
/// take it: `solve(g, y)` returns `x` with `g(x) = y`.
pub type LinearSolver<'a> = &'a dyn Fn(&Array) -> Array;

/// `lax.custom_root(f, initial_guess, solve, tangent_solve)`: `solve(|x| f(params, x),
/// initial_guess)`, a root of `f(params, ·)`, whose gradient with respect to `params` is
/// `-(∂f/∂params)ᵀ u` with `u = tangent_solve(v ↦ (∂f/∂x)ᵀ v, ct)`, as JAX's (no gradient
/// flows through `solve` or to `initial_guess`). See the module docs for `params`.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// // y with y² = x³, by Newton's method; dy/dx = 3x² / 2y.
/// let f = |x: &Array, y: &Array| y * y - x * x * x;
/// let newton = |g: &dyn Fn(&Array) -> Array, y0: &Array| {
///     let mut y = y0.clone();
///     for _ in 0..30 {
///         let d = (g(&(&y + 1e-4)) - g(&(&y - 1e-4))) / 2e-4;
///         y = &y - g(&y) / d;
///     }
///     y
/// };
/// let scalar_solve = |g: &dyn Fn(&Array) -> Array, y: &Array| y / g(&Array::ones(&[], DType::F64));
/// let sqrt_cubed = |x: Array| {
///     lax::custom_root(f, &x, &Array::ones(&[], DType::F64), newton, scalar_solve)
/// };
/// let x = Array::full(&[], 3.0, DType::F64);
/// assert!((sqrt_cubed(x.clone()).item::<f64>() - 27f64.sqrt()).abs() < 1e-9);
/// let dx = grad(sqrt_cubed)(x).item::<f64>();
/// assert!((dx - 27.0 / (2.0 * 27f64.sqrt())).abs() < 1e-9);
/// ```
#[track_caller]
pub fn custom_root<P: Tree + Clone + 'static>(
    f: impl Fn(&P, &Array) -> Array + Send + Sync + 'static,
    params: &P,
    initial_guess: &Array,
    solve: impl Fn(LinearSolver<'_>, &Array) -> Array,
    tangent_solve: impl Fn(LinearSolver<'_>, &Array) -> Array + Send + Sync + 'static,
) -> Array {
    let f = Arc::new(f);
    let fwd_f = f.clone();
    let rooted = custom_vjp(
        "custom_root",
        move |(p, x0): (P, Array)| {
            let x = stop_gradient(&solve(&|x: &Array| fwd_f(&p, x), &x0));
            (x.clone(), (p, x, x0))
        },
        move |(p, x, x0): (P, Array, Array), ct: Array| {
            // (∂f/∂x)ᵀ as a linear function, then u solves it against the cotangent.
            let (_, along_x) = vjp(|x: Array| f(&p, &x), &x);
            let u = tangent_solve(&|v: &Array| along_x.call(v), &ct);
            let (_, along_p) = vjp(|p: P| f(&p, &x), &p);
            let ct_p: P = along_p.call(&u);
            (tree_map(&ct_p, |g| -g), Array::zeros_like(&x0))
        },
    );
    rooted.call::<(P, Array), Array, (P, Array, Array)>((params.clone(), initial_guess.clone()))
}

/// `lax.custom_linear_solve(matvec, b, solve, transpose_solve, symmetric)`: `x =
/// solve(|v| matvec(params, v), b)` for a linear `matvec`, differentiated as the solution of
/// `A x = b` is: the cotangent of `b` is `transpose_solve(vᵀA, ct)` (`solve` itself when
/// `symmetric`), and that of `params` is `-(∂(A x)/∂params)ᵀ` of it, as JAX's. Without
/// `transpose_solve` and not `symmetric`, it is not reverse-differentiable (as in JAX: the
/// gradient stops with a message). See the module docs for `params`.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// // A diagonal system, solved elementwise.
/// let matvec = |d: &Array, v: &Array| d * v;
/// let d = Array::from_vec(vec![2.0f64, 4.0], &[2]);
/// let b = Array::from_vec(vec![1.0f64, 1.0], &[2]);
/// // The solver reads the diagonal off A·1.
/// let x = lax::custom_linear_solve(
///     matvec,
///     &d,
///     &b,
///     |a: &dyn Fn(&Array) -> Array, b: &Array| b / a(&Array::ones(&[2], DType::F64)),
///     None::<fn(&dyn Fn(&Array) -> Array, &Array) -> Array>,
///     true,
/// );
/// assert_eq!(x.to_vec::<f64>(), vec![0.5, 0.25]);
/// ```
#[track_caller]
pub fn custom_linear_solve<P: Tree + Clone + 'static, S, T>(
    matvec: impl Fn(&P, &Array) -> Array + Send + Sync + 'static,
    params: &P,
    b: &Array,
    solve: S,
    transpose_solve: Option<T>,
    symmetric: bool,
) -> Array
where
    S: Fn(LinearSolver<'_>, &Array) -> Array + Send + Sync + 'static,
    T: Fn(LinearSolver<'_>, &Array) -> Array + Send + Sync + 'static,
{
    let matvec = Arc::new(matvec);
    let solve = Arc::new(solve);
    let (fwd_matvec, fwd_solve) = (matvec.clone(), solve.clone());
    let solved = custom_vjp(
        "custom_linear_solve",
        move |(p, b): (P, Array)| {
            let x = stop_gradient(&fwd_solve(&|v: &Array| fwd_matvec(&p, v), &b));
            (x.clone(), (p, x))
        },
        move |(p, x): (P, Array), ct: Array| {
            let ct_b = if symmetric {
                solve(&|v: &Array| matvec(&p, v), &ct)
            } else {
                let Some(transpose_solve) = &transpose_solve else {
                    panic!(
                        "lax.custom_linear_solve: the gradient needs transpose_solve (or \
                         symmetric = true), as in JAX"
                    )
                };
                let (_, vec_mat) = vjp(|v: Array| matvec(&p, &v), &x);
                transpose_solve(&|v: &Array| vec_mat.call(v), &ct)
            };
            let (_, along_p) = vjp(|p: P| matvec(&p, &x), &p);
            let ct_p: P = along_p.call(&ct_b);
            (tree_map(&ct_p, |g| -g), ct_b)
        },
    );
    solved.call::<(P, Array), Array, (P, Array)>((params.clone(), b.clone()))
}
