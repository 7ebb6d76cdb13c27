//! `jax.numpy.fft`: discrete Fourier transforms and their helpers, written as JAX's
//! (`jax/_src/numpy/fft.py`) over [`crate::fft`] (`lax.fft`): the transformed axes are moved
//! innermost, cropped or zero-padded to the lengths asked for, transformed by XLA (three at
//! a time at most), scaled by the normalisation, and moved back.
//!
//! ```
//! use jaxrs::numpy as jnp;
//! use jaxrs::prelude::*;
//!
//! let x = Array::from_vec(vec![0.0f32, 1.0, 0.0, -1.0], &[4]);
//! let y = jnp::fft::rfft(&x, None, -1, None);
//! // A sine of frequency 1: all of it at index 1, as -2i.
//! assert_eq!(jnp::imag(&y).to_vec::<f32>(), vec![0.0, -2.0, 0.0]);
//! ```

use super::manip::norm_axis;
use crate::{Array, DType, FftType};

/// How a transform is scaled (numpy's `norm=`): `None` is [`Norm::Backward`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Norm {
    /// The forward transform unscaled, the inverse divided by `n` (numpy's default).
    #[default]
    Backward,
    /// Both divided by `sqrt(n)`: the transform is unitary.
    Ortho,
    /// The forward transform divided by `n`, the inverse unscaled.
    Forward,
}

/// The factor JAX's `_fft_norm` multiplies by, for `n` points in all and an inverse
/// transform when `inverse` (JAX tells them by the function's name starting with `i`).
fn norm_factor(norm: Norm, n: usize, inverse: bool, dtype: DType) -> Option<f64> {
    // In the transform's precision, as JAX computes it from an array of its dtype.
    let round = |v: f64| {
        if dtype.real_dtype() == DType::F64 {
            v
        } else {
            v as f32 as f64
        }
    };
    let n = round(n as f64);
    match (norm, inverse) {
        (Norm::Backward, _) => None,
        (Norm::Ortho, true) => Some(round(n.sqrt())),
        (Norm::Ortho, false) => Some(round(1.0 / round(n.sqrt()))),
        (Norm::Forward, true) => Some(n),
        (Norm::Forward, false) => Some(round(1.0 / n)),
    }
}

