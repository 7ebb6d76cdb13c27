//! Scaled dot-product attention, its masks, and multi-head attention (flax's
//! `nn.dot_product_attention`, `nn.make_attention_mask`, `nn.make_causal_mask`,
//! `nn.combine_masks` and `nn.MultiHeadDotProductAttention`).

use super::init;
use crate::{random, where_, Array, DType, DotDims, Tree};

/// The most negative finite value of a float dtype (`jnp.finfo(dtype).min`): what masked-out
/// attention logits become, so a fully masked row is uniform rather than NaN.
fn finite_min(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => -65504.0,
        DType::BF16 => -3.389_531_389_251_535_5e38,
        DType::F32 => f32::MIN as f64,
        _ => f64::MIN,
    }
}

/// `[batch..., rest...]` reshaped to `[prod(batch), rest...]`, so the products below have one
/// batch axis whatever the caller's.
fn flatten_batch(x: &Array, rest: usize, what: &str) -> (Array, Vec<usize>) {
    assert!(
        x.rank() >= rest,
        "dot_product_attention: {what} must have shape [batch..., length, heads, head_dim], got {:?}",
        x.shape()
    );
    let split = x.rank() - rest;
    let batch = x.shape()[..split].to_vec();
    let mut shape = vec![batch.iter().product()];
    shape.extend_from_slice(&x.shape()[split..]);
    (x.reshape(shape), batch)
}

/// The attention weights `softmax(q k^T / sqrt(head_dim))`, shape `[batch..., heads, q_len,
/// kv_len]` (flax's `nn.dot_product_attention_weights`).
///
/// `query` is `[batch..., q_len, heads, head_dim]`, `key` is `[batch..., kv_len, heads,
/// head_dim]`; `mask` (bool, or nonzero = attend) broadcasts against the weights; masked-out
/// logits become the dtype's most negative finite value, as in flax.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::dot_product_attention_weights;
///
/// let q = Array::ones(&[1, 2, 1, 4], DType::F32);
/// let w = dot_product_attention_weights(&q, &q, None);
/// assert_eq!(w.shape(), &[1, 1, 2, 2]);
/// assert_eq!(w.to_vec::<f32>(), vec![0.5; 4]);
/// ```
#[track_caller]
pub fn dot_product_attention_weights(query: &Array, key: &Array, mask: Option<&Array>) -> Array {
    let (q, batch) = flatten_batch(query, 3, "query");
    let (k, _) = flatten_batch(key, 3, "key");
    let depth = query.shape()[query.rank() - 1];
    let scale = Array::full(&[], depth as f64, query.dtype()).sqrt();
    let q = &q / &scale;
    // [n, q, h, d] x [n, k, h, d] -> [n, h, q, k]: batch over n and h, contract d.
    let logits = q.dot_general(
        &k,
        &DotDims {
            lhs_contract: vec![3],
            rhs_contract: vec![3],
            lhs_batch: vec![0, 2],
            rhs_batch: vec![0, 2],
        },
    );
    let mut shape = batch;
    shape.extend_from_slice(&logits.shape()[1..]);
    let mut logits = logits.reshape(shape);
    if let Some(mask) = mask {
        let big_neg = Array::full(&[], finite_min(logits.dtype()), logits.dtype());
        logits = where_(mask, &logits, &big_neg);
    }
    logits.softmax(-1)
}

/// Scaled dot-product attention, `softmax(q k^T / sqrt(head_dim)) v` (flax's
/// `nn.dot_product_attention` without dropout).
///
/// `query` is `[batch..., q_len, heads, head_dim]`, `key` and `value` are `[batch..., kv_len,
/// heads, head_dim]` and the result is `[batch..., q_len, heads, head_dim]`. `mask` (bool, or
/// nonzero = attend) broadcasts against `[batch..., heads, q_len, kv_len]`: build it with
/// [`make_causal_mask`], [`make_attention_mask`] and [`combine_masks`].
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::{dot_product_attention, make_causal_mask};
///
/// // With a causal mask, the first position can only see itself.
/// let q = Array::ones(&[1, 3, 1, 2], DType::F32);
/// let v = Array::arange(0.0, 6.0, 1.0, DType::F32).reshape([1, 3, 1, 2]);
/// let mask = make_causal_mask(&Array::zeros(&[1, 3], DType::I32));
/// let out = dot_product_attention(&q, &q, &v, Some(&mask));
/// assert_eq!(out.to_vec::<f32>()[..2], [0.0, 1.0]);
/// ```
#[track_caller]
pub fn dot_product_attention(
    query: &Array,
    key: &Array,
    value: &Array,
    mask: Option<&Array>,
) -> Array {
    let weights = dot_product_attention_weights(query, key, mask);
    let (w, _) = flatten_batch(&weights, 3, "weights");
    let (v, batch) = flatten_batch(value, 3, "value");
    // [n, h, q, k] x [n, k, h, d] -> [n, h, q, d].
    let out = w.dot_general(
        &v,
        &DotDims {
            lhs_contract: vec![3],
            rhs_contract: vec![1],
            lhs_batch: vec![0, 1],
            rhs_batch: vec![0, 2],
        },
    );
    let out = out.transpose([0, 2, 1, 3]);
    let mut shape = batch;
    shape.extend_from_slice(&out.shape()[1..]);
    out.reshape(shape)
}

