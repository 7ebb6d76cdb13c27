//! Parameter initialisers, as `jax.nn.initializers`: the same fan rules and the same
//! arithmetic, so the same key gives JAX's bits.
//!
//! Each function returns an [`Initializer`]; call [`Initializer::init`] with a key, a shape
//! and a dtype:
//!
//! ```
//! use jaxrs::prelude::*;
//! use jaxrs::nn::init;
//!
//! let w = init::glorot_uniform().init(&jaxrs::random::key(0), &[3, 4], DType::F32);
//! let limit = (6.0f32 / 7.0).sqrt();
//! assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= limit));
//! ```

use crate::{random, Array, DType};

/// Which fan [`variance_scaling`] divides by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FanMode {
    /// The number of inputs (times the receptive field).
    FanIn,
    /// The number of outputs (times the receptive field).
    FanOut,
    /// Their arithmetic mean.
    FanAvg,
    /// Their geometric mean.
    FanGeoAvg,
}

/// What [`variance_scaling`] samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// A normal truncated to two standard deviations, rescaled to the target variance.
    TruncatedNormal,
    /// A normal.
    Normal,
    /// A uniform on `[-limit, limit)`.
    Uniform,
}

/// A way to fill a parameter array (a `jax.nn.initializers` initializer). Build one with the
/// functions of this module.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::init::{self, Distribution, FanMode};
///
/// // jax.nn.initializers.variance_scaling(2.0, "fan_out", "normal")
/// let he_out = init::variance_scaling(2.0, FanMode::FanOut, Distribution::Normal);
/// let w = he_out.init(&jaxrs::random::key(1), &[64, 32], DType::F32);
/// let std = w.std(None, false, 0).item::<f32>();
/// assert!((std - (2.0f32 / 32.0).sqrt()).abs() < 0.02);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Initializer {
    /// All zeros.
    Zeros,
    /// All ones.
    Ones,
    /// Every element `value`.
    Constant(f64),
    /// `normal * stddev`.
    Normal {
        /// The standard deviation.
        stddev: f64,
    },
    /// Uniform on `[0, scale)`.
    Uniform {
        /// The upper bound.
        scale: f64,
    },
    /// A standard normal truncated to `[lower, upper]`, times `stddev`.
    TruncatedNormal {
        /// The multiplier.
        stddev: f64,
        /// The lower truncation bound, in standard deviations.
        lower: f64,
        /// The upper truncation bound, in standard deviations.
        upper: f64,
    },
    /// Variance `scale / fan`, as [`variance_scaling`].
    VarianceScaling {
        /// The target variance times the fan.
        scale: f64,
        /// Which fan.
        mode: FanMode,
        /// What to sample.
        distribution: Distribution,
        /// The input axis (may be negative).
        in_axis: i64,
        /// The output axis (may be negative).
        out_axis: i64,
    },
    /// A (semi-)orthogonal matrix over the last axis, times `scale`, as [`orthogonal`].
    Orthogonal {
        /// The multiplier.
        scale: f64,
    },
    /// An orthogonal `[in, out]` matrix at the centre of a convolution kernel, zeros
    /// elsewhere, as [`delta_orthogonal`].
    DeltaOrthogonal {
        /// The multiplier.
        scale: f64,
    },
}

/// All zeros (`jax.nn.initializers.zeros`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let b = jaxrs::nn::init::zeros().init(&jaxrs::random::key(0), &[3], DType::F32);
/// assert_eq!(b.to_vec::<f32>(), vec![0.0; 3]);
/// ```
pub fn zeros() -> Initializer {
    Initializer::Zeros
}

/// All ones (`jax.nn.initializers.ones`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let s = jaxrs::nn::init::ones().init(&jaxrs::random::key(0), &[2], DType::F32);
/// assert_eq!(s.to_vec::<f32>(), vec![1.0; 2]);
/// ```
pub fn ones() -> Initializer {
    Initializer::Ones
}

