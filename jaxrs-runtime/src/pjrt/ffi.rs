//! Host callbacks from compiled programs: XLA's typed FFI (custom calls with
//! `api_version = 4`), registered through the plugin's PJRT FFI extension
//! (`pjrt_c_api_ffi_extension.h`, `PJRT_FFI_Extension::register_handler`).
//!
//! A program calls `stablehlo.custom_call @jaxrs_host_callback(%a, %b)
//! {api_version = 4 : i32, backend_config = {fmt = "..."}, has_side_effect = true}`;
//! XLA's CPU runtime then calls `handler` with an `XLA_FFI_CallFrame` holding the operands'
//! host memory and the attributes. The handler hands them, read in place, to the callback the
//! engine installed with [`set_host_callback`]. Declarations are written by hand from
//! `xla/ffi/api/c_api.h` (only what the handler reads).
//!
//! On a plugin whose devices are not the host (CUDA) the operands are device pointers, so the
//! handler is registered for the host platform only.

#![allow(non_camel_case_types)]

use super::api::Api;
use super::sys;
use crate::dtype::DType;
use crate::error::{Error, ErrorCode, Result};
use std::mem::{offset_of, size_of};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Mutex, OnceLock};

/// The custom-call target name every host callback lowers to.
pub const HOST_CALLBACK_TARGET: &str = "jaxrs_host_callback";

// ------------------------------------------------------------------ XLA FFI ABI (c_api.h)

#[repr(C)]
struct XLA_FFI_Extension_Base {
    struct_size: usize,
    type_: c_int,
    next: *mut XLA_FFI_Extension_Base,
}
/// `XLA_FFI_Extension_Metadata`: XLA asks a handler for its API version and traits.
const XLA_FFI_EXTENSION_METADATA: c_int = 1;

#[repr(C)]
struct XLA_FFI_Api_Version {
    struct_size: usize,
    extension_start: *mut XLA_FFI_Extension_Base,
    major_version: c_int,
    minor_version: c_int,
}

#[repr(C)]
struct XLA_FFI_Metadata {
    struct_size: usize,
    api_version: XLA_FFI_Api_Version,
    traits: u32,
}

#[repr(C)]
struct XLA_FFI_Metadata_Extension {
    extension_base: XLA_FFI_Extension_Base,
    metadata: *mut XLA_FFI_Metadata,
}

#[repr(C)]
struct XLA_FFI_Args {
    struct_size: usize,
    extension_start: *mut XLA_FFI_Extension_Base,
    size: i64,
    types: *const c_int,
    args: *const *mut c_void,
}

#[repr(C)]
struct XLA_FFI_Attrs {
    struct_size: usize,
    extension_start: *mut XLA_FFI_Extension_Base,
    size: i64,
    types: *const c_int,
    names: *const *const XLA_FFI_ByteSpan,
    attrs: *const *mut c_void,
}

/// The call frame of XLA FFI API 0.1 and later (with the execution stage).
#[repr(C)]
pub struct XLA_FFI_CallFrame {
    struct_size: usize,
    extension_start: *mut XLA_FFI_Extension_Base,
    api: *const c_void,
    ctx: *mut c_void,
    stage: c_int,
    args: XLA_FFI_Args,
    rets: XLA_FFI_Args,
    attrs: XLA_FFI_Attrs,
}
const CALL_FRAME_STRUCT_SIZE: usize =
    offset_of!(XLA_FFI_CallFrame, attrs) + size_of::<XLA_FFI_Attrs>();
const XLA_FFI_EXECUTION_STAGE_EXECUTE: c_int = 3;
const XLA_FFI_ARG_TYPE_BUFFER: c_int = 1;
const XLA_FFI_ATTR_TYPE_STRING: c_int = 4;

#[repr(C)]
struct XLA_FFI_Buffer {
    struct_size: usize,
    extension_start: *mut XLA_FFI_Extension_Base,
    dtype: c_int,
    data: *mut c_void,
    rank: i64,
    dims: *const i64,
}

#[repr(C)]
struct XLA_FFI_ByteSpan {
    ptr: *const c_char,
    len: usize,
}

/// One operand of a host callback or kernel, read in place: valid only during the call.
pub struct HostArg<'a> {
    pub dtype: DType,
    pub dims: &'a [i64],
    /// Row-major element bytes.
    pub bytes: &'a [u8],
}

