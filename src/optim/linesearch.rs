//! optax's line searches (`scale_by_zoom_linesearch`, `scale_by_backtracking_linesearch`),
//! the extra arguments they read ([`ExtraArgs`]) and [`value_and_grad_from_state`].
//!
//! A line search needs the objective, not only its gradient: optax passes `value`, `grad` and
//! `value_fn` as keyword arguments of `update` (its `GradientTransformationExtraArgs`). In
//! jaxrs they travel in an [`ExtraArgs`] to
//! [`GradientTransformation::update_with_extra_args`]. optax's `**extra_args` (the data
//! `value_fn` takes besides the parameters) have no counterpart: `value_fn` is a Rust closure,
//! which captures its data.

use super::GradientTransformation;
use crate::lax::index_in_dim;
use crate::numpy::{stack, vdot};
use crate::{
    cond, tree_map, tree_map2, tree_paths, tree_unflatten, value_and_grad, where_, while_loop,
    Array, DType, Tree,
};

/// What a transformation may need beyond the updates (optax's `value=`, `grad=`,
/// `value_fn=` keyword arguments of `GradientTransformationExtraArgs.update`): the
/// objective's value at the current parameters, and for the line searches its gradient
/// there and the objective itself. `value_fn` captures whatever data the objective reads
/// (optax passes those as further keyword arguments).
pub struct ExtraArgs<'a, P> {
    /// The objective at the current parameters (a real scalar).
    pub value: &'a Array,
    /// Its gradient at the current parameters (the line searches need it).
    pub grad: Option<&'a P>,
    /// The objective: parameters to a real scalar (the line searches need it). It must be
    /// differentiable with [`value_and_grad`] and traceable (the line searches call it
    /// inside a [`while_loop`]).
    pub value_fn: Option<&'a dyn Fn(&P) -> Array>,
}

impl<P> Clone for ExtraArgs<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for ExtraArgs<'_, P> {}

impl<'a, P> ExtraArgs<'a, P> {
    /// All the extra arguments: `value` and `grad` at the current parameters, and
    /// `value_fn`.
    pub fn new(value: &'a Array, grad: &'a P, value_fn: &'a dyn Fn(&P) -> Array) -> Self {
        ExtraArgs {
            value,
            grad: Some(grad),
            value_fn: Some(value_fn),
        }
    }

    /// Only the objective's value, all [`scale_by_polyak`](super::scale_by_polyak) reads.
    pub fn value(value: &'a Array) -> Self {
        ExtraArgs {
            value,
            grad: None,
            value_fn: None,
        }
    }

    #[track_caller]
    fn grad_and_fn(&self, name: &str) -> (&'a P, &'a dyn Fn(&P) -> Array) {
        match (self.grad, self.value_fn) {
            (Some(grad), Some(value_fn)) => (grad, value_fn),
            _ => extra_args_needed(name),
        }
    }
}

/// `transformation` itself (`optax.with_extra_args_support`): every jaxrs
/// [`GradientTransformation`] takes [`ExtraArgs`] already, through
/// [`update_with_extra_args`](GradientTransformation::update_with_extra_args), which those
/// that need none ignore; optax wraps a transformation to give it that method.
///
/// ```
/// use jaxrs::optim::{self, ExtraArgs, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::with_extra_args_support(optim::sgd(0.5));
/// let g = Array::from_vec(vec![2.0f32], &[1]);
/// let value = Array::scalar(1.0f32);
/// let (u, _) = opt.update_with_extra_args(g.clone(), opt.init(&g), None, &ExtraArgs::value(&value));
/// assert_eq!(u.to_vec::<f32>(), vec![-1.0]);
/// ```
pub fn with_extra_args_support<T: GradientTransformation>(transformation: T) -> T {
    transformation
}

// ---------------------------------------------------------------------------------------
// Tree arithmetic as optax.tree does it.

/// `sum_leaves vdot(x, y)` (`optax.tree.vdot`, real parameters).
pub(crate) fn tree_vdot<P: Tree>(x: &P, y: &P) -> Array {
    let (xs, _) = x.flatten();
    let (ys, _) = y.flatten();
    xs.iter()
        .zip(&ys)
        .map(|(a, b)| vdot(a, b, None))
        .fold(Array::weak_scalar(0i32), |acc, v| acc + v)
}

/// `x + s * y` leaf by leaf (`optax.tree.add_scale`).
pub(crate) fn tree_add_scale<P: Tree>(x: &P, s: &Array, y: &P) -> P {
    tree_map2(x, y, |a, b| a + s * b)
}

/// `s * x` leaf by leaf (`optax.tree.scale`).
pub(crate) fn tree_scale<P: Tree>(s: &Array, x: &P) -> P {
    tree_map(x, |a| s * a)
}

/// `on_true` where `pred` (a bool scalar) holds, else `on_false` (`optax.tree.where`).
pub(crate) fn tree_where<P: Tree>(pred: &Array, on_true: &P, on_false: &P) -> P {
    tree_map2(on_true, on_false, |a, b| where_(pred, a, b))
}

