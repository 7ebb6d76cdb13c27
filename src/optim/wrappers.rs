//! optax's wrappers: transformations of other transformations (`masked`, `partition`,
//! `MultiSteps`, `inject_hyperparams`, `apply_if_finite`, the conditionals, `lookahead`,
//! `flatten`).
//!
//! Where optax branches with `lax.cond`, these compute both branches and select with
//! `where`: the selected values are the same, and the wrapper traces into one jitted step
//! without a conditional.

use super::transforms::{all_finite, set_to_zero, SetToZero};
use super::tree_math::tree_clone;
use super::{safe_increment, zero_count, ExtraArgs, GradientTransformation, LearningRate, Mask};
use crate::{tree_map, tree_map2, tree_paths, tree_unflatten, where_, Array, DType, Tree};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A wrapper's `update` and `update_with_extra_args`, both its inherent `step` (which takes
/// the extra arguments as an `Option`).
macro_rules! update_through_step {
    () => {
        #[track_caller]
        fn update<P: Tree>(
            &self,
            updates: P,
            state: Self::State<P>,
            params: Option<&P>,
        ) -> (P, Self::State<P>) {
            self.step(updates, state, params, None)
        }

        #[track_caller]
        fn update_with_extra_args<P: Tree>(
            &self,
            updates: P,
            state: Self::State<P>,
            params: Option<&P>,
            extra: &ExtraArgs<'_, P>,
        ) -> (P, Self::State<P>) {
            self.step(updates, state, params, Some(extra))
        }
    };
}

/// `inner.update`, or `inner.update_with_extra_args` when `extra` is given: a wrapper hands
/// optax's extra arguments (`value`, `grad`, `value_fn`) on to the transformation it wraps,
/// as optax's wrappers pass `**extra_args`.
fn inner_update<T: GradientTransformation, P: Tree>(
    inner: &T,
    updates: P,
    state: T::State<P>,
    params: Option<&P>,
    extra: Option<&ExtraArgs<'_, P>>,
) -> (P, T::State<P>) {
    match extra {
        Some(extra) => inner.update_with_extra_args(updates, state, params, extra),
        None => inner.update(updates, state, params),
    }
}

/// `tree` with the leaves whose flag is false replaced by zeros.
fn zero_out<P: Tree>(tree: &P, flags: &[bool]) -> P {
    let (leaves, def) = tree.flatten();
    let out = leaves
        .iter()
        .zip(flags)
        .map(|(l, &on)| if on { l.clone() } else { Array::zeros_like(l) })
        .collect();
    tree_unflatten(&def, out)
}

/// `new` where the flag is true, `old` elsewhere, leaf by leaf.
fn pick<P: Tree>(new: &P, old: &P, flags: &[bool]) -> P {
    let (n, def) = new.flatten();
    let (o, _) = old.flatten();
    let out = n
        .into_iter()
        .zip(o)
        .zip(flags)
        .map(|((n, o), &on)| if on { n } else { o })
        .collect();
    tree_unflatten(&def, out)
}

/// `new` where `cond` (a `bool` scalar) holds, else `old`, over every leaf of two trees of
/// one structure, in `old`'s dtypes.
fn select<T: Tree>(cond: &Array, new: &T, old: &T) -> T {
    tree_map2(old, new, |o, n| where_(cond, n, o).astype(o.dtype()))
}

// ---------------------------------------------------------------------------------------
// masked, freeze.

/// A transformation applied to some leaves only; see [`masked`].
#[derive(Clone, Debug)]
pub struct Masked<T> {
    inner: T,
    mask: Mask,
}

/// The state of [`masked`]: the inner transformation's.
#[derive(Tree, Clone, Debug)]
pub struct MaskedState<S> {
    /// The inner transformation's state.
    pub inner_state: S,
}

/// Applies `inner` to the leaves in `mask` and passes the others through unchanged
/// (`optax.masked`), with any transformation inside.
///
/// optax gives the inner transformation a tree with placeholders where the mask is false;
/// a Rust state has the parameters' type, so here the inner transformation sees zeros
/// there (its state keeps entries for them, which stay at their initial values for the
/// elementwise transformations). Zeros add nothing to a global norm, so
/// `masked(clip_by_global_norm(..), mask)` clips by the norm of the masked leaves, as in
/// optax.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation, Mask};
/// use jaxrs::prelude::*;
///
/// let opt = optim::masked(optim::sgd(0.5), Mask::Leaves(vec![true, false]));
/// let g = (Array::ones(&[1], DType::F32), Array::ones(&[1], DType::F32));
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// assert_eq!((u.0.to_vec::<f32>()[0], u.1.to_vec::<f32>()[0]), (-0.5, 1.0));
/// ```
pub fn masked<T: GradientTransformation>(inner: T, mask: Mask) -> Masked<T> {
    Masked { inner, mask }
}

