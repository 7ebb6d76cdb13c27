//! optax's small stateless transformations and accumulators: `scale`, `identity`,
//! `set_to_zero`, the clips, `centralize`, `ema`, `apply_every`, `zero_nans`, and the
//! adapters that turn a function into a transformation.

use super::tree_math::{safe_increment, tree_clone, tree_map_n};
use super::{bias_correction, global_norm, update_moment, zero_count, GradientTransformation};
use crate::{tree_map, tree_map2, tree_unflatten, where_, Array, Tree};
use std::fmt;
use std::sync::Arc;

/// The state of the transformations that keep none (optax's `EmptyState`).
pub type EmptyState = ();

/// The empty state, whatever the parameters (`optax.init_empty_state`).
pub fn init_empty_state<P: Tree>(_params: &P) -> EmptyState {}

macro_rules! stateless_transform {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name;
    };
}

stateless_transform!(
    /// The updates unchanged; see [`identity`].
    Identity
);

/// Passes the updates through (`optax.identity`): a placeholder where a chain needs a
/// transformation that does nothing.
pub fn identity() -> Identity {
    Identity
}

impl GradientTransformation for Identity {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        (updates, ())
    }
}

stateless_transform!(
    /// Zero updates; see [`set_to_zero`].
    SetToZero
);

/// Zero updates (`optax.set_to_zero`): with [`masked`](super::masked), freezes parameters.
pub fn set_to_zero() -> SetToZero {
    SetToZero
}

impl GradientTransformation for SetToZero {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        (tree_map(&updates, Array::zeros_like), ())
    }
}

/// A constant factor; see [`scale`].
#[derive(Clone, Debug)]
pub struct Scale {
    step_size: f64,
}

/// Multiplies the updates by `step_size` (`optax.scale`; no sign flip: `scale(-lr)` is a
/// descent step).
pub fn scale(step_size: f64) -> Scale {
    Scale { step_size }
}

impl GradientTransformation for Scale {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        let s = self.step_size;
        (tree_map(&updates, |g| g * s), ())
    }
}

/// Elementwise clipping; see [`clip`].
#[derive(Clone, Debug)]
pub struct Clip {
    max_delta: f64,
}

/// Clips every update to `[-max_delta, max_delta]` (`optax.clip`).
pub fn clip(max_delta: f64) -> Clip {
    Clip { max_delta }
}

impl GradientTransformation for Clip {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        let m = self.max_delta;
        (tree_map(&updates, |g| g.clip(-m, m)), ())
    }
}

/// Per-leaf RMS clipping; see [`clip_by_block_rms`].
#[derive(Clone, Debug)]
pub struct ClipByBlockRms {
    threshold: f64,
}

/// Divides each leaf's updates by `max(1, rms / threshold)` (`optax.clip_by_block_rms`),
/// so no leaf's root mean square exceeds `threshold`.
pub fn clip_by_block_rms(threshold: f64) -> ClipByBlockRms {
    ClipByBlockRms { threshold }
}

impl GradientTransformation for ClipByBlockRms {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        let t = self.threshold;
        let updates = tree_map(&updates, |u| {
            let denom = ((u * u).mean(None, false).sqrt() / t).maximum(1.0);
            u / denom
        });
        (updates, ())
    }
}

/// Adaptive gradient clipping; see [`adaptive_grad_clip`].
#[derive(Clone, Debug)]
pub struct AdaptiveGradClip {
    clipping: f64,
    eps: f64,
}

/// Adaptive gradient clipping (`optax.adaptive_grad_clip`, from NFNets): clips each unit's
/// gradient norm to `clipping` times the norm of its parameters (at least `eps`). Units are
/// as optax's `unitwise_norm`: the whole leaf for vectors and scalars, the columns (axis 0
/// reduced) for matrices and rank-3 leaves, the output channels for rank-4 and rank-5
/// (convolution) kernels. Needs the parameters in `update`.
pub fn adaptive_grad_clip(clipping: f64, eps: f64) -> AdaptiveGradClip {
    AdaptiveGradClip { clipping, eps }
}

#[track_caller]
fn unitwise_norm(x: &Array) -> Array {
    let squeezed_rank = x.shape().iter().filter(|&&d| d != 1).count();
    let sq = x * x;
    let squared = if squeezed_rank <= 1 {
        let all: Vec<i64> = (0..x.rank() as i64).collect();
        sq.sum(all, true)
    } else {
        match x.rank() {
            2 | 3 => sq.sum(0i64, true),
            4 => sq.sum([0i64, 1, 2], true),
            5 => sq.sum([0i64, 1, 2, 3], true),
            r => panic!("adaptive_grad_clip: leaves of rank 1 to 5, got rank {r}"),
        }
    };
    squared.sqrt().broadcast_to(x.shape())
}