/// The real dtype of the first leaf of `params`: the dtype of values and step sizes.
fn value_dtype<P: Tree>(params: &P) -> DType {
    let (leaves, _) = params.flatten();
    leaves
        .first()
        .expect("a line search needs parameters with at least one leaf")
        .real()
        .dtype()
}

fn full(value: f64, dtype: DType) -> Array {
    Array::full(&[], value, dtype)
}

fn nan_to_inf(x: Array) -> Array {
    where_(x.isnan(), f64::INFINITY, &x)
}

fn extra_args_needed(name: &str) -> ! {
    panic!(
        "{name} needs the objective: call update_with_extra_args with ExtraArgs::new(&value, &grad, &value_fn)"
    )
}

// ---------------------------------------------------------------------------------------
// Zoom line search.

/// How [`scale_by_zoom_linesearch`] picks its first trial step size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialGuessStrategy {
    /// Start from 1 (optax's `"one"`, what [`lbfgs`](super::lbfgs) uses).
    One,
    /// Start from the previous step's learning rate (optax's `"keep"`, the default of
    /// `scale_by_zoom_linesearch`).
    Keep,
}

/// What the last zoom line search did (`optax.ZoomLinesearchInfo`).
#[derive(Tree, Clone, Debug)]
pub struct ZoomLinesearchInfo {
    /// Trial step sizes evaluated (`i32` scalar).
    pub num_linesearch_steps: Array,
    /// The sufficient decrease error at the step taken (0 when satisfied).
    pub decrease_error: Array,
    /// The small curvature error at the step taken (0 when satisfied).
    pub curvature_error: Array,
}

/// The state of [`scale_by_zoom_linesearch`] (`optax.ScaleByZoomLinesearchState`).
#[derive(Tree, Clone, Debug)]
pub struct ScaleByZoomLinesearchState<P> {
    /// The step size found (it scaled the last updates).
    pub learning_rate: Array,
    /// The objective at the new parameters, for [`value_and_grad_from_state`] (`inf` before
    /// the first step).
    pub value: Array,
    /// The gradient at the new parameters, for [`value_and_grad_from_state`].
    pub grad: P,
    /// Diagnostics.
    pub info: ZoomLinesearchInfo,
}

/// The zoom line search; see [`scale_by_zoom_linesearch`].
#[derive(Clone, Debug)]
pub struct ScaleByZoomLinesearch {
    max_linesearch_steps: i32,
    max_learning_rate: Option<f64>,
    tol: f64,
    increase_factor: f64,
    slope_rtol: f64,
    curv_rtol: f64,
    approx_dec_rtol: Option<f64>,
    stepsize_precision: f64,
    initial_guess_strategy: InitialGuessStrategy,
}

/// A line search for the strong Wolfe conditions (`optax.scale_by_zoom_linesearch`,
/// Algorithms 3.5 and 3.6 of Nocedal and Wright): finds a step size `eta` along the updates
/// `u` such that `f(w + eta u) <= f(w) + slope_rtol * eta * <u, grad f(w)>` (sufficient
/// decrease, or Hager and Zhang's approximate version) and
/// `|<u, grad f(w + eta u)>| <= curv_rtol * |<u, grad f(w)>|` (small curvature), first
/// growing the step by `increase_factor` until an interval brackets one, then zooming into
/// it by cubic, quadratic or bisection steps. The updates are scaled by the step found.
///
/// optax's defaults: no maximal step size, `tol = 0`, `increase_factor = 2`,
/// `slope_rtol = 1e-4`, `curv_rtol = 0.9`, `approx_dec_rtol = Some(1e-6)`,
/// `stepsize_precision = 1e-5`, [`InitialGuessStrategy::Keep`]; the builder methods change
/// them. The search is a [`while_loop`], so it runs under jit. Needs
/// [`update_with_extra_args`](GradientTransformation::update_with_extra_args); plain `update`
/// panics.
///
/// ```
/// use jaxrs::optim::{self, ExtraArgs, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let f = |x: &Array| (x * x).sum(None, false);
/// let opt = optim::chain((optim::sgd(1.0), optim::scale_by_zoom_linesearch(15)));
/// let params = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let (value, grad) = value_and_grad(|x: Array| f(&x))(params.clone());
/// let extra = ExtraArgs::new(&value, &grad, &f);
/// let (u, _state) = opt.update_with_extra_args(grad.clone(), opt.init(&params), Some(&params), &extra);
/// // The exact minimizer along -grad is half a gradient step.
/// let next = optim::apply_updates(&params, &u).to_vec::<f32>();
/// assert!(next.iter().all(|x| x.abs() < 1e-5));
/// ```
pub fn scale_by_zoom_linesearch(max_linesearch_steps: i32) -> ScaleByZoomLinesearch {
    ScaleByZoomLinesearch {
        max_linesearch_steps,
        max_learning_rate: None,
        tol: 0.0,
        increase_factor: 2.0,
        slope_rtol: 1e-4,
        curv_rtol: 0.9,
        approx_dec_rtol: Some(1e-6),
        stepsize_precision: 1e-5,
        initial_guess_strategy: InitialGuessStrategy::Keep,
    }
}

