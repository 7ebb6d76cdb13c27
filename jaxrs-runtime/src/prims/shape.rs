//! Shape primitives: reshape, transpose, broadcast, concatenate, slice, pad, reverse, iota.

use super::arity;
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::ir::Literal;
use crate::core::lower::{i64_array, LowerCtx};
use crate::core::primitive::{as_any, tuple_str, Primitive};
use crate::core::sharding::PartitionDim;
use crate::core::sharding_types::{dims_of, elementwise_rule, pieces, SpecRule};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;
use crate::interpreters::ad::{or_zeros, zeros_like_aval};
use crate::interpreters::batching::{align, move_bdim, shift_axis};

/// A linear primitive's tangent: the primitive applied to the tangent.
macro_rules! linear_jvp {
    () => {
        fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
            vec![t[0]
                .as_ref()
                .map(|t| bind1(self.clone(), &[Operand::from(t)]))]
        }
    };
}

/// Same elements, new shape (row-major order).
#[derive(Debug, Clone)]
pub struct Reshape {
    pub shape: Vec<usize>,
}

impl Primitive for Reshape {
    fn name(&self) -> &'static str {
        "reshape"
    }
    fn params_string(&self) -> String {
        format!("new_sizes={}", tuple_str(&self.shape))
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        if crate::aval::element_count(&self.shape) != Some(inputs[0].size()) {
            return Err(format!(
                "cannot reshape {} elements into shape {:?}",
                inputs[0].size(),
                self.shape
            ));
        }
        Ok(vec![inputs[0].with_shape(self.shape.clone())])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        Ok(vec![reshape_sharding(&ins[0], &outs[0].shape)?])
    }
    linear_jvp!();
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let shape = p[0].aval().shape;
        vec![cts[0]
            .as_ref()
            .map(|g| bind1(Reshape { shape }, &[Operand::from(g)]))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        vec![cx.op1(
            "stablehlo.reshape",
            &[&ins[0]],
            &[&in_avals[0]],
            "",
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // Row-major order keeps the batch dim where it is when the per-example dims before it
        // regroup among themselves (same product); otherwise the examples go first.
        let b = dims[0].expect("the operand is batched");
        let mut per_example = args[0].aval().shape;
        per_example.remove(b);
        let before: usize = per_example[..b].iter().product();
        let to = (0..=self.shape.len())
            .filter(|&k| self.shape[..k].iter().product::<usize>() == before)
            .min_by_key(|&k| k.abs_diff(b));
        let (x, to) = match to {
            Some(to) => (args[0].to_array().into_owned(), to),
            None => (move_bdim(&args[0], dims[0], 0, axis_size), 0),
        };
        let mut shape = self.shape.clone();
        shape.insert(to, axis_size);
        (
            vec![bind1(Reshape { shape }, &[Operand::from(&x)])],
            vec![Some(to)],
        )
    }
    as_any!();
}

/// Permutes dimensions: output dim `i` is input dim `perm[i]`.
#[derive(Debug, Clone)]
pub struct Transpose {
    pub perm: Vec<usize>,
}

impl Primitive for Transpose {
    fn name(&self) -> &'static str {
        "transpose"
    }
    fn params_string(&self) -> String {
        format!("permutation={}", tuple_str(&self.perm))
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let r = inputs[0].rank();
        let mut seen = vec![false; r];
        if self.perm.len() != r
            || self
                .perm
                .iter()
                .any(|&p| p >= r || std::mem::replace(&mut seen[p], true))
        {
            return Err(format!("{:?} is not a permutation of {r} axes", self.perm));
        }
        Ok(vec![inputs[0].with_shape(
            self.perm
                .iter()
                .map(|&p| inputs[0].shape[p])
                .collect::<Vec<_>>(),
        )])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        let dims = dims_of(&ins[0]);
        Ok(vec![self.perm.iter().map(|&p| dims[p].clone()).collect()])
    }
    linear_jvp!();
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let mut inverse = vec![0; self.perm.len()];
        for (i, &p) in self.perm.iter().enumerate() {
            inverse[p] = i;
        }
        vec![cts[0]
            .as_ref()
            .map(|g| bind1(Transpose { perm: inverse }, &[Operand::from(g)]))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let props = format!(
            "permutation = {}",
            i64_array(self.perm.iter().map(|&p| p as i64))
        );
        vec![cx.op1(
            "stablehlo.transpose",
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
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // The batch dim stays where it is; the other axes are permuted around it.
        let b = dims[0].expect("the operand is batched");
        let shift = |a: usize| shift_axis(a, b);
        let mut perm: Vec<usize> = self.perm.iter().map(|&p| shift(p)).collect();
        perm.insert(b, b);
        (
            vec![bind1(Transpose { perm }, &[args[0].borrowed()])],
            vec![Some(b)],
        )
    }
    as_any!();
}

/// Broadcasts to `shape`; input dim `i` becomes output dim `dims[i]` (of equal size, or 1).
#[derive(Debug, Clone)]
pub struct BroadcastInDim {
    pub shape: Vec<usize>,
    pub dims: Vec<usize>,
}

impl Primitive for BroadcastInDim {
    fn name(&self) -> &'static str {
        "broadcast_in_dim"
    }
    fn params_string(&self) -> String {
        format!(
            "shape={} broadcast_dimensions={}",
            tuple_str(&self.shape),
            tuple_str(&self.dims)
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        if self.dims.len() != a.rank() {
            return Err(format!(
                "broadcast_dimensions {:?} must list one output dim per operand dim",
                self.dims
            ));
        }
        for (i, &d) in self.dims.iter().enumerate() {
            if d >= self.shape.len()
                || (a.shape[i] != 1 && a.shape[i] != self.shape[d])
                || (i > 0 && d <= self.dims[i - 1])
            {
                return Err(format!(
                    "cannot broadcast shape {:?} to {:?} along {:?}",
                    a.shape, self.shape, self.dims
                ));
            }
        }
        Ok(vec![a.with_shape(self.shape.clone())])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let dims = dims_of(&ins[0]);
        let mut out = vec![PartitionDim::Replicated; outs[0].rank()];
        for (i, &d) in self.dims.iter().enumerate() {
            // A dimension of 1 broadcast to more is copied whole to every device.
            if ins[0].shape[i] == self.shape[d] {
                out[d] = dims[i].clone();
            }
        }
        Ok(vec![out])
    }
    linear_jvp!();
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else { return vec![None] };
        let in_shape = p[0].aval().shape;
        // Sum over the new dims and over the dims that were stretched from size 1.
        let summed: Vec<usize> = (0..self.shape.len())
            .filter(|d| match self.dims.iter().position(|x| x == d) {
                None => true,
                Some(i) => in_shape[i] == 1 && self.shape[*d] != 1,
            })
            .collect();
        let reduced = if summed.is_empty() {
            g.clone()
        } else {
            bind1(
                super::Reduce {
                    op: super::ReduceOp::Sum,
                    axes: summed,
                },
                &[Operand::from(g)],
            )
        };
        vec![Some(bind1(
            Reshape { shape: in_shape },
            &[Operand::from(&reduced)],
        ))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let props = format!(
            "broadcast_dimensions = {}",
            i64_array(self.dims.iter().map(|&d| d as i64))
        );
        vec![cx.op1(
            "stablehlo.broadcast_in_dim",
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
        // The batch dim lands right after the output dim of the operand axis before it, which
        // keeps `dims` increasing without moving the operand's batch dim.
        let b = dims[0].expect("the operand is batched");
        let to = if b == 0 { 0 } else { self.dims[b - 1] + 1 };
        let mut new_dims: Vec<usize> = self.dims.iter().map(|&d| shift_axis(d, to)).collect();
        new_dims.insert(b, to);
        let mut shape = self.shape.clone();
        shape.insert(to, axis_size);
        let prim = BroadcastInDim {
            shape,
            dims: new_dims,
        };
        (vec![bind1(prim, &[args[0].borrowed()])], vec![Some(to)])
    }
    as_any!();
}

/// Joins operands along `axis`.
#[derive(Debug, Clone)]
pub struct Concatenate {
    pub axis: usize,
}

impl Primitive for Concatenate {
    fn name(&self) -> &'static str {
        "concatenate"
    }
    fn params_string(&self) -> String {
        format!("dimension={}", self.axis)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        if inputs.is_empty() {
            return Err("needs at least one operand".into());
        }
        let first = &inputs[0];
        if self.axis >= first.rank() {
            return Err(format!(
                "axis {} is out of range for rank {}",
                self.axis,
                first.rank()
            ));
        }
        let mut total = 0;
        for a in inputs {
            if a.dtype != first.dtype {
                return Err("operands must have the same dtype".into());
            }
            let same_elsewhere = a.rank() == first.rank()
                && (0..a.rank()).all(|i| i == self.axis || a.shape[i] == first.shape[i]);
            if !same_elsewhere {
                return Err(format!(
                    "operands must agree on every dim but {}",
                    self.axis
                ));
            }
            total += a.shape[self.axis];
        }
        let mut shape = first.shape.clone();
        shape[self.axis] = total;
        Ok(vec![first
            .with_shape(shape)
            .weak(inputs.iter().all(|a| a.weak))])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let parts: Vec<Array> = t
            .iter()
            .zip(p)
            .map(|(t, p)| or_zeros(t, &p.aval()))
            .collect();
        let ops: Vec<Operand> = parts.iter().map(Operand::from).collect();
        vec![Some(bind1(self.clone(), &ops))]
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else {
            return vec![None; p.len()];
        };
        let mut offset = 0;
        p.iter()
            .map(|x| {
                let a = x.aval();
                let mut start = vec![0; a.rank()];
                let mut limit = g.shape().to_vec();
                start[self.axis] = offset;
                limit[self.axis] = offset + a.shape[self.axis];
                offset = limit[self.axis];
                let strides = vec![1; a.rank()];
                Some(bind1(
                    Slice {
                        start,
                        limit,
                        strides,
                    },
                    &[Operand::from(g)],
                ))
            })
            .collect()
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let names: Vec<&str> = ins.iter().map(String::as_str).collect();
        let avals: Vec<&Aval> = in_avals.iter().collect();
        vec![cx.op1(
            "stablehlo.concatenate",
            &names,
            &avals,
            &format!("dimension = {} : i64", self.axis),
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (xs, b) = align(args, dims, axis_size);
        let ops: Vec<Operand> = xs.iter().map(Operand::from).collect();
        let prim = Concatenate {
            axis: shift_axis(self.axis, b),
        };
        (vec![bind1(prim, &ops)], vec![Some(b)])
    }
    as_any!();
}

/// A static strided slice `x[start:limit:strides]`.
#[derive(Debug, Clone)]
pub struct Slice {
    pub start: Vec<usize>,
    pub limit: Vec<usize>,
    pub strides: Vec<usize>,
}

impl Primitive for Slice {
    fn name(&self) -> &'static str {
        "slice"
    }
    fn params_string(&self) -> String {
        format!(
            "start_indices={} limit_indices={} strides={}",
            tuple_str(&self.start),
            tuple_str(&self.limit),
            tuple_str(&self.strides)
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let r = a.rank();
        if self.start.len() != r || self.limit.len() != r || self.strides.len() != r {
            return Err(format!("start, limit and strides need {r} entries each"));
        }
        let mut shape = Vec::with_capacity(r);
        for i in 0..r {
            let (s, l, st) = (self.start[i], self.limit[i], self.strides[i]);
            if st == 0 || s > l || l > a.shape[i] {
                return Err(format!(
                    "dim {i}: [{s}:{l}:{st}] does not fit size {}",
                    a.shape[i]
                ));
            }
            shape.push((l - s).div_ceil(st));
        }
        Ok(vec![a.with_shape(shape)])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        Ok(vec![dims_of(&ins[0])])
    }
    linear_jvp!();
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else { return vec![None] };
        let a = p[0].aval();
        if outs[0].size() == 0 {
            return vec![Some(zeros_like_aval(&a))];
        }
        // Put each element back where it came from: pad with the start before, stride - 1
        // between, and what is left after.
        let low: Vec<i64> = self.start.iter().map(|&s| s as i64).collect();
        let interior: Vec<i64> = self.strides.iter().map(|&s| s as i64 - 1).collect();
        let high: Vec<i64> = (0..a.rank())
            .map(|i| {
                let m = outs[0].shape()[i] as i64;
                a.shape[i] as i64 - (self.start[i] as i64 + (m - 1) * self.strides[i] as i64 + 1)
            })
            .collect();
        let zero = Literal::from_f64(0.0, a.dtype, false);
        vec![Some(bind1(
            Pad {
                low,
                high,
                interior,
            },
            &[Operand::from(g), Operand::Lit(zero)],
        ))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let arr = |v: &[usize]| i64_array(v.iter().map(|&x| x as i64));
        let props = format!(
            "limit_indices = {}, start_indices = {}, strides = {}",
            arr(&self.limit),
            arr(&self.start),
            arr(&self.strides)
        );
        vec![cx.op1(
            "stablehlo.slice",
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
        // The whole batch dim is kept.
        let b = dims[0].expect("the operand is batched");
        let mut prim = self.clone();
        prim.start.insert(b, 0);
        prim.limit.insert(b, axis_size);
        prim.strides.insert(b, 1);
        (vec![bind1(prim, &[args[0].borrowed()])], vec![Some(b)])
    }
    as_any!();
}

/// Pads with a scalar operand: `low`/`high` may be negative (cropping), `interior` inserts
/// between elements. Operands: `x`, `padding_value` (0-d).
#[derive(Debug, Clone)]
pub struct Pad {
    pub low: Vec<i64>,
    pub high: Vec<i64>,
    pub interior: Vec<i64>,
}

impl Primitive for Pad {
    fn name(&self) -> &'static str {
        "pad"
    }
    fn params_string(&self) -> String {
        let cfg: Vec<String> = (0..self.low.len())
            .map(|i| format!("({}, {}, {})", self.low[i], self.high[i], self.interior[i]))
            .collect();
        format!("padding_config=({})", cfg.join(", "))
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        let (a, v) = (&inputs[0], &inputs[1]);
        if v.rank() != 0 || v.dtype != a.dtype {
            return Err("the padding value must be a scalar of the operand's dtype".into());
        }
        let r = a.rank();
        if self.low.len() != r || self.high.len() != r || self.interior.len() != r {
            return Err(format!("low, high and interior need {r} entries each"));
        }
        let mut shape = Vec::with_capacity(r);
        for i in 0..r {
            let n = a.shape[i] as i64;
            if self.interior[i] < 0 {
                return Err("interior padding must be non-negative".into());
            }
            let size = self.low[i] + self.high[i] + n + (n - 1).max(0) * self.interior[i];
            if size < 0 {
                return Err(format!("dim {i} would have negative size {size}"));
            }
            shape.push(size as usize);
        }
        Ok(vec![a.with_shape(shape)])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        Ok(vec![dims_of(&ins[0])])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        if t[0].is_none() && t[1].is_none() {
            return vec![None];
        }
        let tx = or_zeros(&t[0], &p[0].aval());
        let tv = or_zeros(&t[1], &p[1].aval());
        vec![Some(bind1(
            self.clone(),
            &[Operand::from(&tx), Operand::from(&tv)],
        ))]
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else {
            return vec![None, None];
        };
        let a = p[0].aval();
        // Undo the edges (a negative edge was a crop: pad it back with zeros), then take every
        // (interior + 1)-th element.
        let neg = |v: &[i64]| v.iter().map(|x| -x).collect::<Vec<_>>();
        let zero = Literal::from_f64(0.0, a.dtype, false);
        let unpadded = bind1(
            Pad {
                low: neg(&self.low),
                high: neg(&self.high),
                interior: vec![0; a.rank()],
            },
            &[Operand::from(g), Operand::Lit(zero)],
        );
        let strides: Vec<usize> = self.interior.iter().map(|&i| i as usize + 1).collect();
        let ct_x = bind1(
            Slice {
                start: vec![0; a.rank()],
                limit: unpadded.shape().to_vec(),
                strides,
            },
            &[Operand::from(&unpadded)],
        );
        let ct_v = wanted[1].then(|| g.sum(None, false) - ct_x.sum(None, false));
        vec![Some(ct_x), ct_v]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let props = format!(
            "edge_padding_high = {}, edge_padding_low = {}, interior_padding = {}",
            i64_array(self.high.iter().copied()),
            i64_array(self.low.iter().copied()),
            i64_array(self.interior.iter().copied())
        );
        vec![cx.op1(
            "stablehlo.pad",
            &[&ins[0], &ins[1]],
            &[&in_avals[0], &in_avals[1]],
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
        let (x, value) = (&args[0], &args[1]);
        let b = dims[0].unwrap_or(0);
        let mut prim = self.clone();
        prim.low.insert(b, 0);
        prim.high.insert(b, 0);
        prim.interior.insert(b, 0);
        if dims[1].is_none() {
            let y = bind1(prim, &[x.borrowed(), value.borrowed()]);
            return (vec![y], vec![Some(b)]);
        }
        // A padding value per example: pad with zeros, then select each example's value
        // where a padded mask of ones says the element is padding.
        let x = move_bdim(x, dims[0], b, axis_size);
        let lit = |v: f64, dtype: DType| Operand::Lit(Literal::from_f64(v, dtype, false));
        let padded = bind1(prim.clone(), &[Operand::from(&x), lit(0.0, x.dtype())]);
        let ones = bind1(
            BroadcastInDim {
                shape: x.shape().to_vec(),
                dims: vec![],
            },
            &[lit(1.0, DType::Bool)],
        );
        let inside = bind1(prim, &[Operand::from(&ones), lit(0.0, DType::Bool)]);
        let v = move_bdim(value, dims[1], 0, axis_size);
        let v = bind1(
            BroadcastInDim {
                shape: padded.shape().to_vec(),
                dims: vec![b],
            },
            &[Operand::from(&v)],
        );
        let y = bind1(
            super::Select,
            &[
                Operand::from(&inside),
                Operand::from(&padded),
                Operand::from(&v),
            ],
        );
        (vec![y], vec![Some(b)])
    }
    as_any!();
}

/// Reverses the order of elements along `dims`.
#[derive(Debug, Clone)]
pub struct Rev {
    pub dims: Vec<usize>,
}

impl Primitive for Rev {
    fn name(&self) -> &'static str {
        "rev"
    }
    fn params_string(&self) -> String {
        format!("dimensions={}", tuple_str(&self.dims))
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        if self.dims.iter().any(|&d| d >= inputs[0].rank()) {
            return Err(format!(
                "dims {:?} out of range for rank {}",
                self.dims,
                inputs[0].rank()
            ));
        }
        Ok(vec![inputs[0].clone()])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        Ok(vec![dims_of(&ins[0])])
    }
    linear_jvp!();
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        vec![cts[0]
            .as_ref()
            .map(|g| bind1(self.clone(), &[Operand::from(g)]))]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let props = format!(
            "dimensions = {}",
            i64_array(self.dims.iter().map(|&d| d as i64))
        );
        vec![cx.op1(
            "stablehlo.reverse",
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
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let b = dims[0].expect("the operand is batched");
        let prim = Rev {
            dims: self.dims.iter().map(|&d| shift_axis(d, b)).collect(),
        };
        (vec![bind1(prim, &[args[0].borrowed()])], vec![Some(b)])
    }
    as_any!();
}

/// `0, 1, 2, ...` along `dimension` of an array of `shape`.
#[derive(Debug, Clone)]
pub struct Iota {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub dimension: usize,
}

impl Primitive for Iota {
    fn name(&self) -> &'static str {
        "iota"
    }
    fn params_string(&self) -> String {
        format!(
            "dtype={} shape={} dimension={}",
            self.dtype.name(),
            tuple_str(&self.shape),
            self.dimension
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 0)?;
        if self.dimension >= self.shape.len() {
            return Err(format!(
                "dimension {} out of range for shape {:?}",
                self.dimension, self.shape
            ));
        }
        if self.dtype == DType::Bool {
            return Err("iota of bool is not defined".into());
        }
        Ok(vec![Aval::new(self.shape.clone(), self.dtype)])
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
        vec![cx.op1(
            "stablehlo.iota",
            &[],
            &[],
            &format!("iota_dimension = {} : i64", self.dimension),
            &out[0],
        )]
    }
    fn batch(
        &self,
        _: &[Operand],
        _: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // No operands, so nothing to batch: the same values for every example.
        (vec![bind1(self.clone(), &[])], vec![None])
    }
    as_any!();
}

/// How a reshape's result lies, from its operand's type sharding (JAX's reshape rule, for the
/// cases it types): the dimensions are matched in groups of equal size; a sharded dimension
/// kept whole keeps its axes, one split into several gives them to the first part (when its
/// size divides evenly), and several merged into one keep the axes of the major one when
/// only it is sharded. Any other reshape of a sharded dimension is ambiguous.
fn reshape_sharding(operand: &Aval, shape: &[usize]) -> Result<Vec<PartitionDim>, String> {
    let dims = dims_of(operand);
    let from = &operand.shape;
    let mut out = vec![PartitionDim::Replicated; shape.len()];
    let ambiguous = || {
        format!(
            "this reshape of a sharded operand to {shape:?} is not supported; reshard the \
             operand so that the dimensions it merges or splits are not sharded"
        )
    };
    if from.contains(&0) || shape.contains(&0) {
        return match dims.iter().all(|d| *d == PartitionDim::Replicated) {
            true => Ok(out),
            false => Err(ambiguous()),
        };
    }
    let (mut i, mut j) = (0, 0);
    while i < from.len() || j < shape.len() {
        if i < from.len() && from[i] == 1 {
            i += 1;
            continue;
        }
        if j < shape.len() && shape[j] == 1 {
            j += 1;
            continue;
        }
        let (i0, j0) = (i, j);
        let (mut have, mut want) = (from[i], shape[j]);
        i += 1;
        j += 1;
        while have != want {
            if have < want {
                have *= from[i];
                i += 1;
            } else {
                want *= shape[j];
                j += 1;
            }
        }
        let sharded: Vec<usize> = (i0..i)
            .filter(|&k| dims[k] != PartitionDim::Replicated)
            .collect();
        match sharded.as_slice() {
            [] => {}
            [k] if *k == i0
                && (j - j0 == 1
                    || (i - i0 == 1 && shape[j0].is_multiple_of(pieces(operand, &dims[*k])))) =>
            {
                out[j0] = dims[*k].clone();
            }
            _ => return Err(ambiguous()),
        }
    }
    Ok(out)
}
