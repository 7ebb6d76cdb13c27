//! Writing: a jaxrs function traced and lowered to StableHLO text, wrapped as a `jax.export`
//! artifact.
//!
//! JAX stores a StableHLO portable artifact (VHLO bytecode), which needs MLIR's C++ to
//! write. jaxrs stores the StableHLO text it lowers to: `jax.export.deserialize` keeps the
//! module bytes as they are, and JAX's call path hands them to MLIR's parser, which reads
//! text as well as bytecode (checked with JAX 0.10.2: `tests/golden/check_export.py`). The
//! text has no compatibility window (JAX promises its artifacts load for six months of
//! jaxlib releases): load a jaxrs artifact with a jaxlib whose StableHLO reads what jaxrs
//! writes, in practice one of the same season.

use super::exported::{Dim, Exported, ExportedAval, ExportedMesh, ExportedSharding};
use super::schema::WRITTEN_CALLING_CONVENTION;
use crate::core::client::client;
use crate::core::lower::{dense_constant, lower_jaxpr, LowerOptions, Spmd};
use crate::core::sharding::{Mesh, NamedSharding, PartitionSpec};
use crate::error::{Error, ExportError, Result};
use crate::transforms::traced::{avals_of, trace_tree};
use crate::tree::{Tree, TreeDef};

/// Traces `f` at `args` and exports it for this process's platform (`"cpu"` on XLA's CPU
/// plugin): JAX's `jax.export.export(jax.jit(f))(*args)`. A tuple `args` holds the
/// positional arguments; any other tree is the one argument. Every constant the function closes over is embedded
/// in the module, so the artifact needs nothing but its arguments.
///
/// Structures map onto JAX's pytrees as the module's table says, the other way round: a
/// `#[derive(Tree)]` struct becomes a dict keyed by its field names (its fields must be
/// declared in sorted order, the order JAX flattens a dict in), `Vec` and fixed arrays
/// become lists, `Option::None` becomes `None`. A static field (a Rust scalar in the tree)
/// has no JAX counterpart and is [`ExportError::Export`](crate::ExportError::Export).
///
/// A [`Jitted`](crate::Jitted) exports through its call, `export(|a| jitted.call(a), &args)`
/// (its shardings are not carried over: give them to [`export_sharded`]).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let w = Array::from_vec(vec![1.0f32, -1.0], &[2]);
/// let exported = jaxrs::export::export(|x: Array| (&x * &w).sum(None, false), &w)?;
/// assert_eq!(exported.in_avals()[0].to_string(), "f32[2]");
/// let bytes = exported.serialize(); // for jax.export.deserialize
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn export<A: Tree, R: Tree>(f: impl FnOnce(A) -> R, args: &A) -> Result<Exported> {
    export_with(f, args, None)
}

/// [`export`] for a program over `mesh`: JAX's
/// `jax.export.export(jax.jit(f, in_shardings=.., out_shardings=..))(*args)`. `in_specs` has
/// one spec per leaf of `args`, `out_specs` one per leaf of the result; the artifact holds
/// the mesh's axis names and sizes (not its devices), and runs on any mesh of that shape.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{Mesh, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
/// let x = Array::ones(&[8, 4], DType::F32);
/// let exported = jaxrs::export::export_sharded(
///     |x: Array| x.tanh(), &x, &mesh, vec![P!["dp"]], vec![P!["dp"]])?;
/// assert_eq!(exported.nr_devices(), 8);
/// let y: Array = exported.call(&(x,))?;
/// assert_eq!(y.addressable_shards().len(), 8);
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn export_sharded<A: Tree, R: Tree>(
    f: impl FnOnce(A) -> R,
    args: &A,
    mesh: &Mesh,
    in_specs: Vec<PartitionSpec>,
    out_specs: Vec<PartitionSpec>,
) -> Result<Exported> {
    export_with(f, args, Some((mesh, in_specs, out_specs)))
}