impl ScaleByZoomLinesearch {
    /// The largest step size tried (optax's `max_learning_rate`; `None`, the default, for no
    /// bound).
    pub fn max_learning_rate(mut self, max_learning_rate: Option<f64>) -> Self {
        self.max_learning_rate = max_learning_rate;
        self
    }

    /// The tolerance on both criteria (default 0).
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// The factor growing the step while no interval is found (default 2).
    pub fn increase_factor(mut self, increase_factor: f64) -> Self {
        self.increase_factor = increase_factor;
        self
    }

    /// The relative slope of the sufficient decrease criterion (default `1e-4`).
    pub fn slope_rtol(mut self, slope_rtol: f64) -> Self {
        self.slope_rtol = slope_rtol;
        self
    }

    /// The relative tolerance of the curvature criterion (default 0.9).
    pub fn curv_rtol(mut self, curv_rtol: f64) -> Self {
        self.curv_rtol = curv_rtol;
        self
    }

    /// The relative tolerance of the approximate decrease criterion (default `Some(1e-6)`;
    /// `None` uses only the Armijo criterion).
    pub fn approx_dec_rtol(mut self, approx_dec_rtol: Option<f64>) -> Self {
        self.approx_dec_rtol = approx_dec_rtol;
        self
    }

    /// The interval length under which the search stops with a step of sufficient decrease
    /// (default `1e-5`).
    pub fn stepsize_precision(mut self, stepsize_precision: f64) -> Self {
        self.stepsize_precision = stepsize_precision;
        self
    }

    /// The first trial step: 1, or the previous step's (the default).
    pub fn initial_guess_strategy(mut self, strategy: InitialGuessStrategy) -> Self {
        self.initial_guess_strategy = strategy;
        self
    }

    fn decrease_error(
        &self,
        stepsize: &Array,
        value_step: &Array,
        slope_step: &Array,
        value_init: &Array,
        slope_init: &Array,
    ) -> Array {
        let mut error = value_step - value_init - (stepsize * self.slope_rtol) * slope_init;
        if let Some(approx) = self.approx_dec_rtol {
            let approx_error = slope_step - slope_init * (2.0 * self.slope_rtol - 1.0);
            let delta_values = value_step - value_init - value_init.abs() * approx;
            error = approx_error.maximum(&delta_values).minimum(&error);
        }
        nan_to_inf(error.maximum(0.0))
    }

    fn curvature_error(&self, slope_step: &Array, slope_init: &Array) -> Array {
        let error = slope_step.abs() - slope_init.abs() * self.curv_rtol;
        nan_to_inf(error.maximum(0.0))
    }
}

/// The carry of the zoom line search's loop (optax's `ZoomLinesearchState`, less the
/// parameters and updates, which the loop captures).
#[derive(Tree, Clone)]
struct ZoomState<P> {
    count: Array,
    stepsize: Array,
    value: Array,
    grad: P,
    slope: Array,
    decrease_error: Array,
    curvature_error: Array,
    interval_found: Array,
    done: Array,
    failed: Array,
    low: Array,
    value_low: Array,
    slope_low: Array,
    high: Array,
    value_high: Array,
    slope_high: Array,
    cubic_ref: Array,
    value_cubic_ref: Array,
    safe_stepsize: Array,
    safe_value: Array,
    safe_grad: P,
}

/// The minimizer of the cubic through `(a, fa)`, `(b, fb)`, `(c, fc)` with slope `fpa` at
/// `a` (NaN when it has none), as optax's `_cubicmin`.
fn cubicmin(
    a: &Array,
    fa: &Array,
    fpa: &Array,
    b: &Array,
    fb: &Array,
    c: &Array,
    fc: &Array,
) -> Array {
    let db = b - a;
    let dc = c - a;
    let denom = (&db * &dc).powi(2) * (&db - &dc);
    let v0 = fb - fa - fpa * &db;
    let v1 = fc - fa - fpa * &dc;
    // optax's `jnp.dot(d1, [v0, v1])`: one 2x2 contraction, as XLA computes it.
    let d1 = stack(
        &[
            &stack(&[&dc.powi(2), &(-db.powi(2))], 0),
            &stack(&[&(-dc.powi(3)), &db.powi(3)], 0),
        ],
        0,
    );
    let ab = d1.matmul(&stack(&[&v0, &v1], 0)) / &denom;
    let aa = index_in_dim(&ab, 0, 0, false);
    let bb = index_in_dim(&ab, 1, 0, false);
    let radical = &bb * &bb - (&aa * 3.0) * fpa;
    a + (-&bb + radical.sqrt()) / (&aa * 3.0)
}

/// The minimizer of the parabola through `(a, fa)`, `(b, fb)` with slope `fpa` at `a`, as
/// optax's `_quadmin`.
fn quadmin(a: &Array, fa: &Array, fpa: &Array, b: &Array, fb: &Array) -> Array {
    let db = b - a;
    let bb = (fb - fa - fpa * &db) / db.powi(2);
    a - fpa / (bb * 2.0)
}