/// A pairwise attention mask from per-position ones: `mask[..., 0, i, j] = query_input[..., i]
/// && key_input[..., j]`, shape `[batch..., 1, q_len, kv_len]` (flax's
/// `nn.make_attention_mask` with its default `jnp.multiply`, as bools). Typical use: padding,
/// `make_attention_mask(&tokens.ne(PAD), &tokens.ne(PAD))`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::make_attention_mask;
///
/// let keep = Array::from_vec(vec![true, false], &[1, 2]);
/// let mask = make_attention_mask(&keep, &keep);
/// assert_eq!(mask.shape(), &[1, 1, 2, 2]);
/// assert_eq!(mask.to_vec::<bool>(), vec![true, false, false, false]);
/// ```
#[track_caller]
pub fn make_attention_mask(query_input: &Array, key_input: &Array) -> Array {
    let q = query_input.ne(0).expand_dims(-1);
    let k = key_input.ne(0).expand_dims(-2);
    q.logical_and(&k).expand_dims(-3)
}

/// A causal mask for a `[batch..., length]` input: position `i` attends to `j <= i`; shape
/// `[batch..., 1, length, length]`, bools (flax's `nn.make_causal_mask`). Only `x`'s shape is
/// used.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::make_causal_mask;
///
/// let mask = make_causal_mask(&Array::zeros(&[2], DType::I32));
/// assert_eq!(mask.to_vec::<bool>(), vec![true, false, true, true]);
/// ```
#[track_caller]
pub fn make_causal_mask(x: &Array) -> Array {
    let length = x.shape()[x.rank() - 1];
    let idxs = Array::iota(DType::I32, &[length], 0).broadcast_to(x.shape());
    idxs.expand_dims(-1)
        .ge(idxs.expand_dims(-2))
        .expand_dims(-3)
}

/// The logical and of the masks given (`None`s skipped), or `None` if there are none (flax's
/// `nn.combine_masks`).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::{combine_masks, make_attention_mask, make_causal_mask};
///
/// let keep = Array::from_vec(vec![true, true, false], &[1, 3]);
/// let mask = combine_masks(&[Some(make_causal_mask(&keep)), None, Some(make_attention_mask(&keep, &keep))]);
/// let mask = mask.unwrap().to_vec::<bool>();
/// assert_eq!(mask, vec![true, false, false, true, true, false, false, false, false]);
/// ```
#[track_caller]
pub fn combine_masks(masks: &[Option<Array>]) -> Option<Array> {
    masks
        .iter()
        .flatten()
        .map(|m| m.ne(0))
        .reduce(|a, b| a.logical_and(&b))
}

/// Multi-head dot-product attention (flax's `nn.MultiHeadDotProductAttention`, without
/// dropout): `query`, `key` and `value` projections to `[heads, head_dim]`, scaled dot-product
/// attention, and an output projection back to the features.
///
/// The kernels are `[features, heads, head_dim]` (`out_kernel` `[heads, head_dim,
/// out_features]`) and the biases `[heads, head_dim]` (`out_bias` `[out_features]`), as in flax's
/// parameter tree.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::{make_causal_mask, MultiHeadAttention};
///
/// let mha = MultiHeadAttention::init(&jaxrs::random::key(0), 8, 2, DType::F32);
/// let x = Array::ones(&[1, 5, 8], DType::F32);
/// let y = mha.apply(&x, &x, Some(&make_causal_mask(&Array::zeros(&[1, 5], DType::I32))));
/// assert_eq!(y.shape(), &[1, 5, 8]);
/// assert!(y.to_vec::<f32>().iter().all(|v| v.is_finite()));
/// ```
#[derive(Tree, Clone, Debug)]
pub struct MultiHeadAttention {
    /// `[heads, head_dim]`.
    pub key_bias: Array,
    /// The key projection, `[features, heads, head_dim]`.
    pub key_kernel: Array,
    /// `[out_features]`.
    pub out_bias: Array,
    /// The output projection, `[heads, head_dim, out_features]`.
    pub out_kernel: Array,
    /// `[heads, head_dim]`.
    pub query_bias: Array,
    /// The query projection, `[features, heads, head_dim]`.
    pub query_kernel: Array,
    /// `[heads, head_dim]`.
    pub value_bias: Array,
    /// The value projection, `[features, heads, head_dim]`.
    pub value_kernel: Array,
}

