//! optax's `scale_by_*` building blocks beyond Adam and RMSProp: the rescalings the other
//! optimizers are chains of. Each follows optax 0.2.8 operation by operation.

use super::tree_math::{l2, safe_norm, safe_root_mean_squares, tree_clone, tree_map_n};
use super::{
    bias_correction, safe_increment, update_infinity_moment, update_moment, zero_count, AdamState,
    GradientTransformation,
};
use crate::{tree_map, tree_map2, where_, Array, DType, Tree};

fn zeros<P: Tree>(params: &P) -> P {
    tree_map(params, Array::zeros_like)
}

fn full<P: Tree>(params: &P, value: f64) -> P {
    tree_map(params, |p| Array::full(p.shape(), value, p.dtype()))
}

#[track_caller]
fn need_params<'p, P>(params: Option<&'p P>, op: &str) -> &'p P {
    params.unwrap_or_else(|| panic!("{op}: update needs the parameters (pass Some(&params))"))
}

/// Nesterov's bias-corrected first moment, as optax's Adam-family `nesterov=True`:
/// `b1 * mu_hat(count + 1) + (1 - b1) * g_hat(count)`.
fn nesterov_mu_hat<P: Tree>(mu: &P, updates: &P, b1: f64, count_inc: &Array) -> P {
    let next = bias_correction(mu, b1, &safe_increment(count_inc));
    let g_hat = bias_correction(updates, b1, count_inc);
    tree_map2(&next, &g_hat, |m, g| m * b1 + g * (1.0 - b1))
}

// ---------------------------------------------------------------------------------------
// Adagrad.

/// The state of [`scale_by_rss`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByRssState<P> {
    /// The running sum of squared gradients.
    pub sum_of_squares: P,
}

/// Adagrad's scaling; see [`scale_by_rss`].
#[derive(Clone, Debug)]
pub struct ScaleByRss {
    initial_accumulator_value: f64,
    eps: f64,
}

/// Adagrad's rescaling (`optax.scale_by_rss`): divides by the root of the sum of all past
/// squared gradients, `g / sqrt(sum g^2 + eps)` (0 where the sum is 0).
pub fn scale_by_rss(initial_accumulator_value: f64, eps: f64) -> ScaleByRss {
    ScaleByRss {
        initial_accumulator_value,
        eps,
    }
}

impl GradientTransformation for ScaleByRss {
    type State<P: Tree> = ScaleByRssState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByRssState<P> {
        ScaleByRssState {
            sum_of_squares: full(params, self.initial_accumulator_value),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByRssState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByRssState<P>) {
        let eps = self.eps;
        let sum_of_squares = tree_map2(&updates, &state.sum_of_squares, |g, t| g * g + t);
        let inv = tree_map(&sum_of_squares, |t| {
            where_(t.gt(0.0), (t + eps).rsqrt(), 0.0)
        });
        let updates = tree_map2(&inv, &updates, |s, g| s * g);
        (updates, ScaleByRssState { sum_of_squares })
    }
}

// ---------------------------------------------------------------------------------------
// Centered RMSProp.

/// The state of [`scale_by_stddev`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByRStdDevState<P> {
    /// Updates done so far (`i32` scalar), kept only with bias correction.
    pub count: Option<Array>,
    /// The running mean of the gradients.
    pub mu: P,
    /// The running mean of the squared gradients.
    pub nu: P,
}

/// Centered RMSProp's scaling; see [`scale_by_stddev`].
#[derive(Clone, Debug)]
pub struct ScaleByStddev {
    decay: f64,
    eps: f64,
    initial_scale: f64,
    eps_in_sqrt: bool,
    bias_correction: bool,
}

/// Centered RMSProp's rescaling (`optax.scale_by_stddev`): divides by the running standard
/// deviation of the gradients, `g / sqrt(nu - mu^2 + eps)`. The builder methods give
/// optax's `eps_in_sqrt` and `bias_correction` options.
pub fn scale_by_stddev(decay: f64, eps: f64, initial_scale: f64) -> ScaleByStddev {
    ScaleByStddev {
        decay,
        eps,
        initial_scale,
        eps_in_sqrt: true,
        bias_correction: false,
    }
}

impl ScaleByStddev {
    /// `eps` inside the square root (the default) or added after it.
    pub fn eps_in_sqrt(mut self, eps_in_sqrt: bool) -> Self {
        self.eps_in_sqrt = eps_in_sqrt;
        self
    }

    /// Whether to debias the moments as Adam does (off by default).
    pub fn bias_correction(mut self, bias_correction: bool) -> Self {
        self.bias_correction = bias_correction;
        self
    }
}

