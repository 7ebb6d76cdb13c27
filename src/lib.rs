//! # jaxrs
//!
//! JAX's composable transformations for Rust: `#[jit]`, `grad`, `vmap`, ... over arrays that
//! run on XLA through PJRT.

pub use jaxrs_macros::{jit, remat, scan, Tree};
pub use jaxrs_runtime::*;

/// Everything a typical program needs.
pub mod prelude {
    pub use crate::{
        checkpoint_name, grad, jit, jvp, remat, tree_map, tree_map2, value_and_grad,
        value_and_grad_aux, vjp, Array, DType, RematPolicy, Tree,
    };
}

/// Items the macros' expansions use. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use jaxrs_runtime::control::{scan_with, ScanOptions};
    pub use jaxrs_runtime::jit::{jit_call, FloatKey, JitSite};
    pub use jaxrs_runtime::remat::{remat_call, RematPolicy};
    pub use jaxrs_runtime::tree::{next_leaf, Tree, TreeDef, TreeMismatch};
    pub use jaxrs_runtime::Array;
}