impl GradientTransformation for AdaptiveGradClip {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    #[track_caller]
    fn update<P: Tree>(&self, updates: P, _state: (), params: Option<&P>) -> (P, ()) {
        let params =
            params.expect("adaptive_grad_clip: update needs the parameters (pass Some(&params))");
        let (clipping, eps) = (self.clipping, self.eps);
        let updates = tree_map2(&updates, params, |g, p| {
            let g_norm = unitwise_norm(g);
            let max_norm = unitwise_norm(p).maximum(eps) * clipping;
            let clipped = g * (&max_norm / g_norm.maximum(1e-6));
            where_(g_norm.lt(&max_norm), g, clipped)
        });
        (updates, ())
    }
}

stateless_transform!(
    /// Gradient centralization; see [`centralize`].
    Centralize
);

/// Subtracts from each leaf of rank 2 or more its mean over all axes but the first
/// (`optax.centralize`, gradient centralization).
pub fn centralize() -> Centralize {
    Centralize
}

impl GradientTransformation for Centralize {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        let updates = tree_map(&updates, |g| {
            if g.rank() > 1 {
                let axes: Vec<i64> = (1..g.rank() as i64).collect();
                g - g.mean(axes, true)
            } else {
                g.clone()
            }
        });
        (updates, ())
    }
}

/// Normalization by the global norm; see [`normalize_by_update_norm`].
#[derive(Clone, Debug)]
pub struct NormalizeByUpdateNorm {
    scale_factor: f64,
    eps: f64,
}

/// Divides the updates by `(global_norm + eps) / scale_factor`
/// (`optax.normalize_by_update_norm`): steps of length `scale_factor`, whatever the
/// gradient's size.
pub fn normalize_by_update_norm(scale_factor: f64, eps: f64) -> NormalizeByUpdateNorm {
    NormalizeByUpdateNorm { scale_factor, eps }
}

impl GradientTransformation for NormalizeByUpdateNorm {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        let norm = (global_norm(&updates) + self.eps) / self.scale_factor;
        (tree_map(&updates, |g| g / &norm), ())
    }
}

stateless_transform!(
    /// Non-negative parameters; see [`keep_params_nonnegative`].
    KeepParamsNonnegative
);

/// Replaces an update that would make a parameter negative by `-param`, so it lands on 0
/// (`optax.keep_params_nonnegative`; put it last in a chain). Needs the parameters.
pub fn keep_params_nonnegative() -> KeepParamsNonnegative {
    KeepParamsNonnegative
}

impl GradientTransformation for KeepParamsNonnegative {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    #[track_caller]
    fn update<P: Tree>(&self, updates: P, _state: (), params: Option<&P>) -> (P, ()) {
        let params = params
            .expect("keep_params_nonnegative: update needs the parameters (pass Some(&params))");
        let updates = tree_map2(params, &updates, |p, u| where_((p + u).lt(0.0), -p, u));
        (updates, ())
    }
}

/// The state of [`ema`].
#[derive(Tree, Clone, Debug)]
pub struct EmaState<P> {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
    /// The moving average.
    pub ema: P,
}

/// An exponential moving average; see [`ema`].
#[derive(Clone, Debug)]
pub struct Ema {
    decay: f64,
    debias: bool,
}

/// Replaces the updates by their exponential moving average, bias corrected when `debias`
/// (`optax.ema`): momentum without the sum's growth.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::ema(0.5, true);
/// let g = Array::from_vec(vec![2.0f32], &[1]);
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// assert_eq!(u.to_vec::<f32>(), vec![2.0]); // debiased: the first average is the value
/// ```
pub fn ema(decay: f64, debias: bool) -> Ema {
    Ema { decay, debias }
}

impl GradientTransformation for Ema {
    type State<P: Tree> = EmaState<P>;

