//! The one error type of jaxrs: environmental failures a caller can handle.
//!
//! Programmer mistakes (a shape or dtype mismatch, a bad axis) are not `Error`s: they panic
//! with a message naming the op, the shapes and the caller's source line, like an index out of
//! bounds does. Everything the environment can make fail (no plugin, a compile failure, device
//! memory exhausted, a donated buffer read again) comes back as an `Error`, and so do device
//! layouts that are often read from configuration (a mesh that does not fit the devices, a
//! sharding that does not fit an array, a device count asked for too late).

/// PJRT's error codes (`PJRT_Error_Code`), which follow absl's status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    Cancelled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    ResourceExhausted,
    FailedPrecondition,
    Aborted,
    OutOfRange,
    Unimplemented,
    Internal,
    Unavailable,
    DataLoss,
    Unauthenticated,
    /// A code this version of jaxrs does not know.
    Other(i32),
}

impl ErrorCode {
    /// Maps PJRT's integer code to its name.
    pub fn from_raw(code: i32) -> ErrorCode {
        use ErrorCode::*;
        match code {
            1 => Cancelled,
            2 => Unknown,
            3 => InvalidArgument,
            4 => DeadlineExceeded,
            5 => NotFound,
            6 => AlreadyExists,
            7 => PermissionDenied,
            8 => ResourceExhausted,
            9 => FailedPrecondition,
            10 => Aborted,
            11 => OutOfRange,
            12 => Unimplemented,
            13 => Internal,
            14 => Unavailable,
            15 => DataLoss,
            16 => Unauthenticated,
            other => Other(other),
        }
    }
}

/// An environmental failure: the plugin, the compiler or the device said no.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No PJRT plugin could be found or provisioned; the message says how to supply one.
    #[error("no PJRT plugin available: {0}")]
    PluginNotFound(String),
    /// The plugin file exists but could not be loaded or is of an incompatible version.
    #[error("cannot load PJRT plugin {path}: {reason}")]
    PluginLoad { path: String, reason: String },
    /// Downloading or verifying the plugin failed.
    #[error("cannot provision the PJRT plugin: {0}")]
    Provision(String),
    /// XLA rejected a program.
    #[error("XLA could not compile the program: {message}")]
    Compile { message: String },
    /// The device ran out of memory.
    #[error("out of device memory in {context}: {message}")]
    OutOfMemory {
        context: &'static str,
        message: String,
    },
    /// An operation asked for an array too large to exist: its element count or byte size
    /// overflows, or it passes `jaxrs::MAX_ARRAY_BYTES` (2^48 bytes). Checked before the
    /// shape reaches XLA (which would abort the process) or an allocation; the message names
    /// the operation, the shape and the user's line.
    #[error("{0}")]
    ShapeTooLarge(String),
    /// A buffer that was donated to a computation was used again.
    #[error("a donated array was used again: {0}")]
    DonatedBufferUsed(String),
    /// Any other error reported by PJRT.
    #[error("PJRT error {code:?} in {context}: {message}")]
    Pjrt {
        code: ErrorCode,
        context: &'static str,
        message: String,
    },
    /// A CPU device count was asked for after the process-wide client was created with
    /// another one (the count is fixed when the client is created, by the first array
    /// operation).
    #[error(
        "cannot switch to {requested} CPU devices: the PJRT client already exists with \
         {existing}; call jaxrs::set_cpu_device_count before the first array operation (or \
         set JAXRS_CPU_DEVICES)"
    )]
    DeviceCountFixed { requested: usize, existing: usize },
    /// The NaN checker (`jaxrs::config::set_debug_nans`, `JAXRS_DEBUG_NANS=1`) found an
    /// operation that produced a NaN; the message names the primitive and the user's line.
    #[error("{0}")]
    FloatingPoint(String),
    /// A mesh, partition spec or sharding that does not fit its devices or its array (the
    /// message names what: an uneven split, an unknown or repeated mesh axis, a spec longer
    /// than the array's rank, a device count that is not the mesh's size).
    #[error("{0}")]
    Sharding(String),
    /// A blocking get of the distributed key-value store (`jaxrs::distributed`) found no
    /// value for its key within its timeout. `key` is the key as text (bytes that are not
    /// UTF-8 are escaped).
    #[error("no value for key {key:?} in the distributed key-value store after {timeout:?}")]
    KeyValueTimeout {
        key: String,
        timeout: std::time::Duration,
    },
    /// The coordination between processes (`jaxrs::distributed`) failed: the coordinator
    /// cannot be reached or the connection to it was lost, the processes disagree on their
    /// number or ids, a key was set twice, the store was shut down. `code` classifies it
    /// the way PJRT's codes do (`Unavailable`, `InvalidArgument`, `AlreadyExists`, ...).
    #[error("jaxrs::distributed: {message}")]
    Distributed { code: ErrorCode, message: String },
    /// Another process of the program died (`jaxrs::distributed`): its connection to the
    /// coordinator ended without a clean goodbye (it was killed or crashed), or it sent no
    /// heartbeat for the heartbeat timeout. Every blocked get, barrier and `initialize` of the
    /// other processes returns this at once instead of waiting out its timeout, and so does
    /// every later request: the program cannot go on without it. `process_id` names it.
    #[error("jaxrs::distributed: process {process_id} failed: {message}")]
    PeerFailed { process_id: usize, message: String },
    /// `jaxrs::distributed::initialize` asked for more than one process on a plugin without
    /// cross-process collectives (the stock CPU plugin).
    #[error(
        "cannot run {num_processes} processes on the {platform} PJRT plugin: it has no \
         cross-process collectives (XLA's CPU plugin takes only cpu_device_count, asynchronous \
         and process_id); use one process with several CPU devices \
         (jaxrs::set_cpu_device_count), or a plugin with multi-process support such as the \
         CUDA plugin via JAXRS_PJRT_PLUGIN"
    )]
    MultiProcessUnsupported {
        platform: String,
        num_processes: usize,
    },
    /// `jaxrs::distributed::initialize` was called after the process-wide PJRT client was
    /// created (by the first array operation, `devices()`, or an earlier failed attempt).
    #[error(
        "jaxrs::distributed::initialize must be called before the first array operation: the \
         PJRT client already exists (created for this process alone)"
    )]
    DistributedAfterClient,
    /// A serialized compiled program (`Compiled::serialize`) that cannot be loaded here: not
    /// one, truncated or altered, of another format version, or compiled for another jaxrs,
    /// plugin build or set of devices (the message says which).
    #[error("cannot load the serialized program: {0}")]
    IncompatibleExecutable(String),
    /// An I/O failure (cache folder, lock file, plugin file).
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A `jax.export` artifact that cannot be read, or cannot run here (`jaxrs::export`).
    #[error("jaxrs::export: {0}")]
    Export(ExportError),
}