impl ScaleByZoomLinesearch {
    /// Value, gradient and slope along `updates` at `params + stepsize * updates`.
    fn on_line<P: Tree>(
        value_fn: &dyn Fn(&P) -> Array,
        params: &P,
        updates: &P,
        stepsize: &Array,
    ) -> (Array, P, Array) {
        let step = tree_add_scale(params, stepsize, updates);
        let (value, grad) = value_and_grad(|p: P| value_fn(&p))(step);
        let slope = tree_vdot(&grad, updates).real();
        (value, grad, slope)
    }

    #[allow(clippy::too_many_arguments)]
    fn search_interval<P: Tree>(
        &self,
        s: ZoomState<P>,
        value_fn: &dyn Fn(&P) -> Array,
        params: &P,
        updates: &P,
        stepsize_guess: &Array,
        value_init: &Array,
        slope_init: &Array,
    ) -> ZoomState<P> {
        let larger = &s.stepsize * self.increase_factor;
        let mut new_stepsize = where_(s.count.eq(0), stepsize_guess, &larger);
        let max_reached = match self.max_learning_rate {
            Some(max) => {
                let reached = new_stepsize.ge(max);
                new_stepsize = new_stepsize.minimum(max);
                reached
            }
            None => Array::scalar(false),
        };
        let (value, grad, slope) = Self::on_line(value_fn, params, updates, &new_stepsize);
        let decrease_error =
            self.decrease_error(&new_stepsize, &value, &slope, value_init, slope_init);
        let curvature_error = self.curvature_error(&slope, slope_init);
        let error = decrease_error.maximum(&curvature_error);
        let safe_decrease = decrease_error.le(self.tol);
        let safe_stepsize = where_(&safe_decrease, &new_stepsize, &s.safe_stepsize);
        let safe_value = where_(&safe_decrease, &value, &s.safe_value);
        let safe_grad = tree_where(&safe_decrease, &grad, &s.safe_grad);
        let set_high_to_new = decrease_error
            .gt(0.0)
            .logical_or(value.ge(&s.value).logical_and(s.count.gt(0)));
        let set_low_to_new = slope.ge(0.0).logical_and(set_high_to_new.logical_not());
        let pick = |new: &Array, prev: &Array| where_(&set_low_to_new, new, prev);
        let low = pick(&new_stepsize, &s.stepsize);
        let value_low = pick(&value, &s.value);
        let slope_low = pick(&slope, &s.slope);
        let high = pick(&s.stepsize, &new_stepsize);
        let value_high = pick(&s.value, &value);
        let slope_high = pick(&s.slope, &slope);
        let converged = error.le(self.tol);
        let interval_found = set_high_to_new
            .logical_or(&set_low_to_new)
            .logical_or(&converged);
        let done = converged.logical_or(max_reached.logical_and(interval_found.logical_not()));
        let failed = (&s.count + 1)
            .ge(self.max_linesearch_steps)
            .logical_and(done.logical_not());
        ZoomState {
            count: super::safe_increment(&s.count),
            stepsize: new_stepsize,
            value,
            grad,
            slope,
            decrease_error,
            curvature_error,
            interval_found,
            done,
            failed,
            cubic_ref: low.clone(),
            value_cubic_ref: value_low.clone(),
            low,
            value_low,
            slope_low,
            high,
            value_high,
            slope_high,
            safe_stepsize,
            safe_value,
            safe_grad,
        }
    }

