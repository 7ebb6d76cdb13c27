//! Raw declarations of the PJRT C API (`pjrt_c_api.h`), written by hand from the header.
//!
//! Only what jaxrs uses is declared: the `PJRT_Api` function table up to its last entry we
//! call (`PJRT_Buffer_CopyRawToHost`) and the argument structs of the functions we call. A
//! table entry we do not call has the opaque type [`Unused`] (a function pointer, so the
//! layout stays right). Field names follow the header so the two can be read side by side.
//!
//! Every argument struct starts with `struct_size`, which must be set to that struct's
//! `*_STRUCT_SIZE` constant: the offset of its last field plus that field's size (the header's
//! `PJRT_STRUCT_SIZE`), never `size_of` (which includes trailing padding). Plugins built
//! against a newer header use it to tell which fields we know about.
//!
//! Layout facts assumed (checked by the tests at the bottom): C `enum`s are `int`, C `bool`
//! is one byte, `size_t` is `usize`.

#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code
)]

use std::mem::{offset_of, size_of};
use std::os::raw::{c_char, c_int, c_void};

/// The header's `PJRT_STRUCT_SIZE(struct, last_field)`: offset of the last field plus its size.
macro_rules! struct_size {
    ($name:ident, $last:ident: $ty:ty) => {
        offset_of!($name, $last) + size_of::<$ty>()
    };
}

/// Major version of the header these declarations follow.
pub const PJRT_API_MAJOR: i32 = 0;
/// Minor version of the header these declarations follow.
pub const PJRT_API_MINOR: i32 = 81;

// ------------------------------------------------------------------ opaque handles

macro_rules! opaque {
    ($($name:ident),* $(,)?) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
        }
    )*};
}

opaque!(
    PJRT_Error,
    PJRT_Event,
    PJRT_Client,
    PJRT_Device,
    PJRT_Memory,
    PJRT_DeviceDescription,
    PJRT_Executable,
    PJRT_LoadedExecutable,
    PJRT_Buffer,
    PJRT_ExecuteContext,
    PJRT_SendCallbackInfo,
    PJRT_RecvCallbackInfo,
);

#[repr(C)]
pub struct PJRT_Extension_Base {
    pub struct_size: usize,
    pub type_: c_int,
    pub next: *mut PJRT_Extension_Base,
}

// ------------------------------------------------------------------ enums (as C ints)

pub type PJRT_Error_Code = c_int;
pub const PJRT_Error_Code_INVALID_ARGUMENT: PJRT_Error_Code = 3;

pub type PJRT_Buffer_Type = c_int;

pub type PJRT_HostBufferSemantics = c_int;
pub const PJRT_HostBufferSemantics_kImmutableOnlyDuringCall: PJRT_HostBufferSemantics = 0;
pub const PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes: PJRT_HostBufferSemantics = 1;
pub const PJRT_HostBufferSemantics_kImmutableZeroCopy: PJRT_HostBufferSemantics = 2;
pub const PJRT_HostBufferSemantics_kMutableZeroCopy: PJRT_HostBufferSemantics = 3;

pub type PJRT_NamedValue_Type = c_int;
pub const PJRT_NamedValue_kString: PJRT_NamedValue_Type = 0;
pub const PJRT_NamedValue_kInt64: PJRT_NamedValue_Type = 1;
pub const PJRT_NamedValue_kInt64List: PJRT_NamedValue_Type = 2;
pub const PJRT_NamedValue_kFloat: PJRT_NamedValue_Type = 3;
pub const PJRT_NamedValue_kBool: PJRT_NamedValue_Type = 4;

// ------------------------------------------------------------------ version

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PJRT_Api_Version {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub major_version: c_int,
    pub minor_version: c_int,
}
pub const PJRT_Api_Version_STRUCT_SIZE: usize =
    struct_size!(PJRT_Api_Version, minor_version: c_int);

// ------------------------------------------------------------------ errors

#[repr(C)]
pub struct PJRT_Error_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub error: *mut PJRT_Error,
}
pub const PJRT_Error_Destroy_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Error_Destroy_Args, error: *mut PJRT_Error);

#[repr(C)]
pub struct PJRT_Error_Message_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub error: *const PJRT_Error,
    pub message: *const c_char,
    pub message_size: usize,
}
pub const PJRT_Error_Message_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Error_Message_Args, message_size: usize);

#[repr(C)]
pub struct PJRT_Error_GetCode_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub error: *const PJRT_Error,
    pub code: PJRT_Error_Code,
}
pub const PJRT_Error_GetCode_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Error_GetCode_Args, code: PJRT_Error_Code);

// ------------------------------------------------------------------ named values

#[repr(C)]
#[derive(Clone, Copy)]
pub union PJRT_NamedValue_Value {
    pub string_value: *const c_char,
    pub int64_value: i64,
    pub int64_array_value: *const i64,
    pub float_value: f32,
    pub bool_value: bool,
}