impl<T: GradientTransformation> Masked<T> {
    /// `update`, with optax's extra arguments passed on to the inner transformation when
    /// given.
    #[track_caller]
    fn step<P: Tree>(
        &self,
        updates: P,
        state: <Self as GradientTransformation>::State<P>,
        params: Option<&P>,
        extra: Option<&ExtraArgs<'_, P>>,
    ) -> (P, <Self as GradientTransformation>::State<P>) {
        let flags = self.mask.flags(&updates);
        let masked_params = params.map(|p| zero_out(p, &flags));
        let (new, inner_state) = inner_update(
            &self.inner,
            zero_out(&updates, &flags),
            state.inner_state,
            masked_params.as_ref(),
            extra,
        );
        (pick(&new, &updates, &flags), MaskedState { inner_state })
    }
}

impl<T: GradientTransformation> GradientTransformation for Masked<T> {
    type State<P: Tree> = MaskedState<T::State<P>>;

    fn init<P: Tree>(&self, params: &P) -> Self::State<P> {
        let flags = self.mask.flags(params);
        MaskedState {
            inner_state: self.inner.init(&zero_out(params, &flags)),
        }
    }

    update_through_step!();
}

/// [`freeze`]'s type.
pub type Freeze = Masked<SetToZero>;

/// Zero updates for the leaves in `mask`, the others unchanged (`optax.freeze`).
pub fn freeze(mask: Mask) -> Freeze {
    masked(set_to_zero(), mask)
}

// ---------------------------------------------------------------------------------------
// partition (multi_transform), selective_transform.

/// Which transformation of a [`partition`] each leaf belongs to: an index into its tuple.
#[derive(Clone)]
pub enum Labels {
    /// One index per leaf, in leaf order.
    Leaves(Vec<usize>),
    /// An index from each leaf's path as [`tree_paths`] writes it.
    Paths(Arc<dyn Fn(&str) -> usize + Send + Sync>),
}

impl Labels {
    /// The index of each leaf from its path.
    pub fn paths(f: impl Fn(&str) -> usize + Send + Sync + 'static) -> Labels {
        Labels::Paths(Arc::new(f))
    }

    #[track_caller]
    fn of<P: Tree>(&self, tree: &P, groups: usize) -> Vec<usize> {
        let labels = match self {
            Labels::Leaves(v) => {
                let n = tree.structure().num_leaves();
                assert_eq!(v.len(), n, "partition: {} labels for {n} leaves", v.len());
                v.clone()
            }
            Labels::Paths(f) => tree_paths(tree).iter().map(|p| f(p)).collect(),
        };
        if let Some(bad) = labels.iter().find(|&&l| l >= groups) {
            panic!("partition: label {bad} but only {groups} transformations");
        }
        labels
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Labels::Leaves(v) => write!(f, "Labels::Leaves({v:?})"),
            Labels::Paths(_) => f.write_str("Labels::Paths(..)"),
        }
    }
}

/// Different transformations for different leaves; see [`partition`].
#[derive(Clone, Debug)]
pub struct Partition<T> {
    transforms: T,
    labels: Labels,
}

/// The state of [`partition`]: one masked state per transformation, in tuple order.
#[derive(Tree, Clone, Debug)]
pub struct PartitionState<S> {
    /// The transformations' states.
    pub inner_states: S,
}

/// [`PartitionState`] under optax's other name.
pub type MultiTransformState<S> = PartitionState<S>;

/// Applies `transforms.i` to the leaves labelled `i` (`optax.partition`, also
/// `optax.multi_transform`; optax names the groups by keys of a dict, here they are the
/// positions in a tuple of 1 to 4 transformations). Each transformation runs
/// [`masked`] to its leaves.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation, Labels};
/// use jaxrs::prelude::*;
///
/// // Adam for the leaf `w`, SGD for the rest.
/// let opt = optim::partition(
///     (optim::adam(0.1, 0.9, 0.999, 1e-8), optim::sgd(0.5)),
///     Labels::paths(|p| if p == "0" { 0 } else { 1 }),
/// );
/// let g = (Array::ones(&[1], DType::F32), Array::ones(&[1], DType::F32));
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// assert!((u.0.to_vec::<f32>()[0] + 0.1).abs() < 1e-6);
/// assert_eq!(u.1.to_vec::<f32>()[0], -0.5);
/// ```
pub fn partition<T>(transforms: T, labels: Labels) -> Partition<T> {
    Partition { transforms, labels }
}

/// The same as [`partition`] (`optax.multi_transform`).
pub fn multi_transform<T>(transforms: T, labels: Labels) -> Partition<T> {
    partition(transforms, labels)
}

