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
//! | array leaf | [`Array`] |
//! | `tuple` | a tuple, or a fixed array `[T; N]` |
//! | `list` | `Vec<T>`, or a fixed array |
//! | `dict` (string keys, sorted) | `BTreeMap<String, T>`, or a `#[derive(Tree)]` struct whose fields are declared in key order |
//! | `None` | `Option::None` (or `()`) |
//!
//! [`Exported::call`] takes the positional arguments as a tuple (`(params, x)`; `(x,)` for
//! one), or the whole pair `(args, kwargs)` with the keyword arguments as a
//! `BTreeMap<String, T>`, which an artifact exported with keyword arguments needs. Results
//! come back as the same Rust types (a dict as a `BTreeMap<String, _>`, `None` as an
//! `Option`). Custom nodes (namedtuples, dataclasses) are [`ExportError::Unsupported`].
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
//! [`ExportError::SymbolicShapes`] naming its symbolic dimensions and their values here.
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
mod flatbuf;
mod schema;
mod write;

use crate::core::sharding::PartitionSpec;
use crate::dtype::DType;
use crate::error::{Error, ExportError, Result};
use crate::tree::TreeDef;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

pub use schema::CALLING_CONVENTION_VERSIONS;
pub use write::{export, export_sharded};

/// Reads an artifact written by `jax.export.serialize` (or [`Exported::serialize`]).
///
/// The bytes are untrusted: a truncated or corrupted artifact is
/// [`ExportError::Malformed`], a calling convention this reader does not run
/// [`ExportError::CallingConventionVersion`], and a feature jaxrs does not run
/// [`ExportError::Unsupported`]; nothing panics.
pub fn deserialize(bytes: &[u8]) -> Result<Exported> {
    schema::read(bytes)
}

/// One dimension of an exported shape: a size, or a symbolic expression (`"b"`, `"2*b"`)
/// of a shape-polymorphic export.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Known(usize),
    Symbolic(String),
}

impl Dim {
    fn parse(s: &str) -> std::result::Result<Dim, flatbuf::Malformed> {
        let s = s.trim();
        if s.is_empty() {
            return Err(flatbuf::Malformed("an empty dimension".into()));
        }
        if s.bytes().all(|b| b.is_ascii_digit()) {
            return s
                .parse()
                .map(Dim::Known)
                .map_err(|_| flatbuf::Malformed(format!("the dimension {s} is too large")));
        }
        Ok(Dim::Symbolic(s.to_string()))
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(n) => write!(f, "{n}"),
            Dim::Symbolic(s) => f.write_str(s),
        }
    }
}

/// The shape and dtype of one input or output, as JAX's `ShapedArray`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExportedAval {
    pub shape: Vec<Dim>,
    pub dtype: DType,
}

impl fmt::Display for ExportedAval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.shape.iter().map(ToString::to_string).collect();
        write!(f, "{}[{}]", self.dtype.short_name(), dims.join(","))
    }
}

/// A mesh as an artifact names it: axis names and sizes, no devices (JAX's `AbstractMesh`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExportedMesh {
    pub axis_names: Vec<String>,
    pub axis_sizes: Vec<usize>,
}

/// How one input or output lies on the artifact's mesh (JAX's `NamedSharding` over an
/// abstract mesh).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExportedSharding {
    pub mesh: ExportedMesh,
    pub spec: PartitionSpec,
}

/// A safety check the exporter switched off (`jax.export.DisabledSafetyCheck`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DisabledSafetyCheck {
    /// Run on a platform the artifact was not exported for.
    Platform,
    /// The module may call this custom call target, which has no stability guarantee.
    CustomCall(String),
    /// Shape assertions of a shape-polymorphic module are off.
    ShapeAssertions,
}

/// A function exported by `jax.export` or by [`export`]: what
/// `jax.export.Exported` holds, readable field by field, and runnable by
/// [`call`](Exported::call).
pub struct Exported {
    fun_name: String,
    in_tree: TreeDef,
    in_avals: Vec<ExportedAval>,
    out_tree: TreeDef,
    out_avals: Vec<ExportedAval>,
    in_shardings: Vec<Option<ExportedSharding>>,
    out_shardings: Vec<Option<ExportedSharding>>,
    nr_devices: u32,
    platforms: Vec<String>,
    ordered_effects: Vec<String>,
    unordered_effects: Vec<String>,
    disabled_safety_checks: Vec<DisabledSafetyCheck>,
    mlir_module_serialized: Vec<u8>,
    calling_convention_version: u16,
    module_kept_var_idx: Vec<usize>,
    uses_global_constants: bool,
    serialization_version: u16,
    vjp: Option<Box<Exported>>,
    /// Programs compiled for this artifact, by the argument shapes and devices they run on.
    compiled: Arc<Mutex<HashMap<call::CompileKey, Arc<call::Compiled>>>>,
}

