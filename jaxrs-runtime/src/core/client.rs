//! The process-wide PJRT client, and how environmental failures travel.
//!
//! Array operations return arrays, not `Result`s (like arithmetic on numbers). When the
//! environment fails under one (no plugin, device out of memory, a compile failure), the
//! operation stops by panicking with the error's message, and [`try_run`] turns such a stop
//! back into a typed [`Error`] for the code that wants to handle it.

use crate::error::Error;
use crate::error::Result;
use crate::pjrt::{self, Client};
use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// An environmental failure on its way from [`fail`] to [`try_run`], with the message it
/// panics with: a pending error is the cause of a panic only if the panic's message is this
/// one. (One caught elsewhere, by the user's own `catch_unwind`, stays here until the next
/// [`fail`] or [`try_run`], and must not turn a later programmer error into an `Err`.)
struct Pending {
    error: Error,
    message: String,
}

thread_local! {
    static PENDING_ERROR: RefCell<Option<Pending>> = const { RefCell::new(None) };
}

/// The panic message of `payload`, if it is text.
fn payload_text(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
}

/// Takes the pending error if `payload` is the panic that [`fail`] raised for it.
fn take_pending_for(payload: &(dyn Any + Send)) -> Option<Error> {
    let pending = PENDING_ERROR.with(|p| p.borrow_mut().take())?;
    (payload_text(payload) == Some(pending.message.as_str())).then_some(pending.error)
}

/// The client every array lives on (the plugin from `JAXRS_PJRT_PLUGIN`, the cache, or
/// provisioned once).
pub fn client() -> Arc<Client> {
    pjrt::default_client().unwrap_or_else(|e| fail(e))
}

/// Stops the current operation because the environment failed; see [`try_run`].
#[track_caller]
pub fn fail(e: Error) -> ! {
    let message = format!("jaxrs: {e}");
    PENDING_ERROR.with(|p| {
        *p.borrow_mut() = Some(Pending {
            error: e,
            message: message.clone(),
        })
    });
    panic!("{message}");
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
        Err(payload) => match take_pending_for(&*payload) {
            Some(e) => Err(e),
            None => resume_unwind(payload),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn environmental() -> Error {
        Error::Pjrt {
            code: ErrorCode::Internal,
            context: "test",
            message: "the device went away".into(),
        }
    }

    #[test]
    fn an_environmental_failure_becomes_err() {
        let got = try_run(|| -> () { fail(environmental()) });
        assert!(matches!(
            got,
            Err(Error::Pjrt {
                code: ErrorCode::Internal,
                ..
            })
        ));
    }

    #[test]
    fn a_failure_caught_inside_does_not_turn_a_later_panic_into_err() {
        let outcome = catch_unwind(|| {
            try_run(|| {
                let _ = catch_unwind(|| fail(environmental()));
                panic!("a programmer error");
            })
        });
        let payload = outcome.expect_err("the programmer error unwinds through try_run");
        assert_eq!(payload_text(&*payload), Some("a programmer error"));
    }
}
