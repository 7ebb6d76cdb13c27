//! The `shard_map` call primitive: a function traced on one device's pieces of its operands
//! (local shapes), run on every device of a mesh at once inside the SPMD program, with the
//! collectives in its body communicating over the mesh axes. Lowered as JAX lowers it, to an
//! `sdy.manual_computation` whose body is manual over the mesh axes the call names (all of
//! them unless `axis_names` picks some; the others stay with XLA's partitioner).
//!
//! Which mesh axes each value of the body varies over is inferred here
//! ([`varying_axes`], JAX's `check_vma`): an input varies over the axes its spec splits it
//! over, `axis_index(a)` and the collectives that leave per-device results (`all_gather`,
//! `psum_scatter`, `ppermute`, `all_to_all`) over `a`, and `psum`/`pmax`/`pmin` over `a`
//! make a value that no longer varies over `a`; `scan`, `remat`, `cond`, `custom_vjp` and
//! `custom_jvp` are typed through their bodies. An output whose spec says it is replicated
//! over an axis it varies over is refused: the program would return one device's piece as if
//! all agreed.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::axes::{with_manual_axis, NamedAxis};
use crate::core::ir::{Atom, Eqn, Jaxpr};
use crate::core::ir::{ClosedJaxpr, Env};
use crate::core::lower::{sdy_dims, LowerCtx};
use crate::core::primitive::{as_any, Backward, Prim, Primitive};
use crate::core::sharding::{device_put, Mesh, NamedSharding, PartitionDim, PartitionSpec};
use crate::core::sharding_types::{dims_of, type_sharding, SpecRule};
use crate::core::trace::{bind, At, Operand};
use crate::core::trace::{bind1, bind_at, eval_jaxpr, in_scope_of, trace_to_jaxpr};
use crate::higher_order::control::{close_over_consts, Cond, Scan};
use crate::higher_order::custom_jvp::{CustomJvpCall, FlatJvp};
use crate::higher_order::custom_vjp::CustomVjpCall;
use crate::higher_order::remat::RematCall;
use crate::interpreters::ad::{jvp_jaxpr, linearize_jaxpr};
use crate::interpreters::batching::{batch_eval, bound_array, move_bdim, moveaxis};
use crate::prims::{AllGather, AllReduce, AllToAll, AxisIndex, Ppermute, Pvary, ReduceScatter};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

/// A call of a function mapped over the shards of its operands. Its jaxpr has no constants
/// (the values the function captured are its leading inputs, replicated).
#[derive(Clone)]
pub struct ShardMapCall {
    /// The body, over one device's pieces (local avals).
    pub jaxpr: Arc<Jaxpr>,
    pub mesh: Mesh,
    /// How each operand (the captured values first) is split over the mesh.
    pub in_specs: Vec<PartitionSpec>,
    /// How each result is assembled from the devices' pieces.
    pub out_specs: Vec<PartitionSpec>,
    /// The mesh axes the body is manual over (JAX's `axis_names`), in the mesh's order; the
    /// specs name only these. The body sees its values whole along the others, which XLA's
    /// partitioner keeps sharding as it likes.
    pub manual_axes: Vec<String>,
}

impl fmt::Debug for ShardMapCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shard_map[mesh={}, manual={:?}]",
            self.mesh, self.manual_axes
        )
    }
}

/// How many pieces `spec` splits each of `rank` dimensions into over `mesh`.
pub fn pieces(mesh: &Mesh, spec: &PartitionSpec, rank: usize) -> Vec<usize> {
    (0..rank)
        .map(|d| match spec.dims().get(d) {
            Some(PartitionDim::Axes(axes)) => axes
                .iter()
                .map(|a| mesh.axis_size(a).expect("specs name the mesh's axes"))
                .product(),
            _ => 1,
        })
        .collect()
}

/// The mesh axes a spec splits some dimension over.
fn split_axes(spec: &PartitionSpec) -> BTreeSet<String> {
    spec.dims()
        .iter()
        .flat_map(|d| match d {
            PartitionDim::Axes(axes) => axes.clone(),
            PartitionDim::Replicated => Vec::new(),
        })
        .collect()
}

type Axes = BTreeSet<String>;

/// The mesh axes each output of `jaxpr` varies over, given those of its inputs (JAX's
/// varying-manual-axes inference). `scan`, `remat`, `cond` and the custom rules are typed
/// through their bodies, as JAX types them (a loop's carry varies over the axes it varies over
/// at any step; a custom rule's outputs as its function's); another higher-order equation (a
/// while loop) is taken to vary over its inputs' axes and every mesh axis its body
/// communicates over, which may call a value varying that JAX proves invariant, never the
/// other way round.
pub fn varying_axes(jaxpr: &Jaxpr, inputs: &[Axes], mesh_axes: &[String]) -> Vec<Axes> {
    let mut of_var: Vec<Axes> = vec![Axes::new(); jaxpr.avals.len()];
    for (v, axes) in jaxpr.constvars.iter().chain(&jaxpr.invars).zip(inputs) {
        of_var[v.0 as usize] = axes.clone();
    }
    for e in &jaxpr.eqns {
        let ins: Vec<Axes> = e.inputs.iter().map(|a| atom_axes(&of_var, a)).collect();
        let rule = eqn_axes(e, &ins, mesh_axes);
        for (v, axes) in e.outputs.iter().zip(rule.outs) {
            of_var[v.0 as usize] = axes;
        }
    }
    jaxpr
        .outvars
        .iter()
        .map(|a| atom_axes(&of_var, a))
        .collect()
}

