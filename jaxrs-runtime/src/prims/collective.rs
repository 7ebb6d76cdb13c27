//! Named-axis collectives: `psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `psum_scatter`,
//! `ppermute`, `axis_index` (JAX's `jax.lax` parallel operators).
//!
//! A collective names an axis that an enclosing `vmap(axis_name = ..)` or `pmap` put in
//! scope ([`crate::core::axes`]); binding looks the name up and records it with the axis size
//! in the equation. What the equation then means depends on who runs it:
//!
//! - the batching pass of the vmap that maps that axis turns it into an operation across the
//!   batch dim (`psum` sums over it, `axis_index` is an iota over it, `ppermute` gathers
//!   examples); the batching pass of another axis keeps the collective, applied to the whole
//!   batch;
//! - lowering (pmap: one replica per device, `num_replicas` = the axis size) emits the
//!   StableHLO collective over the replica group `[[0, .., n-1]]`.
//!
//! The differentiation rules follow JAX's: every collective but `pmax`/`pmin` is linear;
//! `psum` transposes to `psum` (JAX treats it as a sum followed by a broadcast), `all_gather`
//! to `psum_scatter` and back, `ppermute` to the inverse permutation. JAX has no rule for
//! `pmax`/`pmin`; here they differentiate like `reduce_max`: through the selected elements,
//! split evenly between ties.

use super::arity;
use super::reduce::{combiner_region, Reduce, ReduceOp};
use crate::aval::{normalize_axis, Aval};
use crate::core::array::Array;
use crate::core::axes::{self, NamedAxis};
use crate::core::ir::Literal;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::trace::{bind1, with_location, At, Operand};
use crate::dtype::DType;
use crate::interpreters::ad::full_like_aval;
use crate::interpreters::batching::{self, bound_array, move_bdim};
use crate::tree::{tree_map, Tree};
use std::panic::Location;

/// The axis called `name`, or a panic at the user's line naming the op, the name and the
/// axes in scope.
#[track_caller]
fn named_axis(op: &str, name: &str) -> NamedAxis {
    if let Some(axis) = axes::lookup(name) {
        return axis;
    }
    let scope = axes::names_in_scope();
    let in_scope = if scope.is_empty() {
        "no named axis is in scope (collectives run inside vmap_named, \
         #[vmap(axis_name = ..)] or pmap, which name their axis)"
            .to_string()
    } else {
        let names: Vec<String> = scope.iter().map(|n| format!("\"{n}\"")).collect();
        format!("the named axes in scope are {}", names.join(", "))
    };
    panic!(
        "{op}: unknown axis name \"{name}\"; {in_scope} {}",
        At::line(Location::caller())
    )
}

/// Is the running batching pass the one mapping `axis`?
fn batching_over(axis: &NamedAxis, axis_size: usize) -> bool {
    let over = batching::axis_name().as_deref() == Some(axis.name.as_str());
    if over {
        assert_eq!(
            axis.size, axis_size,
            "vmap: the collective over \"{}\" was traced for {} examples, but the batch has {} \
             (a bug in jaxrs)",
            axis.name, axis.size, axis_size
        );
    }
    over
}

/// `dense<[[0, 1, .., n-1]]> : tensor<1xnxi64>`: every replica in one group.
fn replica_groups(axis: &NamedAxis) -> String {
    let ids: Vec<String> = (0..axis.size).map(|i| i.to_string()).collect();
    format!(
        "replica_groups = dense<[[{}]]> : tensor<1x{}xi64>",
        ids.join(", "),
        axis.size
    )
}

/// The attributes saying which devices a collective over `axis` spans: inside a
/// `shard_map` body (manual over that mesh axis), the partitions along it, addressed by global
/// device ids (`with_global_ids`) over a channel of their own, as JAX lowers them; in a pmap's
/// replica program, every replica.
fn group_attrs(cx: &mut LowerCtx, axis: &NamedAxis, with_global_ids: bool) -> String {
    let Some(manual) = cx.manual_axis(&axis.name) else {
        return replica_groups(axis);
    };
    let rows: Vec<String> = manual
        .groups
        .iter()
        .map(|g| {
            let ids: Vec<String> = g.iter().map(usize::to_string).collect();
            format!("[{}]", ids.join(", "))
        })
        .collect();
    let ids = if with_global_ids {
        ", use_global_device_ids"
    } else {
        ""
    };
    format!(
        "{}, replica_groups = dense<[{}]> : tensor<{}x{}xi64>{ids}",
        cx.channel_handle(),
        rows.join(", "),
        manual.groups.len(),
        manual.size
    )
}

fn axis_params(axis: &NamedAxis) -> String {
    format!("axis_name={} axis_size={}", axis.name, axis.size)
}

/// `x` with its batch dim moved to 0 (for a collective over another axis, whose per-example
/// dims then shift by one).
fn batch_first(x: &Operand, dim: Option<usize>, axis_size: usize) -> Array {
    move_bdim(x, dim, 0, axis_size)
}

/// An all-reduce: `psum`, `pmax` or `pmin` over one named axis.
#[derive(Debug, Clone)]
pub struct AllReduce {
    pub op: ReduceOp,
    pub axis: NamedAxis,
    /// In a `shard_map` body being differentiated (JAX's `psum_invariant`): the result is the
    /// same on every device along the axis, and so is its cotangent, which passes back
    /// unsummed (a pmap's replicas each hold their own cotangent, which is summed).
    pub invariant: bool,
}

impl AllReduce {
    fn with(&self, op: ReduceOp) -> AllReduce {
        AllReduce {
            op,
            axis: self.axis.clone(),
            invariant: self.invariant,
        }
    }
}

