//! optax's other optimizers (`optax.adagrad` ... `optax.yogi`): each the chain of its
//! `scale_by_*` rescaling, its weight decay and its learning rate, as optax composes it.
//! Arguments are optax's, in optax's order (its keyword-only and dtype options left out).

use super::scale_by::*;
use super::transforms::{ema, scale, Ema, Scale};
use super::wrappers::{masked, Masked};
use super::{
    add_decayed_weights, chain, scale_by_adam, scale_by_learning_rate, trace, AddDecayedWeights,
    Chain, CountState, GradientTransformation, LearningRate, Mask, ScaleByAdam,
    ScaleByLearningRate, Trace,
};
use super::{clip_by_block_rms, ClipByBlockRms};
use crate::Tree;

/// [`adabelief`]'s type.
pub type AdaBelief = Chain<(ScaleByBelief, ScaleByLearningRate)>;
/// [`adadelta`]'s type.
pub type AdaDelta = Chain<(AddDecayedWeights, ScaleByAdaDelta, ScaleByLearningRate)>;
/// [`adagrad`]'s type.
pub type Adagrad = Chain<(ScaleByRss, ScaleByLearningRate)>;
/// [`adamax`]'s type.
pub type Adamax = Chain<(ScaleByAdamax, ScaleByLearningRate)>;
/// [`adamaxw`]'s type.
pub type AdamaxW = Chain<(ScaleByAdamax, AddDecayedWeights, ScaleByLearningRate)>;
/// [`adan`]'s type.
pub type Adan = Chain<(ScaleByAdan, AddDecayedWeights, ScaleByLearningRate)>;
/// [`amsgrad`]'s type.
pub type Amsgrad = Chain<(ScaleByAmsgrad, ScaleByLearningRate)>;
/// [`fromage`]'s type.
pub type Fromage = Chain<(ScaleByTrustRatio, ScaleByLearningRate, AddDecayedWeights)>;
/// [`lamb`]'s type.
pub type Lamb = Chain<(
    ScaleByAdam,
    AddDecayedWeights,
    ScaleByTrustRatio,
    ScaleByLearningRate,
)>;
/// [`lars`]'s type.
pub type Lars = Chain<(
    AddDecayedWeights,
    Masked<ScaleByTrustRatio>,
    ScaleByLearningRate,
    Trace,
)>;
/// [`lion`]'s type.
pub type Lion = Chain<(ScaleByLion, AddDecayedWeights, ScaleByLearningRate)>;
/// [`nadam`]'s type.
pub type NAdam = Chain<(ScaleByAdam, ScaleByLearningRate)>;
/// [`nadamw`]'s type.
pub type NAdamW = Chain<(ScaleByAdam, AddDecayedWeights, ScaleByLearningRate)>;
/// [`novograd`]'s type.
pub type Novograd = Chain<(ScaleByNovograd, ScaleByLearningRate)>;
/// [`optimistic_gradient_descent`]'s type.
pub type OptimisticGradientDescent = Chain<(ScaleByOptimisticGradient, ScaleByLearningRate)>;
/// [`optimistic_adam`]'s and [`optimistic_adam_v2`]'s type.
pub type OptimisticAdam = Chain<(ScaleByAdam, ScaleByOptimisticGradient, ScaleByLearningRate)>;
/// [`radam`]'s type.
pub type RAdam = Chain<(ScaleByRadam, ScaleByLearningRate)>;
/// [`rprop`]'s type.
pub type Rprop = Chain<(ScaleByRprop, Scale)>;
/// [`sign_sgd`]'s type.
pub type SignSgd = Chain<(ScaleBySign, ScaleByLearningRate)>;
/// [`signum`]'s type.
pub type Signum = Chain<(Ema, ScaleBySign, ScaleByLearningRate)>;
/// [`sm3`]'s type.
pub type Sm3 = Chain<(ScaleBySM3, Scale)>;
/// [`yogi`]'s type.
pub type Yogi = Chain<(ScaleByYogi, ScaleByLearningRate)>;

/// AdaBelief (`optax.adabelief`; optax's defaults `b1 = 0.9`, `b2 = 0.999`,
/// `eps = 1e-16`, `eps_root = 1e-16`): Adam stepping by the belief in the gradient.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::adabelief(0.1, 0.9, 0.999, 1e-16, 1e-16);
/// let g = Array::from_vec(vec![1.0f32], &[1]);
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// assert!(u.to_vec::<f32>()[0] < 0.0);
/// ```
pub fn adabelief(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
) -> AdaBelief {
    chain((
        scale_by_belief(b1, b2, eps, eps_root),
        scale_by_learning_rate(learning_rate),
    ))
}

