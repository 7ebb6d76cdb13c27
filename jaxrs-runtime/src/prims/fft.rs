//! `fft`: the discrete Fourier transform over the innermost one to three dimensions
//! (`stablehlo.fft`), in its four kinds, with JAX's rules: every kind is linear, so its JVP
//! is itself on the tangent; the transposes are JAX's (`jax/_src/lax/fft.py`).

use super::arity;
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{i64_array, LowerCtx};
use crate::core::primitive::{as_any, tuple_str, Primitive};
use crate::core::trace::{bind1, Operand};
use crate::interpreters::batching::move_bdim;
use crate::kernels::lower_host_kernel;

/// The kind of transform (`lax.FftType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FftType {
    /// Complex to complex, forward.
    Fft,
    /// Complex to complex, inverse (divided by the product of the lengths, as numpy's).
    Ifft,
    /// Real to complex, forward: the last dimension keeps `n / 2 + 1` frequencies.
    Rfft,
    /// Complex to real, inverse of [`FftType::Rfft`].
    Irfft,
}

impl FftType {
    fn mlir(self) -> &'static str {
        match self {
            FftType::Fft => "FFT",
            FftType::Ifft => "IFFT",
            FftType::Rfft => "RFFT",
            FftType::Irfft => "IRFFT",
        }
    }
}

/// `y = fft(x)` over the last `lengths.len()` dimensions (1 to 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fft {
    pub fft_type: FftType,
    /// The transform's length along each transformed dimension. For `Irfft`, the last is the
    /// real output's length; the input holds `n / 2 + 1` there.
    pub lengths: Vec<usize>,
}

impl Fft {
    fn apply(&self, x: &Array) -> Array {
        bind1(self.clone(), &[Operand::from(x)])
    }
}

impl Primitive for Fft {
    fn name(&self) -> &'static str {
        "fft"
    }
    fn params_string(&self) -> String {
        format!(
            "fft_type={} fft_lengths={}",
            self.fft_type.mlir(),
            tuple_str(&self.lengths)
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let x = &inputs[0];
        let k = self.lengths.len();
        if !(1..=3).contains(&k) {
            return Err(format!("transforms 1 to 3 dimensions, asked for {k}"));
        }
        if x.rank() < k {
            return Err(format!(
                "a {k}-dimensional transform needs an operand of rank {k} or more"
            ));
        }
        let lead = x.rank() - k;
        let mut shape = x.shape.clone();
        let (want_in, dtype): (Vec<usize>, _) = match self.fft_type {
            FftType::Fft | FftType::Ifft => {
                if !x.dtype.is_complex() {
                    return Err(format!("needs a complex operand, got {}", x.dtype.name()));
                }
                (self.lengths.clone(), x.dtype)
            }
            FftType::Rfft => {
                if !matches!(x.dtype, crate::dtype::DType::F32 | crate::dtype::DType::F64) {
                    return Err(format!(
                        "needs a float32 or float64 operand, got {}",
                        x.dtype.name()
                    ));
                }
                shape[x.rank() - 1] = self.lengths[k - 1] / 2 + 1;
                (self.lengths.clone(), x.dtype.to_complex())
            }
            FftType::Irfft => {
                if !x.dtype.is_complex() {
                    return Err(format!("needs a complex operand, got {}", x.dtype.name()));
                }
                let mut want = self.lengths.clone();
                want[k - 1] = self.lengths[k - 1] / 2 + 1;
                shape[x.rank() - 1] = self.lengths[k - 1];
                (want, x.dtype.real_dtype())
            }
        };
        if x.shape[lead..] != want_in[..] {
            return Err(format!(
                "the operand's last {k} dimensions must be {want_in:?} for fft_lengths {:?}",
                self.lengths
            ));
        }
        Ok(vec![Aval::new(shape, dtype)])
    }
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![t[0].as_ref().map(|t| self.apply(t))]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = cts[0].as_ref() else {
            return vec![None];
        };
        vec![Some(match self.fft_type {
            // The DFT matrix is symmetric: FFT and IFFT are their own (plain) transposes.
            FftType::Fft | FftType::Ifft => self.apply(g),
            FftType::Rfft => rfft_transpose(g, &self.lengths),
            FftType::Irfft => irfft_transpose(g, &self.lengths),
        })]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        if cx.for_cpu() {
            // XLA's CPU FFT takes over twice rustfft's time at 2^20 points (kernels/fft.rs).
            let lengths: Vec<String> = self.lengths.iter().map(usize::to_string).collect();
            return lower_host_kernel(
                cx,
                "jaxrs_fft",
                &[
                    ("fft_type", self.fft_type.mlir()),
                    ("fft_length", &lengths.join(",")),
                ],
                ins,
                in_avals,
                out,
            );
        }
        let props = format!(
            "fft_type = #stablehlo<fft_type {}>, fft_length = {}",
            self.fft_type.mlir(),
            i64_array(self.lengths.iter().map(|&n| n as i64))
        );
        vec![cx.op1(
            "stablehlo.fft",
            &[&ins[0]],
            &[&in_avals[0]],
            &props,
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // The transform acts on the innermost dimensions: the batch goes in front.
        let x = move_bdim(&args[0], dims[0], 0, axis_size);
        (vec![self.apply(&x)], vec![Some(0)])
    }
    as_any!();
}

/// The transpose of RFFT, as JAX takes it: that of the naive RFFT (the real input made
/// complex, a full FFT, the first `n / 2 + 1` frequencies kept), which is: pad the cotangent
/// back to `n`, FFT it, take the real part.
fn rfft_transpose(g: &Array, lengths: &[usize]) -> Array {
    let rank = g.rank();
    let n = *lengths.last().expect("a length");
    let mut high = vec![0i64; rank];
    high[rank - 1] = (n - g.shape()[rank - 1]) as i64;
    let full = g.pad(&vec![0; rank], &high, &[], 0.0);
    let fft = Fft {
        fft_type: FftType::Fft,
        lengths: lengths.to_vec(),
    };
    fft.apply(&full).real()
}

/// The transpose of IRFFT, as JAX writes it: the RFFT of the cotangent, its inner
/// frequencies doubled (they stand for two conjugate ones), scaled by `1 / prod(lengths)`,
/// conjugated (JAX's convention for complex cotangents).
fn irfft_transpose(g: &Array, lengths: &[usize]) -> Array {
    let rfft = Fft {
        fft_type: FftType::Rfft,
        lengths: lengths.to_vec(),
    };
    let x = rfft.apply(g);
    let m = *x.shape().last().expect("a dimension");
    let odd = lengths.last().expect("a length") % 2 == 1;
    let real = x.dtype().real_dtype();
    let mask: Vec<f64> = (0..m)
        .map(|i| {
            if i == 0 || (i == m - 1 && !odd) {
                1.0
            } else {
                2.0
            }
        })
        .collect();
    let mask = Array::from_f64s(&mask, &[m], real).astype(x.dtype());
    let scale = 1.0 / lengths.iter().product::<usize>() as f64;
    (mask * scale * x).conj()
}