macro_rules! partition_tuple {
    ($n:literal; $($t:ident $i:tt),+) => {
        impl<$($t: GradientTransformation + Clone),+> Partition<($($t,)+)> {
            /// `update`, with optax's extra arguments passed on to each transformation when
            /// given.
            #[track_caller]
            fn step<P: Tree>(
                &self,
                updates: P,
                state: <Self as GradientTransformation>::State<P>,
                params: Option<&P>,
                extra: Option<&ExtraArgs<'_, P>>,
            ) -> (P, <Self as GradientTransformation>::State<P>) {
                let labels = self.labels.of(&updates, $n);
                $(
                    let (updates, $t) = inner_update(
                        &masked(
                            self.transforms.$i.clone(),
                            Mask::Leaves(labels.iter().map(|&l| l == $i).collect()),
                        ),
                        updates,
                        state.inner_states.$i,
                        params,
                        extra,
                    );
                )+
                (updates, PartitionState { inner_states: ($($t,)+) })
            }
        }

        impl<$($t: GradientTransformation + Clone),+> GradientTransformation for Partition<($($t,)+)> {
            type State<P: Tree> = PartitionState<($(MaskedState<$t::State<P>>,)+)>;

            #[track_caller]
            fn init<P: Tree>(&self, params: &P) -> Self::State<P> {
                let labels = self.labels.of(params, $n);
                PartitionState {
                    inner_states: ($(
                        masked(
                            self.transforms.$i.clone(),
                            Mask::Leaves(labels.iter().map(|&l| l == $i).collect()),
                        )
                        .init(params),
                    )+),
                }
            }

            update_through_step!();
        }
    };
}

#[allow(non_snake_case)]
mod partition_impls {
    use super::*;
    partition_tuple!(1; A 0);
    partition_tuple!(2; A 0, B 1);
    partition_tuple!(3; A 0, B 1, C 2);
    partition_tuple!(4; A 0, B 1, C 2, D 3);
}

/// [`selective_transform`]'s type.
pub type SelectiveTransform<T> = Partition<(T, SetToZero)>;

/// `optimizer` on the leaves not in `freeze_mask`, zero updates on those in it
/// (`optax.selective_transform`).
#[track_caller]
pub fn selective_transform<T: GradientTransformation>(
    optimizer: T,
    freeze_mask: Mask,
) -> SelectiveTransform<T> {
    let labels = match freeze_mask {
        Mask::All => Labels::paths(|_| 1),
        Mask::Leaves(v) => Labels::Leaves(v.iter().map(|&f| f as usize).collect()),
        Mask::Paths(f) => Labels::Paths(Arc::new(move |p| f(p) as usize)),
    };
    partition((optimizer, set_to_zero()), labels)
}

// ---------------------------------------------------------------------------------------
// MultiSteps.

/// Whether [`MultiSteps`] skips a step: from the gradients' leaves and the gradient step
/// count, a `bool` scalar and the values it keeps in [`MultiStepsState::skip_state`].
pub type ShouldSkipUpdateFunction =
    Arc<dyn Fn(&[Array], &Array) -> (Array, Vec<Array>) + Send + Sync>;

/// Skips the step when any gradient is not finite (`optax.skip_not_finite`); keeps
/// `[should_skip, num_not_finite]`.
pub fn skip_not_finite(updates: &[Array], _gradient_step: &Array) -> (Array, Vec<Array>) {
    let num = updates.iter().fold(Array::scalar(0i32), |acc, p| {
        let all: Vec<i64> = (0..p.rank() as i64).collect();
        acc + p
            .isfinite()
            .logical_not()
            .astype(DType::I32)
            .sum(all, false)
    });
    let skip = num.gt(0);
    (skip.clone(), vec![skip, num])
}

/// Skips the step when the gradients' squared norm is not below `max_squared_norm`
/// (`optax.skip_large_updates`); keeps `[should_skip, norm_squared]`.
pub fn skip_large_updates(
    updates: &[Array],
    _gradient_step: &Array,
    max_squared_norm: f64,
) -> (Array, Vec<Array>) {
    let norm_sq = updates
        .iter()
        .fold(Array::full(&[], 0.0, DType::F32), |acc, p| {
            acc + (p * p).sum(None, false)
        });
    let skip = norm_sq.lt(max_squared_norm).logical_not();
    (skip.clone(), vec![skip, norm_sq])
}

/// The state of [`MultiSteps`].
#[derive(Tree, Clone, Debug)]
pub struct MultiStepsState<S, P> {
    /// Gradients accumulated since the last inner step (`i32` scalar, below `k`).
    pub mini_step: Array,
    /// Inner steps done (`i32` scalar).
    pub gradient_step: Array,
    /// The inner optimizer's state.
    pub inner_opt_state: S,
    /// The gradients accumulated (their mean, or their sum).
    pub acc_grads: P,
    /// What the skip function kept at the last step.
    pub skip_state: Vec<Array>,
}

