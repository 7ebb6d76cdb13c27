//! `sharding_constraint`: the identity, telling XLA's partitioner how a value inside an SPMD
//! program is to lie on the mesh (JAX's `with_sharding_constraint`); and `reshard`, the
//! identity that changes a value's sharding over explicit mesh axes, in its type (JAX's
//! `jax.sharding.reshard`).

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::sharding::{
    note_traced_mesh, try_device_put, AxisType, Mesh, NamedSharding, PartitionDim, PartitionSpec,
    Sharding, Shardings,
};
use crate::core::sharding_types::{dims_of, type_sharding, type_sharding_of, SpecRule};
use crate::core::trace::{bind1, At, Operand};
use crate::error::{Error, Result};
use crate::prims::arity;
use crate::tree::{Tree, TreeDef};
use std::panic::Location;
use std::sync::Arc;

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
    /// The type is unchanged: over explicit axes a value changes its sharding by `reshard`.
    fn sharding_rule(&self, ins: &[Aval], _: &[Aval]) -> SpecRule {
        Ok(vec![dims_of(&ins[0])])
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
            Some(mesh) if mesh.same_grid(self.sharding.mesh()) => {
                vec![cx.sharding_constraint(&ins[0], &in_avals[0], self.sharding.spec())]
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
        batch_with(args, dims, &self.sharding, constrain)
    }
    as_any!();
}

/// Gives a value another sharding over explicit mesh axes, in its type; lowered to
/// `sdy.sharding_constraint`, as JAX's `reshard_p`.
#[derive(Debug, Clone)]
pub struct Reshard {
    pub sharding: NamedSharding,
}

impl Primitive for Reshard {
    fn name(&self) -> &'static str {
        "reshard"
    }
    fn params_string(&self) -> String {
        format!("sharding={}", self.sharding)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let x = &inputs[0];
        self.sharding
            .shard_shape(&x.shape)
            .map_err(|e| e.to_string())?;
        let sharding = type_sharding(self.sharding.mesh(), self.sharding.spec().dims(), x.rank());
        Ok(vec![Aval {
            sharding,
            ..x.clone()
        }])
    }
    fn sharding_rule(&self, _: &[Aval], outs: &[Aval]) -> SpecRule {
        Ok(vec![dims_of(&outs[0])])
    }
    fn jvp(&self, _: &[Operand], tangents: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![tangents[0].as_ref().map(|t| reshard_one(t, &self.sharding))]
    }
    fn vjp(
        &self,
        primals: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        cotangent_as_primal(primals, cts)
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        _: &[Aval],
    ) -> Vec<String> {
        if cx.mesh().is_none() {
            return vec![ins[0].clone()];
        }
        vec![cx.sharding_constraint(&ins[0], &in_avals[0], self.sharding.spec())]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_with(args, dims, &self.sharding, reshard_one)
    }
    as_any!();
}

/// The batching rule of both constraints: `apply` with `sharding`, a batch dimension
/// inserted into it unsplit.
fn batch_with(
    args: &[Operand],
    dims: &[Option<usize>],
    sharding: &NamedSharding,
    apply: fn(&Array, &NamedSharding) -> Array,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let x = args[0].to_array();
    match dims[0] {
        None => (vec![apply(&x, sharding)], vec![None]),
        Some(bdim) => (
            vec![apply(&x, &with_unsplit_dim(sharding, bdim))],
            vec![Some(bdim)],
        ),
    }
}

/// The transpose of a type change: the cotangent goes back to the primal's type, as JAX's
/// transpose of `reshard`.
fn cotangent_as_primal(primals: &[Operand], cts: &[Option<Array>]) -> Vec<Option<Array>> {
    let like = primals[0].aval().sharding;
    vec![cts[0].as_ref().map(|c| c.clone().retyped_as(like))]
}

