//! `LoadedExecutable`: a compiled program, ready to run on its devices.

use super::buffer::Buffer;
use super::client::{Client, Device};
use super::options::CompileOptions;
use super::sys;
use super::util::{invalid, raw_slice};
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use std::os::raw::c_char;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A compiled program loaded on its devices. Owns the `PJRT_LoadedExecutable` and the
/// `PJRT_Executable` view of it; both are destroyed on drop.
pub struct LoadedExecutable {
    raw: NonNull<sys::PJRT_LoadedExecutable>,
    executable: NonNull<sys::PJRT_Executable>,
    num_outputs: usize,
    devices: Vec<Device>,
    client: Arc<Client>,
    /// Set by the first launch, which is awaited for the exit handler's sake
    /// (`Api::track_first_run`).
    launched: AtomicBool,
}

// SAFETY: PJRT executables may be executed concurrently from any thread (the C API's contract);
// the handles are owned exclusively and destroyed once.
unsafe impl Send for LoadedExecutable {}
unsafe impl Sync for LoadedExecutable {}

impl std::fmt::Debug for LoadedExecutable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedExecutable")
            .field("num_outputs", &self.num_outputs)
            .field("devices", &self.devices)
            .finish()
    }
}

/// What XLA's compiler says a program needs, in bytes (device memory).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    pub argument_bytes: i64,
    pub output_bytes: i64,
    /// Argument bytes reused for outputs (donation).
    pub alias_bytes: i64,
    pub temp_bytes: i64,
    pub generated_code_bytes: i64,
    pub peak_bytes: i64,
}

/// A short array on the stack, or on the heap when longer than `N`.
struct Scratch<T: Copy, const N: usize> {
    inline: [T; N],
    heap: Vec<T>,
    len: usize,
}

impl<T: Copy, const N: usize> Scratch<T, N> {
    #[inline]
    fn new(len: usize, fill: T) -> Self {
        let heap = if len > N { vec![fill; len] } else { Vec::new() };
        Scratch {
            inline: [fill; N],
            heap,
            len,
        }
    }

    #[inline]
    fn as_mut_slice(&mut self) -> &mut [T] {
        if self.len > N {
            &mut self.heap
        } else {
            &mut self.inline[..self.len]
        }
    }
}

impl LoadedExecutable {
    /// Takes ownership of a freshly compiled executable and reads what `execute` needs.
    ///
    /// # Safety
    /// `raw` must be a live executable of `client`, owned by nobody else.
    pub(crate) unsafe fn from_raw(
        raw: NonNull<sys::PJRT_LoadedExecutable>,
        client: Arc<Client>,
    ) -> Result<LoadedExecutable> {
        let api = client.api().clone();
        let mut g = sys::PJRT_LoadedExecutable_GetExecutable_Args {
            struct_size: sys::PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            loaded_executable: raw.as_ptr(),
            executable: ptr::null_mut(),
        };
        // SAFETY: `g` is a valid args struct and `raw` a live executable (the caller's promise).
        let err = unsafe { (api.f.loaded_executable_get_executable)(&mut g) };
        let executable = match api
            .check(err, "PJRT_LoadedExecutable_GetExecutable")
            .and_then(|()| {
                NonNull::new(g.executable).ok_or_else(|| Error::Pjrt {
                    code: ErrorCode::Internal,
                    context: "PJRT_LoadedExecutable_GetExecutable",
                    message: "the plugin returned no executable".into(),
                })
            }) {
            Ok(e) => e,
            Err(e) => {
                destroy_loaded(&client, raw);
                return Err(e);
            }
        };
        // From here on, dropping `exe` frees both handles.
        let mut exe = LoadedExecutable {
            raw,
            executable,
            num_outputs: 0,
            devices: Vec::new(),
            client,
            launched: AtomicBool::new(false),
        };
        let mut n = sys::PJRT_Executable_NumOutputs_Args {
            struct_size: sys::PJRT_Executable_NumOutputs_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            executable: executable.as_ptr(),
            num_outputs: 0,
        };
        // SAFETY: `executable` was just returned by the plugin for `raw`.
        let err = unsafe { (api.f.executable_num_outputs)(&mut n) };
        api.check(err, "PJRT_Executable_NumOutputs")?;
        exe.num_outputs = n.num_outputs;
        let mut d = sys::PJRT_LoadedExecutable_AddressableDevices_Args {
            struct_size: sys::PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            executable: raw.as_ptr(),
            addressable_devices: ptr::null(),
            num_addressable_devices: 0,
        };
        // SAFETY: as above, `raw` is live.
        let err = unsafe { (api.f.loaded_executable_addressable_devices)(&mut d) };
        api.check(err, "PJRT_LoadedExecutable_AddressableDevices")?;
        // SAFETY: the plugin returned this array of device pointers, owned by the executable.
        exe.devices = unsafe { raw_slice(d.addressable_devices, d.num_addressable_devices) }
            .iter()
            .map(|&p| {
                exe.client.device_of(p).ok_or_else(|| Error::Pjrt {
                    code: ErrorCode::Internal,
                    context: "PJRT_LoadedExecutable_AddressableDevices",
                    message: "the executable runs on a device its client does not list".into(),
                })
            })
            .collect::<Result<_>>()?;
        Ok(exe)
    }