#[repr(C)]
pub struct PJRT_NamedValue {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub name: *const c_char,
    pub name_size: usize,
    pub type_: PJRT_NamedValue_Type,
    pub value: PJRT_NamedValue_Value,
    pub value_size: usize,
}
pub const PJRT_NamedValue_STRUCT_SIZE: usize = struct_size!(PJRT_NamedValue, value_size: usize);

// ------------------------------------------------------------------ plugin

#[repr(C)]
pub struct PJRT_Plugin_Initialize_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
}
pub const PJRT_Plugin_Initialize_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Plugin_Initialize_Args, extension_start: *mut PJRT_Extension_Base);

// ------------------------------------------------------------------ events

#[repr(C)]
pub struct PJRT_Event_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub event: *mut PJRT_Event,
}
pub const PJRT_Event_Destroy_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Event_Destroy_Args, event: *mut PJRT_Event);

#[repr(C)]
pub struct PJRT_Event_Await_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub event: *mut PJRT_Event,
}
pub const PJRT_Event_Await_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Event_Await_Args, event: *mut PJRT_Event);

#[repr(C)]
pub struct PJRT_Event_IsReady_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub event: *mut PJRT_Event,
    pub is_ready: bool,
}
pub const PJRT_Event_IsReady_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Event_IsReady_Args, is_ready: bool);

// ------------------------------------------------------------------ client

/// What a callback calls to make the `PJRT_Error` it returns (`message` is copied).
pub type PJRT_CallbackError = Option<
    unsafe extern "C" fn(
        code: PJRT_Error_Code,
        message: *const c_char,
        message_size: usize,
    ) -> *mut PJRT_Error,
>;

/// Frees a value a get callback returned; the plugin calls it once it has copied the value.
pub type PJRT_KeyValueGetCallback_ValueDeleter = Option<unsafe extern "C" fn(value: *mut c_char)>;

#[repr(C)]
pub struct PJRT_KeyValueGetCallback_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub key: *const c_char,
    pub key_size: usize,
    pub timeout_in_ms: c_int,
    /// A pointer to the function pointer (as the header declares it).
    pub callback_error: *mut PJRT_CallbackError,
    pub user_arg: *mut c_void,
    pub value: *mut c_char,
    pub value_size: usize,
    pub value_deleter_callback: PJRT_KeyValueGetCallback_ValueDeleter,
}
pub const PJRT_KeyValueGetCallback_Args_STRUCT_SIZE: usize = struct_size!(
    PJRT_KeyValueGetCallback_Args,
    value_deleter_callback: PJRT_KeyValueGetCallback_ValueDeleter
);

/// Like the get callback, but answers `NOT_FOUND` at once when the key has no value.
#[repr(C)]
pub struct PJRT_KeyValueTryGetCallback_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub key: *const c_char,
    pub key_size: usize,
    pub callback_error: *mut PJRT_CallbackError,
    pub user_arg: *mut c_void,
    pub value: *mut c_char,
    pub value_size: usize,
    pub value_deleter_callback: PJRT_KeyValueGetCallback_ValueDeleter,
}
pub const PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE: usize = struct_size!(
    PJRT_KeyValueTryGetCallback_Args,
    value_deleter_callback: PJRT_KeyValueGetCallback_ValueDeleter
);

#[repr(C)]
pub struct PJRT_KeyValuePutCallback_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub key: *const c_char,
    pub key_size: usize,
    /// Alive only during the call.
    pub value: *const c_char,
    pub value_size: usize,
    pub callback_error: *mut PJRT_CallbackError,
    pub user_arg: *mut c_void,
}
pub const PJRT_KeyValuePutCallback_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_KeyValuePutCallback_Args, user_arg: *mut c_void);

pub type PJRT_KeyValueGetCallback =
    Option<unsafe extern "C" fn(args: *mut PJRT_KeyValueGetCallback_Args) -> *mut PJRT_Error>;
pub type PJRT_KeyValueTryGetCallback =
    Option<unsafe extern "C" fn(args: *mut PJRT_KeyValueTryGetCallback_Args) -> *mut PJRT_Error>;
pub type PJRT_KeyValuePutCallback =
    Option<unsafe extern "C" fn(args: *mut PJRT_KeyValuePutCallback_Args) -> *mut PJRT_Error>;

#[repr(C)]
pub struct PJRT_Client_Create_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub create_options: *const PJRT_NamedValue,
    pub num_options: usize,
    pub kv_get_callback: PJRT_KeyValueGetCallback,
    pub kv_get_user_arg: *mut c_void,
    pub kv_put_callback: PJRT_KeyValuePutCallback,
    pub kv_put_user_arg: *mut c_void,
    pub client: *mut PJRT_Client,
    pub kv_try_get_callback: PJRT_KeyValueTryGetCallback,
    pub kv_try_get_user_arg: *mut c_void,
}
pub const PJRT_Client_Create_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Client_Create_Args, kv_try_get_user_arg: *mut c_void);

#[repr(C)]
pub struct PJRT_Client_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
}
pub const PJRT_Client_Destroy_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Client_Destroy_Args, client: *mut PJRT_Client);

