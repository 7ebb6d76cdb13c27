//! Indexing primitives: dynamic slices and gathers along an axis.

use super::arity;
use super::elementwise::{compare_props, CompareOp};
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{dim_list, i64_array, LowerCtx};
use crate::core::primitive::{as_any, tuple_str, Primitive};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;
use crate::interpreters::ad::{arg_array, or_zeros, zeros};
use crate::ops::Arg;

fn check_starts(starts: &[Aval], rank: usize) -> Result<(), String> {
    if starts.len() != rank {
        return Err(format!("needs {rank} start indices, got {}", starts.len()));
    }
    if let Some(s) = starts.iter().find(|s| s.rank() != 0 || !s.dtype.is_int()) {
        return Err(format!("start indices must be integer scalars, got {s}"));
    }
    Ok(())
}

/// Makes negative indices count from the end of a dim of size `n` (`i < 0 ? i + n : i`),
/// as JAX does before XLA clamps them into range.
fn wrap_negative(cx: &mut LowerCtx, index: &str, aval: &Aval, n: usize) -> String {
    if aval.dtype.is_unsigned() {
        return index.to_string();
    }
    let b = aval.with_dtype(DType::Bool).weak(false);
    let zero = cx.splat(0.0, aval);
    let size = cx.splat(n as f64, aval);
    let neg = cx.op1(
        "stablehlo.compare",
        &[index, &zero],
        &[aval, aval],
        &compare_props(CompareOp::Lt, aval.dtype),
        &b,
    );
    let shifted = cx.op1("stablehlo.add", &[index, &size], &[aval, aval], "", aval);
    cx.op1(
        "stablehlo.select",
        &[&neg, &shifted, index],
        &[&b, aval, aval],
        "",
        aval,
    )
}

/// `x[i0:i0+s0, i1:i1+s1, ...]` with traced starts (operands: `x, i0, i1, ...`), clamped so
/// the slice stays in bounds.
#[derive(Debug, Clone)]
pub struct DynamicSlice {
    pub sizes: Vec<usize>,
}

impl Primitive for DynamicSlice {
    fn name(&self) -> &'static str {
        "dynamic_slice"
    }
    fn params_string(&self) -> String {
        format!("slice_sizes={}", tuple_str(&self.sizes))
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let x = &inputs[0];
        check_starts(&inputs[1..], x.rank())?;
        if self.sizes.len() != x.rank() || self.sizes.iter().zip(&x.shape).any(|(s, d)| s > d) {
            return Err(format!(
                "slice sizes {:?} do not fit shape {:?}",
                self.sizes, x.shape
            ));
        }
        Ok(vec![x.with_shape(self.sizes.clone())])
    }
    fn jvp(&self, p: &[Arg], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let Some(t) = &t[0] else { return vec![None] };
        let starts: Vec<Array> = p[1..].iter().map(|a| arg_array(a).into_owned()).collect();
        vec![Some(t.dynamic_slice(&starts, &self.sizes))]
    }
    fn vjp(
        &self,
        p: &[Arg],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let mut out = vec![None; p.len()];
        if let Some(g) = &cts[0] {
            let starts: Vec<Array> = p[1..].iter().map(|a| arg_array(a).into_owned()).collect();
            out[0] = Some(zeros(&p[0].aval()).dynamic_update_slice(g, &starts));
        }
        out
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let x = &in_avals[0];
        let starts: Vec<String> = (1..ins.len())
            .map(|i| wrap_negative(cx, &ins[i], &in_avals[i], x.shape[i - 1]))
            .collect();
        let mut names: Vec<&str> = vec![&ins[0]];
        names.extend(starts.iter().map(String::as_str));
        let avals: Vec<&Aval> = in_avals.iter().collect();
        let props = format!(
            "slice_sizes = {}",
            i64_array(self.sizes.iter().map(|&s| s as i64))
        );
        vec![cx.op1("stablehlo.dynamic_slice", &names, &avals, &props, &out[0])]
    }
    fn batch(
        &self,
        args: &[Arg],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (starts, sd) = (&args[1..], &dims[1..]);
        if sd.iter().all(Option::is_none) {
            // One window for every example: the whole batch dim rides along.
            let b = dims[0].expect("the operand is batched");
            let dtype = starts.first().map_or(DType::I32, |s| s.aval().dtype);
            let zero = crate::interpreters::batching::int_literal(0, dtype);
            let mut ops: Vec<Operand> = starts.iter().map(Arg::operand).collect();
            ops.insert(b, Operand::Lit(zero));
            ops.insert(0, args[0].operand());
            let mut sizes = self.sizes.clone();
            sizes.insert(b, axis_size);
            return (vec![bind1(DynamicSlice { sizes }, &ops)], vec![Some(b)]);
        }
        // A window per example: a gather (as JAX does).
        let (y, d) = crate::interpreters::batching::dynamic_slice_batched(
            &args[0],
            dims[0],
            starts,
            sd,
            &self.sizes,
            axis_size,
        );
        (vec![y], vec![d])
    }
    as_any!();
}