fn atom_axes(of_var: &[Axes], a: &Atom) -> Axes {
    match a {
        Atom::Var(v) => of_var[v.0 as usize].clone(),
        Atom::Lit(_) => Axes::new(),
    }
}

/// One equation's varying-axes rule: the axes each input must vary over (reverse mode
/// inserts a `pvary` where it does not) and those each output varies over.
struct EqnAxes {
    ins: Vec<Axes>,
    outs: Vec<Axes>,
}

fn eqn_axes(e: &Eqn, ins: &[Axes], mesh_axes: &[String]) -> EqnAxes {
    let p = e.prim.as_any();
    let n_out = e.outputs.len();
    if let Some(s) = p.downcast_ref::<Scan>() {
        // The carry's axes: those of the initial carry, grown until a step adds none.
        let (nc, nk) = (s.num_consts, s.num_carry);
        let mut body_in = ins.to_vec();
        loop {
            let outs = varying_axes(&s.body, &body_in, mesh_axes);
            let mut grown = false;
            for k in 0..nk {
                if !outs[k].is_subset(&body_in[nc + k]) {
                    body_in[nc + k].extend(outs[k].iter().cloned());
                    grown = true;
                }
            }
            if !grown {
                let mut outs_all: Vec<Axes> = body_in[nc..nc + nk].to_vec();
                outs_all.extend(outs.into_iter().skip(nk));
                return EqnAxes {
                    ins: body_in,
                    outs: outs_all,
                };
            }
        }
    }
    if let Some(r) = p.downcast_ref::<RematCall>() {
        return EqnAxes {
            ins: ins.to_vec(),
            outs: varying_axes(&r.jaxpr, ins, mesh_axes),
        };
    }
    // A custom rule's outputs are typed by the function it stands for (its operands are that
    // function's constants, then its arguments), as JAX types them by the primal function.
    if let Some(c) = p.downcast_ref::<CustomVjpCall>() {
        return EqnAxes {
            ins: ins.to_vec(),
            outs: varying_axes(&c.fwd, ins, mesh_axes),
        };
    }
    if let Some(c) = p.downcast_ref::<CustomJvpCall>() {
        return EqnAxes {
            ins: ins.to_vec(),
            outs: varying_axes(&c.fun, ins, mesh_axes),
        };
    }
    if let Some(c) = p.downcast_ref::<Cond>() {
        // Each branch on its constants and the operands; the result varies where any branch's
        // does, and where the index does.
        let mut outs: Vec<Axes> = vec![ins[0].clone(); n_out];
        for (b, branch_in) in cond_branch_inputs(c, ins).into_iter().enumerate() {
            for (o, axes) in
                outs.iter_mut()
                    .zip(varying_axes(&c.branches[b], &branch_in, mesh_axes))
            {
                o.extend(axes);
            }
        }
        return EqnAxes {
            ins: ins.to_vec(),
            outs,
        };
    }
    if let Some(v) = p.downcast_ref::<Pvary>() {
        // A pvary's operand is the same along its axes (that is what it casts), so it asks
        // nothing of it; an operand already varying there is JAX's refused pcast.
        if let Some(a) = v.axes.iter().find(|a| ins[0].contains(&a.name)) {
            panic!(
                "pcast: the value already varies over mesh axis \"{}\"; pcast(to=\"varying\") \
                 takes a value that every device along the axes it names holds the same {}",
                a.name,
                At::line(e.loc)
            );
        }
        let mut out = ins[0].clone();
        out.extend(v.axes.iter().map(|a| a.name.clone()));
        return EqnAxes {
            ins: ins.to_vec(),
            outs: vec![out; n_out],
        };
    }
    let mut wanted: Axes = ins.iter().flatten().cloned().collect();
    let out = if let Some(r) = p.downcast_ref::<AllReduce>() {
        // JAX's psum of an invariant value first makes it varying.
        wanted.insert(r.axis.name.clone());
        let mut out = wanted.clone();
        out.remove(&r.axis.name);
        out
    } else if let Some(i) = p.downcast_ref::<AxisIndex>() {
        wanted.insert(i.axis.name.clone());
        wanted.clone()
    } else if let Some(a) = communicates_over(p) {
        wanted.insert(a);
        wanted.clone()
    } else {
        wanted.extend(
            mesh_axes
                .iter()
                .filter(|a| e.prim.uses_named_axis(a))
                .cloned(),
        );
        wanted.clone()
    };
    EqnAxes {
        ins: vec![wanted; ins.len()],
        outs: vec![out; n_out],
    }
}