    fn zoom_into_interval<P: Tree>(
        &self,
        s: ZoomState<P>,
        value_fn: &dyn Fn(&P) -> Array,
        params: &P,
        updates: &P,
        value_init: &Array,
        slope_init: &Array,
    ) -> ZoomState<P> {
        let (low, high) = (&s.low, &s.high);
        let delta = (high - low).abs();
        let left = high.minimum(low);
        let right = high.maximum(low);
        let cubic_chk = &delta * 0.2;
        let quad_chk = &delta * 0.1;
        let too_small_interval = delta.le(self.stepsize_precision);
        let middle_cubic = cubicmin(
            low,
            &s.value_low,
            &s.slope_low,
            high,
            &s.value_high,
            &s.cubic_ref,
            &s.value_cubic_ref,
        );
        let use_cubic = middle_cubic
            .gt(&left + &cubic_chk)
            .logical_and(middle_cubic.lt(&right - &cubic_chk));
        let middle_quad = quadmin(low, &s.value_low, &s.slope_low, high, &s.value_high);
        let use_quad = use_cubic.logical_not().logical_and(
            middle_quad
                .gt(&left + &quad_chk)
                .logical_and(middle_quad.lt(&right - &quad_chk)),
        );
        let middle_bisection = (low + high) / 2.0;
        let use_bisection = use_cubic.logical_not().logical_and(use_quad.logical_not());
        let middle = where_(&use_cubic, &middle_cubic, &s.cubic_ref);
        let middle = where_(&use_quad, &middle_quad, &middle);
        let middle = where_(&use_bisection, &middle_bisection, &middle);
        let (value, grad, slope) = Self::on_line(value_fn, params, updates, &middle);
        let decrease_error = self.decrease_error(&middle, &value, &slope, value_init, slope_init);
        let curvature_error = self.curvature_error(&slope, slope_init);
        let error = decrease_error.maximum(&curvature_error);
        let update_safe = decrease_error
            .le(self.tol)
            .logical_and(value.lt(&s.safe_value));
        let safe_stepsize = where_(&update_safe, &middle, &s.safe_stepsize);
        let safe_value = where_(&update_safe, &value, &s.safe_value);
        let safe_grad = tree_where(&update_safe, &grad, &s.safe_grad);
        let done = error.le(self.tol);
        let set_high_to_middle = decrease_error.gt(0.0).logical_or(value.ge(&s.value_low));
        let secant_interval = &slope * (high - low);
        let set_high_to_low = secant_interval
            .ge(0.0)
            .logical_and(set_high_to_middle.logical_not());
        let set_low_to_middle = set_high_to_middle.logical_not();
        let new_high = where_(&set_high_to_middle, &middle, high);
        let new_value_high = where_(&set_high_to_middle, &value, &s.value_high);
        let new_slope_high = where_(&set_high_to_middle, &slope, &s.slope_high);
        let new_high = where_(&set_high_to_low, low, &new_high);
        let new_value_high = where_(&set_high_to_low, &s.value_low, &new_value_high);
        let new_slope_high = where_(&set_high_to_low, &s.slope_low, &new_slope_high);
        let new_low = where_(&set_low_to_middle, &middle, low);
        let new_value_low = where_(&set_low_to_middle, &value, &s.value_low);
        let new_slope_low = where_(&set_low_to_middle, &slope, &s.slope_low);
        let moved_high = set_high_to_middle.logical_or(&set_high_to_low);
        let cubic_ref = where_(&moved_high, high, low);
        let value_cubic_ref = where_(&moved_high, &s.value_high, &s.value_low);
        let presumably_failed = (&s.count + 1)
            .ge(self.max_linesearch_steps)
            .logical_or(too_small_interval.logical_and(safe_stepsize.gt(0.0)));
        let failed = presumably_failed.logical_and(done.logical_not());
        ZoomState {
            count: super::safe_increment(&s.count),
            stepsize: middle,
            value,
            grad,
            slope,
            decrease_error,
            curvature_error,
            interval_found: s.interval_found,
            done,
            failed,
            low: new_low,
            value_low: new_value_low,
            slope_low: new_slope_low,
            high: new_high,
            value_high: new_value_high,
            slope_high: new_slope_high,
            cubic_ref,
            value_cubic_ref,
            safe_stepsize,
            safe_value,
            safe_grad,
        }
    }
}

/// Falls back on the best step of sufficient decrease seen, if any (optax's
/// `_try_safe_step`).
fn try_safe_step<P: Tree>(s: ZoomState<P>) -> ZoomState<P> {
    let use_safe = s.safe_stepsize.gt(0.0).logical_or(s.decrease_error.isinf());
    ZoomState {
        stepsize: where_(&use_safe, &s.safe_stepsize, &s.stepsize),
        value: where_(&use_safe, &s.safe_value, &s.value),
        grad: tree_where(&use_safe, &s.safe_grad, &s.grad),
        ..s
    }
}

impl GradientTransformation for ScaleByZoomLinesearch {
    type State<P: Tree> = ScaleByZoomLinesearchState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByZoomLinesearchState<P> {
        let dtype = value_dtype(params);
        ScaleByZoomLinesearchState {
            learning_rate: full(1.0, dtype),
            value: full(f64::INFINITY, dtype),
            grad: tree_map(params, Array::zeros_like),
            info: ZoomLinesearchInfo {
                num_linesearch_steps: Array::scalar(0i32),
                decrease_error: full(f64::INFINITY, dtype),
                curvature_error: full(f64::INFINITY, dtype),
            },
        }
    }

    #[track_caller]
    fn update<P: Tree>(
        &self,
        _updates: P,
        _state: ScaleByZoomLinesearchState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByZoomLinesearchState<P>) {
        extra_args_needed("scale_by_zoom_linesearch")
    }

