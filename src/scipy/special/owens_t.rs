//! Owen's T function by JAX 0.10.2's 13-point quadrature (Patefield and Tandy's method T5).

// The coefficients keep Cephes's (and JAX's) published digits; they parse to the same f64.
#![allow(clippy::excessive_precision)]

use crate::{custom_jvp, where_, Array};
use jaxrs_runtime::promote_args_inexact;
use std::f64::consts::{PI, SQRT_2};

const QUAD_POINTS: [f64; 13] = [
    0.0035082039676451715,
    0.031279042338030754,
    0.085266826283219451,
    0.16245071730812277,
    0.25851196049125435,
    0.36807553840697534,
    0.48501092905604697,
    0.60277514152618577,
    0.71477884217753227,
    0.81475510988760099,
    0.89711029755948966,
    0.95723808085944262,
    0.99178832974629704,
];

const QUAD_WEIGHTS: [f64; 13] = [
    0.018831438115323503,
    0.018567086243977649,
    0.018042093461223386,
    0.017263829606398753,
    0.016243219975989857,
    0.014994592034116705,
    0.013535474469662088,
    0.011886351605820165,
    0.010070377242777432,
    0.0081130545742299587,
    0.0060419009528470239,
    0.0038862217010742058,
    0.0016793031084546090,
];

/// `a Σᵢ wᵢ exp(-h² (1 + a² tᵢ) / 2) / (1 + a² tᵢ)`. The nodes and weights are float64
/// arrays, as JAX's numpy constants, so the sum is in float64 whatever the inputs' dtype.
fn quadrature(h: &Array, a: &Array) -> Array {
    let points = Array::from_vec(QUAD_POINTS.to_vec(), &[13]);
    let weights = Array::from_vec(QUAD_WEIGHTS.to_vec(), &[13]);
    let r = &a.powi(2).expand_dims(-1) * &points;
    let one_r = 1.0 + &r;
    let integrand = &(&(&h.powi(2).expand_dims(-1) * -0.5) * &one_r).exp() / &one_r;
    a * &integrand.matmul(&weights)
}

fn owens_t_value(h: &Array, a: &Array) -> Array {
    let dt = h.dtype();
    let h = h.abs();
    let abs_a = a.abs();
    let root_2 = Array::full(&[], SQRT_2, dt);
    let h_normed = &h / &root_2;
    let a_small = abs_a.le(1.0);
    let modified_a = where_(&a_small, &abs_a, abs_a.powi(-1));
    let modified_h = where_(&a_small, &h, &abs_a * &h);
    let result = quadrature(&modified_h, &modified_a);
    // Exact values at h = 0 and a = 1.
    let at_h0 = &modified_a.atan() / (2.0 * PI);
    let result = where_(modified_h.eq(0.0), &at_h0, &result);
    let at_a1 = &(&(-&modified_h / &root_2).erfc() * 0.125) * &(&modified_h / &root_2).erfc();
    let result = where_(modified_a.eq(1.0), &at_a1, &result);
    // The reciprocal relation for |a| > 1.
    let normh = h_normed.erfc();
    let normah = (&abs_a * &h_normed).erfc();
    let small_ah = &(0.25 - &(&(&h_normed.erf() * 0.25) * &(&abs_a * &h_normed).erf())) - &result;
    let large_ah = &(&(&(&normh + &normah) - &(&normh * &normah)) * 0.25) - &result;
    let reciprocal = where_((&abs_a * &h).le(0.67), &small_ah, &large_ah);
    let result = where_(abs_a.gt(1.0), &reciprocal, &result);
    let result = &a.sign() * &result;
    where_(a.isnan().bitwise_or(h.isnan()), f64::NAN, &result)
}

/// Owen's T function `T(h, a) = (1 / 2π) ∫₀ᵃ exp(-h² (1 + x²) / 2) / (1 + x²) dx`
/// (`jax.scipy.special.owens_t`), by JAX's 13-point quadrature with the exact values at
/// `h = 0` and `a = 1` and the reciprocal relation for `|a| > 1`, and JAX's derivatives
/// `∂T/∂h = -exp(-h²/2) erf(a h / √2) / (2 √(2π))`, `∂T/∂a = exp(-(1 + a²) h² / 2) / (2π (1 +
/// a²))`. As in JAX, the quadrature's float64 nodes make the result float64 for float32
/// inputs too.
#[track_caller]
pub fn owens_t(h: &Array, a: &Array) -> Array {
    let (h, a) = promote_args_inexact("owens_t", h, a);
    super::real_only("owens_t", &h);
    custom_jvp(
        "owens_t",
        |(h, a): (Array, Array)| owens_t_value(&h, &a),
        |(h, a): (Array, Array), (dh, da): (Array, Array)| {
            let result = owens_t_value(&h, &a);
            let dt = h.dtype();
            let root_2 = Array::full(&[], SQRT_2, dt);
            let denom = Array::full(&[], (2.0 * PI).sqrt(), dt) * 2.0;
            let dout_dh = &(&(-(&h.powi(2) * -0.5).exp()) * &(&(&a * &h) / &root_2).erf()) / &denom;
            let a2_1 = &a.powi(2) + 1.0;
            let dout_da = &(&(&a2_1 * -0.5) * &h.powi(2)).exp() / &(&a2_1 * (2.0 * PI));
            let t = &(&dout_dh * &dh) + &(&dout_da * &da);
            let t = t.astype(result.dtype());
            (result, t)
        },
    )
    .call((h, a))
}