/// The inputs of each branch of a `cond` (its constants, then the operands), from the
/// equation's (the index, every branch's constants in turn, the operands).
fn cond_branch_inputs<T: Clone>(c: &Cond, ins: &[T]) -> Vec<Vec<T>> {
    let total: usize = c.branch_consts.iter().sum();
    let operands = &ins[1 + total..];
    let mut start = 1;
    c.branch_consts
        .iter()
        .map(|&k| {
            let mut v = ins[start..start + k].to_vec();
            start += k;
            v.extend_from_slice(operands);
            v
        })
        .collect()
}

/// The first equation (in `jaxpr` or the bodies of its `scan`s, `remat`s and `cond`s) that
/// communicates over a mesh axis from inside a body that reverse mode cannot type.
fn untypable(jaxpr: &Jaxpr, axes: &[String]) -> Option<&'static str> {
    jaxpr.eqns.iter().find_map(|e| {
        let p = e.prim.as_any();
        if let Some(s) = p.downcast_ref::<Scan>() {
            untypable(&s.body, axes)
        } else if let Some(r) = p.downcast_ref::<RematCall>() {
            untypable(&r.jaxpr, axes)
        } else if let Some(c) = p.downcast_ref::<Cond>() {
            c.branches.iter().find_map(|b| untypable(b, axes))
        } else if let Some(c) = p.downcast_ref::<CustomVjpCall>() {
            untypable(&c.fwd, axes)
        } else if let Some(c) = p.downcast_ref::<CustomJvpCall>() {
            untypable(&c.fun, axes)
        } else if !is_collective(p) && axes.iter().any(|a| e.prim.uses_named_axis(a)) {
            Some(e.prim.name())
        } else {
            None
        }
    })
}

/// Runs `f` with the `manual` axes of `mesh` in scope as named axes (as the body was
/// traced): the collectives in it may name those, and only those.
pub fn with_mesh_axes<R>(mesh: &Mesh, manual: &[String], f: impl FnOnce() -> R) -> R {
    fn nest<R>(axes: &[(&String, usize)], f: impl FnOnce() -> R) -> R {
        match axes.split_first() {
            None => f(),
            Some(((name, size), rest)) => with_manual_axis(name, *size, || nest(rest, f)),
        }
    }
    let axes: Vec<(&String, usize)> = mesh
        .axis_names()
        .iter()
        .zip(mesh.shape().iter().copied())
        .filter(|(name, _)| manual.contains(name))
        .collect();
    nest(&axes, f)
}

/// Is this a named-axis collective (or `pvary`), whose varying axes are known exactly?
fn is_collective(p: &dyn std::any::Any) -> bool {
    p.is::<AllReduce>()
        || p.is::<AllGather>()
        || p.is::<ReduceScatter>()
        || p.is::<Ppermute>()
        || p.is::<AllToAll>()
        || p.is::<AxisIndex>()
        || p.is::<Pvary>()
}

/// The mesh axis a collective communicates over (its operand must vary along it), if `p` is
/// one.
fn communicates_over(p: &dyn std::any::Any) -> Option<String> {
    if let Some(r) = p.downcast_ref::<AllReduce>() {
        Some(r.axis.name.clone())
    } else if let Some(g) = p.downcast_ref::<AllGather>() {
        Some(g.axis.name.clone())
    } else if let Some(r) = p.downcast_ref::<ReduceScatter>() {
        Some(r.axis.name.clone())
    } else if let Some(t) = p.downcast_ref::<AllToAll>() {
        Some(t.axis.name.clone())
    } else {
        p.downcast_ref::<Ppermute>().map(|q| q.axis.name.clone())
    }
}

impl ShardMapCall {
    /// A call of `closed` (traced on local avals) over the same mesh, with these specs.
    fn call_with(
        &self,
        closed: ClosedJaxpr,
        in_specs: Vec<PartitionSpec>,
        out_specs: Vec<PartitionSpec>,
        operands: Vec<Operand>,
    ) -> Vec<Array> {
        let mut specs = vec![PartitionSpec::default(); closed.consts.len()];
        specs.extend(in_specs);
        let mut ops: Vec<Operand> = closed.consts.iter().map(Operand::from).collect();
        ops.extend(operands);
        let call = ShardMapCall {
            jaxpr: Arc::new(close_over_consts(closed.jaxpr)),
            mesh: self.mesh.clone(),
            in_specs: specs,
            out_specs,
            manual_axes: self.manual_axes.clone(),
        };
        bind(Arc::new(call), &ops)
    }

    /// Stops, naming the equation, where the body communicates over the mesh from inside a
    /// body that reverse mode cannot type.
    fn check_typable(&self) {
        if let Some(name) = untypable(&self.jaxpr, &self.manual_axes) {
            panic!(
                "shard_map: differentiating a body whose {name} communicates over the mesh is not \
                 built yet (collectives inside while loops or nested calls of a shard_map; scan, \
                 remat, cond, custom_vjp and custom_jvp are typed)"
            );
        }
    }

