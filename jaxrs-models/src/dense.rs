//! The dense layer every model here is built from: a float weight, or an int8 weight with
//! per-output-channel scales whose input rows are quantized to int8 on the fly (an int8 x
//! int8 product, not weight-only quantization: see [`Dense`]).

use jaxrs::prelude::*;
use jaxrs::DotDims;

/// `x @ weight^T (* scale) + bias` over the last axis of `x`, with `weight` `[out, in]` as
/// PyTorch's `nn.Linear` keeps it.
///
/// An int8 layer runs as an int8 x int8 -> int32 product: each row of `x` is quantized on the
/// fly (symmetric, `max|row| / 127`), which XLA's CPU backend hands to YNNPACK's int8 kernels
/// with the weight read as int8 (a quarter of f32's bytes). Its outputs are within 2% of the
/// float layer's (relative to the output's largest value, for weights and activations
/// without outliers: `jaxrs-models/tests/dense.rs`); the weight rounding alone costs about
/// 0.5%. Converting the weight to the activations' dtype in the program instead (the
/// weight-only form JAX users write) writes a float copy of it on every call, slower than the
/// float layer (benches/matmul_dtypes.rs).
///
/// `weight` is `[out, in]`, not Flax's `[in, out]` kernel: XLA's CPU backend hands both forms
/// to YNNPACK, which packs the weight into its own tiles on every call (weights are arguments,
/// not constants; at one row, packing is most of a bf16 product's time), and it packs `[out,
/// in]` faster: with weights read from memory, as in a decode step, `[out, in]` takes 0.5-0.65x
/// the time of `[in, out]` in int8 and about 0.9x in f32; in bf16 0.7-0.85x, and 0.55-0.6x
/// with the runtime's few-rows form that puts such a weight on the left (the streamed table of
/// `benches/matmul_dtypes.rs`). Hugging Face's `nn.Linear` weights load as
/// they are; GPT-2's `Conv1D` `[in, out]` weights are transposed once when loaded.
/// With `scale` (`[out]`, the activations' dtype) the weight is int8, quantized per output
/// channel by [`Dense::quantize_int8`]; without it the weight has the activations' dtype.
#[derive(Tree, Clone, Debug)]
pub struct Dense {
    /// The bias, `[out]`, or `None`.
    pub bias: Option<Array>,
    /// The weights, `[out, in]`: float, or int8 when `scale` is set.
    pub weight: Array,
    /// Per-output-channel scales of an int8 weight, `[out]`.
    pub scale: Option<Array>,
}

impl Dense {
    /// A float layer from a weight `[out, in]` (PyTorch's layout) and an optional bias
    /// `[out]`.
    ///
    /// ```
    /// # use jaxrs::prelude::*;
    /// # use jaxrs_models::dense::Dense;
    /// // 3 inputs, 2 outputs.
    /// let layer = Dense::new(Array::from_vec(vec![1f32, 0., 0., 0., 1., 1.], &[2, 3]), None);
    /// let y = layer.apply(&Array::from_vec(vec![1f32, 2., 3.], &[1, 3]));
    /// assert_eq!(y.to_vec::<f32>(), vec![1., 5.]);
    /// ```
    pub fn new(weight: Array, bias: Option<Array>) -> Dense {
        Dense {
            bias,
            weight,
            scale: None,
        }
    }

    /// The number of input features.
    pub fn in_features(&self) -> usize {
        self.weight.shape()[1]
    }

    /// The number of output features.
    pub fn out_features(&self) -> usize {
        self.weight.shape()[0]
    }

    /// `x @ weight^T + bias`, contracting the last axis of `x`.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        let dims = DotDims {
            lhs_contract: vec![x.rank() - 1],
            rhs_contract: vec![1],
            ..DotDims::default()
        };
        let y = match &self.scale {
            Some(scale) => int8_product(x, &self.weight, scale, &dims),
            None => x.dot_general(&self.weight, &dims),
        };
        match &self.bias {
            Some(b) => y + b,
            None => y,
        }
    }

    /// Casts a float layer's parameters to `dtype` (an int8 layer keeps its weight and casts
    /// its scales and bias).
    pub fn astype(&self, dtype: DType) -> Dense {
        Dense {
            bias: self.bias.as_ref().map(|b| b.astype(dtype)),
            weight: if self.scale.is_some() {
                self.weight.clone()
            } else {
                self.weight.astype(dtype)
            },
            scale: self.scale.as_ref().map(|s| s.astype(dtype)),
        }
    }

    /// Quantizes a float layer's weight to int8, symmetric per output channel: `scale =
    /// max|weight[j, :]| / 127`, `weight_q = round(weight / scale)`. The scales and the bias
    /// keep the weight's dtype. An int8 layer is returned as it is.
    pub fn quantize_int8(&self) -> Dense {
        if self.scale.is_some() {
            return self.clone();
        }
        let dtype = self.weight.dtype();
        let w = self.weight.astype(DType::F32);
        let amax = w.abs().max(1, true);
        let scale = where_(amax.eq(0.0f32), Array::scalar(1.0f32), amax / 127.0f32);
        let q = (w / &scale).round().clip(-127.0, 127.0).astype(DType::I8);
        let scale = scale.reshape([self.out_features()]);
        Dense {
            bias: self.bias.clone(),
            weight: q,
            scale: Some(scale.astype(dtype)),
        }
    }
}

/// `x @ (weight_q * scale)^T` for an int8 `weight_q` `[out, in]` with per-output-channel `scale`:
/// the rows of `x` quantized to int8 with one scale each, an int8 x int8 -> int32 product
/// (exact: 768 products of |v| <= 127 stay far below 2^31), and both scales applied to the
/// int32 sums in f32, then the result in `x`'s dtype.
#[track_caller]
fn int8_product(x: &Array, weight_q: &Array, scale: &Array, dims: &DotDims) -> Array {
    let xf = x.astype(DType::F32);
    let last = x.rank() - 1;
    let amax = xf.abs().max(last, true);
    // A zero row stays zero with any scale; 1 avoids 0/0.
    let row_scale = where_(amax.eq(0.0f32), Array::scalar(1.0f32), amax / 127.0f32);
    let xq = (xf / &row_scale).round().astype(DType::I8);
    let acc = xq.dot_general_preferred(weight_q, dims, Some(DType::I32));
    (acc.astype(DType::F32) * row_scale * scale.astype(DType::F32)).astype(x.dtype())
}