/// AdaDelta (`optax.adadelta`; optax's defaults `rho = 0.9`, `eps = 1e-6`, no weight
/// decay). Needs the parameters in `update` when `weight_decay` is not 0.
pub fn adadelta(
    learning_rate: impl Into<LearningRate>,
    rho: f64,
    eps: f64,
    weight_decay: f64,
    weight_decay_mask: Mask,
) -> AdaDelta {
    chain((
        add_decayed_weights(weight_decay, weight_decay_mask),
        scale_by_adadelta(rho, eps),
        scale_by_learning_rate(learning_rate),
    ))
}

/// Adagrad (`optax.adagrad`; optax's defaults `initial_accumulator_value = 0.1`,
/// `eps = 1e-7`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::adagrad(1.0, 0.0, 0.0);
/// let g = Array::from_vec(vec![2.0f32], &[1]);
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// assert_eq!(u.to_vec::<f32>(), vec![-1.0]); // 2 / sqrt(4)
/// ```
pub fn adagrad(
    learning_rate: impl Into<LearningRate>,
    initial_accumulator_value: f64,
    eps: f64,
) -> Adagrad {
    chain((
        scale_by_rss(initial_accumulator_value, eps),
        scale_by_learning_rate(learning_rate),
    ))
}

/// Adamax (`optax.adamax`; optax's defaults `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-8`).
pub fn adamax(learning_rate: impl Into<LearningRate>, b1: f64, b2: f64, eps: f64) -> Adamax {
    chain((
        scale_by_adamax(b1, b2, eps),
        scale_by_learning_rate(learning_rate),
    ))
}

/// Adamax with decoupled weight decay on the leaves in `mask` (`optax.adamaxw`; optax's
/// default `weight_decay` is `1e-4`). Needs the parameters in `update`.
pub fn adamaxw(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    eps: f64,
    weight_decay: f64,
    mask: Mask,
) -> AdamaxW {
    chain((
        scale_by_adamax(b1, b2, eps),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate),
    ))
}

/// Adan (`optax.adan`; optax's defaults `b1 = 0.98`, `b2 = 0.92`, `b3 = 0.99`,
/// `eps = 1e-8`, `eps_root = 1e-8`, no weight decay). Needs the parameters in `update`
/// when `weight_decay` is not 0.
#[allow(clippy::too_many_arguments)]
pub fn adan(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    b3: f64,
    eps: f64,
    eps_root: f64,
    weight_decay: f64,
    mask: Mask,
) -> Adan {
    chain((
        scale_by_adan(b1, b2, b3, eps, eps_root),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate),
    ))
}

/// AMSGrad (`optax.amsgrad`; optax's defaults `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-8`,
/// `eps_root = 0`).
pub fn amsgrad(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
) -> Amsgrad {
    chain((
        scale_by_amsgrad(b1, b2, eps, eps_root),
        scale_by_learning_rate(learning_rate),
    ))
}

/// Fromage (`optax.fromage`; optax's default `min_norm = 1e-6`): steps relative to each
/// layer's norm, shrunk by `1 / sqrt(1 + lr^2)` so the norms do not grow. Needs the
/// parameters in `update`. A constant learning rate.
pub fn fromage(learning_rate: f64, min_norm: f64) -> Fromage {
    let mult = 1.0 / (1.0 + learning_rate.powi(2)).sqrt();
    chain((
        scale_by_trust_ratio(min_norm, 1.0, 0.0),
        scale_by_learning_rate(learning_rate * mult),
        add_decayed_weights(mult - 1.0, Mask::All),
    ))
}

/// LAMB (`optax.lamb`; optax's defaults `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-6`,
/// `eps_root = 0`, no weight decay): Adam with a layer-wise trust ratio, for large
/// batches. Needs the parameters in `update`.
#[allow(clippy::too_many_arguments)]
pub fn lamb(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    weight_decay: f64,
    mask: Mask,
) -> Lamb {
    chain((
        scale_by_adam(b1, b2, eps, eps_root),
        add_decayed_weights(weight_decay, mask),
        scale_by_trust_ratio(0.0, 1.0, 0.0),
        scale_by_learning_rate(learning_rate),
    ))
}