/// Every element `value` (`jax.nn.initializers.constant`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let s = jaxrs::nn::init::constant(0.5).init(&jaxrs::random::key(0), &[2], DType::F32);
/// assert_eq!(s.to_vec::<f32>(), vec![0.5; 2]);
/// ```
pub fn constant(value: f64) -> Initializer {
    Initializer::Constant(value)
}

/// A normal with standard deviation `stddev` (`jax.nn.initializers.normal`; JAX's default is
/// 1e-2).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::normal(0.02).init(&jaxrs::random::key(0), &[1000], DType::F32);
/// assert!((w.std(None, false, 0).item::<f32>() - 0.02).abs() < 0.002);
/// ```
pub fn normal(stddev: f64) -> Initializer {
    Initializer::Normal { stddev }
}

/// A uniform on `[0, scale)` (`jax.nn.initializers.uniform`; JAX's default is 1e-2).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::uniform(0.5).init(&jaxrs::random::key(0), &[100], DType::F32);
/// assert!(w.to_vec::<f32>().iter().all(|&v| (0.0..0.5).contains(&v)));
/// ```
pub fn uniform(scale: f64) -> Initializer {
    Initializer::Uniform { scale }
}

/// A standard normal truncated to `[-2, 2]`, times `stddev`
/// (`jax.nn.initializers.truncated_normal`; JAX's default stddev is 1e-2).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::truncated_normal(0.1).init(&jaxrs::random::key(0), &[100], DType::F32);
/// assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= 0.2));
/// ```
pub fn truncated_normal(stddev: f64) -> Initializer {
    Initializer::TruncatedNormal {
        stddev,
        lower: -2.0,
        upper: 2.0,
    }
}

/// Samples with variance `scale / n`, `n` the fan `mode` picks from the shape
/// (`jax.nn.initializers.variance_scaling`): the input size is `shape[in_axis]`, the output
/// size `shape[out_axis]` (-2 and -1 unless changed by [`Initializer::with_axes`]), and every
/// other axis is receptive field, multiplying both. A truncated normal is divided by
/// 0.87962566103423978, the standard deviation of a standard normal truncated to `[-2, 2]`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::init::{self, Distribution, FanMode};
///
/// let w = init::variance_scaling(1.0, FanMode::FanIn, Distribution::Uniform)
///     .init(&jaxrs::random::key(0), &[4, 10], DType::F32);
/// assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= (3.0f32 / 4.0).sqrt()));
/// ```
pub fn variance_scaling(scale: f64, mode: FanMode, distribution: Distribution) -> Initializer {
    Initializer::VarianceScaling {
        scale,
        mode,
        distribution,
        in_axis: -2,
        out_axis: -1,
    }
}

/// Glorot (Xavier) normal: variance `1 / fan_avg`, truncated normal
/// (`jax.nn.initializers.glorot_normal`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::glorot_normal().init(&jaxrs::random::key(0), &[3, 5], DType::F32);
/// assert_eq!(w.shape(), &[3, 5]);
/// assert!(w.to_vec::<f32>().iter().all(|v| v.is_finite()));
/// ```
pub fn glorot_normal() -> Initializer {
    variance_scaling(1.0, FanMode::FanAvg, Distribution::TruncatedNormal)
}

/// Glorot (Xavier) uniform: variance `1 / fan_avg`, uniform
/// (`jax.nn.initializers.glorot_uniform`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::glorot_uniform().init(&jaxrs::random::key(0), &[3, 5], DType::F32);
/// assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= (6.0f32 / 8.0).sqrt()));
/// ```
pub fn glorot_uniform() -> Initializer {
    variance_scaling(1.0, FanMode::FanAvg, Distribution::Uniform)
}

/// [`glorot_normal`] (`jax.nn.initializers.xavier_normal`).
///
/// ```
/// assert_eq!(jaxrs::nn::init::xavier_normal(), jaxrs::nn::init::glorot_normal());
/// ```
pub fn xavier_normal() -> Initializer {
    glorot_normal()
}

/// [`glorot_uniform`] (`jax.nn.initializers.xavier_uniform`).
///
/// ```
/// assert_eq!(jaxrs::nn::init::xavier_uniform(), jaxrs::nn::init::glorot_uniform());
/// ```
pub fn xavier_uniform() -> Initializer {
    glorot_uniform()
}

