//! L-BFGS (`optax.scale_by_lbfgs`, `optax.lbfgs`).

use super::linesearch::{tree_add_scale, tree_scale, tree_vdot};
use super::{
    chain, safe_increment, scale_by_learning_rate, scale_by_zoom_linesearch, zero_count, Chain,
    GradientTransformation, InitialGuessStrategy, LearningRate, ScaleByLearningRate,
    ScaleByZoomLinesearch,
};
use crate::lax::{dynamic_index_in_dim, dynamic_update_index_in_dim};
use crate::{stop_gradient, tree_map, tree_map2, where_, Array, DType, Tree};

/// The state of [`scale_by_lbfgs`] (`optax.ScaleByLBFGSState`).
#[derive(Tree, Clone, Debug)]
pub struct ScaleByLbfgsState<P> {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
    /// The parameters of the last update.
    pub params: P,
    /// The updates (gradients) of the last update.
    pub updates: P,
    /// The last `memory_size` parameter differences, each leaf stacked on a new first axis
    /// (a ring buffer indexed by the count).
    pub diff_params_memory: P,
    /// The last `memory_size` update differences, stacked likewise.
    pub diff_updates_memory: P,
    /// The weights `1 / <dw, du>` of the rank-one terms, `[memory_size]`.
    pub weights_memory: Array,
}

/// L-BFGS's preconditioning; see [`scale_by_lbfgs`].
#[derive(Clone, Debug)]
pub struct ScaleByLbfgs {
    memory_size: usize,
    scale_init_precond: bool,
}

/// Multiplies the updates by L-BFGS's approximation of the inverse Hessian
/// (`optax.scale_by_lbfgs`; optax's defaults are `memory_size = 10`,
/// `scale_init_precond = true`): the two-loop recursion of Nocedal and Wright (Algorithm
/// 7.4) over the last `memory_size` differences of parameters and of updates, the initial
/// inverse Hessian `gamma I` with `gamma = <dw, du> / <du, du>` of the last pair when
/// `scale_init_precond` (at the first step `min(1, 1 / |u|)`), else `I`. The memory is
/// updated before preconditioning, so a line search after it sees the new direction. No sign
/// flip and no step size: see [`lbfgs`].
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::scale_by_lbfgs(5, true);
/// let params = Array::from_vec(vec![0.0f32, 0.0], &[2]);
/// let g = Array::from_vec(vec![0.3f32, 0.4], &[2]);
/// let (u, state) = opt.update(g.clone(), opt.init(&params), Some(&params));
/// // The first direction is the gradient, its norm capped at 1: here unchanged.
/// assert_eq!(u.to_vec::<f32>(), vec![0.3, 0.4]);
/// assert_eq!(state.count.item::<i32>(), 1);
/// ```
#[track_caller]
pub fn scale_by_lbfgs(memory_size: usize, scale_init_precond: bool) -> ScaleByLbfgs {
    assert!(memory_size >= 1, "scale_by_lbfgs: memory_size must be >= 1");
    ScaleByLbfgs {
        memory_size,
        scale_init_precond,
    }
}

