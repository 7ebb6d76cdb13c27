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