/// The core of every transform (JAX's `_fft_core`): `s` the lengths, `axes` the axes (`None`:
/// all, or the last `s.len()` when `s` is given).
#[track_caller]
fn fft_core(
    name: &str,
    fft_type: FftType,
    a: &Array,
    s: Option<&[usize]>,
    axes: Option<&[i64]>,
    norm: Option<Norm>,
) -> Array {
    let rank = a.rank();
    if let (Some(s), Some(axes)) = (s, axes) {
        if s.len() != axes.len() {
            panic!(
                "jnp.fft.{name}: shape and axes have different lengths ({s:?} and {axes:?}) at {}",
                std::panic::Location::caller()
            );
        }
    }
    let axes: Vec<usize> = match (axes, s) {
        (Some(axes), _) => axes
            .iter()
            .map(|&x| norm_axis(name, x, a.shape()))
            .collect(),
        (None, None) => (0..rank).collect(),
        (None, Some(s)) => {
            if s.len() > rank {
                panic!(
                    "jnp.fft.{name}: {} lengths for an array of rank {rank} at {}",
                    s.len(),
                    std::panic::Location::caller()
                );
            }
            (rank - s.len()..rank).collect()
        }
    };
    let mut seen = axes.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != axes.len() {
        panic!(
            "jnp.fft.{name}: repeated axes in {axes:?} at {}",
            std::panic::Location::caller()
        );
    }
    if axes.is_empty() {
        return a.astype(match fft_type {
            FftType::Rfft | FftType::Irfft => a.dtype().to_inexact(),
            _ => a.dtype().to_complex(),
        });
    }
    if axes.len() > 3 {
        // XLA transforms three dimensions at most: the complex transforms compose, three
        // axes at a time from the last; the real ones cannot.
        if !matches!(fft_type, FftType::Fft | FftType::Ifft) {
            panic!(
                "jnp.fft.{name}: real transforms of more than 3 axes are not supported by XLA, \
                 got axes {axes:?} at {}",
                std::panic::Location::caller()
            );
        }
        let split = axes.len() - 3;
        let (outer, inner) = axes.split_at(split);
        let (s_outer, s_inner) = match s {
            Some(s) => (Some(&s[..split]), Some(&s[split..])),
            None => (None, None),
        };
        let inner_axes: Vec<i64> = inner.iter().map(|&x| x as i64).collect();
        let outer_axes: Vec<i64> = outer.iter().map(|&x| x as i64).collect();
        let y = fft_core(name, fft_type, a, s_inner, Some(&inner_axes), norm);
        return fft_core(name, fft_type, &y, s_outer, Some(&outer_axes), norm);
    }
    let k = axes.len();
    let innermost: Vec<usize> = (rank - k..rank).collect();
    let moved = axes != innermost;
    let mut arr = if moved {
        super::moveaxis(a, &axes_i64(&axes)[..], &axes_i64(&innermost)[..])
    } else {
        a.clone()
    };
    let lengths: Vec<usize> = match s {
        Some(s) => {
            let mut want: Vec<usize> = arr.shape().to_vec();
            for (axis, &n) in innermost.iter().zip(s) {
                want[*axis] = n;
            }
            if fft_type == FftType::Irfft {
                want[rank - 1] = want[rank - 1] / 2 + 1;
            }
            // Crop, then pad with zeros, to the lengths asked for.
            let high: Vec<i64> = want
                .iter()
                .zip(arr.shape())
                .map(|(&w, &have)| w as i64 - have as i64)
                .collect();
            if high.iter().any(|&h| h != 0) {
                arr = arr.pad(&vec![0; rank], &high, &[], 0.0);
            }
            s.to_vec()
        }
        None => {
            let mut lengths: Vec<usize> = innermost.iter().map(|&d| arr.shape()[d]).collect();
            if fft_type == FftType::Irfft {
                let last = arr.shape()[rank - 1];
                lengths[k - 1] = 2 * last.saturating_sub(1);
            }
            lengths
        }
    };
    let mut y = crate::fft(&arr, fft_type, &lengths);
    let inverse = name.starts_with('i');
    if let Some(f) = norm_factor(
        norm.unwrap_or_default(),
        lengths.iter().product(),
        inverse,
        y.dtype(),
    ) {
        y = y * f;
    }
    if moved {
        y = super::moveaxis(&y, &axes_i64(&innermost)[..], &axes_i64(&axes)[..]);
    }
    y
}

fn axes_i64(axes: &[usize]) -> Vec<i64> {
    axes.iter().map(|&a| a as i64).collect()
}

/// A one-dimensional transform along `axis`, of length `n` (JAX's `_fft_core_1d`).
#[track_caller]
fn fft_1d(
    name: &str,
    fft_type: FftType,
    a: &Array,
    n: Option<usize>,
    axis: i64,
    norm: Option<Norm>,
) -> Array {
    let s = n.map(|n| vec![n]);
    fft_core(name, fft_type, a, s.as_deref(), Some(&[axis]), norm)
}

/// The one-dimensional discrete Fourier transform along `axis` (`jnp.fft.fft`), of `n`
/// points (`None`: the axis's length; a shorter axis is padded with zeros, a longer one
/// cropped).
#[track_caller]
pub fn fft(a: &Array, n: Option<usize>, axis: i64, norm: Option<Norm>) -> Array {
    fft_1d("fft", FftType::Fft, a, n, axis, norm)
}

/// The inverse of [`fft`] (`jnp.fft.ifft`).
#[track_caller]
pub fn ifft(a: &Array, n: Option<usize>, axis: i64, norm: Option<Norm>) -> Array {
    fft_1d("ifft", FftType::Ifft, a, n, axis, norm)
}