/// `sharding` with an unsplit dimension inserted at `at` (a batch dimension).
fn with_unsplit_dim(sharding: &NamedSharding, at: usize) -> NamedSharding {
    let mut spec: Vec<PartitionDim> = sharding.spec().dims().to_vec();
    if spec.len() < at {
        spec.resize(at, PartitionDim::Replicated);
    }
    spec.insert(at, PartitionDim::Replicated);
    NamedSharding::new(sharding.mesh().clone(), PartitionSpec::new(spec))
        .expect("the same axes as a valid sharding")
}

#[track_caller]
fn reshard_one(x: &Array, sharding: &NamedSharding) -> Array {
    if x.is_concrete() {
        return try_device_put(x, sharding.clone())
            .unwrap_or_else(|e| panic!("reshard: {e} {}", At::line(Location::caller())));
    }
    note_traced_mesh(sharding.mesh());
    bind1(
        Reshard {
            sharding: sharding.clone(),
        },
        &[Operand::Array(std::borrow::Cow::Borrowed(x))],
    )
}

impl Array {
    /// This tangent or cotangent (what a transformation's rule made) resharded to `like`, its
    /// primal's type sharding (`None`: unsharded), when its own differs: rules run relaxed
    /// (`core::sharding_types`), so what they return may be typed otherwise or not at all.
    pub(crate) fn retyped_as(self, like: Option<Arc<NamedSharding>>) -> Array {
        let own = type_sharding_of(&self);
        if own == like {
            return self;
        }
        let mesh = match like.as_ref().or(own.as_ref()) {
            Some(s) => s.mesh().clone(),
            None => return self,
        };
        let spec = match &like {
            Some(s) if s.spec().len() == self.rank() => s.spec().clone(),
            Some(_) => return self,
            None => PartitionSpec::default(),
        };
        let sharding = NamedSharding::new(mesh, spec).expect("a type sharding's own axes");
        reshard_one(&self, &sharding)
    }
}

/// Gives the arrays of `x` these shardings over explicit mesh axes, in their types (JAX's
/// `jax.sharding.reshard`): inside a traced function the value's type changes and XLA's
/// partitioner moves the data; outside one the arrays are laid out so
/// ([`device_put`](crate::device_put)). `shardings` is a prefix of `x`'s tree; bare specs
/// refer to the mesh in scope ([`set_mesh`](crate::set_mesh)), whose axes the spec names
/// must all be [`Explicit`](crate::AxisType::Explicit), as JAX requires. Gradients reshard the
/// cotangent back to the primal's sharding; batching leaves a batch dimension unsplit.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{AxisType, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?
///     .with_axis_types(&[AxisType::Explicit; 2])?;
/// let _mesh = jaxrs::set_mesh(&mesh);
/// let x = jaxrs::reshard(&Array::ones(&[4, 8], DType::F32), P!["dp"]);
/// assert_eq!(jaxrs::typeof_(&x).to_string(), "f32[4@dp,8]");
/// let f = jit(|x: Array| {
///     let y = x.sin();
///     assert_eq!(jaxrs::typeof_(&y).to_string(), "f32[4@dp,8]");
///     jaxrs::reshard(&y, P![None, "mp"])
/// });
/// let y: Array = f.call(x);
/// assert_eq!(jaxrs::typeof_(&y).to_string(), "f32[4,8@mp]");
/// assert_eq!(y.addressable_shards()[1].index, vec![0..4, 2..4]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn reshard<T: Tree>(x: &T, shardings: impl Into<Shardings>) -> T {
    let loc = Location::caller();
    let (leaves, def) = x.flatten();
    let per_leaf = shardings_per_leaf(&shardings.into(), &def, Mesh::current().as_ref(), "reshard")
        .unwrap_or_else(|e| panic!("{e} {}", At::line(loc)));
    let out: Vec<Array> = leaves
        .iter()
        .zip(per_leaf)
        .map(|(l, s)| match s {
            Some(s) => {
                check_explicit(&s).unwrap_or_else(|e| panic!("reshard: {e} {}", At::line(loc)));
                reshard_one(l, &s)
            }
            None => panic!(
                "reshard: every leaf needs a sharding (None is not one) {}",
                At::line(loc)
            ),
        })
        .collect();
    crate::tree::tree_unflatten(&def, out)
}