    /// The body with JAX's varying-axes types made explicit, for reverse mode: every
    /// `psum`/`pmax`/`pmin` marked invariant (its cotangent passes back unsummed), and a
    /// `pvary` (whose transpose is a `psum`) wherever a value the same on every device along
    /// some axes meets one that varies along them, enters a collective over such an axis, or
    /// is a result whose spec splits it over them. The bodies of its `scan`s, `remat`s and
    /// `cond`s are typed the same way (a loop's carry entering as varying as it gets). Values
    /// are unchanged.
    fn typed(&self) -> Jaxpr {
        let inputs: Vec<Axes> = self.in_specs.iter().map(split_axes).collect();
        let outputs: Vec<Axes> = self.out_specs.iter().map(split_axes).collect();
        self.retyped(&self.jaxpr, &inputs, &outputs)
    }

    /// `body` typed as [`ShardMapCall::typed`] says, its inputs varying over `inputs` and
    /// each output made to vary (at least) over `outputs`.
    fn retyped(&self, body: &Jaxpr, inputs: &[Axes], outputs: &[Axes]) -> Jaxpr {
        let named = |name: &String| NamedAxis {
            name: name.clone(),
            size: self.mesh.axis_size(name).expect("a mesh axis"),
        };
        let pvary = |x: Array, missing: Axes| -> Array {
            if missing.is_empty() {
                return x;
            }
            let prim = Pvary {
                axes: missing.iter().map(named).collect(),
            };
            bind1(prim, &[Operand::from(&x)])
        };
        let mesh_axes = &self.manual_axes;
        let closed = trace_to_jaxpr(&body.in_avals(), |vals| {
            with_mesh_axes(&self.mesh, mesh_axes, || {
                let mut env = Env::new(body, "shard_map");
                let mut vma: Vec<Axes> = vec![Axes::new(); body.avals.len()];
                for ((v, a), axes) in body.invars.iter().zip(vals).zip(inputs) {
                    env.set(*v, a);
                    vma[v.0 as usize] = axes.clone();
                }
                for e in &body.eqns {
                    let ins: Vec<Axes> = e.inputs.iter().map(|a| atom_axes(&vma, a)).collect();
                    let rule = eqn_axes(e, &ins, mesh_axes);
                    let ops: Vec<Operand> = e
                        .inputs
                        .iter()
                        .zip(&rule.ins)
                        .map(|(a, wanted)| match a {
                            Atom::Lit(_) => env.operand(a),
                            Atom::Var(_) => {
                                let missing =
                                    wanted.difference(&atom_axes(&vma, a)).cloned().collect();
                                Operand::from(pvary(env.read(a), missing))
                            }
                        })
                        .collect();
                    let p = e.prim.as_any();
                    let prim: Prim = if let Some(r) = p.downcast_ref::<AllReduce>() {
                        Arc::new(AllReduce {
                            invariant: true,
                            ..r.clone()
                        })
                    } else if let Some(s) = p.downcast_ref::<Scan>() {
                        let body = self.retyped(&s.body, &rule.ins, &rule.outs);
                        Arc::new(Scan {
                            body: Arc::new(body),
                            ..s.clone()
                        })
                    } else if let Some(r) = p.downcast_ref::<RematCall>() {
                        let jaxpr = self.retyped(&r.jaxpr, &rule.ins, &rule.outs);
                        Arc::new(RematCall {
                            jaxpr: Arc::new(jaxpr),
                            ..r.clone()
                        })
                    } else if let Some(c) = p.downcast_ref::<CustomVjpCall>() {
                        // The user's backward function runs as written; the forward one is
                        // typed for the cotangents that reach its residuals (a derivative of
                        // the backward pass).
                        let fwd = self.retyped_with_consts(&c.fwd, &rule.ins, &rule.outs);
                        Arc::new(CustomVjpCall {
                            fwd: Arc::new(fwd),
                            ..c.clone()
                        })
                    } else if let Some(c) = p.downcast_ref::<CustomJvpCall>() {
                        self.typed_custom_jvp(c, &rule)
                    } else if let Some(c) = p.downcast_ref::<Cond>() {
                        let branches = cond_branch_inputs(c, &rule.ins)
                            .iter()
                            .zip(&c.branches)
                            .map(|(ins, b)| Arc::new(self.retyped(b, ins, &rule.outs)))
                            .collect();
                        Arc::new(Cond {
                            branches,
                            ..c.clone()
                        })
                    } else {
                        e.prim.clone()
                    };
                    let outs = in_scope_of(e, || bind_at(prim, &ops, e.loc));
                    for ((v, o), axes) in e.outputs.iter().zip(outs).zip(rule.outs) {
                        env.set(*v, o);
                        vma[v.0 as usize] = axes;
                    }
                }
                body.outvars
                    .iter()
                    .zip(outputs)
                    .map(|(a, wanted)| {
                        let missing = wanted.difference(&atom_axes(&vma, a)).cloned().collect();
                        pvary(env.read(a), missing)
                    })
                    .collect()
            })
        });
        assert!(
            closed.consts.is_empty(),
            "shard_map: the typed body captured arrays (a bug in jaxrs)"
        );
        closed.jaxpr
    }
}