/// Gradient accumulation (`optax.MultiSteps`): the inner optimizer steps once every `k`
/// calls, on the mean (or the sum) of the `k` gradients, and the updates in between are
/// zero, so `k` small batches act as one large one.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation, MultiSteps};
/// use jaxrs::prelude::*;
///
/// let opt = MultiSteps::new(optim::sgd(1.0), 2);
/// let p = Array::zeros(&[1], DType::F32);
/// let s = opt.init(&p);
/// let (u0, s) = opt.update(Array::from_vec(vec![1.0f32], &[1]), s, None);
/// let (u1, s) = opt.update(Array::from_vec(vec![3.0f32], &[1]), s, None);
/// assert_eq!((u0.to_vec::<f32>()[0], u1.to_vec::<f32>()[0]), (0.0, -2.0));
/// assert!(MultiSteps::<optim::Sgd>::has_updated(&s).item::<bool>());
/// ```
#[derive(Clone)]
pub struct MultiSteps<T> {
    opt: T,
    every_k: i32,
    use_grad_mean: bool,
    should_skip: Option<ShouldSkipUpdateFunction>,
}

impl<T: fmt::Debug> fmt::Debug for MultiSteps<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MultiSteps")
            .field("opt", &self.opt)
            .field("every_k", &self.every_k)
            .field("use_grad_mean", &self.use_grad_mean)
            .finish()
    }
}

impl<T: GradientTransformation> MultiSteps<T> {
    /// `opt` stepping every `every_k_schedule` calls, on the gradients' mean.
    #[track_caller]
    pub fn new(opt: T, every_k_schedule: i32) -> Self {
        assert!(
            every_k_schedule >= 1,
            "MultiSteps: every_k_schedule must be at least 1, got {every_k_schedule}"
        );
        MultiSteps {
            opt,
            every_k: every_k_schedule,
            use_grad_mean: true,
            should_skip: None,
        }
    }

    /// Accumulate the mean (the default) or the sum of the gradients.
    pub fn use_grad_mean(mut self, use_grad_mean: bool) -> Self {
        self.use_grad_mean = use_grad_mean;
        self
    }

    /// A test that skips a call altogether (no accumulation, no step), such as
    /// [`skip_not_finite`].
    pub fn should_skip_update_fn(
        mut self,
        f: impl Fn(&[Array], &Array) -> (Array, Vec<Array>) + Send + Sync + 'static,
    ) -> Self {
        self.should_skip = Some(Arc::new(f));
        self
    }

    /// The inner optimizer.
    pub fn inner_opt(&self) -> &T {
        &self.opt
    }

    /// Whether the last call stepped the inner optimizer (`MultiSteps.has_updated`).
    pub fn has_updated<P: Tree>(state: &MultiStepsState<T::State<P>, P>) -> Array {
        state.mini_step.eq(0).logical_and(state.gradient_step.gt(0))
    }

    fn skip(&self, updates: &[Array], step: &Array) -> (Array, Vec<Array>) {
        match &self.should_skip {
            Some(f) => f(updates, step),
            None => (Array::scalar(false), vec![]),
        }
    }

    /// `update`, with optax's extra arguments passed on to the inner transformation when
    /// given.
    fn step<P: Tree>(
        &self,
        updates: P,
        state: <Self as GradientTransformation>::State<P>,
        params: Option<&P>,
        extra: Option<&ExtraArgs<'_, P>>,
    ) -> (P, <Self as GradientTransformation>::State<P>) {
        let k = self.every_k;
        let (skip, skip_state) = self.skip(&updates.flatten().0, &state.gradient_step);
        let mini = &state.mini_step;
        let acc_grads = tree_map2(&updates, &state.acc_grads, |g, acc| {
            if self.use_grad_mean {
                acc + (g - acc) / (mini + 1).astype(acc.dtype())
            } else {
                g + acc
            }
        });
        let cast_like = tree_map2(&acc_grads, &updates, |a, u| a.astype(u.dtype()));
        let (final_updates, new_inner) = inner_update(
            &self.opt,
            cast_like,
            tree_clone(&state.inner_opt_state),
            params,
            extra,
        );
        let emit = mini.eq(k - 1);
        let emit_f = emit.astype(DType::F32);
        let keep_f: Array = 1.0 - &emit_f;
        let done = MultiStepsState {
            mini_step: safe_increment(mini).rem(k),
            gradient_step: where_(
                &emit,
                safe_increment(&state.gradient_step),
                &state.gradient_step,
            ),
            inner_opt_state: select(&emit, &new_inner, &state.inner_opt_state),
            acc_grads: tree_map(&acc_grads, |ga| (&keep_f * ga).astype(DType::F32)),
            skip_state: skip_state.clone(),
        };
        let final_updates = tree_map(&final_updates, |u| emit_f.astype(u.dtype()) * u);
        let updates = tree_map(&final_updates, |u| where_(&skip, Array::zeros_like(u), u));
        let state = MultiStepsState {
            mini_step: where_(&skip, &state.mini_step, &done.mini_step),
            gradient_step: where_(&skip, &state.gradient_step, &done.gradient_step),
            inner_opt_state: select(&skip, &state.inner_opt_state, &done.inner_opt_state),
            acc_grads: select(&skip, &state.acc_grads, &done.acc_grads),
            skip_state,
        };
        (updates, state)
    }
}

