//! `Buffer`: an owned `PJRT_Buffer` (an array on one device).

use super::client::{Client, Device};
use super::sys;
use super::util::{dense_size, invalid, raw_slice};
use crate::dtype::DType;
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use std::ptr::{self, NonNull};
use std::sync::Arc;

/// An array on one device. Destroyed (`PJRT_Buffer_Destroy`) on drop.
///
/// A buffer donated to an execution is deleted by it: [`Buffer::is_deleted`] turns true and
/// reading it fails with [`Error::DonatedBufferUsed`]; it is still freed on drop.
pub struct Buffer {
    raw: NonNull<sys::PJRT_Buffer>,
    client: Arc<Client>,
}

// SAFETY: PJRT buffers may be used from any thread (the C API's contract); `Buffer` owns its
// handle exclusively and destroys it once.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_deleted() {
            return write!(f, "Buffer(deleted)");
        }
        write!(
            f,
            "Buffer({:?}{:?} on {:?})",
            self.dtype_raw(),
            self.dims(),
            self.device()
        )
    }
}

impl Buffer {
    /// Takes ownership of a raw buffer of `client`.
    ///
    /// # Safety
    /// `raw` must be a live buffer created by `client`, owned by nobody else.
    pub(crate) unsafe fn from_raw(raw: NonNull<sys::PJRT_Buffer>, client: Arc<Client>) -> Buffer {
        Buffer { raw, client }
    }

    pub(crate) fn raw(&self) -> *mut sys::PJRT_Buffer {
        self.raw.as_ptr()
    }

    /// The client the buffer belongs to.
    pub fn client(&self) -> &Arc<Client> {
        &self.client
    }

    /// The array's dimensions.
    pub fn dims(&self) -> Vec<i64> {
        let api = self.client.api();
        let mut args = sys::PJRT_Buffer_Dimensions_Args {
            struct_size: sys::PJRT_Buffer_Dimensions_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
            dims: ptr::null(),
            num_dims: 0,
        };
        // SAFETY: valid args on a live buffer.
        let err = unsafe { (api.f.buffer_dimensions)(&mut args) };
        if let Err(e) = api.check(err, "PJRT_Buffer_Dimensions") {
            panic!("cannot read a buffer's dimensions: {e}");
        }
        // SAFETY: `num_dims` values that live as long as the buffer; copied here.
        unsafe { raw_slice(args.dims, args.num_dims) }.to_vec()
    }

    fn dtype_raw(&self) -> i32 {
        let api = self.client.api();
        let mut args = sys::PJRT_Buffer_ElementType_Args {
            struct_size: sys::PJRT_Buffer_ElementType_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
            type_: 0,
        };
        // SAFETY: valid args on a live buffer.
        let err = unsafe { (api.f.buffer_element_type)(&mut args) };
        if let Err(e) = api.check(err, "PJRT_Buffer_ElementType") {
            panic!("cannot read a buffer's element type: {e}");
        }
        args.type_
    }

    /// The element type.
    ///
    /// # Panics
    /// If the buffer holds a type jaxrs has no `DType` for (only a program that produces one,
    /// e.g. `i16` or complex, can make such a buffer).
    pub fn dtype(&self) -> DType {
        let t = self.dtype_raw();
        DType::from_pjrt_element_type(t).unwrap_or_else(|| {
            panic!("buffer of PJRT element type {t}, which jaxrs does not support")
        })
    }

    /// The device holding the buffer.
    pub fn device(&self) -> Device {
        let api = self.client.api();
        let mut args = sys::PJRT_Buffer_Device_Args {
            struct_size: sys::PJRT_Buffer_Device_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
            device: ptr::null_mut(),
        };
        // SAFETY: valid args on a live buffer.
        let err = unsafe { (api.f.buffer_device)(&mut args) };
        if let Err(e) = api.check(err, "PJRT_Buffer_Device") {
            panic!("cannot read a buffer's device: {e}");
        }
        self.client
            .device_of(args.device)
            .expect("a buffer lives on one of its client's addressable devices")
    }

    /// Whether the buffer was deleted (donated to an execution).
    pub fn is_deleted(&self) -> bool {
        let api = self.client.api();
        let mut args = sys::PJRT_Buffer_IsDeleted_Args {
            struct_size: sys::PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
            is_deleted: false,
        };
        // SAFETY: valid args on a live buffer handle (deleted or not).
        let err = unsafe { (api.f.buffer_is_deleted)(&mut args) };
        match api.check(err, "PJRT_Buffer_IsDeleted") {
            Ok(()) => args.is_deleted,
            Err(e) => {
                log::warn!("{e}");
                false
            }
        }
    }