/// One result buffer of a kernel, written in place: valid only during the call.
pub struct HostRet<'a> {
    pub dtype: DType,
    pub dims: &'a [i64],
    /// Row-major element bytes, uninitialised until the kernel writes them.
    pub bytes: &'a mut [u8],
}

/// What a host callback receives: its string attributes (name, value) and operands.
pub type HostCallback = fn(attrs: &[(&str, &str)], args: &[HostArg<'_>]);

/// A host kernel: reads its operands and string attributes, writes its results.
pub type HostKernel = fn(
    attrs: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> std::result::Result<(), String>;

/// The entry point XLA calls for one custom-call target (see [`kernel_entry`]).
pub type FfiHandler = unsafe extern "C" fn(*mut XLA_FFI_CallFrame) -> *mut c_void;

static CALLBACK: OnceLock<HostCallback> = OnceLock::new();

/// Installs the function every [`HOST_CALLBACK_TARGET`] custom call runs (once per process;
/// later calls are ignored).
pub fn set_host_callback(f: HostCallback) {
    let _ = CALLBACK.set(f);
}

/// Registers the handler with `api`'s plugin for the host platform, once per process.
/// Fails (with the same error every time) when the plugin has no FFI extension that can
/// register handlers.
pub fn register_host_callback(api: &Api) -> Result<()> {
    static DONE: Mutex<Option<std::result::Result<(), String>>> = Mutex::new(None);
    register_once(&DONE, || {
        register(api, HOST_CALLBACK_TARGET, host_callback_entry)
    })
}

/// Runs `register` the first time only, and returns its outcome every time.
pub fn register_once(
    done: &Mutex<Option<std::result::Result<(), String>>>,
    register: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let mut done = done.lock().unwrap_or_else(|p| p.into_inner());
    if done.is_none() {
        *done = Some(register().map_err(|e| e.to_string()));
    }
    done.clone()
        .expect("set above")
        .map_err(|message| Error::Pjrt {
            code: ErrorCode::Unimplemented,
            context: "PJRT_FFI_Register_Handler",
            message,
        })
}

/// Registers `handler` as the host platform's implementation of custom-call `target`.
pub fn register(api: &Api, target: &'static str, handler: FfiHandler) -> Result<()> {
    // Older plugins declare the registration arguments with an `api_version` field in the
    // middle; only the layout of recent ones (measured on API 0.115) is declared here.
    let recent = api.version() >= (0, 100);
    let Some(register_handler) = api.ffi_register_handler.filter(|_| recent) else {
        return Err(Error::Pjrt {
            code: ErrorCode::Unimplemented,
            context: "PJRT_FFI_Register_Handler",
            message: "the plugin has no FFI extension with handler registration, so compiled \
                      code cannot call back to the host (debug_print works eagerly only, and \
                      the host linear-algebra kernels are missing)"
                .into(),
        });
    };
    // XLA keys handlers by canonical platform name; the CPU platform's is "Host".
    let platform = "Host";
    let mut args = sys::PJRT_FFI_Register_Handler_Args {
        struct_size: sys::PJRT_FFI_Register_Handler_Args_STRUCT_SIZE,
        target_name: target.as_ptr().cast(),
        target_name_size: target.len(),
        handler: handler as *mut c_void,
        platform_name: platform.as_ptr().cast(),
        platform_name_size: platform.len(),
        traits: 0,
    };
    // SAFETY: valid args whose strings outlive the call; the handler is a static function.
    let err = unsafe { register_handler(&mut args) };
    api.check(err, "PJRT_FFI_Register_Handler")
}

/// A call frame's contents, read in place.
struct Frame<'a> {
    attrs: Vec<(&'a str, &'a str)>,
    args: Vec<HostArg<'a>>,
    rets: Vec<HostRet<'a>>,
}

/// XLA's PrimitiveType numbering (`XLA_FFI_DataType`), which PJRT's shares up to F64.
fn ffi_dtype(code: c_int) -> Option<DType> {
    match code {
        15 => Some(DType::C64),
        16 => Some(DType::BF16),
        18 => Some(DType::C128),
        code @ 1..=12 => DType::from_pjrt_element_type(code),
        _ => None,
    }
}

/// Reads one `XLA_FFI_Buffer`: its dtype, dims and the byte length of its elements.
///
/// # Safety
/// `b` points to a valid buffer description.
unsafe fn buffer<'a>(b: *mut c_void) -> Option<(DType, &'a [i64], *mut u8, usize)> {
    // SAFETY: the caller's promise.
    unsafe {
        let b = &*(b as *const XLA_FFI_Buffer);
        let dtype = ffi_dtype(b.dtype)?;
        let dims: &[i64] = if b.rank > 0 {
            std::slice::from_raw_parts(b.dims, b.rank as usize)
        } else {
            &[]
        };
        let n: usize = dims.iter().map(|&d| d.max(0) as usize).product();
        let len = if b.data.is_null() {
            0
        } else {
            n * dtype.size_in_bytes()
        };
        Some((dtype, dims, b.data as *mut u8, len))
    }
}

/// Decodes a call frame; `None` when XLA only asks for the handler's metadata (answered
/// here) or calls it at a stage other than execution.
///
/// # Safety
/// `frame` is the valid call frame XLA passed to a handler.
unsafe fn decode<'a>(frame: *mut XLA_FFI_CallFrame) -> Option<Frame<'a>> {
    // SAFETY: XLA passes a valid frame; every field read below is within `struct_size`,
    // checked first (an older XLA without the `stage` field is not served).
    unsafe {
        let frame = &*frame;
        let ext = frame.extension_start;
        if !ext.is_null() && (*ext).type_ == XLA_FFI_EXTENSION_METADATA {
            let meta = (*(ext as *const XLA_FFI_Metadata_Extension)).metadata;
            if !meta.is_null() {
                (*meta).api_version.major_version = 0;
                (*meta).api_version.minor_version = 1;
                (*meta).traits = 0;
            }
            return None;
        }
        if frame.struct_size < CALL_FRAME_STRUCT_SIZE
            || frame.stage != XLA_FFI_EXECUTION_STAGE_EXECUTE
        {
            return None;
        }
        let mut attrs = Vec::new();
        let a = &frame.attrs;
        for i in 0..a.size.max(0) as usize {
            if *a.types.add(i) != XLA_FFI_ATTR_TYPE_STRING {
                continue;
            }
            let name = &**a.names.add(i);
            let value = &*(*a.attrs.add(i) as *const XLA_FFI_ByteSpan);
            attrs.push((span_str(name), span_str(value)));
        }
        let mut args = Vec::new();
        let f = &frame.args;
        for i in 0..f.size.max(0) as usize {
            if *f.types.add(i) != XLA_FFI_ARG_TYPE_BUFFER {
                continue;
            }
            let Some((dtype, dims, data, len)) = buffer(*f.args.add(i)) else {
                continue;
            };
            let bytes: &[u8] = if len == 0 {
                &[]
            } else {
                std::slice::from_raw_parts(data, len)
            };
            args.push(HostArg { dtype, dims, bytes });
        }
        let mut rets = Vec::new();
        let r = &frame.rets;
        for i in 0..r.size.max(0) as usize {
            if *r.types.add(i) != XLA_FFI_ARG_TYPE_BUFFER {
                continue;
            }
            let Some((dtype, dims, data, len)) = buffer(*r.args.add(i)) else {
                continue;
            };
            let bytes: &mut [u8] = if len == 0 {
                &mut []
            } else {
                std::slice::from_raw_parts_mut(data, len)
            };
            rets.push(HostRet { dtype, dims, bytes });
        }
        Some(Frame { attrs, args, rets })
    }
}

/// The XLA FFI handler behind [`HOST_CALLBACK_TARGET`].
///
/// # Safety
/// Called by XLA with a valid call frame.
unsafe extern "C" fn host_callback_entry(frame: *mut XLA_FFI_CallFrame) -> *mut c_void {
    // SAFETY: XLA's call frame, passed on.
    let Some(frame) = (unsafe { decode(frame) }) else {
        return std::ptr::null_mut();
    };
    if let Some(cb) = CALLBACK.get() {
        // A panic must not unwind into XLA's C++ frames.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            cb(&frame.attrs, &frame.args)
        }));
    }
    std::ptr::null_mut()
}