impl<T: GradientTransformation> GradientTransformation for MultiSteps<T> {
    type State<P: Tree> = MultiStepsState<T::State<P>, P>;

    fn init<P: Tree>(&self, params: &P) -> Self::State<P> {
        let zeros = tree_map(params, Array::zeros_like);
        let gradient_step = zero_count();
        let (_, skip_state) = self.skip(&zeros.flatten().0, &gradient_step);
        MultiStepsState {
            mini_step: zero_count(),
            gradient_step,
            inner_opt_state: self.opt.init(params),
            acc_grads: tree_map(params, |p| Array::zeros(p.shape(), DType::F32)),
            skip_state,
        }
    }

    update_through_step!();
}

// ---------------------------------------------------------------------------------------
// inject_hyperparams.

/// The hyperparameters [`inject_hyperparams`] hands its factory, by name: `f32` scalars
/// (`f64` when the parameters are), traced inside jit.
pub type Hyperparams = BTreeMap<String, Array>;

/// The state of [`inject_hyperparams`].
#[derive(Tree, Clone, Debug)]
pub struct InjectHyperparamsState<S> {
    /// Updates done so far (`i32` scalar).
    pub count: Array,
    /// The hyperparameters' values at the last update. A constant one is read back from
    /// here at each update, so setting it in the state changes it (a learning rate lowered
    /// by hand, say); a scheduled one is recomputed from `count`.
    pub hyperparams: Hyperparams,
    /// The inner optimizer's state.
    pub inner_state: S,
}

/// [`InjectHyperparamsState`] under optax's other name.
pub type InjectStatefulHyperparamsState<S> = InjectHyperparamsState<S>;

/// An optimizer rebuilt at each step from hyperparameters kept in its state; see
/// [`inject_hyperparams`].
#[derive(Clone)]
pub struct InjectHyperparams<F> {
    factory: F,
    hyperparams: Vec<(String, LearningRate)>,
}

impl<F> fmt::Debug for InjectHyperparams<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InjectHyperparams")
            .field("hyperparams", &self.hyperparams)
            .finish()
    }
}

