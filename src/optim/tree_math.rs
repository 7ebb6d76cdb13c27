//! optax's tree arithmetic (`optax.tree.*` and the numerics helpers the optimizers share):
//! moments, bias correction, norms that stay finite at zero.

use crate::{tree_map, tree_map2, tree_unflatten, where_, Array, DType, Tree};

/// `count + 1`, staying at `i32::MAX` instead of wrapping (`optax.safe_increment`), so a
/// step count kept in a state never turns negative.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let c = jaxrs::optim::safe_increment(&Array::scalar(i32::MAX));
/// assert_eq!(c.item::<i32>(), i32::MAX);
/// ```
#[track_caller]
pub fn safe_increment(count: &Array) -> Array {
    where_(count.lt(i32::MAX), count + 1, i32::MAX)
}

/// `(1 - decay) g^order + decay m` leaf by leaf (`optax.tree.update_moment`): the
/// exponential moving average every adaptive optimizer keeps of its gradients.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let g = Array::from_vec(vec![2.0f32], &[1]);
/// let m = Array::from_vec(vec![1.0f32], &[1]);
/// let m = jaxrs::optim::update_moment(&g, &m, 0.5, 2);
/// assert_eq!(m.to_vec::<f32>(), vec![2.5]);
/// ```
#[track_caller]
pub fn update_moment<P: Tree>(updates: &P, moments: &P, decay: f64, order: i32) -> P {
    tree_map2(updates, moments, |g, t| {
        let g = if order == 1 { g.clone() } else { g.powi(order) };
        g * (1.0 - decay) + t * decay
    })
}

/// [`update_moment`] of the elementwise norm `|g|^order` (`optax.tree.update_moment_per_elem_norm`);
/// for real gradients the same as [`update_moment`].
#[track_caller]
pub fn update_moment_per_elem_norm<P: Tree>(updates: &P, moments: &P, decay: f64, order: i32) -> P {
    update_moment(updates, moments, decay, order)
}

/// `max(|g| + eps, decay m)` leaf by leaf (`optax.tree.update_infinity_moment`): Adamax's
/// second moment, an infinity norm that decays.
#[track_caller]
pub fn update_infinity_moment<P: Tree>(updates: &P, moments: &P, decay: f64, eps: f64) -> P {
    tree_map2(updates, moments, |g, t| (g.abs() + eps).maximum(t * decay))
}

/// The L2 norm of `x`, or `min_norm` where the norm is at most `min_norm`, with a gradient
/// that stays finite at zero (`optax.safe_norm`, over all elements).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![3.0f32, 4.0], &[2]);
/// assert_eq!(jaxrs::optim::safe_norm(&x, 0.0).item::<f32>(), 5.0);
/// assert_eq!(jaxrs::optim::safe_norm(&(x * 0.0), 0.1).item::<f32>(), 0.1);
/// ```
#[track_caller]
pub fn safe_norm(x: &Array, min_norm: f64) -> Array {
    let norm = l2(x);
    let small = norm.le(min_norm);
    let masked = where_(&small, Array::ones(x.shape(), x.dtype()), x);
    where_(&small, min_norm, l2(&masked))
}

/// The root mean square of `x`, or `min_rms` where it is at most `min_rms`
/// (`optax.safe_root_mean_squares`).
#[track_caller]
pub fn safe_root_mean_squares(x: &Array, min_rms: f64) -> Array {
    let rms = |x: &Array| (x * x).mean(None, false).sqrt();
    let r = rms(x);
    let small = r.le(min_rms);
    let masked = where_(&small, Array::ones(x.shape(), x.dtype()), x);
    where_(&small, min_rms, rms(&masked))
}

/// `sqrt(sum(x^2))` over all elements, as `jnp.linalg.norm` computes it.
pub(crate) fn l2(x: &Array) -> Array {
    (x * x).sum(None, false).sqrt()
}

