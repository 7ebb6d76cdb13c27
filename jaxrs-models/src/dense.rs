//! The dense layer every model here is built from: a float kernel, or an int8 kernel with
//! per-output-channel scales (weight-only quantization).

use jaxrs::prelude::*;
use jaxrs::DotDims;

/// `x @ kernel (* scale) + bias` over the last axis of `x`.
///
/// An int8 layer runs as an int8 x int8 -> int32 product: each row of `x` is quantized on the
/// fly (symmetric, `max|row| / 127`), which XLA's CPU backend hands to YNNPACK's int8 kernels
/// with the kernel read as int8 (a quarter of f32's bytes). Its outputs are within 2% of the
/// float layer's (relative to the output's largest value, for weights and activations
/// without outliers: `jaxrs-models/tests/dense.rs`); the weight rounding alone costs about
/// 0.5%. Converting the kernel to the activations' dtype in the program instead (the
/// weight-only form JAX users write) writes a float copy of it on every call, slower than the
/// float layer (benches/matmul_dtypes.rs).
///
/// `kernel` is `[in, out]` (Hugging Face's `[out, in]` weights are transposed when loaded).
/// With `scale` (`[out]`, the activations' dtype) the kernel is int8, quantized per output
/// channel by [`Dense::quantize_int8`]; without it the kernel has the activations' dtype.
#[derive(Tree, Clone, Debug)]
pub struct Dense {
    /// The bias, `[out]`, or `None`.
    pub bias: Option<Array>,
    /// The weights, `[in, out]`: float, or int8 when `scale` is set.
    pub kernel: Array,
    /// Per-output-channel scales of an int8 kernel, `[out]`.
    pub scale: Option<Array>,
}

impl Dense {
    /// A float layer from a kernel `[in, out]` and an optional bias `[out]`.
    pub fn new(kernel: Array, bias: Option<Array>) -> Dense {
        Dense {
            bias,
            kernel,
            scale: None,
        }
    }

    /// The number of input features.
    pub fn in_features(&self) -> usize {
        self.kernel.shape()[0]
    }

    /// The number of output features.
    pub fn out_features(&self) -> usize {
        self.kernel.shape()[1]
    }

    /// `x @ kernel + bias`, contracting the last axis of `x`.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        let dims = DotDims {
            lhs_contract: vec![x.rank() - 1],
            rhs_contract: vec![0],
            ..DotDims::default()
        };
        let y = match &self.scale {
            Some(scale) => int8_product(x, &self.kernel, scale, &dims),
            None => x.dot_general(&self.kernel, &dims),
        };
        match &self.bias {
            Some(b) => y + b,
            None => y,
        }
    }

    /// Casts a float layer's parameters to `dtype` (an int8 layer keeps its kernel and casts
    /// its scales and bias).
    pub fn astype(&self, dtype: DType) -> Dense {
        Dense {
            bias: self.bias.as_ref().map(|b| b.astype(dtype)),
            kernel: if self.scale.is_some() {
                self.kernel.clone()
            } else {
                self.kernel.astype(dtype)
            },
            scale: self.scale.as_ref().map(|s| s.astype(dtype)),
        }
    }

    /// Quantizes a float layer's kernel to int8, symmetric per output channel: `scale =
    /// max|kernel[:, j]| / 127`, `kernel_q = round(kernel / scale)`. The scales and the bias keep
    /// the kernel's dtype. An int8 layer is returned as it is.
    pub fn quantize_int8(&self) -> Dense {
        if self.scale.is_some() {
            return self.clone();
        }
        let dtype = self.kernel.dtype();
        let k = self.kernel.astype(DType::F32);
        let amax = k.abs().max(0, false);
        let scale = where_(amax.eq(0.0f32), Array::scalar(1.0f32), amax / 127.0f32);
        let q = (k / &scale).round().clip(-127.0, 127.0).astype(DType::I8);
        Dense {
            bias: self.bias.clone(),
            kernel: q,
            scale: Some(scale.astype(dtype)),
        }
    }
}

/// `x @ (kernel_q * scale)` for an int8 `kernel_q` `[in, out]` with per-output-channel `scale`:
/// the rows of `x` quantized to int8 with one scale each, an int8 x int8 -> int32 product
/// (exact: 768 products of |v| <= 127 stay far below 2^31), and both scales applied to the
/// int32 sums in f32, then the result in `x`'s dtype.
#[track_caller]
fn int8_product(x: &Array, kernel_q: &Array, scale: &Array, dims: &DotDims) -> Array {
    let xf = x.astype(DType::F32);
    let last = x.rank() - 1;
    let amax = xf.abs().max(last, true);
    // A zero row stays zero with any scale; 1 avoids 0/0.
    let row_scale = where_(amax.eq(0.0f32), Array::scalar(1.0f32), amax / 127.0f32);
    let xq = (xf / &row_scale).round().astype(DType::I8);
    let acc = xq.dot_general_preferred(kernel_q, dims, Some(DType::I32));
    (acc.astype(DType::F32) * row_scale * scale.astype(DType::F32)).astype(x.dtype())
}