    /// Waits until the buffer's value is computed; an execution's failure shows here.
    pub fn block_until_ready(&self) -> Result<()> {
        let api = self.client.api();
        let mut args = sys::PJRT_Buffer_ReadyEvent_Args {
            struct_size: sys::PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
            event: ptr::null_mut(),
        };
        // SAFETY: valid args on a live buffer.
        let err = unsafe { (api.f.buffer_ready_event)(&mut args) };
        if let Err(e) = api.check(err, "PJRT_Buffer_ReadyEvent") {
            api.destroy_event(args.event);
            return Err(e);
        }
        api.await_event(args.event, "PJRT_Buffer_ReadyEvent")
    }

    /// Copies the buffer's bytes (dense, row-major) into `dst`, waiting for the value first.
    ///
    /// `dst.len()` must be the array's byte size. A deleted (donated) buffer gives
    /// [`Error::DonatedBufferUsed`]. A buffer in host memory (the CPU plugin) with a dense
    /// row-major layout is read in place on the calling thread, as JAX reads one into NumPy;
    /// any other goes through `PJRT_Buffer_CopyRawToHost` (about half the cost of
    /// `ToHostBuffer`), whose completion the CPU plugin signals from another thread.
    pub fn copy_to_host(&self, dst: &mut [u8]) -> Result<()> {
        const CTX: &str = "PJRT_Buffer_CopyRawToHost";
        if self.is_deleted() {
            return Err(Error::DonatedBufferUsed(
                "the buffer was donated to an earlier execution (or deleted), so it cannot be \
                 read"
                    .into(),
            ));
        }
        let t = self.dtype_raw();
        let dtype = DType::from_pjrt_element_type(t)
            .ok_or_else(|| invalid(CTX, format!("unsupported PJRT element type {t}")))?;
        let dims = self.dims();
        let expected = dense_size(dtype, &dims).unwrap_or(usize::MAX);
        if dst.len() != expected {
            return Err(invalid(
                CTX,
                format!(
                    "destination has {} bytes, the {}{dims:?} buffer has {expected}",
                    dst.len(),
                    dtype.name()
                ),
            ));
        }
        if let Some(fns) = &self.client.api().f.host_view {
            if !dst.is_empty() && self.read_in_place(fns, &dims, dst)? {
                return Ok(());
            }
        }
        self.copy_raw_to_host(dst)
    }

    /// `PJRT_Buffer_CopyRawToHost` of the whole buffer into `dst` (checked by the caller).
    fn copy_raw_to_host(&self, dst: &mut [u8]) -> Result<()> {
        const CTX: &str = "PJRT_Buffer_CopyRawToHost";
        let api = self.client.api();
        let mut args = sys::PJRT_Buffer_CopyRawToHost_Args {
            struct_size: sys::PJRT_Buffer_CopyRawToHost_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
            dst: dst.as_mut_ptr().cast(),
            offset: 0,
            transfer_size: dst.len() as i64,
            event: ptr::null_mut(),
        };
        // SAFETY: valid args; `dst` is exclusively borrowed until the event has been awaited
        // below, so the plugin's asynchronous write cannot race with Rust code.
        let err = unsafe { (api.f.buffer_copy_raw_to_host)(&mut args) };
        if let Err(e) = api.check(err, CTX) {
            // The copy never started; an event, if any, refers to nothing we wait for. But
            // await it anyway before `dst` is released, in case the plugin did start.
            let _ = api.await_event(args.event, CTX);
            return Err(e);
        }
        api.await_event(args.event, CTX)
    }
}

