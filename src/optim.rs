//! Optimizers as composable gradient transformations, in the style of optax.
//!
//! A [`GradientTransformation`] turns gradients into updates and carries a state. The state is
//! a [`Tree`] (a `#[derive(Tree)]` struct generic over the parameters' tree type, tuples for a
//! [`chain`]), so a whole training step — loss, gradients, optimizer update — compiles as one
//! `#[jit]` function that takes the parameters and the optimizer state by value and donates
//! both. Name the state's type with [`State`]: `optim::State<optim::Adam, Params>`.
//!
//! The arithmetic follows optax 0.2.8 operation by operation (the order of `eps`, bias
//! correction on the incremented count, schedules evaluated on the count before the update),
//! so trajectories match optax's to float32 rounding. Step counts live in the state as `i32`
//! scalars, so schedules work inside jit.
//!
//! ```
//! use jaxrs::optim::{self, GradientTransformation};
//! use jaxrs::prelude::*;
//!
//! #[derive(Tree, Clone)]
//! struct Params { w: Array, b: Array }
//!
//! type Opt = optim::Chain<(optim::ClipByGlobalNorm, optim::Adam)>;
//! type OptState = optim::State<Opt, Params>;
//!
//! fn optimizer() -> Opt {
//!     let lr = optim::warmup_cosine_decay_schedule(0.0, 0.1, 10, 200, 0.01);
//!     optim::chain((optim::clip_by_global_norm(1.0), optim::adam(lr, 0.9, 0.999, 1e-8)))
//! }
//!
//! fn loss(p: &Params, x: &Array, y: &Array) -> Array {
//!     (x.matmul(&p.w) + &p.b - y).powi(2).mean(None, false)
//! }
//!
//! #[jit(donate = (params, opt_state))]
//! fn train_step(params: Params, opt_state: OptState, x: &Array, y: &Array) -> (Params, OptState, Array) {
//!     let (value, grads) = value_and_grad(|p: Params| loss(&p, x, y))(params.clone());
//!     let (updates, opt_state) = optimizer().update(grads, opt_state, Some(&params));
//!     (optim::apply_updates(&params, &updates), opt_state, value)
//! }
//!
//! // y = 2 x + 1.
//! let x = Array::from_vec(vec![0.0f32, 1.0, 2.0, 3.0], &[4, 1]);
//! let y = Array::from_vec(vec![1.0f32, 3.0, 5.0, 7.0], &[4, 1]);
//! let mut params = Params { w: Array::zeros(&[1, 1], DType::F32), b: Array::zeros(&[1], DType::F32) };
//! let mut opt_state = optimizer().init(&params);
//! for _ in 0..200 {
//!     let (p, s, _loss) = train_step(params, opt_state, &x, &y);
//!     (params, opt_state) = (p, s);
//! }
//! assert!(loss(&params, &x, &y).item::<f32>() < 1e-2);
//! ```

use crate::{
    tree_map, tree_map2, tree_paths, tree_unflatten, where_, Array, DType, StaticValue, Tree,
    TreeDef,
};
use std::fmt;
use std::sync::Arc;

mod lbfgs;
mod linear_algebra;
mod linesearch;
pub mod losses;
mod noise;
mod optimizers;
mod polyak;
mod scale_by;
mod schedules;
mod transforms;
mod tree_math;
mod wrappers;

pub use lbfgs::*;
pub use linear_algebra::*;
pub use linesearch::*;
pub use losses::{
    convex_kl_divergence, cosine_distance, cosine_similarity, ctc_loss,
    ctc_loss_with_forward_probs, generalized_kl_divergence, hinge_loss, huber_loss, kl_divergence,
    l2_loss, log_cosh, ntxent, safe_softmax_cross_entropy, sigmoid_focal_loss, smooth_labels,
    softmax_cross_entropy, squared_error,
};
pub use noise::*;
use optimizers::rmsprop_with;
pub use optimizers::*;
pub use polyak::*;
pub use scale_by::*;
pub use schedules::*;
pub use transforms::*;
pub use tree_math::{
    bias_correction, incremental_update, periodic_update, safe_increment, safe_norm,
    safe_root_mean_squares, scale_gradient, update_infinity_moment, update_moment,
    update_moment_per_elem_norm,
};
pub use wrappers::*;

/// A gradient transformation: `init` builds its state from the parameters, `update` turns
/// gradients (or the updates of the previous transformation in a [`chain`]) into updates.
///
/// The state type is generic over the parameters' tree type `P`, so one optimizer value
/// serves any model; [`State`] names it.
pub trait GradientTransformation {
    /// The state kept between steps, for parameters of tree type `P`.
    type State<P: Tree>: Tree;

    /// The initial state for `params`.
    fn init<P: Tree>(&self, params: &P) -> Self::State<P>;

    /// The updates for `updates` (gradients, for the first transformation) and the next
    /// state. `params` is needed by the transformations that read the parameters
    /// ([`add_decayed_weights`], [`adamw`]); they panic without it.
    fn update<P: Tree>(
        &self,
        updates: P,
        state: Self::State<P>,
        params: Option<&P>,
    ) -> (P, Self::State<P>);