/// LARS (`optax.lars`; optax's defaults: no weight decay, both masks all leaves,
/// `trust_coefficient = 0.001`, `eps = 0`, `momentum = 0.9`, no Nesterov): SGD with
/// momentum and a layer-wise trust ratio. Needs the parameters in `update`.
#[allow(clippy::too_many_arguments)]
pub fn lars(
    learning_rate: impl Into<LearningRate>,
    weight_decay: f64,
    weight_decay_mask: Mask,
    trust_coefficient: f64,
    eps: f64,
    trust_ratio_mask: Mask,
    momentum: f64,
    nesterov: bool,
) -> Lars {
    chain((
        add_decayed_weights(weight_decay, weight_decay_mask),
        masked(
            scale_by_trust_ratio(0.0, trust_coefficient, eps),
            trust_ratio_mask,
        ),
        scale_by_learning_rate(learning_rate),
        trace(momentum, nesterov),
    ))
}

/// Lion (`optax.lion`; optax's defaults `b1 = 0.9`, `b2 = 0.99`, `weight_decay = 1e-3`):
/// sign updates of an interpolated momentum; use a learning rate 3-10 times smaller than
/// Adam's. Needs the parameters in `update` when `weight_decay` is not 0.
pub fn lion(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    weight_decay: f64,
    mask: Mask,
) -> Lion {
    chain((
        scale_by_lion(b1, b2),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate),
    ))
}

/// NAdam, Adam with Nesterov momentum (`optax.nadam`; Adam's defaults).
pub fn nadam(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
) -> NAdam {
    chain((
        scale_by_adam(b1, b2, eps, eps_root).nesterov(true),
        scale_by_learning_rate(learning_rate),
    ))
}

/// NAdamW: NAdam with decoupled weight decay on the leaves in `mask` (`optax.nadamw`;
/// optax's default `weight_decay` is `1e-4`). Needs the parameters in `update`.
#[allow(clippy::too_many_arguments)]
pub fn nadamw(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    weight_decay: f64,
    mask: Mask,
) -> NAdamW {
    chain((
        scale_by_adam(b1, b2, eps, eps_root).nesterov(true),
        add_decayed_weights(weight_decay, mask),
        scale_by_learning_rate(learning_rate),
    ))
}

/// NovoGrad (`optax.novograd`; optax's defaults `b1 = 0.9`, `b2 = 0.25`, `eps = 1e-6`,
/// `eps_root = 0`, no weight decay). Needs the parameters in `update`.
pub fn novograd(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    weight_decay: f64,
) -> Novograd {
    chain((
        scale_by_novograd(b1, b2, eps, eps_root, weight_decay),
        scale_by_learning_rate(learning_rate),
    ))
}

/// Optimistic gradient descent (`optax.optimistic_gradient_descent`; optax's defaults
/// `alpha = beta = 1`), for min-max games.
pub fn optimistic_gradient_descent(
    learning_rate: impl Into<LearningRate>,
    alpha: f64,
    beta: f64,
) -> OptimisticGradientDescent {
    chain((
        scale_by_optimistic_gradient(alpha, beta),
        scale_by_learning_rate(learning_rate),
    ))
}

/// Optimistic Adam (`optax.optimistic_adam`, deprecated there for
/// [`optimistic_adam_v2`]; `optimism` defaults to the learning rate; Nesterov's Adam as
/// optax's default). A constant learning rate.
pub fn optimistic_adam(
    learning_rate: f64,
    optimism: Option<f64>,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
) -> OptimisticAdam {
    chain((
        scale_by_adam(b1, b2, eps, eps_root).nesterov(true),
        scale_by_optimistic_gradient(learning_rate, optimism.unwrap_or(learning_rate)),
        scale_by_learning_rate(1.0),
    ))
}

/// Optimistic Adam (`optax.optimistic_adam_v2`; optax's defaults `alpha = beta = 1` and
/// Adam's, Nesterov's Adam).
pub fn optimistic_adam_v2(
    learning_rate: impl Into<LearningRate>,
    alpha: f64,
    beta: f64,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
) -> OptimisticAdam {
    chain((
        scale_by_adam(b1, b2, eps, eps_root).nesterov(true),
        scale_by_optimistic_gradient(alpha, beta),
        scale_by_learning_rate(learning_rate),
    ))
}

/// RAdam (`optax.radam`; optax's defaults `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-8`,
/// `eps_root = 0`, `threshold = 5`).
pub fn radam(
    learning_rate: impl Into<LearningRate>,
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    threshold: f64,
) -> RAdam {
    chain((
        scale_by_radam(b1, b2, eps, eps_root, threshold),
        scale_by_learning_rate(learning_rate),
    ))
}

