//! The process-wide PJRT client, and how environmental failures travel.
//!
//! Array operations return arrays, not `Result`s (like arithmetic on numbers). When the
//! environment fails under one (no plugin, device out of memory, a compile failure), the
//! operation stops by panicking with the error's message, and [`try_run`] turns such a stop
//! back into a typed [`Error`] for the code that wants to handle it.

use crate::error::Error;
use crate::error::Result;
use crate::pjrt::{self, Client, Device};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe, PanicHookInfo};
use std::sync::{Arc, Once};

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
    /// The devices [`default_device`] scopes put in place, innermost last.
    static DEFAULT_DEVICES: RefCell<Vec<Device>> = const { RefCell::new(Vec::new()) };
    /// How many [`try_run`]s are running on this thread (they nest).
    static TRY_RUN_DEPTH: Cell<usize> = const { Cell::new(0) };
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

/// Whether programs for this process's client are lowered for XLA's CPU backend
/// ([`crate::core::lower::LowerOptions::for_cpu`]): true on the CPU plugin. The FFT then runs
/// as a host kernel (`crate::kernels`, 2^20 points in less than half XLA's time), and dots
/// take the forms below.
///
/// For the dots: the plugin's XLA (jaxlib 0.11.2) sends dots to YNNPACK only in the type combinations
/// `IsDotSupportedByYnn` lists (f32 x f32 -> f32, bf16 x bf16 -> f32, s8 x s8 -> s32, ...) and
/// with at least two rows; any other dot is XLA's own code, which for bf16 or int8 first writes
/// an f32 / s32 copy of both operands on every call. So a bf16 x bf16 -> bf16 product is
/// lowered as bf16 x bf16 -> f32 rounded once (f32 accumulation, jaxlib's numbers), and a
/// one-row bf16 or int8 product as a two-row one. Upcasting the operands in the program (what
/// jaxrs did before, and what jaxlib 0.10.2's XLA does) was 1.4-9x slower than f32 at
/// `[m, 768] x [768, 3072]`; the YNNPACK forms are 2-4x faster than f32 for m >= 8
/// (benches/matmul_dtypes.rs). Starts the client, as compiling does anyway.
pub fn for_cpu() -> bool {
    static ON_CPU: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON_CPU.get_or_init(|| client().platform_name() == "cpu")
}

/// Whether programs for this process's client run few-row bf16 products as the host kernel
/// `jaxrs_bf16_rows` ([`crate::core::lower::LowerOptions::bf16_rows_kernel`]): on the CPU
/// plugin, where the CPU has AVX512-BF16 and no AMX. There YNNPACK's bf16 products of a decode
/// step (1-8 rows) took longer than float32's, since they pack the weight on every call; the
/// kernel reads the weight once (`crate::kernels::bf16_rows` has the figures).
pub fn bf16_rows_kernel() -> bool {
    for_cpu() && crate::kernels::bf16_rows::runs_here()
}

/// Makes `device` the default device until the guard drops, as JAX's `jax.default_device`
/// does: arrays made from host data go there, and an operation (an eager one, or a call of a
/// single-device `jit`) whose arrays do not all lie whole on one device runs there. An
/// operation whose arrays all lie on one device runs on that device, inside the scope or out
/// of it (JAX's "committed" arrays; jaxrs treats every array as committed to where it lies,
/// so an array made inside the scope stays on `device` afterwards, where JAX would move an
/// uncommitted one back to the default). Scopes nest; a guard belongs to its thread. Outside
/// every scope the default device is the first of [`local_devices`].
///
/// ```
/// use jaxrs::prelude::*;
///
/// jaxrs::set_cpu_device_count(4)?;
/// let third = jaxrs::local_devices()[2];
/// let x = {
///     let _on_third = jaxrs::default_device(third);
///     Array::from_vec(vec![1.0f32, 2.0], &[2])
/// };
/// assert_eq!(x.sharding(), Some(&jaxrs::Sharding::SingleDevice(third)));
/// // An operation on arrays of one device runs there, and so does a jitted call.
/// let y = &x * 2.0;
/// assert_eq!(y.sharding(), Some(&jaxrs::Sharding::SingleDevice(third)));
/// let z: Array = jit(|v: Array| v + 1.0).call(y);
/// assert_eq!(z.sharding(), Some(&jaxrs::Sharding::SingleDevice(third)));
/// assert_eq!(z.to_vec::<f32>(), vec![3.0, 5.0]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn default_device(device: Device) -> DefaultDeviceGuard {
    DEFAULT_DEVICES.with(|d| d.borrow_mut().push(device));
    DefaultDeviceGuard {
        _not_send: std::marker::PhantomData,
    }
}

/// Ends a [`default_device`] scope when dropped.
#[must_use = "the default device is reset when the guard drops"]
pub struct DefaultDeviceGuard {
    /// A scope belongs to the thread that opened it.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for DefaultDeviceGuard {
    fn drop(&mut self) {
        DEFAULT_DEVICES.with(|d| d.borrow_mut().pop());
    }
}

/// The device arrays made from host data go to, and operations not tied to one device run
/// on: the innermost [`default_device`] scope's, else the first local device.
pub fn current_default_device() -> Device {
    DEFAULT_DEVICES
        .with(|d| d.borrow().last().copied())
        .unwrap_or_else(|| client().devices()[0])
}

/// Where an operation on `arrays` runs: the one device they all lie whole on, else the
/// default device ([`current_default_device`]).
pub(crate) fn target_device<'a>(
    arrays: impl IntoIterator<Item = &'a crate::core::array::Array>,
) -> Device {
    let mut found: Option<Device> = None;
    for a in arrays {
        match a.sharding() {
            Some(crate::core::sharding::Sharding::SingleDevice(d)) => match found {
                None => found = Some(*d),
                Some(f) if f.id() == d.id() => {}
                Some(_) => return current_default_device(),
            },
            _ => return current_default_device(),
        }
    }
    found.unwrap_or_else(current_default_device)
}