    /// [`update`](Self::update) with the objective at hand (optax's
    /// `GradientTransformationExtraArgs.update(updates, state, params, value=..., grad=...,
    /// value_fn=...)`). The line searches ([`scale_by_zoom_linesearch`],
    /// [`scale_by_backtracking_linesearch`]) and [`scale_by_polyak`] need it; [`Chain`]
    /// hands `extra` to each of its transformations, and so do the wrappers ([`masked`],
    /// [`partition`], [`MultiSteps`], [`inject_hyperparams`], [`apply_if_finite`], the
    /// conditionals) to the transformation they wrap, as optax's pass `**extra_args`; every
    /// other transformation ignores it (this default), as optax's `with_extra_args_support`
    /// does. [`flatten`] does not pass it on: its inner transformation sees one flat array,
    /// not the objective's parameter tree.
    ///
    /// optax takes these as keyword arguments of `update`, the objective's data as further
    /// ones; in Rust they are one [`ExtraArgs`] value, and `value_fn` is a closure that
    /// captures its data.
    fn update_with_extra_args<P: Tree>(
        &self,
        updates: P,
        state: Self::State<P>,
        params: Option<&P>,
        extra: &ExtraArgs<'_, P>,
    ) -> (P, Self::State<P>) {
        let _ = extra;
        self.update(updates, state, params)
    }
}

/// The state type of optimizer `O` for parameters of tree type `P`, to write in a jitted
/// step's signature: `opt_state: optim::State<optim::Adam, Params>`.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let params = (Array::zeros(&[3], DType::F32),);
/// let state: optim::State<optim::Adam, (Array,)> = optim::adam(1e-3, 0.9, 0.999, 1e-8).init(&params);
/// assert_eq!(state.0.count.item::<i32>(), 0);
/// ```
pub type State<O, P> = <O as GradientTransformation>::State<P>;

/// The parameters plus the updates, cast back to each parameter's dtype (`optax.apply_updates`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let params = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let updates = Array::from_vec(vec![0.5f32, -0.5], &[2]);
/// assert_eq!(jaxrs::optim::apply_updates(&params, &updates).to_vec::<f32>(), vec![1.5, 1.5]);
/// ```
#[track_caller]
pub fn apply_updates<P: Tree>(params: &P, updates: &P) -> P {
    tree_map2(params, updates, |p, u| (p + u).astype(p.dtype()))
}

/// The same as [`safe_increment`] (`optax.safe_int32_increment`).
pub fn safe_int32_increment(count: &Array) -> Array {
    safe_increment(count)
}

fn zero_count() -> Array {
    Array::scalar(0i32)
}

fn f32_scalar(value: f64) -> Array {
    Array::full(&[], value, DType::F32)
}

// ---------------------------------------------------------------------------------------
// Schedules.

/// A learning-rate (or any hyperparameter) schedule: a function of the step count, an `i32`
/// scalar array, to an `f32` scalar array. It runs on traced counts, so it works inside jit.
///
/// ```
/// use jaxrs::optim::Schedule;
/// use jaxrs::prelude::*;
///
/// // A custom schedule: 0.1 / (1 + step).
/// let inverse = Schedule::new(|count: &Array| 0.1 / (count.astype(DType::F32) + 1.0));
/// assert!((inverse.value(4) - 0.02).abs() < 1e-7);
/// ```
#[derive(Clone)]
pub struct Schedule(Arc<dyn Fn(&Array) -> Array + Send + Sync>);

impl Schedule {
    /// A schedule computed by `f` from the step count (an `i32` scalar array).
    pub fn new(f: impl Fn(&Array) -> Array + Send + Sync + 'static) -> Schedule {
        Schedule(Arc::new(f))
    }

    /// The value at step `count` (an `i32` scalar array, traced or not).
    pub fn at(&self, count: &Array) -> Array {
        (self.0)(count)
    }

    /// The value at step `step`, computed now.
    pub fn value(&self, step: i32) -> f32 {
        self.at(&Array::scalar(step))
            .astype(DType::F32)
            .item::<f32>()
    }
}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Schedule(..)")
    }
}

/// The same value at every step.
///
/// ```
/// assert_eq!(jaxrs::optim::constant_schedule(0.05).value(7), 0.05);
/// ```
pub fn constant_schedule(value: f64) -> Schedule {
    Schedule::new(move |_| f32_scalar(value))
}

/// `init_value` going linearly to `end_value` over `transition_steps` steps that start at
/// `transition_begin`, then constant (`optax.linear_schedule`).
///
/// ```
/// let s = jaxrs::optim::linear_schedule(0.1, 0.0, 4, 0);
/// assert!((s.value(1) - 0.075).abs() < 1e-7);
/// assert_eq!(s.value(10), 0.0);
/// ```
pub fn linear_schedule(
    init_value: f64,
    end_value: f64,
    transition_steps: i32,
    transition_begin: i32,
) -> Schedule {
    if transition_steps <= 0 {
        return constant_schedule(init_value);
    }
    let begin = transition_begin.max(0);
    Schedule::new(move |count| {
        let count = (count - begin).clip(0, transition_steps);
        let frac = 1 - count / transition_steps;
        frac * (init_value - end_value) + end_value
    })
}