    fn init<P: Tree>(&self, params: &P) -> EmaState<P> {
        EmaState {
            count: zero_count(),
            ema: tree_map(params, Array::zeros_like),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: EmaState<P>,
        _params: Option<&P>,
    ) -> (P, EmaState<P>) {
        let ema = update_moment(&updates, &state.ema, self.decay, 1);
        let count = safe_increment(&state.count);
        let updates = if self.debias {
            bias_correction(&ema, self.decay, &count)
        } else {
            tree_clone(&ema)
        };
        (updates, EmaState { count, ema })
    }
}

/// The state of [`apply_every`] (optax's `ApplyEvery`).
#[derive(Tree, Clone, Debug)]
pub struct ApplyEveryState<P> {
    /// Steps since the last emitted update, modulo `k` (`i32` scalar).
    pub count: Array,
    /// The gradients summed since then.
    pub grad_acc: P,
}

/// Accumulation over `k` steps; see [`apply_every`].
#[derive(Clone, Debug)]
pub struct ApplyEvery {
    k: i32,
}

/// Sums the updates over `k` steps and emits the sum on the `k`-th, zeros in between
/// (`optax.apply_every`). [`MultiSteps`](super::MultiSteps) is the usual way to accumulate
/// gradients: it also holds the inner optimizer's state still between emissions.
pub fn apply_every(k: i32) -> ApplyEvery {
    ApplyEvery { k }
}

impl GradientTransformation for ApplyEvery {
    type State<P: Tree> = ApplyEveryState<P>;

    fn init<P: Tree>(&self, params: &P) -> ApplyEveryState<P> {
        ApplyEveryState {
            count: zero_count(),
            grad_acc: tree_map(params, Array::zeros_like),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: ApplyEveryState<P>,
        _params: Option<&P>,
    ) -> (P, ApplyEveryState<P>) {
        let k = self.k;
        let c = state.count.rem(k);
        let acc = c.ne(0);
        let grad_acc = tree_map2(&updates, &state.grad_acc, |g, ga| {
            acc.astype(ga.dtype()) * ga + g
        });
        let emit = c.eq(k - 1);
        let updates = tree_map(&grad_acc, |ga| emit.astype(ga.dtype()) * ga);
        let count = safe_increment(&state.count).rem(k);
        (updates, ApplyEveryState { count, grad_acc })
    }
}

/// The state of [`zero_nans`].
#[derive(Tree, Clone, Debug)]
pub struct ZeroNansState<P> {
    /// Per leaf, whether its last updates had a NaN (a `bool` scalar).
    pub found_nan: P,
}

stateless_transform!(
    /// NaNs replaced by zeros; see [`zero_nans`].
    ZeroNans
);

/// Replaces NaN updates by 0 and records, per leaf, whether there were any
/// (`optax.zero_nans`).
pub fn zero_nans() -> ZeroNans {
    ZeroNans
}

impl GradientTransformation for ZeroNans {
    type State<P: Tree> = ZeroNansState<P>;

    fn init<P: Tree>(&self, params: &P) -> ZeroNansState<P> {
        ZeroNansState {
            found_nan: tree_map(params, |_| Array::scalar(false)),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        _state: ZeroNansState<P>,
        _params: Option<&P>,
    ) -> (P, ZeroNansState<P>) {
        let found_nan = tree_map(&updates, |g| {
            let all: Vec<i64> = (0..g.rank() as i64).collect();
            g.isnan().reduce_or(all)
        });
        let updates = tree_map(&updates, |g| where_(g.isnan(), Array::zeros_like(g), g));
        (updates, ZeroNansState { found_nan })
    }
}

/// The function of [`stateless`]: the updates' leaves and, when given, the parameters'
/// leaves (tree order) to the new updates' leaves.
pub type StatelessFn = Arc<dyn Fn(&[Array], Option<&[Array]>) -> Vec<Array> + Send + Sync>;

/// A function as a transformation; see [`stateless`].
#[derive(Clone)]
pub struct Stateless {
    f: StatelessFn,
}

impl fmt::Debug for Stateless {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Stateless(..)")
    }
}

/// A transformation without state from a function of the updates and the parameters
/// (`optax.stateless`). A Rust closure cannot be generic over the tree type, so it sees the
/// leaves in tree order and returns as many.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// // Divide every update by the number of leaves.
/// let opt = optim::stateless(|g, _params| g.iter().map(|x| x / g.len() as f64).collect());
/// let g = (Array::ones(&[1], DType::F32), Array::ones(&[1], DType::F32));
/// let (u, ()) = opt.update(g, (), None);
/// assert_eq!(u.0.to_vec::<f32>(), vec![0.5]);
/// ```
pub fn stateless(
    f: impl Fn(&[Array], Option<&[Array]>) -> Vec<Array> + Send + Sync + 'static,
) -> Stateless {
    Stateless { f: Arc::new(f) }
}

impl GradientTransformation for Stateless {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    #[track_caller]
    fn update<P: Tree>(&self, updates: P, _state: (), params: Option<&P>) -> (P, ()) {
        let (g, def) = updates.flatten();
        let p = params.map(|p| p.flatten().0);
        let out = (self.f)(&g, p.as_deref());
        assert_eq!(
            out.len(),
            g.len(),
            "stateless: the function returned {} leaves for {}",
            out.len(),
            g.len()
        );
        (tree_unflatten(&def, out), ())
    }
}

/// The function of [`stateless_with_tree_map`]: one update and its parameter (when given)
/// to the new update.
pub type LeafFn = Arc<dyn Fn(&Array, Option<&Array>) -> Array + Send + Sync>;

/// A leaf function as a transformation; see [`stateless_with_tree_map`].
#[derive(Clone)]
pub struct StatelessWithTreeMap {
    f: LeafFn,
}

impl fmt::Debug for StatelessWithTreeMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StatelessWithTreeMap(..)")
    }
}

