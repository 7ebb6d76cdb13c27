//! The process-wide PJRT client, and how environmental failures travel.
//!
//! Array operations return arrays, not `Result`s (like arithmetic on numbers). When the
//! environment fails under one (no plugin, device out of memory, a compile failure), the
//! operation stops by panicking with the error's message, and [`try_run`] turns such a stop
//! back into a typed [`Error`] for the code that wants to handle it.

use crate::error::Error;
use crate::error::Result;
use crate::pjrt::{self, Client, Device};
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

/// The devices of this process, in the plugin's order (like `jax.devices()`). Creates the
/// client if it does not exist yet, which fixes the CPU device count.
///
/// ```
/// jaxrs::set_cpu_device_count(4).unwrap();
/// let devices = jaxrs::devices();
/// assert_eq!(devices.len(), 4);
/// assert_eq!(format!("{devices:?}"), "[CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), CpuDevice(id=3)]");
/// ```
pub fn devices() -> Vec<Device> {
    client().devices().to_vec()
}

/// How many devices this process drives (like `jax.local_device_count()`).
///
/// ```
/// // Without `set_cpu_device_count` or `JAXRS_CPU_DEVICES`, the CPU plugin gives one device.
/// assert!(jaxrs::local_device_count() >= 1);
/// assert_eq!(jaxrs::local_device_count(), jaxrs::devices().len());
/// ```
pub fn local_device_count() -> usize {
    client().devices().len()
}

/// Chooses how many CPU devices the process-wide client exposes (the CPU plugin's
/// `cpu_device_count`), like `XLA_FLAGS=--xla_force_host_platform_device_count=N` in JAX.
///
/// Call it before the first array operation: the count is fixed when the client is created.
/// Asking again for the same count is fine (so every test of a binary can ask); asking for
/// another count once the client exists is [`Error::DeviceCountFixed`], which names both.
/// When both this call and the `JAXRS_CPU_DEVICES` variable are given, the call wins: the
/// variable is the default for programs that do not ask. A count of 0 is an error. On a
/// non-CPU plugin the count is ignored (it has the devices it has).
///
/// ```
/// jaxrs::set_cpu_device_count(8)?;
/// jaxrs::set_cpu_device_count(8)?; // the same count again: fine
/// assert_eq!(jaxrs::local_device_count(), 8);
/// match jaxrs::set_cpu_device_count(2) {
///     Err(jaxrs::Error::DeviceCountFixed { requested: 2, existing: 8 }) => {}
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn set_cpu_device_count(n: usize) -> Result<()> {
    pjrt::set_default_cpu_device_count(n)
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
