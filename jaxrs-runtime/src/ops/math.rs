//! Unary math, activations, casts.

use super::arith::where_;
use crate::core::array::Array;
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;
use crate::prims::{Convert, IntegerPow, StopGradient, Unary, UnaryOp};

/// Floating-point ops on integer arrays work on the default float (as `jnp.exp(int_array)`).
#[track_caller]
fn float_operand(op: UnaryOp, x: &Array) -> Array {
    if op.domain() == crate::prims::elementwise::Domain::Float && !x.dtype().is_float() {
        if x.dtype() == DType::Bool && op == UnaryOp::Not {
            return x.clone();
        }
        return bind1(
            Convert {
                dtype: DType::F32,
                weak: x.is_weak(),
            },
            &[Operand::from(x)],
        );
    }
    x.clone()
}

macro_rules! unary_methods {
    ($($(#[$doc:meta])* $method:ident => $op:ident;)*) => {
        impl Array {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $method(&self) -> Array {
                    let x = float_operand(UnaryOp::$op, self);
                    bind1(Unary(UnaryOp::$op), &[Operand::from(&x)])
                }
            )*
        }
    };
}

unary_methods! {
    /// `e^x`.
    exp => Exp;
    /// The natural logarithm.
    log => Log;
    /// `log(1 + x)`, accurate near 0.
    log1p => Log1p;
    /// `e^x - 1`, accurate near 0.
    expm1 => Expm1;
    /// The hyperbolic tangent.
    tanh => Tanh;
    /// The sigmoid `1 / (1 + e^-x)`.
    logistic => Logistic;
    /// The sine.
    sin => Sin;
    /// The cosine.
    cos => Cos;
    /// The square root.
    sqrt => Sqrt;
    /// `1 / sqrt(x)`.
    rsqrt => Rsqrt;
    /// The absolute value.
    abs => Abs;
    /// -1, 0 or 1 (and NaN for NaN).
    sign => Sign;
    /// Rounds down.
    floor => Floor;
    /// Rounds up.
    ceil => Ceil;
    /// Rounds half to even (`jnp.round`).
    round => Round;
    /// The error function.
    erf => Erf;
}

impl Array {
    /// The sigmoid, an alias of [`Array::logistic`].
    #[track_caller]
    pub fn sigmoid(&self) -> Array {
        self.logistic()
    }

    /// `x^n` for an integer constant `n`, by multiplications (`lax.integer_pow`).
    #[track_caller]
    pub fn powi(&self, n: i32) -> Array {
        bind1(IntegerPow { n }, &[Operand::from(self)])
    }

    /// `max(x, 0)`, with derivative 0 at 0 (as `jax.nn.relu`), and NaN passed through.
    #[track_caller]
    pub fn relu(&self) -> Array {
        bind1(Unary(UnaryOp::Relu), &[Operand::from(self)])
    }

    /// GELU with the tanh approximation (`jax.nn.gelu(x, approximate=True)`).
    #[track_caller]
    pub fn gelu(&self) -> Array {
        let x = float_operand(UnaryOp::Tanh, self);
        let sqrt_2_over_pi = (2.0 / std::f64::consts::PI).sqrt();
        let cube = x.powi(3);
        let inner = (&x + &cube * 0.044715) * sqrt_2_over_pi;
        &x * 0.5 * (inner.tanh() + 1.0)
    }

    /// GELU with the exact erf form (`jax.nn.gelu(x, approximate=False)`).
    #[track_caller]
    pub fn gelu_exact(&self) -> Array {
        let x = float_operand(UnaryOp::Erf, self);
        &x * 0.5 * ((&x * std::f64::consts::FRAC_1_SQRT_2).erf() + 1.0)
    }

    /// The array converted to `dtype` (`convert_element_type`): floats to integers truncate,
    /// nonzero is `true`.
    #[track_caller]
    pub fn astype(&self, dtype: DType) -> Array {
        if dtype == self.dtype() && !self.is_weak() {
            return self.clone();
        }
        bind1(Convert { dtype, weak: false }, &[Operand::from(self)])
    }
}

/// The identity, whose gradient is zero (`lax.stop_gradient`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// // d/dx (x * stop_gradient(x)) at x = 3 is 3, not 6.
/// let f = grad(|x: Array| &x * &jaxrs::stop_gradient(&x));
/// assert_eq!(f(Array::scalar(3.0f32)).item::<f32>(), 3.0);
/// ```
#[track_caller]
pub fn stop_gradient(x: &Array) -> Array {
    bind1(StopGradient, &[Operand::from(x)])
}

impl Array {
    /// The Euclidean (L2) norm of all elements, with a gradient that is `x / |x|` and zero
    /// (not NaN, as the chain rule through `sqrt` gives) at `x = 0`: the case gradient
    /// clipping meets when every gradient is zero. Built with JAX's double-`where` idiom (the
    /// square root only ever sees a positive value), so forward mode works too.
    #[track_caller]
    pub fn norm(&self) -> Array {
        let sq = (self * self).sum(None, false);
        let zero = sq.eq(0.0);
        let safe = where_(&zero, 1.0, &sq);
        where_(&zero, 0.0, safe.sqrt())
    }
}
