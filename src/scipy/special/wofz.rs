//! The Faddeeva function by Weideman's rational approximation, as JAX 0.10.2 computes it.

// The coefficients keep Cephes's (and JAX's) published digits; they parse to the same f64.
#![allow(clippy::excessive_precision)]

use super::horner;
use crate::numpy::inexact;
use crate::{custom_jvp, lax, Array};
use std::f64::consts::PI;

const L: f64 = 4.7568284600108841;

/// Weideman's (1994) N = 32 coefficients, highest power first.
const C: [f64; 32] = [
    -1.3034426067909105e-12,
    3.7411838373738471e-12,
    8.030427700497756e-12,
    -2.1543593557490879e-11,
    -5.5442449963237932e-11,
    1.165824698850374e-10,
    4.1537441121999766e-10,
    -5.2310202114920615e-10,
    -3.2080151339721323e-09,
    8.1248864216535907e-10,
    2.3797556530014025e-08,
    2.2930438438915445e-08,
    -1.4813078929137642e-07,
    -4.1840763750512053e-07,
    4.2558331397138446e-07,
    4.4015317312832251e-06,
    6.8210319443575151e-06,
    -2.1409619201999998e-05,
    -0.00013075449254579421,
    -0.00024532980270038237,
    0.00039259136070109705,
    0.0045195411053493093,
    0.019006155784845501,
    0.057304403529837282,
    0.14060716226893755,
    0.29544451071508743,
    0.54601397206393376,
    0.9019254893648001,
    1.3455441692345449,
    1.8256696296324815,
    2.2635372999002676,
    2.5722534081245696,
];

/// A complex constant `re + 0i` of the real dtype of `like`.
fn complex_const(like: &Array, re: f64) -> Array {
    let dt = like.dtype();
    lax::complex(&Array::full(&[], re, dt), &Array::full(&[], 0.0, dt))
}

/// `w(z)` for `Im z >= 0`: `2 p(Z) / (L - iz)² + 1 / (√π (L - iz))` with `Z = (L + iz) / (L -
/// iz)`.
fn wofz_upper(z: &Array) -> Array {
    let re = z.real();
    let l = complex_const(&re, L);
    let iz = lax::complex(&-z.imag(), &re);
    let denom = &l - &iz;
    let big_z = &(&l + &iz) / &denom;
    let p = horner(&C, &big_z);
    let one_over_sqrtpi = complex_const(&re, 1.0 / PI.sqrt());
    &(&(&p * 2.0) / &(&denom * &denom)) + &(&one_over_sqrtpi / &denom)
}

fn wofz_value(z: &Array) -> Array {
    let upper = z.imag().ge(0.0);
    let z_upper = lax::select(&upper, z, &-z);
    let w_upper = wofz_upper(&z_upper);
    let correction = &(&(-(z * z)).exp() * 2.0) - &w_upper;
    lax::select(&upper, &w_upper, &correction)
}

/// The Faddeeva function `w(z) = exp(-z²) erfc(-iz)` (`jax.scipy.special.wofz`), complex:
/// real inputs become complex64 (float32 and narrower) or complex128. Weideman's rational
/// approximation in the upper half plane and `2 exp(-z²) - w(-z)` below, as JAX's, with JAX's
/// derivative `w'(z) = -2 z w(z) + 2i / √π`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::special;
/// use jaxrs::C128;
///
/// let w = special::wofz(&Array::from_vec(vec![C128::new(1.0, 1.0)], &[1]));
/// let w = w.to_vec::<C128>()[0];
/// assert!((w - C128::new(0.30474420525691259, 0.20821893820283162)).norm() < 1e-12);
/// ```
#[track_caller]
pub fn wofz(z: &Array) -> Array {
    let z = inexact(z);
    let z = if z.dtype().is_complex() {
        z
    } else {
        z.astype(z.dtype().to_complex())
    };
    custom_jvp(
        "wofz",
        |z: Array| wofz_value(&z),
        |z: Array, dz: Array| {
            let ans = wofz_value(&z);
            let re = z.real();
            let two_i_over_sqrtpi = lax::complex(
                &Array::full(&[], 0.0, re.dtype()),
                &Array::full(&[], 2.0 / PI.sqrt(), re.dtype()),
            );
            let slope = &(-(&(&z * 2.0) * &ans)) + &two_i_over_sqrtpi;
            (ans, &dz * &slope)
        },
    )
    .call(z)
}