#[repr(C)]
pub struct PJRT_Client_PlatformName_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    pub platform_name: *const c_char,
    pub platform_name_size: usize,
}
pub const PJRT_Client_PlatformName_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Client_PlatformName_Args, platform_name_size: usize);

#[repr(C)]
pub struct PJRT_Client_ProcessIndex_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    pub process_index: c_int,
}
pub const PJRT_Client_ProcessIndex_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Client_ProcessIndex_Args, process_index: c_int);

#[repr(C)]
pub struct PJRT_Client_Devices_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    pub devices: *const *mut PJRT_Device,
    pub num_devices: usize,
}
pub const PJRT_Client_Devices_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Client_Devices_Args, num_devices: usize);

#[repr(C)]
pub struct PJRT_Client_AddressableDevices_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    pub addressable_devices: *const *mut PJRT_Device,
    pub num_addressable_devices: usize,
}
pub const PJRT_Client_AddressableDevices_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Client_AddressableDevices_Args, num_addressable_devices: usize);

#[repr(C)]
pub struct PJRT_Program {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    /// Not written by `PJRT_Client_Compile` despite the `char*`.
    pub code: *mut c_char,
    pub code_size: usize,
    pub format: *const c_char,
    pub format_size: usize,
}
pub const PJRT_Program_STRUCT_SIZE: usize = struct_size!(PJRT_Program, format_size: usize);

#[repr(C)]
pub struct PJRT_Client_Compile_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    pub program: *const PJRT_Program,
    pub compile_options: *const c_char,
    pub compile_options_size: usize,
    pub executable: *mut PJRT_LoadedExecutable,
}
pub const PJRT_Client_Compile_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Client_Compile_Args, executable: *mut PJRT_LoadedExecutable);

#[repr(C)]
pub struct PJRT_Client_BufferFromHostBuffer_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    pub data: *const c_void,
    pub type_: PJRT_Buffer_Type,
    pub dims: *const i64,
    pub num_dims: usize,
    pub byte_strides: *const i64,
    pub num_byte_strides: usize,
    pub host_buffer_semantics: PJRT_HostBufferSemantics,
    pub device: *mut PJRT_Device,
    pub memory: *mut PJRT_Memory,
    pub device_layout: *mut PJRT_Buffer_MemoryLayout,
    pub done_with_host_buffer: *mut PJRT_Event,
    pub buffer: *mut PJRT_Buffer,
}
pub const PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Client_BufferFromHostBuffer_Args, buffer: *mut PJRT_Buffer);

// ------------------------------------------------------------------ devices

#[repr(C)]
pub struct PJRT_DeviceDescription_Id_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub device_description: *mut PJRT_DeviceDescription,
    pub id: c_int,
}
pub const PJRT_DeviceDescription_Id_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_DeviceDescription_Id_Args, id: c_int);

#[repr(C)]
pub struct PJRT_DeviceDescription_ProcessIndex_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub device_description: *mut PJRT_DeviceDescription,
    pub process_index: c_int,
}
pub const PJRT_DeviceDescription_ProcessIndex_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_DeviceDescription_ProcessIndex_Args, process_index: c_int);

#[repr(C)]
pub struct PJRT_DeviceDescription_Kind_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub device_description: *mut PJRT_DeviceDescription,
    pub device_kind: *const c_char,
    pub device_kind_size: usize,
}
pub const PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_DeviceDescription_Kind_Args, device_kind_size: usize);

#[repr(C)]
pub struct PJRT_Device_GetDescription_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub device: *mut PJRT_Device,
    pub device_description: *mut PJRT_DeviceDescription,
}
pub const PJRT_Device_GetDescription_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Device_GetDescription_Args, device_description: *mut PJRT_DeviceDescription);

#[repr(C)]
pub struct PJRT_Device_LocalHardwareId_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub device: *mut PJRT_Device,
    pub local_hardware_id: c_int,
}
pub const PJRT_Device_LocalHardwareId_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Device_LocalHardwareId_Args, local_hardware_id: c_int);

// ------------------------------------------------------------------ executables

#[repr(C)]
pub struct PJRT_Executable_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
}
pub const PJRT_Executable_Destroy_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Executable_Destroy_Args, executable: *mut PJRT_Executable);

#[repr(C)]
pub struct PJRT_LoadedExecutable_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_LoadedExecutable,
}
pub const PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_LoadedExecutable_Destroy_Args, executable: *mut PJRT_LoadedExecutable);

#[repr(C)]
pub struct PJRT_LoadedExecutable_GetExecutable_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub loaded_executable: *mut PJRT_LoadedExecutable,
    pub executable: *mut PJRT_Executable,
}
pub const PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_LoadedExecutable_GetExecutable_Args, executable: *mut PJRT_Executable);

#[repr(C)]
pub struct PJRT_LoadedExecutable_AddressableDevices_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_LoadedExecutable,
    pub addressable_devices: *const *mut PJRT_Device,
    pub num_addressable_devices: usize,
}
pub const PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_LoadedExecutable_AddressableDevices_Args, num_addressable_devices: usize);

