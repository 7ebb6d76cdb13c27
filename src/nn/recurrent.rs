//! Recurrent cells (flax's `nn.GRUCell` and `nn.LSTMCell`): one step each, shaped as a
//! [`scan`](fn@crate::scan) body.

use super::init;
use super::layers::Linear;
use crate::{random, Array, DType, Tree};

/// Flax's cell parameters: an input projection (LeCun normal, bias only if asked) or a
/// hidden one (orthogonal, zero bias).
fn input_proj(
    key: &Array,
    in_features: usize,
    features: usize,
    dtype: DType,
    bias: bool,
) -> Linear {
    Linear::init_with(
        key,
        in_features,
        features,
        dtype,
        &init::lecun_normal(),
        bias,
    )
}

fn hidden_proj(key: &Array, features: usize, dtype: DType) -> Linear {
    Linear::init_with(key, features, features, dtype, &init::orthogonal(1.0), true)
}

/// A GRU cell (flax's `nn.GRUCell`: sigmoid gates, tanh candidate):
///
/// ```text
/// r = sigmoid(x W_ir + h W_hr + b_hr)
/// z = sigmoid(x W_iz + h W_hz + b_hz)
/// n = tanh(x W_in + b_in + r * (h W_hn + b_hn))
/// h' = (1 - z) * n + z * h
/// ```
///
/// The input projections `ir`, `iz` have no bias; the names are flax's.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::GruCell;
///
/// let cell = GruCell::init(&jaxrs::random::key(0), 3, 4, DType::F32);
/// let xs = Array::ones(&[5, 2, 3], DType::F32); // [time, batch, features]
/// let (h, hs) = scan(|h: Array, x: Array| cell.apply(h, &x), cell.init_carry(&[2]), xs);
/// assert_eq!((h.shape(), hs.shape()), (&[2, 4][..], &[5, 2, 4][..]));
/// assert!(h.to_vec::<f32>().iter().all(|v| v.abs() < 1.0));
/// ```
#[derive(Tree, Clone, Debug)]
pub struct GruCell {
    /// Hidden to candidate, with bias.
    pub hn: Linear,
    /// Hidden to reset gate, with bias.
    pub hr: Linear,
    /// Hidden to update gate, with bias.
    pub hz: Linear,
    /// Input to candidate, with bias.
    pub r#in: Linear,
    /// Input to reset gate, no bias.
    pub ir: Linear,
    /// Input to update gate, no bias.
    pub iz: Linear,
}

impl GruCell {
    /// A cell with flax's defaults: LeCun-normal input kernels, orthogonal recurrent kernels,
    /// zero biases; each kernel from its own split of `key`.
    #[track_caller]
    pub fn init(key: &Array, in_features: usize, features: usize, dtype: DType) -> GruCell {
        let [k0, k1, k2, k3, k4, k5] = random::split_n::<6>(key);
        GruCell {
            ir: input_proj(&k0, in_features, features, dtype, false),
            iz: input_proj(&k1, in_features, features, dtype, false),
            r#in: input_proj(&k2, in_features, features, dtype, true),
            hr: hidden_proj(&k3, features, dtype),
            hz: hidden_proj(&k4, features, dtype),
            hn: hidden_proj(&k5, features, dtype),
        }
    }

    /// The hidden size.
    pub fn features(&self) -> usize {
        self.hr.out_features()
    }

    /// A zero hidden state `[batch_dims..., features]` (flax's `initialize_carry`).
    pub fn init_carry(&self, batch_dims: &[usize]) -> Array {
        let mut shape = batch_dims.to_vec();
        shape.push(self.features());
        Array::zeros(&shape, self.hr.kernel.dtype())
    }