/// Rprop (`optax.rprop`; optax's defaults `eta_minus = 0.5`, `eta_plus = 1.2`,
/// `min_step_size = 1e-6`, `max_step_size = 50`): full-batch training by the gradients'
/// signs only.
pub fn rprop(
    learning_rate: f64,
    eta_minus: f64,
    eta_plus: f64,
    min_step_size: f64,
    max_step_size: f64,
) -> Rprop {
    chain((
        scale_by_rprop(
            learning_rate,
            eta_minus,
            eta_plus,
            min_step_size,
            max_step_size,
        ),
        scale(-1.0),
    ))
}

/// signSGD (`optax.sign_sgd`): steps of `learning_rate` in the direction of the
/// gradient's sign.
pub fn sign_sgd(learning_rate: impl Into<LearningRate>) -> SignSgd {
    chain((scale_by_sign(), scale_by_learning_rate(learning_rate)))
}

/// Signum (`optax.signum`; optax's default `beta = 0.9`): signSGD on a momentum.
pub fn signum(learning_rate: impl Into<LearningRate>, beta: f64) -> Signum {
    chain((
        ema(beta, false),
        scale_by_sign(),
        scale_by_learning_rate(learning_rate),
    ))
}

/// SM3 (`optax.sm3`; optax's default `momentum = 0.9`): Adagrad with memory linear in each
/// leaf's dimensions. A constant learning rate.
pub fn sm3(learning_rate: f64, momentum: f64) -> Sm3 {
    chain((scale_by_sm3(momentum, 1.0, 1e-8), scale(-learning_rate)))
}

/// Yogi (`optax.yogi`; optax's defaults `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-3`).
pub fn yogi(learning_rate: impl Into<LearningRate>, b1: f64, b2: f64, eps: f64) -> Yogi {
    chain((
        scale_by_yogi(b1, b2, eps, 0.0, 1e-6),
        scale_by_learning_rate(learning_rate),
    ))
}

// ---------------------------------------------------------------------------------------
// RMSProp with its options.

/// RMSProp with optax's options; see [`rmsprop`](super::rmsprop).
#[derive(Clone, Debug)]
pub struct RmsProp {
    learning_rate: LearningRate,
    decay: f64,
    eps: f64,
    initial_scale: f64,
    eps_in_sqrt: bool,
    centered: bool,
    momentum: Option<f64>,
    nesterov: bool,
    bias_correction: bool,
}

/// The state of [`RmsProp`]: the rescaling's (plain or centered, the other `None`), the
/// learning rate's count (with a schedule) and the momentum (with `momentum`).
#[derive(Tree, Clone, Debug)]
pub struct RmsPropState<P> {
    /// [`scale_by_rms`](super::scale_by_rms)'s state, when not centered.
    pub rms: Option<super::RmsState<P>>,
    /// [`scale_by_stddev`]'s state, when centered.
    pub stddev: Option<ScaleByRStdDevState<P>>,
    /// The learning rate schedule's count.
    pub learning_rate: Option<CountState>,
    /// The momentum, when `momentum` is set.
    pub trace: Option<super::TraceState<P>>,
}

pub(super) fn rmsprop_with(learning_rate: LearningRate, decay: f64, eps: f64) -> RmsProp {
    RmsProp {
        learning_rate,
        decay,
        eps,
        initial_scale: 0.0,
        eps_in_sqrt: true,
        centered: false,
        momentum: None,
        nesterov: false,
        bias_correction: false,
    }
}

impl RmsProp {
    /// The accumulator's initial value (optax's `initial_scale`, 0 by default).
    pub fn initial_scale(mut self, initial_scale: f64) -> Self {
        self.initial_scale = initial_scale;
        self
    }

    /// `eps` inside the square root (the default) or added after it.
    pub fn eps_in_sqrt(mut self, eps_in_sqrt: bool) -> Self {
        self.eps_in_sqrt = eps_in_sqrt;
        self
    }

    /// Centered RMSProp: divide by the gradients' running standard deviation.
    pub fn centered(mut self, centered: bool) -> Self {
        self.centered = centered;
        self
    }

    /// Momentum after the learning rate (optax's `momentum`).
    pub fn momentum(mut self, momentum: f64) -> Self {
        self.momentum = Some(momentum);
        self
    }

