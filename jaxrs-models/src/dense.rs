//! The dense layer every model here is built from: a float kernel, or an int8 kernel with
//! per-output-channel scales (weight-only quantization).

use jaxrs::prelude::*;
use jaxrs::DotDims;

/// `x @ kernel (* scale) + bias` over the last axis of `x`.
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
            // Weight-only int8: the product of the activations with the integer kernel,
            // then one multiply per output channel.
            Some(scale) => x.dot_general(&self.kernel.astype(x.dtype()), &dims) * scale,
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
        let scale = where_(&amax.eq(0.0f32), &Array::scalar(1.0f32), &(amax / 127.0f32));
        let q = (k / &scale).round().clip(-127.0, 127.0).astype(DType::I8);
        Dense {
            bias: self.bias.clone(),
            kernel: q,
            scale: Some(scale.astype(dtype)),
        }
    }
}