/// Writes `update` into `x` at traced starts (operands: `x, update, i0, i1, ...`), clamped.
#[derive(Debug, Clone)]
pub struct DynamicUpdateSlice;

impl Primitive for DynamicUpdateSlice {
    fn name(&self) -> &'static str {
        "dynamic_update_slice"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        if inputs.len() < 2 {
            return Err("needs an operand and an update".into());
        }
        let (x, u) = (&inputs[0], &inputs[1]);
        check_starts(&inputs[2..], x.rank())?;
        if u.dtype != x.dtype
            || u.rank() != x.rank()
            || u.shape.iter().zip(&x.shape).any(|(a, b)| a > b)
        {
            return Err(format!("update {u} does not fit into {x}"));
        }
        Ok(vec![x.clone()])
    }
    fn jvp(&self, p: &[Arg], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        if t[0].is_none() && t[1].is_none() {
            return vec![None];
        }
        let starts: Vec<Array> = p[2..].iter().map(|a| arg_array(a).into_owned()).collect();
        let tx = or_zeros(&t[0], &p[0].aval());
        let tu = or_zeros(&t[1], &p[1].aval());
        vec![Some(tx.dynamic_update_slice(&tu, &starts))]
    }
    fn vjp(
        &self,
        p: &[Arg],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let mut out = vec![None; p.len()];
        if let Some(g) = &cts[0] {
            let starts: Vec<Array> = p[2..].iter().map(|a| arg_array(a).into_owned()).collect();
            let update = p[1].aval();
            out[0] = wanted[0].then(|| g.dynamic_update_slice(&zeros(&update), &starts));
            out[1] = wanted[1].then(|| g.dynamic_slice(&starts, &update.shape));
        }
        out
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let x = &in_avals[0];
        let starts: Vec<String> = (2..ins.len())
            .map(|i| wrap_negative(cx, &ins[i], &in_avals[i], x.shape[i - 2]))
            .collect();
        let mut names: Vec<&str> = vec![&ins[0], &ins[1]];
        names.extend(starts.iter().map(String::as_str));
        let avals: Vec<&Aval> = in_avals.iter().collect();
        vec![cx.op1(
            "stablehlo.dynamic_update_slice",
            &names,
            &avals,
            "",
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Arg],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (starts, sd) = (&args[2..], &dims[2..]);
        if sd.iter().all(Option::is_none) {
            // One place for every example: update the batch as a whole.
            let b = crate::interpreters::batching::common_bdim(&dims[..2]);
            let x = crate::interpreters::batching::move_bdim(&args[0], dims[0], b, axis_size);
            let u = crate::interpreters::batching::move_bdim(&args[1], dims[1], b, axis_size);
            let dtype = starts.first().map_or(DType::I32, |s| s.aval().dtype);
            let zero = crate::interpreters::batching::int_literal(0, dtype);
            let mut ops: Vec<Operand> = starts.iter().map(Arg::operand).collect();
            ops.insert(b, Operand::Lit(zero));
            ops.insert(0, Operand::Array(&u));
            ops.insert(0, Operand::Array(&x));
            return (vec![bind1(DynamicUpdateSlice, &ops)], vec![Some(b)]);
        }
        // A place per example: gather the update into place and select it (JAX scatters).
        let (y, d) = crate::interpreters::batching::dynamic_update_slice_batched(
            &args[0], dims[0], &args[1], dims[1], starts, sd, axis_size,
        );
        (vec![y], vec![d])
    }
    as_any!();
}

/// `x.take(indices, axis)`: the result has shape `x[..axis] + indices.shape + x[axis+1..]`
/// (an embedding lookup along axis 0). Negative indices count from the end; indices out of
/// range are clamped (XLA's gather semantics).
#[derive(Debug, Clone)]
pub struct Take {
    pub axis: usize,
}

