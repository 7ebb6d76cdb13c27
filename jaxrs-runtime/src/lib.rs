//! The engine of jaxrs: arrays, the IR, transformations, StableHLO lowering and PJRT.
//!
//! Users depend on the `jaxrs` facade crate, which re-exports this one. The data flow is
//! described in DESIGN.md: a user function is traced ([`trace`]) into a [`ir::Jaxpr`],
//! transformed by passes, lowered ([`lower`]) to StableHLO and run through [`pjrt`].

pub mod ad;
pub mod api;
pub mod array;
pub mod autodiff;
pub mod aval;
pub mod batching;
pub mod control;
pub mod dtype;
mod eager;
pub mod error;
pub mod ir;
pub mod jit;
mod jit_cache;
pub mod lower;
pub mod ops;
pub mod pjrt;
pub mod primitive;
pub mod prims;
pub mod remat;
pub mod runtime;
pub mod testing;
pub mod trace;
pub mod tree;
pub mod vmap;

pub use api::{make_jaxpr, stablehlo};
pub use array::{Array, Sharding};
pub use autodiff::{
    custom_vjp, grad, jvp, value_and_grad, value_and_grad_argnums, value_and_grad_aux, vjp, Argnum,
    Argnums, CustomVjp, Pullback,
};
pub use aval::Aval;
pub use control::{cond, fori_loop, scan, scan_with, switch, while_loop, ScanOptions};
pub use dtype::{DType, Element};
pub use error::{Error, ErrorCode, Result};
pub use ir::{ClosedJaxpr, Jaxpr};
pub use jit::{jit, jit_call, FloatKey, JitSite, Jitted, StaticArgs};
pub use ops::{stop_gradient, where_, Axes, Dims, DotDims, IntoArg};
pub use remat::{checkpoint_name, remat, Remat, RematPolicy};
pub use runtime::try_run;
pub use testing::{check_grads, check_grads_with, Modes};
pub use tree::{tree_leaves, tree_map, tree_map2, tree_unflatten, Tree, TreeDef, TreeMismatch};
pub use vmap::{vmap, vmap_sized, AxisSpec};
