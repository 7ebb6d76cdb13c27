//! The PJRT C API: raw declarations (`sys`) under safe owned handles.
//!
//! [`Api`] is a loaded plugin; a [`Client`] owns a `PJRT_Client` and its [`Device`]s; a
//! [`Buffer`] is an array on one device; a [`LoadedExecutable`] is a compiled program. Every
//! handle is `Send + Sync` and freed on drop, and every `PJRT_Error` is read and destroyed
//! (returned as a [`crate::Error`]).

mod api;
mod buffer;
mod client;
mod executable;
mod options;
pub mod sys;

pub use api::Api;
pub use buffer::Buffer;
pub use client::{Client, Device};
pub use executable::{LoadedExecutable, MemoryStats};
pub use options::CompileOptions;
