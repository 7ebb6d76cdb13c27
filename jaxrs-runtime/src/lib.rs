//! The engine of jaxrs: arrays, the IR, transformations, StableHLO lowering and PJRT.
//!
//! Users depend on the `jaxrs` facade crate, which re-exports this one.

pub mod array;
pub mod dtype;
pub mod error;
pub mod jit;
mod jit_cache;
pub mod pjrt;
pub mod tree;

pub use array::Array;
pub use dtype::{DType, Element};
pub use error::{Error, ErrorCode, Result};
pub use jit::{jit, jit_call, FloatKey, JitSite, Jitted, StaticArgs};
pub use tree::{tree_leaves, tree_map, tree_map2, tree_unflatten, Tree, TreeDef, TreeMismatch};