impl GradientTransformation for ScaleByStddev {
    type State<P: Tree> = ScaleByRStdDevState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByRStdDevState<P> {
        ScaleByRStdDevState {
            count: self.bias_correction.then(zero_count),
            mu: zeros(params),
            nu: full(params, self.initial_scale),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByRStdDevState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByRStdDevState<P>) {
        let (decay, eps) = (self.decay, self.eps);
        let mu = update_moment(&updates, &state.mu, decay, 1);
        let nu = update_moment(&updates, &state.nu, decay, 2);
        let count = state.count.as_ref().map(safe_increment);
        let (mu_hat, nu_hat) = match &count {
            Some(c) => (
                bias_correction(&mu, decay, c),
                bias_correction(&nu, decay, c),
            ),
            None => (tree_clone(&mu), tree_clone(&nu)),
        };
        let eps_in_sqrt = self.eps_in_sqrt;
        let scaling = tree_map2(&mu_hat, &nu_hat, |m, n| {
            if eps_in_sqrt {
                (n - m * m + eps).rsqrt()
            } else {
                1.0 / ((n - m * m).sqrt() + eps)
            }
        });
        let updates = tree_map2(&scaling, &updates, |s, g| s * g);
        (updates, ScaleByRStdDevState { count, mu, nu })
    }
}

// ---------------------------------------------------------------------------------------
// AMSGrad, Adamax, Yogi, RAdam, AdaBelief, Adan.

/// The state of [`scale_by_amsgrad`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByAmsgradState<P> {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
    /// The first moment.
    pub mu: P,
    /// The second moment.
    pub nu: P,
    /// The largest bias-corrected second moment seen.
    pub nu_max: P,
}

/// AMSGrad's scaling; see [`scale_by_amsgrad`].
#[derive(Clone, Debug)]
pub struct ScaleByAmsgrad {
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
}

/// AMSGrad's rescaling (`optax.scale_by_amsgrad`): Adam dividing by the largest
/// bias-corrected second moment so far, so the step size never grows back.
pub fn scale_by_amsgrad(b1: f64, b2: f64, eps: f64, eps_root: f64) -> ScaleByAmsgrad {
    ScaleByAmsgrad {
        b1,
        b2,
        eps,
        eps_root,
    }
}

impl GradientTransformation for ScaleByAmsgrad {
    type State<P: Tree> = ScaleByAmsgradState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByAmsgradState<P> {
        ScaleByAmsgradState {
            count: zero_count(),
            mu: zeros(params),
            nu: zeros(params),
            nu_max: zeros(params),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByAmsgradState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByAmsgradState<P>) {
        let Self {
            b1,
            b2,
            eps,
            eps_root,
        } = *self;
        let mu = update_moment(&updates, &state.mu, b1, 1);
        let nu = update_moment(&updates, &state.nu, b2, 2);
        let count = safe_increment(&state.count);
        let mu_hat = bias_correction(&mu, b1, &count);
        let nu_hat = bias_correction(&nu, b2, &count);
        let nu_max = tree_map2(&state.nu_max, &nu_hat, |a, b| a.maximum(b));
        let updates = tree_map2(&mu_hat, &nu_max, |m, v| m / ((v + eps_root).sqrt() + eps));
        (
            updates,
            ScaleByAmsgradState {
                count,
                mu,
                nu,
                nu_max,
            },
        )
    }
}

/// Adamax's scaling; see [`scale_by_adamax`].
#[derive(Clone, Debug)]
pub struct ScaleByAdamax {
    b1: f64,
    b2: f64,
    eps: f64,
}

/// Adamax's rescaling (`optax.scale_by_adamax`): Adam with the infinity norm,
/// `mu_hat / max(|g| + eps, b2 nu)`.
pub fn scale_by_adamax(b1: f64, b2: f64, eps: f64) -> ScaleByAdamax {
    ScaleByAdamax { b1, b2, eps }
}

impl GradientTransformation for ScaleByAdamax {
    type State<P: Tree> = AdamState<P>;

    fn init<P: Tree>(&self, params: &P) -> AdamState<P> {
        AdamState {
            count: zero_count(),
            mu: zeros(params),
            nu: zeros(params),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: AdamState<P>,
        _params: Option<&P>,
    ) -> (P, AdamState<P>) {
        let count = safe_increment(&state.count);
        let mu = update_moment(&updates, &state.mu, self.b1, 1);
        let nu = update_infinity_moment(&updates, &state.nu, self.b2, self.eps);
        let mu_hat = bias_correction(&mu, self.b1, &count);
        let updates = tree_map2(&mu_hat, &nu, |m, v| m / v);
        (updates, AdamState { count, mu, nu })
    }
}

/// Yogi's scaling; see [`scale_by_yogi`].
#[derive(Clone, Debug)]
pub struct ScaleByYogi {
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    initial_accumulator_value: f64,
}

/// Yogi's rescaling (`optax.scale_by_yogi`): Adam whose second moment moves additively,
/// `nu - (1 - b2) sign(nu - g^2) g^2`, so it cannot shrink as fast.
pub fn scale_by_yogi(
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    initial_accumulator_value: f64,
) -> ScaleByYogi {
    ScaleByYogi {
        b1,
        b2,
        eps,
        eps_root,
        initial_accumulator_value,
    }
}

impl GradientTransformation for ScaleByYogi {
    type State<P: Tree> = AdamState<P>;

