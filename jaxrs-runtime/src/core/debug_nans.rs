//! JAX's `jax_debug_nans`: with it on, every eager operation checks its floating outputs for
//! NaN and stops at the first that made one, naming the primitive and the user's line; a
//! jitted call whose results hold a NaN is re-run op by op (eagerly) to find that operation.
//!
//! Off by default. It is read once from `JAXRS_DEBUG_NANS` (`1`/`true`), and
//! [`set_debug_nans`] overrides it; while off, the cost is one relaxed atomic load per eager
//! operation and per jitted call.

use crate::core::array::Array;
use crate::core::client::fail;
use crate::core::trace::At;
use crate::error::Error;
use std::panic::Location;
use std::sync::atomic::{AtomicU8, Ordering};

const UNREAD: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(UNREAD);

/// Turns the NaN checker on or off for the whole process (JAX's
/// `jax.config.update("jax_debug_nans", True)`); it starts as `JAXRS_DEBUG_NANS` says.
///
/// With it on, an operation that produces a NaN stops the program (a panic, or an
/// [`Error::FloatingPoint`] through [`crate::try_run`]) naming the primitive and the line
/// that called it; a jitted function whose result holds a NaN is re-run op by op to find it.
///
/// ```
/// use jaxrs::prelude::*;
///
/// jaxrs::config::set_debug_nans(true);
/// let err = jaxrs::try_run(|| Array::from_vec(vec![-1.0f32], &[1]).log()).unwrap_err();
/// jaxrs::config::set_debug_nans(false);
/// assert!(err.to_string().contains("invalid value (nan) encountered in log"), "{err}");
/// ```
pub fn set_debug_nans(on: bool) {
    STATE.store(if on { ON } else { OFF }, Ordering::Relaxed);
}

/// Whether the NaN checker is on (see [`set_debug_nans`]).
///
/// ```
/// jaxrs::config::set_debug_nans(false);
/// assert!(!jaxrs::config::debug_nans());
/// ```
pub fn debug_nans() -> bool {
    enabled()
}

#[inline]
pub(crate) fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => read_env(),
    }
}

#[cold]
fn read_env() -> bool {
    let on = std::env::var("JAXRS_DEBUG_NANS")
        .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "True" | "TRUE" | "yes"));
    // A concurrent `set_debug_nans` wins over the variable.
    let _ = STATE.compare_exchange(
        UNREAD,
        if on { ON } else { OFF },
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    STATE.load(Ordering::Relaxed) == ON
}

/// Does any floating output hold a NaN? (Reads the values: only called with the checker on.)
pub(crate) fn any_nan(outs: &[Array]) -> bool {
    outs.iter()
        .any(|a| a.is_concrete() && a.dtype().is_float() && a.has_nan())
}

/// Stops with [`Error::FloatingPoint`] if the eager operation `op` at `loc` made a NaN.
pub(crate) fn check_op(op: &str, outs: &[Array], loc: &Location<'_>) {
    if any_nan(outs) {
        fail(Error::FloatingPoint(format!(
            "invalid value (nan) encountered in {op} {}",
            At::line(loc)
        )));
    }
}