impl Primitive for AllReduce {
    fn name(&self) -> &'static str {
        match self.op {
            ReduceOp::Sum => "psum",
            ReduceOp::Max => "pmax",
            ReduceOp::Min => "pmin",
            _ => unreachable!("all-reduce of {:?}", self.op),
        }
    }
    fn params_string(&self) -> String {
        axis_params(&self.axis)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        Ok(vec![inputs[0].clone()])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let t = t[0].as_ref().expect("a tangent");
        match self.op {
            ReduceOp::Sum => vec![Some(bind1(self.clone(), &[Operand::from(t)]))],
            _ => {
                let (location, counts) = self.selected(&p[0].to_array(), &outs[0]);
                let sum = self.with(ReduceOp::Sum);
                let picked = bind1(sum, &[Operand::from(&(t * &location))]);
                vec![Some(picked / counts)]
            }
        }
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let ct = cts[0].as_ref().expect("a cotangent");
        let summed = if self.invariant {
            ct.clone()
        } else {
            bind1(self.with(ReduceOp::Sum), &[Operand::from(ct)])
        };
        match self.op {
            ReduceOp::Sum => vec![Some(summed)],
            _ => {
                let (location, counts) = self.selected(&p[0].to_array(), &outs[0]);
                vec![Some(summed * location / counts)]
            }
        }
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let region = combiner_region(cx, self.op, in_avals[0].dtype);
        let groups = group_attrs(cx, &self.axis, true);
        cx.op_with_regions(
            "stablehlo.all_reduce",
            &[&ins[0]],
            &[&in_avals[0]],
            &groups,
            &[region],
            &[&out[0]],
        )
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        if !batching_over(&self.axis, axis_size) {
            return (
                vec![bind1(self.clone(), &[args[0].borrowed()])],
                vec![dims[0]],
            );
        }
        // Over the batch axis: every example sees the reduction over the batch.
        let out = match (dims[0], self.op) {
            (Some(d), op) => bind1(Reduce { op, axes: vec![d] }, &[args[0].borrowed()]),
            (None, ReduceOp::Sum) => {
                let x = bound_array(&args[0]);
                full_like_aval(x.aval(), axis_size as f64) * &*x
            }
            (None, _) => bound_array(&args[0]).into_owned(),
        };
        (vec![out], vec![None])
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        self.axis.name == name
    }
    as_any!();
}

impl AllReduce {
    /// Where `x` equals the reduced extreme `y` (as `x`'s dtype), and how many members hold
    /// it: the derivative of `pmax`/`pmin` is split evenly between them.
    fn selected(&self, x: &Array, y: &Array) -> (Array, Array) {
        let location = x.eq(y).astype(x.dtype());
        let counts = bind1(self.with(ReduceOp::Sum), &[Operand::from(&location)]);
        (location, counts)
    }
}

/// `all_gather`: every member's `x`, stacked along `dim` (or concatenated, `tiled`).
#[derive(Debug, Clone)]
pub struct AllGather {
    pub axis: NamedAxis,
    pub dim: usize,
    pub tiled: bool,
}

impl Primitive for AllGather {
    fn name(&self) -> &'static str {
        "all_gather"
    }
    fn params_string(&self) -> String {
        format!(
            "all_gather_dimension={} {} tiled={}",
            self.dim,
            axis_params(&self.axis),
            self.tiled
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let mut shape = a.shape.clone();
        let n = self.axis.size;
        if self.tiled {
            if self.dim >= a.rank() {
                return Err(format!(
                    "axis {} is out of range for rank {}",
                    self.dim,
                    a.rank()
                ));
            }
            shape[self.dim] *= n;
        } else {
            if self.dim > a.rank() {
                return Err(format!(
                    "axis {} is out of range: the gathered axis goes at 0..={}",
                    self.dim,
                    a.rank()
                ));
            }
            shape.insert(self.dim, n);
        }
        Ok(vec![a.with_shape(shape)])
    }
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let t = t[0].as_ref().expect("a tangent");
        vec![Some(bind1(self.clone(), &[Operand::from(t)]))]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let ct = cts[0].as_ref().expect("a cotangent");
        let scatter = ReduceScatter {
            axis: self.axis.clone(),
            dim: self.dim,
            tiled: self.tiled,
        };
        vec![Some(bind1(scatter, &[Operand::from(ct)]))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        // Untiled: gather a new axis of length 1 per member.
        let (x, x_aval) = if self.tiled {
            (ins[0].clone(), in_avals[0].clone())
        } else {
            let mut shape = in_avals[0].shape.clone();
            shape.insert(self.dim, 1);
            let aval = in_avals[0].with_shape(shape);
            let r = cx.op1("stablehlo.reshape", &[&ins[0]], &[&in_avals[0]], "", &aval);
            (r, aval)
        };
        let props = format!(
            "all_gather_dim = {} : i64, {}",
            self.dim,
            group_attrs(cx, &self.axis, true)
        );
        vec![cx.op1("stablehlo.all_gather", &[&x], &[&x_aval], &props, &out[0])]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        if !batching_over(&self.axis, axis_size) {
            let x = batch_first(&args[0], dims[0], axis_size);
            let prim = AllGather {
                dim: self.dim + 1,
                ..self.clone()
            };
            return (vec![bind1(prim, &[Operand::from(&x)])], vec![Some(0)]);
        }
        // The batch is the gathered axis: every example sees all of it.
        let y = move_bdim(&args[0], dims[0], self.dim, axis_size);
        let out = if self.tiled {
            let mut shape = y.shape().to_vec();
            let merged = shape.remove(self.dim) * shape[self.dim];
            shape[self.dim] = merged;
            y.reshape(shape)
        } else {
            y
        };
        (vec![out], vec![None])
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        self.axis.name == name
    }
    as_any!();
}