/// Why a `jax.export` artifact cannot be read or run ([`Error::Export`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The bytes are not a well-formed artifact: truncated, an offset out of range, a tree
    /// whose leaves and avals disagree, ...
    #[error("a malformed artifact: {0}")]
    Malformed(String),
    /// A calling convention version this reader does not run.
    #[error(
        "the artifact uses calling convention version {found}; jaxrs runs versions {}..={}",
        supported.0,
        supported.1
    )]
    CallingConventionVersion { found: u16, supported: (u16, u16) },
    /// A feature of the artifact jaxrs does not run (effects, custom pytree nodes, dtypes it
    /// has no type for, host memory, explicit mesh axes).
    #[error("the artifact uses {0}, which jaxrs does not support")]
    Unsupported(String),
    /// The artifact was exported for other platforms than the one this process runs on (and
    /// its platform check is not disabled).
    #[error(
        "the artifact was exported for the platforms {platforms:?}, not for {here:?}; export          it for {here:?} too, or with DisabledSafetyCheck.platform()"
    )]
    Platform {
        platforms: Vec<String>,
        here: String,
    },
    /// The program needs more devices than this process has.
    #[error(
        "the artifact runs on {needed} devices and this process has {available}          (jaxrs::set_cpu_device_count before the first array operation)"
    )]
    Devices { needed: usize, available: usize },
    /// The arguments do not fit the artifact's input tree, dtypes or shapes.
    #[error("{0}")]
    Arguments(String),
    /// A shape-polymorphic artifact the plugin could not compile at the caller's shapes.
    #[error(
        "the artifact has symbolic dimensions {symbols:?} (bound here to {bindings}); the          plugin could not compile it at these shapes ({message}). Export it at concrete          shapes"
    )]
    SymbolicShapes {
        symbols: Vec<String>,
        bindings: String,
        message: String,
    },
    /// A function jaxrs cannot write as an artifact.
    #[error("cannot export: {0}")]
    Export(String),
}

/// `Result` with jaxrs's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