/// `init_value * decay_rate ^ ((step - transition_begin) / transition_steps)`, the exponent
/// floored when `staircase`, the value clipped at `end_value` if given
/// (`optax.exponential_decay`).
///
/// ```
/// let s = jaxrs::optim::exponential_decay(0.1, 2, 0.5, 0, false, None);
/// assert!((s.value(4) - 0.025).abs() < 1e-8);
/// ```
pub fn exponential_decay(
    init_value: f64,
    transition_steps: i32,
    decay_rate: f64,
    transition_begin: i32,
    staircase: bool,
    end_value: Option<f64>,
) -> Schedule {
    if transition_steps <= 0 || decay_rate == 0.0 {
        return constant_schedule(init_value);
    }
    let begin = transition_begin.max(0);
    Schedule::new(move |count| {
        let decreased = count - begin;
        let mut p = &decreased / transition_steps;
        if staircase {
            p = p.floor();
        }
        let decayed = where_(
            decreased.le(0),
            init_value,
            f32_scalar(decay_rate).pow(&p) * init_value,
        );
        match end_value {
            Some(end) if decay_rate < 1.0 => decayed.maximum(end),
            Some(end) => decayed.minimum(end),
            None => decayed,
        }
    })
}

/// Cosine decay from `init_value` to `alpha * init_value` over `decay_steps` steps
/// (`optax.cosine_decay_schedule`).
///
/// ```
/// let s = jaxrs::optim::cosine_decay_schedule(1.0, 10, 0.0, 1.0);
/// assert!((s.value(5) - 0.5).abs() < 1e-6);
/// ```
pub fn cosine_decay_schedule(
    init_value: f64,
    decay_steps: i32,
    alpha: f64,
    exponent: f64,
) -> Schedule {
    assert!(
        decay_steps > 0,
        "cosine_decay_schedule requires positive decay_steps, got {decay_steps}"
    );
    Schedule::new(move |count| {
        let count = count.astype(DType::F32).minimum(decay_steps as f64);
        let cosine = ((count * std::f64::consts::PI) / decay_steps as f64).cos() + 1.0;
        let cosine = cosine * 0.5;
        (cosine.pow(exponent) * (1.0 - alpha) + alpha) * init_value
    })
}

/// Linear warmup from `init_value` to `peak_value` over `warmup_steps`, then cosine decay to
/// `end_value` at `decay_steps` (counted from step 0, warmup included)
/// (`optax.warmup_cosine_decay_schedule` with exponent 1).
///
/// ```
/// let s = jaxrs::optim::warmup_cosine_decay_schedule(0.0, 1.0, 10, 110, 0.0);
/// assert!((s.value(5) - 0.5).abs() < 1e-6);
/// assert!((s.value(10) - 1.0).abs() < 1e-6);
/// assert!(s.value(110).abs() < 1e-6);
/// ```
pub fn warmup_cosine_decay_schedule(
    init_value: f64,
    peak_value: f64,
    warmup_steps: i32,
    decay_steps: i32,
    end_value: f64,
) -> Schedule {
    let alpha = if peak_value == 0.0 {
        0.0
    } else {
        end_value / peak_value
    };
    let warmup = linear_schedule(init_value, peak_value, warmup_steps, 0);
    let decay = cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, 1.0);
    join_schedules(vec![warmup, decay], vec![warmup_steps])
}

/// `schedules[0]` until `boundaries[0]`, then `schedules[1]` counted from that boundary, and
/// so on (`optax.join_schedules`).
///
/// ```
/// use jaxrs::optim::{constant_schedule, join_schedules};
///
/// let s = join_schedules(vec![constant_schedule(1.0), constant_schedule(0.1)], vec![3]);
/// assert_eq!((s.value(2), s.value(3)), (1.0, 0.1));
/// ```
pub fn join_schedules(schedules: Vec<Schedule>, boundaries: Vec<i32>) -> Schedule {
    assert_eq!(
        schedules.len(),
        boundaries.len() + 1,
        "join_schedules: one boundary between each two schedules"
    );
    Schedule::new(move |step| {
        let mut output = schedules[0].at(step);
        for (boundary, schedule) in boundaries.iter().zip(&schedules[1..]) {
            output = where_(
                step.lt(*boundary),
                &output,
                schedule.at(&(step - *boundary)),
            );
        }
        output
    })
}

/// A learning rate: a constant or a [`Schedule`]. `f64`, `f32` and `Schedule` convert into it.
#[derive(Clone, Debug)]
pub enum LearningRate {
    /// The same rate at every step.
    Constant(f64),
    /// A rate computed from the step count.
    Schedule(Schedule),
    /// A rate held in an array (a scalar, traced or not), as [`inject_hyperparams`] hands
    /// its factory.
    Value(Array),
}

impl From<Array> for LearningRate {
    fn from(v: Array) -> LearningRate {
        LearningRate::Value(v)
    }
}

impl From<f64> for LearningRate {
    fn from(v: f64) -> LearningRate {
        LearningRate::Constant(v)
    }
}

impl From<f32> for LearningRate {
    fn from(v: f32) -> LearningRate {
        LearningRate::Constant(v as f64)
    }
}

impl From<Schedule> for LearningRate {
    fn from(s: Schedule) -> LearningRate {
        LearningRate::Schedule(s)
    }
}

// ---------------------------------------------------------------------------------------
// States.

/// The state of transformations that only count steps ([`scale_by_schedule`], and
/// [`scale_by_learning_rate`] with a schedule).
#[derive(Tree, Clone, Debug)]
pub struct CountState {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
}

/// The state of [`trace`] (momentum).
#[derive(Tree, Clone, Debug)]
pub struct TraceState<P> {
    /// The momentum buffer.
    pub trace: P,
}

/// The state of [`scale_by_adam`].
#[derive(Tree, Clone, Debug)]
pub struct AdamState<P> {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
    /// The first moment.
    pub mu: P,
    /// The second moment.
    pub nu: P,
}

