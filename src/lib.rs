//! # jaxrs
//!
//! JAX's composable transformations for Rust: `#[jit]`, `grad`, `vmap`, ... over arrays that
//! run on XLA through PJRT.

pub use jaxrs_macros::{jit, remat, scan, vmap, Tree};
pub use jaxrs_runtime::*;

/// Everything a typical program needs.
pub mod prelude {
    pub use crate::{
        checkpoint_name, grad, jit, jvp, remat, tree_map, tree_map2, value_and_grad,
        value_and_grad_aux, vjp, Array, DType, RematPolicy, Tree,
    };
    pub use crate::{vmap, vmap_sized};
}

/// Items the macros' expansions use. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use jaxrs_runtime::transforms::jit::{jit_call, FloatKey, JitSite};
    pub use jaxrs_runtime::transforms::loops::{scan_with, ScanOptions};
    pub use jaxrs_runtime::transforms::remat::{remat_call, RematPolicy};
    pub use jaxrs_runtime::transforms::vmap::{vmap_call, VmapNames};
    pub use jaxrs_runtime::tree::{next_leaf, Tree, TreeDef, TreeMismatch};
    pub use jaxrs_runtime::Array;

    /// The types of Rust-scalar parameters once a transformation traces them: `Array`s. A
    /// stacked attribute (`#[jit] #[vmap(..)] fn f(x: &Array, lr: f32)`) sees `lr` as
    /// `&traced_scalar::f32`, so it still knows `lr` is a scalar (rank 0).
    #[allow(non_camel_case_types)]
    pub mod traced_scalar {
        pub type f32 = jaxrs_runtime::Array;
        pub type f64 = jaxrs_runtime::Array;
        pub type i32 = jaxrs_runtime::Array;
        pub type i64 = jaxrs_runtime::Array;
        pub type u32 = jaxrs_runtime::Array;
        pub type u8 = jaxrs_runtime::Array;
        pub type i8 = jaxrs_runtime::Array;
        pub type bool = jaxrs_runtime::Array;
    }
}