    #[track_caller]
    fn update_with_extra_args<P: Tree>(
        &self,
        updates: P,
        state: ScaleByZoomLinesearchState<P>,
        params: Option<&P>,
        extra: &ExtraArgs<'_, P>,
    ) -> (P, ScaleByZoomLinesearchState<P>) {
        let params = params
            .expect("scale_by_zoom_linesearch: update needs the parameters (pass Some(&params))");
        let dtype = value_dtype(params);
        let (grad, value_fn) = extra.grad_and_fn("scale_by_zoom_linesearch");
        let value_init = extra.value.astype(dtype);
        let slope_init = tree_vdot(&updates, grad).real();
        let stepsize_guess = match self.initial_guess_strategy {
            InitialGuessStrategy::One => full(1.0, dtype),
            InitialGuessStrategy::Keep => state.learning_rate.astype(dtype),
        };
        let zero = full(0.0, dtype);
        let inf = full(f64::INFINITY, dtype);
        let init = ZoomState {
            count: Array::scalar(0i32),
            stepsize: zero.clone(),
            value: value_init.clone(),
            grad: tree_map(grad, Array::clone),
            slope: slope_init.clone(),
            decrease_error: inf.clone(),
            curvature_error: inf,
            interval_found: Array::scalar(false),
            done: Array::scalar(false),
            failed: Array::scalar(false),
            low: zero.clone(),
            value_low: value_init.clone(),
            slope_low: slope_init.clone(),
            high: zero.clone(),
            value_high: value_init.clone(),
            slope_high: slope_init.clone(),
            cubic_ref: zero.clone(),
            value_cubic_ref: value_init.clone(),
            safe_stepsize: zero,
            safe_value: value_init.clone(),
            safe_grad: tree_map(grad, Array::clone),
        };
        let fin = while_loop(
            |s: &ZoomState<P>| s.done.logical_or(&s.failed).logical_not(),
            |s: ZoomState<P>| {
                let found = s.interval_found.clone();
                let s = cond(
                    &found,
                    |s: ZoomState<P>| {
                        self.zoom_into_interval(
                            s,
                            value_fn,
                            params,
                            &updates,
                            &value_init,
                            &slope_init,
                        )
                    },
                    |s: ZoomState<P>| {
                        self.search_interval(
                            s,
                            value_fn,
                            params,
                            &updates,
                            &stepsize_guess,
                            &value_init,
                            &slope_init,
                        )
                    },
                    s,
                );
                let failed = s.failed.clone();
                cond(&failed, try_safe_step, |s| s, s)
            },
            init,
        );
        let scaled = tree_scale(&fin.stepsize, &updates);
        let state = ScaleByZoomLinesearchState {
            learning_rate: fin.stepsize,
            value: fin.value,
            grad: fin.grad,
            info: ZoomLinesearchInfo {
                num_linesearch_steps: fin.count,
                decrease_error: fin.decrease_error,
                curvature_error: fin.curvature_error,
            },
        };
        (scaled, state)
    }
}

// ---------------------------------------------------------------------------------------
// Backtracking line search.

/// What the last backtracking line search did (`optax.BacktrackingLinesearchInfo`).
#[derive(Tree, Clone, Debug)]
pub struct BacktrackingLinesearchInfo {
    /// Trial step sizes evaluated (`i32` scalar).
    pub num_linesearch_steps: Array,
    /// The sufficient decrease error at the step taken (0 when satisfied).
    pub decrease_error: Array,
}

/// The state of [`scale_by_backtracking_linesearch`]
/// (`optax.ScaleByBacktrackingLinesearchState`).
#[derive(Tree, Clone, Debug)]
pub struct ScaleByBacktrackingLinesearchState<P> {
    /// The step size found (it scaled the last updates).
    pub learning_rate: Array,
    /// The objective at the new parameters (`inf` before the first step).
    pub value: Array,
    /// The gradient at the new parameters, kept only with
    /// [`store_grad`](ScaleByBacktrackingLinesearch::store_grad).
    pub grad: Option<P>,
    /// Diagnostics.
    pub info: BacktrackingLinesearchInfo,
}

/// The backtracking line search; see [`scale_by_backtracking_linesearch`].
#[derive(Clone, Debug)]
pub struct ScaleByBacktrackingLinesearch {
    max_backtracking_steps: i32,
    slope_rtol: f64,
    decrease_factor: f64,
    increase_factor: f64,
    max_learning_rate: f64,
    atol: f64,
    rtol: f64,
    store_grad: bool,
}

/// A backtracking line search for sufficient decrease (`optax.scale_by_backtracking_linesearch`,
/// the Armijo criterion): starting from `min(increase_factor * previous step,
/// max_learning_rate)`, multiplies the step by `decrease_factor` until
/// `f(w + eta u) <= (1 + rtol) f(w) + eta slope_rtol <u, grad f(w)> + atol`, at most
/// `max_backtracking_steps` times; the updates are scaled by the step found (0 if every
/// trial gave a NaN or infinite value).
///
/// optax's defaults: `slope_rtol = 1e-4`, `decrease_factor = 0.8`, `increase_factor = 1.5`,
/// `max_learning_rate = 1`, `atol = rtol = 0`, `store_grad = false`. The search is a
/// [`while_loop`], so it runs under jit. Needs
/// [`update_with_extra_args`](GradientTransformation::update_with_extra_args); plain `update`
/// panics.
///
/// ```
/// use jaxrs::optim::{self, ExtraArgs, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let f = |x: &Array| (x * x).sum(None, false);
/// let opt = optim::chain((optim::sgd(1.0), optim::scale_by_backtracking_linesearch(15)));
/// let params = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let (value, grad) = value_and_grad(|x: Array| f(&x))(params.clone());
/// let extra = ExtraArgs::new(&value, &grad, &f);
/// let (u, state) = opt.update_with_extra_args(grad.clone(), opt.init(&params), Some(&params), &extra);
/// let next = optim::apply_updates(&params, &u);
/// assert!(f(&next).item::<f32>() < value.item::<f32>());
/// assert!(state.1.value.item::<f32>() < 14.0);
/// ```
pub fn scale_by_backtracking_linesearch(
    max_backtracking_steps: i32,
) -> ScaleByBacktrackingLinesearch {
    ScaleByBacktrackingLinesearch {
        max_backtracking_steps,
        slope_rtol: 1e-4,
        decrease_factor: 0.8,
        increase_factor: 1.5,
        max_learning_rate: 1.0,
        atol: 0.0,
        rtol: 0.0,
        store_grad: false,
    }
}