/// `psum_scatter` (JAX's `reduce_scatter`): the sum over the members, member `i` keeping
/// block `i` of dimension `dim` (untiled: element `i`, the dimension dropped).
#[derive(Debug, Clone)]
pub struct ReduceScatter {
    pub axis: NamedAxis,
    pub dim: usize,
    pub tiled: bool,
}

impl Primitive for ReduceScatter {
    fn name(&self) -> &'static str {
        "reduce_scatter"
    }
    fn params_string(&self) -> String {
        format!(
            "{} scatter_dimension={} tiled={}",
            axis_params(&self.axis),
            self.dim,
            self.tiled
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let n = self.axis.size;
        if self.dim >= a.rank() {
            return Err(format!(
                "scatter_dimension {} is out of range for rank {}",
                self.dim,
                a.rank()
            ));
        }
        let mut shape = a.shape.clone();
        let len = shape[self.dim];
        if self.tiled {
            if !len.is_multiple_of(n) {
                return Err(format!(
                    "scatter dimension {} has size {len}, which the {n} members of axis \"{}\" \
                     cannot split evenly",
                    self.dim, self.axis.name
                ));
            }
            shape[self.dim] = len / n;
        } else {
            if len != n {
                return Err(format!(
                    "scatter dimension {} has size {len}, but untiled it must have one element \
                     per member of axis \"{}\" ({n})",
                    self.dim, self.axis.name
                ));
            }
            shape.remove(self.dim);
        }
        Ok(vec![a.with_shape(shape)])
    }
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let t = t[0].as_ref().expect("a tangent");
        vec![Some(bind1(self.clone(), &[Operand::from(t)]))]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let ct = cts[0].as_ref().expect("a cotangent");
        let gather = AllGather {
            axis: self.axis.clone(),
            dim: self.dim,
            tiled: self.tiled,
        };
        vec![Some(bind1(gather, &[Operand::from(ct)]))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let a = &in_avals[0];
        let region = combiner_region(cx, ReduceOp::Sum, a.dtype);
        // Untiled: scatter blocks of length 1, then drop that axis.
        let mut block_shape = a.shape.clone();
        block_shape[self.dim] /= self.axis.size;
        let block = a.with_shape(block_shape);
        let props = format!(
            "{}, scatter_dimension = {} : i64",
            group_attrs(cx, &self.axis, true),
            self.dim
        );
        let r = cx
            .op_with_regions(
                "stablehlo.reduce_scatter",
                &[&ins[0]],
                &[a],
                &props,
                &[region],
                &[&block],
            )
            .remove(0);
        if self.tiled {
            vec![r]
        } else {
            vec![cx.op1("stablehlo.reshape", &[&r], &[&block], "", &out[0])]
        }
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        if !batching_over(&self.axis, axis_size) {
            let x = batch_first(&args[0], dims[0], axis_size);
            let prim = ReduceScatter {
                dim: self.dim + 1,
                ..self.clone()
            };
            return (vec![bind1(prim, &[Operand::from(&x)])], vec![Some(0)]);
        }
        // The sum over the batch, whose scatter dimension (split into one block per member,
        // tiled) is then the batch dim.
        let summed = match dims[0] {
            Some(d) => bind1(
                Reduce {
                    op: ReduceOp::Sum,
                    axes: vec![d],
                },
                &[args[0].borrowed()],
            ),
            None => {
                let x = bound_array(&args[0]);
                full_like_aval(x.aval(), axis_size as f64) * &*x
            }
        };
        let out = if self.tiled {
            let mut shape = summed.shape().to_vec();
            let block = shape[self.dim] / axis_size;
            shape[self.dim] = block;
            shape.insert(self.dim, axis_size);
            summed.reshape(shape)
        } else {
            summed
        };
        (vec![out], vec![Some(self.dim)])
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        self.axis.name == name
    }
    as_any!();
}

/// `ppermute`: member `dst` receives `x` of member `src` for each `(src, dst)` pair; a member
/// no pair sends to receives zeros.
#[derive(Debug, Clone)]
pub struct Ppermute {
    pub axis: NamedAxis,
    pub perm: Vec<(usize, usize)>,
}