/// The state of [`scale_by_rms`].
#[derive(Tree, Clone, Debug)]
pub struct RmsState<P> {
    /// Updates done so far (`i32` scalar), kept only with bias correction (optax's
    /// `ScaleByRmsWithCountState`).
    pub count: Option<Array>,
    /// The running mean of squared gradients.
    pub nu: P,
}

// ---------------------------------------------------------------------------------------
// Chains.

/// Transformations applied one after the other; built by [`chain`]. Its state is the tuple
/// of their states.
#[derive(Clone, Debug)]
pub struct Chain<T>(pub T);

/// Applies the transformations of a tuple in order, each to the previous one's updates
/// (`optax.chain`). Tuples of 1 to 8 transformations.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::chain((optim::clip_by_global_norm(1.0), optim::sgd(0.5)));
/// let params = Array::zeros(&[2], DType::F32);
/// let state = opt.init(&params);
/// let grads = Array::from_vec(vec![3.0f32, 4.0], &[2]); // norm 5: clipped to norm 1
/// let (updates, _state) = opt.update(grads, state, Some(&params));
/// assert_eq!(updates.to_vec::<f32>(), vec![-0.3, -0.4]);
/// ```
pub fn chain<T>(transformations: T) -> Chain<T> {
    Chain(transformations)
}

macro_rules! chain_tuple {
    ($($t:ident $i:tt),+) => {
        impl<$($t: GradientTransformation),+> GradientTransformation for Chain<($($t,)+)> {
            type State<P: Tree> = ($($t::State<P>,)+);

            fn init<P: Tree>(&self, params: &P) -> Self::State<P> {
                ($(self.0.$i.init(params),)+)
            }

            fn update<P: Tree>(
                &self,
                updates: P,
                state: Self::State<P>,
                params: Option<&P>,
            ) -> (P, Self::State<P>) {
                $(let (updates, $t) = self.0.$i.update(updates, state.$i, params);)+
                (updates, ($($t,)+))
            }

            fn update_with_extra_args<P: Tree>(
                &self,
                updates: P,
                state: Self::State<P>,
                params: Option<&P>,
                extra: &ExtraArgs<'_, P>,
            ) -> (P, Self::State<P>) {
                $(let (updates, $t) =
                    self.0.$i.update_with_extra_args(updates, state.$i, params, extra);)+
                (updates, ($($t,)+))
            }
        }
    };
}

#[allow(non_snake_case)]
mod chain_impls {
    use super::*;
    chain_tuple!(A 0);
    chain_tuple!(A 0, B 1);
    chain_tuple!(A 0, B 1, C 2);
    chain_tuple!(A 0, B 1, C 2, D 3);
    chain_tuple!(A 0, B 1, C 2, D 3, E 4);
    chain_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
    chain_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
    chain_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
}

// ---------------------------------------------------------------------------------------
// Transformations.

/// Multiplies updates by `-learning_rate` (constant, or a schedule of the step count); see
/// [`scale_by_learning_rate`].
#[derive(Clone, Debug)]
pub struct ScaleByLearningRate {
    learning_rate: LearningRate,
    flip_sign: bool,
}

/// Multiplies updates by `-learning_rate`: the last link of every optimizer
/// (`optax.scale_by_learning_rate`). A schedule is evaluated on the count before this update.
/// Only a schedule needs a count: with a constant rate the state is `None` (optax's
/// `EmptyState`), so that a jitted step carries no count nobody reads.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::scale_by_learning_rate(0.1);
/// let g = Array::from_vec(vec![1.0f32, -2.0], &[2]);
/// let (u, state) = opt.update(g.clone(), opt.init(&g), None);
/// assert_eq!(u.to_vec::<f32>(), vec![-0.1, 0.2]);
/// assert!(state.is_none());
///
/// let scheduled = optim::scale_by_learning_rate(optim::constant_schedule(0.1));
/// let (_, state) = scheduled.update(g.clone(), scheduled.init(&g), None);
/// assert_eq!(state.unwrap().count.item::<i32>(), 1);
/// ```
pub fn scale_by_learning_rate(learning_rate: impl Into<LearningRate>) -> ScaleByLearningRate {
    ScaleByLearningRate {
        learning_rate: learning_rate.into(),
        flip_sign: true,
    }
}

impl ScaleByLearningRate {
    /// Multiply by `+learning_rate` instead (optax's `flip_sign=False`, as Adafactor
    /// flips the sign at its end).
    pub fn flip_sign(mut self, flip_sign: bool) -> Self {
        self.flip_sign = flip_sign;
        self
    }
}

impl GradientTransformation for ScaleByLearningRate {
    type State<P: Tree> = Option<CountState>;