/// The result of `op` (one operation, such as a product) typed with `sharding` over explicit
/// mesh axes: what JAX's `out_sharding=` keyword of `dot_general`, `matmul` and `einsum`
/// does, for an operation whose result sharding its operands leave ambiguous (contracting
/// dimensions sharded on both sides). The operation runs with its own rule relaxed and its
/// result is [`reshard`]ed; the lowered program is the operation and one
/// `sdy.sharding_constraint`, as JAX's. The facade's `lax::dot_general_sharded`,
/// `numpy::matmul_sharded` and `numpy::einsum_sharded` call it.
#[track_caller]
pub fn with_out_sharding(sharding: impl Into<Shardings>, op: impl FnOnce() -> Array) -> Array {
    let out = crate::core::sharding_types::relaxed(op);
    reshard(&out, sharding)
}

/// Drops mesh axes from a value's type (the reshard into [`auto_axes`]' mesh, on which they
/// are Auto): the identity, lowered to nothing, so XLA keeps the value where it lies and
/// places what is computed from it.
#[derive(Debug, Clone)]
pub struct DropTypeAxes {
    /// The axes dropped; `None`: all.
    pub axes: Option<Vec<String>>,
}

impl DropTypeAxes {
    fn kept(&self, aval: &Aval) -> Vec<PartitionDim> {
        dims_of(aval)
            .into_iter()
            .map(|d| match (d, &self.axes) {
                (PartitionDim::Axes(names), Some(dropped)) => {
                    let kept: Vec<String> =
                        names.into_iter().filter(|a| !dropped.contains(a)).collect();
                    match kept.is_empty() {
                        true => PartitionDim::Replicated,
                        false => PartitionDim::Axes(kept),
                    }
                }
                _ => PartitionDim::Replicated,
            })
            .collect()
    }
}

impl Primitive for DropTypeAxes {
    fn name(&self) -> &'static str {
        "drop_type_axes"
    }
    fn params_string(&self) -> String {
        match &self.axes {
            Some(axes) => format!("axes={axes:?}"),
            None => String::new(),
        }
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let x = &inputs[0];
        let sharding = x
            .sharding
            .as_ref()
            .and_then(|s| type_sharding(s.mesh(), &self.kept(x), x.rank()));
        Ok(vec![Aval {
            sharding,
            ..x.clone()
        }])
    }
    fn sharding_rule(&self, ins: &[Aval], _: &[Aval]) -> SpecRule {
        Ok(vec![self.kept(&ins[0])])
    }
    fn jvp(&self, _: &[Operand], tangents: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![tangents[0]
            .as_ref()
            .map(|t| bind1(self.clone(), &[Operand::from(t)]))]
    }
    fn vjp(
        &self,
        primals: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        cotangent_as_primal(primals, cts)
    }
    fn lower(&self, _: &mut LowerCtx, ins: &[String], _: &[Aval], _: &[Aval]) -> Vec<String> {
        vec![ins[0].clone()]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let x = args[0].to_array();
        (
            vec![bind1(self.clone(), &[Operand::from(&*x)])],
            vec![dims[0]],
        )
    }
    as_any!();
}