/// Moves hyperparameters into the optimizer's state (`optax.inject_hyperparams`): at each
/// update `factory` builds the optimizer from their current values (schedules evaluated
/// on the count, constants read from the state), so they can be read, logged and changed
/// between steps. The values are arrays; the optimizers' `learning_rate` takes one
/// (`LearningRate::from(array)`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::inject_hyperparams(
///     |h| optim::sgd(h["learning_rate"].clone()),
///     vec![("learning_rate", 0.1.into())],
/// );
/// let p = Array::zeros(&[1], DType::F32);
/// let mut state = opt.init(&p);
/// // Lower the learning rate by hand.
/// state.hyperparams.insert("learning_rate".into(), Array::scalar(0.01f32));
/// let (u, _) = opt.update(Array::ones(&[1], DType::F32), state, None);
/// assert_eq!(u.to_vec::<f32>(), vec![-0.01]);
/// ```
pub fn inject_hyperparams<T, F>(
    factory: F,
    hyperparams: Vec<(&str, LearningRate)>,
) -> InjectHyperparams<F>
where
    T: GradientTransformation,
    F: Fn(&Hyperparams) -> T,
{
    InjectHyperparams {
        factory,
        hyperparams: hyperparams
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

fn hyper_dtype<P: Tree>(params: Option<&P>) -> DType {
    let wide = params.is_some_and(|p| p.flatten().0.iter().any(|l| l.dtype() == DType::F64));
    if wide {
        DType::F64
    } else {
        DType::F32
    }
}

impl<T, F> InjectHyperparams<F>
where
    T: GradientTransformation,
    F: Fn(&Hyperparams) -> T,
{
    fn values(&self, count: &Array, stored: Option<&Hyperparams>, dtype: DType) -> Hyperparams {
        self.hyperparams
            .iter()
            .map(|(name, v)| {
                let value = match (v, stored) {
                    (LearningRate::Schedule(s), _) => s.at(count).astype(dtype),
                    (_, Some(stored)) => stored[name].astype(dtype),
                    (LearningRate::Constant(c), None) => Array::full(&[], *c, dtype),
                    (LearningRate::Value(a), None) => a.astype(dtype),
                };
                (name.clone(), value)
            })
            .collect()
    }
}

impl<T, F> InjectHyperparams<F>
where
    T: GradientTransformation,
    F: Fn(&Hyperparams) -> T,
{
    /// `update`, with optax's extra arguments passed on to the inner transformation when
    /// given.
    fn step<P: Tree>(
        &self,
        updates: P,
        state: <Self as GradientTransformation>::State<P>,
        params: Option<&P>,
        extra: Option<&ExtraArgs<'_, P>>,
    ) -> (P, <Self as GradientTransformation>::State<P>) {
        let hyperparams = self.values(&state.count, Some(&state.hyperparams), hyper_dtype(params));
        let (updates, inner_state) = inner_update(
            &(self.factory)(&hyperparams),
            updates,
            state.inner_state,
            params,
            extra,
        );
        (
            updates,
            InjectHyperparamsState {
                count: safe_increment(&state.count),
                hyperparams,
                inner_state,
            },
        )
    }
}

impl<T, F> GradientTransformation for InjectHyperparams<F>
where
    T: GradientTransformation,
    F: Fn(&Hyperparams) -> T,
{
    type State<P: Tree> = InjectHyperparamsState<T::State<P>>;

    fn init<P: Tree>(&self, params: &P) -> Self::State<P> {
        let count = zero_count();
        let hyperparams = self.values(&count, None, hyper_dtype(Some(params)));
        let inner_state = (self.factory)(&hyperparams).init(params);
        InjectHyperparamsState {
            count,
            hyperparams,
            inner_state,
        }
    }

    update_through_step!();
}

// ---------------------------------------------------------------------------------------
// apply_if_finite, conditionally_mask, conditionally_transform.

/// The state of [`apply_if_finite`].
#[derive(Tree, Clone, Debug)]
pub struct ApplyIfFiniteState<S> {
    /// Consecutive non-finite steps so far (`i32` scalar).
    pub notfinite_count: Array,
    /// Whether the last updates were all finite (`bool` scalar).
    pub last_finite: Array,
    /// Non-finite steps in all (`i32` scalar).
    pub total_notfinite: Array,
    /// The inner transformation's state.
    pub inner_state: S,
}

/// A transformation skipped on non-finite updates; see [`apply_if_finite`].
#[derive(Clone, Debug)]
pub struct ApplyIfFinite<T> {
    inner: T,
    max_consecutive_errors: i32,
}

/// Applies `inner` only when all the updates are finite, else emits zeros and keeps the
/// inner state (`optax.apply_if_finite`); after more than `max_consecutive_errors`
/// non-finite steps in a row it applies them anyway, so a diverged run shows as NaN
/// parameters rather than as a silent stall.
pub fn apply_if_finite<T: GradientTransformation>(
    inner: T,
    max_consecutive_errors: i32,
) -> ApplyIfFinite<T> {
    ApplyIfFinite {
        inner,
        max_consecutive_errors,
    }
}

impl<T: GradientTransformation> ApplyIfFinite<T> {
    /// `update`, with optax's extra arguments passed on to the inner transformation when
    /// given.
    fn step<P: Tree>(
        &self,
        updates: P,
        state: <Self as GradientTransformation>::State<P>,
        params: Option<&P>,
        extra: Option<&ExtraArgs<'_, P>>,
    ) -> (P, <Self as GradientTransformation>::State<P>) {
        let isfinite = all_finite(&updates.flatten().0);
        let notfinite_count = where_(&isfinite, 0i32, safe_increment(&state.notfinite_count));
        let apply = isfinite.logical_or(notfinite_count.gt(self.max_consecutive_errors));
        let (new, inner_state) = inner_update(
            &self.inner,
            updates,
            tree_clone(&state.inner_state),
            params,
            extra,
        );
        let updates = tree_map(&new, |u| where_(&apply, u, Array::zeros_like(u)));
        (
            updates,
            ApplyIfFiniteState {
                notfinite_count,
                total_notfinite: where_(
                    &isfinite,
                    &state.total_notfinite,
                    safe_increment(&state.total_notfinite),
                ),
                last_finite: isfinite,
                inner_state: select(&apply, &inner_state, &state.inner_state),
            },
        )
    }
}

impl<T: GradientTransformation> GradientTransformation for ApplyIfFinite<T> {
    type State<P: Tree> = ApplyIfFiniteState<T::State<P>>;

    fn init<P: Tree>(&self, params: &P) -> Self::State<P> {
        ApplyIfFiniteState {
            notfinite_count: zero_count(),
            last_finite: Array::scalar(true),
            total_notfinite: zero_count(),
            inner_state: self.inner.init(params),
        }
    }

    update_through_step!();
}

/// A condition on the step count (an `i32` scalar) giving a `bool` scalar, for
/// [`conditionally_mask`] and [`conditionally_transform`].
pub type ConditionFn = Arc<dyn Fn(&Array) -> Array + Send + Sync>;

/// The state of [`conditionally_mask`] and [`conditionally_transform`] (optax's
/// `ConditionallyMaskState` and `ConditionallyTransformState`).
#[derive(Tree, Clone, Debug)]
pub struct ConditionallyMaskState<S> {
    /// Updates done so far (`i32` scalar).
    pub step: Array,
    /// The inner transformation's state.
    pub inner_state: S,
}

/// [`ConditionallyMaskState`] under optax's other name.
pub type ConditionallyTransformState<S> = ConditionallyMaskState<S>;

/// A transformation applied on some steps only; see [`conditionally_mask`].
#[derive(Clone)]
pub struct Conditionally<T> {
    inner: T,
    should_transform: ConditionFn,
    zero_otherwise: bool,
}

impl<T: fmt::Debug> fmt::Debug for Conditionally<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conditionally")
            .field("inner", &self.inner)
            .field("zero_otherwise", &self.zero_otherwise)
            .finish()
    }
}