/// The transform of a real array, its `n / 2 + 1` non-negative frequencies
/// (`jnp.fft.rfft`).
#[track_caller]
pub fn rfft(a: &Array, n: Option<usize>, axis: i64, norm: Option<Norm>) -> Array {
    fft_1d("rfft", FftType::Rfft, a, n, axis, norm)
}

/// The inverse of [`rfft`], a real array of `n` points (`None`: `2 (m - 1)` for `m`
/// frequencies) (`jnp.fft.irfft`).
#[track_caller]
pub fn irfft(a: &Array, n: Option<usize>, axis: i64, norm: Option<Norm>) -> Array {
    fft_1d("irfft", FftType::Irfft, a, n, axis, norm)
}

/// The transform of a signal with Hermitian symmetry, which is real (`jnp.fft.hfft`).
#[track_caller]
pub fn hfft(a: &Array, n: Option<usize>, axis: i64, norm: Option<Norm>) -> Array {
    let conj = super::conj(a);
    let len = conj.shape()[norm_axis("hfft", axis, a.shape())];
    let nn = n.unwrap_or(2 * len.saturating_sub(1));
    fft_1d("hfft", FftType::Irfft, &conj, n, axis, norm) * nn as f64
}

/// The inverse of [`hfft`] (`jnp.fft.ihfft`).
#[track_caller]
pub fn ihfft(a: &Array, n: Option<usize>, axis: i64, norm: Option<Norm>) -> Array {
    let nn = n.unwrap_or(a.shape()[norm_axis("ihfft", axis, a.shape())]);
    let y = fft_1d("ihfft", FftType::Rfft, a, n, axis, norm);
    super::conj(&y) * (1.0 / nn as f64)
}

/// The two-dimensional transform over `axes` (`jnp.fft.fft2`; JAX's default axes are
/// `[-2, -1]`), of lengths `s`.
#[track_caller]
pub fn fft2(a: &Array, s: Option<&[usize]>, axes: &[i64], norm: Option<Norm>) -> Array {
    fft_core("fft2", FftType::Fft, a, s, Some(axes), norm)
}

/// The inverse of [`fft2`] (`jnp.fft.ifft2`).
#[track_caller]
pub fn ifft2(a: &Array, s: Option<&[usize]>, axes: &[i64], norm: Option<Norm>) -> Array {
    fft_core("ifft2", FftType::Ifft, a, s, Some(axes), norm)
}

/// The two-dimensional transform of a real array (`jnp.fft.rfft2`).
#[track_caller]
pub fn rfft2(a: &Array, s: Option<&[usize]>, axes: &[i64], norm: Option<Norm>) -> Array {
    fft_core("rfft2", FftType::Rfft, a, s, Some(axes), norm)
}

/// The inverse of [`rfft2`] (`jnp.fft.irfft2`).
#[track_caller]
pub fn irfft2(a: &Array, s: Option<&[usize]>, axes: &[i64], norm: Option<Norm>) -> Array {
    fft_core("irfft2", FftType::Irfft, a, s, Some(axes), norm)
}

/// The n-dimensional transform over `axes` (`None`: all, or the last `s.len()`)
/// (`jnp.fft.fftn`).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
/// use jaxrs::C64;
///
/// let x = Array::ones(&[2, 2, 2], DType::F32);
/// let y = jnp::fft::fftn(&x, None, None, None);
/// assert_eq!(y.to_vec::<C64>()[0], C64::new(8.0, 0.0));
/// ```
#[track_caller]
pub fn fftn(a: &Array, s: Option<&[usize]>, axes: Option<&[i64]>, norm: Option<Norm>) -> Array {
    fft_core("fftn", FftType::Fft, a, s, axes, norm)
}

/// The inverse of [`fftn`] (`jnp.fft.ifftn`).
#[track_caller]
pub fn ifftn(a: &Array, s: Option<&[usize]>, axes: Option<&[i64]>, norm: Option<Norm>) -> Array {
    fft_core("ifftn", FftType::Ifft, a, s, axes, norm)
}