/// `f` with the mesh axes `axes` (all of them: `None`) Auto while it runs, its results
/// [`reshard`]ed to `out_sharding` (JAX's `jax.sharding.auto_axes`): inside, values are not
/// typed over those axes, no operation refuses an ambiguous sharding over them, and XLA's
/// propagation places them, as for code written for Auto axes. Without a mesh in scope it is
/// `f`. Outside a trace the arguments are laid out over a copy of the mesh whose axes are
/// Auto, so eager operations inside are untyped too. (JAX also makes the axes Auto in the
/// mesh in scope inside, so that `reshard` over them is refused there; jaxrs keeps the
/// mesh in scope as it is.)
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{AxisType, NamedSharding, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?
///     .with_axis_types(&[AxisType::Explicit; 2])?;
/// let _mesh = jaxrs::set_mesh(&mesh);
/// let x = jaxrs::reshard(&Array::ones(&[8, 16], DType::F32), P!["dp", "mp"]);
/// let w = jaxrs::reshard(&Array::ones(&[16, 4], DType::F32), P!["mp"]);
/// let f = jit(|(x, w): (Array, Array)| {
///     // Both contracting dimensions are split over "mp": ambiguous over explicit axes.
///     let product = jaxrs::auto_axes(
///         |(x, w): (Array, Array)| {
///             assert_eq!(jaxrs::typeof_(&x).to_string(), "f32[8,16]");
///             x.matmul(&w)
///         },
///         None,
///         P!["dp", None],
///     );
///     product((x, w))
/// });
/// let y: Array = f.call((x, w));
/// assert_eq!(jaxrs::typeof_(&y).to_string(), "f32[8@dp,4]");
/// assert_eq!(y.to_vec::<f32>(), vec![16.0; 32]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn auto_axes<A: Tree, R: Tree>(
    f: impl Fn(A) -> R,
    axes: Option<&[&str]>,
    out_sharding: impl Into<Shardings>,
) -> impl Fn(A) -> R {
    let loc = Location::caller();
    let axes: Option<Vec<String>> = axes.map(|a| a.iter().map(|s| s.to_string()).collect());
    let out_sharding: Shardings = out_sharding.into();
    move |args: A| {
        let Some(mesh) = scope_mesh("auto_axes", axes.as_deref(), loc) else {
            return f(args);
        };
        let (leaves, def) = args.flatten();
        let auto_mesh = retyped_copy(&mesh, axes.as_deref(), AxisType::Auto);
        let leaves = without_type_axes(leaves, &axes, &auto_mesh);
        let out = f(crate::tree::tree_unflatten(&def, leaves));
        reshard(&out, out_sharding.clone())
    }
}

/// `f` with the mesh axes `axes` (all of them: `None`) Explicit while it runs, its arguments
/// typed by `in_sharding` (JAX's `jax.sharding.explicit_axes`): inside, their shardings over
/// those axes are part of the values' types and each operation's rule types its result, as
/// in code written for Explicit axes; the results come back untyped over those axes, to the
/// Auto code around. `in_sharding` is a prefix of the argument tree; its bare specs name axes
/// of the mesh in scope. Without a mesh in scope it is `f`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::P;
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?; // Auto axes
/// let _mesh = jaxrs::set_mesh(&mesh);
/// let f = jit(|x: Array| {
///     let typed = jaxrs::explicit_axes(
///         |x: Array| {
///             let y = x.sin();
///             assert_eq!(jaxrs::typeof_(&y).to_string(), "f32[8@dp,4]");
///             y
///         },
///         None,
///         P!["dp"],
///     );
///     let y = typed(x);
///     assert_eq!(jaxrs::typeof_(&y).to_string(), "f32[8,4]");
///     y
/// });
/// let y: Array = f.call(Array::zeros(&[8, 4], DType::F32));
/// assert_eq!(y.to_vec::<f32>(), vec![0.0; 32]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn explicit_axes<A: Tree, R: Tree>(
    f: impl Fn(A) -> R,
    axes: Option<&[&str]>,
    in_sharding: impl Into<Shardings>,
) -> impl Fn(A) -> R {
    let loc = Location::caller();
    let axes: Option<Vec<String>> = axes.map(|a| a.iter().map(|s| s.to_string()).collect());
    let in_sharding: Shardings = in_sharding.into();
    move |args: A| {
        let Some(mesh) = scope_mesh("explicit_axes", axes.as_deref(), loc) else {
            return f(args);
        };
        let explicit = retyped_copy(&mesh, axes.as_deref(), AxisType::Explicit);
        let (leaves, def) = args.flatten();
        let per_leaf = shardings_per_leaf(&in_sharding, &def, Some(&explicit), "explicit_axes")
            .unwrap_or_else(|e| panic!("{e} {}", At::line(loc)));
        let leaves: Vec<Array> = leaves
            .iter()
            .zip(per_leaf)
            .map(|(l, s)| {
                let s = s.map(|s| NamedSharding::new(explicit.clone(), s.spec().clone()));
                match s {
                    Some(Ok(s)) => reshard_one(l, &s),
                    Some(Err(e)) => panic!("explicit_axes: {e} {}", At::line(loc)),
                    None => l.clone(),
                }
            })
            .collect();
        let out = f(crate::tree::tree_unflatten(&def, leaves));
        // Back to the Auto code around: the results' types lose the axes.
        let (outs, out_def) = out.flatten();
        crate::tree::tree_unflatten(&out_def, without_type_axes(outs, &axes, &mesh))
    }
}

