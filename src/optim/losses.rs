//! optax's losses (`optax.losses`, also at the top of `optax` and of `jaxrs::optim`):
//! regression, classification with dense labels, divergences, label smoothing, focal loss,
//! the NT-Xent contrastive loss and CTC. Each returns the per-example loss (take its mean
//! for a scalar), computed as optax computes it, over the last axis where there is one.
//!
//! The integer-label cross-entropy and binary cross-entropy are
//! [`crate::nn::softmax_cross_entropy_with_integer_labels`] and
//! [`crate::nn::binary_cross_entropy`].

use crate::{where_, Array, DType};

fn errors(predictions: &Array, targets: Option<&Array>) -> Array {
    match targets {
        Some(t) => predictions - t,
        None => predictions.clone(),
    }
}

/// `(predictions - targets)^2` elementwise, or `predictions^2` without targets
/// (`optax.squared_error`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let p = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let t = Array::from_vec(vec![0.0f32, 4.0], &[2]);
/// assert_eq!(jaxrs::optim::squared_error(&p, Some(&t)).to_vec::<f32>(), vec![1.0, 4.0]);
/// ```
#[track_caller]
pub fn squared_error(predictions: &Array, targets: Option<&Array>) -> Array {
    errors(predictions, targets).powi(2)
}

/// Half the [`squared_error`] (`optax.l2_loss`), whose gradient is the error itself.
#[track_caller]
pub fn l2_loss(predictions: &Array, targets: Option<&Array>) -> Array {
    squared_error(predictions, targets) * 0.5
}

/// The Huber loss (`optax.huber_loss`; optax's default `delta = 1`): quadratic for errors
/// up to `delta`, linear beyond, so outliers pull less than in the squared error.
#[track_caller]
pub fn huber_loss(predictions: &Array, targets: Option<&Array>, delta: f64) -> Array {
    let abs_errors = errors(predictions, targets).abs();
    let quadratic = abs_errors.minimum(delta);
    let linear = &abs_errors - &quadratic;
    quadratic.powi(2) * 0.5 + linear * delta
}

/// `log(cosh(error))` (`optax.log_cosh`): about half the squared error for small errors and
/// the absolute error for large ones, smooth everywhere.
#[track_caller]
pub fn log_cosh(predictions: &Array, targets: Option<&Array>) -> Array {
    let e = errors(predictions, targets);
    e.logaddexp(-&e) - Array::full(&[], 2.0, DType::F32).log().astype(e.dtype())
}

/// The cosine similarity of `predictions` and `targets` along the last axis
/// (`optax.cosine_similarity`; optax's default `epsilon = 0`): each squared norm is
/// clipped below at `epsilon` before the division.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 0.0], &[1, 2]);
/// let b = Array::from_vec(vec![3.0f32, 0.0], &[1, 2]);
/// assert_eq!(jaxrs::optim::cosine_similarity(&a, &b, 0.0).to_vec::<f32>(), vec![1.0]);
/// ```
#[track_caller]
pub fn cosine_similarity(predictions: &Array, targets: &Array, epsilon: f64) -> Array {
    let unit = |x: &Array| {
        let norm2 = (x * x).sum(-1i64, true);
        x / norm2.maximum(epsilon).sqrt()
    };
    (unit(predictions) * unit(targets)).sum(-1i64, false)
}

/// `1 - cosine_similarity` (`optax.cosine_distance`).
#[track_caller]
pub fn cosine_distance(predictions: &Array, targets: &Array, epsilon: f64) -> Array {
    1.0 - cosine_similarity(predictions, targets, epsilon)
}

/// The Kullback-Leibler divergence `sum p (log p - log q)` over the last axis, from
/// `log_predictions` (`log q`) and probability `targets` (`p`; 0 contributes 0)
/// (`optax.kl_divergence`).
#[track_caller]
pub fn kl_divergence(log_predictions: &Array, targets: &Array) -> Array {
    let log_t = where_(targets.eq(0.0), 0.0, targets.log());
    (targets * (log_t - log_predictions)).sum(-1i64, false)
}

/// The generalized KL divergence, for unnormalized measures: [`kl_divergence`] plus
/// `sum(q - p)` (`optax.losses.generalized_kl_divergence`).
#[track_caller]
pub fn generalized_kl_divergence(log_predictions: &Array, targets: &Array) -> Array {
    let x = kl_divergence(log_predictions, targets);
    let y = (log_predictions.exp() - targets).sum(-1i64, false);
    x + y
}

/// [`generalized_kl_divergence`] under its older name (`optax.convex_kl_divergence`).
#[track_caller]
pub fn convex_kl_divergence(log_predictions: &Array, targets: &Array) -> Array {
    generalized_kl_divergence(log_predictions, targets)
}

/// The hinge loss `max(0, 1 - output * target)` for targets in `{-1, 1}`
/// (`optax.hinge_loss`).
#[track_caller]
pub fn hinge_loss(predictor_outputs: &Array, targets: &Array) -> Array {
    (-(predictor_outputs * targets) + 1.0).maximum(0.0)
}