/// The n-dimensional transform of a real array (`jnp.fft.rfftn`).
#[track_caller]
pub fn rfftn(a: &Array, s: Option<&[usize]>, axes: Option<&[i64]>, norm: Option<Norm>) -> Array {
    fft_core("rfftn", FftType::Rfft, a, s, axes, norm)
}

/// The inverse of [`rfftn`] (`jnp.fft.irfftn`).
#[track_caller]
pub fn irfftn(a: &Array, s: Option<&[usize]>, axes: Option<&[i64]>, norm: Option<Norm>) -> Array {
    fft_core("irfftn", FftType::Irfft, a, s, axes, norm)
}

/// The sample frequencies of an `n`-point transform with sample spacing `d`
/// (`jnp.fft.fftfreq`): `[0, 1, ..., n/2 - 1, -n/2, ..., -1] / (d n)` in `dtype` (`None`:
/// float64, JAX's default with x64).
///
/// ```
/// use jaxrs::numpy as jnp;
///
/// let f = jnp::fft::fftfreq(4, 0.5, None);
/// assert_eq!(f.to_vec::<f64>(), vec![0.0, 0.5, -1.0, -0.5]);
/// ```
#[track_caller]
pub fn fftfreq(n: usize, d: f64, dtype: Option<DType>) -> Array {
    let dtype = dtype.unwrap_or(DType::F64);
    let n_pos = (n - n / 2) as i64; // 0 .. ceil(n/2) - 1 are non-negative
    let k: Vec<f64> = (0..n as i64)
        .map(|i| if i < n_pos { i } else { i - n as i64 } as f64)
        .collect();
    frequencies(&k, d * n as f64, dtype)
}

/// The non-negative sample frequencies of an `n`-point [`rfft`] (`jnp.fft.rfftfreq`):
/// `[0, 1, ..., n/2] / (d n)`.
#[track_caller]
pub fn rfftfreq(n: usize, d: f64, dtype: Option<DType>) -> Array {
    let k: Vec<f64> = (0..=n / 2).map(|i| i as f64).collect();
    frequencies(&k, d * n as f64, dtype.unwrap_or(DType::F64))
}

/// `k / scale` computed in `dtype`, as JAX divides two arrays of that dtype.
fn frequencies(k: &[f64], scale: f64, dtype: DType) -> Array {
    let k = Array::from_f64s(k, &[k.len()], dtype);
    let scale = Array::from_f64s(&[scale], &[], dtype);
    k / scale
}

/// The zero frequency moved to the centre: a roll by `n / 2` along each of `axes` (`None`:
/// all) (`jnp.fft.fftshift`).
///
/// ```
/// use jaxrs::numpy as jnp;
///
/// let f = jnp::fft::fftshift(&jnp::fft::fftfreq(5, 1.0, None), None);
/// assert_eq!(f.to_vec::<f64>(), vec![-0.4, -0.2, 0.0, 0.2, 0.4]);
/// ```
#[track_caller]
pub fn fftshift(x: &Array, axes: Option<&[i64]>) -> Array {
    shift(x, axes, |n| (n / 2) as i64)
}

/// The inverse of [`fftshift`]: a roll by `-(n / 2)` (`jnp.fft.ifftshift`).
#[track_caller]
pub fn ifftshift(x: &Array, axes: Option<&[i64]>) -> Array {
    shift(x, axes, |n| -((n / 2) as i64))
}

#[track_caller]
fn shift(x: &Array, axes: Option<&[i64]>, by: impl Fn(usize) -> i64) -> Array {
    let axes: Vec<i64> = match axes {
        Some(a) => a.to_vec(),
        None => (0..x.rank() as i64).collect(),
    };
    if axes.is_empty() {
        return x.clone();
    }
    let shifts: Vec<i64> = axes
        .iter()
        .map(|&a| by(x.shape()[norm_axis("fftshift", a, x.shape())]))
        .collect();
    super::roll(x, &shifts[..], &axes[..])
}
