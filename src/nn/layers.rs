//! Dense, embedding and normalisation layers, and dropout.

use super::init::{self, Initializer};
use crate::{random, where_, Array, DType, DotDims, TakeMode, Tree};

/// A dense layer, `x @ kernel + bias`, over the last axis of `x` (flax's `nn.Dense`).
///
/// `kernel` is `[in, out]`; `bias` is `[out]`, or `None` for a layer without one.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::Linear;
///
/// let layer = Linear {
///     kernel: Array::from_vec(vec![1.0f32, 0.0, 0.0, 2.0], &[2, 2]),
///     bias: Some(Array::from_vec(vec![0.5f32, -0.5], &[2])),
/// };
/// let y = layer.apply(&Array::from_vec(vec![1.0f32, 1.0], &[1, 2]));
/// assert_eq!(y.to_vec::<f32>(), vec![1.5, 1.5]);
/// ```
#[derive(Tree, Clone, Debug)]
pub struct Linear {
    /// The bias, `[out_features]`.
    pub bias: Option<Array>,
    /// The weights, `[in_features, out_features]`.
    pub kernel: Array,
}

impl Linear {
    /// A layer with flax's `nn.Dense` defaults: a LeCun-normal kernel drawn with `key`, a zero
    /// bias.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::nn::Linear;
    ///
    /// let layer = Linear::init(&jaxrs::random::key(0), 3, 2, DType::F32);
    /// assert_eq!(layer.kernel.shape(), &[3, 2]);
    /// assert!(layer.kernel.to_vec::<f32>().iter().all(|v| v.is_finite()));
    /// assert_eq!(layer.bias.unwrap().to_vec::<f32>(), vec![0.0, 0.0]);
    /// ```
    #[track_caller]
    pub fn init(key: &Array, in_features: usize, out_features: usize, dtype: DType) -> Linear {
        Linear::init_with(
            key,
            in_features,
            out_features,
            dtype,
            &init::lecun_normal(),
            true,
        )
    }

    /// A layer with the given kernel initialiser, and a zero bias if `use_bias`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::nn::{init, Linear};
    ///
    /// let layer = Linear::init_with(&jaxrs::random::key(0), 3, 2, DType::F32, &init::he_uniform(), false);
    /// assert!(layer.bias.is_none());
    /// assert!(layer.kernel.to_vec::<f32>().iter().all(|v| v.is_finite()));
    /// ```
    #[track_caller]
    pub fn init_with(
        key: &Array,
        in_features: usize,
        out_features: usize,
        dtype: DType,
        kernel_init: &Initializer,
        use_bias: bool,
    ) -> Linear {
        Linear {
            kernel: kernel_init.init(key, &[in_features, out_features], dtype),
            bias: use_bias.then(|| Array::zeros(&[out_features], dtype)),
        }
    }

    /// `x @ kernel + bias`, contracting the last axis of `x` (any leading axes are kept).
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        let y = x.dot_general(
            &self.kernel,
            &DotDims {
                lhs_contract: vec![x.rank() - 1],
                rhs_contract: vec![0],
                ..DotDims::default()
            },
        );
        match &self.bias {
            Some(b) => y + b,
            None => y,
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
}

/// A lookup table of `num_embeddings` vectors of `features` values (flax's `nn.Embed`).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::Embedding;
///
/// let table = Embedding { embedding: Array::from_vec(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2]) };
/// let ids = Array::from_vec(vec![2i32, 0], &[2]);
/// assert_eq!(table.apply(&ids).to_vec::<f32>(), vec![4.0, 5.0, 0.0, 1.0]);
/// ```
#[derive(Tree, Clone, Debug)]
pub struct Embedding {
    /// The table, `[num_embeddings, features]`.
    pub embedding: Array,
}

impl Embedding {
    /// A table drawn as flax's `nn.Embed` does: normal with variance `1 / features`
    /// (`variance_scaling(1.0, "fan_in", "normal", out_axis=0)`).
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::nn::Embedding;
    ///
    /// let table = Embedding::init(&jaxrs::random::key(0), 100, 16, DType::F32);
    /// assert_eq!(table.embedding.shape(), &[100, 16]);
    /// assert!(table.embedding.to_vec::<f32>().iter().all(|v| v.is_finite()));
    /// ```
    #[track_caller]
    pub fn init(key: &Array, num_embeddings: usize, features: usize, dtype: DType) -> Embedding {
        let table_init =
            init::variance_scaling(1.0, init::FanMode::FanIn, init::Distribution::Normal)
                .with_axes(-2, 0);
        Embedding {
            embedding: table_init.init(key, &[num_embeddings, features], dtype),
        }
    }

    /// The rows of the table at the integer `ids`: shape `ids.shape() + [features]`. An id out
    /// of range gives a row of NaN (`jnp.take`'s default, as in flax).
    #[track_caller]
    pub fn apply(&self, ids: &Array) -> Array {
        assert!(
            !ids.dtype().is_float(),
            "Embedding::apply: ids must be integers, got {:?}",
            ids.dtype()
        );
        self.embedding.take_with(ids, 0, TakeMode::Fill)
    }

