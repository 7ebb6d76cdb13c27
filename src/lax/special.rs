//! Special functions (`jax/_src/lax/special.py`): the Bessel functions `bessel_i0e` and
//! `bessel_i1e`, `zeta`, `polygamma`, the incomplete gamma and beta functions and their
//! derivatives; and two integer and matrix helpers that sit in `lax` beside them, `mulhi` and
//! `ragged_dot`.
//!
//! As everywhere in `lax`, operands share one dtype (no promotion) and one shape, a rank-0
//! operand standing for an array of the other's shape.

use super::elementwise::{check, check2, Accepts};
use crate::Array;

/// The exponentially scaled modified Bessel function of order 0, `e^-|x| I0(x)`
/// (`lax.bessel_i0e`), lowered as JAX's Chebyshev series (float16 and bfloat16 in float32).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![0.0f32, 1.0], &[2]);
/// let y = lax::bessel_i0e(&x).to_vec::<f32>();
/// assert!((y[0] - 1.0).abs() < 1e-6 && (y[1] - 0.4657596).abs() < 1e-6);
/// ```
#[track_caller]
pub fn bessel_i0e(x: &Array) -> Array {
    check("bessel_i0e", Accepts::Float, x);
    x.bessel_i0e()
}

/// The exponentially scaled modified Bessel function of order 1, `e^-|x| I1(x)`
/// (`lax.bessel_i1e`).
#[track_caller]
pub fn bessel_i1e(x: &Array) -> Array {
    check("bessel_i1e", Accepts::Float, x);
    x.bessel_i1e()
}

/// The Hurwitz zeta function `ζ(x, q) = Σ_{k>=0} (k + q)^-x` (`lax.zeta`). Like JAX 0.10.2,
/// it has no derivative: differentiating it panics (JAX raises `NotImplementedError`).
#[track_caller]
pub fn zeta(x: &Array, q: &Array) -> Array {
    check2("zeta", Accepts::Float, x, q);
    x.zeta(q)
}

/// The polygamma function `ψ^(m)(x)`, the `m`-th derivative of digamma (`lax.polygamma(m,
/// x)`; `m` holds non-negative integer values, else the result is NaN). Its derivative in `x`
/// is `polygamma(m + 1, x)`; in `m` it panics, as JAX raises.
#[track_caller]
pub fn polygamma(m: &Array, x: &Array) -> Array {
    check2("polygamma", Accepts::Float, m, x);
    m.polygamma(x)
}

/// The high half of the double-width product of two integers (`lax.mulhi`): for `b`-bit
/// operands, `(x * y) >> b` computed exactly, signed or unsigned as the dtype.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![-7i32, 1 << 30], &[2]);
/// let y = Array::from_vec(vec![3i32, 1 << 30], &[2]);
/// assert_eq!(lax::mulhi(&x, &y).to_vec::<i32>(), vec![-1, 1 << 28]);
/// ```
#[track_caller]
pub fn mulhi(x: &Array, y: &Array) -> Array {
    check2("mulhi", Accepts::Int, x, y);
    x.mulhi(y)
}
