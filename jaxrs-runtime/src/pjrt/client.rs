//! `Client` (owns a `PJRT_Client`) and `Device` (a client's device, by reference).

use super::api::Api;
use super::kv::{self, KeyValueStore, KvUserArg};
use super::sys;
use super::util::{raw_slice, string_from};
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use std::os::raw::c_char;
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex, Weak};

/// A PJRT client: the devices of one plugin, and the factory of buffers and executables.
///
/// Dropped when the last `Arc` goes; every `Buffer` and `LoadedExecutable` holds one, so the
/// client outlives them.
pub struct Client {
    api: Arc<Api>,
    raw: NonNull<sys::PJRT_Client>,
    platform_name: String,
    /// The devices this process drives (addressable), in the plugin's order.
    devices: Vec<Device>,
    /// Every device of every process, in the plugin's order (the addressable ones among them).
    global_devices: Vec<Device>,
    process_index: i32,
    me: Weak<Client>,
    /// The key-value store the plugin's callbacks reach; a field, so it is dropped after
    /// `Drop::drop` destroyed the client.
    _kv: Option<KvUserArg>,
}

// SAFETY: PJRT clients are thread-safe (the C API's contract); the other fields are plain data.
unsafe impl Send for Client {}
unsafe impl Sync for Client {}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("platform_name", &self.platform_name)
            .field("devices", &self.devices)
            .finish()
    }
}

// `buffer_from_host` is in `buffer.rs` and `compile` in `executable.rs`: those modules import
// this one, so this one imports neither.
impl Client {
    /// Creates a client. `cpu_device_count` is passed as the create option `cpu_device_count`
    /// (int64) only when `Some` (a CPU plugin's option; others may reject it).
    pub fn new(api: Arc<Api>, cpu_device_count: Option<i64>) -> Result<Arc<Client>> {
        let options: Vec<(&str, i64)> = cpu_device_count
            .map(|n| ("cpu_device_count", n))
            .into_iter()
            .collect();
        Client::with_options(api, &options, None)
    }

    /// Creates a client with int64 create options (`("num_nodes", 2)`, `("node_id", 1)`) and,
    /// when given, a key-value store that the plugin reaches through `PJRT_Client_Create`'s
    /// `kv_*_callback`s. The client keeps the store alive until after it is destroyed.
    pub fn with_options(
        api: Arc<Api>,
        options: &[(&str, i64)],
        kv_store: Option<Arc<dyn KeyValueStore>>,
    ) -> Result<Arc<Client>> {
        let named: Vec<sys::PJRT_NamedValue> = options
            .iter()
            .map(|(name, value)| sys::PJRT_NamedValue {
                struct_size: sys::PJRT_NamedValue_STRUCT_SIZE,
                extension_start: ptr::null_mut(),
                name: name.as_ptr().cast::<c_char>(),
                name_size: name.len(),
                type_: sys::PJRT_NamedValue_kInt64,
                value: sys::PJRT_NamedValue_Value {
                    int64_value: *value,
                },
                value_size: 1,
            })
            .collect();
        let kv = kv_store.map(KvUserArg::new);
        let user_arg = kv.as_ref().map_or(ptr::null_mut(), KvUserArg::as_ptr);
        let mut args = sys::PJRT_Client_Create_Args {
            struct_size: sys::PJRT_Client_Create_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            create_options: if named.is_empty() {
                ptr::null()
            } else {
                named.as_ptr()
            },
            num_options: named.len(),
            kv_get_callback: kv.as_ref().map(|_| kv::kv_get as _),
            kv_get_user_arg: user_arg,
            kv_put_callback: kv.as_ref().map(|_| kv::kv_put as _),
            kv_put_user_arg: user_arg,
            client: ptr::null_mut(),
            kv_try_get_callback: kv.as_ref().map(|_| kv::kv_try_get as _),
            kv_try_get_user_arg: user_arg,
        };
        // SAFETY: valid args; `named` (and the names it points to) outlive the call, and
        // `kv`, the callbacks' user_arg, outlives the client (it is moved into it below, and
        // on a failure here it is dropped after the guard destroys the client).
        let err = unsafe { (api.f.client_create)(&mut args) };
        api.check(err, "PJRT_Client_Create")?;
        let raw = NonNull::new(args.client).ok_or_else(|| Error::Pjrt {
            code: ErrorCode::Internal,
            context: "PJRT_Client_Create",
            message: "the plugin returned no client".into(),
        })?;
        // From here on, `guard` destroys the client if describing it fails.
        let guard = RawClientGuard {
            api: &api,
            raw: Some(raw),
        };
        let platform_name = platform_name(&api, raw)?;
        let devices = addressable_devices(&api, raw, &platform_name)?;
        let global_devices = global_devices(&api, raw, &platform_name, &devices)?;
        let process_index = process_index(&api, raw)?;
        std::mem::forget(guard);
        Ok(Arc::new_cyclic(|me| Client {
            api,
            raw,
            platform_name,
            devices,
            global_devices,
            process_index,
            me: me.clone(),
            _kv: kv,
        }))
    }