impl Primitive for Ppermute {
    fn name(&self) -> &'static str {
        "ppermute"
    }
    fn params_string(&self) -> String {
        let pairs: Vec<String> = self
            .perm
            .iter()
            .map(|(s, d)| format!("({s}, {d})"))
            .collect();
        format!("{} perm=({})", axis_params(&self.axis), pairs.join(", "))
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        Ok(vec![inputs[0].clone()])
    }
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let t = t[0].as_ref().expect("a tangent");
        vec![Some(bind1(self.clone(), &[Operand::from(t)]))]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let ct = cts[0].as_ref().expect("a cotangent");
        let inverse = Ppermute {
            axis: self.axis.clone(),
            perm: self.perm.iter().map(|&(s, d)| (d, s)).collect(),
        };
        vec![Some(bind1(inverse, &[Operand::from(ct)]))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        if self.perm.is_empty() {
            return vec![cx.splat(0.0, &out[0])];
        }
        // Inside a shard_map, each group of partitions along the axis permutes the same way;
        // in a pmap, the replicas are the members.
        let (groups, channel) = match cx.manual_axis(&self.axis.name) {
            Some(manual) => (manual.groups, format!("{}, ", cx.channel_handle())),
            None => (vec![(0..self.axis.size).collect()], String::new()),
        };
        let pairs: Vec<String> = groups
            .iter()
            .flat_map(|g| {
                self.perm
                    .iter()
                    .map(move |&(s, d)| format!("[{}, {}]", g[s], g[d]))
            })
            .collect();
        let props = format!(
            "{channel}source_target_pairs = dense<[{}]> : tensor<{}x2xi64>",
            pairs.join(", "),
            pairs.len()
        );
        vec![cx.op1(
            "stablehlo.collective_permute",
            &[&ins[0]],
            &[&in_avals[0]],
            &props,
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        if !batching_over(&self.axis, axis_size) {
            return (
                vec![bind1(self.clone(), &[args[0].borrowed()])],
                vec![dims[0]],
            );
        }
        let mut source = vec![None; axis_size];
        for &(s, d) in &self.perm {
            source[d] = Some(s);
        }
        let everyone_receives = source.iter().all(Option::is_some);
        if dims[0].is_none() && everyone_receives {
            // The same value everywhere, permuted: unchanged.
            return (vec![bound_array(&args[0]).into_owned()], vec![None]);
        }
        // Example `dst` takes example `src` of the batch.
        let d = dims[0].unwrap_or(0);
        let x = move_bdim(&args[0], dims[0], d, axis_size);
        let index: Vec<i32> = source.iter().map(|s| s.unwrap_or(0) as i32).collect();
        let taken = x.take(&Array::from_vec(index, &[axis_size]), d as i64);
        let out = if everyone_receives {
            taken
        } else {
            let receives: Vec<bool> = source.iter().map(Option::is_some).collect();
            let mask =
                Array::from_vec(receives, &[axis_size]).broadcast_in_dim(taken.shape(), &[d]);
            crate::ops::where_(&mask, &taken, 0.0)
        };
        (vec![out], vec![Some(d)])
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        self.axis.name == name
    }
    as_any!();
}

/// `all_to_all` (JAX's `all_to_all_p`, the tiled form every call reduces to): each member
/// splits its `x` along `split` into one block per member and sends block `j` to member `j`,
/// which concatenates the blocks it receives along `concat`, in the senders' order.
/// `x.shape[split]` is divided by the axis size and `x.shape[concat]` multiplied by it.
#[derive(Debug, Clone)]
pub struct AllToAll {
    pub axis: NamedAxis,
    pub split: usize,
    pub concat: usize,
}

impl Primitive for AllToAll {
    fn name(&self) -> &'static str {
        "all_to_all"
    }
    fn params_string(&self) -> String {
        format!(
            "{} split_axis={} concat_axis={}",
            axis_params(&self.axis),
            self.split,
            self.concat
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let n = self.axis.size;
        if self.split >= a.rank() || self.concat >= a.rank() {
            return Err(format!(
                "split_axis {} or concat_axis {} is out of range for rank {}",
                self.split,
                self.concat,
                a.rank()
            ));
        }
        let mut shape = a.shape.clone();
        if !shape[self.split].is_multiple_of(n) {
            return Err(format!(
                "split_axis {} has size {}, which the {n} members of axis \"{}\" cannot split \
                 evenly",
                self.split, shape[self.split], self.axis.name
            ));
        }
        shape[self.split] /= n;
        shape[self.concat] *= n;
        Ok(vec![a.with_shape(shape)])
    }
    /// Linear: the same exchange of the tangent.
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let t = t[0].as_ref().expect("a tangent");
        vec![Some(bind1(self.clone(), &[Operand::from(t)]))]
    }
    /// The transpose sends every block back: an `all_to_all` with the split and concat
    /// axes swapped.
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let ct = cts[0].as_ref().expect("a cotangent");
        let back = AllToAll {
            axis: self.axis.clone(),
            split: self.concat,
            concat: self.split,
        };
        vec![Some(bind1(back, &[Operand::from(ct)]))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        if self.axis.size == 1 {
            return vec![ins[0].clone()];
        }
        // Inside a shard_map: partition ids along the axis over a channel (no global device
        // ids: with a channel, all_to_all's groups are partitions); in a pmap, the replicas.
        let props = format!(
            "split_dimension = {} : i64, concat_dimension = {} : i64, split_count = {} : i64, {}",
            self.split,
            self.concat,
            self.axis.size,
            group_attrs(cx, &self.axis, false)
        );
        vec![cx.op1(
            "stablehlo.all_to_all",
            &[&ins[0]],
            &[&in_avals[0]],
            &props,
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        if !batching_over(&self.axis, axis_size) {
            // Over another axis: the exchange of the whole batch, its axes shifted past the
            // batch dim.
            let Some(d) = dims[0] else {
                return (vec![bind1(self.clone(), &[args[0].borrowed()])], vec![None]);
            };
            let prim = AllToAll {
                axis: self.axis.clone(),
                split: self.split + usize::from(d <= self.split),
                concat: self.concat + usize::from(d <= self.concat),
            };
            return (vec![bind1(prim, &[args[0].borrowed()])], vec![Some(d)]);
        }
        // Over the batch axis: example `j` gets block `j` of every example `i`'s split axis,
        // concatenated along its concat axis in the order of `i`. With the batch (`i`) first
        // and the split axis cut into (`j`, block), move `j` to the front and `i` before the
        // concat axis (`block` itself when the two axes are one), then merge `i` into it.
        let x = move_bdim(&args[0], dims[0], 0, axis_size);
        let (s, c, n) = (self.split, self.concat, axis_size);
        let example = &x.shape()[1..];
        let mut cut = vec![n];
        for (k, &len) in example.iter().enumerate() {
            if k == s {
                cut.extend([n, len / n]);
            } else {
                cut.push(len);
            }
        }
        // Where example axis `k` lies in `cut` (the split axis: its block).
        let at = |k: usize| if k < s { 1 + k } else { 2 + k };
        let mut perm = vec![1 + s];
        let mut shape = vec![n];
        for (k, &len) in example.iter().enumerate() {
            let len = if k == s { len / n } else { len };
            if k == c {
                perm.extend([0, at(k)]);
                shape.push(n * len);
            } else {
                perm.push(at(k));
                shape.push(len);
            }
        }
        let out = x.reshape(cut).transpose(perm).reshape(shape);
        (vec![out], vec![Some(0)])
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        self.axis.name == name
    }
    as_any!();
}

/// `axis_index`: this member's position along the axis, an `i32` scalar.
#[derive(Debug, Clone)]
pub struct AxisIndex {
    pub axis: NamedAxis,
}

impl Primitive for AxisIndex {
    fn name(&self) -> &'static str {
        "axis_index"
    }
    fn params_string(&self) -> String {
        axis_params(&self.axis)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 0)?;
        Ok(vec![Aval::scalar(DType::I32)])
    }
    fn jvp(&self, _: &[Operand], _: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![None]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        _: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        vec![]
    }
    fn lower(&self, cx: &mut LowerCtx, _: &[String], _: &[Aval], out: &[Aval]) -> Vec<String> {
        let id_aval = Aval::scalar(DType::U32);
        let Some(manual) = cx.manual_axis(&self.axis.name) else {
            // One replica per member of the axis (pmap), so the replica id is the index.
            let id = cx.op1("stablehlo.replica_id", &[], &[], "", &id_aval);
            return vec![cx.op1("stablehlo.convert", &[&id], &[&id_aval], "", &out[0])];
        };
        // Inside a shard_map: the partition's position along the mesh axis.
        let id = cx.partition_id();
        let stride = cx.literal(&Literal::from_f64(manual.stride as f64, DType::U32, false));
        let size = cx.literal(&Literal::from_f64(manual.size as f64, DType::U32, false));
        let avals = [&id_aval, &id_aval];
        let row = cx.op1("stablehlo.divide", &[&id, &stride], &avals, "", &id_aval);
        let index = cx.op1("stablehlo.remainder", &[&row, &size], &avals, "", &id_aval);
        vec![cx.op1("stablehlo.convert", &[&index], &[&id_aval], "", &out[0])]
    }
    fn batch(
        &self,
        _: &[Operand],
        _: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        if !batching_over(&self.axis, axis_size) {
            return (vec![bind1(self.clone(), &[])], vec![None]);
        }
        (
            vec![Array::iota(DType::I32, &[axis_size], 0)],
            vec![Some(0)],
        )
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        self.axis.name == name
    }
    as_any!();
}