    /// Outputs per device.
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// The devices the program runs on: `execute`'s `args[d]` goes to `devices()[d]`.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The client the program was compiled by.
    pub fn client(&self) -> &Arc<Client> {
        &self.client
    }

    /// Runs the program: `args[d][i]` is argument `i` on addressable device `d`; returns
    /// `outputs[d][j]`. `non_donatable` lists argument indices that must not be donated even
    /// where the program marks them as donors.
    ///
    /// The launch is asynchronous: the outputs are returned at once and an execution failure
    /// surfaces when they are read or waited on. A donated argument is deleted by the call.
    pub fn execute(
        &self,
        args: &[Vec<&Buffer>],
        non_donatable: &[i64],
    ) -> Result<Vec<Vec<Buffer>>> {
        const CTX: &str = "PJRT_LoadedExecutable_Execute";
        let num_devices = self.devices.len();
        if args.len() != num_devices {
            return Err(invalid(
                CTX,
                format!(
                    "{} argument lists for a program on {num_devices} devices",
                    args.len()
                ),
            ));
        }
        let num_args = args.first().map_or(0, Vec::len);
        let client_raw = self.client.raw();
        let mut flat =
            Scratch::<*mut sys::PJRT_Buffer, 16>::new(num_devices * num_args, ptr::null_mut());
        {
            let flat = flat.as_mut_slice();
            for (d, list) in args.iter().enumerate() {
                if list.len() != num_args {
                    return Err(invalid(
                        CTX,
                        format!(
                            "device {d} has {} arguments, device 0 has {num_args}",
                            list.len()
                        ),
                    ));
                }
                for (i, b) in list.iter().enumerate() {
                    if b.client().raw() != client_raw {
                        return Err(invalid(
                            CTX,
                            format!("argument {i} of device {d} belongs to another client"),
                        ));
                    }
                    flat[d * num_args + i] = b.raw();
                }
            }
        }
        let num_outputs = self.num_outputs;
        let mut outs =
            Scratch::<*mut sys::PJRT_Buffer, 16>::new(num_devices * num_outputs, ptr::null_mut());
        let mut arg_rows =
            Scratch::<*const *mut sys::PJRT_Buffer, 4>::new(num_devices, ptr::null());
        let mut out_rows =
            Scratch::<*mut *mut sys::PJRT_Buffer, 4>::new(num_devices, ptr::null_mut());
        let mut complete = Scratch::<*mut sys::PJRT_Event, 4>::new(num_devices, ptr::null_mut());
        {
            let flat_ptr = flat.as_mut_slice().as_mut_ptr();
            let outs_ptr = outs.as_mut_slice().as_mut_ptr();
            let arg_rows = arg_rows.as_mut_slice();
            let out_rows = out_rows.as_mut_slice();
            for d in 0..num_devices {
                // `wrapping_add`: with zero arguments or outputs the rows are never read.
                arg_rows[d] = flat_ptr.wrapping_add(d * num_args);
                out_rows[d] = outs_ptr.wrapping_add(d * num_outputs);
            }
        }
        let mut options = sys::PJRT_ExecuteOptions {
            struct_size: sys::PJRT_ExecuteOptions_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            send_callbacks: ptr::null_mut(),
            recv_callbacks: ptr::null_mut(),
            num_send_ops: 0,
            num_recv_ops: 0,
            launch_id: 0,
            non_donatable_input_indices: if non_donatable.is_empty() {
                ptr::null()
            } else {
                non_donatable.as_ptr()
            },
            num_non_donatable_input_indices: non_donatable.len(),
            context: ptr::null_mut(),
            call_location: ptr::null(),
            num_tasks: 0,
            task_ids: ptr::null_mut(),
            incarnation_ids: ptr::null_mut(),
        };
        let mut exec = sys::PJRT_LoadedExecutable_Execute_Args {
            struct_size: sys::PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            executable: self.raw.as_ptr(),
            options: &mut options,
            argument_lists: arg_rows.as_mut_slice().as_ptr(),
            num_devices,
            num_args,
            output_lists: out_rows.as_mut_slice().as_ptr(),
            // Awaited only at exit (`Api::track_in_flight`): failures surface through the outputs' ready
            // events.
            device_complete_events: complete.as_mut_slice().as_mut_ptr(),
            execute_device: ptr::null_mut(),
        };
        let api = self.client.api();
        // SAFETY: the argument and output arrays have the sizes given, live for the call, and
        // hold live buffers of this client; the options point to `non_donatable`, also live.
        let err = unsafe { (api.f.loaded_executable_execute)(&mut exec) };
        // The events the plugin filled in are ours whether or not it also failed.
        if self.launched.swap(true, Ordering::Relaxed) {
            api.track_in_flight(complete.as_mut_slice());
        } else {
            api.track_first_run(complete.as_mut_slice());
        }
        // Take ownership of whatever outputs came back before looking at the error, so none
        // leaks.
        let outs = outs.as_mut_slice();
        let mut result = Vec::with_capacity(num_devices);
        let mut missing = false;
        for d in 0..num_devices {
            let mut row = Vec::with_capacity(num_outputs);
            for &p in &outs[d * num_outputs..(d + 1) * num_outputs] {
                match NonNull::new(p) {
                    // SAFETY: an output buffer of this client, now owned by us alone.
                    Some(p) => row.push(unsafe { Buffer::from_raw(p, self.client.clone()) }),
                    None => missing = true,
                }
            }
            result.push(row);
        }
        api.check(err, CTX)?;
        if missing {
            return Err(Error::Pjrt {
                code: ErrorCode::Internal,
                context: CTX,
                message: "the plugin returned fewer outputs than the program has".into(),
            });
        }
        Ok(result)
    }

