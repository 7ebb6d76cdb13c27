//! Work the plugin still runs for us, awaited when the process exits.
//!
//! A process may end (`main` returns, `std::process::exit`) while programs it launched still
//! run on the plugin's threads. `exit` then runs the C++ static destructors the plugin
//! registered, under those threads, which can die with SIGSEGV. So every launch leaves its
//! completion events here, and a C `atexit` handler awaits them all before those destructors
//! run. `exit` runs handlers last-registered first, and the plugin registers the destructor of
//! a function-local static when it first uses it (compiling a program is the usual first
//! use), so the handler is registered again after each compile (up to a bound): registering
//! it once, at the first launch, still let 6 of 72 test processes crash.
//!
//! The cost per launch is a lock and a push; events already fulfilled are dropped in batches
//! when the list has doubled since the last sweep, so a steady stream of launches keeps it
//! short.

use super::api::Api;
use super::sys;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// The sweep threshold never drops below this many events.
const MIN_SWEEP_AT: usize = 32;

/// At most this many registrations of the exit handler: statics first used after so many
/// compiles are rare, and each registration is an entry the C library keeps until exit.
const MAX_REGISTRATIONS: usize = 256;

/// How long the exit handler waits for programs still running in all. A program that never
/// finishes (a collective whose peer process died) must not keep the process from ending;
/// past this the rest is left running, as before this wait existed.
const EXIT_WAIT: Duration = Duration::from_secs(30);

/// A plugin's events not yet known to be fulfilled.
pub(crate) struct InFlight {
    pending: Mutex<Pending>,
}

struct Pending {
    events: Vec<Event>,
    sweep_at: usize,
}

/// An owned `PJRT_Event`, destroyed by whoever takes it out of `Pending`.
struct Event(*mut sys::PJRT_Event);

// SAFETY: PJRT events may be queried, awaited and destroyed from any thread (the C API's
// contract); each is owned by the list alone.
unsafe impl Send for Event {}

impl InFlight {
    pub(crate) const fn new() -> InFlight {
        InFlight {
            pending: Mutex::new(Pending {
                events: Vec::new(),
                sweep_at: MIN_SWEEP_AT,
            }),
        }
    }
}

// `int atexit(void (*)(void))` of the C library, which every Rust target with `std` links.
extern "C" {
    fn atexit(handler: extern "C" fn()) -> std::os::raw::c_int;
}

static REGISTER_EXIT_HANDLER: Once = Once::new();

static REGISTRATIONS: AtomicUsize = AtomicUsize::new(0);

/// Registers the exit handler (again): `exit` runs it before everything registered earlier,
/// so each registration moves it before the destructors the plugin registered since. Runs of
/// the handler after the first find nothing left to wait for and do not call the plugin.
pub(crate) fn register_exit_handler() {
    if REGISTRATIONS.fetch_add(1, Ordering::Relaxed) >= MAX_REGISTRATIONS {
        return;
    }
    // SAFETY: registering a handler that never unwinds; a failure (the C library out of
    // memory) only leaves the process as unprotected as without it.
    if unsafe { atexit(await_in_flight_at_exit) } != 0 {
        log::warn!("could not register jaxrs's exit handler (atexit failed)");
    }
}

extern "C" fn await_in_flight_at_exit() {
    // A panic must not unwind out of an `extern "C"` function: catch it and go on exiting.
    let _ = std::panic::catch_unwind(|| {
        let deadline = Instant::now() + EXIT_WAIT;
        for api in Api::loaded() {
            api.await_in_flight(deadline);
        }
    });
}

impl Api {
    /// Takes ownership of the completion events of work just launched (null entries are
    /// skipped), to be awaited at exit if they are still pending then.
    pub(crate) fn track_in_flight(&self, events: &[*mut sys::PJRT_Event]) {
        REGISTER_EXIT_HANDLER.call_once(register_exit_handler);
        let mut pending = self
            .in_flight
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        pending
            .events
            .extend(events.iter().filter(|e| !e.is_null()).map(|&e| Event(e)));
        if pending.events.len() >= pending.sweep_at {
            pending.events.retain(|e| {
                let ready = self.event_is_ready(e.0);
                if ready {
                    self.destroy_event(e.0);
                }
                !ready
            });
            // Sweeping again only once the list doubled keeps the cost per launch constant
            // even while many programs stay pending.
            pending.sweep_at = (2 * pending.events.len()).max(MIN_SWEEP_AT);
        }
    }

    /// Waits (until `deadline`) for the tracked events, and destroys those that fired.
    fn await_in_flight(&self, deadline: Instant) {
        let mut pending = self
            .in_flight
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut events = std::mem::take(&mut pending.events);
        pending.sweep_at = MIN_SWEEP_AT;
        // Polled rather than `PJRT_Event_Await`ed, so that the wait is bounded.
        let mut pause = Duration::from_micros(50);
        while !events.is_empty() {
            events.retain(|e| {
                let ready = self.event_is_ready(e.0);
                if ready {
                    self.destroy_event(e.0);
                }
                !ready
            });
            if events.is_empty() || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
        // Events still pending past the deadline are left undestroyed: the process ends
        // under them either way.
    }

    /// `PJRT_Event_IsReady`; an event the plugin cannot answer for counts as ready, so that
    /// it is dropped rather than kept or waited for forever.
    fn event_is_ready(&self, event: *mut sys::PJRT_Event) -> bool {
        let mut a = sys::PJRT_Event_IsReady_Args {
            struct_size: sys::PJRT_Event_IsReady_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            event,
            is_ready: false,
        };
        // SAFETY: `event` is a live event the list owns.
        let err = unsafe { (self.f.event_is_ready)(&mut a) };
        match self.check(err, "PJRT_Event_IsReady") {
            Ok(()) => a.is_ready,
            Err(_) => true,
        }
    }
}