impl Clone for Exported {
    fn clone(&self) -> Exported {
        Exported {
            fun_name: self.fun_name.clone(),
            in_tree: self.in_tree.clone(),
            in_avals: self.in_avals.clone(),
            out_tree: self.out_tree.clone(),
            out_avals: self.out_avals.clone(),
            in_shardings: self.in_shardings.clone(),
            out_shardings: self.out_shardings.clone(),
            nr_devices: self.nr_devices,
            platforms: self.platforms.clone(),
            ordered_effects: self.ordered_effects.clone(),
            unordered_effects: self.unordered_effects.clone(),
            disabled_safety_checks: self.disabled_safety_checks.clone(),
            mlir_module_serialized: self.mlir_module_serialized.clone(),
            calling_convention_version: self.calling_convention_version,
            module_kept_var_idx: self.module_kept_var_idx.clone(),
            uses_global_constants: self.uses_global_constants,
            serialization_version: self.serialization_version,
            vjp: self.vjp.clone(),
            compiled: Arc::clone(&self.compiled),
        }
    }
}

impl fmt::Debug for Exported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exported")
            .field("fun_name", &self.fun_name)
            .field("in_tree", &self.in_tree.to_string())
            .field("in_avals", &self.in_avals)
            .field("out_tree", &self.out_tree.to_string())
            .field("out_avals", &self.out_avals)
            .field("nr_devices", &self.nr_devices)
            .field("platforms", &self.platforms)
            .field(
                "calling_convention_version",
                &self.calling_convention_version,
            )
            .field("module_bytes", &self.mlir_module_serialized.len())
            .finish_non_exhaustive()
    }
}

impl Exported {
    /// Writes the artifact: bytes `jax.export.deserialize` reads (and [`deserialize`]).
    pub fn serialize(&self) -> Vec<u8> {
        schema::write(self)
    }

    /// The exported function's name.
    pub fn fun_name(&self) -> &str {
        &self.fun_name
    }

    /// The input structure, JAX's `(args, kwargs)` pair as a jaxrs [`TreeDef`] (see the
    /// module's table).
    pub fn in_tree(&self) -> &TreeDef {
        &self.in_tree
    }

    /// The output structure.
    pub fn out_tree(&self) -> &TreeDef {
        &self.out_tree
    }

    /// The flat inputs' shapes and dtypes, in the order of the input tree's leaves.
    pub fn in_avals(&self) -> &[ExportedAval] {
        &self.in_avals
    }

    /// The flat outputs' shapes and dtypes.
    pub fn out_avals(&self) -> &[ExportedAval] {
        &self.out_avals
    }

    /// How each flat input lies on the artifact's mesh (`None`: not specified).
    pub fn in_shardings(&self) -> &[Option<ExportedSharding>] {
        &self.in_shardings
    }

    /// How each flat output lies on the artifact's mesh (`None`: not specified).
    pub fn out_shardings(&self) -> &[Option<ExportedSharding>] {
        &self.out_shardings
    }

    /// The number of devices the module was lowered for.
    pub fn nr_devices(&self) -> usize {
        self.nr_devices as usize
    }

    /// The platforms it was exported for (`"cpu"`, `"cuda"`, `"tpu"`, ...).
    pub fn platforms(&self) -> &[String] {
        &self.platforms
    }

    /// The type names of its ordered effects (jaxrs runs artifacts without effects).
    pub fn ordered_effects(&self) -> &[String] {
        &self.ordered_effects
    }

    /// The type names of its unordered effects.
    pub fn unordered_effects(&self) -> &[String] {
        &self.unordered_effects
    }

    /// The safety checks the exporter disabled.
    pub fn disabled_safety_checks(&self) -> &[DisabledSafetyCheck] {
        &self.disabled_safety_checks
    }

    /// The module: a StableHLO portable artifact (VHLO bytecode) from JAX, StableHLO text
    /// from jaxrs.
    pub fn mlir_module_serialized(&self) -> &[u8] {
        &self.mlir_module_serialized
    }

    /// The calling convention version (see [`CALLING_CONVENTION_VERSIONS`]).
    pub fn calling_convention_version(&self) -> u16 {
        self.calling_convention_version
    }

    /// The indices of the inputs the module takes (the others were unused and dropped).
    pub fn module_kept_var_idx(&self) -> &[usize] {
        &self.module_kept_var_idx
    }

    /// Whether the module needs shape refinement (shape polymorphism, or a platform index
    /// argument) before XLA compiles it.
    pub fn uses_global_constants(&self) -> bool {
        self.uses_global_constants
    }

    /// The serialization version the header states (JAX 0.10.2 writes 3).
    pub fn serialization_version(&self) -> u16 {
        self.serialization_version
    }

    /// The exported VJP, when the artifact was serialized with `vjp_order > 0`: it takes the
    /// primal inputs then one cotangent per primal output, flat, and returns the inputs'
    /// cotangents.
    pub fn vjp(&self) -> Option<&Exported> {
        self.vjp.as_deref()
    }

    /// The symbolic dimension expressions of the inputs, in order of first appearance.
    pub fn symbolic_dims(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for a in &self.in_avals {
            for d in &a.shape {
                if let Dim::Symbolic(s) = d {
                    if !out.contains(s) {
                        out.push(s.clone());
                    }
                }
            }
        }
        out
    }
}

fn arguments_error(message: String) -> Error {
    Error::Export(ExportError::Arguments(message))
}
