//! Special functions (`jax/_src/lax/special.py`): the Bessel functions `bessel_i0e` and
//! `bessel_i1e`, `zeta`, `polygamma`, the incomplete gamma and beta functions and their
//! derivatives; and two integer and matrix helpers that sit in `lax` beside them, `mulhi` and
//! `ragged_dot`.
//!
//! As everywhere in `lax`, operands share one dtype (no promotion) and one shape, a rank-0
//! operand standing for an array of the other's shape.

use super::elementwise::{check, check2, fail, Accepts};
use crate::{where_, Array, DType, DotDims};

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

/// A matrix product whose rows fall into groups, each group multiplied by its own matrix
/// (`lax.ragged_dot(lhs, rhs, group_sizes, precision, preferred_element_type)`): `lhs` is
/// `[m, k]`, `rhs` `[g, k, n]`, `group_sizes` `[g]` int32; rows `[s_i, s_i + group_sizes[i])`
/// of the `[m, n]` result (`s_i` the sum of the earlier sizes) are `lhs`'s rows times
/// `rhs[i]`, and rows past the last group are zero. As JAX computes it on CPU: `lhs` masked
/// into one copy per group, one contraction over the group and `k` axes; differentiable in
/// `lhs` and `rhs`. `preferred_element_type` is the result dtype (the operands are
/// converted to it first, as [`dot_general`](super::dot_general)); `precision` is accepted
/// for JAX's signature. JAX's keyword-only `group_offset` and `out_sharding` are not
/// offered.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let lhs = Array::ones(&[4, 2], DType::F32);
/// let rhs = Array::from_vec(vec![1.0f32, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0], &[2, 2, 2]);
/// let sizes = Array::from_vec(vec![1i32, 2], &[2]);
/// let out = lax::ragged_dot(&lhs, &rhs, &sizes, None, None);
/// assert_eq!(out.to_vec::<f32>(), vec![2.0, 2.0, 4.0, 4.0, 4.0, 4.0, 0.0, 0.0]);
/// ```
#[track_caller]
pub fn ragged_dot(
    lhs: &Array,
    rhs: &Array,
    group_sizes: &Array,
    precision: Option<super::Precision>,
    preferred_element_type: Option<DType>,
) -> Array {
    let _ = precision;
    let ok = lhs.rank() == 2
        && rhs.rank() == 3
        && group_sizes.rank() == 1
        && lhs.shape()[1] == rhs.shape()[1]
        && group_sizes.shape()[0] == rhs.shape()[0];
    if !ok {
        fail(
            "ragged_dot",
            "needs lhs [m, k], rhs [g, k, n] and group_sizes [g]",
            &[lhs, rhs, group_sizes],
        );
    }
    if group_sizes.dtype() != DType::I32 {
        fail("ragged_dot", "group_sizes must be int32", &[group_sizes]);
    }
    if lhs.dtype() != rhs.dtype() && preferred_element_type.is_none() {
        fail(
            "ragged_dot",
            "requires lhs and rhs of one dtype",
            &[lhs, rhs],
        );
    }
    let (m, k, g) = (lhs.shape()[0], lhs.shape()[1], rhs.shape()[0]);
    let (lhs, rhs) = match preferred_element_type {
        Some(dt) => (lhs.astype(dt), rhs.astype(dt)),
        None => (lhs.clone(), rhs.clone()),
    };
    // Row r of group i: ends[i] - sizes[i] <= r < ends[i].
    let ends = group_sizes.cumsum(0);
    let starts = &ends - group_sizes;
    let rows = Array::iota(DType::I32, &[g, m, k], 1);
    let ends = ends.reshape([g, 1, 1]).broadcast_to(&[g, m, k]);
    let starts = starts.reshape([g, 1, 1]).broadcast_to(&[g, m, k]);
    let mask = starts.le(&rows).logical_and(rows.lt(&ends));
    let per_group = where_(&mask, lhs.broadcast_to(&[g, m, k]), 0);
    let dims = DotDims {
        lhs_contract: vec![2, 0],
        rhs_contract: vec![1, 0],
        ..Default::default()
    };
    per_group.dot_general(&rhs, &dims)
}

/// The regularized lower incomplete gamma function `P(a, x) = γ(a, x) / Γ(a)`
/// (`lax.igamma`), by JAX's algorithm: a power series for `x < 1` or `x <= a`, else `1 -` a
/// continued fraction (float16 and bfloat16 compute in float32). NaN outside `a >= 0, x >=
/// 0`. Differentiable in both: in `x` by the closed form, in `a` by [`igamma_grad_a`].
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f64], &[1]);
/// let x = Array::from_vec(vec![2.0f64], &[1]);
/// let p = lax::igamma(&a, &x).to_vec::<f64>()[0];
/// assert!((p - (1.0 - (-2.0f64).exp())).abs() < 1e-15);
/// ```
#[track_caller]
pub fn igamma(a: &Array, x: &Array) -> Array {
    check2("igamma", Accepts::Float, a, x);
    jaxrs_runtime::igamma(a, x)
}

/// The regularized upper incomplete gamma function `Q(a, x) = 1 - P(a, x)` (`lax.igammac`),
/// by JAX's algorithm (the continued fraction where `x >= 1` and `x >= a`).
#[track_caller]
pub fn igammac(a: &Array, x: &Array) -> Array {
    check2("igammac", Accepts::Float, a, x);
    jaxrs_runtime::igammac(a, x)
}

/// The derivative of [`igamma`] in `a` (`lax.igamma_grad_a`), by JAX's algorithm (the
/// series or continued fraction differentiated term by term). Not differentiable itself,
/// as in JAX 0.10.2 (it panics where JAX raises `NotImplementedError`).
#[track_caller]
pub fn igamma_grad_a(a: &Array, x: &Array) -> Array {
    check2("igamma_grad_a", Accepts::Float, a, x);
    jaxrs_runtime::igamma_grad_a(a, x)
}

/// The derivative of a Gamma(a, 1) sample `x` with respect to `a` (`lax.random_gamma_grad`;
/// what `jax.random.gamma` differentiates with), by JAX's algorithm. As in JAX it is a plain
/// function of while loops: forward mode differentiates through them, reverse mode panics.
#[track_caller]
pub fn random_gamma_grad(a: &Array, x: &Array) -> Array {
    check2("random_gamma_grad", Accepts::Float, a, x);
    jaxrs_runtime::random_gamma_grad(a, x)
}

/// The regularized incomplete beta function `I_x(a, b)` (`lax.betainc`), by JAX's
/// algorithm (Lentz's continued fraction, with `I_x(a, b) = 1 - I_{1-x}(b, a)` where it
/// converges slowly). NaN outside `a, b >= 0, 0 <= x <= 1`. Differentiable in `x`; in `a`
/// and `b` it panics, as JAX raises.
#[track_caller]
pub fn betainc(a: &Array, b: &Array, x: &Array) -> Array {
    check2("betainc", Accepts::Float, a, b);
    check2("betainc", Accepts::Float, a, x);
    check2("betainc", Accepts::Float, b, x);
    jaxrs_runtime::betainc(a, b, x)
}
