//! Sharding in types (JAX's explicit sharding): over the `Explicit` axes of a mesh
//! ([`AxisType`](crate::core::sharding::AxisType)), how a traced value lies is part of its
//! [`Aval`] (`f32[8@dp,4]`), known while tracing and readable there ([`typeof_`]).
//!
//! Where a sharding comes from: a `jit` argument laid out over explicit axes, or
//! [`reshard`](crate::reshard). Each operation then types its results by its primitive's
//! [`Primitive::sharding_rule`], and [`infer`] applies it when [`bind`](crate::core::trace)
//! meets an operand with a sharding (an operation on unsharded values pays one scan of its
//! operands). A primitive without a rule refuses sharded operands, naming `reshard`, rather
//! than guessing: as in JAX, a result whose sharding would be ambiguous is an error.
//!
//! Lowering writes each typed result's sharding as an `sdy.sharding_constraint` after the
//! operation that made it (`core::lower`), as JAX's lowering does, so XLA's partitioner lays
//! every intermediate value out as its type says.
//!
//! Transformations' rules (a JVP, a transpose, a batching rule) run [`relaxed`]: an operation
//! of theirs whose sharding would be ambiguous gets an unconstrained result instead of an
//! error (XLA's propagation places it), and the rule's tangents and cotangents are then
//! resharded to their primals' types. JAX writes its rules so that every intermediate value
//! is typed; jaxrs types only the values a user can see.

use crate::aval::Aval;
use crate::core::array::{Array, Repr};
use crate::core::primitive::Primitive;
use crate::core::sharding::{Mesh, NamedSharding, PartitionDim, PartitionSpec, Sharding};
use std::cell::Cell;
use std::sync::Arc;

/// The type sharding of a value of rank `rank` laid out as `dims` over `mesh`: the dims'
/// explicit axes only (Auto and Manual axes are XLA's to place), padded with replicated
/// dimensions; `None` when no dimension is split over an explicit axis.
pub fn type_sharding(
    mesh: &Mesh,
    dims: &[PartitionDim],
    rank: usize,
) -> Option<Arc<NamedSharding>> {
    if !mesh.has_explicit_axes() {
        return None;
    }
    let kept: Vec<PartitionDim> = (0..rank)
        .map(|i| match dims.get(i) {
            Some(PartitionDim::Axes(axes)) => {
                let explicit: Vec<String> = axes
                    .iter()
                    .filter(|a| mesh.is_explicit_axis(a))
                    .cloned()
                    .collect();
                if explicit.is_empty() {
                    PartitionDim::Replicated
                } else {
                    PartitionDim::Axes(explicit)
                }
            }
            _ => PartitionDim::Replicated,
        })
        .collect();
    if kept.iter().all(|d| *d == PartitionDim::Replicated) {
        return None;
    }
    let sharding = NamedSharding::new(mesh.clone(), PartitionSpec::new(kept))
        .expect("a subset of a valid spec's axes");
    Some(Arc::new(sharding))
}

/// How `aval` lies per dimension (every entry replicated when it has no type sharding).
pub fn dims_of(aval: &Aval) -> Vec<PartitionDim> {
    match &aval.sharding {
        Some(s) => s.spec().dims().to_vec(),
        None => vec![PartitionDim::Replicated; aval.rank()],
    }
}

/// The type of `x` as JAX's `jax.typeof(x)` gives it: its aval, with its sharding over
/// explicit mesh axes. For a traced value that is its aval; a concrete array's is read from
/// its layout.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{AxisType, NamedSharding, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?
///     .with_axis_types(&[AxisType::Explicit; 2])?;
/// let x = jaxrs::device_put(&Array::ones(&[4, 8], DType::F32), NamedSharding::new(mesh, P!["dp"])?);
/// assert_eq!(jaxrs::typeof_(&x).to_string(), "f32[4@dp,8]");
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn typeof_(x: &Array) -> Aval {
    match &*x.0 {
        Repr::Traced(t) => t.aval.clone(),
        Repr::Concrete(c) => Aval {
            sharding: type_sharding_of(x),
            ..c.aval.clone()
        },
    }
}

/// The sharding part of [`typeof_`] alone (no aval cloned).
pub fn type_sharding_of(x: &Array) -> Option<Arc<NamedSharding>> {
    match &*x.0 {
        Repr::Traced(t) => t.aval.sharding.clone(),
        Repr::Concrete(c) => match &c.sharding {
            Sharding::Named(n) if n.mesh().has_explicit_axes() => {
                type_sharding(n.mesh(), n.spec().dims(), c.aval.rank())
            }
            _ => None,
        },
    }
}

thread_local! {
    /// How many [`relaxed`] scopes are open on this thread.
    static RELAXED: Cell<usize> = const { Cell::new(0) };
}