    fn init<P: Tree>(&self, _params: &P) -> Option<CountState> {
        match self.learning_rate {
            LearningRate::Constant(_) | LearningRate::Value(_) => None,
            LearningRate::Schedule(_) => Some(CountState {
                count: zero_count(),
            }),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: Option<CountState>,
        _params: Option<&P>,
    ) -> (P, Option<CountState>) {
        let m = if self.flip_sign { -1.0 } else { 1.0 };
        match &self.learning_rate {
            LearningRate::Constant(lr) => (tree_map(&updates, |g| g * (m * lr)), None),
            LearningRate::Value(lr) => {
                let step = lr * m;
                (tree_map(&updates, |g| step.astype(g.dtype()) * g), None)
            }
            LearningRate::Schedule(s) => {
                let state = state.expect(
                    "scale_by_learning_rate with a schedule needs the count its init returned",
                );
                let step = s.at(&state.count) * m;
                (
                    tree_map(&updates, |g| step.astype(g.dtype()) * g),
                    Some(CountState {
                        count: safe_increment(&state.count),
                    }),
                )
            }
        }
    }
}

/// Multiplies updates by a schedule of the step count; see [`scale_by_schedule`].
#[derive(Clone, Debug)]
pub struct ScaleBySchedule {
    schedule: Schedule,
}

/// Multiplies updates by `schedule(count)`, `count` being the number of updates done before
/// this one (`optax.scale_by_schedule`; no sign flip).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::scale_by_schedule(optim::linear_schedule(1.0, 0.0, 2, 0));
/// let g = Array::ones(&[2], DType::F32);
/// let (u0, s) = opt.update(g.clone(), opt.init(&g), None);
/// let (u1, _) = opt.update(g.clone(), s, None);
/// assert_eq!((u0.to_vec::<f32>()[0], u1.to_vec::<f32>()[0]), (1.0, 0.5));
/// ```
pub fn scale_by_schedule(schedule: Schedule) -> ScaleBySchedule {
    ScaleBySchedule { schedule }
}

impl GradientTransformation for ScaleBySchedule {
    type State<P: Tree> = CountState;

    fn init<P: Tree>(&self, _params: &P) -> CountState {
        CountState {
            count: zero_count(),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: CountState,
        _params: Option<&P>,
    ) -> (P, CountState) {
        let step = self.schedule.at(&state.count);
        let updates = tree_map(&updates, |g| step.astype(g.dtype()) * g);
        (
            updates,
            CountState {
                count: safe_increment(&state.count),
            },
        )
    }
}

/// Momentum: a decaying sum of past updates; see [`trace`].
#[derive(Clone, Debug)]
pub struct Trace {
    decay: f64,
    nesterov: bool,
}

/// Momentum (`optax.trace`): `trace = g + decay * trace`; the update is the new trace, or
/// `g + decay * trace` with Nesterov's look-ahead.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::trace(0.5, false);
/// let g = Array::ones(&[1], DType::F32);
/// let (_, s) = opt.update(g.clone(), opt.init(&g), None);
/// let (u, _) = opt.update(g.clone(), s, None);
/// assert_eq!(u.to_vec::<f32>(), vec![1.5]);
/// ```
pub fn trace(decay: f64, nesterov: bool) -> Trace {
    Trace { decay, nesterov }
}

impl GradientTransformation for Trace {
    type State<P: Tree> = TraceState<P>;

    fn init<P: Tree>(&self, params: &P) -> TraceState<P> {
        TraceState {
            trace: tree_map(params, Array::zeros_like),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: TraceState<P>,
        _params: Option<&P>,
    ) -> (P, TraceState<P>) {
        let decay = self.decay;
        let f = |g: &Array, t: &Array| g + t * decay;
        let trace = tree_map2(&updates, &state.trace, f);
        let updates = if self.nesterov {
            tree_map2(&updates, &trace, f)
        } else {
            tree_map(&trace, Array::clone)
        };
        (updates, TraceState { trace })
    }
}

/// Adam's scaling; see [`scale_by_adam`].
#[derive(Clone, Debug)]
pub struct ScaleByAdam {
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    nesterov: bool,
}

/// Adam's rescaling (`optax.scale_by_adam`): moments `mu`, `nu` of the gradients, bias
/// corrected on the incremented count, update `mu_hat / (sqrt(nu_hat + eps_root) + eps)`.
/// No learning rate: see [`adam`].
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::scale_by_adam(0.9, 0.999, 1e-8, 0.0);
/// let g = Array::from_vec(vec![0.5f32, -2.0], &[2]);
/// let (u, state) = opt.update(g.clone(), opt.init(&g), None);
/// // The first step is the sign of the gradient (to float32 rounding of the bias correction).
/// assert!(u.to_vec::<f32>().iter().zip([1.0, -1.0]).all(|(a, b)| (a - b).abs() < 1e-4));
/// assert_eq!(state.count.item::<i32>(), 1);
/// ```
pub fn scale_by_adam(b1: f64, b2: f64, eps: f64, eps_root: f64) -> ScaleByAdam {
    ScaleByAdam {
        b1,
        b2,
        eps,
        eps_root,
        nesterov: false,
    }
}

impl ScaleByAdam {
    /// Nesterov momentum (optax's `nesterov=True`, NAdam): the first moment looks one
    /// step ahead, `b1 * mu_hat(t + 1) + (1 - b1) * g_hat(t)`.
    pub fn nesterov(mut self, nesterov: bool) -> Self {
        self.nesterov = nesterov;
        self
    }
}

impl GradientTransformation for ScaleByAdam {
    type State<P: Tree> = AdamState<P>;

