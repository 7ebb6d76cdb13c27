//! `jax.export`'s artifacts, both ways: [`deserialize`] reads what `jax.export.serialize`
//! wrote and [`Exported::call`] runs it; [`export`] traces a jaxrs function and
//! [`Exported::serialize`] writes an artifact `jax.export.deserialize` reads and JAX calls.
//!
//! An artifact is a FlatBuffer (JAX's schema `jax/_src/export/serialization.fbs`, read and
//! written here by hand, every offset checked) holding the function's input and output
//! trees, abstract values, shardings, platforms, effects and the StableHLO module. The module
//! goes to the PJRT plugin as it is: JAX stores a StableHLO portable artifact (VHLO
//! bytecode), which the plugin upgrades itself; jaxrs writes StableHLO text, which JAX's
//! deserializer and call path accept as well (MLIR's parser reads both).
//!
//! # Trees
//!
//! JAX's input tree is the pair `(args, kwargs)`; its nodes map onto jaxrs trees as
//!
//! | JAX | jaxrs |
//! |---|---|
//! | array leaf | [`Array`](crate::Array) |
//! | `tuple` | a tuple, or a fixed array `[T; N]` |
//! | `list` | `Vec<T>`, or a fixed array |
//! | `dict` (string keys, sorted) | `BTreeMap<String, T>`, or a `#[derive(Tree)]` struct whose fields are declared in key order |
//! | `None` | `Option::None` (or `()`) |
//!
//! [`Exported::call`] takes the positional arguments as a tuple (`(params, x)`; `(x,)` for
//! one), or the whole pair `(args, kwargs)` with the keyword arguments as a
//! `BTreeMap<String, T>`, which an artifact exported with keyword arguments needs. Results
//! come back as the same Rust types (a dict as a `BTreeMap<String, _>`, `None` as an
//! `Option`); a dict whose values differ in type (an array and a list) has no such Rust type:
//! read it with [`Exported::call_flat`] and [`Exported::out_tree`]. Custom nodes (namedtuples, dataclasses) are [`ExportError::Unsupported`](crate::ExportError::Unsupported).
//!
//! # What runs
//!
//! Calling convention versions 9 and 10 (JAX 0.10.2's range); artifacts for one device or
//! for a mesh (the arguments are laid out as the artifact's shardings say, over a mesh of the
//! process's first `nr_devices` devices or the mesh the arguments already lie on);
//! multi-platform artifacts (the platform index argument is passed); a platform check that
//! refuses an artifact without this process's platform unless the artifact disabled it.
//! Effects (ordered or not), host memory, custom pytree nodes and dtypes jaxrs does not have
//! are typed errors. Shape-polymorphic artifacts need shape refinement, which jaxlib runs in
//! Python before compiling; the plugin does not, so such an artifact is
//! [`ExportError::SymbolicShapes`](crate::ExportError::SymbolicShapes) naming its symbolic dimensions and their values here.
//!
//! ```
//! use jaxrs::prelude::*;
//! use jaxrs::export;
//!
//! // Write: trace a function, serialize it (JAX reads these bytes with jax.export.deserialize).
//! let f = |(x, y): (Array, Array)| (x.matmul(&y).tanh(), y.sum(None, false));
//! let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
//! let exported = export::export(f, &(x.clone(), x.clone()))?;
//! let bytes = exported.serialize();
//!
//! // Read and run (in this process or another).
//! let back = export::deserialize(&bytes)?;
//! assert_eq!(back.platforms(), ["cpu"]);
//! let (z, s): (Array, Array) = back.call(&(x.clone(), x.clone()))?;
//! assert_eq!(z.shape(), &[2, 2]);
//! assert_eq!(s.item::<f32>(), 10.0);
//! # Ok::<(), jaxrs::Error>(())
//! ```

mod call;
mod exported;
mod flatbuf;
mod schema;
mod write;

use crate::error::Result;

pub use exported::{
    Dim, DisabledSafetyCheck, Exported, ExportedAval, ExportedMesh, ExportedSharding,
};
pub use schema::CALLING_CONVENTION_VERSIONS;
pub use write::{export, export_sharded};

/// Reads an artifact written by `jax.export.serialize` (or [`Exported::serialize`]).
///
/// The bytes are untrusted: a truncated or corrupted artifact is
/// [`ExportError::Malformed`](crate::ExportError::Malformed), a calling convention this reader does not run
/// [`ExportError::CallingConventionVersion`](crate::ExportError::CallingConventionVersion), and a feature jaxrs does not run
/// [`ExportError::Unsupported`](crate::ExportError::Unsupported); nothing panics.
pub fn deserialize(bytes: &[u8]) -> Result<Exported> {
    schema::read(bytes)
}
