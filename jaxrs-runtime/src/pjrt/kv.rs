//! The key-value store a plugin coordinates processes through: `PJRT_Client_Create`'s
//! `kv_get_callback`, `kv_try_get_callback` and `kv_put_callback` over a [`KeyValueStore`].
//!
//! A multi-process client (XLA's GPU client with `num_nodes` > 1) exchanges its topology and
//! NCCL ids through these callbacks, at creation and later, whenever a new group of devices
//! first runs a collective: the store must live as long as the client. The callbacks' contract
//! (`pjrt_c_api.h`): they are called from any thread and may block; an error is made by the
//! `callback_error` function the plugin passes in; a value returned by a get is freed by the
//! plugin through the `value_deleter_callback` we set. No panic may cross into the plugin, so
//! each callback runs under `catch_unwind` and turns a panic into an `INTERNAL` error.

use super::sys;
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use std::alloc::Layout;
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

/// A key-value store shared by the processes of one multi-process client. Keys and values are
/// bytes. Every method may be called from several threads at once.
pub trait KeyValueStore: Send + Sync {
    /// The key's value, waiting up to `timeout` for some process to put it
    /// ([`Error::KeyValueTimeout`] after that).
    fn get(&self, key: &[u8], timeout: Duration) -> Result<Vec<u8>>;
    /// The key's value, or `None` at once when it has none yet.
    fn try_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Sets the key's value.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()>;
}

/// The callbacks' `user_arg`: a thin pointer to the store (an `Arc<dyn _>` is a fat pointer).
/// The client it is created for owns it and frees it only after `PJRT_Client_Destroy`, so the
/// plugin never sees a dangling `user_arg`.
pub(crate) struct KvUserArg(*mut Arc<dyn KeyValueStore>);

// SAFETY: it only points at an `Arc<dyn KeyValueStore>`, which is Send + Sync.
unsafe impl Send for KvUserArg {}
unsafe impl Sync for KvUserArg {}
// A client (and so every `Array`) stays unwind-safe: Rust code never calls the store through
// this pointer; only the plugin does, through the callbacks, each under its own
// `catch_unwind`.
impl std::panic::UnwindSafe for KvUserArg {}
impl std::panic::RefUnwindSafe for KvUserArg {}

impl KvUserArg {
    pub(crate) fn new(store: Arc<dyn KeyValueStore>) -> KvUserArg {
        KvUserArg(Box::into_raw(Box::new(store)))
    }

    pub(crate) fn as_ptr(&self) -> *mut c_void {
        self.0.cast()
    }
}