#[repr(C)]
pub struct PJRT_Executable_NumOutputs_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
    pub num_outputs: usize,
}
pub const PJRT_Executable_NumOutputs_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Executable_NumOutputs_Args, num_outputs: usize);

/// `program.code` null asks for the size (`code_size`); a buffer of that size is then filled.
#[repr(C)]
pub struct PJRT_Executable_OptimizedProgram_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
    pub program: *mut PJRT_Program,
}
pub const PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Executable_OptimizedProgram_Args, program: *mut PJRT_Program);

#[repr(C)]
pub struct PJRT_Executable_GetCostAnalysis_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
    pub num_properties: usize,
    /// Owned by the executable, and lives as long as it.
    pub properties: *const PJRT_NamedValue,
}
pub const PJRT_Executable_GetCostAnalysis_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Executable_GetCostAnalysis_Args, properties: *const PJRT_NamedValue);

#[repr(C)]
pub struct PJRT_Executable_GetCompiledMemoryStats_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_Executable,
    pub generated_code_size_in_bytes: i64,
    pub argument_size_in_bytes: i64,
    pub output_size_in_bytes: i64,
    pub alias_size_in_bytes: i64,
    pub temp_size_in_bytes: i64,
    pub host_generated_code_size_in_bytes: i64,
    pub host_argument_size_in_bytes: i64,
    pub host_output_size_in_bytes: i64,
    pub host_alias_size_in_bytes: i64,
    pub host_temp_size_in_bytes: i64,
    pub peak_memory_in_bytes: i64,
}
pub const PJRT_Executable_GetCompiledMemoryStats_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Executable_GetCompiledMemoryStats_Args, peak_memory_in_bytes: i64);

#[repr(C)]
pub struct PJRT_ExecuteOptions {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub send_callbacks: *mut *mut PJRT_SendCallbackInfo,
    pub recv_callbacks: *mut *mut PJRT_RecvCallbackInfo,
    pub num_send_ops: usize,
    pub num_recv_ops: usize,
    pub launch_id: c_int,
    pub non_donatable_input_indices: *const i64,
    pub num_non_donatable_input_indices: usize,
    pub context: *mut PJRT_ExecuteContext,
    pub call_location: *const c_char,
    pub num_tasks: usize,
    pub task_ids: *mut c_int,
    pub incarnation_ids: *mut i64,
}
pub const PJRT_ExecuteOptions_STRUCT_SIZE: usize =
    struct_size!(PJRT_ExecuteOptions, incarnation_ids: *mut i64);

opaque!(PJRT_SerializedExecutable);

#[repr(C)]
pub struct PJRT_Executable_Serialize_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *const PJRT_Executable,
    /// Lives only as long as `serialized_executable`.
    pub serialized_bytes: *const c_char,
    pub serialized_bytes_size: usize,
    pub serialized_executable: *mut PJRT_SerializedExecutable,
    /// Frees `serialized_executable` (and so `serialized_bytes`); called once.
    pub serialized_executable_deleter: Option<unsafe extern "C" fn(*mut PJRT_SerializedExecutable)>,
}
pub const PJRT_Executable_Serialize_Args_STRUCT_SIZE: usize = struct_size!(
    PJRT_Executable_Serialize_Args,
    serialized_executable_deleter: Option<unsafe extern "C" fn(*mut PJRT_SerializedExecutable)>
);

#[repr(C)]
pub struct PJRT_Executable_DeserializeAndLoad_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub client: *mut PJRT_Client,
    pub serialized_executable: *const c_char,
    pub serialized_executable_size: usize,
    pub loaded_executable: *mut PJRT_LoadedExecutable,
    /// Null: the options stored in the serialization.
    pub overridden_serialized_compile_options: *const c_char,
    pub overridden_serialized_compile_options_size: usize,
}
pub const PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE: usize = struct_size!(
    PJRT_Executable_DeserializeAndLoad_Args,
    overridden_serialized_compile_options_size: usize
);

#[repr(C)]
pub struct PJRT_LoadedExecutable_Execute_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub executable: *mut PJRT_LoadedExecutable,
    pub options: *mut PJRT_ExecuteOptions,
    pub argument_lists: *const *const *mut PJRT_Buffer,
    pub num_devices: usize,
    pub num_args: usize,
    pub output_lists: *const *mut *mut PJRT_Buffer,
    pub device_complete_events: *mut *mut PJRT_Event,
    pub execute_device: *mut PJRT_Device,
}
pub const PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_LoadedExecutable_Execute_Args, execute_device: *mut PJRT_Device);

// ------------------------------------------------------------------ buffers

#[repr(C)]
pub struct PJRT_Buffer_Destroy_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
}
pub const PJRT_Buffer_Destroy_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_Destroy_Args, buffer: *mut PJRT_Buffer);

#[repr(C)]
pub struct PJRT_Buffer_ElementType_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub type_: PJRT_Buffer_Type,
}
pub const PJRT_Buffer_ElementType_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_ElementType_Args, type_: PJRT_Buffer_Type);

#[repr(C)]
pub struct PJRT_Buffer_Dimensions_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub dims: *const i64,
    pub num_dims: usize,
}
pub const PJRT_Buffer_Dimensions_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_Dimensions_Args, num_dims: usize);