/// `pvary`: the identity on values, marking a value the same on every device along `axes`
/// as one that may vary along them (JAX's implicit cast where such a value meets a varying
/// one in a `shard_map` body). Its transpose sums the cotangent over the axes: every device
/// used the one value.
#[derive(Debug, Clone)]
pub struct Pvary {
    pub axes: Vec<NamedAxis>,
}

impl Primitive for Pvary {
    fn name(&self) -> &'static str {
        "pvary"
    }
    fn params_string(&self) -> String {
        let names: Vec<&str> = self.axes.iter().map(|a| a.name.as_str()).collect();
        format!("axes=({})", names.join(", "))
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        Ok(vec![inputs[0].clone()])
    }
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let t = t[0].as_ref().expect("a tangent");
        vec![Some(bind1(self.clone(), &[Operand::from(t)]))]
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let mut ct = cts[0].clone().expect("a cotangent");
        for axis in &self.axes {
            let psum = AllReduce {
                op: ReduceOp::Sum,
                axis: axis.clone(),
                invariant: true,
            };
            ct = bind1(psum, &[Operand::from(&ct)]);
        }
        vec![Some(ct)]
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
        (
            vec![bind1(self.clone(), &[args[0].borrowed()])],
            vec![dims[0]],
        )
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        self.axes.iter().any(|a| a.name == name)
    }
    as_any!();
}

// The user API: `jax.lax`'s functions, over trees (a tree of gradients is reduced leaf by
// leaf, as `jax.lax.psum(grads, "i")`).

/// Binds `prim(axis)` on every leaf, each equation attributed to the user's line.
#[track_caller]
fn each_leaf<T: Tree, P: Primitive>(x: &T, prim: impl Fn() -> P) -> T {
    with_location(Location::caller(), || {
        tree_map(x, |leaf| bind1(prim(), &[Operand::from(leaf)]))
    })
}

/// The sum of `x` over the members of the named axis `axis_name` (the examples of a
/// [`vmap_named`](crate::vmap_named) batch, or the devices of a pmap): every member gets
/// the total. `x` is any tree of arrays (gradients, say), reduced leaf by leaf; a `bool`
/// leaf is summed as `i32` (JAX's rule). Like `jax.lax.psum(x, axis_name)`.
///
/// An axis name that no enclosing vmap or pmap defines stops with a message naming it and
/// the axes in scope, at the line that called `psum`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let total = vmap_named(|x: Array| psum(&x, "i"), 0, 0, "i");
/// let y = total(Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]));
/// assert_eq!(y.to_vec::<f32>(), vec![10.0; 4]);
/// ```
#[track_caller]
pub fn psum<T: Tree>(x: &T, axis_name: &str) -> T {
    all_reduce(x, axis_name, ReduceOp::Sum, "psum")
}

/// The mean of `x` over the members of the named axis (see [`psum`]): `psum(x) / size`,
/// like `jax.lax.pmean`. Data-parallel training averages its gradients with it.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let centered = vmap_named(|x: Array| &x - pmean(&x, "i"), 0, 0, "i");
/// let y = centered(Array::from_vec(vec![1.0f32, 2.0, 6.0], &[3]));
/// assert_eq!(y.to_vec::<f32>(), vec![-2.0, -1.0, 3.0]);
/// ```
#[track_caller]
pub fn pmean<T: Tree>(x: &T, axis_name: &str) -> T {
    let size = named_axis("pmean", axis_name).size as f64;
    let summed = all_reduce(x, axis_name, ReduceOp::Sum, "pmean");
    tree_map(&summed, |s| s / size)
}

