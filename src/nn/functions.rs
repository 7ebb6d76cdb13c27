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