/// Applies `inner` at the steps where `should_transform_fn(step)` holds and emits zeros at
/// the others, the inner state held (`optax.conditionally_mask`).
pub fn conditionally_mask<T: GradientTransformation>(
    inner: T,
    should_transform_fn: impl Fn(&Array) -> Array + Send + Sync + 'static,
) -> Conditionally<T> {
    Conditionally {
        inner,
        should_transform: Arc::new(should_transform_fn),
        zero_otherwise: true,
    }
}

/// Applies `inner` at the steps where `should_transform_fn(step)` holds and passes the
/// updates through unchanged at the others (`optax.conditionally_transform`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// // Clip only from step 100 on.
/// let opt = optim::conditionally_transform(optim::clip(1.0), |step| step.ge(100));
/// let g = Array::from_vec(vec![5.0f32], &[1]);
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// assert_eq!(u.to_vec::<f32>(), vec![5.0]);
/// ```
pub fn conditionally_transform<T: GradientTransformation>(
    inner: T,
    should_transform_fn: impl Fn(&Array) -> Array + Send + Sync + 'static,
) -> Conditionally<T> {
    Conditionally {
        inner,
        should_transform: Arc::new(should_transform_fn),
        zero_otherwise: false,
    }
}

impl<T: GradientTransformation> Conditionally<T> {
    /// `update`, with optax's extra arguments passed on to the inner transformation when
    /// given.
    fn step<P: Tree>(
        &self,
        updates: P,
        state: <Self as GradientTransformation>::State<P>,
        params: Option<&P>,
        extra: Option<&ExtraArgs<'_, P>>,
    ) -> (P, <Self as GradientTransformation>::State<P>) {
        let cond = (self.should_transform)(&state.step).astype(DType::Bool);
        let (new, inner_state) = inner_update(
            &self.inner,
            tree_clone(&updates),
            tree_clone(&state.inner_state),
            params,
            extra,
        );
        let updates = tree_map2(&new, &updates, |n, u| {
            let otherwise = if self.zero_otherwise {
                Array::zeros_like(u)
            } else {
                u.clone()
            };
            where_(&cond, n, otherwise)
        });
        (
            updates,
            ConditionallyMaskState {
                step: safe_increment(&state.step),
                inner_state: select(&cond, &inner_state, &state.inner_state),
            },
        )
    }
}

impl<T: GradientTransformation> GradientTransformation for Conditionally<T> {
    type State<P: Tree> = ConditionallyMaskState<T::State<P>>;

    fn init<P: Tree>(&self, params: &P) -> Self::State<P> {
        ConditionallyMaskState {
            step: zero_count(),
            inner_state: self.inner.init(params),
        }
    }

    update_through_step!();
}

// ---------------------------------------------------------------------------------------
// lookahead.

/// The fast and the slow parameters of [`lookahead`] (`optax.LookaheadParams`).
#[derive(Tree, Clone, Debug)]
pub struct LookaheadParams<P> {
    /// The parameters the fast optimizer steps.
    pub fast: P,
    /// The parameters pulled toward the fast ones every `sync_period` steps (evaluate
    /// these).
    pub slow: P,
}

impl<P: Tree + Clone> LookaheadParams<P> {
    /// Fast and slow both `params`.
    pub fn init_synced(params: P) -> Self {
        LookaheadParams {
            fast: params.clone(),
            slow: params,
        }
    }
}

/// The state of [`lookahead`].
#[derive(Tree, Clone, Debug)]
pub struct LookaheadState<S> {
    /// The fast optimizer's state.
    pub fast_state: S,
    /// Steps since the last synchronisation (`i32` scalar).
    pub steps_since_sync: Array,
}

/// The lookahead wrapper; see [`lookahead`].
#[derive(Clone, Debug)]
pub struct Lookahead<T> {
    fast_optimizer: T,
    sync_period: i32,
    slow_step_size: f64,
    reset_state: bool,
}

