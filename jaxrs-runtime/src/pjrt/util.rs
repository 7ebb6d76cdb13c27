//! Small helpers every handle module shares: sizes, argument errors, plugin-owned data.
//! A leaf: it imports nothing of `pjrt/`, so the handle modules can all use it.

use crate::dtype::DType;
use crate::error::Error;
use crate::error::ErrorCode;
use std::os::raw::c_char;

/// `product(dims) * size`, or `None` for a negative dimension or an overflow.
pub(crate) fn dense_size(dtype: DType, dims: &[i64]) -> Option<usize> {
    dims.iter().try_fold(dtype.size_in_bytes(), |acc, &d| {
        usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
    })
}

#[cold]
pub(crate) fn invalid(context: &'static str, message: String) -> Error {
    Error::Pjrt {
        code: ErrorCode::InvalidArgument,
        context,
        message,
    }
}

/// Copies a (pointer, length) string from the plugin.
///
/// # Safety
/// `ptr` must point to `len` readable bytes (or be null).
pub(crate) unsafe fn string_from(ptr: *const c_char, len: usize) -> String {
    if ptr.is_null() || len == 0 {
        return String::new();
    }
    // SAFETY: non-null, and the caller guarantees `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// A (pointer, length) array from the plugin as a slice (empty for null).
///
/// # Safety
/// `ptr` must point to `len` valid elements that outlive the returned slice.
pub(crate) unsafe fn raw_slice<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: non-null, and the caller guarantees `len` valid elements outliving 'a.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}
