//! `jax.nn`'s activations as free functions with JAX's names (the [`Array`] methods of the
//! same names do the work; these give JAX users the spelling `nn::relu(&x)`).

use crate::Array;

/// `jax.nn.relu`: `max(x, 0)`, with derivative 0 at 0 as JAX's custom JVP gives.
#[track_caller]
pub fn relu(x: &Array) -> Array {
    x.relu()
}

/// `jax.nn.sigmoid`: `1 / (1 + exp(-x))` (`lax.logistic`).
#[track_caller]
pub fn sigmoid(x: &Array) -> Array {
    x.sigmoid()
}

/// `jax.nn.log_sigmoid`: `-softplus(-x)`.
#[track_caller]
pub fn log_sigmoid(x: &Array) -> Array {
    x.log_sigmoid()
}

/// `jax.nn.silu`: `x * sigmoid(x)`.
#[track_caller]
pub fn silu(x: &Array) -> Array {
    x.silu()
}

/// `jax.nn.swish`, an alias of [`silu`].
#[track_caller]
pub fn swish(x: &Array) -> Array {
    x.silu()
}

/// `jax.nn.softplus`: `log(1 + exp(x))` (`jnp.logaddexp(x, 0)`).
#[track_caller]
pub fn softplus(x: &Array) -> Array {
    x.softplus()
}

/// `jax.nn.tanh`, the hyperbolic tangent.
#[track_caller]
pub fn tanh(x: &Array) -> Array {
    x.tanh()
}

/// `jax.nn.gelu(x, approximate)`: the tanh approximation when `approximate` is `true` (JAX's
/// default), else the exact erf form.
#[track_caller]
pub fn gelu(x: &Array, approximate: bool) -> Array {
    if approximate {
        x.gelu()
    } else {
        x.gelu_exact()
    }
}

/// `jax.nn.identity`: `x` itself.
#[track_caller]
pub fn identity(x: &Array) -> Array {
    x.clone()
}

/// `jax.nn.leaky_relu(x, negative_slope)`: `x` where `x >= 0`, else `negative_slope * x`
/// (JAX's default slope is `0.01`).
#[track_caller]
pub fn leaky_relu(x: &Array, negative_slope: f64) -> Array {
    x.leaky_relu(negative_slope)
}

/// `jax.nn.elu(x, alpha)`: `x` where `x > 0`, else `alpha * expm1(x)` (JAX's default `alpha`
/// is `1.0`).
#[track_caller]
pub fn elu(x: &Array, alpha: f64) -> Array {
    x.elu(alpha)
}

/// `jax.nn.relu6`: `min(max(x, 0), 6)`.
#[track_caller]
pub fn relu6(x: &Array) -> Array {
    x.clip(0.0, 6.0)
}

/// `jax.nn.hard_tanh`: `x` clipped to `[-1, 1]`.
#[track_caller]
pub fn hard_tanh(x: &Array) -> Array {
    x.clip(-1.0, 1.0)
}

/// `jax.nn.hard_sigmoid`: `relu6(x + 3) / 6`.
#[track_caller]
pub fn hard_sigmoid(x: &Array) -> Array {
    relu6(&(x.clone() + 3.0)) / 6.0
}

/// `jax.nn.hard_silu`: `x * hard_sigmoid(x)`.
#[track_caller]
pub fn hard_silu(x: &Array) -> Array {
    x.clone() * hard_sigmoid(x)
}

/// `jax.nn.hard_swish`, an alias of [`hard_silu`].
#[track_caller]
pub fn hard_swish(x: &Array) -> Array {
    hard_silu(x)
}

/// `jax.nn.soft_sign`: `x / (|x| + 1)`.
#[track_caller]
pub fn soft_sign(x: &Array) -> Array {
    x.clone() / (x.abs() + 1.0)
}

/// `jax.nn.celu(x, alpha)`: `max(x, 0) + alpha * expm1(min(x, 0) / alpha)` (JAX's default
/// `alpha` is `1.0`).
#[track_caller]
pub fn celu(x: &Array, alpha: f64) -> Array {
    x.clip(0.0, f64::INFINITY) + (x.clip(f64::NEG_INFINITY, 0.0) / alpha).expm1() * alpha
}

