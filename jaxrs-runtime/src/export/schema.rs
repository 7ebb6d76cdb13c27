//! `jax.export`'s serialization schema (`jax/_src/export/serialization.fbs`, JAX 0.10.2,
//! serialization version 11), read into [`Exported`] and written back.
//!
//! Each table's fields are named here by their vtable slot (field `i` of the schema is slot
//! `4 + 2 i`), as the schema lists them.

use super::exported::{
    Dim, DisabledSafetyCheck, Exported, ExportedAval, ExportedMesh, ExportedSharding,
};
use super::flatbuf::{Buf, Builder, Field, Malformed, Offset, Table};
use crate::core::sharding::{PartitionDim, PartitionSpec};
use crate::dtype::DType;
use crate::error::{Error, ExportError};
use crate::tree::TreeDef;
use std::cell::Cell;

/// The calling convention versions jaxrs runs (JAX 0.10.2's `minimum_supported_...` and
/// `maximum_supported_calling_convention_version`).
pub const CALLING_CONVENTION_VERSIONS: std::ops::RangeInclusive<u16> = 9..=10;
/// The calling convention jaxrs writes (JAX 0.10.2's default).
pub(crate) const WRITTEN_CALLING_CONVENTION: u16 = 10;
/// What JAX 0.10.2 stores as the serialization version (older readers accept only 2 or 3;
/// the schema's true version is 11).
const WRITTEN_SERIALIZATION_VERSION: u16 = 3;

/// How deep a pytree or a chain of VJPs may nest before the artifact is called malformed.
const MAX_TREE_DEPTH: usize = 128;
const MAX_VJP_DEPTH: usize = 8;

mod slot {
    // table Exported
    pub const SERIALIZATION_VERSION: u16 = 4;
    pub const FUNCTION_NAME: u16 = 6;
    pub const IN_TREE: u16 = 8;
    pub const IN_AVALS: u16 = 10;
    pub const OUT_TREE: u16 = 12;
    pub const OUT_AVALS: u16 = 14;
    pub const NR_DEVICES_SHORT: u16 = 16;
    pub const IN_SHARDINGS: u16 = 18;
    pub const OUT_SHARDINGS: u16 = 20;
    pub const PLATFORMS: u16 = 22;
    pub const ORDERED_EFFECTS: u16 = 24;
    pub const UNORDERED_EFFECTS: u16 = 26;
    pub const DISABLED_CHECKS: u16 = 28;
    pub const MLIR_MODULE_SERIALIZED: u16 = 30;
    pub const CALLING_CONVENTION_VERSION: u16 = 32;
    pub const MODULE_KEPT_VAR_IDX: u16 = 34;
    pub const USES_GLOBAL_CONSTANTS: u16 = 36;
    pub const VJP: u16 = 38;
    pub const NR_DEVICES: u16 = 40;
    pub const UNIQUE_AVALS: u16 = 42;
    pub const UNIQUE_ABSTRACT_MESHES: u16 = 44;
    pub const UNIQUE_NAMED_SHARDINGS: u16 = 46;
    pub const IN_AVALS_IDXS: u16 = 48;
    pub const OUT_AVALS_IDXS: u16 = 50;
    pub const IN_SHARDINGS_IDXS: u16 = 52;
    pub const OUT_SHARDINGS_IDXS: u16 = 54;
    // table PyTreeDef
    pub const TREE_KIND: u16 = 4;
    pub const TREE_CHILDREN: u16 = 6;
    pub const TREE_CHILDREN_NAMES: u16 = 8;
    pub const TREE_CUSTOM_NAME: u16 = 10;
    // table AbstractValue
    pub const AVAL_KIND: u16 = 4;
    pub const AVAL_SHAPE: u16 = 6;
    pub const AVAL_DTYPE: u16 = 8;
    pub const AVAL_MEMORY_SPACE: u16 = 10;
    // table AbstractMesh
    pub const MESH_AXIS_SIZES: u16 = 4;
    pub const MESH_AXIS_NAMES: u16 = 6;
    pub const MESH_AXIS_TYPES: u16 = 8;
    // table PartitionSpecOneAxis
    pub const ONE_AXIS_AXES: u16 = 4;
    // table PartitionSpec
    pub const SPEC_PARTITIONS: u16 = 4;
    pub const SPEC_REDUCED: u16 = 6;
    pub const SPEC_UNREDUCED: u16 = 8;
    // table NamedSharding
    pub const NAMED_MESH: u16 = 4;
    pub const NAMED_SPEC: u16 = 6;
    pub const NAMED_MEMORY_KIND: u16 = 8;
    pub const NAMED_ABSTRACT_MESH_IDX: u16 = 10;
    // table Sharding (before serialization version 10)
    pub const SHARDING_HLO_PROTO: u16 = 6;
    pub const SHARDING_NAMED: u16 = 8;
    // table Effect
    pub const EFFECT_TYPE_NAME: u16 = 4;
    // table DisabledSafetyCheck
    pub const CHECK_KIND: u16 = 4;
    pub const CHECK_CUSTOM_CALL_TARGET: u16 = 6;
}

