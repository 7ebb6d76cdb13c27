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
mod options;
pub mod provision;
pub mod sys;
mod util;

pub use api::Api;
pub use buffer::Buffer;
pub use client::{Client, Device};
pub use executable::{LoadedExecutable, MemoryStats};
pub use options::CompileOptions;

use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use std::sync::{Arc, OnceLock};

/// The process-wide client of the default plugin, created on first use.
///
/// The plugin comes from [`provision::plugin_path`]; the number of CPU devices from
/// `JAXRS_CPU_DEVICES` (default 1), passed as the `cpu_device_count` create option (and
/// dropped if the plugin rejects it, as non-CPU plugins may). A failure is remembered: every
/// call returns (a copy of) the same error.
pub fn default_client() -> Result<Arc<Client>> {
    static DEFAULT: OnceLock<Result<Arc<Client>>> = OnceLock::new();
    match DEFAULT.get_or_init(create_default_client) {
        Ok(c) => Ok(c.clone()),
        Err(e) => Err(copy_error(e)),
    }
}

fn create_default_client() -> Result<Arc<Client>> {
    let devices = match std::env::var("JAXRS_CPU_DEVICES") {
        Err(_) => 1,
        Ok(s) => match s.trim().parse::<i64>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(Error::Pjrt {
                    code: ErrorCode::InvalidArgument,
                    context: "JAXRS_CPU_DEVICES",
                    message: format!("JAXRS_CPU_DEVICES must be a positive integer, not {s:?}"),
                })
            }
        },
    };
    let api = Api::load(&provision::plugin_path()?)?;
    match Client::new(api.clone(), Some(devices)) {
        Err(Error::Pjrt {
            code: ErrorCode::InvalidArgument,
            ..
        }) => Client::new(api, None),
        other => other,
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
        Error::Io(io) => Error::Io(std::io::Error::new(io.kind(), io.to_string())),
    }
}