    fn init<P: Tree>(&self, params: &P) -> AdamState<P> {
        AdamState {
            count: zero_count(),
            mu: tree_map(params, Array::zeros_like),
            nu: tree_map(params, Array::zeros_like),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: AdamState<P>,
        _params: Option<&P>,
    ) -> (P, AdamState<P>) {
        let Self {
            b1,
            b2,
            eps,
            eps_root,
            nesterov,
        } = *self;
        let mu = tree_map2(&updates, &state.mu, |g, t| g * (1.0 - b1) + t * b1);
        let nu = tree_map2(&updates, &state.nu, |g, t| g.powi(2) * (1.0 - b2) + t * b2);
        let count = safe_increment(&state.count);
        let mu_hat = if nesterov {
            let next = bias_correction(&mu, b1, &safe_increment(&count));
            let g_hat = bias_correction(&updates, b1, &count);
            tree_map2(&next, &g_hat, |m, g| m * b1 + g * (1.0 - b1))
        } else {
            bias_correction(&mu, b1, &count)
        };
        let nu_hat = bias_correction(&nu, b2, &count);
        let updates = tree_map2(&mu_hat, &nu_hat, |m, v| m / ((v + eps_root).sqrt() + eps));
        (updates, AdamState { count, mu, nu })
    }
}

/// RMSProp's scaling; see [`scale_by_rms`].
#[derive(Clone, Debug)]
pub struct ScaleByRms {
    decay: f64,
    eps: f64,
    initial_scale: f64,
    eps_in_sqrt: bool,
    bias_correction: bool,
}

/// RMSProp's rescaling (`optax.scale_by_rms`, eps inside the square root, no bias
/// correction): `nu = (1 - decay) g^2 + decay nu`, update `g * rsqrt(nu + eps)`.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::scale_by_rms(0.75, 0.0, 0.0);
/// let g = Array::from_vec(vec![2.0f32], &[1]);
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// assert!((u.to_vec::<f32>()[0] - 2.0).abs() < 1e-6); // 2 / sqrt(0.25 * 4)
/// ```
pub fn scale_by_rms(decay: f64, eps: f64, initial_scale: f64) -> ScaleByRms {
    ScaleByRms {
        decay,
        eps,
        initial_scale,
        eps_in_sqrt: true,
        bias_correction: false,
    }
}

impl ScaleByRms {
    /// `eps` inside the square root (the default), or added after it:
    /// `g / (sqrt(nu) + eps)`.
    pub fn eps_in_sqrt(mut self, eps_in_sqrt: bool) -> Self {
        self.eps_in_sqrt = eps_in_sqrt;
        self
    }

    /// Debias `nu` as Adam does (off by default); the state then keeps a count.
    pub fn bias_correction(mut self, bias_correction: bool) -> Self {
        self.bias_correction = bias_correction;
        self
    }
}

impl GradientTransformation for ScaleByRms {
    type State<P: Tree> = RmsState<P>;

    fn init<P: Tree>(&self, params: &P) -> RmsState<P> {
        RmsState {
            count: self.bias_correction.then(zero_count),
            nu: tree_map(params, |p| {
                Array::full(p.shape(), self.initial_scale, p.dtype())
            }),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: RmsState<P>,
        _params: Option<&P>,
    ) -> (P, RmsState<P>) {
        let Self {
            decay,
            eps,
            eps_in_sqrt,
            ..
        } = *self;
        let nu = tree_map2(&updates, &state.nu, |g, t| {
            g.powi(2) * (1.0 - decay) + t * decay
        });
        let count = state.count.as_ref().map(safe_increment);
        let nu_hat = match &count {
            Some(c) => bias_correction(&nu, decay, c),
            None => tree_math::tree_clone(&nu),
        };
        let updates = tree_map2(&nu_hat, &updates, |n, g| {
            if eps_in_sqrt {
                (n + eps).rsqrt() * g
            } else {
                1.0 / (n.sqrt() + eps) * g
            }
        });
        (updates, RmsState { count, nu })
    }
}

/// Global-norm clipping; see [`clip_by_global_norm`].
#[derive(Clone, Debug)]
pub struct ClipByGlobalNorm {
    max_norm: f64,
}

/// Rescales the updates so that their global norm (over all leaves) is at most `max_norm`
/// (`optax.clip_by_global_norm`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::clip_by_global_norm(1.0);
/// let g = (Array::from_vec(vec![3.0f32], &[1]), Array::from_vec(vec![4.0f32], &[1]));
/// let (u, ()) = opt.update(g, (), None);
/// assert!((u.0.to_vec::<f32>()[0] - 0.6).abs() < 1e-6);
/// assert!((u.1.to_vec::<f32>()[0] - 0.8).abs() < 1e-6);
/// ```
pub fn clip_by_global_norm(max_norm: f64) -> ClipByGlobalNorm {
    ClipByGlobalNorm { max_norm }
}

/// The L2 norm of all the leaves of a tree together (`optax.tree.norm`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let t = (Array::from_vec(vec![3.0f32], &[1]), Array::from_vec(vec![4.0f32], &[1]));
/// assert_eq!(jaxrs::optim::global_norm(&t).item::<f32>(), 5.0);
/// ```
pub fn global_norm<P: Tree>(tree: &P) -> Array {
    let (leaves, _) = tree.flatten();
    let squares = leaves.iter().map(|x| (x * x).sum(None, false));
    squares
        .fold(Array::weak_scalar(0i32), |acc, s| acc + s)
        .sqrt()
}

impl GradientTransformation for ClipByGlobalNorm {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        let max_norm = self.max_norm;
        let norm = global_norm(&updates);
        let keep = norm.lt(max_norm);
        let updates = tree_map(&updates, |t| {
            where_(&keep, t, (t / norm.astype(t.dtype())) * max_norm)
        });
        (updates, ())
    }
}

/// Which parameters a transformation applies to (weight decay usually skips biases and
/// norms' scales).
///
/// ```
/// use jaxrs::optim::Mask;
///
/// // Decay only the leaves whose path ends in `.w` or is `w`.
/// let mask = Mask::paths(|path| path == "w" || path.ends_with(".w"));
/// ```
#[derive(Clone)]
pub enum Mask {
    /// Every leaf.
    All,
    /// One flag per leaf, in leaf order.
    Leaves(Vec<bool>),
    /// A predicate on each leaf's path as [`tree_paths`] writes it
    /// (`layers.0.w`).
    Paths(Arc<dyn Fn(&str) -> bool + Send + Sync>),
}

impl Mask {
    /// The leaves whose path satisfies `predicate`.
    pub fn paths(predicate: impl Fn(&str) -> bool + Send + Sync + 'static) -> Mask {
        Mask::Paths(Arc::new(predicate))
    }