fn export_with<A: Tree, R: Tree>(
    f: impl FnOnce(A) -> R,
    args: &A,
    spmd: Option<(&Mesh, Vec<PartitionSpec>, Vec<PartitionSpec>)>,
) -> Result<Exported> {
    let (leaves, def) = args.flatten();
    let (closed, out_def) = trace_tree("jaxrs::export", &def, &avals_of(&leaves), f);
    let mut embedded = Vec::with_capacity(closed.consts.len());
    for c in &closed.consts {
        let bytes = c.host_bytes()?;
        let value = dense_constant(c.aval(), &bytes).ok_or_else(|| {
            export_error(format!(
                "the function closes over a {} constant, which cannot be embedded in the \
                 module",
                c.aval()
            ))
        })?;
        embedded.push(Some(value));
    }
    let n_in = closed.jaxpr.invars.len();
    let n_out = closed.jaxpr.outvars.len();
    let (lower_spmd, in_shardings, out_shardings, nr_devices) = match spmd {
        None => (None, vec![None; n_in], vec![None; n_out], 1),
        Some((mesh, in_specs, out_specs)) => {
            for (specs, n, what) in [
                (&in_specs, n_in, "in_specs"),
                (&out_specs, n_out, "out_specs"),
            ] {
                if specs.len() != n {
                    return Err(export_error(format!(
                        "{what} has {} specs for {n} leaves",
                        specs.len()
                    )));
                }
            }
            // Checks each spec against the mesh (axis names, repeats).
            for s in in_specs.iter().chain(&out_specs) {
                NamedSharding::new(mesh.clone(), s.clone())?;
            }
            let abstract_mesh = ExportedMesh {
                axis_names: mesh.axis_names().to_vec(),
                axis_sizes: mesh.shape().to_vec(),
            };
            let named = |s: &PartitionSpec| {
                Some(ExportedSharding {
                    mesh: abstract_mesh.clone(),
                    spec: s.clone(),
                })
            };
            (
                Some(Spmd {
                    mesh: mesh.clone(),
                    in_specs: in_specs.clone(),
                    out_specs: out_specs.iter().cloned().map(Some).collect(),
                }),
                in_specs.iter().map(named).collect(),
                out_specs.iter().map(named).collect(),
                u32::try_from(mesh.size()).expect("fewer than 2^32 devices"),
            )
        }
    };
    let text = lower_jaxpr(
        &closed.jaxpr,
        &LowerOptions {
            with_locations: true,
            embedded_consts: embedded,
            spmd: lower_spmd,
            ..Default::default()
        },
    );
    let args_def = match &def {
        TreeDef::Tuple(_) => jax_tree(&def)?,
        other => TreeDef::Tuple(vec![jax_tree(other)?]),
    };
    let aval = |a: &crate::aval::Aval| ExportedAval {
        shape: a.shape.iter().map(|&n| Dim::Known(n)).collect(),
        dtype: a.dtype,
    };
    let in_avals: Vec<ExportedAval> = closed.jaxpr.in_avals().iter().map(aval).collect();
    let out_avals: Vec<ExportedAval> = closed.jaxpr.out_avals().iter().map(aval).collect();
    Ok(Exported {
        fun_name: "jaxrs_export".into(),
        in_tree: TreeDef::Tuple(vec![args_def, TreeDef::Map(vec![])]),
        in_avals,
        out_tree: jax_tree(&out_def)?,
        out_avals,
        in_shardings,
        out_shardings,
        nr_devices,
        platforms: vec![super::call::jax_platform(&client().platform_name())],
        ordered_effects: vec![],
        unordered_effects: vec![],
        disabled_safety_checks: vec![],
        mlir_module_serialized: text.into_bytes(),
        calling_convention_version: WRITTEN_CALLING_CONVENTION,
        module_kept_var_idx: (0..n_in).collect(),
        uses_global_constants: false,
        serialization_version: 3,
        vjp: None,
        compiled: Default::default(),
    })
}

fn export_error(message: String) -> Error {
    Error::Export(ExportError::Export(message))
}

/// A jaxrs structure as the pytree JAX rebuilds from the artifact.
fn jax_tree(def: &TreeDef) -> Result<TreeDef> {
    let all = |c: &[TreeDef]| c.iter().map(jax_tree).collect::<Result<Vec<_>>>();
    Ok(match def {
        TreeDef::Leaf | TreeDef::Scalar(_) => TreeDef::Leaf,
        TreeDef::None => TreeDef::None,
        TreeDef::Some(inner) => jax_tree(inner)?,
        TreeDef::Tuple(c) => TreeDef::Tuple(all(c)?),
        TreeDef::List(c) | TreeDef::FixedArray(c) => TreeDef::List(all(c)?),
        TreeDef::Map(c) => TreeDef::Map(
            c.iter()
                .map(|(k, t)| Ok((k.clone(), jax_tree(t)?)))
                .collect::<Result<_>>()?,
        ),
        TreeDef::Struct { name, fields } => {
            if fields.windows(2).any(|w| w[0].0 >= w[1].0) {
                return Err(export_error(format!(
                    "the struct {name} becomes a dict, whose leaves JAX orders by key: declare \
                     its fields in sorted order"
                )));
            }
            TreeDef::Map(
                fields
                    .iter()
                    .map(|(k, t)| Ok((k.to_string(), jax_tree(t)?)))
                    .collect::<Result<_>>()?,
            )
        }
        TreeDef::Static(v) => {
            return Err(export_error(format!(
                "the static value {v:?} in the argument or result tree has no JAX pytree \
                 counterpart; make it an array or leave it out"
            )))
        }
    })
}