    fn init<P: Tree>(&self, params: &P) -> AdamState<P> {
        AdamState {
            count: zero_count(),
            mu: full(params, self.initial_accumulator_value),
            nu: full(params, self.initial_accumulator_value),
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
            ..
        } = *self;
        let mu = update_moment(&updates, &state.mu, b1, 1);
        let nu = tree_map2(&updates, &state.nu, |g, v| {
            let g2 = g * g;
            v - (v - &g2).sign() * (1.0 - b2) * &g2
        });
        let count = safe_increment(&state.count);
        let mu_hat = bias_correction(&mu, b1, &count);
        let nu_hat = bias_correction(&nu, b2, &count);
        let updates = tree_map2(&mu_hat, &nu_hat, |m, v| m / ((v + eps_root).sqrt() + eps));
        (updates, AdamState { count, mu, nu })
    }
}

/// RAdam's scaling; see [`scale_by_radam`].
#[derive(Clone, Debug)]
pub struct ScaleByRadam {
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    threshold: f64,
    nesterov: bool,
}

/// RAdam's rescaling (`optax.scale_by_radam`): Adam with its variance rectified, plain
/// momentum until the approximated SMA length reaches `threshold`.
pub fn scale_by_radam(b1: f64, b2: f64, eps: f64, eps_root: f64, threshold: f64) -> ScaleByRadam {
    ScaleByRadam {
        b1,
        b2,
        eps,
        eps_root,
        threshold,
        nesterov: false,
    }
}

impl ScaleByRadam {
    /// Nesterov momentum (optax's `nesterov=True`).
    pub fn nesterov(mut self, nesterov: bool) -> Self {
        self.nesterov = nesterov;
        self
    }
}

impl GradientTransformation for ScaleByRadam {
    type State<P: Tree> = AdamState<P>;

    fn init<P: Tree>(&self, params: &P) -> AdamState<P> {
        AdamState {
            count: zero_count(),
            mu: zeros(params),
            nu: zeros(params),
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
            threshold,
            nesterov,
        } = *self;
        let ro_inf = 2.0 / (1.0 - b2) - 1.0;
        let mu = update_moment(&updates, &state.mu, b1, 1);
        let nu = update_moment(&updates, &state.nu, b2, 2);
        let count = safe_increment(&state.count);
        let b2t = Array::full(&[], b2, DType::F32).pow(count.astype(DType::F32));
        let ro = ro_inf - (&count * 2).astype(DType::F32) * &b2t / (1.0 - &b2t);
        let mu_hat = if nesterov {
            nesterov_mu_hat(&mu, &updates, b1, &count)
        } else {
            bias_correction(&mu, b1, &count)
        };
        let nu_hat = bias_correction(&nu, b2, &count);
        let r =
            ((&ro - 4.0) * (&ro - 2.0) * ro_inf / ((ro_inf - 4.0) * (ro_inf - 2.0) * &ro)).sqrt();
        let rectified = tree_map2(&mu_hat, &nu_hat, |m, v| {
            r.astype(m.dtype()) * m / ((v + eps_root).sqrt() + eps)
        });
        let use_rectified = ro.ge(threshold);
        let updates = tree_map2(&rectified, &mu_hat, |t, f| where_(&use_rectified, t, f));
        (updates, AdamState { count, mu, nu })
    }
}

/// The state of [`scale_by_belief`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByBeliefState<P> {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
    /// The first moment.
    pub mu: P,
    /// The running mean of the squared prediction error `(g - mu)^2`.
    pub nu: P,
}

/// AdaBelief's scaling; see [`scale_by_belief`].
#[derive(Clone, Debug)]
pub struct ScaleByBelief {
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    nesterov: bool,
}

/// AdaBelief's rescaling (`optax.scale_by_belief`): Adam whose second moment is that of
/// the gradient's deviation from its running mean (the "belief").
pub fn scale_by_belief(b1: f64, b2: f64, eps: f64, eps_root: f64) -> ScaleByBelief {
    ScaleByBelief {
        b1,
        b2,
        eps,
        eps_root,
        nesterov: false,
    }
}

impl ScaleByBelief {
    /// Nesterov momentum (optax's `nesterov=True`).
    pub fn nesterov(mut self, nesterov: bool) -> Self {
        self.nesterov = nesterov;
        self
    }
}

impl GradientTransformation for ScaleByBelief {
    type State<P: Tree> = ScaleByBeliefState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByBeliefState<P> {
        ScaleByBeliefState {
            count: zero_count(),
            mu: zeros(params),
            nu: zeros(params),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByBeliefState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByBeliefState<P>) {
        let Self {
            b1,
            b2,
            eps,
            eps_root,
            nesterov,
        } = *self;
        let mu = update_moment(&updates, &state.mu, b1, 1);
        let error = tree_map2(&updates, &mu, |g, m| g - m);
        let nu = update_moment(&error, &state.nu, b2, 2);
        let nu = tree_map(&nu, |v| v + eps_root);
        let count = safe_increment(&state.count);
        let mu_hat = if nesterov {
            nesterov_mu_hat(&mu, &updates, b1, &count)
        } else {
            bias_correction(&mu, b1, &count)
        };
        let nu_hat = bias_correction(&nu, b2, &count);
        let updates = tree_map2(&mu_hat, &nu_hat, |m, v| m / (v.sqrt() + eps));
        (updates, ScaleByBeliefState { count, mu, nu })
    }
}

/// The state of [`scale_by_adan`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByAdanState<P> {
    /// The first moment of the gradients.
    pub m: P,
    /// The first moment of the gradients' differences.
    pub v: P,
    /// The second moment of `g + (1 - b2) (g - g_prev)`.
    pub n: P,
    /// The previous gradient.
    pub g: P,
    /// Updates done so far (`i32` scalar).
    pub t: Array,
}

/// Adan's scaling; see [`scale_by_adan`].
#[derive(Clone, Debug)]
pub struct ScaleByAdan {
    b1: f64,
    b2: f64,
    b3: f64,
    eps: f64,
    eps_root: f64,
}

/// Adan's rescaling (`optax.scale_by_adan`): Nesterov momentum estimated from the
/// gradients' differences, without an extra gradient evaluation.
pub fn scale_by_adan(b1: f64, b2: f64, b3: f64, eps: f64, eps_root: f64) -> ScaleByAdan {
    ScaleByAdan {
        b1,
        b2,
        b3,
        eps,
        eps_root,
    }
}

impl GradientTransformation for ScaleByAdan {
    type State<P: Tree> = ScaleByAdanState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByAdanState<P> {
        ScaleByAdanState {
            m: zeros(params),
            v: zeros(params),
            n: zeros(params),
            g: zeros(params),
            t: zero_count(),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByAdanState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByAdanState<P>) {
        let Self {
            b1,
            b2,
            b3,
            eps,
            eps_root,
        } = *self;
        let first = state.t.eq(0);
        let diff = tree_map2(&updates, &state.g, |g, prev| {
            where_(&first, Array::zeros_like(g), g - prev)
        });
        let m = update_moment(&updates, &state.m, b1, 1);
        let v = update_moment(&diff, &state.v, b2, 1);
        let sq = tree_map2(&updates, &diff, |g, d| g + d * (1.0 - b2));
        let n = update_moment(&sq, &state.n, b3, 2);
        let t = safe_increment(&state.t);
        let m_hat = bias_correction(&m, b1, &t);
        let v_hat = bias_correction(&v, b2, &t);
        let n_hat = bias_correction(&n, b3, &t);
        let u = tree_map2(&m_hat, &v_hat, |m, v| m + v * (1.0 - b2));
        let u = tree_map2(&u, &n_hat, |u, n| u / ((n + eps_root).sqrt() + eps));
        (
            u,
            ScaleByAdanState {
                m,
                v,
                n,
                g: updates,
                t,
            },
        )
    }
}

// ---------------------------------------------------------------------------------------
// Lion, sign, AdaDelta, Rprop, optimistic gradient.

/// The state of [`scale_by_lion`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByLionState<P> {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
    /// The momentum.
    pub mu: P,
}

/// Lion's scaling; see [`scale_by_lion`].
#[derive(Clone, Debug)]
pub struct ScaleByLion {
    b1: f64,
    b2: f64,
}

/// Lion's rescaling (`optax.scale_by_lion`, its "hard" mode): the sign of an interpolation
/// between the gradient and the momentum, so every coordinate moves by the same amount.
pub fn scale_by_lion(b1: f64, b2: f64) -> ScaleByLion {
    ScaleByLion { b1, b2 }
}

impl GradientTransformation for ScaleByLion {
    type State<P: Tree> = ScaleByLionState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByLionState<P> {
        ScaleByLionState {
            count: zero_count(),
            mu: zeros(params),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByLionState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByLionState<P>) {
        let b1 = self.b1;
        let new = tree_map2(&updates, &state.mu, |g, m| (g * (1.0 - b1) + m * b1).sign());
        let mu = update_moment(&updates, &state.mu, self.b2, 1);
        let count = safe_increment(&state.count);
        (new, ScaleByLionState { count, mu })
    }
}

/// The sign of the updates; see [`scale_by_sign`].
#[derive(Clone, Debug)]
pub struct ScaleBySign;

/// Replaces each update by its sign (`optax.scale_by_sign`), signSGD's rescaling.
pub fn scale_by_sign() -> ScaleBySign {
    ScaleBySign
}

impl GradientTransformation for ScaleBySign {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        (tree_map(&updates, Array::sign), ())
    }
}

/// The state of [`scale_by_adadelta`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByAdaDeltaState<P> {
    /// The running mean of the squared gradients.
    pub e_g: P,
    /// The running mean of the squared updates.
    pub e_x: P,
}