// enum PyTreeDefKind
const TREE_LEAF: u8 = 0;
const TREE_NONE: u8 = 1;
const TREE_TUPLE: u8 = 2;
const TREE_LIST: u8 = 3;
const TREE_DICT: u8 = 4;
const TREE_CUSTOM: u8 = 5;
// enum AbstractValueKind
const AVAL_SHAPED_ARRAY: u8 = 0;
// enum MemorySpace
const MEMORY_SPACE_DEVICE: u8 = 1;
// enum AxisType
const AXIS_TYPE_AUTO: u8 = 1;
// enum DisabledSafetyCheckKind
const CHECK_PLATFORM: u8 = 0;
const CHECK_CUSTOM_CALL: u8 = 1;
const CHECK_SHAPE_ASSERTIONS: u8 = 2;

/// JAX's `DType` enum, in the schema's order, for the dtypes jaxrs has.
const DTYPES: [(u8, DType); 15] = [
    (0, DType::Bool),
    (1, DType::I8),
    (2, DType::I16),
    (3, DType::I32),
    (4, DType::I64),
    (5, DType::U8),
    (6, DType::U16),
    (7, DType::U32),
    (8, DType::U64),
    (9, DType::F16),
    (10, DType::F32),
    (11, DType::F64),
    (12, DType::C64),
    (13, DType::C128),
    (14, DType::BF16),
];

/// JAX's names for the schema's dtypes jaxrs does not have, for the error that names one.
fn foreign_dtype_name(code: u8) -> String {
    let name = match code {
        15 => "int4",
        16 => "uint4",
        17 => "float8_e4m3b11fnuz",
        18 => "float8_e4m3fn",
        19 => "float8_e4m3fnuz",
        20 => "float8_e5m2",
        21 => "float8_e5m2fnuz",
        22 => "float0",
        23 => "float8_e4m3",
        24 => "float8_e3m4",
        25 => "float8_e8m0fnu",
        26 => "float4_e2m1fn",
        27 => "key<fry>",
        28 => "key<rbg>",
        29 => "key<unsafe_rbg>",
        other => return format!("the unknown dtype code {other}"),
    };
    format!("the dtype {name}")
}

fn malformed(m: Malformed) -> Error {
    Error::Export(ExportError::Malformed(m.0))
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::Export(ExportError::Unsupported(what.into()))
}

/// Reads an artifact written by `jax.export.serialize` (or [`write`]).
pub(crate) fn read(bytes: &[u8]) -> Result<Exported, Error> {
    let root = Buf::new(bytes).root("Exported").map_err(malformed)?;
    read_exported(root, 0, &Budget::for_bytes(bytes.len()))
}

/// How many elements (pytree nodes, dimensions, mesh axes, copies of shared avals and
/// shardings) the reader may still build. Tables may be shared (two offsets to one table), so
/// a small buffer can describe an exponentially large tree or a list of a million references
/// to one huge shape; the reader stops instead of building it. A real artifact builds a few
/// elements per table, and every table takes at least 8 bytes.
struct Budget(Cell<usize>);

impl Budget {
    fn for_bytes(len: usize) -> Budget {
        Budget(Cell::new(len.saturating_mul(16).saturating_add(4096)))
    }

    fn charge(&self, n: usize, what: &str) -> Result<(), Error> {
        match self.0.get().checked_sub(n) {
            Some(left) => {
                self.0.set(left);
                Ok(())
            }
            None => Err(malformed(Malformed(format!(
                "{what}: more elements than the artifact's bytes can describe (shared tables)"
            )))),
        }
    }
}

