//! A loaded plugin: the library, its `PJRT_Api` table, and the error plumbing every call uses.

use super::sys;
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// A non-null table entry: `PJRT_Error* f(Args*)`.
pub(crate) type Call<A> = unsafe extern "C" fn(*mut A) -> *mut sys::PJRT_Error;
type VoidCall<A> = unsafe extern "C" fn(*mut A);

/// The table entries jaxrs calls, checked non-null once at load time.
pub(crate) struct Fns {
    pub error_destroy: VoidCall<sys::PJRT_Error_Destroy_Args>,
    pub error_message: VoidCall<sys::PJRT_Error_Message_Args>,
    pub error_get_code: Call<sys::PJRT_Error_GetCode_Args>,
    pub event_destroy: Call<sys::PJRT_Event_Destroy_Args>,
    pub event_await: Call<sys::PJRT_Event_Await_Args>,
    pub event_is_ready: Call<sys::PJRT_Event_IsReady_Args>,
    pub client_create: Call<sys::PJRT_Client_Create_Args>,
    pub client_destroy: Call<sys::PJRT_Client_Destroy_Args>,
    pub client_platform_name: Call<sys::PJRT_Client_PlatformName_Args>,
    pub client_addressable_devices: Call<sys::PJRT_Client_AddressableDevices_Args>,
    pub client_devices: Call<sys::PJRT_Client_Devices_Args>,
    pub client_process_index: Call<sys::PJRT_Client_ProcessIndex_Args>,
    pub client_compile: Call<sys::PJRT_Client_Compile_Args>,
    pub client_buffer_from_host_buffer: Call<sys::PJRT_Client_BufferFromHostBuffer_Args>,
    pub device_description_id: Call<sys::PJRT_DeviceDescription_Id_Args>,
    pub device_description_kind: Call<sys::PJRT_DeviceDescription_Kind_Args>,
    /// Optional: a device of a plugin without it is taken to be in process 0.
    pub device_description_process_index:
        Option<Call<sys::PJRT_DeviceDescription_ProcessIndex_Args>>,
    pub device_get_description: Call<sys::PJRT_Device_GetDescription_Args>,
    /// Optional in practice: some plugins leave it null.
    pub device_local_hardware_id: Option<Call<sys::PJRT_Device_LocalHardwareId_Args>>,
    pub executable_destroy: Call<sys::PJRT_Executable_Destroy_Args>,
    pub executable_num_outputs: Call<sys::PJRT_Executable_NumOutputs_Args>,
    pub executable_optimized_program: Option<Call<sys::PJRT_Executable_OptimizedProgram_Args>>,
    pub executable_get_compiled_memory_stats:
        Option<Call<sys::PJRT_Executable_GetCompiledMemoryStats_Args>>,
    pub executable_get_cost_analysis: Option<Call<sys::PJRT_Executable_GetCostAnalysis_Args>>,
    /// Optional: without it (or the next) the persistent compile cache is off.
    pub executable_serialize: Option<Call<sys::PJRT_Executable_Serialize_Args>>,
    pub executable_deserialize_and_load: Option<Call<sys::PJRT_Executable_DeserializeAndLoad_Args>>,
    pub loaded_executable_destroy: Call<sys::PJRT_LoadedExecutable_Destroy_Args>,
    pub loaded_executable_get_executable: Call<sys::PJRT_LoadedExecutable_GetExecutable_Args>,
    pub loaded_executable_addressable_devices:
        Call<sys::PJRT_LoadedExecutable_AddressableDevices_Args>,
    pub loaded_executable_execute: Call<sys::PJRT_LoadedExecutable_Execute_Args>,
    pub buffer_destroy: Call<sys::PJRT_Buffer_Destroy_Args>,
    pub buffer_element_type: Call<sys::PJRT_Buffer_ElementType_Args>,
    pub buffer_dimensions: Call<sys::PJRT_Buffer_Dimensions_Args>,
    pub buffer_device: Call<sys::PJRT_Buffer_Device_Args>,
    pub buffer_is_deleted: Call<sys::PJRT_Buffer_IsDeleted_Args>,
    pub buffer_ready_event: Call<sys::PJRT_Buffer_ReadyEvent_Args>,
    pub buffer_copy_raw_to_host: Call<sys::PJRT_Buffer_CopyRawToHost_Args>,
    pub buffer_copy_to_device: Call<sys::PJRT_Buffer_CopyToDevice_Args>,
    /// The entries of the in-place read of a CPU buffer (`Buffer::copy_to_host`), all or none.
    pub host_view: Option<HostViewFns>,
}