    /// The leaves where `tree` (of the parameters' structure, with boolean leaves such as
    /// `Array::scalar(true)` or Rust `bool`s) is true.
    ///
    /// A Rust `bool` in a tree is a static value, not a leaf (see [`Tree`]), but in a mask it
    /// stands for the parameter at its place, as a Python bool does in optax's mask: each
    /// array leaf and each `bool` gives one flag, in tree order; other static values (a
    /// scale, a name) give none.
    ///
    /// ```
    /// use jaxrs::optim::Mask;
    /// use jaxrs::prelude::*;
    ///
    /// #[derive(Tree)]
    /// struct Flags { w: bool, b: bool }
    /// let mask = Mask::from_tree(&Flags { w: true, b: false });
    /// assert!(matches!(mask, Mask::Leaves(ref v) if v == &[true, false]));
    /// ```
    pub fn from_tree<T: Tree>(tree: &T) -> Mask {
        fn walk(def: &TreeDef, leaves: &mut std::vec::IntoIter<Array>, out: &mut Vec<bool>) {
            match def {
                TreeDef::Leaf | TreeDef::Scalar(_) => {
                    let leaf = leaves.next().expect("one leaf per leaf of the structure");
                    out.push(leaf.astype(DType::Bool).item::<bool>());
                }
                TreeDef::Static(StaticValue::Bool(flag)) => out.push(*flag),
                TreeDef::Static(_) | TreeDef::None => {}
                TreeDef::Some(t) => walk(t, leaves, out),
                TreeDef::Tuple(c) | TreeDef::List(c) | TreeDef::FixedArray(c) => {
                    c.iter().for_each(|t| walk(t, leaves, out))
                }
                TreeDef::Map(c) => c.iter().for_each(|(_, t)| walk(t, leaves, out)),
                TreeDef::Struct { fields, .. } => {
                    fields.iter().for_each(|(_, t)| walk(t, leaves, out))
                }
            }
        }
        let (leaves, def) = tree.flatten();
        let mut flags = Vec::new();
        walk(&def, &mut leaves.into_iter(), &mut flags);
        Mask::Leaves(flags)
    }