    /// Nesterov momentum (with [`RmsProp::momentum`]).
    pub fn nesterov(mut self, nesterov: bool) -> Self {
        self.nesterov = nesterov;
        self
    }

    /// Debias the moments as Adam does.
    pub fn bias_correction(mut self, bias_correction: bool) -> Self {
        self.bias_correction = bias_correction;
        self
    }

    fn rms(&self) -> super::ScaleByRms {
        super::scale_by_rms(self.decay, self.eps, self.initial_scale)
            .eps_in_sqrt(self.eps_in_sqrt)
            .bias_correction(self.bias_correction)
    }

    fn stddev(&self) -> ScaleByStddev {
        scale_by_stddev(self.decay, self.eps, self.initial_scale)
            .eps_in_sqrt(self.eps_in_sqrt)
            .bias_correction(self.bias_correction)
    }

    fn lr(&self) -> ScaleByLearningRate {
        scale_by_learning_rate(self.learning_rate.clone())
    }

    fn trace(&self) -> Option<Trace> {
        self.momentum.map(|m| trace(m, self.nesterov))
    }
}

impl GradientTransformation for RmsProp {
    type State<P: Tree> = RmsPropState<P>;

    fn init<P: Tree>(&self, params: &P) -> RmsPropState<P> {
        RmsPropState {
            rms: (!self.centered).then(|| self.rms().init(params)),
            stddev: self.centered.then(|| self.stddev().init(params)),
            learning_rate: self.lr().init(params),
            trace: self.trace().map(|t| t.init(params)),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: RmsPropState<P>,
        params: Option<&P>,
    ) -> (P, RmsPropState<P>) {
        let (updates, rms, stddev) = if self.centered {
            let s = state.stddev.expect("centered RMSProp's state");
            let (u, s) = self.stddev().update(updates, s, params);
            (u, None, Some(s))
        } else {
            let s = state.rms.expect("RMSProp's state");
            let (u, s) = self.rms().update(updates, s, params);
            (u, Some(s), None)
        };
        let (updates, learning_rate) = self.lr().update(updates, state.learning_rate, params);
        let (updates, trace) = match (self.trace(), state.trace) {
            (Some(t), Some(s)) => {
                let (u, s) = t.update(updates, s, params);
                (u, Some(s))
            }
            _ => (updates, None),
        };
        (
            updates,
            RmsPropState {
                rms,
                stddev,
                learning_rate,
                trace,
            },
        )
    }
}

// ---------------------------------------------------------------------------------------
// Adafactor.

/// Adafactor with optax's options; see [`adafactor`].
#[derive(Clone, Debug)]
pub struct Adafactor {
    learning_rate: Option<LearningRate>,
    min_dim_size_to_factor: usize,
    decay_rate: f64,
    decay_offset: i32,
    multiply_by_parameter_scale: bool,
    clipping_threshold: Option<f64>,
    momentum: Option<f64>,
    weight_decay_rate: Option<f64>,
    eps: f64,
    factored: bool,
    weight_decay_mask: Mask,
}

/// The state of [`adafactor`]: the factored moments, the learning rate's count (with a
/// schedule) and the momentum (with `momentum`).
#[derive(Tree, Clone, Debug)]
pub struct AdafactorState<P> {
    /// [`scale_by_factored_rms`]'s state.
    pub factored: FactoredState<P>,
    /// The learning rate schedule's count.
    pub learning_rate: Option<CountState>,
    /// The momentum, when `momentum` is set.
    pub momentum: Option<super::EmaState<P>>,
}

/// Adafactor (`optax.adafactor`): factored second moments, updates clipped by their RMS
/// and scaled by the parameters' RMS. The builder methods give optax's options, with its
/// defaults: `min_dim_size_to_factor = 128`, `decay_rate = 0.8`, `decay_offset = 0`,
/// `multiply_by_parameter_scale = true`, `clipping_threshold = Some(1.0)`, no momentum, no
/// weight decay, `eps = 1e-30`, `factored = true`. Needs the parameters in `update`.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::adafactor(1e-2).min_dim_size_to_factor(2).momentum(Some(0.9));
/// let p = Array::ones(&[2, 3], DType::F32);
/// let (u, _) = opt.update(Array::ones(&[2, 3], DType::F32), opt.init(&p), Some(&p));
/// assert!(u.to_vec::<f32>().iter().all(|&x| x < 0.0));
/// ```
pub fn adafactor(learning_rate: impl Into<LearningRate>) -> Adafactor {
    Adafactor {
        learning_rate: Some(learning_rate.into()),
        min_dim_size_to_factor: 128,
        decay_rate: 0.8,
        decay_offset: 0,
        multiply_by_parameter_scale: true,
        clipping_threshold: Some(1.0),
        momentum: None,
        weight_decay_rate: None,
        eps: 1e-30,
        factored: true,
        weight_decay_mask: Mask::All,
    }
}

impl Adafactor {
    /// Leaves whose second largest dimension is smaller are not factored.
    pub fn min_dim_size_to_factor(mut self, n: usize) -> Self {
        self.min_dim_size_to_factor = n;
        self
    }
    /// The exponent of the decay rate's schedule `1 - (t + 1)^-decay_rate`.
    pub fn decay_rate(mut self, decay_rate: f64) -> Self {
        self.decay_rate = decay_rate;
        self
    }
    /// Steps subtracted from the count in the decay rate's schedule.
    pub fn decay_offset(mut self, decay_offset: i32) -> Self {
        self.decay_offset = decay_offset;
        self
    }
    /// Scale the updates by the parameters' RMS (Adafactor's relative step).
    pub fn multiply_by_parameter_scale(mut self, on: bool) -> Self {
        self.multiply_by_parameter_scale = on;
        self
    }
    /// Clip each leaf's updates to this RMS (`None`: no clipping).
    pub fn clipping_threshold(mut self, threshold: Option<f64>) -> Self {
        self.clipping_threshold = threshold;
        self
    }
    /// An exponential moving average of the updates (`None`: none).
    pub fn momentum(mut self, momentum: Option<f64>) -> Self {
        self.momentum = momentum;
        self
    }
    /// Decoupled weight decay (`None`: none), on the leaves of
    /// [`Adafactor::weight_decay_mask`].
    pub fn weight_decay_rate(mut self, rate: Option<f64>) -> Self {
        self.weight_decay_rate = rate;
        self
    }
    /// The leaves weight decay applies to.
    pub fn weight_decay_mask(mut self, mask: Mask) -> Self {
        self.weight_decay_mask = mask;
        self
    }
    /// Added to the squared gradients.
    pub fn eps(mut self, eps: f64) -> Self {
        self.eps = eps;
        self
    }
    /// Whether to factor at all.
    pub fn factored(mut self, factored: bool) -> Self {
        self.factored = factored;
        self
    }