/// `P u` for the L-BFGS inverse Hessian approximation `P` of the memory (optax's
/// `_precondition_by_lbfgs`): the two loops over the ring buffer, oldest pair last in the
/// first loop, unrolled over the (static) memory size.
fn precondition_by_lbfgs<P: Tree>(
    updates: &P,
    diff_params_memory: &P,
    diff_updates_memory: &P,
    weights_memory: &Array,
    identity_scale: &Array,
    memory_idx: &Array,
    memory_size: usize,
) -> P {
    let m = memory_size as i32;
    let indices: Vec<Array> = (0..m).map(|j| (memory_idx + j) % m).collect();
    let at = |tree: &P, idx: &Array| tree_map(tree, |x| dynamic_index_in_dim(x, idx, 0, false));
    let cast_like = |new: P, old: &P| tree_map2(&new, old, |n, o| n.astype(o.dtype()));
    let mut vec = tree_map(updates, Array::clone);
    let mut alphas = vec![None; memory_size];
    for j in (0..memory_size).rev() {
        let idx = &indices[j];
        let (dwi, dui) = (at(diff_params_memory, idx), at(diff_updates_memory, idx));
        let rho = dynamic_index_in_dim(weights_memory, idx, 0, false);
        let alpha = rho * tree_vdot(&dwi, &vec).real();
        let next = tree_add_scale(&vec, &(-&alpha), &dui);
        vec = cast_like(next, &vec);
        alphas[j] = Some(alpha);
    }
    let mut vec = tree_scale(identity_scale, &vec);
    for (idx, alpha) in indices.iter().zip(alphas) {
        let alpha = alpha.expect("every alpha computed");
        let (dwi, dui) = (at(diff_params_memory, idx), at(diff_updates_memory, idx));
        let rho = dynamic_index_in_dim(weights_memory, idx, 0, false);
        let beta = rho * tree_vdot(&dui, &vec).real();
        let next = tree_add_scale(&vec, &(alpha - beta), &dwi);
        vec = cast_like(next, &vec);
    }
    vec
}

/// optax's `jnp.zeros(memory_size)`: the default float dtype, which jaxrs takes from the
/// parameters (f64 parameters are those of an x64 run).
fn weights_dtype<P: Tree>(params: &P) -> DType {
    let (leaves, _) = params.flatten();
    match leaves.first().map(|l| l.real().dtype()) {
        Some(DType::F64) => DType::F64,
        _ => DType::F32,
    }
}

fn tree_sq_norm<P: Tree>(tree: &P) -> Array {
    let (leaves, _) = tree.flatten();
    leaves
        .iter()
        .map(|x| (x * x).sum(None, false))
        .fold(Array::weak_scalar(0i32), |acc, s| acc + s)
}

impl GradientTransformation for ScaleByLbfgs {
    type State<P: Tree> = ScaleByLbfgsState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByLbfgsState<P> {
        let m = self.memory_size;
        let stacked = || {
            tree_map(params, |p| {
                let mut shape = vec![m];
                shape.extend_from_slice(p.shape());
                Array::zeros(&shape, p.dtype())
            })
        };
        ScaleByLbfgsState {
            count: zero_count(),
            params: tree_map(params, Array::zeros_like),
            updates: tree_map(params, Array::zeros_like),
            diff_params_memory: stacked(),
            diff_updates_memory: stacked(),
            weights_memory: Array::zeros(&[m], weights_dtype(params)),
        }
    }

    #[track_caller]
    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByLbfgsState<P>,
        params: Option<&P>,
    ) -> (P, ScaleByLbfgsState<P>) {
        let params =
            params.expect("scale_by_lbfgs: update needs the parameters (pass Some(&params))");
        let m = self.memory_size as i32;
        let count = &state.count;
        let memory_idx = count % m;
        let prev_memory_idx = (count - 1) % m;
        let diff_params = tree_map2(params, &state.params, |a, b| a - b);
        let diff_updates = tree_map2(&updates, &state.updates, |a, b| a - b);
        let vdot_diff = tree_vdot(&diff_updates, &diff_params).real();
        let weight = where_(vdot_diff.eq(0.0), 0.0, 1.0f64 / &vdot_diff);
        let started = count.gt(0);
        let keep = |x: &Array| where_(&started, x, Array::zeros_like(x));
        let diff_params = tree_map(&diff_params, keep);
        let diff_updates = tree_map(&diff_updates, keep);
        let weight = keep(&weight);
        let write =
            |memory: &Array, y: &Array| dynamic_update_index_in_dim(memory, y, &prev_memory_idx, 0);
        let diff_params_memory = tree_map2(&state.diff_params_memory, &diff_params, write);
        let diff_updates_memory = tree_map2(&state.diff_updates_memory, &diff_updates, write);
        let weights_memory = write(
            &state.weights_memory,
            &weight.astype(state.weights_memory.dtype()),
        );

        let identity_scale = if self.scale_init_precond {
            let numerator = tree_vdot(&diff_updates, &diff_params).real();
            let denominator = tree_sq_norm(&diff_updates);
            let scale = where_(denominator.gt(0.0), numerator / &denominator, 1.0);
            let update_norm: Array = tree_sq_norm(&tree_map(&updates, stop_gradient)).sqrt();
            let capped_inv_norm: Array = (1.0f64 / &update_norm).minimum(1.0);
            where_(&started, &scale, &capped_inv_norm)
        } else {
            Array::weak_scalar(1.0)
        };

        let precond = precondition_by_lbfgs(
            &updates,
            &diff_params_memory,
            &diff_updates_memory,
            &weights_memory,
            &identity_scale,
            &memory_idx,
            self.memory_size,
        );
        let state = ScaleByLbfgsState {
            count: safe_increment(count),
            params: tree_map(params, Array::clone),
            updates,
            diff_params_memory,
            diff_updates_memory,
            weights_memory,
        };
        (precond, state)
    }
}