/// Reading a CPU buffer's memory in place.
///
/// The safety argument, step by step (each step is checked before the next; any "no" falls
/// back to `PJRT_Buffer_CopyRawToHost`, never to a guess):
/// 1. `PJRT_Buffer_IsOnCpu`: the buffer's memory is ordinary memory of this process, so the
///    pointer `PJRT_Buffer_OpaqueDeviceMemoryDataPointer` returns is a host address (JAX
///    relies on the same pair to hand CPU buffers to NumPy without a copy).
/// 2. The buffer's ready event has fired without error (`PJRT_Event_Await` on this thread,
///    which returns at once for a fulfilled event and blocks for a pending one): every write
///    of the producing computation is done, and the event's completion is the
///    synchronisation that makes those writes visible here. A ready PJRT buffer is immutable
///    from then on.
/// 3. `PJRT_Buffer_GetMemoryLayout` is a tiled layout with major-to-minor order and no tiles,
///    and `PJRT_Buffer_OnDeviceSizeInBytes` equals `dst.len()` (the dense size of its dtype
///    and dimensions): the memory holds exactly the dense row-major bytes `dst` wants.
/// 4. `PJRT_Buffer_IncreaseExternalReferenceCount` before taking the pointer and `..Decrease..`
///    after the copy: while the count is positive the plugin keeps the memory where it is and
///    alive (the header's contract for the pointer), and refuses to donate the buffer, so a
///    concurrent donation on another thread cannot free it under the read.
///
/// The copy itself is a `memcpy` of `dst.len()` bytes into `dst` (a `&mut [u8]`, so no
/// validity invariant on the bytes read).
impl Buffer {
    /// Reads the buffer into `dst` in place; `Ok(false)` when it cannot be read so (not in
    /// host memory, not dense row-major, or the plugin declined a step), and nothing was
    /// written.
    fn read_in_place(
        &self,
        fns: &super::api::HostViewFns,
        dims: &[i64],
        dst: &mut [u8],
    ) -> Result<bool> {
        let api = self.client.api();
        let buffer = self.raw();
        let mut on_cpu = sys::PJRT_Buffer_IsOnCpu_Args {
            struct_size: sys::PJRT_Buffer_IsOnCpu_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer,
            is_on_cpu: false,
        };
        // SAFETY: valid args on a live buffer.
        let err = unsafe { (fns.buffer_is_on_cpu)(&mut on_cpu) };
        if api.check(err, "PJRT_Buffer_IsOnCpu").is_err() || !on_cpu.is_on_cpu {
            return Ok(false);
        }
        // Awaiting a fulfilled event returns at once, on this thread.
        self.block_until_ready()?;
        if !self.dense_row_major(fns, dims, dst.len()) {
            return Ok(false);
        }
        let mut hold = sys::PJRT_Buffer_ExternalReferenceCount_Args {
            struct_size: sys::PJRT_Buffer_ExternalReferenceCount_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer,
        };
        // SAFETY: valid args on a live buffer; balanced by the decrease below.
        let err = unsafe { (fns.buffer_increase_external_reference_count)(&mut hold) };
        if api
            .check(err, "PJRT_Buffer_IncreaseExternalReferenceCount")
            .is_err()
        {
            return Ok(false);
        }
        let mut data = sys::PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args {
            struct_size: sys::PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer,
            device_memory_ptr: ptr::null_mut(),
        };
        // SAFETY: valid args on a live buffer.
        let err = unsafe { (fns.buffer_opaque_device_memory_data_pointer)(&mut data) };
        let read = api
            .check(err, "PJRT_Buffer_OpaqueDeviceMemoryDataPointer")
            .is_ok()
            && !data.device_memory_ptr.is_null();
        if read {
            // SAFETY: the module-level argument: a host address (1) of `dst.len()` bytes (3),
            // fully written and immutable (2), kept alive by the external reference (4);
            // `dst` is a distinct, exclusively borrowed Rust allocation.
            unsafe {
                ptr::copy_nonoverlapping(
                    data.device_memory_ptr.cast::<u8>(),
                    dst.as_mut_ptr(),
                    dst.len(),
                )
            };
        }
        let mut release = sys::PJRT_Buffer_ExternalReferenceCount_Args {
            struct_size: sys::PJRT_Buffer_ExternalReferenceCount_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer,
        };
        // SAFETY: valid args; releases the reference taken above.
        let err = unsafe { (fns.buffer_decrease_external_reference_count)(&mut release) };
        if let Err(e) = api.check(err, "PJRT_Buffer_DecreaseExternalReferenceCount") {
            log::warn!("{e}");
        }
        Ok(read)
    }