/// Label smoothing (`optax.smooth_labels`): `(1 - alpha) labels + alpha / classes`, the
/// classes along the last axis.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let y = Array::from_vec(vec![1.0f32, 0.0], &[2]);
/// let s = jaxrs::optim::smooth_labels(&y, 0.2).to_vec::<f32>();
/// assert!((s[0] - 0.9).abs() < 1e-6 && (s[1] - 0.1).abs() < 1e-6);
/// ```
#[track_caller]
pub fn smooth_labels(labels: &Array, alpha: f64) -> Array {
    let classes = *labels
        .shape()
        .last()
        .expect("smooth_labels: labels need a class axis") as f64;
    labels * (1.0 - alpha) + alpha / classes
}

/// The sigmoid focal loss (`optax.sigmoid_focal_loss`; optax's defaults `alpha = None`,
/// `gamma = 2`): binary cross-entropy weighted by `(1 - p_t)^gamma`, so confident correct
/// predictions count for little, and by `alpha` for the positives when given.
#[track_caller]
pub fn sigmoid_focal_loss(logits: &Array, labels: &Array, alpha: Option<f64>, gamma: f64) -> Array {
    let labels = labels.astype(logits.dtype());
    let ce = crate::nn::binary_cross_entropy(logits, &labels);
    let log_p = logits.log_sigmoid();
    let log_q = (-logits).log_sigmoid();
    // logsumexp([log_p, log_q], b=[1 - labels, labels]) as jax.scipy.special.logsumexp.
    let m = log_p.maximum(&log_q);
    let m = where_(m.isfinite(), &m, 0.0);
    let s: Array = (1.0 - &labels) * (&log_p - &m).exp() + &labels * (&log_q - &m).exp();
    let log_one_minus_p_t = s.abs().log() + &m;
    let loss = ce * (log_one_minus_p_t * gamma).exp();
    match alpha {
        None => loss,
        Some(a) => (&labels * a + (1.0 - &labels) * (1.0 - a)) * loss,
    }
}

/// The cross-entropy of `softmax(logits)` against dense `labels` (probabilities) over the
/// last axis (`optax.softmax_cross_entropy`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let logits = Array::from_vec(vec![0.0f32, 0.0], &[1, 2]);
/// let labels = Array::from_vec(vec![0.5f32, 0.5], &[1, 2]);
/// let l = jaxrs::optim::softmax_cross_entropy(&logits, &labels).to_vec::<f32>();
/// assert!((l[0] - 2f32.ln()).abs() < 1e-6);
/// ```
#[track_caller]
pub fn softmax_cross_entropy(logits: &Array, labels: &Array) -> Array {
    -(labels * logits.log_softmax(-1)).sum(-1i64, false)
}

/// [`softmax_cross_entropy`] that stays finite (value and gradient) where a logit is
/// `-inf` and its label 0 (`optax.safe_softmax_cross_entropy`).
#[track_caller]
pub fn safe_softmax_cross_entropy(logits: &Array, labels: &Array) -> Array {
    let logsm = logits.log_softmax(-1);
    let weighted = where_(labels.ne(0.0), labels * &logsm, Array::zeros_like(&logsm));
    -weighted.sum(-1i64, false)
}

/// The NT-Xent contrastive loss (`optax.ntxent`; optax's default `temperature = 0.07`):
/// `embeddings` `[n, d]`, integer `labels` `[n]`, rows with equal labels are positives.
/// A scalar.
#[track_caller]
pub fn ntxent(embeddings: &Array, labels: &Array, temperature: f64) -> Array {
    let n = embeddings.shape()[0];
    assert_eq!(
        labels.shape()[0],
        n,
        "ntxent: labels and embeddings must have the same leading dimension"
    );
    let eps = f32::EPSILON as f64;
    let xcs = cosine_similarity(&embeddings.expand_dims(0), &embeddings.expand_dims(1), eps)
        / temperature;
    let same = labels.expand_dims(1).eq(labels.expand_dims(0));
    let diffs = same.logical_not();
    let eye = Array::iota(DType::I32, &[n, n], 0).eq(Array::iota(DType::I32, &[n, n], 1));
    let matches = same.logical_and(eye.logical_not());
    let neg_inf = f64::NEG_INFINITY;
    let xcs_diffs = where_(&diffs, &xcs, neg_inf);
    let xcs_matches = where_(&matches, &xcs, neg_inf);
    let comb = Array::concatenate(&[xcs_diffs.clone(), xcs_matches.clone()], -1);
    let xcs_max = crate::stop_gradient(&comb.max(1i64, true));
    let shift_diffs = &xcs_diffs - &xcs_max;
    let shift_matches = &xcs_matches - &xcs_max;
    let denom = shift_diffs.exp().sum(1i64, true) + shift_matches.exp();
    let log_softm = &shift_matches - denom.log();
    let total = where_(&matches, &log_softm, 0.0).sum(None, false);
    -total
        / matches
            .astype(DType::I32)
            .sum(None, false)
            .astype(DType::F32)
}