impl ShardMapCall {
    /// [`ShardMapCall::retyped`] for a jaxpr with constants (typed as inputs, in `inputs`
    /// before the arguments), which stay its constants.
    fn retyped_with_consts(&self, body: &Jaxpr, inputs: &[Axes], outputs: &[Axes]) -> Jaxpr {
        let num_consts = body.constvars.len();
        let mut typed = self.retyped(&close_over_consts(body.clone()), inputs, outputs);
        typed.constvars = typed.invars.drain(..num_consts).collect();
        typed
    }

    /// A `custom_jvp` call typed for reverse mode: its function typed, and its JVP rule traced
    /// and typed each time it runs (reverse mode transposes the rule, so a `psum` of tangents
    /// in it must pass its cotangent back unsummed, as in JAX). A tangent varies as its
    /// primal; the values the rule captures are the same on every device.
    fn typed_custom_jvp(&self, c: &CustomJvpCall, rule: &EqnAxes) -> Prim {
        let fun = self.retyped_with_consts(&c.fun, &rule.ins, &rule.outs);
        let arg_axes = rule.ins[c.num_consts..].to_vec();
        let out_axes = rule.outs.clone();
        // The rule's primals are the operands after the constants (`CustomJvpCall::arguments`).
        let operand_avals = c.fun.constvars.iter().chain(&c.fun.invars);
        let arg_avals: Vec<Aval> = operand_avals
            .skip(c.num_consts)
            .map(|v| c.fun.aval(*v).clone())
            .collect();
        let (this, user_jvp) = (self.clone(), c.jvp.clone());
        let jvp: FlatJvp = Arc::new(move |primals: Vec<Array>, tangents: Vec<Array>| {
            let n = primals.len();
            let avals: Vec<Aval> = arg_avals.iter().chain(&arg_avals).cloned().collect();
            let traced = trace_to_jaxpr(&avals, |mut vals| {
                let t = vals.split_off(n);
                with_mesh_axes(&this.mesh, &this.manual_axes, || user_jvp(vals, t))
            });
            let mut inputs = vec![Axes::new(); traced.consts.len()];
            inputs.extend(arg_axes.iter().chain(&arg_axes).cloned());
            let typed = this.retyped(&close_over_consts(traced.jaxpr), &inputs, &out_axes);
            let args: Vec<Array> = traced
                .consts
                .into_iter()
                .chain(primals)
                .chain(tangents)
                .collect();
            eval_jaxpr(&typed, &[], &args)
        });
        Arc::new(CustomJvpCall {
            name: c.name,
            fun: Arc::new(fun),
            num_consts: c.num_consts,
            jvp,
        })
    }

    /// The varying axes of the body's outputs that their specs do not split over: for each
    /// output, the first such axis (JAX's `check_vma` failure).
    pub fn unreplicated_outputs(&self) -> Vec<(usize, String)> {
        let inputs: Vec<BTreeSet<String>> = self.in_specs.iter().map(split_axes).collect();
        varying_axes(&self.jaxpr, &inputs, &self.manual_axes)
            .iter()
            .zip(&self.out_specs)
            .enumerate()
            .filter_map(|(i, (varying, spec))| {
                let split = split_axes(spec);
                varying
                    .iter()
                    .find(|a| !split.contains(*a))
                    .map(|a| (i, a.clone()))
            })
            .collect()
    }

    /// Is the body manual over every mesh axis?
    fn is_fully_manual(&self) -> bool {
        self.manual_axes.len() == self.mesh.axis_names().len()
    }

    fn sharding_list(&self, specs: &[PartitionSpec], avals: &[Aval]) -> String {
        let items: Vec<String> = specs
            .iter()
            .zip(avals)
            .map(|(s, a)| {
                format!(
                    "<@mesh, {}>",
                    sdy_dims(s, a.rank(), !self.is_fully_manual())
                )
            })
            .collect();
        format!("#sdy.sharding_per_value<[{}]>", items.join(", "))
    }
}

