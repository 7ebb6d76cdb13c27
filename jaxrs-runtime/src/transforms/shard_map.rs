//! `shard_map`: per-device code inside one SPMD program (JAX's `jax.shard_map`).
//!
//! The function is traced once on one device's pieces of its arguments (each argument split
//! as its `in_specs` entry says), with the mesh's axes in scope as named axes, so the
//! collectives in it (`psum(x, "dp")`, `all_gather`, `ppermute`, `axis_index`, ...)
//! communicate over the mesh. Its results are the devices' pieces, put together as the
//! `out_specs` say. Called inside a `jit`, it becomes part of that program (which then runs
//! over the mesh); called outside, it runs as a jitted program of its own over the mesh.

use crate::aval::{normalize_axis, Aval};
use crate::core::array::Array;
use crate::core::sharding::{note_traced_mesh, Mesh, PartitionDim, PartitionSpec, Shardings};
use crate::core::sharding_types::type_sharding_of;
use crate::core::trace::{bind_at, is_tracing, At, Operand};
use crate::higher_order::control::close_over_consts;
use crate::higher_order::shard_map::{pieces, with_mesh_axes, ShardMapCall};
use crate::prims::sharding::shardings_per_leaf;
use crate::transforms::jit::jit;
use crate::transforms::traced::{rebuild, trace_tree};
use crate::transforms::vmap::AxisSpec;
use crate::tree::{Tree, TreeDef};
use std::panic::Location;
use std::sync::Arc;

/// A function mapped over the shards of its arguments; made by [`shard_map`], run by
/// [`ShardMap::call`].
pub struct ShardMap<F> {
    f: F,
    mesh: Option<Mesh>,
    in_specs: Shardings,
    out_specs: Shardings,
    check_vma: bool,
    axis_names: Option<Vec<String>>,
    /// [`smap`]'s positional axes, in place of the specs.
    mapped: Option<MappedAxes>,
}

/// The axes [`smap`] maps, each turned into a spec over its one mesh axis once the leaves'
/// ranks are known.
struct MappedAxes {
    /// `None`: read from the arguments' types (JAX's `Infer`).
    in_axes: Option<Box<dyn AxisSpec>>,
    out_axes: Box<dyn AxisSpec>,
    axis_name: String,
}

/// [`smap`]'s `in_axes` when the arguments' types say how they are split (JAX's default,
/// `jax.sharding.Infer`): each argument is mapped along the dimension its type shards over
/// the axis, or not at all. The axis must be `Explicit` in the mesh in scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Infer;

/// What [`smap`] takes as `in_axes`: an [`AxisSpec`] (an axis per leaf, `None` for a
/// value every device holds whole) or [`Infer`].
pub trait SmapInAxes {
    #[doc(hidden)]
    fn into_axes(self) -> Option<Box<dyn AxisSpec>>;
}

impl SmapInAxes for Infer {
    fn into_axes(self) -> Option<Box<dyn AxisSpec>> {
        None
    }
}

impl<S: AxisSpec + 'static> SmapInAxes for S {
    fn into_axes(self) -> Option<Box<dyn AxisSpec>> {
        Some(Box::new(self))
    }
}

/// A [`shard_map`] over the one mesh axis `axis_name`, written with vmap's positional axes
/// (`jax.smap(f, in_axes=, out_axes=, axis_name=)`): each argument is split along its
/// `in_axes` entry over the axis (`None`: every device gets it whole), and each result is
/// put together along its `out_axes` entry. The mesh is the one in scope
/// ([`set_mesh`](crate::set_mesh)); the function is manual over `axis_name` only (the other
/// mesh axes stay with XLA's partitioner), and JAX's varying-axes check is on. A negative
/// axis counts from the end of its leaf (as JAX documents it).
///
/// ```
/// use jaxrs::prelude::*;
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[4, 2], &["x", "y"])?;
/// let _scope = jaxrs::set_mesh(&mesh);
/// // Each of the 4 devices along "x" scales its rows, then the column sums are added.
/// let col_sums = jaxrs::smap(
///     |(w, x): (Array, Array)| jaxrs::psum(&(&x * &w).sum(0, false), "x"),
///     (None, 0),
///     None,
///     "x",
/// );
/// let x = Array::arange(0.0, 24.0, 1.0, DType::F32).reshape([8, 3]);
/// let y: Array = col_sums.call((Array::scalar(2.0f32), x.clone()));
/// assert_eq!(y.to_vec::<f32>(), (&x * 2.0f32).sum(0, false).to_vec::<f32>());
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn smap<F>(
    f: F,
    in_axes: impl SmapInAxes,
    out_axes: impl AxisSpec + 'static,
    axis_name: &str,
) -> ShardMap<F> {
    ShardMap {
        axis_names: Some(vec![axis_name.to_string()]),
        mapped: Some(MappedAxes {
            in_axes: in_axes.into_axes(),
            out_axes: Box::new(out_axes),
            axis_name: axis_name.to_string(),
        }),
        ..shard_map(f)
    }
}