/// `jax.nn.selu`: `scale * elu(x, alpha)` with JAX's self-normalising constants.
#[track_caller]
pub fn selu(x: &Array) -> Array {
    // The constants of Klambauer et al. (2017), as JAX spells them.
    const ALPHA: f64 = 1.6732632423543772848170429916717;
    const SCALE: f64 = 1.0507009873554804934193349852946;
    x.elu(ALPHA) * SCALE
}

/// `jax.nn.mish`: `x tanh(softplus(x))`.
#[track_caller]
pub fn mish(x: &Array) -> Array {
    x * &softplus(x).tanh()
}

/// `jax.nn.squareplus(x, b)`: `(x + sqrt(x² + b)) / 2` (JAX's default `b` is `4`).
#[track_caller]
pub fn squareplus(x: &Array, b: f64) -> Array {
    (x + (x * x + b).sqrt()) / 2.0
}

/// `jax.nn.sparse_plus`: 0 below -1, `x` above 1, `(x + 1)² / 4` between.
#[track_caller]
pub fn sparse_plus(x: &Array) -> Array {
    let middle = (x + 1.0).powi(2) / 4.0;
    crate::where_(x.le(-1.0), 0.0, crate::where_(x.ge(1.0), x, &middle))
}

/// `jax.nn.sparse_sigmoid`: `clip(x + 1, 0, 2) / 2`, the derivative of [`sparse_plus`].
#[track_caller]
pub fn sparse_sigmoid(x: &Array) -> Array {
    (x + 1.0).clip(0.0, 2.0) * 0.5
}

/// `jax.nn.log1mexp`: `log(1 - exp(-x))` for `x > 0`, by `log(-expm1(-x))` below `ln 2` and
/// `log1p(-exp(-x))` above, each where it is accurate.
#[track_caller]
pub fn log1mexp(x: &Array) -> Array {
    let x = crate::numpy::inexact(x);
    let small = (-(-&x).expm1()).log();
    let large = (-(-&x).exp()).log1p();
    crate::where_(x.lt(std::f64::consts::LN_2), &small, &large)
}

/// `jax.nn.glu(x, axis)`: the gated linear unit, `a * sigmoid(b)` for the two halves `a`,
/// `b` of `x` along `axis` (JAX's default is `-1`), whose length must be even.
#[track_caller]
pub fn glu(x: &Array, axis: i64) -> Array {
    let rank = x.rank() as i64;
    let ax = if axis < 0 { axis + rank } else { axis };
    let n = x.shape()[ax as usize];
    if !n.is_multiple_of(2) {
        panic!(
            "jax.nn.glu: the axis {axis} of {} must have an even length, at {}",
            x.aval(),
            std::panic::Location::caller()
        );
    }
    let a = x.slice_axis(ax, 0, n / 2);
    let b = x.slice_axis(ax, n / 2, n);
    &a * &b.sigmoid()
}

/// `jax.nn.softmax(x, axis, where)` over one or several axes (`None`: all), the masked-out
/// elements (where `where_` is false) left out and given 0.
///
/// ```
/// use jaxrs::nn;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 1.0, 5.0], &[3]);
/// let keep = Array::from_vec(vec![true, true, false], &[3]);
/// let p = nn::softmax(&x, -1, Some(&keep));
/// assert_eq!(p.to_vec::<f32>(), vec![0.5, 0.5, 0.0]);
/// ```
#[track_caller]
pub fn softmax(x: &Array, axis: impl crate::Axes, where_: Option<&Array>) -> Array {
    let axes = axes_of(x, axis);
    let shifted = x - &crate::stop_gradient(&masked_max(x, &axes, where_));
    let unnormalized = mask(&shifted.exp(), where_, 0.0);
    let p = &unnormalized / &unnormalized.sum(&axes[..], true);
    mask(&p, where_, 0.0)
}

/// `jax.nn.log_softmax(x, axis, where)`: `x - logsumexp(x)` over the axes, the masked-out
/// elements given `-inf`.
#[track_caller]
pub fn log_softmax(x: &Array, axis: impl crate::Axes, where_: Option<&Array>) -> Array {
    let axes = axes_of(x, axis);
    let shifted = x - &crate::stop_gradient(&masked_max(x, &axes, where_));
    let sum = mask(&shifted.exp(), where_, 0.0).sum(&axes[..], true);
    mask(&(&shifted - &sum.log()), where_, f64::NEG_INFINITY)
}