/// What reading a CPU buffer's memory in place needs; a plugin lacking any of them is read
/// through `PJRT_Buffer_CopyRawToHost`.
pub(crate) struct HostViewFns {
    pub buffer_is_on_cpu: Call<sys::PJRT_Buffer_IsOnCpu_Args>,
    pub buffer_get_memory_layout: Call<sys::PJRT_Buffer_GetMemoryLayout_Args>,
    pub buffer_on_device_size_in_bytes: Call<sys::PJRT_Buffer_OnDeviceSizeInBytes_Args>,
    pub buffer_increase_external_reference_count:
        Call<sys::PJRT_Buffer_ExternalReferenceCount_Args>,
    pub buffer_decrease_external_reference_count:
        Call<sys::PJRT_Buffer_ExternalReferenceCount_Args>,
    pub buffer_opaque_device_memory_data_pointer:
        Call<sys::PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>,
}

/// A loaded PJRT plugin.
///
/// The shared library is never unloaded: a plugin keeps threads and static state alive (as in
/// JAX, which never unloads one either), so `dlclose` while anything might still run inside it
/// is not safe. Loading the same file twice returns the same `Api` (and initializes the plugin
/// once).
pub struct Api {
    path: PathBuf,
    /// The file's size and modification time (ns since the epoch) when it was loaded.
    file_stamp: (u64, u128),
    version: (i32, i32),
    pub(crate) f: Fns,
    /// Launched work to await before the process exits.
    pub(crate) in_flight: InFlight,
    /// The FFI extension's handler registration, where the plugin has one.
    pub(crate) ffi_register_handler: Option<sys::RegisterHandlerFn>,
    /// The types of the plugin's extensions (`PJRT_Extension_Type`), in chain order.
    pub(crate) extension_types: Vec<std::os::raw::c_int>,
    /// How long `dlopen` and `PJRT_Plugin_Initialize` took, for the start-up breakdown.
    pub(crate) load_times: LoadTimes,
    _lib: ManuallyDrop<libloading::Library>,
}

/// Where loading a plugin spent its time.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadTimes {
    /// `dlopen`: mapping the library, its relocations and its static initializers.
    pub dlopen: Duration,
    /// `GetPjrtApi`, the version and table checks and `PJRT_Plugin_Initialize`.
    pub initialize: Duration,
}

// SAFETY: the table is immutable, process-lifetime data of the plugin; PJRT's entry points are
// thread-safe (the C API requires it).
unsafe impl Send for Api {}
unsafe impl Sync for Api {}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish()
    }
}

/// Keeps XLA's informational log lines off stderr unless asked for.
///
/// XLA logs through TSL and absl: at its default level every program would start with
/// `WARNING: All log messages before absl::InitializeLog() is called are written to STDERR`
/// and `I0000 ... cpu_device_count set via create_options: 1`. TSL reads
/// `TF_CPP_MIN_LOG_LEVEL` when it first logs; `1` drops INFO and keeps warnings and errors
/// (absl's preamble is printed with the first line that gets through, so it goes too). The
/// variable is set before the plugin is loaded, and only when nobody chose: not when the user
/// set it, nor when they asked for XLA's logs (`JAXRS_XLA_LOG=1`, or `RUST_LOG` set).
///
/// The trade-off: `setenv` is not synchronised with a C `getenv` running on another thread
/// at the same moment (Rust's own readers are). The alternative, pointing fd 2 at /dev/null
/// around loading the plugin and creating the client, would also swallow whatever any other
/// thread printed meanwhile (a panic message, a test's output), and XLA's later warnings
/// would still come with absl's preamble.
fn quiet_xla_logs() {
    let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    let asked = std::env::var("JAXRS_XLA_LOG")
        .is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
        || set("RUST_LOG");
    if !asked && !set("TF_CPP_MIN_LOG_LEVEL") {
        std::env::set_var("TF_CPP_MIN_LOG_LEVEL", "1");
    }
}