/// LeCun normal: variance `1 / fan_in`, truncated normal (`jax.nn.initializers.lecun_normal`;
/// flax's default kernel initialiser).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::lecun_normal().init(&jaxrs::random::key(0), &[4, 3], DType::F32);
/// // Truncated at two standard deviations of 1/sqrt(4), before the 0.8796 rescaling.
/// assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= 1.0 / 0.8796));
/// ```
pub fn lecun_normal() -> Initializer {
    variance_scaling(1.0, FanMode::FanIn, Distribution::TruncatedNormal)
}

/// LeCun uniform: variance `1 / fan_in`, uniform (`jax.nn.initializers.lecun_uniform`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::lecun_uniform().init(&jaxrs::random::key(0), &[3, 4], DType::F32);
/// assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= 1.0));
/// ```
pub fn lecun_uniform() -> Initializer {
    variance_scaling(1.0, FanMode::FanIn, Distribution::Uniform)
}

/// He (Kaiming) normal: variance `2 / fan_in`, truncated normal
/// (`jax.nn.initializers.he_normal`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::he_normal().init(&jaxrs::random::key(0), &[2, 3], DType::F32);
/// assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= 2.0 / 0.8796));
/// ```
pub fn he_normal() -> Initializer {
    variance_scaling(2.0, FanMode::FanIn, Distribution::TruncatedNormal)
}

/// He (Kaiming) uniform: variance `2 / fan_in`, uniform (`jax.nn.initializers.he_uniform`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::he_uniform().init(&jaxrs::random::key(0), &[6, 3], DType::F32);
/// assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= 1.0));
/// ```
pub fn he_uniform() -> Initializer {
    variance_scaling(2.0, FanMode::FanIn, Distribution::Uniform)
}

/// [`he_normal`] (`jax.nn.initializers.kaiming_normal`).
///
/// ```
/// assert_eq!(jaxrs::nn::init::kaiming_normal(), jaxrs::nn::init::he_normal());
/// ```
pub fn kaiming_normal() -> Initializer {
    he_normal()
}

/// [`he_uniform`] (`jax.nn.initializers.kaiming_uniform`).
///
/// ```
/// assert_eq!(jaxrs::nn::init::kaiming_uniform(), jaxrs::nn::init::he_uniform());
/// ```
pub fn kaiming_uniform() -> Initializer {
    he_uniform()
}

/// A matrix with orthonormal columns (rows, if there are fewer rows than columns) over the
/// last axis, times `scale` (`jax.nn.initializers.orthogonal`; flax's default recurrent
/// kernel initialiser): the Q of a QR factorisation of a normal matrix, with R's diagonal
/// made positive. The factorisation runs on the host in float64 (Gram–Schmidt, twice), so
/// the values match JAX's to rounding, not bit for bit, and the key must be concrete (not
/// inside `jit`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let q = jaxrs::nn::init::orthogonal(1.0).init(&jaxrs::random::key(0), &[4, 4], DType::F32);
/// let eye = q.t().matmul(&q).to_vec::<f32>();
/// for (i, v) in eye.iter().enumerate() {
///     assert!((v - if i % 5 == 0 { 1.0 } else { 0.0 }).abs() < 1e-5);
/// }
/// ```
pub fn orthogonal(scale: f64) -> Initializer {
    Initializer::Orthogonal { scale }
}

/// A convolution kernel `[k1, (k2, (k3,)) in, out]` that is zero but for an orthogonal
/// `[in, out]` matrix (as [`orthogonal`] draws it from the key) at the centre of its spatial
/// window, index `(k - 1) / 2` (`jax.nn.initializers.delta_orthogonal`, Xiao et al. 2018).
/// The shape must be 3-, 4- or 5-D with `in <= out`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = jaxrs::nn::init::delta_orthogonal(1.0).init(&jaxrs::random::key(0), &[3, 2, 2], DType::F32);
/// let v = w.to_vec::<f32>();
/// // Only the middle tap is set, and it is orthogonal.
/// assert!(v[..4].iter().chain(&v[8..]).all(|&x| x == 0.0));
/// let (a, b, c, d) = (v[4], v[5], v[6], v[7]);
/// assert!((a * a + b * b - 1.0).abs() < 1e-5 && (a * c + b * d).abs() < 1e-5);
/// ```
pub fn delta_orthogonal(scale: f64) -> Initializer {
    Initializer::DeltaOrthogonal { scale }
}