impl MappedAxes {
    /// The spec splitting a leaf of `aval` along `axis` over the mapped axis.
    fn spec(
        &self,
        what: &str,
        i: usize,
        axis: Option<i64>,
        aval: &Aval,
        loc: &'static Location<'static>,
    ) -> PartitionSpec {
        let Some(axis) = axis else {
            return PartitionSpec::default();
        };
        let Some(d) = normalize_axis(axis, aval.rank()) else {
            panic!(
                "smap: {what} maps leaf {i} ({aval}) along axis {axis}, which is out of range {}",
                At::line(loc)
            )
        };
        let mut dims = vec![PartitionDim::Replicated; d];
        dims.push(PartitionDim::Axes(vec![self.axis_name.clone()]));
        PartitionSpec::new(dims)
    }

    fn specs(
        &self,
        axes: &dyn AxisSpec,
        what: &str,
        def: &TreeDef,
        avals: &[Aval],
        loc: &'static Location<'static>,
    ) -> Vec<PartitionSpec> {
        let mut per_leaf = Vec::new();
        if let Err(e) = axes.leaf_axes(def, &mut per_leaf) {
            panic!("smap: {what} does not fit: {e} {}", At::line(loc));
        }
        per_leaf
            .iter()
            .zip(avals)
            .enumerate()
            .map(|(i, (&axis, aval))| self.spec(what, i, axis, aval, loc))
            .collect()
    }

    fn in_specs(
        &self,
        leaves: &[Array],
        def: &TreeDef,
        mesh: &Mesh,
        loc: &'static Location<'static>,
    ) -> Vec<PartitionSpec> {
        if let Some(axes) = &self.in_axes {
            let avals: Vec<Aval> = leaves.iter().map(|l| l.aval().clone()).collect();
            return self.specs(axes.as_ref(), "in_axes", def, &avals, loc);
        }
        if !mesh.is_explicit_axis(&self.axis_name) {
            panic!(
                "smap: in_axes Infer reads how each argument is split from its type, which                  needs mesh axis \"{}\" to be Explicit (the mesh in scope is {mesh}); give                  in_axes {}",
                self.axis_name,
                At::line(loc)
            );
        }
        leaves
            .iter()
            .map(|leaf| {
                let dims = type_sharding_of(leaf).map_or_else(Vec::new, |s| {
                    s.spec()
                        .dims()
                        .iter()
                        .map(|d| match d {
                            PartitionDim::Axes(a) if a.contains(&self.axis_name) => {
                                PartitionDim::Axes(vec![self.axis_name.clone()])
                            }
                            _ => PartitionDim::Replicated,
                        })
                        .collect()
                });
                PartitionSpec::new(dims)
            })
            .collect()
    }
}