/// AdaDelta's scaling; see [`scale_by_adadelta`].
#[derive(Clone, Debug)]
pub struct ScaleByAdaDelta {
    rho: f64,
    eps: f64,
}

/// AdaDelta's rescaling (`optax.scale_by_adadelta`): the ratio of the RMS of past updates
/// to the RMS of past gradients, so the step has the parameters' units.
pub fn scale_by_adadelta(rho: f64, eps: f64) -> ScaleByAdaDelta {
    ScaleByAdaDelta { rho, eps }
}

impl GradientTransformation for ScaleByAdaDelta {
    type State<P: Tree> = ScaleByAdaDeltaState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByAdaDeltaState<P> {
        ScaleByAdaDeltaState {
            e_g: zeros(params),
            e_x: zeros(params),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByAdaDeltaState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByAdaDeltaState<P>) {
        let (rho, eps) = (self.rho, self.eps);
        let e_g = update_moment(&updates, &state.e_g, rho, 2);
        let updates = tree_map_n(&[&updates, &e_g, &state.e_x], |a| {
            (a[2] + eps).sqrt() / (a[1] + eps).sqrt() * a[0]
        });
        let e_x = update_moment(&updates, &state.e_x, rho, 2);
        (updates, ScaleByAdaDeltaState { e_g, e_x })
    }
}

/// The state of [`scale_by_rprop`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByRpropState<P> {
    /// Each coordinate's step size.
    pub step_sizes: P,
    /// The previous updates.
    pub prev_updates: P,
}

