//! `lax.fft`: the operand converted as JAX converts it, then the `fft` primitive.

use crate::core::array::Array;
use crate::core::trace::{bind1, Operand};
use crate::prims::{Fft, FftType};
use std::panic::Location;

/// The discrete Fourier transform of kind `fft_type` over the last `fft_lengths.len()`
/// dimensions (1 to 3) of `x` (`lax.fft`). As JAX, a real or integer operand of a complex
/// transform is made complex first (float32 and narrower to complex64, float64 to
/// complex128), and `Rfft` takes a real operand (integers become floats) and refuses a
/// complex one.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{FftType, C64};
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]);
/// let y = jaxrs::fft(&x, FftType::Fft, &[4]);
/// let want = [C64::new(10.0, 0.0), C64::new(-2.0, 2.0), C64::new(-2.0, 0.0), C64::new(-2.0, -2.0)];
/// assert_eq!(y.to_vec::<C64>(), want);
/// ```
#[track_caller]
pub fn fft(x: &Array, fft_type: FftType, fft_lengths: &[usize]) -> Array {
    let x = match fft_type {
        FftType::Rfft => {
            if x.dtype().is_complex() {
                panic!(
                    "fft: only real valued inputs supported for rfft, got {} at {}",
                    x.aval(),
                    Location::caller()
                );
            }
            let d = x.dtype().to_inexact();
            // XLA's RFFT takes float32 or float64: half floats compute in float32.
            x.astype(if d == crate::dtype::DType::F64 {
                d
            } else {
                crate::dtype::DType::F32
            })
        }
        _ => x.astype(x.dtype().to_complex()),
    };
    bind1(
        Fft {
            fft_type,
            lengths: fft_lengths.to_vec(),
        },
        &[Operand::from(&x)],
    )
}
