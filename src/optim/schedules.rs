//! optax's other schedules: polynomial, piecewise, the warmups, SGDR and the one-cycle
//! policies. Each is a [`Schedule`] of the step count, computed as optax computes it.

use super::{
    cosine_decay_schedule, exponential_decay, f32_scalar, join_schedules, linear_schedule, Schedule,
};
use crate::{Array, DType};

/// `init_value` going to `end_value` as `(1 - t)^power` over `transition_steps` steps that
/// start at `transition_begin`, then constant (`optax.polynomial_schedule`).
///
/// ```
/// let s = jaxrs::optim::polynomial_schedule(1.0, 0.0, 2.0, 10, 0);
/// assert!((s.value(5) - 0.25).abs() < 1e-7);
/// ```
pub fn polynomial_schedule(
    init_value: f64,
    end_value: f64,
    power: f64,
    transition_steps: i32,
    transition_begin: i32,
) -> Schedule {
    if transition_steps <= 0 {
        return super::constant_schedule(init_value);
    }
    let begin = transition_begin.max(0);
    Schedule::new(move |count| {
        let count = (count - begin).clip(0, transition_steps);
        let frac: Array = 1 - count / transition_steps;
        frac.pow(power) * (init_value - end_value) + end_value
    })
}

/// `init_value` multiplied by `scale` at each `(boundary, scale)` once the step reaches the
/// boundary (`optax.piecewise_constant_schedule`), the classic step decay.
///
/// ```
/// let s = jaxrs::optim::piecewise_constant_schedule(0.1, &[(3, 0.5), (8, 0.1)]);
/// assert_eq!((s.value(2), s.value(3)), (0.1, 0.05));
/// assert!((s.value(8) - 0.005).abs() < 1e-9);
/// ```
#[track_caller]
pub fn piecewise_constant_schedule(
    init_value: f64,
    boundaries_and_scales: &[(i32, f64)],
) -> Schedule {
    assert!(
        boundaries_and_scales.iter().all(|(_, s)| *s >= 0.0),
        "piecewise_constant_schedule expects non-negative scale factors"
    );
    let mut pairs = boundaries_and_scales.to_vec();
    pairs.sort_by_key(|(b, _)| *b);
    Schedule::new(move |count| {
        let mut v = f32_scalar(init_value);
        for &(threshold, scale) in &pairs {
            let indicator = (threshold - count).sign().astype(DType::F32).maximum(0.0);
            v = &v * &indicator + (1.0 - &indicator) * scale * &v;
        }
        v
    })
}

/// How [`piecewise_interpolate_schedule`] goes between boundaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolate {
    /// A straight line.
    Linear,
    /// Half a cosine, flat at both ends.
    Cosine,
}

/// `init_value` scaled by the product of the scales of the boundaries passed, interpolated
/// (linearly or by a half cosine) between boundaries (`optax.piecewise_interpolate_schedule`).
///
/// ```
/// use jaxrs::optim::{piecewise_interpolate_schedule, Interpolate};
///
/// let s = piecewise_interpolate_schedule(Interpolate::Linear, 1.0, &[(4, 0.5)]);
/// assert!((s.value(2) - 0.75).abs() < 1e-7);
/// ```
#[track_caller]
pub fn piecewise_interpolate_schedule(
    interpolate_type: Interpolate,
    init_value: f64,
    boundaries_and_scales: &[(i32, f64)],
) -> Schedule {
    assert!(
        boundaries_and_scales.iter().all(|(_, s)| *s >= 0.0),
        "piecewise_interpolate_schedule expects non-negative scale factors"
    );
    let mut pairs = boundaries_and_scales.to_vec();
    pairs.sort_by_key(|(b, _)| *b);
    let mut bounds = vec![0i32];
    bounds.extend(pairs.iter().map(|(b, _)| *b));
    let mut values = vec![init_value as f32];
    for (_, s) in &pairs {
        // optax takes the cumulative product in float32.
        let last = *values.last().unwrap();
        values.push(last * *s as f32);
    }
    Schedule::new(move |count| {
        let n = bounds.len() - 1;
        let b = Array::from_vec(bounds.clone(), &[bounds.len()]);
        let vals = Array::from_vec(values.clone(), &[values.len()]);
        let (lo, hi) = (b.slice(&[0], &[n], &[1]), b.slice(&[1], &[n + 1], &[1]));
        let (start, end) = (
            vals.slice(&[0], &[n], &[1]),
            vals.slice(&[1], &[n + 1], &[1]),
        );
        let sizes = (&hi - &lo).maximum(1);
        let indicator = lo.le(count).logical_and(count.lt(&hi));
        let pct = (count - &lo).astype(DType::F32) / sizes.astype(DType::F32);
        let interp = match interpolate_type {
            Interpolate::Linear => (&end - &start) * &pct + &start,
            Interpolate::Cosine => {
                &end + (&start - &end) / 2.0 * ((&pct * std::f64::consts::PI).cos() + 1.0)
            }
        };
        let inside = (indicator.astype(DType::F32) * interp).sum(None, false);
        let last = vals.slice(&[n], &[n + 1], &[1]).reshape([0usize; 0]);
        let after = b.slice(&[n], &[n + 1], &[1]).reshape([0usize; 0]).le(count);
        inside + after.astype(DType::F32) * last
    })
}

