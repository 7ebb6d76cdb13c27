//! `Buffer`: an owned `PJRT_Buffer` (an array on one device).

use super::client::{dense_size, invalid, raw_slice, Client, Device};
use super::sys;
use crate::dtype::DType;
use crate::error::Error;
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
    /// [`Error::DonatedBufferUsed`]. Uses `PJRT_Buffer_CopyRawToHost` (about half the cost
    /// of `ToHostBuffer` on the CPU plugin).
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
