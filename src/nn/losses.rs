//! Losses and metrics (optax's numerics): cross-entropy with integer labels, mean squared
//! error, binary cross-entropy from logits, accuracy.

use crate::{Array, DType};

/// `logits[..., labels[...]]`: each row's entry at its label, by `take_along_axis` as optax
/// (one gather batched over the rows, so the gradient is a scatter into the labelled entries
/// only; a label out of range gives NaN).
#[track_caller]
fn take_labels(logits: &Array, labels: &Array) -> Array {
    assert_eq!(
        &logits.shape()[..logits.rank() - 1],
        labels.shape(),
        "cross-entropy: logits {:?} need labels of shape {:?}, got {:?}",
        logits.shape(),
        &logits.shape()[..logits.rank() - 1],
        labels.shape()
    );
    logits
        .take_along_axis(&labels.expand_dims(-1), -1)
        .squeeze([-1])
}

/// The cross-entropy of `softmax(logits)` against integer class `labels`, per example:
/// `logsumexp(logits) - logits[label]` over the last axis (optax's
/// `softmax_cross_entropy_with_integer_labels`). `logits` is `[batch..., classes]`, `labels`
/// `[batch...]`; the result is `[batch...]` (take its mean for a loss).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::softmax_cross_entropy_with_integer_labels;
///
/// let logits = Array::from_vec(vec![0.0f32, 0.0, 10.0, 0.0], &[2, 2]);
/// let labels = Array::from_vec(vec![1i32, 0], &[2]);
/// let loss = softmax_cross_entropy_with_integer_labels(&logits, &labels).to_vec::<f32>();
/// assert!((loss[0] - 2f32.ln()).abs() < 1e-6);
/// assert!(loss[1] < 1e-4);
/// ```
#[track_caller]
pub fn softmax_cross_entropy_with_integer_labels(logits: &Array, labels: &Array) -> Array {
    assert!(
        logits.dtype().is_float(),
        "cross-entropy: logits must be floats, got {:?}",
        logits.dtype()
    );
    assert!(
        !labels.dtype().is_float() && labels.dtype() != DType::Bool,
        "cross-entropy: labels must be integers, got {:?}",
        labels.dtype()
    );
    logits.logsumexp(-1, false) - take_labels(logits, labels)
}

/// The mean of [`softmax_cross_entropy_with_integer_labels`] over the examples where `mask` is
/// true (or nonzero): `sum(loss * mask) / max(sum(mask), 1)`, so padding positions of a
/// sequence batch count for nothing and an all-masked batch gives 0, not NaN.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::softmax_cross_entropy_masked;
///
/// let logits = Array::from_vec(vec![0.0f32, 0.0, 10.0, 0.0], &[2, 2]);
/// let labels = Array::from_vec(vec![1i32, 1], &[2]);
/// let mask = Array::from_vec(vec![true, false], &[2]);
/// let loss = softmax_cross_entropy_masked(&logits, &labels, &mask).item::<f32>();
/// assert!((loss - 2f32.ln()).abs() < 1e-6);
/// ```
#[track_caller]
pub fn softmax_cross_entropy_masked(logits: &Array, labels: &Array, mask: &Array) -> Array {
    let losses = softmax_cross_entropy_with_integer_labels(logits, labels);
    let weights = mask.ne(0).astype(losses.dtype());
    // The where keeps a NaN or inf loss at a masked position (e.g. a padding label out of
    // range) out of the sum and its gradient.
    let kept = crate::where_(mask.ne(0), &losses, 0.0);
    kept.sum(None, false) / weights.sum(None, false).maximum(1.0)
}

/// The mean squared error `mean((predictions - targets)^2)` over all elements (optax's
/// `squared_error`, averaged).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::mse;
///
/// let p = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let t = Array::from_vec(vec![0.0f32, 4.0], &[2]);
/// assert_eq!(mse(&p, &t).item::<f32>(), 2.5);
/// ```
#[track_caller]
pub fn mse(predictions: &Array, targets: &Array) -> Array {
    (predictions - targets).powi(2).mean(None, false)
}

/// Binary cross-entropy from logits, per element: `-y log(sigmoid(x)) - (1 - y)
/// log(1 - sigmoid(x))`, computed with `log_sigmoid` so large logits neither overflow nor
/// lose precision (optax's `sigmoid_binary_cross_entropy`). `labels` are probabilities in
/// `[0, 1]` of the logits' shape; take the mean for a loss.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::binary_cross_entropy;
///
/// let logits = Array::from_vec(vec![0.0f32, 100.0], &[2]);
/// let labels = Array::from_vec(vec![1.0f32, 0.0], &[2]);
/// let loss = binary_cross_entropy(&logits, &labels).to_vec::<f32>();
/// assert!((loss[0] - 2f32.ln()).abs() < 1e-6);
/// assert_eq!(loss[1], 100.0);
/// ```
#[track_caller]
pub fn binary_cross_entropy(logits: &Array, labels: &Array) -> Array {
    let log_p = logits.log_sigmoid();
    let log_not_p = (-logits).log_sigmoid();
    -labels * &log_p - (-labels + 1.0) * &log_not_p
}

/// The fraction of rows whose largest logit is at the label: `mean(argmax(logits, -1) ==
/// labels)`, as float32.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::nn::accuracy;
///
/// let logits = Array::from_vec(vec![0.1f32, 0.9, 0.8, 0.2], &[2, 2]);
/// let labels = Array::from_vec(vec![1i32, 1], &[2]);
/// assert_eq!(accuracy(&logits, &labels).item::<f32>(), 0.5);
/// ```
#[track_caller]
pub fn accuracy(logits: &Array, labels: &Array) -> Array {
    let predicted = logits.argmax(-1, false);
    predicted
        .eq(labels.astype(predicted.dtype()))
        .astype(DType::F32)
        .mean(None, false)
}