    /// The plugin's serialization of the compiled program, which
    /// [`Client::deserialize_and_load`] turns back into a program without compiling. Only the
    /// same plugin build reads it back.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        const CTX: &str = "PJRT_Executable_Serialize";
        let api = self.client.api();
        let f = api.f.executable_serialize.ok_or_else(|| Error::Pjrt {
            code: ErrorCode::Unimplemented,
            context: CTX,
            message: "the plugin does not serialize executables".into(),
        })?;
        let mut a = sys::PJRT_Executable_Serialize_Args {
            struct_size: sys::PJRT_Executable_Serialize_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            executable: self.executable.as_ptr(),
            serialized_bytes: ptr::null(),
            serialized_bytes_size: 0,
            serialized_executable: ptr::null_mut(),
            serialized_executable_deleter: None,
        };
        // SAFETY: valid args on a live executable.
        let err = unsafe { f(&mut a) };
        api.check(err, CTX)?;
        // SAFETY: the bytes live as long as `serialized_executable`, freed only below.
        let bytes =
            unsafe { raw_slice(a.serialized_bytes.cast::<u8>(), a.serialized_bytes_size) }.to_vec();
        if let (Some(delete), false) = (
            a.serialized_executable_deleter,
            a.serialized_executable.is_null(),
        ) {
            // SAFETY: the header's contract: the deleter is called once on the handle.
            unsafe { delete(a.serialized_executable) };
        }
        Ok(bytes)
    }

    /// The program as XLA optimized it (`PJRT_Executable_OptimizedProgram`): its format
    /// (`"hlo_with_config"` on the CPU plugin: a serialized `HloModuleProtoWithConfig`, whose
    /// instructions spell their opcodes, `all-reduce`, as strings) and its bytes. For an SPMD program this is the
    /// per-device module, with the collectives XLA inserted.
    pub fn optimized_program(&self) -> Result<(String, Vec<u8>)> {
        const CTX: &str = "PJRT_Executable_OptimizedProgram";
        let api = self.client.api();
        let f = api
            .f
            .executable_optimized_program
            .ok_or_else(|| Error::Pjrt {
                code: ErrorCode::Unimplemented,
                context: CTX,
                message: "the plugin does not provide the optimized program".into(),
            })?;
        // The plugin writes the format into this buffer-less program; the first call sizes the code.
        let mut program = sys::PJRT_Program {
            struct_size: sys::PJRT_Program_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            code: ptr::null_mut(),
            code_size: 0,
            format: ptr::null(),
            format_size: 0,
        };
        let mut a = sys::PJRT_Executable_OptimizedProgram_Args {
            struct_size: sys::PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            executable: self.executable.as_ptr(),
            program: &mut program,
        };
        // SAFETY: valid args on a live executable; a null `code` asks for the size only.
        let err = unsafe { f(&mut a) };
        api.check(err, CTX)?;
        let mut code = vec![0u8; program.code_size];
        program.code = code.as_mut_ptr().cast();
        a.program = &mut program;
        // SAFETY: `code` has the `code_size` bytes the plugin asked for and outlives the call.
        let err = unsafe { f(&mut a) };
        api.check(err, CTX)?;
        code.truncate(program.code_size);
        // SAFETY: the format is a static string of the plugin, `format_size` bytes long.
        let format = unsafe { raw_slice(program.format.cast::<u8>(), program.format_size) };
        Ok((String::from_utf8_lossy(format).into_owned(), code))
    }

    /// The output sharding XLA's SPMD partitioner chose (a tuple of one per output, or the
    /// one output's), read from the optimized program; `None` when the plugin does not give
    /// the program or it does not decode.
    pub fn output_sharding(&self) -> Option<super::hlo::OpSharding> {
        let (format, program) = self.optimized_program().ok()?;
        super::hlo::spmd_output_sharding(&format, &program)
    }

    /// XLA's cost estimate of the compiled program (`PJRT_Executable_GetCostAnalysis`), by
    /// property name as the plugin gives them (the CPU plugin: `flops`, `transcendentals`,
    /// `bytes accessed`, `bytes accessedout{}`, `optimal_seconds`, ...), every number as `f64`
    /// (JAX's `cost_analysis()` dict). Properties that are not numbers are left out.
    pub fn cost_analysis(&self) -> Result<std::collections::BTreeMap<String, f64>> {
        const CTX: &str = "PJRT_Executable_GetCostAnalysis";
        let api = self.client.api();
        let f = api
            .f
            .executable_get_cost_analysis
            .ok_or_else(|| Error::Pjrt {
                code: ErrorCode::Unimplemented,
                context: CTX,
                message: "the plugin does not provide a cost analysis".into(),
            })?;
        let mut a = sys::PJRT_Executable_GetCostAnalysis_Args {
            struct_size: sys::PJRT_Executable_GetCostAnalysis_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            executable: self.executable.as_ptr(),
            num_properties: 0,
            properties: ptr::null(),
        };
        // SAFETY: valid args on a live executable.
        let err = unsafe { f(&mut a) };
        api.check(err, CTX)?;
        // SAFETY: the properties live as long as the executable, which `self` keeps alive.
        let properties = unsafe { raw_slice(a.properties, a.num_properties) };
        let mut costs = std::collections::BTreeMap::new();
        for p in properties {
            // SAFETY: the name is `name_size` bytes owned by the executable.
            let name = unsafe { raw_slice(p.name.cast::<u8>(), p.name_size) };
            // SAFETY: `type_` says which union member the plugin wrote.
            let value = unsafe {
                match p.type_ {
                    sys::PJRT_NamedValue_kFloat => f64::from(p.value.float_value),
                    sys::PJRT_NamedValue_kInt64 => p.value.int64_value as f64,
                    sys::PJRT_NamedValue_kBool => f64::from(u8::from(p.value.bool_value)),
                    _ => continue,
                }
            };
            costs.insert(String::from_utf8_lossy(name).into_owned(), value);
        }
        Ok(costs)
    }

    /// XLA's memory estimate for one execution (`PJRT_Executable_GetCompiledMemoryStats`).
    pub fn compiled_memory_stats(&self) -> Result<MemoryStats> {
        const CTX: &str = "PJRT_Executable_GetCompiledMemoryStats";
        let api = self.client.api();
        let f = api
            .f
            .executable_get_compiled_memory_stats
            .ok_or_else(|| Error::Pjrt {
                code: ErrorCode::Unimplemented,
                context: CTX,
                message: "the plugin does not provide compiled memory stats".into(),
            })?;
        let mut a = sys::PJRT_Executable_GetCompiledMemoryStats_Args {
            struct_size: sys::PJRT_Executable_GetCompiledMemoryStats_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            executable: self.executable.as_ptr(),
            generated_code_size_in_bytes: 0,
            argument_size_in_bytes: 0,
            output_size_in_bytes: 0,
            alias_size_in_bytes: 0,
            temp_size_in_bytes: 0,
            host_generated_code_size_in_bytes: 0,
            host_argument_size_in_bytes: 0,
            host_output_size_in_bytes: 0,
            host_alias_size_in_bytes: 0,
            host_temp_size_in_bytes: 0,
            peak_memory_in_bytes: 0,
        };
        // SAFETY: valid args on a live executable.
        let err = unsafe { f(&mut a) };
        api.check(err, CTX)?;
        Ok(MemoryStats {
            argument_bytes: a.argument_size_in_bytes,
            output_bytes: a.output_size_in_bytes,
            alias_bytes: a.alias_size_in_bytes,
            temp_bytes: a.temp_size_in_bytes,
            generated_code_bytes: a.generated_code_size_in_bytes,
            peak_bytes: a.peak_memory_in_bytes,
        })
    }
}