/// Runs `f` (a transformation's rule) with ambiguous result shardings left to XLA instead of
/// refused: see the module doc.
pub fn relaxed<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            RELAXED.with(|r| r.set(r.get() - 1));
        }
    }
    RELAXED.with(|r| r.set(r.get() + 1));
    let _leave = Leave;
    f()
}

/// Types the results `outs` of `prim` applied to `ins`, at least one of which has a type
/// sharding, by the primitive's rule. `Err` says why the results cannot be typed (the caller
/// adds the op, the operands and the user's line).
pub fn infer(prim: &dyn Primitive, ins: &[Aval], outs: &mut [Aval]) -> Result<(), String> {
    let mut meshes = ins
        .iter()
        .filter_map(|a| a.sharding.as_ref().map(|s| s.mesh()));
    let mesh = meshes.next().expect("a sharded operand").clone();
    if let Some(other) = meshes.find(|m| !m.same_grid(&mesh)) {
        return Err(format!(
            "its operands are sharded over different meshes, {mesh} and {other}; reshard one \
             onto the other's mesh"
        ));
    }
    let typed = prim.sharding_rule(ins, outs).and_then(|dims| {
        outs.iter()
            .zip(dims)
            .map(|(out, dims)| checked(&mesh, out, dims))
            .collect::<Result<Vec<_>, String>>()
    });
    match typed {
        Ok(shardings) => {
            for (out, s) in outs.iter_mut().zip(shardings) {
                out.sharding = s;
            }
            Ok(())
        }
        Err(_) if RELAXED.with(|r| r.get() > 0) => {
            for out in outs.iter_mut() {
                out.sharding = None;
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// The type sharding `dims` gives `out`, refusing a spec that does not fit it.
fn checked(
    mesh: &Mesh,
    out: &Aval,
    dims: Vec<PartitionDim>,
) -> Result<Option<Arc<NamedSharding>>, String> {
    if dims.len() != out.rank() {
        return Err(format!(
            "its sharding rule gave {} spec entries for a result of rank {} (a bug in the rule)",
            dims.len(),
            out.rank()
        ));
    }
    let spec = PartitionSpec::new(dims);
    let named = NamedSharding::new(mesh.clone(), spec.clone()).map_err(|_| {
        format!("it would give the illegally sharded result {out} sharded as {spec}")
    })?;
    named
        .shard_shape(&out.shape)
        .map_err(|e| format!("its result {out} cannot be sharded as {spec}: {e}"))?;
    Ok(type_sharding(mesh, named.spec().dims(), out.rank()))
}

/// The message of a primitive with no sharding rule.
pub fn no_rule(name: &str) -> String {
    format!(
        "{name} has no sharding rule for operands sharded over explicit mesh axes; reshard \
         them to replicated first (`reshard(&x, P![])`), or make the axes Auto"
    )
}

/// The rule of an elementwise operation (JAX's broadcasting rule): each dimension takes the
/// one mesh axis its sharded operands agree on. Operands of lower rank (scalars) take no
/// part; operands split differently along a dimension are an error.
pub fn elementwise_rule(name: &str, ins: &[Aval], outs: &[Aval]) -> SpecRule {
    let rank = outs.first().map_or(0, Aval::rank);
    let mut dims = vec![PartitionDim::Replicated; rank];
    for (i, d) in dims.iter_mut().enumerate() {
        for a in ins.iter().filter(|a| a.rank() == rank) {
            let here = &dims_of(a)[i];
            match (&*d, here) {
                (_, PartitionDim::Replicated) => {}
                (PartitionDim::Replicated, s) => *d = s.clone(),
                (s, t) if s == t => {}
                _ => {
                    return Err(format!(
                        "{name} got incompatible shardings for broadcasting: {}",
                        ins.iter()
                            .map(|a| PartitionSpec::new(dims_of(a)).to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
            }
        }
    }
    Ok(outs
        .iter()
        .map(|o| {
            if o.rank() == rank {
                dims.clone()
            } else {
                vec![PartitionDim::Replicated; o.rank()]
            }
        })
        .collect())
}

/// The rule of an operation whose results are typed by a traced body (a call, a loop, a
/// branch): as the body typed them.
pub fn as_typed_by_body(outs: &[Aval]) -> SpecRule {
    Ok(outs.iter().map(dims_of).collect())
}

/// What a [`Primitive::sharding_rule`] returns: per result, one spec entry per dimension.
pub type SpecRule = Result<Vec<Vec<PartitionDim>>, String>;

/// The number of pieces a spec entry splits its dimension into on `aval`'s mesh (1 for an
/// unsharded aval or entry).
pub fn pieces(aval: &Aval, dim: &PartitionDim) -> usize {
    match (dim, &aval.sharding) {
        (PartitionDim::Axes(axes), Some(s)) => axes
            .iter()
            .map(|a| s.mesh().axis_size(a).unwrap_or(1))
            .product(),
        _ => 1,
    }
}