    /// One step: `(h, x) -> (h', h')`, the new state twice (as the carry and as the output),
    /// so `|h, x| cell.apply(h, &x)` is a [`scan`](fn@crate::scan) body.
    #[track_caller]
    pub fn apply(&self, h: Array, x: &Array) -> (Array, Array) {
        let r = (self.ir.apply(x) + self.hr.apply(&h)).sigmoid();
        let z = (self.iz.apply(x) + self.hz.apply(&h)).sigmoid();
        let n = (self.r#in.apply(x) + &r * &self.hn.apply(&h)).tanh();
        let new_h = (-&z + 1.0) * &n + &z * &h;
        (new_h.clone(), new_h)
    }
}

/// An LSTM cell (flax's `nn.LSTMCell`: sigmoid gates, tanh activations), over the carry
/// `(c, h)`:
///
/// ```text
/// i = sigmoid(x W_ii + h W_hi + b_hi)    f = sigmoid(x W_if + h W_hf + b_hf)
/// g = tanh(x W_ig + h W_hg + b_hg)       o = sigmoid(x W_io + h W_ho + b_ho)
/// c' = f * c + i * g                     h' = o * tanh(c')
/// ```
///
/// The input projections `i*` have no bias; the names are flax's.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::LstmCell;
///
/// let cell = LstmCell::init(&jaxrs::random::key(0), 3, 4, DType::F32);
/// let xs = Array::ones(&[5, 2, 3], DType::F32); // [time, batch, features]
/// let body = |carry: (Array, Array), x: Array| cell.apply(carry, &x);
/// let ((c, h), hs) = scan(body, cell.init_carry(&[2]), xs);
/// assert_eq!((c.shape(), h.shape(), hs.shape()), (&[2, 4][..], &[2, 4][..], &[5, 2, 4][..]));
/// assert!(h.to_vec::<f32>().iter().all(|v| v.abs() < 1.0));
/// ```
#[derive(Tree, Clone, Debug)]
pub struct LstmCell {
    /// Hidden to forget gate, with bias.
    pub hf: Linear,
    /// Hidden to cell candidate, with bias.
    pub hg: Linear,
    /// Hidden to input gate, with bias.
    pub hi: Linear,
    /// Hidden to output gate, with bias.
    pub ho: Linear,
    /// Input to forget gate, no bias.
    pub r#if: Linear,
    /// Input to cell candidate, no bias.
    pub ig: Linear,
    /// Input to input gate, no bias.
    pub ii: Linear,
    /// Input to output gate, no bias.
    pub io: Linear,
}

impl LstmCell {
    /// A cell with flax's defaults: LeCun-normal input kernels, orthogonal recurrent kernels,
    /// zero biases; each kernel from its own split of `key`.
    #[track_caller]
    pub fn init(key: &Array, in_features: usize, features: usize, dtype: DType) -> LstmCell {
        let k = random::split_n::<8>(key);
        LstmCell {
            ii: input_proj(&k[0], in_features, features, dtype, false),
            r#if: input_proj(&k[1], in_features, features, dtype, false),
            ig: input_proj(&k[2], in_features, features, dtype, false),
            io: input_proj(&k[3], in_features, features, dtype, false),
            hi: hidden_proj(&k[4], features, dtype),
            hf: hidden_proj(&k[5], features, dtype),
            hg: hidden_proj(&k[6], features, dtype),
            ho: hidden_proj(&k[7], features, dtype),
        }
    }

    /// The hidden size.
    pub fn features(&self) -> usize {
        self.hi.out_features()
    }

    /// A zero carry `(c, h)`, each `[batch_dims..., features]` (flax's `initialize_carry`).
    pub fn init_carry(&self, batch_dims: &[usize]) -> (Array, Array) {
        let mut shape = batch_dims.to_vec();
        shape.push(self.features());
        let zeros = Array::zeros(&shape, self.hi.kernel.dtype());
        (zeros.clone(), zeros)
    }

    /// One step: `((c, h), x) -> ((c', h'), h')`, so `|carry, x| cell.apply(carry, &x)` is a
    /// [`scan`](fn@crate::scan) body.
    #[track_caller]
    pub fn apply(&self, carry: (Array, Array), x: &Array) -> ((Array, Array), Array) {
        let (c, h) = carry;
        let i = (self.ii.apply(x) + self.hi.apply(&h)).sigmoid();
        let f = (self.r#if.apply(x) + self.hf.apply(&h)).sigmoid();
        let g = (self.ig.apply(x) + self.hg.apply(&h)).tanh();
        let o = (self.io.apply(x) + self.ho.apply(&h)).sigmoid();
        let new_c = &f * &c + &i * &g;
        let new_h = &o * &new_c.tanh();
        ((new_c, new_h.clone()), new_h)
    }
}