/// A transformation without state that maps `f` over the leaves of the updates and the
/// parameters (`optax.stateless_with_tree_map`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::stateless_with_tree_map(|g, p| g * p.unwrap());
/// let p = Array::from_vec(vec![3.0f32], &[1]);
/// let (u, ()) = opt.update(Array::from_vec(vec![2.0f32], &[1]), (), Some(&p));
/// assert_eq!(u.to_vec::<f32>(), vec![6.0]);
/// ```
pub fn stateless_with_tree_map(
    f: impl Fn(&Array, Option<&Array>) -> Array + Send + Sync + 'static,
) -> StatelessWithTreeMap {
    StatelessWithTreeMap { f: Arc::new(f) }
}

impl GradientTransformation for StatelessWithTreeMap {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    fn update<P: Tree>(&self, updates: P, _state: (), params: Option<&P>) -> (P, ()) {
        let updates = match params {
            Some(p) => tree_map_n(&[&updates, p], |a| (self.f)(a[0], Some(a[1]))),
            None => tree_map(&updates, |g| (self.f)(g, None)),
        };
        (updates, ())
    }
}

/// Whether `x`'s every element is finite, as a `bool` scalar.
pub(crate) fn all_finite(leaves: &[Array]) -> Array {
    leaves.iter().fold(Array::scalar(true), |acc, l| {
        let all: Vec<i64> = (0..l.rank() as i64).collect();
        acc.logical_and(l.isfinite().reduce_and(all))
    })
}

/// Clips each example's gradient to global norm `l2_norm_clip` and sums them
/// (`optax.per_example_global_norm_clip`, for differential privacy): every leaf of `grads`
/// has the examples on axis 0; an example's norm is over all its leaves together. Returns
/// the sum of the clipped gradients (the leaves without their batch axis) and how many
/// examples were clipped (`i32` scalar). An example of norm 0 is kept as it is.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // Three examples of norms 0, 3 and 4: the last two are clipped to norm 2.5.
/// let grads = (Array::from_vec(vec![0.0f32, 0.0, 0.0, 3.0, 4.0, 0.0], &[3, 2]),);
/// let (sum, clipped) = jaxrs::optim::per_example_global_norm_clip(&grads, 2.5);
/// assert!(sum.0.to_vec::<f32>().iter().all(|x| (x - 2.5).abs() < 1e-6));
/// assert_eq!(clipped.item::<i32>(), 2);
/// ```
#[track_caller]
pub fn per_example_global_norm_clip<P: Tree>(grads: &P, l2_norm_clip: f64) -> (P, Array) {
    let (leaves, def) = grads.flatten();
    let batch = |x: &Array| -> usize {
        assert!(
            x.rank() >= 1,
            "per_example_global_norm_clip: every leaf needs a batch axis 0, got shape {:?}",
            x.shape()
        );
        x.shape()[0]
    };
    let flat: Vec<Array> = leaves
        .iter()
        .map(|x| {
            let n = x.shape()[1..].iter().product::<usize>();
            x.reshape([batch(x), n])
        })
        .collect();
    let norms = flat
        .iter()
        .map(|x| (x * x).sum(1i64, false))
        .reduce(|acc, s| acc + s)
        .expect("per_example_global_norm_clip: grads need at least one leaf")
        .sqrt();
    let multipliers = (l2_norm_clip / &norms).minimum(1.0);
    let multipliers = where_(multipliers.isnan(), 1.0, &multipliers);
    let num_clipped = multipliers
        .lt(1.0)
        .astype(crate::DType::I32)
        .sum(None, false)
        .astype(crate::DType::I32);
    let sums = flat
        .iter()
        .zip(&leaves)
        .map(|(g, leaf)| multipliers.matmul(g).reshape(&leaf.shape()[1..]))
        .collect();
    (tree_unflatten(&def, sums), num_clipped)
}

