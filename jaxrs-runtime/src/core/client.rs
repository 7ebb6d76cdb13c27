//! The process-wide PJRT client, and how environmental failures travel.
//!
//! Array operations return arrays, not `Result`s (like arithmetic on numbers). When the
//! environment fails under one (no plugin, device out of memory, a compile failure), the
//! operation stops by panicking with the error's message, and [`try_run`] turns such a stop
//! back into a typed [`Error`] for the code that wants to handle it.

use crate::error::Error;
use crate::error::Result;
use crate::pjrt::{self, Client};
use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;

thread_local! {
    static PENDING_ERROR: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// The client every array lives on (the plugin from `JAXRS_PJRT_PLUGIN`, the cache, or
/// provisioned once).
pub fn client() -> Arc<Client> {
    pjrt::default_client().unwrap_or_else(|e| fail(e))
}

/// Stops the current operation because the environment failed; see [`try_run`].
#[track_caller]
pub fn fail(e: Error) -> ! {
    let msg = e.to_string();
    PENDING_ERROR.with(|p| *p.borrow_mut() = Some(e));
    panic!("jaxrs: {msg}");
}

/// Runs `f`, returning an environmental failure inside it (no plugin, out of memory, XLA
/// compile failure, a donated buffer read) as `Err` instead of a panic. Other panics
/// (programmer errors such as shape mismatches) go on unwinding.
///
/// ```
/// use jaxrs::prelude::*;
///
/// fn total(batch: &Array) -> jaxrs::Result<Option<f32>> {
///     match jaxrs::try_run(|| batch.sum(None, false).item::<f32>()) {
///         Ok(sum) => Ok(Some(sum)),
///         Err(jaxrs::Error::OutOfMemory { .. }) => Ok(None), // the caller tries a smaller batch
///         Err(e) => Err(e),
///     }
/// }
///
/// let batch = Array::ones(&[4, 2], DType::F32);
/// assert_eq!(total(&batch).unwrap(), Some(8.0));
/// ```
pub fn try_run<T>(f: impl FnOnce() -> T) -> Result<T> {
    PENDING_ERROR.with(|p| p.borrow_mut().take());
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Ok(v),
        Err(payload) => match PENDING_ERROR.with(|p| p.borrow_mut().take()) {
            Some(e) => Ok(Err(e)?),
            None => resume_unwind(payload),
        },
    }
}