fn destroy_loaded(client: &Client, raw: NonNull<sys::PJRT_LoadedExecutable>) {
    let api = client.api();
    let mut args = sys::PJRT_LoadedExecutable_Destroy_Args {
        struct_size: sys::PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE,
        extension_start: ptr::null_mut(),
        executable: raw.as_ptr(),
    };
    // SAFETY: we own the executable and destroy it once.
    let err = unsafe { (api.f.loaded_executable_destroy)(&mut args) };
    if let Err(e) = api.check(err, "PJRT_LoadedExecutable_Destroy") {
        log::warn!("{e}");
    }
}

impl Drop for LoadedExecutable {
    fn drop(&mut self) {
        let api = self.client.api();
        let mut args = sys::PJRT_Executable_Destroy_Args {
            struct_size: sys::PJRT_Executable_Destroy_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            executable: self.executable.as_ptr(),
        };
        // SAFETY: we own the executable view and destroy it once.
        let err = unsafe { (api.f.executable_destroy)(&mut args) };
        if let Err(e) = api.check(err, "PJRT_Executable_Destroy") {
            log::warn!("{e}");
        }
        destroy_loaded(&self.client, self.raw);
    }
}

// `Client`'s compiler lives next to `LoadedExecutable`, so that `client.rs` need not import
// this module (the arrow goes executable -> client only).
impl Client {
    /// Compiles a StableHLO program (MLIR text or bytecode) for this client's devices.
    ///
    /// XLA's rejection is [`Error::Compile`] with its message.
    pub fn compile(&self, mlir_text: &str, options: &CompileOptions) -> Result<LoadedExecutable> {
        self.compile_mlir(mlir_text.as_bytes(), options)
    }