/// [`per_example_global_norm_clip`] leaf by leaf (`optax.per_example_layer_norm_clip`): each
/// leaf's examples clipped to their own norm bound, `global_l2_norm_clip * sqrt(1 / leaves)`
/// when `uniform`, else `global_l2_norm_clip * sqrt(leaf size / total size)` (sizes per
/// example), so that the bounds' global norm is `global_l2_norm_clip`. Returns the tree of
/// clipped sums and the tree of per-leaf clipped counts (`i32` scalars).
///
/// ```
/// use jaxrs::prelude::*;
///
/// // Two leaves of one example each, norms 3 and 4, each bound 5 / sqrt(2).
/// let grads = (Array::from_vec(vec![3.0f32], &[1, 1]), Array::from_vec(vec![4.0f32], &[1, 1]));
/// let (sum, clipped) = jaxrs::optim::per_example_layer_norm_clip(&grads, 5.0, true);
/// assert_eq!(sum.0.to_vec::<f32>(), vec![3.0]);
/// assert!((sum.1.to_vec::<f32>()[0] - 5.0 / 2f32.sqrt()).abs() < 1e-6);
/// assert_eq!((clipped.0.item::<i32>(), clipped.1.item::<i32>()), (0, 1));
/// ```
#[track_caller]
pub fn per_example_layer_norm_clip<P: Tree>(
    grads: &P,
    global_l2_norm_clip: f64,
    uniform: bool,
) -> (P, P) {
    let (leaves, def) = grads.flatten();
    let per_example_size = |x: &Array| x.shape().iter().skip(1).product::<usize>();
    let total: usize = leaves.iter().map(per_example_size).sum();
    let (sums, counts) = leaves
        .iter()
        .map(|g| {
            let clip = if uniform {
                global_l2_norm_clip * (1.0 / leaves.len() as f64).powf(0.5)
            } else {
                global_l2_norm_clip * (per_example_size(g) as f64 / total as f64).powf(0.5)
            };
            per_example_global_norm_clip(g, clip)
        })
        .unzip();
    (tree_unflatten(&def, sums), tree_unflatten(&def, counts))
}

/// The state of [`snapshot`] (`optax.SnapshotState`).
#[derive(Tree, Clone, Debug)]
pub struct SnapshotState {
    /// The measure of the last updates (of the parameters, after `init`).
    pub measurement: Array,
}

/// A measurement of the updates kept in the state; see [`snapshot`].
#[derive(Clone)]
pub struct Snapshot {
    measure_name: String,
    measure: Arc<dyn Fn(Vec<Array>) -> Array + Send + Sync>,
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Snapshot({:?})", self.measure_name)
    }
}

impl Snapshot {
    /// The name given to the measurement.
    pub fn measure_name(&self) -> &str {
        &self.measure_name
    }
}

/// Keeps `measure(updates)` in the state and passes the updates on unchanged
/// (`optax.snapshot`): in a [`chain`](super::chain), a look at the updates at that point
/// (their norm before clipping, say); `init` measures the parameters. `measure` gets the
/// updates' leaves (a tree itself, so [`global_norm`] takes them) and returns one array.
/// optax finds the measurement by its name with `optax.tree.get`; here it is the state's
/// `measurement` field, and the name is [`Snapshot::measure_name`].
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::chain((
///     optim::snapshot("norm_before_clip", |leaves| optim::global_norm(&leaves)),
///     optim::clip_by_global_norm(1.0),
/// ));
/// let g = Array::from_vec(vec![3.0f32, 4.0], &[2]);
/// let (u, state) = opt.update(g.clone(), opt.init(&g), None);
/// assert_eq!(state.0.measurement.item::<f32>(), 5.0);
/// assert!((u.to_vec::<f32>()[1] - 0.8).abs() < 1e-6);
/// ```
pub fn snapshot(
    measure_name: &str,
    measure: impl Fn(Vec<Array>) -> Array + Send + Sync + 'static,
) -> Snapshot {
    Snapshot {
        measure_name: measure_name.to_string(),
        measure: Arc::new(measure),
    }
}

impl GradientTransformation for Snapshot {
    type State<P: Tree> = SnapshotState;

    fn init<P: Tree>(&self, params: &P) -> SnapshotState {
        SnapshotState {
            measurement: (self.measure)(params.flatten().0),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        _state: SnapshotState,
        _params: Option<&P>,
    ) -> (P, SnapshotState) {
        let measurement = (self.measure)(updates.flatten().0);
        (updates, SnapshotState { measurement })
    }
}
