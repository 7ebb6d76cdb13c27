//! Polyak step sizes (`optax.scale_by_polyak`, `optax.polyak_sgd`).

use super::linesearch::{tree_scale, ExtraArgs};
use super::{chain, scale_by_learning_rate, Chain, GradientTransformation, LearningRate, Sgd};
use crate::{where_, Array, Tree};

/// Which Polyak step [`scale_by_polyak`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolyakVariant {
    /// `(f(x) - f_min) / |g|^2` (optax's `"sps"`, the default).
    Sps,
    /// The gap clipped at 0 first (optax's `"sps+"`).
    SpsPlus,
}

/// The Polyak step size; see [`scale_by_polyak`].
#[derive(Clone, Debug)]
pub struct ScaleByPolyak {
    f_min: f64,
    max_learning_rate: f64,
    eps: f64,
    variant: PolyakVariant,
}

/// Scales the updates by the Polyak step size `min((f(x) - f_min) / (|u|^2 + eps),
/// max_learning_rate)`, 0 when `|u|^2 + eps` is at most float64's epsilon
/// (`optax.scale_by_polyak`; optax's defaults are `f_min = 0`, `max_learning_rate = 1`,
/// `eps = 0`, [`PolyakVariant::Sps`]). Reads the objective's value `f(x)`: call
/// [`update_with_extra_args`](GradientTransformation::update_with_extra_args) with at least
/// [`ExtraArgs::value`]; plain `update` panics. No state.
///
/// ```
/// use jaxrs::optim::{self, ExtraArgs, GradientTransformation, PolyakVariant};
/// use jaxrs::prelude::*;
///
/// let opt = optim::scale_by_polyak(0.0, 1.0, 0.0, PolyakVariant::Sps);
/// let g = Array::from_vec(vec![3.0f32, 4.0], &[2]);
/// let value = Array::scalar(5.0f32); // step 5 / 25
/// let (u, ()) = opt.update_with_extra_args(g.clone(), (), None, &ExtraArgs::value(&value));
/// assert_eq!(u.to_vec::<f32>(), vec![0.6, 0.8]);
/// ```
pub fn scale_by_polyak(
    f_min: f64,
    max_learning_rate: f64,
    eps: f64,
    variant: PolyakVariant,
) -> ScaleByPolyak {
    ScaleByPolyak {
        f_min,
        max_learning_rate,
        eps,
        variant,
    }
}

impl GradientTransformation for ScaleByPolyak {
    type State<P: Tree> = ();

    fn init<P: Tree>(&self, _params: &P) {}

    #[track_caller]
    fn update<P: Tree>(&self, _updates: P, _state: (), _params: Option<&P>) -> (P, ()) {
        panic!(
            "scale_by_polyak needs the objective's value: call update_with_extra_args with ExtraArgs::value(&value)"
        )
    }

    fn update_with_extra_args<P: Tree>(
        &self,
        updates: P,
        _state: (),
        _params: Option<&P>,
        extra: &ExtraArgs<'_, P>,
    ) -> (P, ()) {
        let (leaves, _) = updates.flatten();
        let grad_sq_norm = leaves
            .iter()
            .map(|x| (x * x).sum(None, false))
            .fold(Array::weak_scalar(0i32), |acc, s| acc + s);
        let mut gap = (extra.value - self.f_min).astype(grad_sq_norm.dtype());
        if self.variant == PolyakVariant::SpsPlus {
            gap = gap.maximum(0.0);
        }
        let denom = &grad_sq_norm + self.eps;
        let step = where_(
            denom.le(f64::EPSILON),
            Array::zeros_like(&grad_sq_norm),
            (gap / &denom).minimum(self.max_learning_rate),
        );
        (tree_scale(&step, &updates), ())
    }
}

/// [`polyak_sgd`]'s type.
pub type PolyakSgd = Chain<(Sgd, ScaleByPolyak)>;

/// SGD with the Polyak step size (`optax.polyak_sgd`): `sgd(scaling)` then
/// [`scale_by_polyak`] (optax's defaults: `max_learning_rate = 1`, `scaling = 1`,
/// `f_min = 0`, `eps = 0`, [`PolyakVariant::Sps`]). Call
/// [`update_with_extra_args`](GradientTransformation::update_with_extra_args) with the
/// objective's value.
///
/// ```
/// use jaxrs::optim::{self, ExtraArgs, GradientTransformation, PolyakVariant};
/// use jaxrs::prelude::*;
///
/// let f = |x: &Array| (x * x).sum(None, false);
/// let opt = optim::polyak_sgd(1.0, 1.0, 0.0, 0.0, PolyakVariant::Sps);
/// let mut x = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let mut state = opt.init(&x);
/// for _ in 0..5 {
///     let (value, grad) = value_and_grad(|x: Array| f(&x))(x.clone());
///     let (u, s) = opt.update_with_extra_args(grad, state, Some(&x), &ExtraArgs::value(&value));
///     (x, state) = (optim::apply_updates(&x, &u), s);
/// }
/// assert!(f(&x).item::<f32>() < 0.1);
/// ```
pub fn polyak_sgd(
    max_learning_rate: f64,
    scaling: impl Into<LearningRate>,
    f_min: f64,
    eps: f64,
    variant: PolyakVariant,
) -> PolyakSgd {
    chain((
        scale_by_learning_rate(scaling),
        scale_by_polyak(f_min, max_learning_rate, eps, variant),
    ))
}
