//! `sharding_constraint`: the identity, telling XLA's partitioner how a value inside an SPMD
//! program is to lie on the mesh (JAX's `with_sharding_constraint`).

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{sdy_sharding, LowerCtx};
use crate::core::primitive::{as_any, Primitive};
use crate::core::sharding::{
    note_traced_mesh, try_device_put, Mesh, NamedSharding, PartitionDim, PartitionSpec, Shardings,
};
use crate::core::trace::{bind1, At, Operand};
use crate::error::{Error, Result};
use crate::prims::arity;
use crate::tree::{Tree, TreeDef};

/// Constrains a value to a sharding; lowered to `sdy.sharding_constraint`.
#[derive(Debug, Clone)]
pub struct ShardingConstraint {
    pub sharding: NamedSharding,
}

impl Primitive for ShardingConstraint {
    fn name(&self) -> &'static str {
        "sharding_constraint"
    }
    fn params_string(&self) -> String {
        format!("sharding={}", self.sharding)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        self.sharding
            .shard_shape(&inputs[0].shape)
            .map_err(|e| e.to_string())?;
        Ok(vec![inputs[0].clone()])
    }
    fn jvp(&self, _: &[Operand], tangents: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![tangents[0].as_ref().map(|t| constrain(t, &self.sharding))]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        vec![cts[0].as_ref().map(|c| constrain(c, &self.sharding))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        _: &[Aval],
    ) -> Vec<String> {
        match cx.mesh() {
            // A single-device program (`jaxrs::stablehlo`, an eager op): nothing to partition.
            None => vec![ins[0].clone()],
            Some(mesh) if mesh == self.sharding.mesh() => {
                let aval = &in_avals[0];
                let props = format!(
                    "sharding = {}",
                    sdy_sharding(self.sharding.spec(), aval.rank())
                );
                vec![cx.op1(
                    "sdy.sharding_constraint",
                    &[ins[0].as_str()],
                    &[aval],
                    &props,
                    aval,
                )]
            }
            Some(mesh) => panic!(
                "with_sharding_constraint: {} is over {:?}, but the program runs on {mesh:?}",
                self.sharding,
                self.sharding.mesh()
            ),
        }
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let x = args[0].to_array();
        let Some(bdim) = dims[0] else {
            return (vec![constrain(&x, &self.sharding)], vec![None]);
        };
        // The batch dimension is not split: insert `None` for it.
        let mut spec: Vec<PartitionDim> = self.sharding.spec().dims().to_vec();
        if spec.len() < bdim {
            spec.resize(bdim, PartitionDim::Replicated);
        }
        spec.insert(bdim, PartitionDim::Replicated);
        let sharding = NamedSharding::new(self.sharding.mesh().clone(), PartitionSpec::new(spec))
            .expect("the same axes as a valid sharding");
        (vec![constrain(&x, &sharding)], vec![Some(bdim)])
    }
    as_any!();
}

/// `x` constrained to `sharding`: a traced value gets the primitive, a concrete one is laid
/// out so (as JAX's `with_sharding_constraint` outside jit is `device_put`).
#[track_caller]
fn constrain(x: &Array, sharding: &NamedSharding) -> Array {
    if x.is_concrete() {
        return try_device_put(x, sharding.clone()).unwrap_or_else(|e| {
            panic!(
                "with_sharding_constraint: {e} {}",
                At::line(std::panic::Location::caller())
            )
        });
    }
    note_traced_mesh(sharding.mesh());
    bind1(
        ShardingConstraint {
            sharding: sharding.clone(),
        },
        &[Operand::Array(std::borrow::Cow::Borrowed(x))],
    )
}