/// `path`'s size and modification time in nanoseconds since the epoch (zeros when unknown).
fn file_stamp(path: &Path) -> (u64, u128) {
    std::fs::metadata(path).map_or((0, 0), |m| {
        let mtime = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        (m.len(), mtime)
    })
}

/// Plugins loaded so far, by canonical path.
static LOADED: Mutex<Vec<(PathBuf, Arc<Api>)>> = Mutex::new(Vec::new());

impl Api {
    /// Loads a PJRT plugin: `dlopen`, `GetPjrtApi`, version and table-size checks,
    /// `PJRT_Plugin_Initialize`. Any failure is [`Error::PluginLoad`].
    pub fn load(path: &Path) -> Result<Arc<Api>> {
        let load_err = |reason: String| Error::PluginLoad {
            path: path.display().to_string(),
            reason,
        };
        let canonical = path
            .canonicalize()
            .map_err(|e| load_err(format!("cannot open the file: {e}")))?;
        let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, api)) = loaded.iter().find(|(p, _)| *p == canonical) {
            return Ok(api.clone());
        }
        let api = Arc::new(Api::load_uncached(&canonical).map_err(load_err)?);
        loaded.push((canonical, api.clone()));
        Ok(api)
    }

    fn load_uncached(path: &Path) -> std::result::Result<Api, String> {
        quiet_xla_logs();
        let file_stamp = file_stamp(path);
        let start = Instant::now();
        // SAFETY: loading a library runs its initializers; a PJRT plugin is meant to be loaded.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        let opened = Instant::now();
        // SAFETY: `GetPjrtApi` has this signature in every PJRT plugin.
        let get: libloading::Symbol<sys::GetPjrtApiFn> = unsafe { lib.get(b"GetPjrtApi\0") }
            .map_err(|e| format!("not a PJRT plugin (no GetPjrtApi symbol): {e}"))?;
        // SAFETY: calling the plugin's entry point, which returns a pointer to static data.
        let raw = unsafe { get() };
        if raw.is_null() {
            return Err("GetPjrtApi returned null".into());
        }
        // Read the header fields first, through raw pointers: the table may be shorter than
        // ours, and only after the size check may the whole struct be read.
        // SAFETY: every PJRT_Api starts with struct_size, extension_start, pjrt_api_version.
        let (struct_size, version) = unsafe {
            (
                ptr::addr_of!((*raw).struct_size).read(),
                ptr::addr_of!((*raw).pjrt_api_version).read(),
            )
        };
        let (major, minor) = (version.major_version, version.minor_version);
        if major != sys::PJRT_API_MAJOR {
            return Err(format!(
                "PJRT API version {major}.{minor} is incompatible: jaxrs speaks major version {}",
                sys::PJRT_API_MAJOR
            ));
        }
        if struct_size < sys::PJRT_Api_STRUCT_SIZE {
            return Err(format!(
                "PJRT API {major}.{minor} is too old: its function table has {struct_size} bytes, \
                 jaxrs needs {} (API 0.{} or newer)",
                sys::PJRT_Api_STRUCT_SIZE,
                sys::PJRT_API_MINOR
            ));
        }
        // SAFETY: the plugin's table covers every field we declare.
        let t: &sys::PJRT_Api = unsafe { &*raw };
        let f = fns(t)?;
        let init = t
            .PJRT_Plugin_Initialize
            .ok_or("PJRT_Plugin_Initialize is missing")?;
        let mut api = Api {
            path: path.to_path_buf(),
            file_stamp,
            version: (major, minor),
            f,
            in_flight: InFlight::new(),
            // SAFETY: `t` is the plugin's table, its extension chain the plugin's own.
            ffi_register_handler: unsafe { sys::find_register_handler(t) },
            // SAFETY: as above.
            extension_types: unsafe { sys::extension_types(t) },
            load_times: LoadTimes::default(),
            _lib: ManuallyDrop::new(lib),
        };
        let mut args = sys::PJRT_Plugin_Initialize_Args {
            struct_size: sys::PJRT_Plugin_Initialize_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
        };
        // SAFETY: valid args; called once per plugin (guarded by LOADED).
        let err = unsafe { init(&mut args) };
        if let Err(e) = api.check(err, "PJRT_Plugin_Initialize") {
            return Err(format!("plugin initialization failed: {e}"));
        }
        api.load_times = LoadTimes {
            dlopen: opened - start,
            initialize: opened.elapsed(),
        };
        Ok(api)
    }

    /// Every plugin loaded so far.
    pub(crate) fn loaded() -> Vec<Arc<Api>> {
        let loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
        loaded.iter().map(|(_, api)| api.clone()).collect()
    }

    /// The plugin's PJRT C API version (major, minor).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// Whether the plugin offers PJRT's profiler extension (`PJRT_Extension_Type_Profiler`),
    /// through which device activity can be traced.
    pub fn has_profiler_extension(&self) -> bool {
        const PJRT_EXTENSION_TYPE_PROFILER: std::os::raw::c_int = 1;
        self.extension_types.contains(&PJRT_EXTENSION_TYPE_PROFILER)
    }

    /// The plugin file's size and modification time (nanoseconds since the epoch, 0 when
    /// unknown) as they were when it was loaded: what identifies a build of the plugin at its
    /// path, read once, so that a file replaced later does not pass for the code running.
    pub fn file_stamp(&self) -> (u64, u128) {
        self.file_stamp
    }

    /// Where loading the plugin spent its time.
    pub fn load_times(&self) -> LoadTimes {
        self.load_times
    }

    /// The file the plugin was loaded from (canonical).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Turns a returned `PJRT_Error*` into a `Result`, reading and destroying the error.
    #[inline]
    pub(crate) fn check(&self, err: *mut sys::PJRT_Error, context: &'static str) -> Result<()> {
        if err.is_null() {
            Ok(())
        } else {
            Err(self.take_error(err, context))
        }
    }

    /// Reads the code and message of a non-null error, destroys it, and maps it to an `Error`.
    #[cold]
    #[inline(never)]
    pub(crate) fn take_error(&self, err: *mut sys::PJRT_Error, context: &'static str) -> Error {
        let (code, message) = self.take_status(err);
        map_status(code, context, message)
    }

    /// Reads and destroys a non-null error.
    #[cold]
    pub(crate) fn take_status(&self, err: *mut sys::PJRT_Error) -> (ErrorCode, String) {
        let mut m = sys::PJRT_Error_Message_Args {
            struct_size: sys::PJRT_Error_Message_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            error: err,
            message: ptr::null(),
            message_size: 0,
        };
        // SAFETY: `err` is a live error returned by the plugin.
        unsafe { (self.f.error_message)(&mut m) };
        let message = if m.message.is_null() {
            String::new()
        } else {
            // SAFETY: the plugin returns `message_size` bytes that live as long as `err`.
            let bytes =
                unsafe { std::slice::from_raw_parts(m.message.cast::<u8>(), m.message_size) };
            String::from_utf8_lossy(bytes).into_owned()
        };
        let mut c = sys::PJRT_Error_GetCode_Args {
            struct_size: sys::PJRT_Error_GetCode_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            error: err,
            code: 2,
        };
        // SAFETY: as above. GetCode returns an error only for a bad argument: drop it too.
        let cerr = unsafe { (self.f.error_get_code)(&mut c) };
        if !cerr.is_null() {
            self.destroy_error(cerr);
            c.code = 2;
        }
        self.destroy_error(err);
        (ErrorCode::from_raw(c.code), message)
    }

    pub(crate) fn destroy_error(&self, err: *mut sys::PJRT_Error) {
        let mut d = sys::PJRT_Error_Destroy_Args {
            struct_size: sys::PJRT_Error_Destroy_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            error: err,
        };
        // SAFETY: `err` is owned by us and destroyed exactly once.
        unsafe { (self.f.error_destroy)(&mut d) };
    }

    /// Destroys an event (null is fine). A failure to destroy is logged, not returned.
    pub(crate) fn destroy_event(&self, event: *mut sys::PJRT_Event) {
        if event.is_null() {
            return;
        }
        let mut d = sys::PJRT_Event_Destroy_Args {
            struct_size: sys::PJRT_Event_Destroy_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            event,
        };
        // SAFETY: `event` is owned by us and destroyed exactly once.
        let err = unsafe { (self.f.event_destroy)(&mut d) };
        if let Err(e) = self.check(err, "PJRT_Event_Destroy") {
            log::warn!("{e}");
        }
    }

    /// Waits for an event, destroys it, and returns its status.
    pub(crate) fn await_event(
        &self,
        event: *mut sys::PJRT_Event,
        context: &'static str,
    ) -> Result<()> {
        if event.is_null() {
            return Ok(());
        }
        let mut a = sys::PJRT_Event_Await_Args {
            struct_size: sys::PJRT_Event_Await_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            event,
        };
        // SAFETY: `event` is a live event we own.
        let err = unsafe { (self.f.event_await)(&mut a) };
        self.destroy_event(event);
        self.check(err, context)
    }
}