    fn rms(&self) -> ScaleByFactoredRms {
        scale_by_factored_rms(
            self.factored,
            self.decay_rate,
            self.decay_offset,
            self.min_dim_size_to_factor,
            self.eps,
        )
    }

    fn lr(&self) -> Option<ScaleByLearningRate> {
        self.learning_rate
            .clone()
            .map(|lr| scale_by_learning_rate(lr).flip_sign(false))
    }
}

impl GradientTransformation for Adafactor {
    type State<P: Tree> = AdafactorState<P>;

    fn init<P: Tree>(&self, params: &P) -> AdafactorState<P> {
        AdafactorState {
            factored: self.rms().init(params),
            learning_rate: self.lr().and_then(|lr| lr.init(params)),
            momentum: self.momentum.map(|m| ema(m, false).init(params)),
        }
    }

    #[track_caller]
    fn update<P: Tree>(
        &self,
        updates: P,
        state: AdafactorState<P>,
        params: Option<&P>,
    ) -> (P, AdafactorState<P>) {
        let (mut updates, factored) = self.rms().update(updates, state.factored, params);
        if let Some(t) = self.clipping_threshold {
            let c: ClipByBlockRms = clip_by_block_rms(t);
            updates = c.update(updates, (), params).0;
        }
        let mut learning_rate = None;
        if let Some(lr) = self.lr() {
            let (u, s) = lr.update(updates, state.learning_rate, params);
            updates = u;
            learning_rate = s;
        }
        if self.multiply_by_parameter_scale {
            updates = scale_by_param_block_rms(1e-3).update(updates, (), params).0;
        }
        let mut momentum = None;
        if let (Some(m), Some(s)) = (self.momentum, state.momentum) {
            let (u, s) = ema(m, false).update(updates, s, params);
            updates = u;
            momentum = Some(s);
        }
        if let Some(rate) = self.weight_decay_rate {
            updates = add_decayed_weights(rate, self.weight_decay_mask.clone())
                .update(updates, (), params)
                .0;
        }
        let updates = scale(-1.0).update(updates, (), params).0;
        (
            updates,
            AdafactorState {
                factored,
                learning_rate,
                momentum,
            },
        )
    }
}