/// `jax.nn.logsumexp`: [`crate::scipy::special::logsumexp`].
#[track_caller]
pub fn logsumexp(
    a: &Array,
    axis: impl crate::Axes,
    opts: crate::scipy::special::LogsumexpOptions,
) -> Array {
    crate::scipy::special::logsumexp(a, axis, opts)
}

/// `jax.nn.logmeanexp(x, axis, where, keepdims)`: `log(mean(exp(x)))`, stably: the
/// `logsumexp` less the log of the count of elements reduced (of those kept by `where_`).
#[track_caller]
pub fn logmeanexp(
    x: &Array,
    axis: impl crate::Axes,
    where_: Option<&Array>,
    keepdims: bool,
) -> Array {
    let axes = axes_of(x, axis);
    let opts = crate::scipy::special::LogsumexpOptions {
        keepdims,
        where_,
        ..Default::default()
    };
    let lse = crate::scipy::special::logsumexp(x, &axes[..], opts);
    let count = match where_ {
        Some(w) => {
            crate::numpy::broadcast_to(&w.astype(lse.dtype()), x.shape()).sum(&axes[..], keepdims)
        }
        None => {
            let n: usize = axes.iter().map(|&a| x.shape()[a as usize]).product();
            Array::full(&[], n as f64, lse.dtype())
        }
    };
    lse - count.log()
}

/// `jax.nn.standardize(x, axis, mean, variance, epsilon, where)`: `(x - mean) / sqrt(variance
/// + epsilon)` over the axes (JAX's default is `-1`, `epsilon` `1e-5`), the mean and variance
/// computed (over the elements kept by `where_`) unless given.
#[track_caller]
pub fn standardize(
    x: &Array,
    axis: impl crate::Axes,
    mean: Option<&Array>,
    variance: Option<&Array>,
    epsilon: f64,
    where_: Option<&Array>,
) -> Array {
    let x = crate::numpy::inexact(x);
    let axes = axes_of(&x, axis);
    let masked_mean = |v: &Array| match where_ {
        Some(w) => {
            let w = crate::numpy::broadcast_to(&w.astype(v.dtype()), v.shape());
            (v * &w).sum(&axes[..], true) / w.sum(&axes[..], true)
        }
        None => v.mean(&axes[..], true),
    };
    let mean = match mean {
        Some(m) => m.clone(),
        None => masked_mean(&x),
    };
    let variance = match variance {
        Some(v) => v.clone(),
        None => masked_mean(&(&x * &x)) - &mean * &mean,
    };
    (&x - &mean) * (variance + epsilon).rsqrt()
}

/// `jax.nn.one_hot(x, num_classes, dtype, axis)`: `x`'s integers as one-hot vectors along a
/// new axis at `axis` (JAX's default `-1`, `dtype` float64 with x64); out-of-range integers
/// give all zeros.
///
/// ```
/// use jaxrs::nn;
/// use jaxrs::prelude::*;
///
/// let y = nn::one_hot(&Array::from_vec(vec![0i32, 2], &[2]), 3, DType::F32, 0);
/// assert_eq!(y.shape(), &[3, 2]);
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
/// ```
#[track_caller]
pub fn one_hot(x: &Array, num_classes: usize, dtype: crate::DType, axis: i64) -> Array {
    let y = Array::one_hot(x, num_classes, dtype);
    let rank = y.rank() as i64;
    let to = if axis < 0 { axis + rank } else { axis };
    crate::numpy::moveaxis(&y, rank - 1, to)
}

/// The axes of a reduction, non-negative (`None`: all).
fn axes_of(x: &Array, axis: impl crate::Axes) -> Vec<i64> {
    let rank = x.rank() as i64;
    match axis.axes() {
        None => (0..rank).collect(),
        Some(v) => v
            .into_iter()
            .map(|a| if a < 0 { a + rank } else { a })
            .collect(),
    }
}

/// The maximum over `axes` of the elements kept by `where_` (`-inf` for none), kept as
/// dims of length 1, with a non-finite maximum read as 0 (JAX's `initial=-inf` and guard).
fn masked_max(x: &Array, axes: &[i64], where_: Option<&Array>) -> Array {
    let m = mask(x, where_, f64::NEG_INFINITY).max(axes, true);
    crate::where_(m.isfinite(), &m, 0.0)
}

/// `x` where `where_` is true (everywhere without one), else `fill`.
fn mask(x: &Array, where_: Option<&Array>, fill: f64) -> Array {
    match where_ {
        Some(w) => crate::where_(w, x, fill),
        None => x.clone(),
    }
}