    /// The platform's name (`"cpu"`, `"cuda"`, ...).
    pub fn platform_name(&self) -> String {
        self.platform_name.clone()
    }

    /// The addressable devices, in the plugin's order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// Every device of every process of a multi-process run, in the plugin's order (the
    /// addressable ones in it are the same handles as [`Client::devices`]'); in one process,
    /// the addressable devices.
    pub fn global_devices(&self) -> &[Device] {
        &self.global_devices
    }

    /// This process's index among the processes of a multi-process run (0 in one process).
    pub fn process_index(&self) -> i32 {
        self.process_index
    }

    /// The plugin this client runs on.
    pub fn api(&self) -> &Arc<Api> {
        &self.api
    }

    pub(crate) fn raw(&self) -> *mut sys::PJRT_Client {
        self.raw.as_ptr()
    }

    pub(crate) fn arc(&self) -> Arc<Client> {
        // Cannot fail: `self` is alive, so its Arc's strong count is non-zero.
        self.me.upgrade().expect("a live client has a live Arc")
    }

    /// The device of ours with this raw pointer.
    pub(crate) fn device_of(&self, raw: *mut sys::PJRT_Device) -> Option<Device> {
        self.devices.iter().copied().find(|d| d.raw == raw)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        destroy_client(&self.api, self.raw);
    }
}

fn destroy_client(api: &Api, raw: NonNull<sys::PJRT_Client>) {
    let mut args = sys::PJRT_Client_Destroy_Args {
        struct_size: sys::PJRT_Client_Destroy_Args_STRUCT_SIZE,
        extension_start: ptr::null_mut(),
        client: raw.as_ptr(),
    };
    // SAFETY: we own the client, and nothing that refers to it is left.
    let err = unsafe { (api.f.client_destroy)(&mut args) };
    if let Err(e) = api.check(err, "PJRT_Client_Destroy") {
        log::warn!("{e}");
    }
}

struct RawClientGuard<'a> {
    api: &'a Api,
    raw: Option<NonNull<sys::PJRT_Client>>,
}

impl Drop for RawClientGuard<'_> {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            destroy_client(self.api, raw);
        }
    }
}

fn platform_name(api: &Api, raw: NonNull<sys::PJRT_Client>) -> Result<String> {
    let mut args = sys::PJRT_Client_PlatformName_Args {
        struct_size: sys::PJRT_Client_PlatformName_Args_STRUCT_SIZE,
        extension_start: ptr::null_mut(),
        client: raw.as_ptr(),
        platform_name: ptr::null(),
        platform_name_size: 0,
    };
    // SAFETY: valid args on a live client.
    let err = unsafe { (api.f.client_platform_name)(&mut args) };
    api.check(err, "PJRT_Client_PlatformName")?;
    // SAFETY: the name lives as long as the client and is copied here.
    Ok(unsafe { string_from(args.platform_name, args.platform_name_size) })
}