#[repr(C)]
pub struct PJRT_Buffer_Device_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub device: *mut PJRT_Device,
}
pub const PJRT_Buffer_Device_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_Device_Args, device: *mut PJRT_Device);

#[repr(C)]
pub struct PJRT_Buffer_IsDeleted_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub is_deleted: bool,
}
pub const PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_IsDeleted_Args, is_deleted: bool);

#[repr(C)]
pub struct PJRT_Buffer_ReadyEvent_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub event: *mut PJRT_Event,
}
pub const PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_ReadyEvent_Args, event: *mut PJRT_Event);

#[repr(C)]
pub struct PJRT_Buffer_CopyRawToHost_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub dst: *mut c_void,
    pub offset: i64,
    pub transfer_size: i64,
    pub event: *mut PJRT_Event,
}
pub const PJRT_Buffer_CopyRawToHost_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_CopyRawToHost_Args, event: *mut PJRT_Event);

#[repr(C)]
pub struct PJRT_Buffer_CopyToDevice_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub dst_device: *mut PJRT_Device,
    pub dst_buffer: *mut PJRT_Buffer,
}
pub const PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_CopyToDevice_Args, dst_buffer: *mut PJRT_Buffer);

#[repr(C)]
pub struct PJRT_Buffer_IsOnCpu_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub is_on_cpu: bool,
}
pub const PJRT_Buffer_IsOnCpu_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_IsOnCpu_Args, is_on_cpu: bool);

#[repr(C)]
pub struct PJRT_Buffer_OnDeviceSizeInBytes_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub on_device_size_in_bytes: usize,
}
pub const PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes: usize);

pub type PJRT_Buffer_MemoryLayout_Type = c_int;
pub const PJRT_Buffer_MemoryLayout_Type_Tiled: PJRT_Buffer_MemoryLayout_Type = 0;
pub const PJRT_Buffer_MemoryLayout_Type_Strides: PJRT_Buffer_MemoryLayout_Type = 1;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PJRT_Buffer_MemoryLayout_Tiled {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub minor_to_major: *const i64,
    pub minor_to_major_size: usize,
    pub tile_dims: *const i64,
    pub tile_dim_sizes: *const usize,
    pub num_tiles: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PJRT_Buffer_MemoryLayout_Strides {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub byte_strides: *const i64,
    pub num_byte_strides: usize,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union PJRT_Buffer_MemoryLayout_Union {
    pub tiled: PJRT_Buffer_MemoryLayout_Tiled,
    pub strides: PJRT_Buffer_MemoryLayout_Strides,
}

/// The header's anonymous union is the middle field; `type_` says which member is live.
#[repr(C)]
pub struct PJRT_Buffer_MemoryLayout {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub u: PJRT_Buffer_MemoryLayout_Union,
    pub type_: PJRT_Buffer_MemoryLayout_Type,
}
pub const PJRT_Buffer_MemoryLayout_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_MemoryLayout, type_: PJRT_Buffer_MemoryLayout_Type);

#[repr(C)]
pub struct PJRT_Buffer_GetMemoryLayout_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    /// Out; the pointers in it live as long as the buffer.
    pub layout: PJRT_Buffer_MemoryLayout,
}
pub const PJRT_Buffer_GetMemoryLayout_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_GetMemoryLayout_Args, layout: PJRT_Buffer_MemoryLayout);

/// Shared by `PJRT_Buffer_IncreaseExternalReferenceCount` and `..Decrease..`.
#[repr(C)]
pub struct PJRT_Buffer_ExternalReferenceCount_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
}
pub const PJRT_Buffer_ExternalReferenceCount_Args_STRUCT_SIZE: usize =
    struct_size!(PJRT_Buffer_ExternalReferenceCount_Args, buffer: *mut PJRT_Buffer);

#[repr(C)]
pub struct PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub buffer: *mut PJRT_Buffer,
    pub device_memory_ptr: *mut c_void,
}
pub const PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE: usize = struct_size!(
    PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args,
    device_memory_ptr: *mut c_void
);

// ------------------------------------------------------------------ the function table

/// A table entry jaxrs never calls: only its size (one function pointer) matters.
pub type Unused = Option<unsafe extern "C" fn()>;

/// A table entry: `PJRT_Error* f(Args*)`, possibly null in a plugin that lacks it.
pub type Fn<A> = Option<unsafe extern "C" fn(args: *mut A) -> *mut PJRT_Error>;
/// The two entries that return nothing.
pub type VoidFn<A> = Option<unsafe extern "C" fn(args: *mut A)>;

/// `PJRT_Api`, up to `PJRT_Buffer_CopyRawToHost`. A plugin's table may be longer (newer
/// header); its `struct_size` must cover at least [`PJRT_Api_STRUCT_SIZE`].
#[repr(C)]
pub struct PJRT_Api {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub pjrt_api_version: PJRT_Api_Version,