#[track_caller]
fn delta_orthogonal_init(key: &Array, shape: &[usize], dtype: DType, scale: f64) -> Array {
    let rank = shape.len();
    assert!(
        (3..=5).contains(&rank),
        "delta_orthogonal: the shape must be 3-, 4- or 5-D, got {shape:?}"
    );
    let (fan_in, fan_out) = (shape[rank - 2], shape[rank - 1]);
    assert!(
        fan_in <= fan_out,
        "delta_orthogonal: fan_in must be at most fan_out, got shape {shape:?}"
    );
    let ortho = orthogonal_init(key, &[fan_in, fan_out], dtype, scale);
    let window = &shape[..rank - 2];
    let mut taps = window.iter().map(|_| 1usize).collect::<Vec<_>>();
    taps.extend([fan_in, fan_out]);
    let before: Vec<i64> = window
        .iter()
        .map(|&k| ((k.max(1) - 1) / 2) as i64)
        .collect();
    let after: Vec<i64> = window
        .iter()
        .zip(&before)
        .map(|(&k, &b)| k as i64 - 1 - b)
        .collect();
    let pad = |side: &[i64]| side.iter().copied().chain([0, 0]).collect::<Vec<i64>>();
    ortho
        .reshape(taps)
        .pad(&pad(&before), &pad(&after), &[], 0.0)
}

/// `(fan_in, fan_out)` by JAX's `_compute_fans`.
fn fans(shape: &[usize], in_axis: i64, out_axis: i64) -> (f64, f64) {
    let axis = |a: i64, what: &str| -> usize {
        let rank = shape.len() as i64;
        let i = if a < 0 { a + rank } else { a };
        assert!(
            (0..rank).contains(&i),
            "variance_scaling: {what} {a} is out of range for a shape {shape:?} (it needs a \
             weights array of rank 2 or more, or explicit axes)"
        );
        i as usize
    };
    let in_size = shape[axis(in_axis, "in_axis")] as f64;
    let out_size = shape[axis(out_axis, "out_axis")] as f64;
    let total: f64 = shape.iter().map(|&d| d as f64).product();
    let receptive_field = total / in_size / out_size;
    (in_size * receptive_field, out_size * receptive_field)
}

impl Initializer {
    /// This initializer with other input and output axes (only meaningful for
    /// [`variance_scaling`] and the initialisers built on it; others are returned unchanged):
    /// e.g. `(-2, 0)` for an embedding table, as flax's `nn.Embed`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::nn::init;
    ///
    /// // fan_in of a [10, 4] table with out_axis 0 is 4.
    /// let table = init::lecun_uniform().with_axes(-2, 0).init(&jaxrs::random::key(0), &[10, 4], DType::F32);
    /// assert!(table.to_vec::<f32>().iter().all(|v| v.abs() <= (3.0f32 / 4.0).sqrt()));
    /// ```
    pub fn with_axes(self, in_axis: i64, out_axis: i64) -> Initializer {
        match self {
            Initializer::VarianceScaling {
                scale,
                mode,
                distribution,
                ..
            } => Initializer::VarianceScaling {
                scale,
                mode,
                distribution,
                in_axis,
                out_axis,
            },
            other => other,
        }
    }

