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
mod hlo;
mod options;
pub mod provision;
pub mod sys;
mod util;

pub use api::Api;
pub use buffer::Buffer;
pub use client::{Client, Device};
pub use executable::{LoadedExecutable, MemoryStats};
pub use hlo::OpSharding;
pub use options::CompileOptions;

use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use std::sync::{Arc, Mutex, OnceLock};

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
}

static DEVICE_COUNT: Mutex<DeviceCount> = Mutex::new(DeviceCount {
    requested: None,
    created: None,
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

fn create_default_client() -> Result<Arc<Client>> {
    let mut count = DEVICE_COUNT.lock().unwrap_or_else(|p| p.into_inner());
    let devices = match count.requested {
        Some(n) => n as i64,
        None => cpu_devices_from_env()?,
    };
    let api = Api::load(&provision::plugin_path()?)?;
    let client = match Client::new(api.clone(), Some(devices)) {
        Err(Error::Pjrt {
            code: ErrorCode::InvalidArgument,
            ..
        }) => Client::new(api, None),
        other => other,
    }?;
    count.created = Some(client.devices().len());
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
fn copy_error(e: &Error) -> Error {
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
        Error::Io(io) => Error::Io(std::io::Error::new(io.kind(), io.to_string())),
    }
}