    pub PJRT_Error_Destroy: VoidFn<PJRT_Error_Destroy_Args>,
    pub PJRT_Error_Message: VoidFn<PJRT_Error_Message_Args>,
    pub PJRT_Error_GetCode: Fn<PJRT_Error_GetCode_Args>,

    pub PJRT_Plugin_Initialize: Fn<PJRT_Plugin_Initialize_Args>,
    pub PJRT_Plugin_Attributes: Unused,

    pub PJRT_Event_Destroy: Fn<PJRT_Event_Destroy_Args>,
    pub PJRT_Event_IsReady: Fn<PJRT_Event_IsReady_Args>,
    pub PJRT_Event_Error: Unused,
    pub PJRT_Event_Await: Fn<PJRT_Event_Await_Args>,
    pub PJRT_Event_OnReady: Unused,

    pub PJRT_Client_Create: Fn<PJRT_Client_Create_Args>,
    pub PJRT_Client_Destroy: Fn<PJRT_Client_Destroy_Args>,
    pub PJRT_Client_PlatformName: Fn<PJRT_Client_PlatformName_Args>,
    pub PJRT_Client_ProcessIndex: Fn<PJRT_Client_ProcessIndex_Args>,
    pub PJRT_Client_PlatformVersion: Unused,
    pub PJRT_Client_Devices: Fn<PJRT_Client_Devices_Args>,
    pub PJRT_Client_AddressableDevices: Fn<PJRT_Client_AddressableDevices_Args>,
    pub PJRT_Client_LookupDevice: Unused,
    pub PJRT_Client_LookupAddressableDevice: Unused,
    pub PJRT_Client_AddressableMemories: Unused,
    pub PJRT_Client_Compile: Fn<PJRT_Client_Compile_Args>,
    pub PJRT_Client_DefaultDeviceAssignment: Unused,
    pub PJRT_Client_BufferFromHostBuffer: Fn<PJRT_Client_BufferFromHostBuffer_Args>,

    pub PJRT_DeviceDescription_Id: Fn<PJRT_DeviceDescription_Id_Args>,
    pub PJRT_DeviceDescription_ProcessIndex: Fn<PJRT_DeviceDescription_ProcessIndex_Args>,
    pub PJRT_DeviceDescription_Attributes: Unused,
    pub PJRT_DeviceDescription_Kind: Fn<PJRT_DeviceDescription_Kind_Args>,
    pub PJRT_DeviceDescription_DebugString: Unused,
    pub PJRT_DeviceDescription_ToString: Unused,

    pub PJRT_Device_GetDescription: Fn<PJRT_Device_GetDescription_Args>,
    pub PJRT_Device_IsAddressable: Unused,
    pub PJRT_Device_LocalHardwareId: Fn<PJRT_Device_LocalHardwareId_Args>,
    pub PJRT_Device_AddressableMemories: Unused,
    pub PJRT_Device_DefaultMemory: Unused,
    pub PJRT_Device_MemoryStats: Unused,

    pub PJRT_Memory_Id: Unused,
    pub PJRT_Memory_Kind: Unused,
    pub PJRT_Memory_DebugString: Unused,
    pub PJRT_Memory_ToString: Unused,
    pub PJRT_Memory_AddressableByDevices: Unused,

    pub PJRT_Executable_Destroy: Fn<PJRT_Executable_Destroy_Args>,
    pub PJRT_Executable_Name: Unused,
    pub PJRT_Executable_NumReplicas: Unused,
    pub PJRT_Executable_NumPartitions: Unused,
    pub PJRT_Executable_NumOutputs: Fn<PJRT_Executable_NumOutputs_Args>,
    pub PJRT_Executable_SizeOfGeneratedCodeInBytes: Unused,
    pub PJRT_Executable_GetCostAnalysis: Fn<PJRT_Executable_GetCostAnalysis_Args>,
    pub PJRT_Executable_OutputMemoryKinds: Unused,
    pub PJRT_Executable_OptimizedProgram: Fn<PJRT_Executable_OptimizedProgram_Args>,
    pub PJRT_Executable_Serialize: Fn<PJRT_Executable_Serialize_Args>,

    pub PJRT_LoadedExecutable_Destroy: Fn<PJRT_LoadedExecutable_Destroy_Args>,
    pub PJRT_LoadedExecutable_GetExecutable: Fn<PJRT_LoadedExecutable_GetExecutable_Args>,
    pub PJRT_LoadedExecutable_AddressableDevices: Fn<PJRT_LoadedExecutable_AddressableDevices_Args>,
    pub PJRT_LoadedExecutable_Delete: Unused,
    pub PJRT_LoadedExecutable_IsDeleted: Unused,
    pub PJRT_LoadedExecutable_Execute: Fn<PJRT_LoadedExecutable_Execute_Args>,
    pub PJRT_Executable_DeserializeAndLoad: Fn<PJRT_Executable_DeserializeAndLoad_Args>,
    pub PJRT_LoadedExecutable_Fingerprint: Unused,