/// The Connectionist Temporal Classification loss per sequence (`optax.ctc_loss`):
/// `logits` `[batch, frames, classes]`, `logit_paddings` `[batch, frames]` (1 at padding),
/// integer `labels` `[batch, max_labels]` and `label_paddings` `[batch, max_labels]`;
/// `blank_id` is the blank class (optax's default 0), `log_epsilon` the log of zero
/// (optax's default `-1e5`). The recursion over frames is unrolled in the trace.
#[track_caller]
pub fn ctc_loss(
    logits: &Array,
    logit_paddings: &Array,
    labels: &Array,
    label_paddings: &Array,
    blank_id: usize,
    log_epsilon: f64,
) -> Array {
    ctc_loss_with_forward_probs(
        logits,
        logit_paddings,
        labels,
        label_paddings,
        blank_id,
        log_epsilon,
    )
    .0
}

fn columns(a: &Array, start: usize, end: usize) -> Array {
    let b = a.shape()[0];
    a.slice(&[0, start], &[b, end], &[1, 1])
}

/// [`ctc_loss`] with the forward variables (`optax.ctc_loss_with_forward_probs`): the loss
/// `[batch]`, the log-probabilities of the blank states `[frames, batch, max_labels + 1]`
/// and of the emitting states `[frames, batch, max_labels]`.
#[track_caller]
pub fn ctc_loss_with_forward_probs(
    logits: &Array,
    logit_paddings: &Array,
    labels: &Array,
    label_paddings: &Array,
    blank_id: usize,
    log_epsilon: f64,
) -> (Array, Array, Array) {
    let (b, t, k) = match logits.shape() {
        [b, t, k] => (*b, *t, *k),
        s => panic!("ctc_loss: logits must be [batch, frames, classes], got {s:?}"),
    };
    let n = labels.shape()[1];
    assert_eq!(
        labels.shape()[0],
        b,
        "ctc_loss: expected labels of batch size {b}, got {}",
        labels.shape()[0]
    );
    let logprobs = logits.log_softmax(-1);
    let labellens = (n as i32) - label_paddings.sum(1i64, false).astype(DType::I32);
    let repeat = columns(labels, 0, n - 1)
        .eq(columns(labels, 1, n))
        .astype(DType::F32);
    let repeat = Array::concatenate(&[repeat, Array::zeros(&[b, 1], DType::F32)], 1);
    let labels_i = labels.astype(DType::I32);
    let emit = logprobs.take_along_axis(&labels_i.expand_dims(1).broadcast_to(&[b, t, n]), 2);
    let phi_all = logprobs.slice(&[0, 0, blank_id], &[b, t, blank_id + 1], &[1, 1, 1]);
    let update_phi = |phi: &Array, added: &Array| {
        let cols = phi.shape()[1];
        Array::concatenate(
            &[columns(phi, 0, 1), columns(phi, 1, cols).logaddexp(added)],
            -1,
        )
    };
    let mut phi = Array::full(&[b, n + 1], log_epsilon, DType::F32);
    phi = Array::concatenate(
        &[Array::zeros(&[b, 1], DType::F32), columns(&phi, 1, n + 1)],
        1,
    );
    let mut prev_emit = Array::full(&[b, n], log_epsilon, DType::F32);
    let (mut phis, mut emits) = (vec![], vec![]);
    for step in 0..t {
        let lp_emit = emit
            .slice(&[0, step, 0], &[b, step + 1, n], &[1, 1, 1])
            .reshape([b, n]);
        let lp_phi = phi_all
            .slice(&[0, step, 0], &[b, step + 1, 1], &[1, 1, 1])
            .reshape([b, 1]);
        let pad = logit_paddings
            .slice(&[0, step], &[b, step + 1], &[1, 1])
            .astype(DType::F32);
        let prev_phi_orig = phi.clone();
        let prev_phi = update_phi(&phi, &(&prev_emit + &repeat * log_epsilon));
        let next_emit = (columns(&prev_phi, 0, n) + &lp_emit).logaddexp(&prev_emit + &lp_emit);
        let next_phi = &prev_phi + &lp_phi;
        let next_phi = update_phi(
            &next_phi,
            &(&prev_emit + &lp_phi + (1.0 - &repeat) * log_epsilon),
        );
        let next_emit = &pad * &prev_emit + (1.0 - &pad) * next_emit;
        let next_phi = &pad * prev_phi_orig + (1.0 - &pad) * next_phi;
        phis.push(next_phi.clone());
        emits.push(next_emit.clone());
        phi = next_phi;
        prev_emit = next_emit;
    }
    let last = update_phi(&phis[t - 1], &emits[t - 1]);
    phis[t - 1] = last.clone();
    let _ = k;
    let per_seq = -last
        .take_along_axis(&labellens.expand_dims(1), 1)
        .reshape([b]);
    (per_seq, Array::stack(&phis, 0), Array::stack(&emits, 0))
}