impl ScaleByBacktrackingLinesearch {
    /// The relative slope of the decrease criterion (default `1e-4`).
    pub fn slope_rtol(mut self, slope_rtol: f64) -> Self {
        self.slope_rtol = slope_rtol;
        self
    }

    /// The factor shrinking the step at each trial (default 0.8).
    pub fn decrease_factor(mut self, decrease_factor: f64) -> Self {
        self.decrease_factor = decrease_factor;
        self
    }

    /// The factor growing the previous step into the first trial (default 1.5).
    pub fn increase_factor(mut self, increase_factor: f64) -> Self {
        self.increase_factor = increase_factor;
        self
    }

    /// The largest first trial step (default 1).
    pub fn max_learning_rate(mut self, max_learning_rate: f64) -> Self {
        self.max_learning_rate = max_learning_rate;
        self
    }

    /// The absolute tolerance of the criterion (default 0).
    pub fn atol(mut self, atol: f64) -> Self {
        self.atol = atol;
        self
    }

    /// The relative tolerance of the criterion (default 0).
    pub fn rtol(mut self, rtol: f64) -> Self {
        self.rtol = rtol;
        self
    }

    /// Keep the gradient at the accepted step in the state, for
    /// [`value_and_grad_from_state`] (default false).
    pub fn store_grad(mut self, store_grad: bool) -> Self {
        self.store_grad = store_grad;
        self
    }

    fn decrease_error(&self, stepsize: &Array, slope: &Array, value: &Array, new: &Array) -> Array {
        let error = new - value * (1.0 + self.rtol) - (stepsize * self.slope_rtol) * slope;
        nan_to_inf(error).maximum(0.0)
    }
}

#[derive(Tree, Clone)]
struct BacktrackingState<P> {
    learning_rate: Array,
    new_value: Array,
    new_grad: P,
    decrease_error: Array,
    iter_num: Array,
}

impl GradientTransformation for ScaleByBacktrackingLinesearch {
    type State<P: Tree> = ScaleByBacktrackingLinesearchState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByBacktrackingLinesearchState<P> {
        let dtype = value_dtype(params);
        ScaleByBacktrackingLinesearchState {
            learning_rate: full(1.0, dtype),
            value: full(f64::INFINITY, dtype),
            grad: self.store_grad.then(|| tree_map(params, Array::zeros_like)),
            info: BacktrackingLinesearchInfo {
                num_linesearch_steps: Array::scalar(0i32),
                decrease_error: full(f64::INFINITY, dtype),
            },
        }
    }

    #[track_caller]
    fn update<P: Tree>(
        &self,
        _updates: P,
        _state: ScaleByBacktrackingLinesearchState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByBacktrackingLinesearchState<P>) {
        extra_args_needed("scale_by_backtracking_linesearch")
    }

    #[track_caller]
    fn update_with_extra_args<P: Tree>(
        &self,
        updates: P,
        state: ScaleByBacktrackingLinesearchState<P>,
        params: Option<&P>,
        extra: &ExtraArgs<'_, P>,
    ) -> (P, ScaleByBacktrackingLinesearchState<P>) {
        let params = params.expect(
            "scale_by_backtracking_linesearch: update needs the parameters (pass Some(&params))",
        );
        let dtype = value_dtype(params);
        let (grad, value_fn) = extra.grad_and_fn("scale_by_backtracking_linesearch");
        let value = extra.value.astype(dtype);
        let slope = tree_vdot(&updates, grad).real();
        let max_steps = self.max_backtracking_steps;
        let init = BacktrackingState {
            learning_rate: (&state.learning_rate * self.increase_factor)
                .minimum(self.max_learning_rate),
            new_value: value.clone(),
            new_grad: tree_map(params, Array::zeros_like),
            decrease_error: full(f64::INFINITY, dtype),
            iter_num: Array::scalar(0i32),
        };
        let fin = while_loop(
            |s: &BacktrackingState<P>| {
                s.decrease_error
                    .le(self.atol)
                    .logical_not()
                    .logical_and(s.iter_num.le(max_steps))
            },
            |s: BacktrackingState<P>| {
                let learning_rate = where_(
                    s.iter_num.gt(0),
                    &s.learning_rate * self.decrease_factor,
                    &s.learning_rate,
                );
                let new_params = tree_add_scale(params, &learning_rate, &updates);
                let new_value = value_fn(&new_params);
                let decrease_error =
                    self.decrease_error(&learning_rate, &slope, &value, &new_value);
                let new_grad = if self.store_grad {
                    let last = decrease_error
                        .le(self.atol)
                        .logical_or(s.iter_num.eq(max_steps));
                    cond(
                        &last,
                        |(p, _): (P, P)| value_and_grad(|p: P| value_fn(&p))(p).1,
                        |(_, g): (P, P)| g,
                        (new_params, s.new_grad),
                    )
                } else {
                    s.new_grad
                };
                BacktrackingState {
                    learning_rate,
                    new_value,
                    new_grad,
                    decrease_error,
                    iter_num: &s.iter_num + 1,
                }
            },
            init,
        );
        let learning_rate = where_(
            fin.decrease_error.isinf(),
            full(0.0, dtype),
            &fin.learning_rate,
        );
        let scaled = tree_scale(&learning_rate, &updates);
        let state = ScaleByBacktrackingLinesearchState {
            learning_rate,
            value: fin.new_value,
            grad: self.store_grad.then_some(fin.new_grad),
            info: BacktrackingLinesearchInfo {
                num_linesearch_steps: fin.iter_num,
                decrease_error: fin.decrease_error,
            },
        };
        (scaled, state)
    }
}