fn read_exported(t: Table<'_>, vjp_depth: usize, budget: &Budget) -> Result<Exported, Error> {
    let m = malformed;
    let calling_convention_version = t.u16_or(slot::CALLING_CONVENTION_VERSION, 0).map_err(m)?;
    if !CALLING_CONVENTION_VERSIONS.contains(&calling_convention_version) {
        return Err(Error::Export(ExportError::CallingConventionVersion {
            found: calling_convention_version,
            supported: (
                *CALLING_CONVENTION_VERSIONS.start(),
                *CALLING_CONVENTION_VERSIONS.end(),
            ),
        }));
    }
    let serialization_version = t.u16_or(slot::SERIALIZATION_VERSION, 0).map_err(m)?;
    let fun_name = t
        .string(slot::FUNCTION_NAME, "function_name")
        .map_err(m)?
        .unwrap_or("")
        .to_string();

    let unique_avals = t
        .tables(slot::UNIQUE_AVALS, "unique_avals")
        .map_err(m)?
        .into_iter()
        .map(|a| read_aval(a, budget))
        .collect::<Result<Vec<_>, _>>()?;
    let unique_meshes = t
        .tables(slot::UNIQUE_ABSTRACT_MESHES, "unique_abstract_meshes")
        .map_err(m)?
        .into_iter()
        .map(|m| read_mesh(m, budget))
        .collect::<Result<Vec<_>, _>>()?;
    let unique_shardings = t
        .tables(slot::UNIQUE_NAMED_SHARDINGS, "unique_named_shardings")
        .map_err(m)?
        .into_iter()
        .map(|s| read_named_sharding(s, &unique_meshes, budget))
        .collect::<Result<Vec<_>, _>>()?;

    let avals = |idxs_slot, list_slot, what| -> Result<Vec<ExportedAval>, Error> {
        let idxs = t.u32s(idxs_slot, what).map_err(m)?;
        if !idxs.is_empty() {
            return idxs
                .iter()
                .map(|&i| {
                    let aval = unique_avals.get(i as usize).ok_or_else(|| {
                        malformed(Malformed(format!(
                            "{what}: aval index {i} of {} unique avals",
                            unique_avals.len()
                        )))
                    })?;
                    budget.charge(aval.shape.len() + 1, what)?;
                    Ok(aval.clone())
                })
                .collect();
        }
        t.tables(list_slot, what)
            .map_err(m)?
            .into_iter()
            .map(|a| read_aval(a, budget))
            .collect()
    };
    let in_avals = avals(slot::IN_AVALS_IDXS, slot::IN_AVALS, "in_avals")?;
    let out_avals = avals(slot::OUT_AVALS_IDXS, slot::OUT_AVALS, "out_avals")?;

    let shardings = |idxs_slot, list_slot, n: usize, what| {
        let idxs = t.u32s(idxs_slot, what).map_err(m)?;
        let list: Vec<Option<ExportedSharding>> = if !idxs.is_empty() {
            idxs.iter()
                .map(|&i| match i {
                    0 => Ok(None),
                    i => {
                        let s = unique_shardings.get(i as usize - 1).ok_or_else(|| {
                            malformed(Malformed(format!(
                                "{what}: sharding index {i} of {} unique shardings",
                                unique_shardings.len()
                            )))
                        })?;
                        budget.charge(s.spec.len() + s.mesh.axis_names.len() + 1, what)?;
                        Ok(Some(s.clone()))
                    }
                })
                .collect::<Result<_, Error>>()?
        } else {
            t.tables(list_slot, what)
                .map_err(m)?
                .into_iter()
                .map(|s| read_sharding(s, &unique_meshes, budget))
                .collect::<Result<_, _>>()?
        };
        match list.len() {
            0 => Ok(vec![None; n]),
            k if k == n => Ok(list),
            k => Err(malformed(Malformed(format!(
                "{what}: {k} shardings for {n} values"
            )))),
        }
    };
    let in_shardings = shardings(
        slot::IN_SHARDINGS_IDXS,
        slot::IN_SHARDINGS,
        in_avals.len(),
        "in_shardings",
    )?;
    let out_shardings = shardings(
        slot::OUT_SHARDINGS_IDXS,
        slot::OUT_SHARDINGS,
        out_avals.len(),
        "out_shardings",
    )?;

    let in_tree = read_tree_root(t, slot::IN_TREE, "in_tree", budget)?;
    let out_tree = read_tree_root(t, slot::OUT_TREE, "out_tree", budget)?;
    for (tree, avals, what) in [
        (&in_tree, &in_avals, "in_tree"),
        (&out_tree, &out_avals, "out_tree"),
    ] {
        if tree.num_leaves() != avals.len() {
            return Err(malformed(Malformed(format!(
                "{what} has {} leaves for {} avals",
                tree.num_leaves(),
                avals.len()
            ))));
        }
    }
    if !matches!(&in_tree, TreeDef::Tuple(c) if c.len() == 2 && matches!(c[1], TreeDef::Map(_))) {
        return Err(malformed(Malformed(format!(
            "in_tree is {in_tree}, not a pair (args, kwargs)"
        ))));
    }

    let nr_devices = match t.u32_or(slot::NR_DEVICES, 0).map_err(m)? {
        0 => u32::from(t.u16_or(slot::NR_DEVICES_SHORT, 0).map_err(m)?),
        n => n,
    };
    if nr_devices == 0 {
        return Err(malformed(Malformed("nr_devices is 0".into())));
    }
    let platforms = t
        .strings(slot::PLATFORMS, "platforms")
        .map_err(m)?
        .into_iter()
        .map(str::to_string)
        .collect();
    let effects = |s, what| -> Result<Vec<String>, Error> {
        t.tables(s, what)
            .map_err(m)?
            .into_iter()
            .map(|e| {
                Ok(e.string(slot::EFFECT_TYPE_NAME, "Effect.type_name")
                    .map_err(m)?
                    .unwrap_or("")
                    .to_string())
            })
            .collect()
    };
    let ordered_effects = effects(slot::ORDERED_EFFECTS, "ordered_effects")?;
    let unordered_effects = effects(slot::UNORDERED_EFFECTS, "unordered_effects")?;
    let disabled_safety_checks = t
        .tables(slot::DISABLED_CHECKS, "disabled_checks")
        .map_err(m)?
        .into_iter()
        .map(|c| {
            Ok(match c.u8_or(slot::CHECK_KIND, 0).map_err(m)? {
                CHECK_PLATFORM => DisabledSafetyCheck::Platform,
                CHECK_CUSTOM_CALL => DisabledSafetyCheck::CustomCall(
                    c.string(slot::CHECK_CUSTOM_CALL_TARGET, "custom_call_target")
                        .map_err(m)?
                        .unwrap_or("")
                        .to_string(),
                ),
                CHECK_SHAPE_ASSERTIONS => DisabledSafetyCheck::ShapeAssertions,
                other => {
                    return Err(malformed(Malformed(format!(
                        "an unknown DisabledSafetyCheck kind {other}"
                    ))))
                }
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mlir_module_serialized = t
        .scalars(slot::MLIR_MODULE_SERIALIZED, 1, "mlir_module_serialized")
        .map_err(m)?
        .to_vec();
    if mlir_module_serialized.is_empty() {
        return Err(malformed(Malformed("the artifact holds no module".into())));
    }
    let module_kept_var_idx: Vec<usize> = t
        .u16s(slot::MODULE_KEPT_VAR_IDX, "module_kept_var_idx")
        .map_err(m)?
        .into_iter()
        .map(usize::from)
        .collect();
    if module_kept_var_idx.windows(2).any(|w| w[0] >= w[1])
        || module_kept_var_idx.iter().any(|&i| i >= in_avals.len())
    {
        return Err(malformed(Malformed(format!(
            "module_kept_var_idx {module_kept_var_idx:?} is not an increasing list of indices \
             below {}",
            in_avals.len()
        ))));
    }
    let uses_global_constants = t.u8_or(slot::USES_GLOBAL_CONSTANTS, 0).map_err(m)? != 0;
    let vjp = match t.table(slot::VJP, "vjp").map_err(m)? {
        Some(_) if vjp_depth >= MAX_VJP_DEPTH => {
            return Err(malformed(Malformed(format!(
                "VJPs nested more than {MAX_VJP_DEPTH} deep"
            ))))
        }
        Some(v) => Some(Box::new(read_exported(v, vjp_depth + 1, budget)?)),
        None => None,
    };
    Ok(Exported {
        fun_name,
        in_tree,
        in_avals,
        out_tree,
        out_avals,
        in_shardings,
        out_shardings,
        nr_devices,
        platforms,
        ordered_effects,
        unordered_effects,
        disabled_safety_checks,
        mlir_module_serialized,
        calling_convention_version,
        module_kept_var_idx,
        uses_global_constants,
        serialization_version,
        vjp,
        compiled: Default::default(),
    })
}

fn read_tree_root(
    t: Table<'_>,
    s: u16,
    what: &'static str,
    budget: &Budget,
) -> Result<TreeDef, Error> {
    match t.table(s, what).map_err(malformed)? {
        Some(tree) => read_tree(tree, 0, budget),
        None => Err(malformed(Malformed(format!("the artifact has no {what}")))),
    }
}

/// A Python pytree node as a jaxrs structure: tuple -> `Tuple`, list -> `List`, dict ->
/// `Map` (JAX sorts the keys, as a `BTreeMap` does), `None` -> `None`, a leaf -> `Leaf`.
fn read_tree(t: Table<'_>, depth: usize, budget: &Budget) -> Result<TreeDef, Error> {
    if depth > MAX_TREE_DEPTH {
        return Err(malformed(Malformed(format!(
            "a pytree nested more than {MAX_TREE_DEPTH} deep"
        ))));
    }
    budget.charge(1, "a pytree")?;
    let m = malformed;
    let kind = t.u8_or(slot::TREE_KIND, TREE_LEAF).map_err(m)?;
    let children = t
        .tables(slot::TREE_CHILDREN, "PyTreeDef.children")
        .map_err(m)?;
    let mut kids = Vec::with_capacity(children.len());
    for c in children {
        kids.push(read_tree(c, depth + 1, budget)?);
    }
    let no_children = |name: &str, kids: &[TreeDef]| {
        if kids.is_empty() {
            Ok(())
        } else {
            Err(malformed(Malformed(format!(
                "a pytree {name} with children"
            ))))
        }
    };
    Ok(match kind {
        TREE_LEAF => {
            no_children("leaf", &kids)?;
            TreeDef::Leaf
        }
        TREE_NONE => {
            no_children("None", &kids)?;
            TreeDef::None
        }
        TREE_TUPLE => TreeDef::Tuple(kids),
        TREE_LIST => TreeDef::List(kids),
        TREE_DICT => {
            let names = t
                .strings(slot::TREE_CHILDREN_NAMES, "PyTreeDef.children_names")
                .map_err(m)?;
            if names.len() != kids.len() {
                return Err(malformed(Malformed(format!(
                    "a dict with {} keys for {} children",
                    names.len(),
                    kids.len()
                ))));
            }
            if names.windows(2).any(|w| w[0] >= w[1]) {
                return Err(malformed(Malformed(format!(
                    "a dict whose keys {names:?} are not sorted and distinct"
                ))));
            }
            TreeDef::Map(names.into_iter().map(str::to_string).zip(kids).collect())
        }
        TREE_CUSTOM => {
            let name = t
                .string(slot::TREE_CUSTOM_NAME, "PyTreeDef.custom_name")
                .map_err(m)?
                .unwrap_or("?");
            return Err(unsupported(format!(
                "the custom pytree node `{name}` (a namedtuple, dataclass or registered \
                 class); export a function over tuples, lists and dicts"
            )));
        }
        other => {
            return Err(malformed(Malformed(format!(
                "an unknown pytree node kind {other}"
            ))))
        }
    })
}

fn read_aval(t: Table<'_>, budget: &Budget) -> Result<ExportedAval, Error> {
    let m = malformed;
    if t.u8_or(slot::AVAL_KIND, AVAL_SHAPED_ARRAY).map_err(m)? != AVAL_SHAPED_ARRAY {
        return Err(unsupported(
            "an abstract token among the inputs or outputs (ordered effects)",
        ));
    }
    let code = t.u8_or(slot::AVAL_DTYPE, 0).map_err(m)?;
    let dtype = DTYPES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, d)| *d)
        .ok_or_else(|| unsupported(foreign_dtype_name(code)))?;
    let memory_space = t.u8_or(slot::AVAL_MEMORY_SPACE, 0).map_err(m)?;
    if memory_space > MEMORY_SPACE_DEVICE {
        return Err(unsupported(format!(
            "an array in memory space {} (only device memory is supported)",
            if memory_space == 2 { "host" } else { "any" }
        )));
    }
    let dims = t
        .strings(slot::AVAL_SHAPE, "AbstractValue.shape")
        .map_err(m)?;
    budget.charge(dims.len() + 1, "an aval")?;
    let shape = dims
        .into_iter()
        .map(Dim::parse)
        .collect::<Result<Vec<_>, _>>()
        .map_err(m)?;
    Ok(ExportedAval { shape, dtype })
}

fn read_mesh(t: Table<'_>, budget: &Budget) -> Result<ExportedMesh, Error> {
    let m = malformed;
    let axis_sizes: Vec<usize> = t
        .u32s(slot::MESH_AXIS_SIZES, "AbstractMesh.axis_sizes")
        .map_err(m)?
        .into_iter()
        .map(|s| s as usize)
        .collect();
    let axis_names: Vec<String> = t
        .strings(slot::MESH_AXIS_NAMES, "AbstractMesh.axis_names")
        .map_err(m)?
        .into_iter()
        .map(str::to_string)
        .collect();
    budget.charge(axis_names.len() + 1, "a mesh")?;
    if axis_names.len() != axis_sizes.len() {
        return Err(malformed(Malformed(format!(
            "a mesh with {} axis names and {} sizes",
            axis_names.len(),
            axis_sizes.len()
        ))));
    }
    let types = t
        .scalars(slot::MESH_AXIS_TYPES, 1, "AbstractMesh.axis_types")
        .map_err(m)?;
    if let Some(pos) = types.iter().position(|&k| k > AXIS_TYPE_AUTO) {
        return Err(unsupported(format!(
            "the mesh axis {:?} of type {} (only Auto axes are supported)",
            axis_names.get(pos).map_or("?", String::as_str),
            if types[pos] == 2 {
                "Explicit"
            } else {
                "Manual"
            }
        )));
    }
    Ok(ExportedMesh {
        axis_names,
        axis_sizes,
    })
}

fn read_sharding(
    t: Table<'_>,
    unique_meshes: &[ExportedMesh],
    budget: &Budget,
) -> Result<Option<ExportedSharding>, Error> {
    let m = malformed;
    if let Some(named) = t
        .table(slot::SHARDING_NAMED, "Sharding.named_sharding")
        .map_err(m)?
    {
        return read_named_sharding(named, unique_meshes, budget).map(Some);
    }
    let proto = t
        .scalars(slot::SHARDING_HLO_PROTO, 1, "Sharding.hlo_sharding_proto")
        .map_err(m)?;
    if !proto.is_empty() {
        return Err(unsupported(
            "an HloSharding (an artifact from JAX before 0.9; re-export it with a newer JAX)",
        ));
    }
    Ok(None)
}

fn read_named_sharding(
    t: Table<'_>,
    unique_meshes: &[ExportedMesh],
    budget: &Budget,
) -> Result<ExportedSharding, Error> {
    let m = malformed;
    let mesh = if unique_meshes.is_empty() {
        match t.table(slot::NAMED_MESH, "NamedSharding.mesh").map_err(m)? {
            Some(mesh) => read_mesh(mesh, budget)?,
            None => return Err(malformed(Malformed("a NamedSharding with no mesh".into()))),
        }
    } else {
        let i = t.u32_or(slot::NAMED_ABSTRACT_MESH_IDX, 0).map_err(m)? as usize;
        let mesh = unique_meshes.get(i).ok_or_else(|| {
            malformed(Malformed(format!(
                "mesh index {i} of {} unique meshes",
                unique_meshes.len()
            )))
        })?;
        budget.charge(mesh.axis_names.len() + 1, "a sharding's mesh")?;
        mesh.clone()
    };
    let spec_table = t
        .table(slot::NAMED_SPEC, "NamedSharding.spec")
        .map_err(m)?
        .ok_or_else(|| malformed(Malformed("a NamedSharding with no spec".into())))?;
    let mut dims = Vec::new();
    for one in spec_table
        .tables(slot::SPEC_PARTITIONS, "PartitionSpec.partitions")
        .map_err(m)?
    {
        let axes = one
            .strings(slot::ONE_AXIS_AXES, "PartitionSpecOneAxis.axes")
            .map_err(m)?;
        budget.charge(axes.len() + 1, "a partition spec")?;
        for a in &axes {
            if !mesh.axis_names.iter().any(|n| n == a) {
                return Err(malformed(Malformed(format!(
                    "a partition spec names the axis {a:?}, not one of the mesh's {:?}",
                    mesh.axis_names
                ))));
            }
        }
        dims.push(if axes.is_empty() {
            PartitionDim::Replicated
        } else {
            PartitionDim::Axes(axes.into_iter().map(str::to_string).collect())
        });
    }
    for (s, what) in [
        (slot::SPEC_REDUCED, "reduced"),
        (slot::SPEC_UNREDUCED, "unreduced"),
    ] {
        let axes = spec_table.strings(s, "PartitionSpec.reduced").map_err(m)?;
        if !axes.is_empty() {
            return Err(unsupported(format!(
                "a partition spec with {what} axes {axes:?}"
            )));
        }
    }
    let memory_kind = t
        .string(slot::NAMED_MEMORY_KIND, "NamedSharding.memory_kind")
        .map_err(m)?;
    if let Some(kind) = memory_kind.filter(|k| *k != "device") {
        return Err(unsupported(format!(
            "a sharding in memory kind {kind:?} (only \"device\" is supported)"
        )));
    }
    Ok(ExportedSharding {
        mesh,
        spec: PartitionSpec::new(dims),
    })
}

impl Exported {
    /// Writes the artifact: bytes `jax.export.deserialize` reads (and
    /// [`deserialize`](super::deserialize)).
    pub fn serialize(&self) -> Vec<u8> {
        write(self)
    }
}

/// The artifact `jax.export.deserialize` reads for `e`, with JAX 0.10.2's layout: unique
/// avals, meshes and shardings referred to by index, and serialization version 3 in the
/// header as JAX writes it.
pub(crate) fn write(e: &Exported) -> Vec<u8> {
    let mut b = Builder::new();
    let fun_name = b.string(&e.fun_name);
    let in_tree = write_tree(&mut b, &e.in_tree);
    let out_tree = write_tree(&mut b, &e.out_tree);

    let index_of = |unique: &mut Vec<ExportedAval>, a: &ExportedAval| -> u32 {
        let i = unique.iter().position(|u| u == a).unwrap_or_else(|| {
            unique.push(a.clone());
            unique.len() - 1
        });
        u32::try_from(i).expect("fewer than 2^32 avals")
    };
    let mut avals: Vec<ExportedAval> = Vec::new();
    let in_idx: Vec<u32> = e.in_avals.iter().map(|a| index_of(&mut avals, a)).collect();
    let out_idx: Vec<u32> = e
        .out_avals
        .iter()
        .map(|a| index_of(&mut avals, a))
        .collect();

    let mut meshes: Vec<ExportedMesh> = Vec::new();
    let mut shardings: Vec<ExportedSharding> = Vec::new();
    let mut sharding_index = |s: &Option<ExportedSharding>| -> u32 {
        let Some(s) = s else { return 0 };
        if !meshes.contains(&s.mesh) {
            meshes.push(s.mesh.clone());
        }
        let i = shardings.iter().position(|u| u == s).unwrap_or_else(|| {
            shardings.push(s.clone());
            shardings.len() - 1
        });
        u32::try_from(i + 1).expect("fewer than 2^32 shardings")
    };
    let in_sh_idx: Vec<u32> = e.in_shardings.iter().map(&mut sharding_index).collect();
    let out_sh_idx: Vec<u32> = e.out_shardings.iter().map(&mut sharding_index).collect();

    let aval_tables: Vec<Offset> = avals.iter().map(|a| write_aval(&mut b, a)).collect();
    let unique_avals = b.refs(&aval_tables);
    let mesh_tables: Vec<Offset> = meshes.iter().map(|m| write_mesh(&mut b, m)).collect();
    let unique_meshes = b.refs(&mesh_tables);
    let sharding_tables: Vec<Offset> = shardings
        .iter()
        .map(|s| {
            let mesh_idx = meshes.iter().position(|m| *m == s.mesh).unwrap_or(0);
            write_named_sharding(&mut b, s, mesh_idx)
        })
        .collect();
    let unique_shardings = b.refs(&sharding_tables);

    let u32s = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let in_avals_idxs = b.scalars(&u32s(&in_idx), 4);
    let out_avals_idxs = b.scalars(&u32s(&out_idx), 4);
    let in_shardings_idxs = b.scalars(&u32s(&in_sh_idx), 4);
    let out_shardings_idxs = b.scalars(&u32s(&out_sh_idx), 4);

    let platforms: Vec<&str> = e.platforms.iter().map(String::as_str).collect();
    let platforms = b.strings(&platforms);
    let mut effects = |list: &[String]| {
        let tables: Vec<Offset> = list
            .iter()
            .map(|name| {
                let name = b.string(name);
                b.table(&[(slot::EFFECT_TYPE_NAME, Field::Ref(name))])
            })
            .collect();
        b.refs(&tables)
    };
    let ordered_effects = effects(&e.ordered_effects);
    let unordered_effects = effects(&e.unordered_effects);
    let checks: Vec<Offset> = e
        .disabled_safety_checks
        .iter()
        .map(|c| match c {
            DisabledSafetyCheck::Platform => {
                b.table(&[(slot::CHECK_KIND, Field::U8(CHECK_PLATFORM))])
            }
            DisabledSafetyCheck::ShapeAssertions => {
                b.table(&[(slot::CHECK_KIND, Field::U8(CHECK_SHAPE_ASSERTIONS))])
            }
            DisabledSafetyCheck::CustomCall(target) => {
                let target = b.string(target);
                b.table(&[
                    (slot::CHECK_KIND, Field::U8(CHECK_CUSTOM_CALL)),
                    (slot::CHECK_CUSTOM_CALL_TARGET, Field::Ref(target)),
                ])
            }
        })
        .collect();
    let disabled_checks = b.refs(&checks);
    let module = b.scalars(&e.mlir_module_serialized, 1);
    let kept: Vec<u8> = e
        .module_kept_var_idx
        .iter()
        .flat_map(|&i| {
            u16::try_from(i)
                .expect("fewer than 2^16 arguments")
                .to_le_bytes()
        })
        .collect();
    let kept = b.scalars(&kept, 2);
    let empty = b.refs(&[]);

    let root = b.table(&[
        (
            slot::SERIALIZATION_VERSION,
            Field::U16(WRITTEN_SERIALIZATION_VERSION),
        ),
        (slot::FUNCTION_NAME, Field::Ref(fun_name)),
        (slot::IN_TREE, Field::Ref(in_tree)),
        (slot::IN_AVALS, Field::Ref(empty)),
        (slot::OUT_TREE, Field::Ref(out_tree)),
        (slot::OUT_AVALS, Field::Ref(empty)),
        (slot::IN_SHARDINGS, Field::Ref(empty)),
        (slot::OUT_SHARDINGS, Field::Ref(empty)),
        (slot::PLATFORMS, Field::Ref(platforms)),
        (slot::ORDERED_EFFECTS, Field::Ref(ordered_effects)),
        (slot::UNORDERED_EFFECTS, Field::Ref(unordered_effects)),
        (slot::DISABLED_CHECKS, Field::Ref(disabled_checks)),
        (slot::MLIR_MODULE_SERIALIZED, Field::Ref(module)),
        (
            slot::CALLING_CONVENTION_VERSION,
            Field::U16(e.calling_convention_version),
        ),
        (slot::MODULE_KEPT_VAR_IDX, Field::Ref(kept)),
        (
            slot::USES_GLOBAL_CONSTANTS,
            Field::Bool(e.uses_global_constants),
        ),
        (slot::NR_DEVICES, Field::U32(e.nr_devices)),
        (slot::UNIQUE_AVALS, Field::Ref(unique_avals)),
        (slot::UNIQUE_ABSTRACT_MESHES, Field::Ref(unique_meshes)),
        (slot::UNIQUE_NAMED_SHARDINGS, Field::Ref(unique_shardings)),
        (slot::IN_AVALS_IDXS, Field::Ref(in_avals_idxs)),
        (slot::OUT_AVALS_IDXS, Field::Ref(out_avals_idxs)),
        (slot::IN_SHARDINGS_IDXS, Field::Ref(in_shardings_idxs)),
        (slot::OUT_SHARDINGS_IDXS, Field::Ref(out_shardings_idxs)),
    ]);
    b.finish(root)
}

fn write_tree(b: &mut Builder, t: &TreeDef) -> Offset {
    let (kind, children, names): (u8, Vec<&TreeDef>, Vec<&str>) = match t {
        TreeDef::Leaf | TreeDef::Scalar(_) => (TREE_LEAF, vec![], vec![]),
        TreeDef::None | TreeDef::Static(_) => (TREE_NONE, vec![], vec![]),
        TreeDef::Some(inner) => return write_tree(b, inner),
        TreeDef::Tuple(c) => (TREE_TUPLE, c.iter().collect(), vec![]),
        TreeDef::List(c) | TreeDef::FixedArray(c) => (TREE_LIST, c.iter().collect(), vec![]),
        TreeDef::Map(c) => (
            TREE_DICT,
            c.iter().map(|(_, t)| t).collect(),
            c.iter().map(|(k, _)| k.as_str()).collect(),
        ),
        TreeDef::Struct { fields, .. } => {
            // A derived struct goes over as a dict keyed by field name, sorted as JAX sorts
            // a dict's keys (the leaves are then in the struct's order only when its fields
            // are declared sorted, as jaxrs's nn layers are; `export` checks it).
            (
                TREE_DICT,
                fields.iter().map(|(_, t)| t).collect(),
                fields.iter().map(|(k, _)| *k).collect(),
            )
        }
    };
    let kids: Vec<Offset> = children.into_iter().map(|c| write_tree(b, c)).collect();
    let kids = b.refs(&kids);
    let mut fields = vec![
        (slot::TREE_KIND, Field::U8(kind)),
        (slot::TREE_CHILDREN, Field::Ref(kids)),
    ];
    if kind == TREE_DICT {
        let names = b.strings(&names);
        fields.push((slot::TREE_CHILDREN_NAMES, Field::Ref(names)));
    }
    b.table(&fields)
}

fn write_aval(b: &mut Builder, a: &ExportedAval) -> Offset {
    let dims: Vec<String> = a.shape.iter().map(ToString::to_string).collect();
    let dims: Vec<&str> = dims.iter().map(String::as_str).collect();
    let shape = b.strings(&dims);
    let code = DTYPES
        .iter()
        .find(|(_, d)| *d == a.dtype)
        .map(|(c, _)| *c)
        .expect("every jaxrs dtype has a code");
    b.table(&[
        (slot::AVAL_KIND, Field::U8(AVAL_SHAPED_ARRAY)),
        (slot::AVAL_SHAPE, Field::Ref(shape)),
        (slot::AVAL_DTYPE, Field::U8(code)),
        (slot::AVAL_MEMORY_SPACE, Field::U8(MEMORY_SPACE_DEVICE)),
    ])
}

fn write_mesh(b: &mut Builder, m: &ExportedMesh) -> Offset {
    let sizes: Vec<u8> = m
        .axis_sizes
        .iter()
        .flat_map(|&s| {
            u32::try_from(s)
                .expect("a mesh axis under 2^32")
                .to_le_bytes()
        })
        .collect();
    let sizes = b.scalars(&sizes, 4);
    let names: Vec<&str> = m.axis_names.iter().map(String::as_str).collect();
    let names = b.strings(&names);
    let types = b.scalars(&vec![AXIS_TYPE_AUTO; m.axis_names.len()], 1);
    b.table(&[
        (slot::MESH_AXIS_SIZES, Field::Ref(sizes)),
        (slot::MESH_AXIS_NAMES, Field::Ref(names)),
        (slot::MESH_AXIS_TYPES, Field::Ref(types)),
    ])
}

fn write_named_sharding(b: &mut Builder, s: &ExportedSharding, mesh_idx: usize) -> Offset {
    let mesh = write_mesh(b, &s.mesh);
    let partitions: Vec<Offset> = s
        .spec
        .dims()
        .iter()
        .map(|d| {
            let axes: Vec<&str> = match d {
                PartitionDim::Replicated => vec![],
                PartitionDim::Axes(a) => a.iter().map(String::as_str).collect(),
            };
            let axes = b.strings(&axes);
            b.table(&[(slot::ONE_AXIS_AXES, Field::Ref(axes))])
        })
        .collect();
    let partitions = b.refs(&partitions);
    let none = b.refs(&[]);
    let spec = b.table(&[
        (slot::SPEC_PARTITIONS, Field::Ref(partitions)),
        (slot::SPEC_REDUCED, Field::Ref(none)),
        (slot::SPEC_UNREDUCED, Field::Ref(none)),
    ]);
    let kind = b.string("device");
    b.table(&[
        (slot::NAMED_MESH, Field::Ref(mesh)),
        (slot::NAMED_SPEC, Field::Ref(spec)),
        (slot::NAMED_MEMORY_KIND, Field::Ref(kind)),
        (
            slot::NAMED_ABSTRACT_MESH_IDX,
            Field::U32(u32::try_from(mesh_idx).expect("fewer than 2^32 meshes")),
        ),
    ])
}