    /// Compiles an MLIR module given as bytes: text, MLIR bytecode, or a StableHLO portable
    /// artifact (VHLO bytecode, what `jax.export` stores), which the plugin upgrades itself.
    ///
    /// XLA's rejection is [`Error::Compile`] with its message.
    pub fn compile_mlir(&self, code: &[u8], options: &CompileOptions) -> Result<LoadedExecutable> {
        const FORMAT: &str = "mlir";
        let opts = options.encode();
        let program = sys::PJRT_Program {
            struct_size: sys::PJRT_Program_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            // The plugin reads the code only; the `char*` is the header's.
            code: code.as_ptr() as *mut c_char,
            code_size: code.len(),
            format: FORMAT.as_ptr().cast(),
            format_size: FORMAT.len(),
        };
        let mut args = sys::PJRT_Client_Compile_Args {
            struct_size: sys::PJRT_Client_Compile_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            client: self.raw(),
            program: &program,
            compile_options: opts.as_ptr().cast(),
            compile_options_size: opts.len(),
            executable: ptr::null_mut(),
        };
        // SAFETY: valid args; program text and options outlive the call; the options are
        // never empty (an empty blob aborts the process).
        let err = unsafe { (self.api().f.client_compile)(&mut args) };
        if !err.is_null() {
            let (code, message) = self.api().take_status(err);
            return Err(match code {
                ErrorCode::ResourceExhausted => Error::OutOfMemory {
                    context: "PJRT_Client_Compile",
                    message,
                },
                _ => Error::Compile { message },
            });
        }
        let raw = NonNull::new(args.executable).ok_or_else(|| Error::Compile {
            message: "the plugin returned no executable".into(),
        })?;
        // Compiling first uses statics whose destructors the plugin registers now: the
        // exit handler must run before them.
        super::api::register_exit_handler();
        // SAFETY: a fresh executable of this client, owned by the new `LoadedExecutable`.
        unsafe { LoadedExecutable::from_raw(raw, self.arc()) }
    }