    /// Whether the buffer's memory is exactly the dense row-major bytes of its dims, `size`
    /// bytes in all.
    fn dense_row_major(&self, fns: &super::api::HostViewFns, dims: &[i64], size: usize) -> bool {
        let api = self.client.api();
        let mut on_device = sys::PJRT_Buffer_OnDeviceSizeInBytes_Args {
            struct_size: sys::PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
            on_device_size_in_bytes: 0,
        };
        // SAFETY: valid args on a live buffer.
        let err = unsafe { (fns.buffer_on_device_size_in_bytes)(&mut on_device) };
        if api.check(err, "PJRT_Buffer_OnDeviceSizeInBytes").is_err()
            || on_device.on_device_size_in_bytes != size
        {
            return false;
        }
        let mut args = sys::PJRT_Buffer_GetMemoryLayout_Args {
            struct_size: sys::PJRT_Buffer_GetMemoryLayout_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
            // SAFETY: plain data (integers and null pointers); the plugin fills it in.
            layout: unsafe { std::mem::zeroed() },
        };
        args.layout.struct_size = sys::PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
        // SAFETY: valid args on a live buffer.
        let err = unsafe { (fns.buffer_get_memory_layout)(&mut args) };
        if api.check(err, "PJRT_Buffer_GetMemoryLayout").is_err()
            || args.layout.type_ != sys::PJRT_Buffer_MemoryLayout_Type_Tiled
        {
            return false;
        }
        // SAFETY: `type_` says the tiled member is the live one.
        let tiled = unsafe { args.layout.u.tiled };
        if tiled.num_tiles != 0 || tiled.minor_to_major_size != dims.len() {
            return false;
        }
        // SAFETY: `minor_to_major_size` values owned by the live buffer; read at once.
        let minor_to_major = unsafe { raw_slice(tiled.minor_to_major, tiled.minor_to_major_size) };
        // Row-major: the most minor dimension is the last one.
        minor_to_major
            .iter()
            .rev()
            .enumerate()
            .all(|(i, &d)| d == i as i64)
    }
}

impl Buffer {
    /// A copy of this buffer on `device` (another device of the same client), made by the
    /// plugin without a trip through the host. The copy is ordered after the value is
    /// computed; a donated buffer gives [`Error::DonatedBufferUsed`].
    pub fn copy_to_device(&self, device: &Device) -> Result<Buffer> {
        const CTX: &str = "PJRT_Buffer_CopyToDevice";
        if self.is_deleted() {
            return Err(Error::DonatedBufferUsed(
                "the buffer was donated to an earlier execution (or deleted), so it cannot be \
                 copied"
                    .into(),
            ));
        }
        if self.client.device_of(device.raw()).is_none() {
            return Err(invalid(
                CTX,
                format!("device {} does not belong to this client", device.id()),
            ));
        }
        let api = self.client.api();
        let mut args = sys::PJRT_Buffer_CopyToDevice_Args {
            struct_size: sys::PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
            dst_device: device.raw(),
            dst_buffer: ptr::null_mut(),
        };
        // SAFETY: valid args: a live buffer and a device of its client.
        let err = unsafe { (api.f.buffer_copy_to_device)(&mut args) };
        api.check(err, CTX)?;
        let raw = NonNull::new(args.dst_buffer).ok_or_else(|| Error::Pjrt {
            code: ErrorCode::Internal,
            context: CTX,
            message: "the plugin returned no buffer".into(),
        })?;
        // SAFETY: a fresh buffer of this client, owned by the new `Buffer`.
        let copy = unsafe { Buffer::from_raw(raw, self.client.clone()) };
        // The copy runs on the plugin's threads: await it at exit like an execution.
        let mut ready = sys::PJRT_Buffer_ReadyEvent_Args {
            struct_size: sys::PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: copy.raw(),
            event: ptr::null_mut(),
        };
        // SAFETY: valid args on a live buffer.
        let err = unsafe { (api.f.buffer_ready_event)(&mut ready) };
        match api.check(err, "PJRT_Buffer_ReadyEvent") {
            Ok(()) => api.track_in_flight(&[ready.event]),
            Err(e) => {
                api.destroy_event(ready.event);
                log::warn!("{e}");
            }
        }
        Ok(copy)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let api = self.client.api();
        let mut args = sys::PJRT_Buffer_Destroy_Args {
            struct_size: sys::PJRT_Buffer_Destroy_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            buffer: self.raw(),
        };
        // SAFETY: we own the buffer and destroy it once.
        let err = unsafe { (api.f.buffer_destroy)(&mut args) };
        if let Err(e) = api.check(err, "PJRT_Buffer_Destroy") {
            log::warn!("{e}");
        }
    }
}

/// How host data is handed to `PJRT_Client_BufferFromHostBuffer`.
///
/// `kImmutableOnlyDuringCall`: the plugin copies during the call, so the caller's bytes may be
/// freed on return and there is no event to wait for. Zero-copy would be faster for large
/// arrays (1.3 vs 4.9 µs for tiny ones) but needs the bytes to outlive the buffer (its
/// `done_with_host_buffer` event fires only at `Buffer_Destroy`: awaiting it before deadlocks).
const HOST_BUFFER_SEMANTICS: sys::PJRT_HostBufferSemantics =
    sys::PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;

