//! The PJRT C API: raw declarations (`sys`) under safe owned handles.
//!
//! [`Api`] is a loaded plugin; a [`Client`] owns a `PJRT_Client` and its [`Device`]s; a
//! [`Buffer`] is an array on one device; a [`LoadedExecutable`] is a compiled program. Every
//! handle is `Send + Sync` and freed on drop, and every `PJRT_Error` is read and destroyed
//! (returned as a [`crate::error::Error`]). [`default_client`] is the process-wide client of the
//! plugin that [`provision::plugin_path`] finds.

mod api;
mod buffer;
mod client;
mod executable;
pub mod ffi;
mod hlo;
mod kv;
mod options;
pub mod provision;
pub mod sys;
mod util;

pub use api::{Api, LoadTimes};
pub use buffer::Buffer;
pub use client::{Client, Device};
pub use executable::{LoadedExecutable, MemoryStats};
pub use hlo::{entry_instructions, HloInstruction, OpSharding};
pub use kv::{key_text, KeyValueStore};
pub use options::CompileOptions;

use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The process-wide client of the default plugin, created on first use.
///
/// The plugin comes from [`provision::plugin_path`]. The number of CPU devices is, in order:
/// the count given to [`set_default_cpu_device_count`] before this first call, else
/// `JAXRS_CPU_DEVICES`, else 1; it is passed as the `cpu_device_count` create option (and
/// dropped if the plugin rejects it, as non-CPU plugins may). The call wins over the variable
/// because a program (a test binary, an example) that asks in code needs that count to be
/// correct, while the variable is a default for programs that do not ask. A failure is
/// remembered: every call returns (a copy of) the same error.
pub fn default_client() -> Result<Arc<Client>> {
    static DEFAULT: OnceLock<Result<Arc<Client>>> = OnceLock::new();
    match DEFAULT.get_or_init(create_default_client) {
        Ok(c) => Ok(c.clone()),
        Err(e) => Err(copy_error(e)),
    }
}

/// The CPU device count asked for from code, and the count the default client was created
/// with, under one lock so that a request cannot slip in between reading the request and
/// creating the client.
struct DeviceCount {
    requested: Option<usize>,
    created: Option<usize>,
    /// Has [`default_client`] run its creation (successful or not)?
    attempted: bool,
    /// The client [`create_default_client_for_processes`] made, for [`default_client`] to
    /// take.
    prepared: Option<Arc<Client>>,
}

static DEVICE_COUNT: Mutex<DeviceCount> = Mutex::new(DeviceCount {
    requested: None,
    created: None,
    attempted: false,
    prepared: None,
});

/// Asks for `n` CPU devices in the default client. Before the client exists this sets the
/// count it will be created with (overriding `JAXRS_CPU_DEVICES`); after, it succeeds only if
/// the client has `n` devices, and otherwise returns [`Error::DeviceCountFixed`].
pub fn set_default_cpu_device_count(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::Pjrt {
            code: ErrorCode::InvalidArgument,
            context: "set_cpu_device_count",
            message: "the CPU device count must be at least 1".into(),
        });
    }
    let mut count = DEVICE_COUNT.lock().unwrap_or_else(|p| p.into_inner());
    match count.created {
        Some(existing) if existing != n => Err(Error::DeviceCountFixed {
            requested: n,
            existing,
        }),
        Some(_) => Ok(()),
        None => {
            count.requested = Some(n);
            Ok(())
        }
    }
}

/// Creates the process-wide client now, as process `node_id` of `num_nodes`, for
/// `jaxrs::distributed::initialize`; `connect` joins the other processes and returns the
/// key-value store they share.
///
/// A plugin that takes the `cpu_device_count` option is XLA's CPU plugin (others reject it
/// with `INVALID_ARGUMENT` while checking their options, before touching a device): it has no
/// cross-process collectives, so more than one process is
/// [`Error::MultiProcessUnsupported`], refused before `connect` is called; with one process
/// it is created as usual. Any other plugin is created with the `num_nodes` and `node_id`
/// options and the store behind its key-value callbacks (what JAX passes XLA's GPU plugin).
///
/// Too late once [`default_client`] ran: [`Error::DistributedAfterClient`]. The lock this holds
/// makes a concurrent first [`default_client`] wait, and then take this client.
pub fn create_default_client_for_processes(
    num_nodes: usize,
    node_id: usize,
    connect: impl FnOnce() -> Result<Arc<dyn KeyValueStore>>,
) -> Result<Arc<Client>> {
    let mut count = DEVICE_COUNT.lock().unwrap_or_else(|p| p.into_inner());
    if count.attempted || count.prepared.is_some() {
        return Err(Error::DistributedAfterClient);
    }
    let devices = match count.requested {
        Some(n) => n as i64,
        None => cpu_devices_from_env()?,
    };
    let api = Api::load(&provision::plugin_path()?)?;
    let client = match Client::new(api.clone(), Some(devices)) {
        Ok(cpu) if num_nodes > 1 => {
            return Err(Error::MultiProcessUnsupported {
                platform: cpu.platform_name(),
                num_processes: num_nodes,
            })
        }
        Ok(cpu) => {
            connect()?;
            cpu
        }
        Err(Error::Pjrt {
            code: ErrorCode::InvalidArgument,
            ..
        }) => {
            let store = connect()?;
            let options = [("num_nodes", num_nodes as i64), ("node_id", node_id as i64)];
            Client::with_options(api, &options, Some(store))?
        }
        Err(e) => return Err(e),
    };
    count.created = Some(client.devices().len());
    count.prepared = Some(client.clone());
    Ok(client)
}