    /// One flag per leaf of `params`.
    fn flags<P: Tree>(&self, params: &P) -> Vec<bool> {
        let n = params.structure().num_leaves();
        match self {
            Mask::All => vec![true; n],
            Mask::Leaves(v) => {
                assert_eq!(
                    v.len(),
                    n,
                    "mask: {} flags for a tree of {n} leaves",
                    v.len()
                );
                v.clone()
            }
            Mask::Paths(f) => tree_paths(params).iter().map(|p| f(p)).collect(),
        }
    }
}

impl fmt::Debug for Mask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mask::All => f.write_str("Mask::All"),
            Mask::Leaves(v) => write!(f, "Mask::Leaves({v:?})"),
            Mask::Paths(_) => f.write_str("Mask::Paths(..)"),
        }
    }
}

/// Decoupled weight decay; see [`add_decayed_weights`].
#[derive(Clone, Debug)]
pub struct AddDecayedWeights {
    weight_decay: f64,
    mask: Mask,
}

/// Adds `weight_decay * params` to the updates of the leaves in `mask`
/// (`optax.add_decayed_weights`, with `optax.masked`). Needs the parameters in `update`.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation, Mask};
/// use jaxrs::prelude::*;
///
/// let opt = optim::add_decayed_weights(0.5, Mask::Leaves(vec![true, false]));
/// let params = (Array::ones(&[1], DType::F32), Array::ones(&[1], DType::F32));
/// let grads = (Array::zeros(&[1], DType::F32), Array::zeros(&[1], DType::F32));
/// let (u, ()) = opt.update(grads, (), Some(&params));
/// assert_eq!((u.0.to_vec::<f32>()[0], u.1.to_vec::<f32>()[0]), (0.5, 0.0));
/// ```
pub fn add_decayed_weights(weight_decay: f64, mask: Mask) -> AddDecayedWeights {
    AddDecayedWeights { weight_decay, mask }
}

impl GradientTransformation for AddDecayedWeights {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    #[track_caller]
    fn update<P: Tree>(&self, updates: P, _state: (), params: Option<&P>) -> (P, ()) {
        let params =
            params.expect("add_decayed_weights: update needs the parameters (pass Some(&params))");
        if self.weight_decay == 0.0 {
            return (updates, ());
        }
        let flags = self.mask.flags(params);
        let (g, def) = updates.flatten();
        let (p, pdef) = params.flatten();
        assert_eq!(
            def, pdef,
            "add_decayed_weights: updates and params differ in structure"
        );
        let out = g
            .iter()
            .zip(&p)
            .zip(flags)
            .map(|((g, p), on)| {
                if on {
                    g + p * self.weight_decay
                } else {
                    g.clone()
                }
            })
            .collect();
        (tree_unflatten(&def, out), ())
    }
}

// ---------------------------------------------------------------------------------------
// Optimizers.

/// [`sgd`]'s type.
pub type Sgd = ScaleByLearningRate;
/// [`momentum`]'s and [`nesterov`]'s type.
pub type Momentum = Chain<(Trace, ScaleByLearningRate)>;
/// [`adam`]'s type.
pub type Adam = Chain<(ScaleByAdam, ScaleByLearningRate)>;
/// [`adamw`]'s type.
pub type AdamW = Chain<(ScaleByAdam, AddDecayedWeights, ScaleByLearningRate)>;

/// Plain gradient descent: `updates = -learning_rate * grads` (`optax.sgd`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::sgd(0.5);
/// let params = Array::from_vec(vec![1.0f32], &[1]);
/// let (u, _) = opt.update(Array::from_vec(vec![2.0f32], &[1]), opt.init(&params), None);
/// assert_eq!(optim::apply_updates(&params, &u).to_vec::<f32>(), vec![0.0]);
/// ```
pub fn sgd(learning_rate: impl Into<LearningRate>) -> Sgd {
    scale_by_learning_rate(learning_rate)
}

/// SGD with momentum (`optax.sgd(learning_rate, momentum=momentum)`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::momentum(1.0, 0.9);
/// let g = Array::ones(&[1], DType::F32);
/// let (_, s) = opt.update(g.clone(), opt.init(&g), None);
/// let (u, _) = opt.update(g.clone(), s, None);
/// assert!((u.to_vec::<f32>()[0] + 1.9).abs() < 1e-6);
/// ```
pub fn momentum(learning_rate: impl Into<LearningRate>, momentum: f64) -> Momentum {
    chain((
        trace(momentum, false),
        scale_by_learning_rate(learning_rate),
    ))
}

/// SGD with Nesterov momentum (`optax.sgd(learning_rate, momentum, nesterov=True)`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::nesterov(1.0, 0.9);
/// let g = Array::ones(&[1], DType::F32);
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// assert!((u.to_vec::<f32>()[0] + 1.9).abs() < 1e-6); // g + 0.9 * (g + 0.9 * 0)
/// ```
pub fn nesterov(learning_rate: impl Into<LearningRate>, momentum: f64) -> Momentum {
    chain((trace(momentum, true), scale_by_learning_rate(learning_rate)))
}

/// Adam (`optax.adam`; optax's defaults are `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-8`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::adam(0.1, 0.9, 0.999, 1e-8);
/// let params = Array::from_vec(vec![1.0f32, 1.0], &[2]);
/// let grads = Array::from_vec(vec![5.0f32, -0.01], &[2]);
/// let (u, _) = opt.update(grads, opt.init(&params), None);
/// let stepped = optim::apply_updates(&params, &u).to_vec::<f32>();
/// assert!((stepped[0] - 0.9).abs() < 1e-5 && (stepped[1] - 1.1).abs() < 1e-5);
/// ```
pub fn adam(learning_rate: impl Into<LearningRate>, b1: f64, b2: f64, eps: f64) -> Adam {
    chain((
        scale_by_adam(b1, b2, eps, 0.0),
        scale_by_learning_rate(learning_rate),
    ))
}

/// AdamW: Adam with decoupled weight decay on the leaves in `mask` (`optax.adamw`; its
/// default `weight_decay` is `1e-4`). Needs the parameters in `update`.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation, Mask};
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Params { w: Array, b: Array }
///
/// // Decay the weights, not the biases.
/// let opt = optim::adamw(1e-3, 0.9, 0.999, 1e-8, 0.01, Mask::paths(|p| p.ends_with('w')));
/// let params = Params { w: Array::ones(&[2, 2], DType::F32), b: Array::ones(&[2], DType::F32) };
/// let zero_grads = Params { w: Array::zeros(&[2, 2], DType::F32), b: Array::zeros(&[2], DType::F32) };
/// let (u, _state) = opt.update(zero_grads, opt.init(&params), Some(&params));
/// assert!((u.w.to_vec::<f32>()[0] + 1e-5).abs() < 1e-9);
/// assert_eq!(u.b.to_vec::<f32>(), vec![0.0, 0.0]);
/// ```
pub fn adamw(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    eps: f64,
    weight_decay: f64,
    mask: Mask,
) -> AdamW {
    chain((
        scale_by_adam(b1, b2, eps, 0.0),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate),
    ))
}

/// RMSProp (`optax.rmsprop`; optax's defaults are `decay = 0.9`, `eps = 1e-8`). The
/// builder methods of [`RmsProp`] give optax's other options: `.centered(true)`,
/// `.momentum(m)`, `.nesterov(true)`, `.eps_in_sqrt(false)`, `.bias_correction(true)`,
/// `.initial_scale(s)`.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::rmsprop(0.01, 0.9, 1e-8);
/// let g = Array::from_vec(vec![3.0f32], &[1]);
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// // 3 / sqrt(0.1 * 9) * -0.01
/// assert!((u.to_vec::<f32>()[0] + 0.0316228).abs() < 1e-6);
/// ```
pub fn rmsprop(learning_rate: impl Into<LearningRate>, decay: f64, eps: f64) -> RmsProp {
    rmsprop_with(learning_rate.into(), decay, eps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_increment_saturates() {
        assert_eq!(
            safe_increment(&Array::scalar(i32::MAX)).item::<i32>(),
            i32::MAX
        );
        assert_eq!(safe_increment(&Array::scalar(4i32)).item::<i32>(), 5);
    }
}
