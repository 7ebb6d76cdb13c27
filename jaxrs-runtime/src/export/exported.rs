//! The data an artifact holds (`jax.export.Exported`), and what a compiled one keeps.

use super::flatbuf::Malformed;
use crate::core::sharding::PartitionSpec;
use crate::core::spmd::SpmdProgram;
use crate::dtype::DType;
use crate::error::{Error, ExportError};
use crate::pjrt::LoadedExecutable;
use crate::tree::TreeDef;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// A compiled program is found by its arguments' shapes and the devices it runs on.
pub(crate) type CompileKey = (Vec<Vec<usize>>, Vec<i32>);

/// A compiled artifact: one device, or SPMD over a mesh.
pub(crate) enum Compiled {
    Single {
        exe: LoadedExecutable,
    },
    Spmd {
        exe: LoadedExecutable,
        program: SpmdProgram,
    },
}

/// One dimension of an exported shape: a size, or a symbolic expression (`"b"`, `"2*b"`)
/// of a shape-polymorphic export.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Known(usize),
    Symbolic(String),
}

impl Dim {
    pub(crate) fn parse(s: &str) -> Result<Dim, Malformed> {
        let s = s.trim();
        if s.is_empty() {
            return Err(Malformed("an empty dimension".into()));
        }
        if s.bytes().all(|b| b.is_ascii_digit()) {
            return s
                .parse()
                .map(Dim::Known)
                .map_err(|_| Malformed(format!("the dimension {s} is too large")));
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

/// A function exported by `jax.export` or by [`export`](crate::export::export): what
/// `jax.export.Exported` holds, readable field by field, and runnable by
/// [`call`](Exported::call). Clones share the programs compiled for it.
#[derive(Clone)]
pub struct Exported {
    pub(crate) fun_name: String,
    pub(crate) in_tree: TreeDef,
    pub(crate) in_avals: Vec<ExportedAval>,
    pub(crate) out_tree: TreeDef,
    pub(crate) out_avals: Vec<ExportedAval>,
    pub(crate) in_shardings: Vec<Option<ExportedSharding>>,
    pub(crate) out_shardings: Vec<Option<ExportedSharding>>,
    pub(crate) nr_devices: u32,
    pub(crate) platforms: Vec<String>,
    pub(crate) ordered_effects: Vec<String>,
    pub(crate) unordered_effects: Vec<String>,
    pub(crate) disabled_safety_checks: Vec<DisabledSafetyCheck>,
    pub(crate) mlir_module_serialized: Vec<u8>,
    pub(crate) calling_convention_version: u16,
    pub(crate) module_kept_var_idx: Vec<usize>,
    pub(crate) uses_global_constants: bool,
    pub(crate) serialization_version: u16,
    pub(crate) vjp: Option<Box<Exported>>,
    /// Programs compiled for this artifact, by the argument shapes and devices they run on.
    pub(crate) compiled: Arc<Mutex<HashMap<CompileKey, Arc<Compiled>>>>,
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

    /// The calling convention version (see [`CALLING_CONVENTION_VERSIONS`](crate::export::CALLING_CONVENTION_VERSIONS)).
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

pub(crate) fn arguments_error(message: String) -> Error {
    Error::Export(ExportError::Arguments(message))
}