    pub PJRT_Buffer_Destroy: Fn<PJRT_Buffer_Destroy_Args>,
    pub PJRT_Buffer_ElementType: Fn<PJRT_Buffer_ElementType_Args>,
    pub PJRT_Buffer_Dimensions: Fn<PJRT_Buffer_Dimensions_Args>,
    pub PJRT_Buffer_UnpaddedDimensions: Unused,
    pub PJRT_Buffer_DynamicDimensionIndices: Unused,
    pub PJRT_Buffer_GetMemoryLayout: Fn<PJRT_Buffer_GetMemoryLayout_Args>,
    pub PJRT_Buffer_OnDeviceSizeInBytes: Fn<PJRT_Buffer_OnDeviceSizeInBytes_Args>,
    pub PJRT_Buffer_Device: Fn<PJRT_Buffer_Device_Args>,
    pub PJRT_Buffer_Memory: Unused,
    pub PJRT_Buffer_Delete: Unused,
    pub PJRT_Buffer_IsDeleted: Fn<PJRT_Buffer_IsDeleted_Args>,
    pub PJRT_Buffer_CopyToDevice: Fn<PJRT_Buffer_CopyToDevice_Args>,
    pub PJRT_Buffer_ToHostBuffer: Unused,
    pub PJRT_Buffer_IsOnCpu: Fn<PJRT_Buffer_IsOnCpu_Args>,
    pub PJRT_Buffer_ReadyEvent: Fn<PJRT_Buffer_ReadyEvent_Args>,
    pub PJRT_Buffer_UnsafePointer: Unused,
    pub PJRT_Buffer_IncreaseExternalReferenceCount: Fn<PJRT_Buffer_ExternalReferenceCount_Args>,
    pub PJRT_Buffer_DecreaseExternalReferenceCount: Fn<PJRT_Buffer_ExternalReferenceCount_Args>,
    pub PJRT_Buffer_OpaqueDeviceMemoryDataPointer:
        Fn<PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>,

    pub PJRT_CopyToDeviceStream_Destroy: Unused,
    pub PJRT_CopyToDeviceStream_AddChunk: Unused,
    pub PJRT_CopyToDeviceStream_TotalBytes: Unused,
    pub PJRT_CopyToDeviceStream_GranuleSize: Unused,
    pub PJRT_CopyToDeviceStream_CurrentBytes: Unused,

    pub PJRT_TopologyDescription_Create: Unused,
    pub PJRT_TopologyDescription_Destroy: Unused,
    pub PJRT_TopologyDescription_PlatformName: Unused,
    pub PJRT_TopologyDescription_PlatformVersion: Unused,
    pub PJRT_TopologyDescription_GetDeviceDescriptions: Unused,
    pub PJRT_TopologyDescription_Serialize: Unused,
    pub PJRT_TopologyDescription_Attributes: Unused,

    pub PJRT_Compile: Unused,

    pub PJRT_Executable_OutputElementTypes: Unused,
    pub PJRT_Executable_OutputDimensions: Unused,

    pub PJRT_Buffer_CopyToMemory: Unused,

    pub PJRT_Client_CreateViewOfDeviceBuffer: Unused,

    pub PJRT_Executable_Fingerprint: Unused,

    pub PJRT_Client_TopologyDescription: Unused,

    pub PJRT_Executable_GetCompiledMemoryStats: Fn<PJRT_Executable_GetCompiledMemoryStats_Args>,

    pub PJRT_Memory_Kind_Id: Unused,

    pub PJRT_ExecuteContext_Create: Unused,
    pub PJRT_ExecuteContext_Destroy: Unused,
    pub PJRT_Buffer_CopyRawToHost: Fn<PJRT_Buffer_CopyRawToHost_Args>,
}
/// How much of a plugin's `PJRT_Api` these declarations read.
pub const PJRT_Api_STRUCT_SIZE: usize =
    struct_size!(PJRT_Api, PJRT_Buffer_CopyRawToHost: Fn<PJRT_Buffer_CopyRawToHost_Args>);

/// The one symbol a plugin exports.
pub type GetPjrtApiFn = unsafe extern "C" fn() -> *const PJRT_Api;

// ------------------------------------------------------------------ FFI extension
// (`pjrt_c_api_ffi_extension.h`)

/// `PJRT_Extension_Type_FFI` in `pjrt_c_api.h`'s `PJRT_Extension_Type` enum.
const PJRT_EXTENSION_TYPE_FFI: c_int = 5;

#[repr(C)]
pub struct PJRT_FFI_Register_Handler_Args {
    pub struct_size: usize,
    pub target_name: *const c_char,
    pub target_name_size: usize,
    /// Typed FFI handlers only (the header's older `int api_version` field before it is gone:
    /// the CPU plugin of PJRT API 0.115 reads this layout).
    pub handler: *mut c_void,
    pub platform_name: *const c_char,
    pub platform_name_size: usize,
    pub traits: c_int,
}
pub const PJRT_FFI_Register_Handler_Args_STRUCT_SIZE: usize =
    offset_of!(PJRT_FFI_Register_Handler_Args, traits) + size_of::<c_int>();

pub type RegisterHandlerFn =
    unsafe extern "C" fn(*mut PJRT_FFI_Register_Handler_Args) -> *mut PJRT_Error;