/// Maps `f` over the shards of its arguments on every device of a mesh, as
/// `jax.shard_map(f, mesh=, in_specs=, out_specs=)` does: `f` sees one device's pieces
/// (local shapes) and communicates through collectives over the mesh's axes; its results
/// are assembled from the devices' pieces. `in_specs` and `out_specs` are prefixes of the
/// argument and result trees, each entry a [`PartitionSpec`] (`P![]` for a value every device
/// holds whole). The mesh is [`ShardMap::mesh`]'s, else the one in scope
/// ([`set_mesh`](crate::set_mesh)).
///
/// Every mesh axis is manual unless [`ShardMap::axis_names`] picks some. JAX's check that an
/// output replicated over an axis does not vary over it is on (see [`ShardMap::check_vma`]).
/// It differentiates as JAX's does (`jvp` maps the body's JVP; `grad` maps its VJP, over the
/// residuals the forward call kept, with JAX's varying-axes rules: a `psum` passes its cotangent back unsummed, and a value every
/// device uses whole gets the sum of their cotangents; `scan`, `remat` and `cond` bodies are
/// typed the same way). `vmap` of it adds the batch dimension to the specs, unsplit. Not
/// built yet: differentiating collectives inside a `while_loop` or
/// a custom rule of the body.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{shard_map, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?;
/// // A matmul with the contraction split over "mp": each device multiplies its blocks, then
/// // the partial products are summed over "mp".
/// let matmul = shard_map(|(x, w): (Array, Array)| jaxrs::psum(&x.matmul(&w), "mp"))
///     .mesh(&mesh)
///     .in_specs((P!["dp", "mp"], P!["mp", None]))
///     .out_specs(P!["dp", None]);
/// let x = Array::arange(0.0, 32.0, 1.0, DType::F32).reshape([4, 8]);
/// let w = Array::ones(&[8, 3], DType::F32);
/// let y: Array = matmul.call((x.clone(), w.clone()));
/// assert_eq!(y.to_vec::<f32>(), x.matmul(&w).to_vec::<f32>());
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn shard_map<F>(f: F) -> ShardMap<F> {
    ShardMap {
        f,
        mesh: None,
        in_specs: Shardings::Unspecified,
        out_specs: Shardings::Unspecified,
        check_vma: true,
        axis_names: None,
        mapped: None,
    }
}

impl<F> ShardMap<F> {
    /// The mesh to map over (JAX's `mesh=`).
    pub fn mesh(mut self, mesh: &Mesh) -> Self {
        self.mesh = Some(mesh.clone());
        self
    }

    /// How each argument is split over the mesh: a prefix of the argument tree of
    /// [`PartitionSpec`]s (JAX's `in_specs=`).
    pub fn in_specs(mut self, specs: impl Into<Shardings>) -> Self {
        self.in_specs = specs.into();
        self
    }

    /// How each result is assembled from the devices' pieces: a prefix of the result tree of
    /// [`PartitionSpec`]s (JAX's `out_specs=`). A result replicated over a mesh axis (the axis
    /// not in its spec) must be the same on every device along it.
    pub fn out_specs(mut self, specs: impl Into<Shardings>) -> Self {
        self.out_specs = specs.into();
        self
    }

    /// Whether to check that every result replicated over a mesh axis does not vary over it
    /// (JAX's `check_vma=`, on by default). Off, such a result is taken from the devices as
    /// if they agreed.
    pub fn check_vma(mut self, check: bool) -> Self {
        self.check_vma = check;
        self
    }

    /// The mesh axes the function is manual over (JAX's `axis_names=`): its specs split
    /// arguments and results over these only, and its collectives communicate over these
    /// only. Along the other axes the function sees its values whole, and XLA's partitioner
    /// shards the computation over them as it does outside (as `jit`'s shardings and
    /// `with_sharding_constraint` ask). All of them by default.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    /// use jaxrs::{shard_map, P};
    ///
    /// jaxrs::set_cpu_device_count(8)?;
    /// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?;
    /// // Manual over "dp" only: each half of the batch sums its rows, then the halves add.
    /// let total = shard_map(|x: Array| jaxrs::psum(&x.sum(0, false), "dp"))
    ///     .mesh(&mesh)
    ///     .axis_names(&["dp"])
    ///     .in_specs(P!["dp"])
    ///     .out_specs(P![]);
    /// let x = Array::ones(&[4, 8], DType::F32);
    /// assert_eq!(total.call::<Array, Array>(x).to_vec::<f32>(), vec![4.0; 8]);
    /// # Ok::<(), jaxrs::Error>(())
    /// ```
    pub fn axis_names(mut self, names: &[&str]) -> Self {
        self.axis_names = Some(names.iter().map(|n| n.to_string()).collect());
        self
    }