/// Rprop's scaling; see [`scale_by_rprop`].
#[derive(Clone, Debug)]
pub struct ScaleByRprop {
    learning_rate: f64,
    eta_minus: f64,
    eta_plus: f64,
    min_step_size: f64,
    max_step_size: f64,
}

/// Rprop's rescaling (`optax.scale_by_rprop`): a step size per coordinate, grown by
/// `eta_plus` while the gradient keeps its sign and shrunk by `eta_minus` when it flips;
/// only the gradient's sign is used.
pub fn scale_by_rprop(
    learning_rate: f64,
    eta_minus: f64,
    eta_plus: f64,
    min_step_size: f64,
    max_step_size: f64,
) -> ScaleByRprop {
    ScaleByRprop {
        learning_rate,
        eta_minus,
        eta_plus,
        min_step_size,
        max_step_size,
    }
}

impl GradientTransformation for ScaleByRprop {
    type State<P: Tree> = ScaleByRpropState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByRpropState<P> {
        ScaleByRpropState {
            step_sizes: full(params, self.learning_rate),
            prev_updates: zeros(params),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByRpropState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByRpropState<P>) {
        let s = self.clone();
        let sign = tree_map2(&updates, &state.prev_updates, |g, p| g * p);
        let step_sizes = tree_map2(&sign, &state.step_sizes, |sg, step| {
            let factor = where_(sg.gt(0.0), s.eta_plus, s.eta_minus);
            let grown = (step * factor).clip(s.min_step_size, s.max_step_size);
            where_(sg.eq(0.0), step, grown)
        });
        let prev_updates = tree_map_n(&[&sign, &updates, &step_sizes], |a| {
            where_(a[0].lt(0.0), Array::zeros_like(a[1]), a[2] * a[1].sign())
        });
        // optax emits the previous step's update (its lambda's `prev_g` is the old state).
        let updates = tree_map2(&sign, &state.prev_updates, |sg, p| {
            where_(sg.lt(0.0), Array::zeros_like(p), p)
        });
        (
            updates,
            ScaleByRpropState {
                step_sizes,
                prev_updates,
            },
        )
    }
}

/// The state of [`scale_by_optimistic_gradient`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByOptimisticGradientState<P> {
    /// True before the first update (a `bool` scalar).
    pub is_initial_step: Array,
    /// The previous gradient.
    pub previous_gradient: P,
}

/// The optimistic gradient's scaling; see [`scale_by_optimistic_gradient`].
#[derive(Clone, Debug)]
pub struct ScaleByOptimisticGradient {
    alpha: f64,
    beta: f64,
}

/// Optimistic gradient (`optax.scale_by_optimistic_gradient`):
/// `(alpha + beta) g - beta g_prev`, the extrapolation that stabilises min-max games.
pub fn scale_by_optimistic_gradient(alpha: f64, beta: f64) -> ScaleByOptimisticGradient {
    ScaleByOptimisticGradient { alpha, beta }
}

impl GradientTransformation for ScaleByOptimisticGradient {
    type State<P: Tree> = ScaleByOptimisticGradientState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByOptimisticGradientState<P> {
        ScaleByOptimisticGradientState {
            is_initial_step: Array::scalar(true),
            previous_gradient: zeros(params),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByOptimisticGradientState<P>,
        _params: Option<&P>,
    ) -> (P, ScaleByOptimisticGradientState<P>) {
        let (alpha, beta) = (self.alpha, self.beta);
        let new = tree_map2(&updates, &state.previous_gradient, |g, prev| {
            let prev = where_(&state.is_initial_step, g, prev);
            g * (alpha + beta) - prev * beta
        });
        (
            new,
            ScaleByOptimisticGradientState {
                is_initial_step: Array::scalar(false),
                previous_gradient: updates,
            },
        )
    }
}

// ---------------------------------------------------------------------------------------
// SM3, NovoGrad, DoG.

/// The state of [`scale_by_sm3`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleBySM3State<P> {
    /// Per leaf (in leaf order), one accumulator per dimension: the maxima over the other
    /// dimensions.
    pub mu: Vec<Vec<Array>>,
    /// The momentum.
    pub nu: P,
}

/// SM3's scaling; see [`scale_by_sm3`].
#[derive(Clone, Debug)]
pub struct ScaleBySM3 {
    b1: f64,
    b2: f64,
    eps: f64,
}

/// SM3's rescaling (`optax.scale_by_sm3`): Adagrad whose accumulator is covered by one
/// vector per dimension, memory linear in the dimensions rather than their product.
/// Scalar leaves are not supported (as in optax).
pub fn scale_by_sm3(b1: f64, b2: f64, eps: f64) -> ScaleBySM3 {
    ScaleBySM3 { b1, b2, eps }
}

fn other_axes(axis: usize, ndim: usize) -> Vec<usize> {
    (0..ndim).filter(|&a| a != axis).collect()
}