#[repr(C)]
pub struct PJRT_FFI_Extension {
    base: PJRT_Extension_Base,
    type_id_register: *mut c_void,
    user_data_add: *mut c_void,
    register_handler: Option<RegisterHandlerFn>,
}

/// Finds `register_handler` of the plugin's FFI extension (extension version 2 or newer).
///
/// # Safety
/// `api` is a plugin's `PJRT_Api` table, whose extension chain is well formed.
pub unsafe fn find_register_handler(api: &PJRT_Api) -> Option<RegisterHandlerFn> {
    let mut ext = api.extension_start;
    while !ext.is_null() {
        // SAFETY: every extension starts with a PJRT_Extension_Base (the caller's promise).
        let base = unsafe { &*ext };
        if base.type_ == PJRT_EXTENSION_TYPE_FFI {
            let needed = offset_of!(PJRT_FFI_Extension, register_handler) + size_of::<usize>();
            if base.struct_size < needed {
                return None;
            }
            // SAFETY: the struct is an FFI extension at least as long as our declaration.
            return unsafe { (*(ext as *const PJRT_FFI_Extension)).register_handler };
        }
        ext = base.next;
    }
    None
}

/// The type of each extension in `api`'s chain, in order (`PJRT_Extension_Type`: 1 the
/// profiler, 5 the FFI, ...).
///
/// # Safety
/// `api` is a plugin's `PJRT_Api` table, whose extension chain is well formed.
pub unsafe fn extension_types(api: &PJRT_Api) -> Vec<c_int> {
    let mut types = Vec::new();
    let mut ext = api.extension_start;
    // A chain is a handful long; the bound only stops a cyclic one.
    while !ext.is_null() && types.len() < 64 {
        // SAFETY: every extension starts with a PJRT_Extension_Base (the caller's promise).
        let base = unsafe { &*ext };
        types.push(base.type_);
        ext = base.next;
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_sizes_follow_the_header() {
        // Values computed by hand from pjrt_c_api.h for LP64 (x86-64 / aarch64 Linux).
        assert_eq!(PJRT_Api_Version_STRUCT_SIZE, 24);
        assert_eq!(PJRT_Error_Message_Args_STRUCT_SIZE, 40);
        assert_eq!(PJRT_Error_GetCode_Args_STRUCT_SIZE, 28);
        assert_eq!(PJRT_NamedValue_STRUCT_SIZE, 56);
        assert_eq!(PJRT_Plugin_Initialize_Args_STRUCT_SIZE, 16);
        assert_eq!(PJRT_Client_Create_Args_STRUCT_SIZE, 88);
        // `timeout_in_ms` is an int padded to 8 before `callback_error`.
        assert_eq!(
            offset_of!(PJRT_KeyValueGetCallback_Args, callback_error),
            40
        );
        assert_eq!(PJRT_KeyValueGetCallback_Args_STRUCT_SIZE, 80);
        assert_eq!(PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE, 72);
        assert_eq!(PJRT_KeyValuePutCallback_Args_STRUCT_SIZE, 64);
        assert_eq!(PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE, 120);
        assert_eq!(PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE, 25);
        assert_eq!(PJRT_ExecuteOptions_STRUCT_SIZE, 112);
        assert_eq!(PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE, 80);
        assert_eq!(PJRT_Executable_GetCompiledMemoryStats_Args_STRUCT_SIZE, 112);
        assert_eq!(PJRT_Executable_GetCostAnalysis_Args_STRUCT_SIZE, 40);
        assert_eq!(PJRT_Buffer_CopyRawToHost_Args_STRUCT_SIZE, 56);
        assert_eq!(PJRT_Buffer_IsOnCpu_Args_STRUCT_SIZE, 25);
        assert_eq!(PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE, 32);
        // Tiled is the larger union member: 7 words. `type` follows at 16 + 56.
        assert_eq!(size_of::<PJRT_Buffer_MemoryLayout_Union>(), 56);
        assert_eq!(offset_of!(PJRT_Buffer_MemoryLayout, type_), 72);
        assert_eq!(PJRT_Buffer_MemoryLayout_STRUCT_SIZE, 76);
        assert_eq!(size_of::<PJRT_Buffer_MemoryLayout>(), 80);
        assert_eq!(PJRT_Buffer_GetMemoryLayout_Args_STRUCT_SIZE, 104);
        assert_eq!(PJRT_Buffer_ExternalReferenceCount_Args_STRUCT_SIZE, 24);
        assert_eq!(
            PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE,
            32
        );
        // 3 header words, 3 version words, then one pointer per table entry.
        assert_eq!(offset_of!(PJRT_Api, PJRT_Error_Destroy), 40);
        assert_eq!(
            offset_of!(PJRT_Api, PJRT_Executable_GetCompiledMemoryStats),
            40 + 8 * 96
        );
        assert_eq!(PJRT_Api_STRUCT_SIZE, 40 + 8 * 101);
        assert_eq!(size_of::<PJRT_NamedValue_Value>(), 8);
    }
}
