//! The engine of jaxrs: arrays, the IR, transformations, StableHLO lowering and PJRT.
//!
//! Users depend on the `jaxrs` facade crate, which re-exports this one. The data flow is
//! described in DESIGN.md: a user function is traced ([`trace`]) into a [`ir::Jaxpr`],
//! transformed by passes, lowered ([`lower`]) to StableHLO and run through [`pjrt`].

pub mod aval;
pub mod core;
pub mod dtype;
pub mod error;
pub mod higher_order;
pub mod interpreters;
pub mod ops;
pub mod pjrt;
pub mod prims;
pub mod transforms;
pub mod tree;

pub use crate::core::array::{Array, Sharding};
pub use crate::core::client::try_run;
pub use crate::core::ir::{ClosedJaxpr, Jaxpr};
pub use aval::Aval;
pub use dtype::{DType, Element};
pub use error::{Error, ErrorCode, Result};
pub use ops::{stop_gradient, where_, Axes, Dims, DotDims, IntoArg};
pub use transforms::check_grads::{check_grads, check_grads_with, Modes};
pub use transforms::grad::{
    custom_vjp, grad, jvp, value_and_grad, value_and_grad_argnums, value_and_grad_aux, vjp, Argnum,
    Argnums, CustomVjp, Pullback,
};
pub use transforms::inspect::{make_jaxpr, stablehlo};
pub use transforms::jit::{jit, jit_call, FloatKey, JitSite, Jitted, StaticArgs};
pub use transforms::loops::{cond, fori_loop, scan, scan_with, switch, while_loop, ScanOptions};
pub use transforms::remat::{checkpoint_name, remat, Remat, RematPolicy};
pub use transforms::vmap::{vmap, vmap_sized, AxisSpec};
pub use tree::{tree_leaves, tree_map, tree_map2, tree_unflatten, Tree, TreeDef, TreeMismatch};