/// Tells XLA how the arrays of `x` are to lie on the mesh at this point of a jitted function
/// (JAX's `jax.lax.with_sharding_constraint`): the value is unchanged, and XLA's partitioner
/// inserts whatever collectives get it there. `shardings` is a prefix of `x`'s tree, as
/// [`Jitted::in_shardings`](crate::Jitted::in_shardings) takes; bare specs refer to the mesh
/// in scope (inside a sharded jit, its mesh). Outside any trace it lays `x` out
/// ([`device_put`](crate::device_put)). Gradients and batching pass the constraint through
/// (a batch dimension is not split).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{Mesh, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
/// let _m = mesh.enter();
/// let f = jit(|x: Array| {
///     let y = jaxrs::with_sharding_constraint(&x.sin(), P![None, "mp"]);
///     y * 2.0
/// })
/// .in_shardings(P!["dp"]);
/// let y: Array = f.call(Array::zeros(&[4, 8], DType::F32));
/// assert_eq!(y.to_vec::<f32>(), vec![0.0; 32]);
/// assert!(f.site().last_stablehlo().unwrap().contains("sdy.sharding_constraint"));
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn with_sharding_constraint<T: Tree>(x: &T, shardings: impl Into<Shardings>) -> T {
    let loc = std::panic::Location::caller();
    let (leaves, def) = x.flatten();
    let per_leaf = shardings_per_leaf(
        &shardings.into(),
        &def,
        Mesh::current().as_ref(),
        "with_sharding_constraint",
    )
    .unwrap_or_else(|e| panic!("{e} {}", At::line(loc)));
    let out: Vec<Array> = leaves
        .iter()
        .zip(per_leaf)
        .map(|(l, s)| match s {
            Some(s) => constrain(l, &s),
            None => l.clone(),
        })
        .collect();
    crate::tree::tree_unflatten(&def, out)
}

/// One entry per leaf of a tree of structure `def` (`None`: unspecified), with bare specs
/// resolved against `mesh`. `what` names the tree in errors (`in_shardings of x`).
pub(crate) fn shardings_per_leaf(
    shardings: &Shardings,
    def: &TreeDef,
    mesh: Option<&Mesh>,
    what: &str,
) -> Result<Vec<Option<NamedSharding>>> {
    let mut out = Vec::with_capacity(def.num_leaves());
    fill(shardings, def, mesh, what, &mut out)?;
    Ok(out)
}

fn fill(
    shardings: &Shardings,
    def: &TreeDef,
    mesh: Option<&Mesh>,
    what: &str,
    out: &mut Vec<Option<NamedSharding>>,
) -> Result<()> {
    let n = def.num_leaves();
    match shardings {
        Shardings::Unspecified => out.extend(std::iter::repeat_n(None, n)),
        Shardings::Named(s) => out.extend(std::iter::repeat_n(Some(s.clone()), n)),
        Shardings::Spec(spec) => {
            let Some(mesh) = mesh else {
                return Err(Error::Sharding(format!(
                    "{what}: {spec} needs a mesh, and none is given or in scope (give one \
                     with `mesh = ...`/`.mesh(&m)`, enter one with `let _m = mesh.enter();`, \
                     or pass a NamedSharding)"
                )));
            };
            let s = NamedSharding::new(mesh.clone(), spec.clone())
                .map_err(|e| Error::Sharding(format!("{what}: {e}")))?;
            out.extend(std::iter::repeat_n(Some(s), n));
        }
        Shardings::PerChild(children) => {
            let defs: Vec<&TreeDef> = match def {
                TreeDef::Tuple(v) | TreeDef::List(v) | TreeDef::FixedArray(v) => v.iter().collect(),
                TreeDef::Map(v) => v.iter().map(|(_, d)| d).collect(),
                TreeDef::Struct { fields, .. } => fields.iter().map(|(_, d)| d).collect(),
                TreeDef::Some(d) => vec![&**d],
                TreeDef::Leaf | TreeDef::Scalar(_) | TreeDef::Static(_) | TreeDef::None => {
                    Vec::new()
                }
            };
            if defs.len() != children.len() {
                return Err(Error::Sharding(format!(
                    "{what}: {} entries given for a tree with {} children ({def})",
                    children.len(),
                    defs.len()
                )));
            }
            for (i, (s, d)) in children.iter().zip(defs).enumerate() {
                fill(s, d, mesh, &format!("{what}[{i}]"), out)?;
            }
        }
    }
    Ok(())
}