// `Client`'s buffer factory lives next to `Buffer`, so that `client.rs` need not import
// this module (the arrow goes buffer -> client only).
impl Client {
    /// Uploads a dense row-major host array to `device`.
    ///
    /// `bytes.len()` must be `product(dims) * dtype.size_in_bytes()`; otherwise nothing is
    /// sent to the plugin and the error is [`Error::Pjrt`] with `InvalidArgument`. The plugin
    /// copies during the call: `bytes` may be freed or reused as soon as this returns.
    pub fn buffer_from_host(
        &self,
        bytes: &[u8],
        dtype: DType,
        dims: &[i64],
        device: &Device,
    ) -> Result<Buffer> {
        const CTX: &str = "PJRT_Client_BufferFromHostBuffer";
        let expected = dense_size(dtype, dims).ok_or_else(|| {
            invalid(
                CTX,
                format!("invalid dimensions {dims:?} for a {} array", dtype.name()),
            )
        })?;
        if bytes.len() != expected {
            return Err(invalid(
                CTX,
                format!(
                    "{} bytes given for a {}{dims:?} array, which needs {expected}",
                    bytes.len(),
                    dtype.name()
                ),
            ));
        }
        if self.device_of(device.raw()).is_none() {
            return Err(invalid(
                CTX,
                format!("device {} does not belong to this client", device.id()),
            ));
        }
        let mut args = sys::PJRT_Client_BufferFromHostBuffer_Args {
            struct_size: sys::PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            client: self.raw(),
            data: bytes.as_ptr().cast(),
            // Always a valid type: an invalid one aborts the process.
            type_: dtype.pjrt_element_type(),
            dims: dims.as_ptr(),
            num_dims: dims.len(),
            byte_strides: ptr::null(),
            num_byte_strides: 0,
            host_buffer_semantics: HOST_BUFFER_SEMANTICS,
            device: device.raw(),
            memory: ptr::null_mut(),
            device_layout: ptr::null_mut(),
            done_with_host_buffer: ptr::null_mut(),
            buffer: ptr::null_mut(),
        };
        // SAFETY: valid args, `bytes` and `dims` live for the call (all the chosen semantics
        // need), the device is one of this client's.
        let err = unsafe { (self.api().f.client_buffer_from_host_buffer)(&mut args) };
        let done = args.done_with_host_buffer;
        if let Err(e) = self.api().check(err, CTX) {
            self.api().destroy_event(done);
            return Err(e);
        }
        // With kImmutableOnlyDuringCall the host data is no longer used: the event (if the
        // plugin returns one) is already fulfilled, or means nothing to us.
        self.api().destroy_event(done);
        let raw = NonNull::new(args.buffer).ok_or_else(|| Error::Pjrt {
            code: ErrorCode::Internal,
            context: CTX,
            message: "the plugin returned no buffer".into(),
        })?;
        // SAFETY: a fresh buffer of this client, owned by the new `Buffer`.
        Ok(unsafe { Buffer::from_raw(raw, self.arc()) })
    }
}

#[cfg(test)]
mod tests {
    use crate::dtype::DType;
    use crate::pjrt::default_client;

    /// Every dtype of a CPU buffer is read in place, with the bytes the plugin's own copy
    /// gives. The public path (`copy_to_host`) falls back silently, so this pins that the
    /// fast path is the one taken on the CPU plugin.
    #[test]
    fn cpu_buffers_are_read_in_place_with_the_copys_bytes() {
        let client = default_client().unwrap();
        let Some(fns) = &client.api().f.host_view else {
            panic!("the CPU plugin has the in-place read entries");
        };
        let device = &client.devices()[0];
        for dtype in &DType::ALL {
            let dims = [2i64, 3];
            let size = 6 * dtype.size_in_bytes();
            let mut bytes: Vec<u8> = (0..size).map(|i| (i * 7 % 11) as u8).collect();
            if *dtype == DType::Bool {
                bytes.iter_mut().for_each(|b| *b &= 1);
            }
            let b = client
                .buffer_from_host(&bytes, *dtype, &dims, device)
                .unwrap();
            let mut fast = vec![0u8; size];
            assert!(b.read_in_place(fns, &dims, &mut fast).unwrap(), "{dtype:?}");
            let mut slow = vec![0u8; size];
            b.copy_raw_to_host(&mut slow).unwrap();
            assert_eq!(fast, slow, "{dtype:?}");
            assert_eq!(fast, bytes, "{dtype:?}");
        }
    }
}