/// The elementwise maximum of `x` over the members of the named axis (see [`psum`]), like
/// `jax.lax.pmax`. Its derivative goes to the members holding the maximum, split evenly
/// between ties (JAX has no derivative for `pmax`; this is `reduce_max`'s).
///
/// ```
/// use jaxrs::prelude::*;
///
/// let top = vmap_named(|x: Array| pmax(&x, "i"), 0, 0, "i");
/// let y = top(Array::from_vec(vec![1.0f32, 5.0, 2.0], &[3]));
/// assert_eq!(y.to_vec::<f32>(), vec![5.0; 3]);
/// ```
#[track_caller]
pub fn pmax<T: Tree>(x: &T, axis_name: &str) -> T {
    all_reduce(x, axis_name, ReduceOp::Max, "pmax")
}

/// The elementwise minimum of `x` over the members of the named axis (see [`pmax`]), like
/// `jax.lax.pmin`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let bottom = vmap_named(|x: Array| pmin(&x, "i"), 0, 0, "i");
/// let y = bottom(Array::from_vec(vec![3.0f32, 5.0, 2.0], &[3]));
/// assert_eq!(y.to_vec::<f32>(), vec![2.0; 3]);
/// ```
#[track_caller]
pub fn pmin<T: Tree>(x: &T, axis_name: &str) -> T {
    all_reduce(x, axis_name, ReduceOp::Min, "pmin")
}

#[track_caller]
fn all_reduce<T: Tree>(x: &T, axis_name: &str, op: ReduceOp, what: &str) -> T {
    let axis = named_axis(what, axis_name);
    let loc = Location::caller();
    with_location(loc, || {
        tree_map(x, |leaf| {
            let prim = AllReduce {
                op,
                axis: axis.clone(),
                invariant: false,
            };
            if op == ReduceOp::Sum && leaf.dtype() == DType::Bool {
                bind1(prim, &[Operand::from(&leaf.astype(DType::I32))])
            } else {
                bind1(prim, &[Operand::from(leaf)])
            }
        })
    })
}

/// Every member's `x`, stacked along a new axis `axis` (or, `tiled`, concatenated along
/// the existing axis `axis`), like `jax.lax.all_gather(x, axis_name, axis=axis,
/// tiled=tiled)`. A negative `axis` counts from the end. `x` is any tree of arrays.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let everyone = vmap_named(|x: Array| all_gather(&x, "i", 0, false), 0, 0, "i");
/// let y = everyone(Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]));
/// assert_eq!(y.shape(), &[3, 3]); // each of the 3 examples sees all 3 values
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
/// ```
#[track_caller]
pub fn all_gather<T: Tree>(x: &T, axis_name: &str, axis: i64, tiled: bool) -> T {
    let named = named_axis("all_gather", axis_name);
    let loc = Location::caller();
    with_location(loc, || {
        tree_map(x, |leaf| {
            let rank = leaf.rank() + usize::from(!tiled);
            let Some(dim) = normalize_axis(axis, rank) else {
                panic!(
                    "all_gather: axis {axis} is out of range for {} ({}) {}",
                    leaf.aval(),
                    if tiled {
                        "tiled, it gathers along an existing axis"
                    } else {
                        "untiled, the gathered axis goes at 0..=rank"
                    },
                    At::line(loc)
                )
            };
            let prim = AllGather {
                axis: named.clone(),
                dim,
                tiled,
            };
            bind1(prim, &[Operand::from(leaf)])
        })
    })
}

/// The sum over the members of the named axis, scattered: member `i` keeps block `i` of
/// dimension `scatter_dimension` (untiled, that dimension has one element per member and is
/// dropped; tiled, it is split into equal blocks). Like `jax.lax.psum_scatter`; the
/// transpose of [`all_gather`].
///
/// ```
/// use jaxrs::prelude::*;
///
/// // Example i keeps element i of the sum of the rows.
/// let scatter = vmap_named(|x: Array| psum_scatter(&x, "i", 0, false), 0, 0, "i");
/// let rows = Array::from_vec(vec![1.0f32, 2.0, 10.0, 20.0], &[2, 2]);
/// assert_eq!(scatter(rows).to_vec::<f32>(), vec![11.0, 22.0]);
/// ```
#[track_caller]
pub fn psum_scatter<T: Tree>(x: &T, axis_name: &str, scatter_dimension: i64, tiled: bool) -> T {
    let named = named_axis("psum_scatter", axis_name);
    let loc = Location::caller();
    with_location(loc, || {
        tree_map(x, |leaf| {
            let Some(dim) = normalize_axis(scatter_dimension, leaf.rank()) else {
                panic!(
                    "psum_scatter: scatter_dimension {scatter_dimension} is out of range for {} {}",
                    leaf.aval(),
                    At::line(loc)
                )
            };
            let prim = ReduceScatter {
                axis: named.clone(),
                dim,
                tiled,
            };
            bind1(prim, &[Operand::from(leaf)])
        })
    })
}