impl Primitive for Take {
    fn name(&self) -> &'static str {
        "take"
    }
    fn params_string(&self) -> String {
        format!("axis={}", self.axis)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        let (x, idx) = (&inputs[0], &inputs[1]);
        if self.axis >= x.rank() {
            return Err(format!(
                "axis {} is out of range for rank {}",
                self.axis,
                x.rank()
            ));
        }
        if !idx.dtype.is_int() {
            return Err(format!(
                "indices must be integers, got {}",
                idx.dtype.name()
            ));
        }
        if x.shape[self.axis] == 0 && idx.size() > 0 {
            return Err("cannot take from an empty axis".into());
        }
        let mut shape = x.shape[..self.axis].to_vec();
        shape.extend(&idx.shape);
        shape.extend(&x.shape[self.axis + 1..]);
        Ok(vec![x.with_shape(shape)])
    }
    fn jvp(&self, p: &[Arg], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![t[0]
            .as_ref()
            .map(|t| bind1(self.clone(), &[Operand::Array(t), p[1].operand()]))]
    }
    fn vjp(
        &self,
        p: &[Arg],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else {
            return vec![None, None];
        };
        let base = zeros(&p[0].aval());
        vec![
            Some(bind1(
                IndexAdd { axis: self.axis },
                &[Operand::Array(&base), p[1].operand(), Operand::Array(g)],
            )),
            None,
        ]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let (x, idx) = (&in_avals[0], &in_avals[1]);
        let wrapped = wrap_negative(cx, &ins[1], idx, x.shape[self.axis]);
        let k = idx.rank();
        let a = self.axis;
        let offset_dims: Vec<usize> = (0..a).chain(a + k..x.rank() + k - 1).collect();
        let mut slice_sizes = x.shape.clone();
        slice_sizes[a] = 1;
        let props = format!(
            "dimension_numbers = #stablehlo.gather<offset_dims = {}, collapsed_slice_dims = [{a}], start_index_map = [{a}], index_vector_dim = {k}>, indices_are_sorted = false, slice_sizes = {}",
            dim_list(&offset_dims),
            i64_array(slice_sizes.iter().map(|&s| s as i64))
        );
        vec![cx.op1(
            "stablehlo.gather",
            &[&ins[0], &wrapped],
            &[x, idx],
            &props,
            &out[0],
        )]
    }
    fn batch(
        &self,
        args: &[Arg],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (y, d) = crate::interpreters::batching::take_batched(
            &crate::interpreters::batching::arg_array(&args[0]),
            dims[0],
            &crate::interpreters::batching::arg_array(&args[1]),
            dims[1],
            self.axis,
            axis_size,
        );
        (vec![y], vec![d])
    }
    as_any!();
}

/// `x` with `updates` added at `indices` along `axis` (repeated indices accumulate): the
/// transpose of [`Take`]. Operands: `x`, `indices`, `updates` of shape
/// `x[..axis] + indices.shape + x[axis+1..]`. Indices are wrapped and clamped as `Take` does.
#[derive(Debug, Clone)]
pub struct IndexAdd {
    pub axis: usize,
}

impl Primitive for IndexAdd {
    fn name(&self) -> &'static str {
        "index_add"
    }
    fn params_string(&self) -> String {
        format!("axis={}", self.axis)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 3)?;
        let (x, idx, u) = (&inputs[0], &inputs[1], &inputs[2]);
        let taken = Take { axis: self.axis }.abstract_eval(&inputs[..2])?;
        if !u.same_type(&taken[0]) {
            return Err(format!(
                "updates must be {} to go into {x} at {idx}",
                taken[0]
            ));
        }
        Ok(vec![x.clone()])
    }
    fn jvp(&self, p: &[Arg], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        if t[0].is_none() && t[2].is_none() {
            return vec![None];
        }
        let tx = or_zeros(&t[0], &p[0].aval());
        let tu = or_zeros(&t[2], &p[2].aval());
        vec![Some(bind1(
            self.clone(),
            &[Operand::Array(&tx), p[1].operand(), Operand::Array(&tu)],
        ))]
    }
    fn vjp(
        &self,
        p: &[Arg],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else {
            return vec![None, None, None];
        };
        let taken = wanted[2].then(|| {
            bind1(
                Take { axis: self.axis },
                &[Operand::Array(g), p[1].operand()],
            )
        });
        vec![Some(g.clone()).filter(|_| wanted[0]), None, taken]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let (x, idx, u) = (&in_avals[0], &in_avals[1], &in_avals[2]);
        let n = x.shape[self.axis];
        let wrapped = wrap_negative(cx, &ins[1], idx, n);
        // Clamp like gather does, so that index_add is exactly take's transpose (a scatter
        // would otherwise drop out-of-range updates).
        let s = Aval::scalar(idx.dtype);
        let lo = cx.splat(0.0, &s);
        let hi = cx.splat(n.saturating_sub(1) as f64, &s);
        let clamped = cx.op1(
            "stablehlo.clamp",
            &[&lo, &wrapped, &hi],
            &[&s, idx, &s],
            "",
            idx,
        );
        let k = idx.rank();
        let a = self.axis;
        let window_dims: Vec<usize> = (0..a).chain(a + k..x.rank() + k - 1).collect();
        let props = format!(
            "indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = {}, inserted_window_dims = [{a}], scatter_dims_to_operand_dims = [{a}], index_vector_dim = {k}>, unique_indices = false",
            dim_list(&window_dims)
        );
        let sx = Aval::scalar(x.dtype);
        let region = cx.region(&[sx.clone(), sx.clone()], |cx, r| {
            let op = if x.dtype == DType::Bool {
                "stablehlo.or"
            } else {
                "stablehlo.add"
            };
            vec![(
                cx.op1(op, &[&r[0], &r[1]], &[&sx, &sx], "", &sx),
                sx.clone(),
            )]
        });
        cx.op_with_regions(
            "stablehlo.scatter",
            &[&ins[0], &clamped, &ins[2]],
            &[x, idx, u],
            &props,
            &[region],
            &[&out[0]],
        )
    }
    fn batch(
        &self,
        args: &[Arg],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (y, d) = crate::interpreters::batching::index_add_batched(
            &args[0], dims[0], &args[1], dims[1], &args[2], dims[2], self.axis, axis_size,
        );
        (vec![y], vec![d])
    }
    as_any!();
}