/// The body of every kernel's handler: decodes the frame and runs `kernel` on it. A kernel
/// that fails or panics (it must not unwind into XLA's C++ frames) leaves its floating-point
/// results NaN, as JAX's LAPACK kernels report a failed factorisation.
///
/// # Safety
/// Called from a handler with XLA's valid call frame.
pub unsafe fn kernel_entry(frame: *mut XLA_FFI_CallFrame, kernel: HostKernel) -> *mut c_void {
    // SAFETY: XLA's call frame, passed on.
    let Some(mut frame) = (unsafe { decode(frame) }) else {
        return std::ptr::null_mut();
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ieee = GradualUnderflow::enter();
        kernel(&frame.attrs, &frame.args, &mut frame.rets)
    }));
    if !matches!(outcome, Ok(Ok(()))) {
        for ret in &mut frame.rets {
            fill_nan(ret);
        }
    }
    std::ptr::null_mut()
}

/// IEEE gradual underflow on this thread while the guard lives, and the caller's mode after.
///
/// XLA's CPU runtime runs with subnormals flushed to zero (x86's FTZ and DAZ, Arm's FZ); the
/// kernels' library (faer) assumes IEEE arithmetic and goes wrong without it: the complex
/// eigensolver's back-substitution gave a wrong eigenvector for a well-conditioned 4x4
/// complex64 matrix under flush-to-zero (`tests/linalg_complex.rs`), as LAPACK, which
/// rescales to stay clear of subnormals, does not.
struct GradualUnderflow {
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(dead_code)
    )]
    saved: u64,
}