    /// `x @ embedding.T`: scores of `x` against every row, as tied output weights (flax's
    /// `Embed.attend`).
    #[track_caller]
    pub fn attend(&self, x: &Array) -> Array {
        x.dot_general(
            &self.embedding,
            &DotDims {
                lhs_contract: vec![x.rank() - 1],
                rhs_contract: vec![1],
                ..DotDims::default()
            },
        )
    }
}

/// The epsilon flax's `LayerNorm` and `RMSNorm` add to the variance by default.
pub const NORM_EPSILON: f64 = 1e-6;

/// Layer normalisation over the last axis, `(x - mean) / sqrt(var + eps) * scale + bias`
/// (flax's `nn.LayerNorm`, epsilon 1e-6, with its fast variance `mean(x^2) - mean(x)^2`
/// clamped at 0).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::LayerNorm;
///
/// let norm = LayerNorm::new(2, DType::F32);
/// let y = norm.apply(&Array::from_vec(vec![1.0f32, 3.0], &[1, 2]));
/// let y = y.to_vec::<f32>();
/// assert!((y[0] + 1.0).abs() < 1e-5 && (y[1] - 1.0).abs() < 1e-5);
/// ```
#[derive(Tree, Clone, Debug)]
pub struct LayerNorm {
    /// The learned offset, `[features]`.
    pub bias: Array,
    /// The learned scale, `[features]`.
    pub scale: Array,
}

impl LayerNorm {
    /// Scale one, bias zero (flax's defaults).
    pub fn new(features: usize, dtype: DType) -> LayerNorm {
        LayerNorm {
            scale: Array::ones(&[features], dtype),
            bias: Array::zeros(&[features], dtype),
        }
    }

    /// Normalises `x` over its last axis, with epsilon [`NORM_EPSILON`].
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        self.apply_with_epsilon(x, NORM_EPSILON)
    }

    /// [`LayerNorm::apply`] with another epsilon.
    #[track_caller]
    pub fn apply_with_epsilon(&self, x: &Array, epsilon: f64) -> Array {
        let mean = x.mean(-1, true);
        let mean2 = (x * x).mean(-1, true);
        let var = (&mean2 - &mean * &mean).maximum(0.0);
        let mul = (var + epsilon).rsqrt() * &self.scale;
        (x - &mean) * mul + &self.bias
    }
}

/// Root-mean-square normalisation over the last axis, `x / sqrt(mean(x^2) + eps) * scale`
/// (flax's `nn.RMSNorm`, epsilon 1e-6).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::RmsNorm;
///
/// let norm = RmsNorm::new(2, DType::F32);
/// let y = norm.apply(&Array::from_vec(vec![3.0f32, 4.0], &[2])).to_vec::<f32>();
/// let rms = (12.5f32 + 1e-6).sqrt();
/// assert!((y[0] - 3.0 / rms).abs() < 1e-6 && (y[1] - 4.0 / rms).abs() < 1e-6);
/// ```
#[derive(Tree, Clone, Debug)]
pub struct RmsNorm {
    /// The learned scale, `[features]`.
    pub scale: Array,
}

impl RmsNorm {
    /// Scale one (flax's default).
    pub fn new(features: usize, dtype: DType) -> RmsNorm {
        RmsNorm {
            scale: Array::ones(&[features], dtype),
        }
    }

    /// Normalises `x` over its last axis, with epsilon [`NORM_EPSILON`].
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        self.apply_with_epsilon(x, NORM_EPSILON)
    }

    /// [`RmsNorm::apply`] with another epsilon.
    #[track_caller]
    pub fn apply_with_epsilon(&self, x: &Array, epsilon: f64) -> Array {
        let mean2 = (x * x).mean(-1, true);
        x * ((mean2 + epsilon).rsqrt() * &self.scale)
    }
}

/// Dropout (flax's `nn.Dropout`): each element is kept with probability `1 - rate` (a
/// Bernoulli mask drawn with `key`) and scaled by `1 / (1 - rate)`, the others are zero. With
/// `deterministic` (evaluation) or `rate == 0` it is the identity; `rate == 1` gives zeros.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::dropout;
///
/// let x = Array::ones(&[1000], DType::F32);
/// let y = dropout(&jaxrs::random::key(0), &x, 0.5, false).to_vec::<f32>();
/// assert!(y.iter().all(|&v| v == 0.0 || v == 2.0));
/// let kept = y.iter().filter(|&&v| v == 2.0).count();
/// assert!((400..600).contains(&kept));
/// assert_eq!(dropout(&jaxrs::random::key(0), &x, 0.5, true).to_vec::<f32>(), vec![1.0; 1000]);
/// ```
#[track_caller]
pub fn dropout(key: &Array, x: &Array, rate: f64, deterministic: bool) -> Array {
    assert!(
        (0.0..=1.0).contains(&rate),
        "dropout: rate must be in [0, 1], got {rate}"
    );
    if deterministic || rate == 0.0 {
        return x.clone();
    }
    if rate == 1.0 {
        return Array::zeros_like(x);
    }
    let keep_prob = 1.0 - rate;
    let keep = random::bernoulli(key, keep_prob, x.shape());
    where_(&keep, x / keep_prob, Array::zeros_like(x))
}
