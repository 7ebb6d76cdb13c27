//! Gradient noise (`optax.add_noise`, `optax.noisy_sgd`).

use super::linesearch::tree_add_scale;
use super::{chain, safe_increment, scale_by_learning_rate, zero_count, Chain};
use super::{GradientTransformation, LearningRate, ScaleByLearningRate};
use crate::lax::index_in_dim;
use crate::{random, tree_unflatten, Array, DType, Tree};

/// The state of [`add_noise`] (`optax.AddNoiseState`).
#[derive(Tree, Clone, Debug)]
pub struct AddNoiseState {
    /// Updates done so far (`i32` scalar), for the annealing.
    pub count: Array,
    /// The random key of the next draw (a [`random::key`]).
    pub rng_key: Array,
}

/// Annealed Gaussian gradient noise; see [`add_noise`].
#[derive(Clone, Debug)]
pub struct AddNoise {
    eta: f64,
    gamma: f64,
    key: Array,
}

/// Adds Gaussian noise of variance `eta / t^gamma` at step `t` (from 1) to the updates
/// (`optax.add_noise`, Neelakantan et al. 2015). The draws are `jax.random`'s: at each step
/// the state's key splits in two, the first kept for the next step, the second split into
/// one key per leaf, each leaf's noise `random::normal` of that key; so from the same `key`
/// (`jax.random.key(0)` is `random::key(0)`) the noise is optax's, bit for bit.
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::add_noise(0.01, 0.55, &jaxrs::random::key(0));
/// let g = Array::zeros(&[3], DType::F32);
/// let (u, state) = opt.update(g.clone(), opt.init(&g), None);
/// assert!(u.to_vec::<f32>().iter().all(|x| x.abs() < 0.5));
/// assert_eq!(state.count.item::<i32>(), 1);
/// ```
pub fn add_noise(eta: f64, gamma: f64, key: &Array) -> AddNoise {
    AddNoise {
        eta,
        gamma,
        key: key.clone(),
    }
}

impl GradientTransformation for AddNoise {
    type State<P: Tree> = AddNoiseState;

    fn init<P: Tree>(&self, _params: &P) -> AddNoiseState {
        AddNoiseState {
            count: zero_count(),
            rng_key: self.key.clone(),
        }
    }

    fn update<P: Tree>(
        &self,
        updates: P,
        state: AddNoiseState,
        _params: Option<&P>,
    ) -> (P, AddNoiseState) {
        let count = safe_increment(&state.count);
        let std = (self.eta / count.astype(DType::F32).pow(self.gamma)).sqrt();
        let keys = random::split(&state.rng_key, 2);
        let rng_key = index_in_dim(&keys, 0, 0, false);
        let sample_key = index_in_dim(&keys, 1, 0, false);
        let (leaves, def) = updates.flatten();
        let leaf_keys = random::split(&sample_key, leaves.len());
        let noise = leaves
            .iter()
            .enumerate()
            .map(|(i, leaf)| {
                let key = index_in_dim(&leaf_keys, i as i64, 0, false);
                random::normal(&key, leaf.shape(), leaf.dtype())
            })
            .collect();
        let noise: P = tree_unflatten(&def, noise);
        let updates = tree_add_scale(&updates, &std, &noise);
        (updates, AddNoiseState { count, rng_key })
    }
}

/// [`noisy_sgd`]'s type.
pub type NoisySgd = Chain<(AddNoise, ScaleByLearningRate)>;

/// SGD on noisy gradients (`optax.noisy_sgd`): [`add_noise`] then `-learning_rate`
/// (optax's defaults: `eta = 0.01`, `gamma = 0.55`).
///
/// ```
/// use jaxrs::optim::{self, GradientTransformation};
/// use jaxrs::prelude::*;
///
/// let opt = optim::noisy_sgd(0.1, 0.01, 0.55, &jaxrs::random::key(0));
/// let g = Array::ones(&[2], DType::F32);
/// let (u, _) = opt.update(g.clone(), opt.init(&g), None);
/// assert!(u.to_vec::<f32>().iter().all(|x| (x + 0.1).abs() < 0.05));
/// ```
pub fn noisy_sgd(
    learning_rate: impl Into<LearningRate>,
    eta: f64,
    gamma: f64,
    key: &Array,
) -> NoisySgd {
    chain((
        add_noise(eta, gamma, key),
        scale_by_learning_rate(learning_rate),
    ))
}