    /// Loads a program serialized by [`LoadedExecutable::serialize`] (of the same plugin
    /// build), with the compile options stored in it.
    pub fn deserialize_and_load(&self, serialized: &[u8]) -> Result<LoadedExecutable> {
        const CTX: &str = "PJRT_Executable_DeserializeAndLoad";
        let f = self
            .api()
            .f
            .executable_deserialize_and_load
            .ok_or_else(|| Error::Pjrt {
                code: ErrorCode::Unimplemented,
                context: CTX,
                message: "the plugin does not deserialize executables".into(),
            })?;
        let mut args = sys::PJRT_Executable_DeserializeAndLoad_Args {
            struct_size: sys::PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            client: self.raw(),
            serialized_executable: serialized.as_ptr().cast(),
            serialized_executable_size: serialized.len(),
            loaded_executable: ptr::null_mut(),
            overridden_serialized_compile_options: ptr::null(),
            overridden_serialized_compile_options_size: 0,
        };
        // SAFETY: valid args; the bytes outlive the call.
        let err = unsafe { f(&mut args) };
        self.api().check(err, CTX)?;
        let raw = NonNull::new(args.loaded_executable).ok_or_else(|| Error::Pjrt {
            code: ErrorCode::Internal,
            context: CTX,
            message: "the plugin returned no executable".into(),
        })?;
        // Compiling first uses statics whose destructors the plugin registers now: the
        // exit handler must run before them.
        super::api::register_exit_handler();
        // SAFETY: a fresh executable of this client, owned by the new `LoadedExecutable`.
        unsafe { LoadedExecutable::from_raw(raw, self.arc()) }
    }
}