/// Maps PJRT's status to jaxrs's error: memory exhaustion and use of a donated buffer get
/// their own variants.
pub(crate) fn map_status(code: ErrorCode, context: &'static str, message: String) -> Error {
    if code == ErrorCode::ResourceExhausted {
        Error::OutOfMemory { context, message }
    } else if message.contains("deleted or donated") {
        Error::DonatedBufferUsed(message)
    } else {
        Error::Pjrt {
            code,
            context,
            message,
        }
    }
}

fn fns(t: &sys::PJRT_Api) -> std::result::Result<Fns, String> {
    macro_rules! need {
        ($field:ident) => {
            t.$field
                .ok_or(concat!("the plugin lacks ", stringify!($field)))?
        };
    }
    Ok(Fns {
        error_destroy: need!(PJRT_Error_Destroy),
        error_message: need!(PJRT_Error_Message),
        error_get_code: need!(PJRT_Error_GetCode),
        event_destroy: need!(PJRT_Event_Destroy),
        event_await: need!(PJRT_Event_Await),
        event_is_ready: need!(PJRT_Event_IsReady),
        client_create: need!(PJRT_Client_Create),
        client_destroy: need!(PJRT_Client_Destroy),
        client_platform_name: need!(PJRT_Client_PlatformName),
        client_addressable_devices: need!(PJRT_Client_AddressableDevices),
        client_devices: need!(PJRT_Client_Devices),
        client_process_index: need!(PJRT_Client_ProcessIndex),
        client_compile: need!(PJRT_Client_Compile),
        client_buffer_from_host_buffer: need!(PJRT_Client_BufferFromHostBuffer),
        device_description_id: need!(PJRT_DeviceDescription_Id),
        device_description_kind: need!(PJRT_DeviceDescription_Kind),
        device_description_process_index: t.PJRT_DeviceDescription_ProcessIndex,
        device_get_description: need!(PJRT_Device_GetDescription),
        device_local_hardware_id: t.PJRT_Device_LocalHardwareId,
        executable_destroy: need!(PJRT_Executable_Destroy),
        executable_num_outputs: need!(PJRT_Executable_NumOutputs),
        executable_optimized_program: t.PJRT_Executable_OptimizedProgram,
        executable_get_compiled_memory_stats: t.PJRT_Executable_GetCompiledMemoryStats,
        executable_get_cost_analysis: t.PJRT_Executable_GetCostAnalysis,
        executable_serialize: t.PJRT_Executable_Serialize,
        executable_deserialize_and_load: t.PJRT_Executable_DeserializeAndLoad,
        loaded_executable_destroy: need!(PJRT_LoadedExecutable_Destroy),
        loaded_executable_get_executable: need!(PJRT_LoadedExecutable_GetExecutable),
        loaded_executable_addressable_devices: need!(PJRT_LoadedExecutable_AddressableDevices),
        loaded_executable_execute: need!(PJRT_LoadedExecutable_Execute),
        buffer_destroy: need!(PJRT_Buffer_Destroy),
        buffer_element_type: need!(PJRT_Buffer_ElementType),
        buffer_dimensions: need!(PJRT_Buffer_Dimensions),
        buffer_device: need!(PJRT_Buffer_Device),
        buffer_is_deleted: need!(PJRT_Buffer_IsDeleted),
        buffer_ready_event: need!(PJRT_Buffer_ReadyEvent),
        buffer_copy_raw_to_host: need!(PJRT_Buffer_CopyRawToHost),
        buffer_copy_to_device: need!(PJRT_Buffer_CopyToDevice),
        host_view: (|| {
            Some(HostViewFns {
                buffer_is_on_cpu: t.PJRT_Buffer_IsOnCpu?,
                buffer_get_memory_layout: t.PJRT_Buffer_GetMemoryLayout?,
                buffer_on_device_size_in_bytes: t.PJRT_Buffer_OnDeviceSizeInBytes?,
                buffer_increase_external_reference_count: t
                    .PJRT_Buffer_IncreaseExternalReferenceCount?,
                buffer_decrease_external_reference_count: t
                    .PJRT_Buffer_DecreaseExternalReferenceCount?,
                buffer_opaque_device_memory_data_pointer: t
                    .PJRT_Buffer_OpaqueDeviceMemoryDataPointer?,
            })
        })(),
    })
}