    /// The manual axes, in the mesh's order, or a panic naming an axis the mesh lacks.
    fn manual_axes(&self, mesh: &Mesh, loc: &'static Location<'static>) -> Vec<String> {
        let Some(names) = &self.axis_names else {
            return mesh.axis_names().to_vec();
        };
        for n in names {
            if !mesh.axis_names().contains(n) {
                panic!(
                    "shard_map: axis_names names \"{n}\", which is not an axis of the mesh {mesh} {}",
                    At::line(loc)
                );
            }
        }
        mesh.axis_names()
            .iter()
            .filter(|a| names.contains(a))
            .cloned()
            .collect()
    }

    /// Runs the mapped function on `args`.
    ///
    /// Panics, at the caller's line, when no mesh is given or in scope, a spec names an axis
    /// the mesh lacks or is longer than its argument's rank, an argument's dimension does not
    /// split evenly, or a result replicated over an axis varies over it.
    #[track_caller]
    pub fn call<A: Tree, R: Tree>(&self, args: A) -> R
    where
        F: Fn(A) -> R,
    {
        let loc = Location::caller();
        let mesh = self.mesh.clone().or_else(Mesh::current).unwrap_or_else(|| {
            panic!(
                "shard_map: no mesh: give one with .mesh(&mesh) or put one in scope with \
                 set_mesh {}",
                At::line(loc)
            )
        });
        if is_tracing() {
            return self.bind(args, &mesh, loc);
        }
        // Outside a trace: one SPMD program over the mesh, its arguments and results laid
        // out as the specs say. The specs are checked against the arguments first, so that a
        // misfit is reported as shard_map's.
        let (leaves, in_def) = args.flatten();
        let specs = self.arg_specs(&leaves, &in_def, &mesh, loc);
        for (i, (leaf, spec)) in leaves.iter().zip(&specs).enumerate() {
            local_aval(&mesh, spec, leaf.aval(), i, loc);
        }
        let args: A = rebuild("shard_map", &in_def, leaves);
        let program = jit(|args: A| self.bind::<A, R>(args, &mesh, loc))
            .mesh(&mesh)
            .in_shardings(self.in_specs.clone())
            .out_shardings(self.out_specs.clone());
        program.call(args)
    }

    /// [`ShardMap::call`] for `#[shard_map]`'s expansion: `args` may hold Rust scalars, which
    /// the function receives as weakly typed 0-d arrays (so `A` and `AT` differ), as with
    /// `#[jit]`.
    #[doc(hidden)]
    #[track_caller]
    pub fn call_traced<A: Tree, AT: Tree, R: Tree>(&self, args: A) -> R
    where
        F: Fn(AT) -> R,
    {
        let (leaves, def) = args.flatten();
        self.call(rebuild("shard_map", &def, leaves))
    }

    /// One spec per argument leaf: from the specs, or from [`smap`]'s axes.
    fn arg_specs(
        &self,
        leaves: &[Array],
        def: &TreeDef,
        mesh: &Mesh,
        loc: &'static Location<'static>,
    ) -> Vec<PartitionSpec> {
        match &self.mapped {
            Some(m) => m.in_specs(leaves, def, mesh, loc),
            None => {
                let manual = self.manual_axes(mesh, loc);
                specs_of(&self.in_specs, def, mesh, &manual, "in_specs", loc)
            }
        }
    }

