//! Host kernels: computations XLA's CPU compiler has no expansion for (LU, SVD, a fast
//! symmetric eigensolver, ...) or runs slower than a Rust crate does (the FFT), written in Rust and called from compiled programs as XLA FFI
//! custom calls (`stablehlo.custom_call @jaxrs_<name>`, `api_version = 4`), the way jaxlib
//! calls LAPACK on CPU.
//!
//! Each kernel is a [`HostKernel`](crate::pjrt::ffi::HostKernel): it reads its operands'
//! host memory and string attributes and writes its results in place. [`ensure_registered`]
//! registers every kernel with the plugin (once per process) before a program that calls one
//! is compiled. A kernel that fails leaves its floating-point results NaN, as JAX's do when
//! LAPACK reports a failure.
//!
//! The kernels run where the device memory is host memory (the CPU plugin); a program
//! calling one on another platform fails to compile, naming the custom call.

pub mod bf16_rows;
mod fft;
pub mod linalg;
mod schur;

use crate::aval::Aval;
use crate::core::client::{client, fail};
use crate::core::lower::LowerCtx;
use crate::error::Result;
use crate::pjrt::ffi::{self, FfiHandler, HostKernel, XLA_FFI_CallFrame};
use crate::pjrt::Api;
use std::os::raw::c_void;
use std::sync::Mutex;

/// Declares an `extern "C"` entry for each kernel and the table [`ensure_registered`] walks.
macro_rules! kernel_table {
    ($($target:literal => $entry:ident: $kernel:path),* $(,)?) => {
        $(
            /// XLA's entry for this kernel.
            ///
            /// # Safety
            /// Called by XLA with a valid call frame.
            unsafe extern "C" fn $entry(frame: *mut XLA_FFI_CallFrame) -> *mut c_void {
                // SAFETY: XLA's frame, passed on.
                unsafe { ffi::kernel_entry(frame, $kernel as HostKernel) }
            }
        )*
        /// Every kernel: its custom-call target and XLA's entry for it.
        const KERNELS: &[(&str, FfiHandler)] = &[$(($target, $entry)),*];
    };
}

kernel_table! {
    "jaxrs_cholesky" => cholesky_entry: linalg::cholesky,
    "jaxrs_triangular_solve" => triangular_solve_entry: linalg::triangular_solve,
    "jaxrs_lu" => lu_entry: linalg::lu,
    "jaxrs_qr" => qr_entry: linalg::qr,
    "jaxrs_eigh" => eigh_entry: linalg::eigh,
    "jaxrs_svd" => svd_entry: linalg::svd,
    "jaxrs_eig" => eig_entry: linalg::eig,
    "jaxrs_hessenberg" => hessenberg_entry: linalg::hessenberg,
    "jaxrs_schur" => schur_entry: linalg::schur,
    "jaxrs_sqrtm_triu" => sqrtm_triu_entry: linalg::sqrtm_triu,
    "jaxrs_sylvester_triu" => sylvester_triu_entry: linalg::sylvester_triu,
    "jaxrs_parlett" => parlett_entry: linalg::parlett,
    "jaxrs_fft" => fft_entry: fft::fft,
    "jaxrs_bf16_rows" => bf16_rows_entry: bf16_rows::bf16_rows,
}

/// Registers every kernel with `api`'s plugin for the host platform, once per process (the
/// same outcome every later call).
pub fn ensure_registered(api: &Api) -> Result<()> {
    static DONE: Mutex<Option<std::result::Result<(), String>>> = Mutex::new(None);
    ffi::register_once(&DONE, || {
        linalg::use_sequential_faer();
        KERNELS
            .iter()
            .try_for_each(|&(target, entry)| ffi::register(api, target, entry))
    })
}

/// Lowers a call of the host kernel `target` (a `stablehlo.custom_call` with XLA's FFI
/// calling convention) with string attributes `attrs`, registering the kernels first.
pub(crate) fn lower_host_kernel(
    cx: &mut LowerCtx,
    target: &str,
    attrs: &[(&str, &str)],
    ins: &[String],
    in_avals: &[Aval],
    out_avals: &[Aval],
) -> Vec<String> {
    if let Err(e) = ensure_registered(client().api()) {
        fail(e);
    }
    let config: Vec<String> = attrs
        .iter()
        .map(|(name, value)| format!("{name} = \"{value}\""))
        .collect();
    let props = format!(
        "api_version = 4 : i32, backend_config = {{{}}}, call_target_name = \"{target}\"",
        config.join(", ")
    );
    let operands: Vec<&str> = ins.iter().map(String::as_str).collect();
    let avals: Vec<&Aval> = in_avals.iter().collect();
    let results: Vec<&Aval> = out_avals.iter().collect();
    cx.op("stablehlo.custom_call", &operands, &avals, &props, &results)
}