// ------------------------------------------------------------------ in-flight work

// Work the plugin still runs for us, awaited when the process exits.
//
// A process may end (`main` returns, `std::process::exit`) while programs it launched still
// run on the plugin's threads. `exit` then runs the C++ static destructors the plugin
// registered, under those threads, which can die with SIGSEGV. So every launch leaves its
// completion events here, and a C `atexit` handler awaits them all before those destructors
// run. `exit` runs handlers last-registered first, and the plugin registers the destructor of
// a function-local static when it first uses it, so the handler is registered again after
// each first use we can see (up to a bound):
// - compiling or loading a program: registering only once, at the first launch, let 6 of 72
//   test processes crash;
// - running a program for the first time: its worker threads first use statics mid-run (an
//   SPMD program over 8 devices registers four), so the first launch of each program is
//   awaited before the handler is registered again. Without that, a process whose last act
//   was the first run of a sharded program crashed in 4 of 60 runs.
//
// The cost per launch is a lock and a push; events already fulfilled are dropped in batches
// when the list has doubled since the last sweep, so a steady stream of launches keeps it
// short.

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

/// Whether [`register_exit_handler`] would still register: past the bound, waiting for a
/// first run to end buys nothing.
fn exit_handler_registrations_left() -> bool {
    REGISTRATIONS.load(Ordering::Relaxed) < MAX_REGISTRATIONS
}

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
            self.free_ready(&mut pending.events);
            // Sweeping again only once the list doubled keeps the cost per launch constant
            // even while many programs stay pending.
            pending.sweep_at = (2 * pending.events.len()).max(MIN_SWEEP_AT);
        }
    }

    /// [`Api::track_in_flight`] for the first launch of a program: waits for it to end first
    /// and then registers the exit handler again, so that the handler runs before the
    /// destructors of the statics the run used for the first time. Its failures are not
    /// reported here: they reach the caller through the outputs' ready events.
    pub(crate) fn track_first_run(&self, events: &[*mut sys::PJRT_Event]) {
        if exit_handler_registrations_left() {
            for &event in events.iter().filter(|e| !e.is_null()) {
                let mut a = sys::PJRT_Event_Await_Args {
                    struct_size: sys::PJRT_Event_Await_Args_STRUCT_SIZE,
                    extension_start: ptr::null_mut(),
                    event,
                };
                // SAFETY: `event` is a live event the caller hands over below.
                let err = unsafe { (self.f.event_await)(&mut a) };
                let _ = self.check(err, "PJRT_Event_Await");
            }
            register_exit_handler();
        }
        self.track_in_flight(events);
    }

    /// Destroys the events that fired and keeps the others.
    fn free_ready(&self, events: &mut Vec<Event>) {
        events.retain(|e| {
            let ready = self.event_is_ready(e.0);
            if ready {
                self.destroy_event(e.0);
            }
            !ready
        });
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
            self.free_ready(&mut events);
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