/// Sends `x` between the members of the named axis: for each `(source, destination)` pair,
/// member `destination` receives member `source`'s `x`; a member that no pair sends to
/// receives zeros. Sources are distinct, destinations are distinct. Like
/// `jax.lax.ppermute(x, axis_name, perm)`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // A ring: each example passes its value to the next.
/// let shift = vmap_named(|x: Array| ppermute(&x, "i", &[(0, 1), (1, 2), (2, 0)]), 0, 0, "i");
/// let y = shift(Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]));
/// assert_eq!(y.to_vec::<f32>(), vec![3.0, 1.0, 2.0]);
/// ```
#[track_caller]
pub fn ppermute<T: Tree>(x: &T, axis_name: &str, perm: &[(usize, usize)]) -> T {
    let named = named_axis("ppermute", axis_name);
    let at = At::line(Location::caller());
    let n = named.size;
    for (k, &(s, d)) in perm.iter().enumerate() {
        if s >= n || d >= n {
            panic!(
                "ppermute: the pair ({s}, {d}) names a member outside axis \"{axis_name}\" of size {n} {at}"
            );
        }
        if perm[..k].iter().any(|&(s2, _)| s2 == s) {
            panic!("ppermute: member {s} is a source twice in {perm:?} {at}");
        }
        if perm[..k].iter().any(|&(_, d2)| d2 == d) {
            panic!("ppermute: member {d} is a destination twice in {perm:?} {at}");
        }
    }
    each_leaf(x, || Ppermute {
        axis: named.clone(),
        perm: perm.to_vec(),
    })
}

/// Sends `x` between the members of the named axis so that member `i` receives member
/// `perm[i]`'s `x`: [`ppermute`] with the permutation written as sources, as
/// `jax.lax.pshuffle(x, axis_name, perm)`. `perm` lists every member exactly once.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let reversed = vmap_named(|x: Array| jaxrs::lax::pshuffle(&x, "i", &[2, 1, 0]), 0, 0, "i");
/// let y = reversed(Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]));
/// assert_eq!(y.to_vec::<f32>(), vec![3.0, 2.0, 1.0]);
/// ```
#[track_caller]
pub fn pshuffle<T: Tree>(x: &T, axis_name: &str, perm: &[usize]) -> T {
    let mut seen = vec![false; perm.len()];
    for &p in perm {
        if p >= perm.len() || std::mem::replace(&mut seen[p], true) {
            panic!(
                "pshuffle: perm {perm:?} does not represent a permutation of 0..{} {}",
                perm.len(),
                At::line(Location::caller())
            );
        }
    }
    let pairs: Vec<(usize, usize)> = perm.iter().copied().zip(0..).collect();
    ppermute(x, axis_name, &pairs)
}

/// Every member gets member `source`'s `x` (`jax.lax.pbroadcast(x, axis_name, source)`, the
/// collective broadcast). It is the masked sum JAX's documentation gives, `psum(where(
/// axis_index == source, x, 0))`, and lowered as that all-reduce on every platform (JAX
/// lowers its `pbroadcast` on GPU only); its derivatives are that sum's, which equal
/// JAX's. Inside `shard_map` its result is typed as not varying over the axis (JAX types it
/// as varying), so a result it makes may be declared replicated over the axis.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let from_one = vmap_named(|x: Array| jaxrs::lax::pbroadcast(&x, "i", 1), 0, 0, "i");
/// let y = from_one(Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]));
/// assert_eq!(y.to_vec::<f32>(), vec![2.0, 2.0, 2.0]);
/// ```
#[track_caller]
pub fn pbroadcast<T: Tree>(x: &T, axis_name: &str, source: usize) -> T {
    let loc = Location::caller();
    let size = named_axis("pbroadcast", axis_name).size;
    if source >= size {
        panic!(
            "pbroadcast: source {source} is outside axis \"{axis_name}\" of size {size} {}",
            At::line(loc)
        );
    }
    with_location(loc, || {
        let is_source = axis_index(axis_name).eq(source as i32);
        tree_map(x, |leaf| {
            let zero = Array::zeros(&[], leaf.dtype());
            let masked = crate::ops::where_(&is_source, leaf, &zero);
            let total = all_reduce(&masked, axis_name, ReduceOp::Sum, "pbroadcast");
            if total.dtype() == leaf.dtype() {
                total
            } else {
                total.astype(leaf.dtype())
            }
        })
    })
}

/// Marks `x` as varying over the named mesh axes of the enclosing `shard_map`
/// (`jax.lax.pcast(x, axis_name, to="varying")`): the identity on values, for a value every
/// device along them holds the same (a captured parameter, a `psum`'s result) that is to be
/// used as a per-device value; its transpose sums the cotangent over the axes. JAX's other
/// targets (`"reduced"`, `"unreduced"`) need unreduced types, which jaxrs does not have:
/// they stop with a message. Casting a value that already varies over an axis is refused
/// when the `shard_map` types its body, as JAX refuses it; an axis that a vmap or pmap
/// named is refused, as JAX refuses it outside `shard_map`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{shard_map, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[8], &["i"])?;
/// // The sum over "i" of a value every device holds the same: each adds its copy.
/// let f = shard_map(|w: Array| jaxrs::psum(&jaxrs::lax::pcast(&w, &["i"], "varying"), "i"))
///     .mesh(&mesh)
///     .in_specs(P![])
///     .out_specs(P![]);
/// let y: Array = f.call(Array::scalar(2.0f32));
/// assert_eq!(y.to_vec::<f32>(), vec![16.0]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn pcast<T: Tree>(x: &T, axis_names: &[&str], to: &str) -> T {
    let loc = Location::caller();
    if to != "varying" {
        panic!(
            "pcast: to=\"{to}\" is not built: jaxrs types values as varying or not over a \
             manual axis and has no reduced or unreduced types; to=\"varying\" is {}",
            At::line(loc)
        );
    }
    if axis_names.is_empty() {
        return tree_map(x, Array::clone);
    }
    let axes: Vec<NamedAxis> = axis_names
        .iter()
        .map(|name| {
            let axis = with_location(loc, || named_axis("pcast", name));
            if !axes::is_manual(name) {
                panic!(
                    "pcast: axis \"{name}\" is a vmap's or pmap's, not a mesh axis of an \
                     enclosing shard_map; pcast types values over shard_map's manual axes only, \
                     as JAX's {}",
                    At::line(loc)
                );
            }
            axis
        })
        .collect();
    each_leaf(x, || Pvary { axes: axes.clone() })
}