/// The mesh in scope for `what` (`auto_axes`, `explicit_axes`), `axes` checked against it;
/// `None` when there is none.
fn scope_mesh(what: &str, axes: Option<&[String]>, loc: &Location<'_>) -> Option<Mesh> {
    let mesh = Mesh::current()?;
    if let Some(bad) = axes
        .iter()
        .copied()
        .flatten()
        .find(|a| mesh.axis_size(a).is_none())
    {
        panic!("{what}: {mesh} has no axis {bad:?} {}", At::line(loc));
    }
    Some(mesh)
}

/// `xs` with `axes` (all: `None`) dropped from their types: a traced value through
/// `drop_type_axes`, a concrete one laid out as it is over `auto_mesh` (its mesh with those
/// axes Auto).
fn without_type_axes(xs: Vec<Array>, axes: &Option<Vec<String>>, auto_mesh: &Mesh) -> Vec<Array> {
    let drop = DropTypeAxes { axes: axes.clone() };
    xs.into_iter()
        .map(|x| match (x.is_concrete(), type_sharding_of(&x)) {
            (_, None) => x,
            (false, Some(_)) => bind1(drop.clone(), &[Operand::from(&x)]),
            (true, Some(_)) => relaid_over(&x, auto_mesh),
        })
        .collect()
}

/// `mesh` with `axes` (all: `None`) made of type `to`.
fn retyped_copy(mesh: &Mesh, axes: Option<&[String]>, to: AxisType) -> Mesh {
    let types: Vec<AxisType> = mesh
        .axis_names()
        .iter()
        .zip(mesh.axis_types())
        .map(|(name, t)| match axes {
            Some(axes) if !axes.contains(name) => *t,
            _ => to,
        })
        .collect();
    mesh.with_axis_types(&types).expect("one type per axis")
}

/// A concrete array laid out as it is, over `mesh` (the same devices, other axis types).
fn relaid_over(x: &Array, mesh: &Mesh) -> Array {
    match x.sharding() {
        Some(Sharding::Named(n)) => {
            let sharding = NamedSharding::new(mesh.clone(), n.spec().clone())
                .expect("the same axes on the same devices");
            try_device_put(x, sharding).unwrap_or_else(|e| crate::core::client::fail(e))
        }
        _ => x.clone(),
    }
}

/// Refuses a reshard spec naming an axis that is not explicit, as JAX does.
fn check_explicit(s: &NamedSharding) -> Result<()> {
    match s
        .spec()
        .axis_names()
        .find(|a| !s.mesh().is_explicit_axis(a))
    {
        Some(a) => Err(Error::Sharding(format!(
            "the PartitionSpec {} names the axis {a:?}, which is not Explicit in {}; reshard \
             works over explicit axes (Mesh::with_axis_types), with_sharding_constraint over \
             Auto ones",
            s.spec(),
            s.mesh()
        ))),
        None => Ok(()),
    }
}

/// `x` constrained to `sharding`: a traced value gets the primitive, a concrete one is laid
/// out so (as JAX's `with_sharding_constraint` outside jit is `device_put`).
#[track_caller]
fn constrain(x: &Array, sharding: &NamedSharding) -> Array {
    if x.is_concrete() {
        return try_device_put(x, sharding.clone()).unwrap_or_else(|e| {
            panic!(
                "with_sharding_constraint: {e} {}",
                At::line(Location::caller())
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
    let loc = Location::caller();
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