/// Where creating the process-wide client spent its time (see [`startup_times`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct StartupTimes {
    /// Reading the environment and finding the plugin's file.
    pub resolve: Duration,
    /// Loading the plugin: `dlopen` and `PJRT_Plugin_Initialize`.
    pub load: LoadTimes,
    /// `PJRT_Client_Create` and describing the devices.
    pub client: Duration,
    /// The whole of [`default_client`]'s first call.
    pub total: Duration,
}

static STARTUP_TIMES: OnceLock<StartupTimes> = OnceLock::new();

/// Where the first [`default_client`] spent its time, once it created the client (`None`
/// before, or when the client came from [`create_default_client_for_processes`]).
pub fn startup_times() -> Option<StartupTimes> {
    STARTUP_TIMES.get().copied()
}

fn create_default_client() -> Result<Arc<Client>> {
    let start = Instant::now();
    let mut count = DEVICE_COUNT.lock().unwrap_or_else(|p| p.into_inner());
    count.attempted = true;
    if let Some(client) = count.prepared.take() {
        return Ok(client);
    }
    let devices = match count.requested {
        Some(n) => n as i64,
        None => cpu_devices_from_env()?,
    };
    let path = provision::plugin_path()?;
    let resolved = Instant::now();
    let api = Api::load(&path)?;
    let loaded = Instant::now();
    let client = match Client::new(api.clone(), Some(devices)) {
        Err(Error::Pjrt {
            code: ErrorCode::InvalidArgument,
            ..
        }) => Client::new(api.clone(), None),
        other => other,
    }?;
    count.created = Some(client.devices().len());
    let _ = STARTUP_TIMES.set(StartupTimes {
        resolve: resolved - start,
        load: api.load_times(),
        client: loaded.elapsed(),
        total: start.elapsed(),
    });
    Ok(client)
}

fn cpu_devices_from_env() -> Result<i64> {
    match std::env::var("JAXRS_CPU_DEVICES") {
        Err(_) => Ok(1),
        Ok(s) => match s.trim().parse::<i64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(Error::Pjrt {
                code: ErrorCode::InvalidArgument,
                context: "JAXRS_CPU_DEVICES",
                message: format!("JAXRS_CPU_DEVICES must be a positive integer, not {s:?}"),
            }),
        },
    }
}

/// `Error` is not `Clone` (it wraps `io::Error`): rebuild an equal one.
pub(crate) fn copy_error(e: &Error) -> Error {
    match e {
        Error::PluginNotFound(m) => Error::PluginNotFound(m.clone()),
        Error::PluginLoad { path, reason } => Error::PluginLoad {
            path: path.clone(),
            reason: reason.clone(),
        },
        Error::Provision(m) => Error::Provision(m.clone()),
        Error::Compile { message } => Error::Compile {
            message: message.clone(),
        },
        Error::OutOfMemory { context, message } => Error::OutOfMemory {
            context,
            message: message.clone(),
        },
        Error::DonatedBufferUsed(m) => Error::DonatedBufferUsed(m.clone()),
        Error::Export(e) => Error::Export(e.clone()),
        Error::FloatingPoint(m) => Error::FloatingPoint(m.clone()),
        Error::ShapeTooLarge(m) => Error::ShapeTooLarge(m.clone()),
        Error::Pjrt {
            code,
            context,
            message,
        } => Error::Pjrt {
            code: *code,
            context,
            message: message.clone(),
        },
        Error::DeviceCountFixed {
            requested,
            existing,
        } => Error::DeviceCountFixed {
            requested: *requested,
            existing: *existing,
        },
        Error::Sharding(m) => Error::Sharding(m.clone()),
        Error::IncompatibleExecutable(m) => Error::IncompatibleExecutable(m.clone()),
        Error::KeyValueTimeout { key, timeout } => Error::KeyValueTimeout {
            key: key.clone(),
            timeout: *timeout,
        },
        Error::Distributed { code, message } => Error::Distributed {
            code: *code,
            message: message.clone(),
        },
        Error::PeerFailed {
            process_id,
            message,
        } => Error::PeerFailed {
            process_id: *process_id,
            message: message.clone(),
        },
        Error::MultiProcessUnsupported {
            platform,
            num_processes,
        } => Error::MultiProcessUnsupported {
            platform: platform.clone(),
            num_processes: *num_processes,
        },
        Error::DistributedAfterClient => Error::DistributedAfterClient,
        Error::Io(io) => Error::Io(std::io::Error::new(io.kind(), io.to_string())),
    }
}