impl GradualUnderflow {
    #[cfg(target_arch = "x86_64")]
    fn enter() -> GradualUnderflow {
        // MXCSR bit 15 is flush-to-zero, bit 6 denormals-are-zero.
        const FLUSH: u32 = (1 << 15) | (1 << 6);
        let mut csr: u32 = 0;
        // SAFETY: reads and writes this thread's MXCSR, clearing only the two flush bits.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack));
            let ieee = csr & !FLUSH;
            std::arch::asm!("ldmxcsr [{}]", in(reg) &ieee, options(nostack, readonly));
        }
        GradualUnderflow {
            saved: u64::from(csr),
        }
    }

    #[cfg(target_arch = "aarch64")]
    fn enter() -> GradualUnderflow {
        // FPCR bit 24 is flush-to-zero.
        let fpcr: u64;
        // SAFETY: reads and writes this thread's FPCR, clearing only the flush bit.
        unsafe {
            std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack));
            std::arch::asm!("msr fpcr, {}", in(reg) fpcr & !(1 << 24), options(nomem, nostack));
        }
        GradualUnderflow { saved: fpcr }
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    fn enter() -> GradualUnderflow {
        GradualUnderflow { saved: 0 }
    }
}

impl Drop for GradualUnderflow {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        {
            let csr = self.saved as u32;
            // SAFETY: restores the MXCSR value read in `enter`.
            unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, readonly)) };
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: restores the FPCR value read in `enter`.
        unsafe {
            std::arch::asm!("msr fpcr, {}", in(reg) self.saved, options(nomem, nostack))
        };
    }
}

/// Sets every element of a floating-point result to NaN (other dtypes are left as written).
pub fn fill_nan(ret: &mut HostRet<'_>) {
    match ret.dtype {
        // A complex element is two floats: both NaN.
        DType::F32 | DType::C64 => {
            for c in ret.bytes.chunks_exact_mut(4) {
                c.copy_from_slice(&f32::NAN.to_ne_bytes());
            }
        }
        DType::F64 | DType::C128 => {
            for c in ret.bytes.chunks_exact_mut(8) {
                c.copy_from_slice(&f64::NAN.to_ne_bytes());
            }
        }
        _ => {}
    }
}

/// # Safety
/// `s` points to `len` readable bytes (or `len` is 0).
unsafe fn span_str(s: &XLA_FFI_ByteSpan) -> &str {
    if s.len == 0 || s.ptr.is_null() {
        return "";
    }
    // SAFETY: the caller's promise.
    let bytes = unsafe { std::slice::from_raw_parts(s.ptr as *const u8, s.len) };
    std::str::from_utf8(bytes).unwrap_or("<non-UTF-8 attribute>")
}