impl GradientTransformation for ScaleBySM3 {
    type State<P: Tree> = ScaleBySM3State<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleBySM3State<P> {
        let (leaves, _) = params.flatten();
        let mu = leaves
            .iter()
            .map(|p| {
                (0..p.rank())
                    .map(|i| Array::zeros(&[p.shape()[i]], p.dtype()))
                    .collect()
            })
            .collect();
        ScaleBySM3State {
            mu,
            nu: zeros(params),
        }
    }

    #[track_caller]
    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleBySM3State<P>,
        _params: Option<&P>,
    ) -> (P, ScaleBySM3State<P>) {
        let Self { b1, b2, eps } = *self;
        let (c0, c1) = (if b2 != 1.0 { 1.0 - b2 } else { 1.0 }, b2);
        let (grads, def) = updates.flatten();
        let mut accums = Vec::new();
        for (g, v) in grads.iter().zip(&state.mu) {
            assert!(
                g.rank() > 0,
                "scale_by_sm3: scalar leaves are not supported"
            );
            let accum = if g.rank() < 2 {
                g.powi(2) * c0 + &v[0] * c1
            } else {
                let shaped: Vec<Array> = (0..g.rank())
                    .map(|i| {
                        let mut shape = vec![1usize; g.rank()];
                        shape[i] = g.shape()[i];
                        v[i].reshape(shape.as_slice())
                    })
                    .collect();
                let min = shaped[1..]
                    .iter()
                    .fold(shaped[0].clone(), |acc, x| acc.minimum(x));
                g.powi(2) * c0 + min * c1
            };
            accums.push(accum);
        }
        let up: Vec<Array> = grads
            .iter()
            .zip(&accums)
            .map(|(g, t)| g * where_(t.gt(0.0), (t + eps).rsqrt(), 0.0))
            .collect();
        let up: P = crate::tree_unflatten(&def, up);
        let nu = update_moment(&up, &state.nu, b1, 1);
        let mu = accums
            .iter()
            .map(|a| {
                if a.rank() < 2 {
                    vec![a.clone()]
                } else {
                    (0..a.rank())
                        .map(|i| a.max(other_axes(i, a.rank()).as_slice(), false))
                        .collect()
                }
            })
            .collect();
        (tree_clone(&nu), ScaleBySM3State { mu, nu })
    }
}

/// The state of [`scale_by_novograd`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByNovogradState<P> {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
    /// The momentum.
    pub mu: P,
    /// Per leaf, the running mean of the squared norm of its gradient (a scalar).
    pub nu: P,
}

/// NovoGrad's scaling; see [`scale_by_novograd`].
#[derive(Clone, Debug)]
pub struct ScaleByNovograd {
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    weight_decay: f64,
}

/// NovoGrad's rescaling (`optax.scale_by_novograd`): a second moment per layer (the
/// squared norm of each leaf's gradient), weight decay inside the momentum. Needs the
/// parameters in `update`.
pub fn scale_by_novograd(
    b1: f64,
    b2: f64,
    eps: f64,
    eps_root: f64,
    weight_decay: f64,
) -> ScaleByNovograd {
    ScaleByNovograd {
        b1,
        b2,
        eps,
        eps_root,
        weight_decay,
    }
}

impl GradientTransformation for ScaleByNovograd {
    type State<P: Tree> = ScaleByNovogradState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByNovogradState<P> {
        ScaleByNovogradState {
            count: zero_count(),
            mu: zeros(params),
            nu: tree_map(params, |p| Array::zeros(&[], p.dtype())),
        }
    }

    #[track_caller]
    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByNovogradState<P>,
        params: Option<&P>,
    ) -> (P, ScaleByNovogradState<P>) {
        let params = need_params(params, "scale_by_novograd");
        let Self {
            b1,
            b2,
            eps,
            eps_root,
            weight_decay,
        } = *self;
        let count = safe_increment(&state.count);
        let first = count.eq(1);
        let nu = tree_map2(&updates, &state.nu, |g, n| {
            let sq = l2(g).powi(2);
            where_(&first, sq.astype(n.dtype()), &sq * (1.0 - b2) + n * b2)
        });
        let mu = tree_map_n(&[&updates, params, &state.mu, &nu], |a| {
            let add = a[0] / ((a[3] + eps_root).sqrt() + eps) + a[1] * weight_decay;
            where_(&first, &add, a[2] * b1 + &add)
        });
        (tree_clone(&mu), ScaleByNovogradState { count, mu, nu })
    }
}

/// The state of [`scale_by_distance_over_gradients`].
#[derive(Tree, Clone, Debug)]
pub struct ScaleByDistanceOverGradientsState<P> {
    /// Per leaf, the largest distance from the initial parameters so far (a scalar).
    pub max_dist: P,
    /// Per leaf, the sum of the squared gradients so far (shape `[1]`).
    pub grad_sum_of_squares: P,
    /// The initial parameters.
    pub init_params: P,
}

/// DoG's scaling; see [`scale_by_distance_over_gradients`].
#[derive(Clone, Debug)]
pub struct ScaleByDistanceOverGradients {
    reps_rel: f64,
    eps: f64,
    global_scale: f64,
}

/// DoG, "distance over gradients" (`optax.scale_by_distance_over_gradients`, layer-wise):
/// a learning-rate-free step size, the largest distance travelled over the root of the
/// summed squared gradients. Needs the parameters in `update`.
pub fn scale_by_distance_over_gradients(
    reps_rel: f64,
    eps: f64,
    global_scale: f64,
) -> ScaleByDistanceOverGradients {
    ScaleByDistanceOverGradients {
        reps_rel,
        eps,
        global_scale,
    }
}