    /// A new array of `shape` and (float) `dtype`, drawn with `key`.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let w = jaxrs::nn::init::he_uniform().init(&jaxrs::random::key(3), &[2, 5], DType::F32);
    /// assert_eq!((w.shape(), w.dtype()), (&[2, 5][..], DType::F32));
    /// assert!(w.to_vec::<f32>().iter().all(|v| v.is_finite()));
    /// ```
    #[track_caller]
    pub fn init(&self, key: &Array, shape: &[usize], dtype: DType) -> Array {
        assert!(
            dtype.is_float(),
            "initializers make float arrays, not {dtype:?}"
        );
        // Scalars are made in `dtype` first, as JAX's `jnp.array(scale, dtype)`, so the
        // products round as JAX's do.
        let scalar = |v: f64| Array::full(&[], v, dtype);
        match *self {
            Initializer::Zeros => Array::zeros(shape, dtype),
            Initializer::Ones => Array::ones(shape, dtype),
            Initializer::Constant(v) => Array::full(shape, v, dtype),
            Initializer::Normal { stddev } => random::normal(key, shape, dtype) * scalar(stddev),
            Initializer::Uniform { scale } => random::uniform(key, shape, dtype) * scalar(scale),
            Initializer::TruncatedNormal {
                stddev,
                lower,
                upper,
            } => random::truncated_normal(key, lower, upper, shape, dtype) * scalar(stddev),
            Initializer::VarianceScaling {
                scale,
                mode,
                distribution,
                in_axis,
                out_axis,
            } => {
                let (fan_in, fan_out) = fans(shape, in_axis, out_axis);
                let denominator = match mode {
                    FanMode::FanIn => fan_in,
                    FanMode::FanOut => fan_out,
                    FanMode::FanAvg => (fan_in + fan_out) / 2.0,
                    FanMode::FanGeoAvg => (fan_in * fan_out).sqrt(),
                };
                let variance = scalar(scale / denominator);
                match distribution {
                    Distribution::TruncatedNormal => {
                        let stddev = variance.sqrt() / scalar(0.879_625_661_034_239_8);
                        random::truncated_normal(key, -2.0, 2.0, shape, dtype) * stddev
                    }
                    Distribution::Normal => random::normal(key, shape, dtype) * variance.sqrt(),
                    Distribution::Uniform => {
                        random::uniform_range(key, shape, dtype, -1.0, 1.0)
                            * (variance * 3.0).sqrt()
                    }
                }
            }
            Initializer::Orthogonal { scale } => orthogonal_init(key, shape, dtype, scale),
            Initializer::DeltaOrthogonal { scale } => {
                delta_orthogonal_init(key, shape, dtype, scale)
            }
        }
    }
}

#[track_caller]
fn orthogonal_init(key: &Array, shape: &[usize], dtype: DType, scale: f64) -> Array {
    assert!(
        shape.len() >= 2,
        "orthogonal: the shape must have rank 2 or more, got {shape:?}"
    );
    let n_cols = shape[shape.len() - 1];
    let n_rows = shape.iter().product::<usize>() / n_cols.max(1);
    let (m, n) = if n_rows < n_cols {
        (n_cols, n_rows)
    } else {
        (n_rows, n_cols)
    };
    let a = random::normal(key, &[m, n], dtype).to_f64_vec();
    // Columns of A, orthonormalised in order: Q of A = QR with R's diagonal positive, which
    // is what JAX's `Q * sign(diag(R))` makes of LAPACK's Q.
    let mut q: Vec<Vec<f64>> = Vec::with_capacity(n);
    for j in 0..n {
        let mut v: Vec<f64> = (0..m).map(|i| a[i * n + j]).collect();
        for _ in 0..2 {
            for qi in &q {
                let dot: f64 = qi.iter().zip(&v).map(|(x, y)| x * y).sum();
                v.iter_mut().zip(qi).for_each(|(x, y)| *x -= dot * y);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        q.push(v);
    }
    // Q is [m, n]; with fewer rows than columns JAX uses Q^T, i.e. [n, m] = [n_rows, n_cols].
    let values: Vec<f64> = if n_rows < n_cols {
        (0..n)
            .flat_map(|r| q[r].iter().map(|x| x * scale))
            .collect()
    } else {
        (0..m)
            .flat_map(|r| q.iter().map(move |c| c[r] * scale))
            .collect()
    };
    Array::from_f64s(&values, shape, dtype)
}