impl Primitive for ShardMapCall {
    /// Its `Debug` leaves the body out: eager calls key on the lowered program.
    fn eager_key(&self) -> Option<String> {
        None
    }
    fn name(&self) -> &'static str {
        "shard_map"
    }
    fn params_string(&self) -> String {
        let specs = |s: &[PartitionSpec]| {
            let items: Vec<String> = s.iter().map(ToString::to_string).collect();
            items.join(", ")
        };
        let manual = if self.is_fully_manual() {
            String::new()
        } else {
            format!(" axis_names=({})", self.manual_axes.join(", "))
        };
        format!(
            "mesh={} in_specs=({}) out_specs=({}){manual}",
            self.mesh,
            specs(&self.in_specs),
            specs(&self.out_specs)
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let local = self.jaxpr.in_avals();
        if inputs.len() != local.len() {
            return Err(format!(
                "the mapped function takes {} operands, {} were given",
                local.len(),
                inputs.len()
            ));
        }
        for (i, ((global, local), spec)) in
            inputs.iter().zip(&local).zip(&self.in_specs).enumerate()
        {
            let n = pieces(&self.mesh, spec, global.rank());
            let shape: Vec<usize> = global.shape.iter().zip(&n).map(|(s, k)| s / k).collect();
            if global.dtype != local.dtype || shape != local.shape {
                return Err(format!(
                    "operand {i} ({global}) split by {spec} is not the {local} the function was \
                     traced for"
                ));
            }
        }
        Ok(self
            .jaxpr
            .out_avals()
            .iter()
            .zip(&self.out_specs)
            .map(|(local, spec)| {
                let n = pieces(&self.mesh, spec, local.rank());
                let global: Vec<usize> = local.shape.iter().zip(&n).map(|(s, k)| s * k).collect();
                // Over explicit mesh axes the results are typed by `out_specs`.
                Aval {
                    sharding: type_sharding(&self.mesh, spec.dims(), global.len()),
                    ..local.with_shape(global)
                }
            })
            .collect())
    }
    /// The results are typed by `out_specs` (their explicit axes), whatever the operands'
    /// types: the body is manual over the mesh (see `abstract_eval`).
    fn sharding_rule(&self, _: &[Aval], outs: &[Aval]) -> SpecRule {
        Ok(outs.iter().map(dims_of).collect())
    }
    /// Forward mode: a `shard_map` of the body's JVP (tangents split as their primals are).
    fn jvp(
        &self,
        primals: &[Operand],
        tangents: &[Option<Array>],
        _: &[Array],
    ) -> Vec<Option<Array>> {
        let moving: Vec<usize> = (0..tangents.len())
            .filter(|&i| tangents[i].is_some())
            .collect();
        let local_in = self.jaxpr.in_avals();
        let mut avals = local_in.clone();
        avals.extend(moving.iter().map(|&i| local_in[i].clone()));
        let body = self.jaxpr.clone();
        let n = local_in.len();
        let closed = trace_to_jaxpr(&avals, |vals| {
            with_mesh_axes(&self.mesh, &self.manual_axes, || {
                let (p, t) = vals.split_at(n);
                let mut tans: Vec<Option<Array>> = vec![None; n];
                for (k, &i) in moving.iter().enumerate() {
                    tans[i] = Some(t[k].clone());
                }
                let (outs, touts) = jvp_jaxpr(&body, &[], p, &tans);
                let touts: Vec<Array> = touts
                    .into_iter()
                    .zip(&outs)
                    .map(|(t, o)| t.unwrap_or_else(|| Array::zeros(o.shape(), o.dtype())))
                    .collect();
                outs.into_iter().chain(touts).collect()
            })
        });
        let mut in_specs = self.in_specs.clone();
        in_specs.extend(moving.iter().map(|&i| self.in_specs[i].clone()));
        let mut out_specs = self.out_specs.clone();
        out_specs.extend(self.out_specs.iter().cloned());
        let mut operands: Vec<Operand> = Operand::to_arrays(primals)
            .into_iter()
            .map(Operand::from)
            .collect();
        operands.extend(
            moving
                .iter()
                .map(|&i| Operand::from(tangents[i].clone().expect("a moving tangent"))),
        );
        let outs = self.call_with(closed, in_specs, out_specs, operands);
        let n_out = self.out_specs.len();
        outs.into_iter().skip(n_out).map(Some).collect()
    }
    /// Reverse mode: a `shard_map` of the body's VJP, over the primals and the results'
    /// cotangents. The body is first given JAX's varying-axes types ([`ShardMapCall::typed`]),
    /// so a `psum` passes its cotangent back unsummed and a value used on every device has
    /// its cotangent summed over them.
    fn vjp(
        &self,
        primals: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        self.check_typable();
        let typed = self.typed();
        let flowing: Vec<usize> = (0..cts.len()).filter(|&i| cts[i].is_some()).collect();
        let local_in = self.jaxpr.in_avals();
        let local_out = self.jaxpr.out_avals();
        let mut avals = local_in.clone();
        avals.extend(flowing.iter().map(|&i| local_out[i].clone()));
        let n = local_in.len();
        let n_out = local_out.len();
        let closed = trace_to_jaxpr(&avals, |vals| {
            with_mesh_axes(&self.mesh, &self.manual_axes, || {
                let (p, c) = vals.split_at(n);
                let (_, linearized) = linearize_jaxpr(typed.clone(), &[], p);
                let mut cts_full: Vec<Option<Array>> = vec![None; n_out];
                for (k, &i) in flowing.iter().enumerate() {
                    cts_full[i] = Some(c[k].clone());
                }
                linearized
                    .backward(&cts_full)
                    .into_iter()
                    .zip(&local_in)
                    .map(|(g, aval)| g.unwrap_or_else(|| Array::zeros(&aval.shape, aval.dtype)))
                    .collect()
            })
        });
        let mut in_specs = self.in_specs.clone();
        in_specs.extend(flowing.iter().map(|&i| self.out_specs[i].clone()));
        let mut operands: Vec<Operand> = Operand::to_arrays(primals)
            .into_iter()
            .map(Operand::from)
            .collect();
        operands.extend(
            flowing
                .iter()
                .map(|&i| Operand::from(cts[i].clone().expect("a flowing cotangent"))),
        );
        let grads = self.call_with(closed, in_specs, self.in_specs.clone(), operands);
        grads
            .into_iter()
            .zip(wanted)
            .zip(&local_in)
            .map(|((g, &w), aval)| (w && aval.dtype.is_inexact()).then_some(g))
            .collect()
    }
    /// Reverse mode keeping the forward pass's residuals, as JAX's `shard_map` does: the
    /// forward call computes the typed body's results and, on each device, the values its
    /// backward pass needs; the backward call is a `shard_map` of the backward pass over those
    /// residuals and the results' cotangents. Each device's residuals leave the forward call
    /// with a leading dim of 1, assembled along it over the manual axes, so every device gets
    /// its own back; nothing is recomputed (the [`Primitive::vjp`] above recomputes the
    /// forward pass inside the backward call, for callers that have only the primals).
    fn linearize(&self, primals: &[Operand]) -> Option<(Vec<Array>, Backward)> {
        if untypable(&self.jaxpr, &self.manual_axes).is_some() {
            // Bound as it is: `vjp` names the equation if a cotangent does reach the call.
            return None;
        }
        let typed = self.typed();
        let local_in = self.jaxpr.in_avals();
        let local_out = self.jaxpr.out_avals();
        let n_out = local_out.len();
        // Cotangents flow into the inexact results only.
        let diff_out: Vec<usize> = (0..n_out)
            .filter(|&i| local_out[i].dtype.is_inexact())
            .collect();
        let diff_avals: Vec<Aval> = diff_out.iter().map(|&i| local_out[i].clone()).collect();
        let mut backward_jaxpr = None;
        let forward = trace_to_jaxpr(&local_in, |vals| {
            with_mesh_axes(&self.mesh, &self.manual_axes, || {
                let (outs, lin) = linearize_jaxpr(typed.clone(), &[], &vals);
                let bwd = trace_to_jaxpr(&diff_avals, |cts| {
                    let mut cts_full: Vec<Option<Array>> = vec![None; n_out];
                    for (&i, c) in diff_out.iter().zip(cts) {
                        cts_full[i] = Some(c);
                    }
                    lin.backward(&cts_full)
                        .into_iter()
                        .zip(&local_in)
                        .map(|(g, a)| g.unwrap_or_else(|| Array::zeros(&a.shape, a.dtype)))
                        .collect()
                });
                let mut result = outs;
                result.extend(bwd.consts.iter().map(|r| r.expand_dims(0)));
                backward_jaxpr = Some(bwd.jaxpr);
                result
            })
        });
        let bwd = Arc::new(backward_jaxpr.expect("traced"));
        let residual_avals: Vec<Aval> = forward.jaxpr.out_avals()[n_out..].to_vec();
        let per_device = PartitionSpec::new(vec![PartitionDim::Axes(self.manual_axes.clone())]);
        let mut out_specs = self.out_specs.clone();
        out_specs.extend(vec![per_device.clone(); residual_avals.len()]);
        let operands = Operand::to_arrays(primals)
            .into_iter()
            .map(Operand::from)
            .collect();
        let mut outs = self.call_with(forward, self.in_specs.clone(), out_specs, operands);
        let residuals = outs.split_off(n_out);
        let out_avals: Vec<Aval> = outs.iter().map(|o| o.aval().clone()).collect();
        let this = self.clone();
        let backward: Backward = Box::new(move |cts: &[Option<Array>], wanted: &[bool]| {
            let mut avals = residual_avals.clone();
            avals.extend(diff_out.iter().map(|&i| this.jaxpr.out_avals()[i].clone()));
            let closed = trace_to_jaxpr(&avals, |vals| {
                with_mesh_axes(&this.mesh, &this.manual_axes, || {
                    let (res, cts) = vals.split_at(residual_avals.len());
                    let res: Vec<Array> = res.iter().map(|r| r.squeeze([0])).collect();
                    eval_jaxpr(&bwd, &res, cts)
                })
            });
            let mut in_specs = vec![per_device.clone(); residuals.len()];
            in_specs.extend(diff_out.iter().map(|&i| this.out_specs[i].clone()));
            let mut operands: Vec<Operand> = residuals.iter().map(Operand::from).collect();
            operands.extend(diff_out.iter().map(|&i| {
                let a = &out_avals[i];
                Operand::from(
                    cts[i]
                        .clone()
                        .unwrap_or_else(|| Array::zeros(&a.shape, a.dtype)),
                )
            }));
            let grads = this.call_with(closed, in_specs, this.in_specs.clone(), operands);
            grads
                .into_iter()
                .zip(wanted)
                .zip(this.jaxpr.in_avals())
                .map(|((g, &w), aval)| (w && aval.dtype.is_inexact()).then_some(g))
                .collect()
        });
        Some((outs, backward))
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out_avals: &[Aval],
    ) -> Vec<String> {
        assert_eq!(
            cx.mesh(),
            Some(&self.mesh),
            "shard_map: lowered outside an SPMD program over its mesh; jaxrs::stablehlo shows \
             single-device programs only: read a jitted function's program with \
             f.site().last_stablehlo()"
        );
        let local_ins = self.jaxpr.in_avals();
        let local_outs = self.jaxpr.out_avals();
        let axes = &self.manual_axes;
        let jaxpr = self.jaxpr.clone();
        let region = cx.region_ending_with("sdy.return", &local_ins, |cx, args| {
            let outs = cx.in_manual(axes, |cx| cx.lower_inline(&jaxpr, args));
            outs.into_iter().zip(local_outs.iter().cloned()).collect()
        });
        let manual: Vec<String> = axes.iter().map(|a| format!("{a:?}")).collect();
        let props = format!(
            "in_shardings = {}, manual_axes = #sdy<manual_axes{{{}}}>, out_shardings = {}",
            self.sharding_list(&self.in_specs, in_avals),
            manual.join(", "),
            self.sharding_list(&self.out_specs, out_avals)
        );
        let operands: Vec<&str> = ins.iter().map(String::as_str).collect();
        let in_refs: Vec<&Aval> = in_avals.iter().collect();
        let out_refs: Vec<&Aval> = out_avals.iter().collect();
        cx.op_with_regions(
            "sdy.manual_computation",
            &operands,
            &in_refs,
            &props,
            &[region],
            &out_refs,
        )
    }
    /// Run outside a `jit` (by `grad`'s forward pass, say): the operands are laid out over
    /// the mesh as the specs say, then the call runs as an SPMD program over their mesh.
    fn eager(&self, inputs: &[Operand]) -> Option<Vec<Array>> {
        let arrays = Operand::to_arrays(inputs);
        let targets: Vec<NamedSharding> = self
            .in_specs
            .iter()
            .map(|spec| {
                NamedSharding::new(self.mesh.clone(), spec.clone()).expect("specs fit the mesh")
            })
            .collect();
        let placed = arrays
            .iter()
            .zip(&targets)
            .all(|(a, t)| a.is_laid_out_as(t));
        if placed && !arrays.is_empty() {
            return None;
        }
        let laid: Vec<Operand> = arrays
            .iter()
            .zip(targets)
            .map(|(a, t)| Operand::from(device_put(a, t)))
            .collect();
        Some(bind(Arc::new(self.clone()), &laid))
    }
    /// vmap, as JAX's rule: the batch dim is moved to the front of every batched operand
    /// and added to its spec as a dimension no mesh axis splits; the body, batched, runs
    /// on every device over its whole piece of the batch, and every result is batched
    /// along its (likewise unsplit) leading dimension.
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // The operands, batched along 0; the body batched on the local pieces of them.
        let ops: Vec<Array> = args
            .iter()
            .zip(dims)
            .map(|(a, d)| match d {
                Some(d) => moveaxis(&bound_array(a), *d, 0),
                None => bound_array(a).into_owned(),
            })
            .collect();
        let in_dims: Vec<Option<usize>> = dims.iter().map(|d| d.map(|_| 0)).collect();
        let local: Vec<Aval> = self
            .jaxpr
            .in_avals()
            .iter()
            .zip(&in_dims)
            .map(|(aval, d)| match d {
                Some(_) => {
                    let mut shape = vec![axis_size];
                    shape.extend(&aval.shape);
                    aval.with_shape(shape)
                }
                None => aval.clone(),
            })
            .collect();
        let closed = trace_to_jaxpr(&local, |tracers| {
            with_mesh_axes(&self.mesh, &self.manual_axes, || {
                let (outs, out_dims) = batch_eval(&self.jaxpr, &tracers, &in_dims, axis_size);
                outs.iter()
                    .zip(out_dims)
                    .map(|(o, d)| move_bdim(&Operand::from(o), d, 0, axis_size))
                    .collect()
            })
        });
        let unsplit_first = |spec: &PartitionSpec| {
            let mut d = vec![PartitionDim::Replicated];
            d.extend(spec.dims().iter().cloned());
            PartitionSpec::new(d)
        };
        let in_specs: Vec<PartitionSpec> = self
            .in_specs
            .iter()
            .zip(&in_dims)
            .map(|(spec, d)| match d {
                Some(_) => unsplit_first(spec),
                None => spec.clone(),
            })
            .collect();
        let out_specs: Vec<PartitionSpec> = self.out_specs.iter().map(unsplit_first).collect();
        let n_out = out_specs.len();
        let operands: Vec<Operand> = ops.iter().map(Operand::from).collect();
        let outs = self.call_with(closed, in_specs, out_specs, operands);
        (outs, vec![Some(0); n_out])
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        crate::interpreters::batching::jaxpr_uses_named_axis(&self.jaxpr, name)
            && !self.manual_axes.iter().any(|a| a == name)
    }
    as_any!();
}