/// Lookahead (`optax.lookahead`): `fast_optimizer` steps the fast parameters, and every
/// `sync_period` steps the slow ones move `slow_step_size` of the way to them and the fast
/// ones restart from there. Its parameters are a [`LookaheadParams`] and its gradients
/// those of the fast parameters, so it has its own `init` and `update` rather than
/// [`GradientTransformation`]'s.
///
/// ```
/// use jaxrs::optim::{self, LookaheadParams};
/// use jaxrs::prelude::*;
///
/// let opt = optim::lookahead(optim::sgd(1.0), 2, 0.5, false);
/// let mut params = LookaheadParams::init_synced(Array::zeros(&[1], DType::F32));
/// let mut state = opt.init(&params);
/// for _ in 0..2 {
///     let (u, s) = opt.update(Array::ones(&[1], DType::F32), state, &params);
///     params = optim::apply_updates(&params, &u);
///     state = s;
/// }
/// // Fast went to -2, then both to the midpoint -1.
/// assert_eq!((params.fast.to_vec::<f32>()[0], params.slow.to_vec::<f32>()[0]), (-1.0, -1.0));
/// ```
#[track_caller]
pub fn lookahead<T: GradientTransformation>(
    fast_optimizer: T,
    sync_period: i32,
    slow_step_size: f64,
    reset_state: bool,
) -> Lookahead<T> {
    assert!(
        sync_period >= 1,
        "lookahead: sync_period must be at least 1, got {sync_period}"
    );
    Lookahead {
        fast_optimizer,
        sync_period,
        slow_step_size,
        reset_state,
    }
}

impl<T: GradientTransformation> Lookahead<T> {
    /// The initial state, from the fast parameters.
    pub fn init<P: Tree>(&self, params: &LookaheadParams<P>) -> LookaheadState<T::State<P>> {
        LookaheadState {
            fast_state: self.fast_optimizer.init(&params.fast),
            steps_since_sync: zero_count(),
        }
    }

    /// The updates of both parameter sets from the fast parameters' gradients.
    pub fn update<P: Tree>(
        &self,
        updates: P,
        state: LookaheadState<T::State<P>>,
        params: &LookaheadParams<P>,
    ) -> (LookaheadParams<P>, LookaheadState<T::State<P>>) {
        let (updates, fast_state) =
            self.fast_optimizer
                .update(updates, state.fast_state, Some(&params.fast));
        let sync_next = state.steps_since_sync.eq(self.sync_period - 1);
        let s = sync_next.astype(DType::F32);
        let diff = super::tree_math::tree_map_n(&[&params.fast, &updates, &params.slow], |a| {
            a[0] + a[1] - a[2]
        });
        let slow = tree_map(&diff, |d| (&s * self.slow_step_size).astype(d.dtype()) * d);
        let fast = tree_map2(&updates, &diff, |u, d| {
            u - (&s * (1.0 - self.slow_step_size)).astype(d.dtype()) * d
        });
        let fast_state = if self.reset_state {
            let initial = self.fast_optimizer.init(&params.fast);
            select(&sync_next, &initial, &fast_state)
        } else {
            fast_state
        };
        let steps_since_sync = (&state.steps_since_sync + 1).rem(self.sync_period);
        (
            LookaheadParams { fast, slow },
            LookaheadState {
                fast_state,
                steps_since_sync,
            },
        )
    }
}

// ---------------------------------------------------------------------------------------
// flatten.

/// A transformation run on all the leaves as one vector; see [`flatten`].
#[derive(Clone, Debug)]
pub struct Flatten<T> {
    inner: T,
}

/// Runs `inner` on the concatenation of all the leaves, raveled, and splits its updates
/// back (`optax.flatten`): one large array instead of many small ones. The leaves must
/// share a dtype.
pub fn flatten<T: GradientTransformation>(inner: T) -> Flatten<T> {
    Flatten { inner }
}

fn ravel_all<P: Tree>(tree: &P) -> Array {
    let (leaves, _) = tree.flatten();
    let flat: Vec<Array> = leaves.iter().map(|l| l.reshape([l.size()])).collect();
    Array::concatenate(&flat, 0)
}

fn unravel_like<P: Tree>(like: &P, flat: &Array) -> P {
    let (leaves, def) = like.flatten();
    let mut offset = 0;
    let out = leaves
        .iter()
        .map(|l| {
            let n = l.size();
            let piece = flat
                .slice(&[offset], &[offset + n], &[1])
                .reshape(l.shape());
            offset += n;
            piece
        })
        .collect();
    tree_unflatten(&def, out)
}

impl<T: GradientTransformation> GradientTransformation for Flatten<T> {
    type State<P: Tree> = T::State<Array>;

    fn init<P: Tree>(&self, params: &P) -> T::State<Array> {
        self.inner.init(&ravel_all(params))
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: T::State<Array>,
        params: Option<&P>,
    ) -> (P, T::State<Array>) {
        let flat_params = params.map(ravel_all);
        let (flat, state) = self
            .inner
            .update(ravel_all(&updates), state, flat_params.as_ref());
        (unravel_like(&updates, &flat), state)
    }
}