impl Drop for KvUserArg {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` in `new`, freed once, after the client is gone.
        drop(unsafe { Box::from_raw(self.0) });
    }
}

/// The frame every callback shares: a null `args` is ignored, the body runs under
/// `catch_unwind` with the args, the store and the key, and its outcome becomes null or the
/// plugin's error.
macro_rules! kv_callback {
    ($args:ident, $callback:literal, |$a:ident, $store:ident, $key:ident| $body:block) => {{
        if $args.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: the plugin passes valid args for the duration of the call.
        let make_error = unsafe { (*$args).callback_error };
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: as above; `user_arg` is the `KvUserArg` of a live client.
            let $a = unsafe { &mut *$args };
            let $store = unsafe { store_of($a.user_arg) }?;
            let $key = unsafe { bytes_of($a.key, $a.key_size) };
            $body
        }));
        finish(outcome, make_error, $callback)
    }};
}

/// Hands `value` to the plugin as a get's result, for it to free with [`free_value`].
macro_rules! return_value {
    ($a:ident, $value:expr) => {{
        let (value, size) = alloc_value($value)?;
        $a.value = value;
        $a.value_size = size;
        $a.value_deleter_callback = Some(free_value);
        Ok(())
    }};
}

/// `kv_get_callback`.
pub(crate) unsafe extern "C" fn kv_get(
    args: *mut sys::PJRT_KeyValueGetCallback_Args,
) -> *mut sys::PJRT_Error {
    kv_callback!(args, "kv_get_callback", |args, store, key| {
        let value = store.get(key, timeout_of(args.timeout_in_ms))?;
        return_value!(args, &value)
    })
}

/// `kv_try_get_callback`: `NOT_FOUND` when the key has no value yet.
pub(crate) unsafe extern "C" fn kv_try_get(
    args: *mut sys::PJRT_KeyValueTryGetCallback_Args,
) -> *mut sys::PJRT_Error {
    kv_callback!(args, "kv_try_get_callback", |args, store, key| {
        let Some(value) = store.try_get(key)? else {
            return Err(Error::Distributed {
                code: ErrorCode::NotFound,
                message: format!("no value for key {} yet", key_text(key)),
            });
        };
        return_value!(args, &value)
    })
}

/// `kv_put_callback`.
pub(crate) unsafe extern "C" fn kv_put(
    args: *mut sys::PJRT_KeyValuePutCallback_Args,
) -> *mut sys::PJRT_Error {
    kv_callback!(args, "kv_put_callback", |args, store, key| {
        // SAFETY: the plugin's value outlives the call.
        let value = unsafe { bytes_of(args.value, args.value_size) };
        store.put(key, value)
    })
}

/// A key for messages: its text, or its bytes escaped when it is not UTF-8.
pub fn key_text(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(s) => s.to_string(),
        Err(_) => key.escape_ascii().to_string(),
    }
}

/// # Safety
/// `user_arg` is null or the pointer of a live [`KvUserArg`].
unsafe fn store_of<'a>(user_arg: *mut c_void) -> Result<&'a Arc<dyn KeyValueStore>> {
    let store = user_arg.cast::<Arc<dyn KeyValueStore>>();
    if store.is_null() {
        return Err(Error::Distributed {
            code: ErrorCode::Internal,
            message: "a key-value callback was called without its user_arg".into(),
        });
    }
    // SAFETY: the caller guarantees a live `KvUserArg`.
    Ok(unsafe { &*store })
}

/// # Safety
/// `data` is null or points to `len` readable bytes that outlive the slice.
unsafe fn bytes_of<'a>(data: *const c_char, len: usize) -> &'a [u8] {
    if data.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
    }
}

/// XLA passes `absl::ToInt64Milliseconds(timeout)` truncated to an `int`: a negative value is
/// an overflowed (or infinite) timeout, which means "wait as long as it takes"; a day stands
/// in for that so the wait still ends.
fn timeout_of(ms: c_int) -> Duration {
    match u64::try_from(ms) {
        Ok(ms) => Duration::from_millis(ms),
        Err(_) => Duration::from_secs(24 * 60 * 60),
    }
}

/// A value's bytes lie after a header holding their count, so that [`free_value`], which the
/// plugin calls with the value's pointer alone, can rebuild the allocation's layout.
const HEADER: usize = size_of::<usize>();

fn value_layout(len: usize) -> Option<Layout> {
    Layout::from_size_align(HEADER.checked_add(len)?, align_of::<usize>()).ok()
}

/// Copies `value` into memory that [`free_value`] frees. Never null, even for an empty value
/// (the plugin builds a `std::string` from the pointer).
fn alloc_value(value: &[u8]) -> Result<(*mut c_char, usize)> {
    let out_of_memory = || Error::Distributed {
        code: ErrorCode::ResourceExhausted,
        message: format!("cannot allocate {} bytes for a key's value", value.len()),
    };
    let layout = value_layout(value.len()).ok_or_else(out_of_memory)?;
    // SAFETY: the layout has a non-zero size (the header).
    let base = unsafe { std::alloc::alloc(layout) };
    if base.is_null() {
        return Err(out_of_memory());
    }
    // SAFETY: `base` has room for the header and then `value.len()` bytes.
    unsafe {
        base.cast::<usize>().write(value.len());
        let data = base.add(HEADER);
        ptr::copy_nonoverlapping(value.as_ptr(), data, value.len());
        Ok((data.cast::<c_char>(), value.len()))
    }
}

/// The `value_deleter_callback` of the values [`alloc_value`] made.
unsafe extern "C" fn free_value(value: *mut c_char) {
    if value.is_null() {
        return;
    }
    // SAFETY: `value` came from `alloc_value`: the header lies just before it.
    unsafe {
        let base = value.cast::<u8>().sub(HEADER);
        let len = base.cast::<usize>().read();
        if let Some(layout) = value_layout(len) {
            std::alloc::dealloc(base, layout);
        }
    }
}

/// Returns null for success, or the plugin's error for a failure or a panic.
fn finish(
    outcome: std::thread::Result<Result<()>>,
    make_error: *mut sys::PJRT_CallbackError,
    callback: &str,
) -> *mut sys::PJRT_Error {
    let (code, message) = match outcome {
        Ok(Ok(())) => return ptr::null_mut(),
        Ok(Err(e)) => (raw_code(&e), e.to_string()),
        Err(_) => (
            13,
            format!("jaxrs's {callback} panicked (a bug in jaxrs; the panic was stopped here)"),
        ),
    };
    // SAFETY: the plugin passes a pointer to its error constructor, valid during the call.
    match unsafe { make_error.as_ref() }.copied().flatten() {
        // SAFETY: the constructor copies the message.
        Some(make) => unsafe { make(code, message.as_ptr().cast::<c_char>(), message.len()) },
        None => {
            // The header guarantees a constructor; without one the failure cannot be reported.
            log::error!("{callback}: the plugin gave no callback_error to report: {message}");
            ptr::null_mut()
        }
    }
}

/// PJRT's code for an error (absl's status codes).
fn raw_code(e: &Error) -> sys::PJRT_Error_Code {
    use ErrorCode::*;
    let code = match e {
        Error::KeyValueTimeout { .. } => DeadlineExceeded,
        // As XLA's coordination service reports a task that stopped: the program is over.
        Error::PeerFailed { .. } => Aborted,
        Error::Distributed { code, .. } | Error::Pjrt { code, .. } => *code,
        _ => Internal,
    };
    match code {
        Cancelled => 1,
        Unknown => 2,
        InvalidArgument => 3,
        DeadlineExceeded => 4,
        NotFound => 5,
        AlreadyExists => 6,
        PermissionDenied => 7,
        ResourceExhausted => 8,
        FailedPrecondition => 9,
        Aborted => 10,
        OutOfRange => 11,
        Unimplemented => 12,
        Internal => 13,
        Unavailable => 14,
        DataLoss => 15,
        Unauthenticated => 16,
        Other(c) => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// A store in memory.
    #[derive(Default)]
    struct Memory(Mutex<HashMap<Vec<u8>, Vec<u8>>>);

    impl KeyValueStore for Memory {
        fn get(&self, key: &[u8], timeout: Duration) -> Result<Vec<u8>> {
            if key == b"dead" {
                return Err(Error::PeerFailed {
                    process_id: 3,
                    message: "its connection closed without a goodbye".into(),
                });
            }
            self.0
                .lock()
                .unwrap()
                .get(key)
                .cloned()
                .ok_or(Error::KeyValueTimeout {
                    key: key_text(key),
                    timeout,
                })
        }
        fn try_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
            Ok(self.0.lock().unwrap().get(key).cloned())
        }
        fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
            if key == b"boom" {
                panic!("a store that panics");
            }
            self.0.lock().unwrap().insert(key.to_vec(), value.to_vec());
            Ok(())
        }
    }

    /// What the plugin's `callback_error` makes: here a boxed (code, message) posing as a
    /// `PJRT_Error`, as XLA's wrapper makes a `new PJRT_Error{status}`.
    unsafe extern "C" fn make_error(
        code: sys::PJRT_Error_Code,
        message: *const c_char,
        size: usize,
    ) -> *mut sys::PJRT_Error {
        let message = unsafe { String::from_utf8_lossy(bytes_of(message, size)).into_owned() };
        Box::into_raw(Box::new((code, message))).cast()
    }

    fn take_error(e: *mut sys::PJRT_Error) -> Option<(i32, String)> {
        (!e.is_null()).then(|| *unsafe { Box::from_raw(e.cast::<(i32, String)>()) })
    }

    fn put(user_arg: &KvUserArg, key: &[u8], value: &[u8]) -> Option<(i32, String)> {
        let mut constructor: sys::PJRT_CallbackError = Some(make_error);
        let mut args = sys::PJRT_KeyValuePutCallback_Args {
            struct_size: sys::PJRT_KeyValuePutCallback_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            key: key.as_ptr().cast(),
            key_size: key.len(),
            value: value.as_ptr().cast(),
            value_size: value.len(),
            callback_error: &mut constructor,
            user_arg: user_arg.as_ptr(),
        };
        take_error(unsafe { kv_put(&mut args) })
    }

    /// Calls the get callback as XLA's wrapper does: copy the value, then free it through the
    /// deleter we set.
    fn get(user_arg: &KvUserArg, key: &[u8]) -> std::result::Result<Vec<u8>, (i32, String)> {
        let mut constructor: sys::PJRT_CallbackError = Some(make_error);
        let mut args = sys::PJRT_KeyValueGetCallback_Args {
            struct_size: sys::PJRT_KeyValueGetCallback_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            key: key.as_ptr().cast(),
            key_size: key.len(),
            timeout_in_ms: 10,
            callback_error: &mut constructor,
            user_arg: user_arg.as_ptr(),
            value: ptr::null_mut(),
            value_size: 0,
            value_deleter_callback: None,
        };
        if let Some(e) = take_error(unsafe { kv_get(&mut args) }) {
            return Err(e);
        }
        assert!(!args.value.is_null());
        let value = unsafe { bytes_of(args.value, args.value_size) }.to_vec();
        unsafe { args.value_deleter_callback.unwrap()(args.value) };
        Ok(value)
    }

    fn try_get(user_arg: &KvUserArg, key: &[u8]) -> std::result::Result<Vec<u8>, (i32, String)> {
        let mut constructor: sys::PJRT_CallbackError = Some(make_error);
        let mut args = sys::PJRT_KeyValueTryGetCallback_Args {
            struct_size: sys::PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE,
            extension_start: ptr::null_mut(),
            key: key.as_ptr().cast(),
            key_size: key.len(),
            callback_error: &mut constructor,
            user_arg: user_arg.as_ptr(),
            value: ptr::null_mut(),
            value_size: 0,
            value_deleter_callback: None,
        };
        if let Some(e) = take_error(unsafe { kv_try_get(&mut args) }) {
            return Err(e);
        }
        let value = unsafe { bytes_of(args.value, args.value_size) }.to_vec();
        unsafe { args.value_deleter_callback.unwrap()(args.value) };
        Ok(value)
    }

    #[test]
    fn the_callbacks_round_trip_bytes_and_report_errors_with_pjrt_codes() {
        let user_arg = KvUserArg::new(Arc::new(Memory::default()));
        assert_eq!(put(&user_arg, b"k\0ey", b"v\0\xffalue"), None);
        assert_eq!(put(&user_arg, b"empty", b""), None);
        assert_eq!(get(&user_arg, b"k\0ey").unwrap(), b"v\0\xffalue");
        assert_eq!(get(&user_arg, b"empty").unwrap(), b"");
        assert_eq!(try_get(&user_arg, b"empty").unwrap(), b"");
        let big: Vec<u8> = (0..1_000_003u32).map(|i| i as u8).collect();
        assert_eq!(put(&user_arg, b"big", &big), None);
        assert_eq!(get(&user_arg, b"big").unwrap(), big);

        let (code, message) = get(&user_arg, b"missing").unwrap_err();
        assert_eq!(code, 4, "DEADLINE_EXCEEDED");
        assert!(message.contains("\"missing\""), "{message}");
        let (code, message) = try_get(&user_arg, b"missing\xff").unwrap_err();
        assert_eq!(code, 5, "NOT_FOUND");
        assert!(message.contains("missing\\xff"), "{message}");
    }

    #[test]
    fn a_dead_process_reaches_the_plugin_as_aborted_naming_it() {
        let user_arg = KvUserArg::new(Arc::new(Memory::default()));
        let (code, message) = get(&user_arg, b"dead").unwrap_err();
        assert_eq!(code, 10, "ABORTED");
        assert!(message.contains("process 3 failed"), "{message}");
    }

    #[test]
    fn a_panic_in_the_store_becomes_an_internal_error() {
        let user_arg = KvUserArg::new(Arc::new(Memory::default()));
        let (code, message) = put(&user_arg, b"boom", b"").expect("an error");
        assert_eq!(code, 13, "INTERNAL");
        assert!(message.contains("kv_put_callback panicked"), "{message}");
    }
}