/// [`lbfgs`]'s type, for a line search `L`.
pub type Lbfgs<L = ScaleByZoomLinesearch> = Chain<(ScaleByLbfgs, ScaleByLearningRate, L)>;

/// The line search [`lbfgs`] uses by default in optax:
/// `scale_by_zoom_linesearch(20)` starting each search from a step of 1.
pub fn lbfgs_linesearch() -> ScaleByZoomLinesearch {
    scale_by_zoom_linesearch(20).initial_guess_strategy(InitialGuessStrategy::One)
}

/// L-BFGS (`optax.lbfgs`): [`scale_by_lbfgs`], then `-learning_rate` (`-1` when `None`, the
/// default, the step size being the line search's), then `linesearch` (optax's default is
/// [`lbfgs_linesearch`]; pass [`identity`](super::identity) for none, or
/// [`scale_by_backtracking_linesearch`](super::scale_by_backtracking_linesearch)). optax's
/// defaults are `memory_size = 10`, `scale_init_precond = true`.
///
/// With a line search, call
/// [`update_with_extra_args`](GradientTransformation::update_with_extra_args) with the
/// objective, and get the value and gradient from
/// [`value_and_grad_from_state`](super::value_and_grad_from_state), which reuses those the
/// line search computed.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::optim::{self, ExtraArgs, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// // Rosenbrock's function, minimum at (1, 1).
/// let f = |x: &Array| {
///     let (a, b) = (lax::index_in_dim(x, 0, 0, false), lax::index_in_dim(x, 1, 0, false));
///     (&b - &a * &a).powi(2) * 100.0 + (1.0f64 - &a).powi(2)
/// };
/// let opt = optim::lbfgs(None, 10, true, optim::lbfgs_linesearch());
/// let mut params = Array::from_vec(vec![-1.2f64, 1.0], &[2]);
/// let mut state = opt.init(&params);
/// let value_and_grad = optim::value_and_grad_from_state(f);
/// for _ in 0..50 {
///     let (value, grad) = value_and_grad(&params, &state);
///     let extra = ExtraArgs::new(&value, &grad, &f);
///     let (u, s) = opt.update_with_extra_args(grad.clone(), state, Some(&params), &extra);
///     params = optim::apply_updates(&params, &u);
///     state = s;
/// }
/// assert!(f(&params).item::<f64>() < 1e-10);
/// ```
pub fn lbfgs<L: GradientTransformation>(
    learning_rate: Option<LearningRate>,
    memory_size: usize,
    scale_init_precond: bool,
    linesearch: L,
) -> Lbfgs<L> {
    chain((
        scale_by_lbfgs(memory_size, scale_init_precond),
        scale_by_learning_rate(learning_rate.unwrap_or(LearningRate::Constant(1.0))),
        linesearch,
    ))
}