impl GradientTransformation for ScaleByDistanceOverGradients {
    type State<P: Tree> = ScaleByDistanceOverGradientsState<P>;

    fn init<P: Tree>(&self, params: &P) -> ScaleByDistanceOverGradientsState<P> {
        let reps_rel = self.reps_rel;
        ScaleByDistanceOverGradientsState {
            max_dist: tree_map(params, |x| (l2(x) + 1.0) * reps_rel),
            grad_sum_of_squares: tree_map(params, |_| Array::zeros(&[1], DType::F32)),
            init_params: tree_map(params, |x| x.astype(DType::F32)),
        }
    }

    #[track_caller]
    fn update<P: Tree>(
        &self,
        updates: P,
        state: ScaleByDistanceOverGradientsState<P>,
        params: Option<&P>,
    ) -> (P, ScaleByDistanceOverGradientsState<P>) {
        let params = need_params(params, "scale_by_distance_over_gradients");
        let (eps, global_scale) = (self.eps, self.global_scale);
        let max_dist = tree_map_n(&[&state.max_dist, params, &state.init_params], |a| {
            a[0].maximum(l2(&(a[1] - a[2])))
        });
        let g_sos = tree_map2(&state.grad_sum_of_squares, &updates, |x, y| {
            x + (y * y).sum(None, false)
        });
        let updates = tree_map_n(&[&updates, &max_dist, &g_sos], |a| {
            (a[1] / (a[2] + eps).sqrt()) * global_scale * a[0]
        });
        (
            updates,
            ScaleByDistanceOverGradientsState {
                max_dist,
                grad_sum_of_squares: g_sos,
                init_params: state.init_params,
            },
        )
    }
}

// ---------------------------------------------------------------------------------------
// Adafactor.

/// The state of [`scale_by_factored_rms`]. Each leaf keeps either the factored row and
/// column moments (`v` is then a `[1]` placeholder) or the full moment `v` (`v_row` and
/// `v_col` are then placeholders), as optax.
#[derive(Tree, Clone, Debug)]
pub struct FactoredState<P> {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
    /// The row moments (the mean over the largest dimension).
    pub v_row: P,
    /// The column moments (the mean over the second largest dimension).
    pub v_col: P,
    /// The full second moment of the leaves that are not factored.
    pub v: P,
}

/// Adafactor's scaling; see [`scale_by_factored_rms`].
#[derive(Clone, Debug)]
pub struct ScaleByFactoredRms {
    factored: bool,
    decay_rate: f64,
    step_offset: i32,
    min_dim_size_to_factor: usize,
    epsilon: f64,
}

/// Adafactor's rescaling (`optax.scale_by_factored_rms`): the second moment of a matrix
/// kept as row and column means whose outer product estimates it, so memory grows with
/// `rows + cols`; leaves whose second largest dimension is under `min_dim_size_to_factor`
/// keep a full moment. The decay rate rises with the step as `1 - (t + 1)^-decay_rate`.
pub fn scale_by_factored_rms(
    factored: bool,
    decay_rate: f64,
    step_offset: i32,
    min_dim_size_to_factor: usize,
    epsilon: f64,
) -> ScaleByFactoredRms {
    ScaleByFactoredRms {
        factored,
        decay_rate,
        step_offset,
        min_dim_size_to_factor,
        epsilon,
    }
}

impl ScaleByFactoredRms {
    /// `(d1, d0)`: the second largest and the largest dimension, when the leaf is factored.
    fn factored_dims(&self, shape: &[usize]) -> Option<(usize, usize)> {
        if !self.factored || shape.len() < 2 {
            return None;
        }
        let mut sorted: Vec<usize> = (0..shape.len()).collect();
        sorted.sort_by_key(|&i| shape[i]);
        let (d1, d0) = (sorted[sorted.len() - 2], sorted[sorted.len() - 1]);
        (shape[d1] >= self.min_dim_size_to_factor).then_some((d1, d0))
    }
}

fn drop_axis(shape: &[usize], axis: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s.remove(axis);
    s
}

impl GradientTransformation for ScaleByFactoredRms {
    type State<P: Tree> = FactoredState<P>;

    fn init<P: Tree>(&self, params: &P) -> FactoredState<P> {
        let placeholder = |p: &Array| Array::zeros(&[1], p.dtype());
        let part = |which: u8| {
            tree_map(params, |p| match (self.factored_dims(p.shape()), which) {
                (Some((_, d0)), 0) => Array::zeros(&drop_axis(p.shape(), d0), p.dtype()),
                (Some((d1, _)), 1) => Array::zeros(&drop_axis(p.shape(), d1), p.dtype()),
                (None, 2) => Array::zeros_like(p),
                _ => placeholder(p),
            })
        };
        FactoredState {
            count: zero_count(),
            v_row: part(0),
            v_col: part(1),
            v: part(2),
        }
    }

