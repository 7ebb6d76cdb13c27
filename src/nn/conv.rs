//! A 2-D convolution layer (flax's `nn.Conv` over NHWC images).

use super::init::{self, Initializer};
use crate::{conv_general_dilated, Array, DType, Padding, Tree};

/// A 2-D convolution over `[batch, height, width, in_features]` images (flax's `nn.Conv`
/// with a two-dimensional `kernel_size`): `kernel` is `[kh, kw, in_features, out_features]`
/// (HWIO), `bias` `[out_features]` or `None`. [`Conv2d::apply`] uses flax's defaults (stride 1,
/// `SAME` padding); [`Conv2d::apply_with`] takes others.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::{max_pool, Conv2d};
/// use jaxrs::Padding;
///
/// let conv = Conv2d::init(&jaxrs::random::key(0), 3, 3, 1, 8, DType::F32);
/// let images = Array::ones(&[2, 28, 28, 1], DType::F32);
/// let y = conv.apply(&images).relu();
/// assert_eq!(y.shape(), &[2, 28, 28, 8]);
/// let pooled = max_pool(&y, &[2, 2], &[2, 2], Padding::Valid);
/// assert_eq!(pooled.shape(), &[2, 14, 14, 8]);
/// // ReLU outputs are never negative.
/// assert!(pooled.to_vec::<f32>().iter().all(|&v| v >= 0.0));
/// ```
#[derive(Tree, Clone, Debug)]
pub struct Conv2d {
    /// The bias, `[out_features]`.
    pub bias: Option<Array>,
    /// The kernel, `[kh, kw, in_features, out_features]`.
    pub kernel: Array,
}

impl Conv2d {
    /// A layer with flax's defaults: a LeCun-normal kernel (fan in `kh * kw * in_features`)
    /// drawn with `key`, a zero bias.
    #[track_caller]
    pub fn init(
        key: &Array,
        kh: usize,
        kw: usize,
        in_features: usize,
        out_features: usize,
        dtype: DType,
    ) -> Conv2d {
        Conv2d::init_with(
            key,
            [kh, kw, in_features, out_features],
            dtype,
            &init::lecun_normal(),
            true,
        )
    }

    /// A layer of kernel shape `[kh, kw, in_features, out_features]` with the given kernel
    /// initialiser, and a zero bias if `use_bias`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::nn::{init, Conv2d};
    ///
    /// let conv = Conv2d::init_with(&jaxrs::random::key(0), [5, 5, 3, 16], DType::F32, &init::he_normal(), false);
    /// assert!(conv.bias.is_none());
    /// assert!(conv.kernel.to_vec::<f32>().iter().all(|v| v.is_finite()));
    /// ```
    #[track_caller]
    pub fn init_with(
        key: &Array,
        kernel_shape: [usize; 4],
        dtype: DType,
        kernel_init: &Initializer,
        use_bias: bool,
    ) -> Conv2d {
        Conv2d {
            kernel: kernel_init.init(key, &kernel_shape, dtype),
            bias: use_bias.then(|| Array::zeros(&[kernel_shape[3]], dtype)),
        }
    }

    /// The convolution with stride 1 and `SAME` padding (the output keeps the input's height
    /// and width), plus the bias.
    #[track_caller]
    pub fn apply(&self, x: &Array) -> Array {
        self.apply_with(x, &[1, 1], Padding::Same)
    }

    /// The convolution with the given `strides` (`[sh, sw]`) and padding, plus the bias.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::nn::Conv2d;
    /// use jaxrs::Padding;
    ///
    /// let conv = Conv2d::init(&jaxrs::random::key(0), 3, 3, 2, 4, DType::F32);
    /// let y = conv.apply_with(&Array::ones(&[1, 9, 9, 2], DType::F32), &[2, 2], Padding::Valid);
    /// assert_eq!(y.shape(), &[1, 4, 4, 4]);
    /// assert!(y.to_vec::<f32>().iter().all(|v| v.is_finite()));
    /// ```
    #[track_caller]
    pub fn apply_with(&self, x: &Array, strides: &[usize], padding: impl Into<Padding>) -> Array {
        let y = conv_general_dilated(
            x,
            &self.kernel,
            strides,
            padding,
            &[],
            &[],
            Some(("NHWC", "HWIO", "NHWC")),
            1,
        );
        match &self.bias {
            Some(b) => y + b,
            None => y,
        }
    }
}