fn addressable_devices(
    api: &Api,
    raw: NonNull<sys::PJRT_Client>,
    platform_name: &str,
) -> Result<Vec<Device>> {
    let mut args = sys::PJRT_Client_AddressableDevices_Args {
        struct_size: sys::PJRT_Client_AddressableDevices_Args_STRUCT_SIZE,
        extension_start: ptr::null_mut(),
        client: raw.as_ptr(),
        addressable_devices: ptr::null(),
        num_addressable_devices: 0,
    };
    // SAFETY: valid args on a live client.
    let err = unsafe { (api.f.client_addressable_devices)(&mut args) };
    api.check(err, "PJRT_Client_AddressableDevices")?;
    // SAFETY: the plugin returns an array of `num_addressable_devices` device pointers.
    let raws = unsafe { raw_slice(args.addressable_devices, args.num_addressable_devices) };
    let platform = intern(platform_name.to_string());
    raws.iter()
        .map(|&d| Device::describe(api, d, platform))
        .collect()
}

/// Every device of the client, addressable or not: the addressable ones are taken from
/// `addressable` (so both lists hold the same handles), the others described afresh.
fn global_devices(
    api: &Api,
    raw: NonNull<sys::PJRT_Client>,
    platform_name: &str,
    addressable: &[Device],
) -> Result<Vec<Device>> {
    let mut args = sys::PJRT_Client_Devices_Args {
        struct_size: sys::PJRT_Client_Devices_Args_STRUCT_SIZE,
        extension_start: ptr::null_mut(),
        client: raw.as_ptr(),
        devices: ptr::null(),
        num_devices: 0,
    };
    // SAFETY: valid args on a live client.
    let err = unsafe { (api.f.client_devices)(&mut args) };
    api.check(err, "PJRT_Client_Devices")?;
    // SAFETY: the plugin returns an array of `num_devices` device pointers.
    let raws = unsafe { raw_slice(args.devices, args.num_devices) };
    let platform = intern(platform_name.to_string());
    raws.iter()
        .map(|&d| match addressable.iter().find(|a| a.raw == d) {
            Some(a) => Ok(*a),
            None => Device::describe(api, d, platform),
        })
        .collect()
}

fn process_index(api: &Api, raw: NonNull<sys::PJRT_Client>) -> Result<i32> {
    let mut args = sys::PJRT_Client_ProcessIndex_Args {
        struct_size: sys::PJRT_Client_ProcessIndex_Args_STRUCT_SIZE,
        extension_start: ptr::null_mut(),
        client: raw.as_ptr(),
        process_index: 0,
    };
    // SAFETY: valid args on a live client.
    let err = unsafe { (api.f.client_process_index)(&mut args) };
    api.check(err, "PJRT_Client_ProcessIndex")?;
    Ok(args.process_index)
}

/// A device of a [`Client`]. A plain handle: copying it is free, and it stays meaningful only
/// with the client it came from (methods that take a device check that).
///
/// Printed as JAX prints its devices: `CpuDevice(id=0)`, `CudaDevice(id=1)`.
///
/// ```
/// let d = jaxrs::devices()[0];
/// assert_eq!(d.id(), 0);
/// assert_eq!(d.platform(), "cpu");
/// assert_eq!(d.process_index(), 0);
/// assert_eq!(d.to_string(), "CpuDevice(id=0)");
/// assert_eq!(format!("{d:?}"), "CpuDevice(id=0)");
/// ```
#[derive(Clone, Copy)]
pub struct Device {
    raw: *mut sys::PJRT_Device,
    id: i32,
    process_index: i32,
    local_hardware_id: i32,
    kind: &'static str,
    platform: &'static str,
}

// SAFETY: a device handle is an identifier; the data it refers to is owned by the thread-safe
// client, and every property we expose was copied out at creation.
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

impl PartialEq for Device {
    fn eq(&self, other: &Device) -> bool {
        self.raw == other.raw
    }
}
impl Eq for Device {}

