//! optax's linear algebra helpers (`optax.power_iteration`).

use super::global_norm;
use super::linesearch::{tree_scale, tree_vdot};
use crate::{random, tree_map2, while_loop, Array, Tree};

/// `x / |x|` over the whole tree (optax's `_normalize_tree`).
fn normalize_tree<P: Tree>(x: &P) -> P {
    tree_scale(&(1.0f64 / global_norm(x)), x)
}

/// The dominant eigenvalue and its unit eigenvector of a symmetric operator given by its
/// matrix-vector product `mvp` on trees like `v0` (`optax.power_iteration` with a callable
/// `matrix`): iterates `z = mvp(v / |v|)`, the eigenvalue estimate `<v, z>`, until
/// `|z - eig v| / |eig| < error_tolerance` or `num_iters` iterations (optax's defaults: 100
/// and `1e-6`). A [`while_loop`], so it runs under jit. See [`power_iteration`] for a matrix.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // diag(1, 3): eigenvalue 3, eigenvector (0, ±1).
/// let mvp = |v: &Array| v * Array::from_vec(vec![1.0f32, 3.0], &[2]);
/// let v0 = Array::from_vec(vec![1.0f32, 1.0], &[2]);
/// let (eig, v) = jaxrs::optim::power_iteration_fn(mvp, &v0, 100, 1e-6);
/// assert!((eig.item::<f32>() - 3.0).abs() < 1e-4);
/// assert!(v.to_vec::<f32>()[0].abs() < 1e-3);
/// ```
pub fn power_iteration_fn<P: Tree>(
    mvp: impl Fn(&P) -> P,
    v0: &P,
    num_iters: i32,
    error_tolerance: f64,
) -> (Array, P) {
    let (leaves, _) = v0.flatten();
    let dtype = leaves
        .first()
        .expect("power_iteration: v0 needs a leaf")
        .dtype();
    let v0 = normalize_tree(v0);
    let z0 = mvp(&v0);
    let init = (v0, z0, Array::full(&[], 0.0, dtype), Array::scalar(0i32));
    let (_, z, eig, _) = while_loop(
        |(v, z, eig, iter_num): &(P, P, Array, Array)| {
            let residual = tree_map2(z, &tree_scale(eig, v), |a, b| a - b);
            let converged = (global_norm(&residual) / eig).abs().lt(error_tolerance);
            converged.logical_not().logical_and(iter_num.lt(num_iters))
        },
        |(_, z, _, iter_num): (P, P, Array, Array)| {
            let v = normalize_tree(&z);
            let z = mvp(&v);
            let eig = tree_vdot(&v, &z).astype(dtype);
            (v, z, eig, iter_num + 1)
        },
        init,
    );
    (eig, normalize_tree(&z))
}

/// [`power_iteration_fn`] for a square `matrix` (`optax.power_iteration` with an array):
/// the product is `matrix @ v`, and without `v0` the start is uniform in `[-1, 1]` drawn
/// with `key` (default `random::key(0)`, optax's `jax.random.PRNGKey(0)`), so the result is
/// optax's.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let m = Array::from_vec(vec![2.0f32, 1.0, 1.0, 2.0], &[2, 2]);
/// let (eig, _v) = jaxrs::optim::power_iteration(&m, None, 100, 1e-6, None);
/// assert!((eig.item::<f32>() - 3.0).abs() < 1e-4);
/// ```
pub fn power_iteration(
    matrix: &Array,
    v0: Option<&Array>,
    num_iters: i32,
    error_tolerance: f64,
    key: Option<&Array>,
) -> (Array, Array) {
    let v0 = match v0 {
        Some(v) => v.clone(),
        None => {
            let key = key.cloned().unwrap_or_else(|| random::key(0));
            let n = *matrix.shape().last().expect("power_iteration: a matrix");
            random::uniform_range(&key, &[n], matrix.dtype(), -1.0, 1.0)
        }
    };
    power_iteration_fn(
        |v: &Array| matrix.matmul(v),
        &v0,
        num_iters,
        error_tolerance,
    )
}