    /// Traces the function on local pieces and binds the call into the current trace.
    fn bind<A: Tree, R: Tree>(&self, args: A, mesh: &Mesh, loc: &'static Location<'static>) -> R
    where
        F: Fn(A) -> R,
    {
        let (leaves, in_def) = args.flatten();
        let manual = self.manual_axes(mesh, loc);
        let in_specs = self.arg_specs(&leaves, &in_def, mesh, loc);
        let local: Vec<Aval> = leaves
            .iter()
            .zip(&in_specs)
            .enumerate()
            .map(|(i, (leaf, spec))| local_aval(mesh, spec, leaf.aval(), i, loc))
            .collect();
        let (closed, out_def) = trace_tree("shard_map", &in_def, &local, |a: A| {
            with_mesh_axes(mesh, &manual, || (self.f)(a))
        });
        let out_specs = match &self.mapped {
            Some(m) => m.specs(
                m.out_axes.as_ref(),
                "out_axes",
                &out_def,
                &closed.jaxpr.out_avals(),
                loc,
            ),
            None => specs_of(&self.out_specs, &out_def, mesh, &manual, "out_specs", loc),
        };
        for (i, (aval, spec)) in closed.jaxpr.out_avals().iter().zip(&out_specs).enumerate() {
            if spec.len() > aval.rank() {
                panic!(
                    "shard_map: out_specs of result {i} is {spec}, longer than the rank of the \
                     function's result {aval} {}",
                    At::line(loc)
                );
            }
        }
        let num_consts = closed.consts.len();
        let mut specs = vec![PartitionSpec::default(); num_consts];
        specs.extend(in_specs);
        let call = ShardMapCall {
            jaxpr: Arc::new(close_over_consts(closed.jaxpr)),
            mesh: mesh.clone(),
            in_specs: specs,
            out_specs: out_specs.clone(),
            manual_axes: manual,
        };
        if self.check_vma {
            if let Some((i, axis)) = call.unreplicated_outputs().into_iter().next() {
                panic!(
                    "shard_map: out_specs of result {i} is {} which implies that the result is \
                     replicated across mesh axis \"{axis}\", but it varies over \"{axis}\" (it \
                     depends on a value split over it, or on axis_index or a collective that \
                     leaves a piece per device along it); put \"{axis}\" in its spec, reduce it \
                     with psum, or turn the check off with .check_vma(false) {}",
                    out_specs[i],
                    At::line(loc)
                );
            }
        }
        note_traced_mesh(mesh);
        let operands: Vec<Operand> = closed
            .consts
            .iter()
            .chain(&leaves)
            .map(Operand::from)
            .collect();
        let outs = bind_at(Arc::new(call), &operands, loc);
        rebuild("shard_map", &out_def, outs)
    }
}

/// One spec per leaf of a tree of structure `def`, from a prefix of it; every leaf needs
/// one, and names only `manual` axes.
fn specs_of(
    specs: &Shardings,
    def: &TreeDef,
    mesh: &Mesh,
    manual: &[String],
    what: &str,
    loc: &'static Location<'static>,
) -> Vec<PartitionSpec> {
    let per_leaf = shardings_per_leaf(specs, def, Some(mesh), &format!("shard_map: {what}"))
        .unwrap_or_else(|e| panic!("{e} {}", At::line(loc)));
    per_leaf
        .into_iter()
        .enumerate()
        .map(|(i, s)| match s {
            Some(s) if s.mesh() == mesh => {
                let spec = s.spec().clone();
                if let Some(axis) = spec.axis_names().find(|a| !manual.contains(a)) {
                    panic!(
                        "shard_map: {what} of leaf {i} is {spec}, which names mesh axis \"{axis}\", \
                         but the function is manual over {manual:?} only (axis_names); a spec \
                         splits over manual axes only: the others are left to XLA's partitioner {}",
                        At::line(loc)
                    );
                }
                spec
            }
            Some(s) => panic!(
                "shard_map: {what} of leaf {i} is over {}, not the shard_map's mesh {mesh} {}",
                s.mesh(),
                At::line(loc)
            ),
            None => panic!(
                "shard_map: {what} gives no spec for leaf {i}; give every argument and result \
                 a PartitionSpec (P![] for one that every device holds whole) {}",
                At::line(loc)
            ),
        })
        .collect()
}

/// The aval of one device's piece of argument `i`, or a panic naming what does not split.
fn local_aval(
    mesh: &Mesh,
    spec: &PartitionSpec,
    global: &Aval,
    i: usize,
    loc: &'static Location<'static>,
) -> Aval {
    if spec.len() > global.rank() {
        panic!(
            "shard_map: in_specs of argument {i} is {spec}, longer than the rank of {global} {}",
            At::line(loc)
        );
    }
    let n = pieces(mesh, spec, global.rank());
    for (d, (&size, &k)) in global.shape.iter().zip(&n).enumerate() {
        if size % k != 0 {
            panic!(
                "shard_map: argument {i} ({global}): dimension {d} of size {size} does not split \
                 evenly into the {k} pieces {spec} asks for {}",
                At::line(loc)
            );
        }
    }
    global.with_shape(
        global
            .shape
            .iter()
            .zip(&n)
            .map(|(s, k)| s / k)
            .collect::<Vec<_>>(),
    )
}