// Consistent with `Eq`: one client never gives two devices the same id.
impl std::hash::Hash for Device {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut chars = self.platform.chars();
        let title: String = match chars.next() {
            Some(c) => c.to_uppercase().chain(chars).collect(),
            None => "Unknown".into(),
        };
        write!(f, "{title}Device(id={})", self.id)
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl Device {
    pub(crate) fn raw(&self) -> *mut sys::PJRT_Device {
        self.raw
    }

    fn describe(api: &Api, raw: *mut sys::PJRT_Device, platform: &'static str) -> Result<Device> {
        let mut d = sys::PJRT_Device_GetDescription_Args {
            struct_size: sys::PJRT_Device_GetDescription_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            device: raw,
            device_description: ptr::null_mut(),
        };
        // SAFETY: valid args on a live device.
        let err = unsafe { (api.f.device_get_description)(&mut d) };
        api.check(err, "PJRT_Device_GetDescription")?;
        let mut id = sys::PJRT_DeviceDescription_Id_Args {
            struct_size: sys::PJRT_DeviceDescription_Id_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            device_description: d.device_description,
            id: 0,
        };
        // SAFETY: valid args on a live description.
        let err = unsafe { (api.f.device_description_id)(&mut id) };
        api.check(err, "PJRT_DeviceDescription_Id")?;
        let mut kind = sys::PJRT_DeviceDescription_Kind_Args {
            struct_size: sys::PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            device_description: d.device_description,
            device_kind: ptr::null(),
            device_kind_size: 0,
        };
        // SAFETY: valid args on a live description.
        let err = unsafe { (api.f.device_description_kind)(&mut kind) };
        api.check(err, "PJRT_DeviceDescription_Kind")?;
        // SAFETY: the kind string lives as long as the device; it is copied.
        let kind = intern(unsafe { string_from(kind.device_kind, kind.device_kind_size) });
        let process_index = match api.f.device_description_process_index {
            Some(f) => {
                let mut p = sys::PJRT_DeviceDescription_ProcessIndex_Args {
                    struct_size: sys::PJRT_DeviceDescription_ProcessIndex_Args_STRUCT_SIZE,
                    extension_start: ptr::null_mut(),
                    device_description: d.device_description,
                    process_index: 0,
                };
                // SAFETY: valid args on a live description.
                let err = unsafe { f(&mut p) };
                api.check(err, "PJRT_DeviceDescription_ProcessIndex")?;
                p.process_index
            }
            None => 0,
        };
        let local_hardware_id = match api.f.device_local_hardware_id {
            Some(f) => {
                let mut h = sys::PJRT_Device_LocalHardwareId_Args {
                    struct_size: sys::PJRT_Device_LocalHardwareId_Args_STRUCT_SIZE,
                    extension_start: ptr::null_mut(),
                    device: raw,
                    local_hardware_id: -1,
                };
                // SAFETY: valid args on a live device.
                let err = unsafe { f(&mut h) };
                // Optional: a plugin that does not know reports -1.
                match api.check(err, "PJRT_Device_LocalHardwareId") {
                    Ok(()) => h.local_hardware_id,
                    Err(_) => -1,
                }
            }
            None => -1,
        };
        Ok(Device {
            raw,
            id: id.id,
            process_index,
            local_hardware_id,
            kind,
            platform,
        })
    }

    /// The device's id (unique among the plugin's devices).
    pub fn id(&self) -> i32 {
        self.id
    }

    /// The index of the process that drives this device (0 in a single-process program).
    pub fn process_index(&self) -> i32 {
        self.process_index
    }

    /// The platform of the device's plugin (`"cpu"`, `"cuda"`, ...).
    pub fn platform(&self) -> &'static str {
        self.platform
    }

    /// The kind of device (`"cpu"`, a GPU's model name, ...).
    pub fn kind(&self) -> String {
        self.kind.to_string()
    }

    /// The hardware id (e.g. the CUDA device number), or -1 where the plugin has none.
    pub fn local_hardware_id(&self) -> i32 {
        self.local_hardware_id
    }
}

/// Device kinds and platform names are few: keep one `'static` copy of each so `Device` stays `Copy`.
fn intern(s: String) -> &'static str {
    static KINDS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut kinds = KINDS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = kinds.iter().find(|k| **k == s) {
        return k;
    }
    let k: &'static str = Box::leak(s.into_boxed_str());
    kinds.push(k);
    k
}