/// Swaps the named axis with the positional axis `axis` (`jax.lax.pswapaxes(x, axis_name,
/// axis)`): [`all_to_all`] with `split_axis = concat_axis = axis`, untiled, so
/// `x.shape[axis]` equals the axis size. Member `i` gets element `i` along `axis` of every
/// member's `x`, in the members' order.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // Example i holds row i of a 2x2 matrix; afterwards it holds column i.
/// let swap = vmap_named(|x: Array| jaxrs::lax::pswapaxes(&x, "i", 0), 0, 0, "i");
/// let m = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// assert_eq!(swap(m).to_vec::<f32>(), vec![1.0, 3.0, 2.0, 4.0]);
/// ```
#[track_caller]
pub fn pswapaxes<T: Tree>(x: &T, axis_name: &str, axis: i64) -> T {
    all_to_all(x, axis_name, axis, axis, false)
}

/// Exchanges blocks between the members of the named axis, as
/// `jax.lax.all_to_all(x, axis_name, split_axis, concat_axis, tiled=tiled)`: each member
/// cuts its `x` along `split_axis` into one piece per member and sends piece `j` to member
/// `j`, which puts the pieces it receives together along `concat_axis`, in the senders'
/// order. Untiled, `x.shape[split_axis]` must equal the axis size: that axis is removed and
/// a new one of the axis size inserted at `concat_axis` (a position in the result), so a
/// value split over members along one axis comes back split along another. Tiled, the
/// pieces are blocks: `split_axis` shrinks and `concat_axis` grows by the axis size. Negative
/// axes count from the end. `x` is any tree of arrays. Its transpose is the same exchange
/// with the two axes swapped.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // Example i holds row i of a 3x3 matrix; afterwards it holds column i.
/// let transpose = vmap_named(|x: Array| all_to_all(&x, "i", 0, 0, false), 0, 0, "i");
/// let m = Array::arange(0.0, 9.0, 1.0, DType::F32).reshape([3, 3]);
/// assert_eq!(transpose(m.clone()).to_vec::<f32>(), m.t().to_vec::<f32>());
/// ```
#[track_caller]
pub fn all_to_all<T: Tree>(
    x: &T,
    axis_name: &str,
    split_axis: i64,
    concat_axis: i64,
    tiled: bool,
) -> T {
    let named = named_axis("all_to_all", axis_name);
    let loc = Location::caller();
    let n = named.size;
    with_location(loc, || {
        tree_map(x, |leaf| {
            let rank = leaf.rank();
            let (Some(mut split), Some(mut concat)) = (
                normalize_axis(split_axis, rank),
                normalize_axis(concat_axis, rank),
            ) else {
                panic!(
                    "all_to_all: split_axis {split_axis} or concat_axis {concat_axis} is out of \
                     range for {} {}",
                    leaf.aval(),
                    At::line(loc)
                )
            };
            let len = leaf.shape()[split];
            if tiled && !len.is_multiple_of(n) {
                panic!(
                    "all_to_all: split_axis {split} of {} has size {len}, which the {n} members \
                     of axis \"{axis_name}\" cannot split evenly {}",
                    leaf.aval(),
                    At::line(loc)
                );
            }
            if !tiled && len != n {
                panic!(
                    "all_to_all: split_axis {split} of {} has size {len}, but untiled it must \
                     have one element per member of axis \"{axis_name}\" ({n}) {}",
                    leaf.aval(),
                    At::line(loc)
                );
            }
            // Untiled: a new axis of length 1 receives the pieces, and the split axis (of
            // length 1 afterwards) is dropped, as JAX's all_to_all does.
            let mut x = leaf.clone();
            if !tiled && split != concat {
                if split < concat {
                    concat += 1;
                } else {
                    split += 1;
                }
                x = x.expand_dims(concat as i64);
            }
            let prim = AllToAll {
                axis: named.clone(),
                split,
                concat,
            };
            let y = bind1(prim, &[Operand::from(&x)]);
            if !tiled && split != concat {
                y.squeeze([split as i64])
            } else {
                y
            }
        })
    })
}

/// This member's index along the named axis: an `i32` scalar, `0..size` (the example's
/// position in a [`vmap_named`](crate::vmap_named) batch, the device's in a pmap). Like
/// `jax.lax.axis_index`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let weighted = vmap_named(|x: Array| &x * axis_index("i"), 0, 0, "i");
/// let y = weighted(Array::from_vec(vec![5.0f32, 5.0, 5.0], &[3]));
/// assert_eq!(y.to_vec::<f32>(), vec![0.0, 5.0, 10.0]);
/// ```
#[track_caller]
pub fn axis_index(axis_name: &str) -> Array {
    let axis = named_axis("axis_index", axis_name);
    with_location(Location::caller(), || bind1(AxisIndex { axis }, &[]))
}

/// The number of members of the named axis (the batch size of a
/// [`vmap_named`](crate::vmap_named), the device count of a pmap), like
/// `jax.lax.axis_size`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let share = vmap_named(|x: Array| &x / axis_size("i") as f32, 0, 0, "i");
/// let y = share(Array::from_vec(vec![2.0f32, 4.0], &[2]));
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 2.0]);
/// ```
#[track_caller]
pub fn axis_size(axis_name: &str) -> usize {
    named_axis("axis_size", axis_name).size
}