/// `moment / (1 - decay ^ count)` (`optax.tree.bias_correction`), the division in the
/// moment's dtype. The power is taken in float32 for the float32 and narrower moments, as
/// optax does with JAX's default float32 (the precision the trainers' goldens were made in),
/// and in float64 for float64 moments, as optax does under `jax_enable_x64`: a float32 power
/// would put float32's rounding of `decay` (0.999 is 0.99900001) into every float64 step.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let m = Array::from_vec(vec![0.1f32], &[1]);
/// let m_hat = jaxrs::optim::bias_correction(&m, 0.9, &Array::scalar(1i32));
/// assert!((m_hat.to_vec::<f32>()[0] - 1.0).abs() < 1e-6);
/// ```
#[track_caller]
pub fn bias_correction<P: Tree>(moment: &P, decay: f64, count: &Array) -> P {
    let correction = |dtype: DType| -> Array {
        let wide = if dtype == DType::F64 {
            DType::F64
        } else {
            DType::F32
        };
        1.0 - Array::full(&[], decay, wide).pow(count.astype(wide))
    };
    let (leaves, _) = moment.flatten();
    let needs = |wide: bool| leaves.iter().any(|l| (l.dtype() == DType::F64) == wide);
    let narrow = needs(false).then(|| correction(DType::F32));
    let wide = needs(true).then(|| correction(DType::F64));
    tree_map(moment, |t| {
        let c = if t.dtype() == DType::F64 {
            &wide
        } else {
            &narrow
        };
        t / c
            .as_ref()
            .expect("computed for this dtype")
            .astype(t.dtype())
    })
}

/// `step_size * new + (1 - step_size) * old` leaf by leaf (`optax.incremental_update`): a
/// Polyak average, as target networks are updated.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let new = Array::from_vec(vec![1.0f32], &[1]);
/// let old = Array::from_vec(vec![0.0f32], &[1]);
/// let avg = jaxrs::optim::incremental_update(&new, &old, &Array::scalar(0.25f32));
/// assert_eq!(avg.to_vec::<f32>(), vec![0.25]);
/// ```
#[track_caller]
pub fn incremental_update<P: Tree>(new_tensors: &P, old_tensors: &P, step_size: &Array) -> P {
    tree_map2(new_tensors, old_tensors, |new, old| {
        step_size * new + (1.0 - step_size) * old
    })
}

/// `new` when `steps % update_period == 0`, else `old` (`optax.periodic_update`): a target
/// network copied every `update_period` steps.
#[track_caller]
pub fn periodic_update<P: Tree>(
    new_tensors: &P,
    old_tensors: &P,
    steps: &Array,
    update_period: i32,
) -> P {
    let now = steps.rem(update_period).eq(0);
    tree_map2(new_tensors, old_tensors, |new, old| where_(&now, new, old))
}

/// `x` unchanged, with its gradient multiplied by `scale` (`optax.scale_gradient`), as
/// `stop_gradient(x) + scale * (x - stop_gradient(x))`, whose value is `x` exactly.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let g = grad(|x: Array| jaxrs::optim::scale_gradient(&x, 0.5).sum(None, false))(Array::ones(&[2], DType::F32));
/// assert_eq!(g.to_vec::<f32>(), vec![0.5, 0.5]);
/// ```
#[track_caller]
pub fn scale_gradient<P: Tree>(inputs: &P, scale: f64) -> P {
    tree_map(inputs, |x| {
        let kept = crate::stop_gradient(x);
        &kept + (x - &kept) * scale
    })
}

/// A copy of `tree` (its leaves share their buffers).
pub(crate) fn tree_clone<T: Tree>(tree: &T) -> T {
    tree_map(tree, Array::clone)
}

/// `f` applied leaf by leaf to several trees of one structure.
#[track_caller]
pub(crate) fn tree_map_n<P: Tree>(trees: &[&P], f: impl Fn(&[&Array]) -> Array) -> P {
    let flat: Vec<_> = trees.iter().map(|t| t.flatten()).collect();
    let def = flat[0].1.clone();
    let n = flat[0].0.len();
    let out = (0..n)
        .map(|i| {
            let args: Vec<&Array> = flat.iter().map(|(l, _)| &l[i]).collect();
            f(&args)
        })
        .collect();
    tree_unflatten(&def, out)
}