    #[track_caller]
    fn update<P: Tree>(
        &self,
        updates: P,
        state: FactoredState<P>,
        params: Option<&P>,
    ) -> (P, FactoredState<P>) {
        let params = need_params(params, "scale_by_factored_rms");
        let step = &state.count - self.step_offset;
        let t = (step + 1).astype(DType::F32);
        let decay_t = 1.0 - t.pow(-self.decay_rate);
        let (g, def) = updates.flatten();
        let (rows, _) = state.v_row.flatten();
        let (cols, _) = state.v_col.flatten();
        let (vs, _) = state.v.flatten();
        let (ps, _) = params.flatten();
        let (mut out, mut new_rows, mut new_cols, mut new_vs) = (vec![], vec![], vec![], vec![]);
        for i in 0..g.len() {
            let (grad, dtype) = (&g[i], ps[i].dtype());
            let placeholder = Array::zeros(&[1], dtype);
            let grad_sqr = grad * grad + self.epsilon;
            match self.factored_dims(ps[i].shape()) {
                Some((d1, d0)) => {
                    let row = (&decay_t * &rows[i]
                        + (1.0 - &decay_t) * grad_sqr.mean(d0 as i64, false))
                    .astype(dtype);
                    let col = (&decay_t * &cols[i]
                        + (1.0 - &decay_t) * grad_sqr.mean(d1 as i64, false))
                    .astype(dtype);
                    let reduced_d1 = if d1 > d0 { d1 - 1 } else { d1 };
                    let row_col_mean = row.mean(reduced_d1 as i64, true);
                    let row_factor = (&row / row_col_mean).pow(-0.5);
                    let col_factor = col.pow(-0.5);
                    out.push(
                        grad * row_factor.expand_dims(d0 as i64)
                            * col_factor.expand_dims(d1 as i64),
                    );
                    new_rows.push(row);
                    new_cols.push(col);
                    new_vs.push(placeholder);
                }
                None => {
                    let v = (&decay_t * &vs[i] + (1.0 - &decay_t) * grad_sqr).astype(dtype);
                    out.push(grad * v.pow(-0.5));
                    new_rows.push(placeholder.clone());
                    new_cols.push(placeholder);
                    new_vs.push(v);
                }
            }
        }
        let un = |l: Vec<Array>| -> P { crate::tree_unflatten(&def, l) };
        (
            un(out),
            FactoredState {
                count: safe_increment(&state.count),
                v_row: un(new_rows),
                v_col: un(new_cols),
                v: un(new_vs),
            },
        )
    }
}

// ---------------------------------------------------------------------------------------
// Scalings by the parameters.

/// A scaling by each leaf's norm or RMS; see [`scale_by_param_block_norm`].
#[derive(Clone, Debug)]
pub struct ScaleByParamBlock {
    min_scale: f64,
    rms: bool,
}

/// Multiplies each leaf's updates by the norm of its parameters, at least `min_scale`
/// (`optax.scale_by_param_block_norm`). Needs the parameters in `update`.
pub fn scale_by_param_block_norm(min_scale: f64) -> ScaleByParamBlock {
    ScaleByParamBlock {
        min_scale,
        rms: false,
    }
}

/// Multiplies each leaf's updates by the root mean square of its parameters, at least
/// `min_scale` (`optax.scale_by_param_block_rms`, Adafactor's relative step). Needs the
/// parameters in `update`.
pub fn scale_by_param_block_rms(min_scale: f64) -> ScaleByParamBlock {
    ScaleByParamBlock {
        min_scale,
        rms: true,
    }
}

impl GradientTransformation for ScaleByParamBlock {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    #[track_caller]
    fn update<P: Tree>(&self, updates: P, _state: (), params: Option<&P>) -> (P, ()) {
        let params = need_params(params, "scale_by_param_block_norm/rms");
        let (min, rms) = (self.min_scale, self.rms);
        let updates = tree_map2(&updates, params, |u, p| {
            u * if rms {
                safe_root_mean_squares(p, min)
            } else {
                safe_norm(p, min)
            }
        });
        (updates, ())
    }
}

/// Layer-wise trust ratio; see [`scale_by_trust_ratio`].
#[derive(Clone, Debug)]
pub struct ScaleByTrustRatio {
    min_norm: f64,
    trust_coefficient: f64,
    eps: f64,
}

/// Scales each leaf's updates by `trust_coefficient * |param| / (|update| + eps)`, or 1
/// where either norm is zero (`optax.scale_by_trust_ratio`, LARS's and LAMB's layer-wise
/// adaptation). Needs the parameters in `update`.
pub fn scale_by_trust_ratio(min_norm: f64, trust_coefficient: f64, eps: f64) -> ScaleByTrustRatio {
    ScaleByTrustRatio {
        min_norm,
        trust_coefficient,
        eps,
    }
}

impl GradientTransformation for ScaleByTrustRatio {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    #[track_caller]
    fn update<P: Tree>(&self, updates: P, _state: (), params: Option<&P>) -> (P, ()) {
        let params = need_params(params, "scale_by_trust_ratio");
        let Self {
            min_norm,
            trust_coefficient,
            eps,
        } = *self;
        let updates = tree_map2(&updates, params, |u, p| {
            let param_norm = safe_norm(p, min_norm);
            let update_norm = safe_norm(u, min_norm);
            let ratio = &param_norm * trust_coefficient / (&update_norm + eps);
            let zero = param_norm.eq(0.0).logical_or(update_norm.eq(0.0));
            u * where_(&zero, Array::full(&[], 1.0, p.dtype()), ratio)
        });
        (updates, ())
    }
}