/// Linear warmup from `init_value` to `peak_value` over `warmup_steps`, then constant
/// (`optax.warmup_constant_schedule`).
pub fn warmup_constant_schedule(init_value: f64, peak_value: f64, warmup_steps: i32) -> Schedule {
    linear_schedule(init_value, peak_value, warmup_steps, 0)
}

/// Linear warmup to `peak_value`, then [`exponential_decay`] from it
/// (`optax.warmup_exponential_decay_schedule`).
#[allow(clippy::too_many_arguments)]
pub fn warmup_exponential_decay_schedule(
    init_value: f64,
    peak_value: f64,
    warmup_steps: i32,
    transition_steps: i32,
    decay_rate: f64,
    transition_begin: i32,
    staircase: bool,
    end_value: Option<f64>,
) -> Schedule {
    join_schedules(
        vec![
            linear_schedule(init_value, peak_value, warmup_steps, 0),
            exponential_decay(
                peak_value,
                transition_steps,
                decay_rate,
                transition_begin,
                staircase,
                end_value,
            ),
        ],
        vec![warmup_steps],
    )
}

/// [`warmup_cosine_decay_schedule`](super::warmup_cosine_decay_schedule) with the cosine
/// raised to `exponent` (optax's `exponent` argument; 1 is the plain schedule).
pub fn warmup_cosine_decay_schedule_with_exponent(
    init_value: f64,
    peak_value: f64,
    warmup_steps: i32,
    decay_steps: i32,
    end_value: f64,
    exponent: f64,
) -> Schedule {
    let alpha = if peak_value == 0.0 {
        0.0
    } else {
        end_value / peak_value
    };
    join_schedules(
        vec![
            linear_schedule(init_value, peak_value, warmup_steps, 0),
            cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent),
        ],
        vec![warmup_steps],
    )
}

/// One cycle of [`sgdr_schedule`]: the arguments of
/// [`warmup_cosine_decay_schedule`](super::warmup_cosine_decay_schedule).
#[derive(Clone, Copy, Debug)]
pub struct CosineCycle {
    /// The value at the cycle's start.
    pub init_value: f64,
    /// The value at the end of the warmup.
    pub peak_value: f64,
    /// The warmup's length.
    pub warmup_steps: i32,
    /// The cycle's length, warmup included.
    pub decay_steps: i32,
    /// The value at the cycle's end.
    pub end_value: f64,
}

/// SGDR, warm restarts (`optax.sgdr_schedule`): warmup-cosine cycles one after the other.
pub fn sgdr_schedule(cycles: &[CosineCycle]) -> Schedule {
    let mut boundaries = vec![];
    let mut schedules = vec![];
    let mut step = 0;
    for c in cycles {
        schedules.push(warmup_cosine_decay_schedule_with_exponent(
            c.init_value,
            c.peak_value,
            c.warmup_steps,
            c.decay_steps,
            c.end_value,
            1.0,
        ));
        step += c.decay_steps;
        boundaries.push(step);
    }
    boundaries.pop();
    join_schedules(schedules, boundaries)
}

/// The one-cycle policy with linear pieces (`optax.linear_onecycle_schedule`; optax's
/// defaults `pct_start = 0.3`, `pct_final = 0.85`, `div_factor = 25`,
/// `final_div_factor = 1e4`): up from `peak_value / div_factor` to the peak, back down,
/// then to `1 / final_div_factor` of the start.
#[track_caller]
pub fn linear_onecycle_schedule(
    transition_steps: i32,
    peak_value: f64,
    pct_start: f64,
    pct_final: f64,
    div_factor: f64,
    final_div_factor: f64,
) -> Schedule {
    assert!(
        transition_steps > 0,
        "linear_onecycle_schedule: transition_steps must be positive"
    );
    piecewise_interpolate_schedule(
        Interpolate::Linear,
        peak_value / div_factor,
        &[
            ((pct_start * transition_steps as f64) as i32, div_factor),
            (
                (pct_final * transition_steps as f64) as i32,
                1.0 / div_factor,
            ),
            (transition_steps, 1.0 / final_div_factor),
        ],
    )
}

/// The one-cycle policy with cosine pieces (`optax.cosine_onecycle_schedule`; optax's
/// defaults `pct_start = 0.3`, `div_factor = 25`, `final_div_factor = 1e4`).
#[track_caller]
pub fn cosine_onecycle_schedule(
    transition_steps: i32,
    peak_value: f64,
    pct_start: f64,
    div_factor: f64,
    final_div_factor: f64,
) -> Schedule {
    assert!(
        transition_steps > 0,
        "cosine_onecycle_schedule: transition_steps must be positive"
    );
    piecewise_interpolate_schedule(
        Interpolate::Cosine,
        peak_value / div_factor,
        &[
            ((pct_start * transition_steps as f64) as i32, div_factor),
            (transition_steps, 1.0 / (div_factor * final_div_factor)),
        ],
    )
}