/// `x[..., f] @ kernel[f, h, d] + bias[h, d]`.
fn project_in(x: &Array, kernel: &Array, bias: &Array) -> Array {
    x.dot_general(
        kernel,
        &DotDims {
            lhs_contract: vec![x.rank() - 1],
            rhs_contract: vec![0],
            ..DotDims::default()
        },
    ) + bias
}

impl MultiHeadAttention {
    /// Self-attention parameters with flax's defaults (`qkv_features` and `out_features` both
    /// `features`, `head_dim = features / num_heads`): LeCun-normal kernels (drawn on the
    /// flattened `[features, heads * head_dim]` shape, as flax's `DenseGeneral`), zero biases.
    /// Use [`MultiHeadAttention::init_with`] for other sizes.
    #[track_caller]
    pub fn init(
        key: &Array,
        features: usize,
        num_heads: usize,
        dtype: DType,
    ) -> MultiHeadAttention {
        assert!(
            num_heads > 0 && features.is_multiple_of(num_heads),
            "MultiHeadAttention: features ({features}) must be divisible by num_heads ({num_heads})"
        );
        MultiHeadAttention::init_with(
            key,
            features,
            num_heads,
            features / num_heads,
            features,
            dtype,
        )
    }

    /// Parameters for inputs of `in_features`, `num_heads` heads of `head_dim`, and outputs of
    /// `out_features`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::nn::MultiHeadAttention;
    ///
    /// let mha = MultiHeadAttention::init_with(&jaxrs::random::key(0), 6, 4, 8, 10, DType::F32);
    /// assert_eq!(mha.query_kernel.shape(), &[6, 4, 8]);
    /// assert_eq!(mha.out_kernel.shape(), &[4, 8, 10]);
    /// let x = Array::ones(&[2, 3, 6], DType::F32);
    /// let y = mha.apply(&x, &x, None);
    /// assert_eq!(y.shape(), &[2, 3, 10]);
    /// assert!(y.to_vec::<f32>().iter().all(|v| v.is_finite()));
    /// ```
    #[track_caller]
    pub fn init_with(
        key: &Array,
        in_features: usize,
        num_heads: usize,
        head_dim: usize,
        out_features: usize,
        dtype: DType,
    ) -> MultiHeadAttention {
        let [kq, kk, kv, ko] = random::split_n::<4>(key);
        let kernel = |k: &Array, rows: usize, cols: usize, shape: &[usize]| {
            init::lecun_normal()
                .init(k, &[rows, cols], dtype)
                .reshape(shape)
        };
        let inner = num_heads * head_dim;
        let in_shape = [in_features, num_heads, head_dim];
        MultiHeadAttention {
            query_kernel: kernel(&kq, in_features, inner, &in_shape),
            query_bias: Array::zeros(&[num_heads, head_dim], dtype),
            key_kernel: kernel(&kk, in_features, inner, &in_shape),
            key_bias: Array::zeros(&[num_heads, head_dim], dtype),
            value_kernel: kernel(&kv, in_features, inner, &in_shape),
            value_bias: Array::zeros(&[num_heads, head_dim], dtype),
            out_kernel: kernel(
                &ko,
                inner,
                out_features,
                &[num_heads, head_dim, out_features],
            ),
            out_bias: Array::zeros(&[out_features], dtype),
        }
    }

    /// The number of heads.
    pub fn num_heads(&self) -> usize {
        self.query_kernel.shape()[1]
    }

    /// Attends from `inputs_q` (`[batch..., q_len, features]`) to `inputs_kv` (`[batch...,
    /// kv_len, features]`; pass the same array for self-attention), with an optional mask
    /// broadcasting against `[batch..., heads, q_len, kv_len]`. Returns `[batch..., q_len,
    /// out_features]`.
    #[track_caller]
    pub fn apply(&self, inputs_q: &Array, inputs_kv: &Array, mask: Option<&Array>) -> Array {
        let q = project_in(inputs_q, &self.query_kernel, &self.query_bias);
        let k = project_in(inputs_kv, &self.key_kernel, &self.key_bias);
        let v = project_in(inputs_kv, &self.value_kernel, &self.value_bias);
        let x = dot_product_attention(&q, &k, &v, mask);
        let r = x.rank();
        x.dot_general(
            &self.out_kernel,
            &DotDims {
                lhs_contract: vec![r - 2, r - 1],
                rhs_contract: vec![0, 1],
                ..DotDims::default()
            },
        ) + &self.out_bias
    }
}