// ---------------------------------------------------------------------------------------
// value_and_grad_from_state.

/// `value_fn`'s value and gradient at the parameters, reusing those a line search stored in
/// the optimizer state when it has them (`optax.value_and_grad_from_state`): in a
/// deterministic objective, the line search already evaluated the function at the
/// parameters it returned, so each step costs one evaluation less.
///
/// The state is searched, as optax's `optax.tree.get`, for a leaf named `value` and the
/// subtree named `grad` beside it (a [`ScaleByZoomLinesearchState`], or a
/// [`ScaleByBacktrackingLinesearchState`] with `store_grad`, anywhere in a [`chain`]'s
/// state). When the stored value is finite it and the stored gradient are returned, else
/// (the first step: `inf`) `value_and_grad(value_fn)(params)`; the choice is a
/// [`cond`], so it works under jit. Panics if the state holds no `value` and `grad`.
///
/// [`chain`]: super::chain
///
/// ```
/// use jaxrs::optim::{self, ExtraArgs, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let f = |x: &Array| (x * x).sum(None, false);
/// let opt = optim::lbfgs(None, 10, true, optim::lbfgs_linesearch());
/// let mut params = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let mut state = opt.init(&params);
/// let value_and_grad = optim::value_and_grad_from_state(f);
/// for _ in 0..3 {
///     let (value, grad) = value_and_grad(&params, &state);
///     let extra = ExtraArgs::new(&value, &grad, &f);
///     let (u, s) = opt.update_with_extra_args(grad.clone(), state, Some(&params), &extra);
///     params = optim::apply_updates(&params, &u);
///     state = s;
/// }
/// assert!(f(&params).item::<f32>() < 1e-8);
/// ```
pub fn value_and_grad_from_state<P: Tree, S: Tree>(
    value_fn: impl Fn(&P) -> Array,
) -> impl Fn(&P, &S) -> (Array, P) {
    move |params: &P, state: &S| {
        let (value, grad) = stored_value_and_grad(params, state);
        let finite = value
            .isinf()
            .logical_not()
            .logical_and(value.isnan().logical_not());
        cond(
            &finite,
            |(_, value, grad): (P, Array, P)| (value, grad),
            |(p, value, _): (P, Array, P)| {
                let (v, g) = value_and_grad(|p: P| value_fn(&p))(p);
                (v.astype(value.dtype()), g)
            },
            (tree_map(params, Array::clone), value, grad),
        )
    }
}

/// The `value` leaf and the `grad` subtree (of the parameters' structure) of `state`.
#[track_caller]
fn stored_value_and_grad<P: Tree, S: Tree>(params: &P, state: &S) -> (Array, P) {
    let not_found = || -> ! {
        panic!(
            "value_and_grad_from_state: value or gradient not found in the state; make sure the \
             optimizer stores them (a zoom line search, or a backtracking one with store_grad)"
        )
    };
    let paths = tree_paths(state);
    let (leaves, _) = state.flatten();
    let (_, params_def) = params.flatten();
    let n = params_def.num_leaves();
    // A scalar leaf named `value` with a `grad` subtree of the parameters' size beside it:
    // a field of the parameters (inside an L-BFGS state, say) named `value` is no match.
    for (at, path) in paths.iter().enumerate() {
        let prefix = match path.strip_suffix("value") {
            Some(prefix) if prefix.is_empty() || prefix.ends_with('.') => prefix,
            _ => continue,
        };
        if leaves[at].rank() != 0 {
            continue;
        }
        let grad_path = format!("{prefix}grad");
        let grad_prefix = format!("{grad_path}.");
        let grad_leaves: Vec<Array> = paths
            .iter()
            .zip(&leaves)
            .filter(|(p, _)| **p == grad_path || p.starts_with(&grad_prefix))
            .map(|(_, l)| l.clone())
            .collect();
        if grad_leaves.len() == n {
            return (leaves[at].clone(), tree_unflatten(&params_def, grad_leaves));
        }
    }
    not_found()
}
