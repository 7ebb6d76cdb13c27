//! The window functions (`jnp.bartlett`, `blackman`, `hamming`, `hanning`, `kaiser`): float64
//! vectors of `m` points (JAX's default float with x64), as JAX computes them from an iota.

use super::math::i0;
use crate::{Array, DType};
use std::f64::consts::PI;

/// `1` for `m <= 1` points (an empty vector for 0), as JAX's; else `f(n, m - 1)` over the
/// points `n = 0..m`.
fn window(m: usize, f: impl Fn(&Array, f64) -> Array) -> Array {
    if m <= 1 {
        return Array::ones(&[m], DType::F64);
    }
    let n = Array::iota(DType::F64, &[m], 0);
    f(&n, (m - 1) as f64)
}

/// The Bartlett (triangular) window of `m` points (`jnp.bartlett`).
pub fn bartlett(m: usize) -> Array {
    window(m, |n, d| -((n * 2.0 + 1.0 - (d + 1.0)).abs() / d) + 1.0)
}

/// The Blackman window of `m` points (`jnp.blackman`).
pub fn blackman(m: usize) -> Array {
    window(m, |n, d| {
        -((n * (2.0 * PI) / d).cos() * 0.5) + 0.42 + (n * (4.0 * PI) / d).cos() * 0.08
    })
}

/// The Hamming window of `m` points (`jnp.hamming`).
pub fn hamming(m: usize) -> Array {
    window(m, |n, d| -((n * (2.0 * PI) / d).cos() * 0.46) + 0.54)
}

/// The Hann window of `m` points (`jnp.hanning`).
pub fn hanning(m: usize) -> Array {
    window(m, |n, d| (-(n * (2.0 * PI) / d).cos() + 1.0) * 0.5)
}

/// The Kaiser window of `m` points and shape `beta` (`jnp.kaiser`). `beta` is a Rust number
/// here, where JAX also takes a traced array.
pub fn kaiser(m: usize, beta: f64) -> Array {
    window(m, |n, d| {
        let alpha = 0.5 * d;
        let r = (n - alpha) / alpha;
        let arg = (-(&r * &r) + 1.0).sqrt() * beta;
        i0(&arg) / i0(&Array::full(&[], beta, DType::F64))
    })
}