/// Every device of the run, in the plugin's order (like `jax.devices()`): in a
/// multi-process run ([`crate::distributed`]) the other processes' devices too, which this
/// process cannot put arrays on; in one process, the same as [`local_devices`]. Creates the
/// client if it does not exist yet, which fixes the CPU device count.
///
/// ```
/// jaxrs::set_cpu_device_count(4).unwrap();
/// let devices = jaxrs::devices();
/// assert_eq!(devices.len(), 4);
/// assert_eq!(format!("{devices:?}"), "[CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), CpuDevice(id=3)]");
/// assert_eq!(jaxrs::local_devices(), devices); // one process
/// ```
pub fn devices() -> Vec<Device> {
    client().global_devices().to_vec()
}

/// The devices this process drives, in the plugin's order (like `jax.local_devices()`): the
/// ones arrays of this process can live on.
pub fn local_devices() -> Vec<Device> {
    client().devices().to_vec()
}

/// How many devices this process drives (like `jax.local_device_count()`).
///
/// ```
/// // Without `set_cpu_device_count` or `JAXRS_CPU_DEVICES`, the CPU plugin gives one device.
/// assert!(jaxrs::local_device_count() >= 1);
/// assert_eq!(jaxrs::local_device_count(), jaxrs::local_devices().len());
/// ```
pub fn local_device_count() -> usize {
    client().devices().len()
}

/// How many devices the whole run has, over every process (like `jax.device_count()`).
pub fn device_count() -> usize {
    client().global_devices().len()
}

/// This process's index in a multi-process run, 0 in one process (like
/// `jax.process_index()`).
///
/// ```
/// assert_eq!(jaxrs::process_index(), 0);
/// assert_eq!(jaxrs::process_count(), 1);
/// ```
pub fn process_index() -> usize {
    usize::try_from(client().process_index()).unwrap_or(0)
}

/// How many processes the run has (like `jax.process_count()`): one more than the largest
/// process index of any device.
pub fn process_count() -> usize {
    client()
        .global_devices()
        .iter()
        .map(|d| usize::try_from(d.process_index()).unwrap_or(0) + 1)
        .max()
        .unwrap_or(1)
}

/// JAX's deprecated alias of [`process_count`] (`jax.host_count`), kept so that old code ports
/// with a deprecation warning instead of a missing name.
#[deprecated(note = "JAX's deprecated alias: use process_count")]
pub fn host_count() -> usize {
    process_count()
}

/// JAX's deprecated alias of [`process_index`] (`jax.host_id`).
#[deprecated(note = "JAX's deprecated alias: use process_index")]
pub fn host_id() -> usize {
    process_index()
}

/// JAX's deprecated alias of `process_indices` (`jax.host_ids`).
#[deprecated(note = "JAX's deprecated alias: use process_indices")]
pub fn host_ids() -> Vec<usize> {
    (0..process_count()).collect()
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
/// compile failure, a donated buffer read) as `Err` instead of a panic, and printing nothing
/// for it. Other panics (programmer errors such as shape mismatches) are printed by the panic
/// hook as usual and go on unwinding.
///
/// The first call puts a panic hook in front of the one in place (the default, or one the
/// program set before): it stays quiet for the failures a `try_run` on the panicking thread
/// returns, and hands every other panic to that previous hook. A hook the program sets later
/// replaces it, and then prints those failures too.
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
    install_quiet_hook();
    PENDING_ERROR.with(|p| p.borrow_mut().take());
    let running = Running::enter();
    let outcome = catch_unwind(AssertUnwindSafe(f));
    drop(running);
    match outcome {
        Ok(v) => Ok(v),
        Err(payload) => match take_pending_for(&*payload) {
            Some(e) => Err(e),
            None => resume_unwind(payload),
        },
    }
}

/// Counts one running [`try_run`] on this thread, until dropped.
struct Running;

impl Running {
    fn enter() -> Running {
        TRY_RUN_DEPTH.with(|d| d.set(d.get() + 1));
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = TRY_RUN_DEPTH.try_with(|d| d.set(d.get() - 1));
    }
}

/// Chains the quiet hook (see [`try_run`]) in front of the current one, once per process.
///
/// Installing is a `take_hook` then a `set_hook`, so a hook another thread sets between the
/// two would be lost; `Once` at least keeps jaxrs's own threads from racing each other. Not
/// from a panicking thread: `take_hook` would panic there (a `try_run` in a `Drop` during
/// unwinding); the next `try_run` installs it.
fn install_quiet_hook() {
    static INSTALLED: Once = Once::new();
    if INSTALLED.is_completed() || std::thread::panicking() {
        return;
    }
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            if !returned_by_try_run(info.payload()) {
                previous(info);
            }
        }));
    });
}

/// Is this panic an environmental failure that a [`try_run`] on this thread will return as
/// `Err`? The hook runs on the panicking thread, right after [`fail`] recorded the failure.
fn returned_by_try_run(payload: &(dyn Any + Send)) -> bool {
    let in_try_run = TRY_RUN_DEPTH.try_with(|d| d.get() > 0).unwrap_or(false);
    in_try_run
        && PENDING_ERROR
            .try_with(|p| {
                p.try_borrow().is_ok_and(|p| {
                    p.as_ref()
                        .is_some_and(|p| payload_text(payload) == Some(p.message.as_str()))
                })
            })
            .unwrap_or(false)
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
