//! Indexing primitives: dynamic slices and gathers along an axis.

use super::arity;
use super::elementwise::{compare_props, CompareOp};
use super::elementwise::{Binary, BinaryOp, Select};
use super::shape::{BroadcastInDim, Reshape};
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::ir::Literal;
use crate::core::lower::{dim_list, i64_array, LowerCtx};
use crate::core::primitive::{as_any, tuple_str, Primitive};
use crate::core::sharding::PartitionDim;
use crate::core::sharding_types::{dims_of, elementwise_rule, SpecRule};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;
use crate::interpreters::ad::{or_zeros, zeros_like_aval};
use crate::interpreters::batching::{
    align, bind_batched, bound_array, common_bdim, move_bdim, moveaxis, shift_axis,
};
use crate::ops::where_;

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
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        let dims = dims_of(&ins[0]);
        unsliced(self.name(), &ins[0], &self.sizes)?;
        Ok(vec![dims])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let Some(t) = &t[0] else { return vec![None] };
        let starts: Vec<Array> = p[1..].iter().map(|a| a.to_array().into_owned()).collect();
        vec![Some(t.dynamic_slice(&starts, &self.sizes))]
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let mut out = vec![None; p.len()];
        if let Some(g) = &cts[0] {
            let starts: Vec<Array> = p[1..].iter().map(|a| a.to_array().into_owned()).collect();
            out[0] = Some(zeros_like_aval(&p[0].aval()).dynamic_update_slice(g, &starts));
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
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (starts, sd) = (&args[1..], &dims[1..]);
        if sd.iter().all(Option::is_none) {
            // One window for every example: the whole batch dim rides along.
            let b = dims[0].expect("the operand is batched");
            let dtype = starts.first().map_or(DType::I32, |s| s.aval().dtype);
            let zero = Literal::int(0, dtype);
            let mut ops: Vec<Operand> = starts.iter().map(Operand::borrowed).collect();
            ops.insert(b, Operand::Lit(zero));
            ops.insert(0, args[0].borrowed());
            let mut sizes = self.sizes.clone();
            sizes.insert(b, axis_size);
            return (vec![bind1(DynamicSlice { sizes }, &ops)], vec![Some(b)]);
        }
        // A window per example: a gather (as JAX does).
        let (y, d) = dynamic_slice_batched(&args[0], dims[0], starts, sd, &self.sizes, axis_size);
        (vec![y], vec![d])
    }
    as_any!();
}

/// `dynamic_slice` with start indices that differ between examples: the unbatched starts
/// slice first (one `dynamic_slice`), then each axis with batched starts gathers its
/// window, `start + iota(size)` per example.
fn dynamic_slice_batched(
    x: &Operand,
    xd: Option<usize>,
    starts: &[Operand],
    sd: &[Option<usize>],
    sizes: &[usize],
    axis_size: usize,
) -> (Array, Option<usize>) {
    let x = bound_array(x).into_owned();
    let mut per_example = x.shape().to_vec();
    if let Some(b) = xd {
        per_example.remove(b);
    }
    let (mut cur, mut cd) = (x, xd);
    let start_dtype = starts[0].aval().dtype;
    let static_part = (0..sizes.len()).any(|k| sd[k].is_none() && sizes[k] < per_example[k]);
    if static_part {
        let mut ops: Vec<Operand> = Vec::new();
        let mut slice_sizes = Vec::new();
        for k in 0..sizes.len() {
            if sd[k].is_none() {
                ops.push(starts[k].borrowed());
                slice_sizes.push(sizes[k]);
            } else {
                ops.push(Operand::Lit(Literal::int(0, starts[k].aval().dtype)));
                slice_sizes.push(per_example[k]);
            }
        }
        if let Some(b) = cd {
            ops.insert(b, Operand::Lit(Literal::int(0, start_dtype)));
            slice_sizes.insert(b, axis_size);
        }
        ops.insert(0, Operand::from(&cur));
        let sliced = bind1(DynamicSlice { sizes: slice_sizes }, &ops);
        cur = sliced;
    }
    for k in 0..sizes.len() {
        let (Some(d), n, size) = (sd[k], per_example[k], sizes[k]) else {
            continue;
        };
        if size == n {
            continue; // the start clamps to 0: nothing to gather
        }
        let s = clamped_start(&starts[k], Some(d), n, size);
        let idx = s.reshape([axis_size, 1]) + Array::iota(s.dtype(), &[1, size], 1);
        (cur, cd) = take_batched(&cur, cd, &idx, Some(0), k, axis_size);
    }
    (cur, cd)
}

/// A start index of a dynamic slice per example, as a `[axis_size]` vector (batched) or a
/// 0-d array (unbatched), in a dtype wide enough for `n`, clamped as XLA clamps starts so
/// that a slice of `size` stays inside an axis of size `n`.
fn clamped_start(start: &Operand, dim: Option<usize>, n: usize, size: usize) -> Array {
    let s = match dim {
        Some(d) => moveaxis(&bound_array(start), d, 0),
        None => bound_array(start).into_owned(),
    };
    let s = s.astype(index_dtype(s.dtype(), n));
    wrap_clamp(&s, n, n - size)
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
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        unsliced(self.name(), &ins[0], &ins[1].shape)?;
        let (operand, update) = (dims_of(&ins[0]), dims_of(&ins[1]));
        if update
            .iter()
            .zip(&operand)
            .any(|(u, o)| *u != PartitionDim::Replicated && u != o)
        {
            return Err(format!(
                "the update {} must be sharded as the operand {} is, or not at all",
                ins[1], ins[0]
            ));
        }
        Ok(vec![operand])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        if t[0].is_none() && t[1].is_none() {
            return vec![None];
        }
        let starts: Vec<Array> = p[2..].iter().map(|a| a.to_array().into_owned()).collect();
        let tx = or_zeros(&t[0], &p[0].aval());
        let tu = or_zeros(&t[1], &p[1].aval());
        vec![Some(tx.dynamic_update_slice(&tu, &starts))]
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let mut out = vec![None; p.len()];
        if let Some(g) = &cts[0] {
            let starts: Vec<Array> = p[2..].iter().map(|a| a.to_array().into_owned()).collect();
            let update = p[1].aval();
            out[0] = wanted[0].then(|| g.dynamic_update_slice(&zeros_like_aval(&update), &starts));
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
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (starts, sd) = (&args[2..], &dims[2..]);
        if sd.iter().all(Option::is_none) {
            // One place for every example: update the batch as a whole.
            let b = common_bdim(&dims[..2]);
            let x = move_bdim(&args[0], dims[0], b, axis_size);
            let u = move_bdim(&args[1], dims[1], b, axis_size);
            let dtype = starts.first().map_or(DType::I32, |s| s.aval().dtype);
            let zero = Literal::int(0, dtype);
            let mut ops: Vec<Operand> = starts.iter().map(Operand::borrowed).collect();
            ops.insert(b, Operand::Lit(zero));
            ops.insert(0, Operand::from(&u));
            ops.insert(0, Operand::from(&x));
            return (vec![bind1(DynamicUpdateSlice, &ops)], vec![Some(b)]);
        }
        // A place per example: gather the update into place and select it (JAX scatters).
        let (y, d) = dynamic_update_slice_batched(
            &args[0], dims[0], &args[1], dims[1], starts, sd, axis_size,
        );
        (vec![y], vec![d])
    }
    as_any!();
}

/// `dynamic_update_slice` with start indices that differ between examples, as a select:
/// along each axis the update is gathered into place (`update[j - start]`), and a mask
/// (`start <= j < start + size` on every axis) picks it over the operand.
#[allow(clippy::too_many_arguments)]
fn dynamic_update_slice_batched(
    x: &Operand,
    xd: Option<usize>,
    u: &Operand,
    ud: Option<usize>,
    starts: &[Operand],
    sd: &[Option<usize>],
    axis_size: usize,
) -> (Array, Option<usize>) {
    let per = |a: &Operand, d: Option<usize>| {
        let mut s = a.aval().shape;
        if let Some(d) = d {
            s.remove(d);
        }
        s
    };
    let (per_x, per_u) = (per(x, xd), per(u, ud));
    let (mut cur, mut cd) = (bound_array(u).into_owned(), ud);
    let mut mask: Option<(Array, Option<usize>)> = None;
    for k in 0..per_x.len() {
        let (n, size) = (per_x[k], per_u[k]);
        if size == n {
            continue; // the start clamps to 0: the update covers the axis
        }
        let s = clamped_start(&starts[k], sd[k], n, size);
        let (idx, m, md) = match sd[k] {
            Some(_) => {
                let s = s.reshape([axis_size, 1]);
                let j = Array::iota(s.dtype(), &[axis_size, n], 1);
                let idx = (&j - &s).maximum(0).minimum(size as i64 - 1);
                let inside = j.ge(&s).logical_and(j.lt(&s + size as i64));
                let mut shape = vec![axis_size];
                shape.extend(&per_x);
                let m = bind1(
                    BroadcastInDim {
                        shape,
                        dims: vec![0, k + 1],
                    },
                    &[Operand::from(&inside)],
                );
                (idx, m, Some(0))
            }
            None => {
                let j = Array::iota(s.dtype(), &[n], 0);
                let idx = (&j - &s).maximum(0).minimum(size as i64 - 1);
                let inside = j.ge(&s).logical_and(j.lt(&s + size as i64));
                let m = bind1(
                    BroadcastInDim {
                        shape: per_x.clone(),
                        dims: vec![k],
                    },
                    &[Operand::from(&inside)],
                );
                (idx, m, None)
            }
        };
        (cur, cd) = take_batched(&cur, cd, &idx, md, k, axis_size);
        mask = Some(match mask {
            None => (m, md),
            Some((prev, pd)) => {
                let (mut o, mut od) = bind_batched(
                    Binary(BinaryOp::And),
                    &[Operand::from(&prev), Operand::from(&m)],
                    &[pd, md],
                    axis_size,
                );
                (o.remove(0), od.remove(0))
            }
        });
    }
    let Some((mask, md)) = mask else {
        return (cur, cd);
    };
    let (mut o, mut od) = bind_batched(
        Select,
        &[Operand::from(&mask), Operand::from(&cur), x.borrowed()],
        &[md, cd, xd],
        axis_size,
    );
    (o.remove(0), od.remove(0))
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
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        // JAX's gather rule: the indexed dimension and the indices unsharded (else the
        // result's sharding is ambiguous, or needs collectives on the operands).
        let (x, idx) = (dims_of(&ins[0]), dims_of(&ins[1]));
        if x[self.axis] != PartitionDim::Replicated
            || idx.iter().any(|d| *d != PartitionDim::Replicated)
        {
            return Err(gather_ambiguous(&ins[0], &ins[1]));
        }
        let mut out = x[..self.axis].to_vec();
        out.extend(idx);
        out.extend_from_slice(&x[self.axis + 1..]);
        Ok(vec![out])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![t[0]
            .as_ref()
            .map(|t| bind1(self.clone(), &[Operand::from(t), p[1].borrowed()]))]
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else {
            return vec![None, None];
        };
        let base = zeros_like_aval(&p[0].aval());
        vec![
            Some(bind1(
                IndexAdd { axis: self.axis },
                &[Operand::from(&base), p[1].borrowed(), Operand::from(g)],
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
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (y, d) = take_batched(
            &args[0].to_array(),
            dims[0],
            &args[1].to_array(),
            dims[1],
            self.axis,
            axis_size,
        );
        (vec![y], vec![d])
    }
    as_any!();
}

/// `take(x, idx, axis)` for each example: `x` batched along `xd` (or not), `idx` along `id`.
/// Batched indices into a batched operand become one gather from the batch flattened
/// example-major; otherwise the batch rides along as an axis of the operand or the indices.
fn take_batched(
    x: &Array,
    xd: Option<usize>,
    idx: &Array,
    id: Option<usize>,
    axis: usize,
    axis_size: usize,
) -> (Array, Option<usize>) {
    let k = idx.rank() - id.is_some() as usize;
    let take = |x: &Array, idx: &Array, axis: usize| {
        bind1(Take { axis }, &[Operand::from(x), Operand::from(idx)])
    };
    match (xd, id) {
        (None, None) => (take(x, idx, axis), None),
        (None, Some(i)) => (take(x, idx, axis), Some(axis + i)),
        (Some(b), None) => {
            let a = shift_axis(axis, b);
            // The batch dim is before the taken axis, or after it and the index dims.
            (take(x, idx, a), Some(if b < a { b } else { b + k - 1 }))
        }
        (Some(b), Some(i)) => {
            // [B, n, rest..] flattened to [B*n, rest..]: row `e * n + j` is x[e][j].
            let x1 = moveaxis(&moveaxis(x, b, 0), axis + 1, 1);
            let n = x1.shape()[1];
            let mut flat_shape = vec![axis_size * n];
            flat_shape.extend_from_slice(&x1.shape()[2..]);
            let xf = bind1(Reshape { shape: flat_shape }, &[Operand::from(&x1)]);
            let y = take(&xf, &flat_indices(idx, i, n, axis_size), 0);
            // [B, K.., rest..] -> [B, rest[..axis], K.., rest[axis..]].
            let mut perm = vec![0];
            perm.extend(1 + k..1 + k + axis);
            perm.extend(1..1 + k);
            perm.extend(1 + k + axis..y.rank());
            (y.transpose(perm), Some(0))
        }
    }
}

/// The integer dtype indices are computed in: wide enough for `bound` and for every value
/// of `dtype`.
fn index_dtype(dtype: DType, bound: usize) -> DType {
    let narrow = matches!(dtype, DType::I8 | DType::U8 | DType::I32);
    if narrow && bound <= i32::MAX as usize {
        DType::I32
    } else {
        DType::I64
    }
}

/// Indices into an axis of size `n` made what XLA's gather uses: a negative index counts
/// from the end, then the index is clamped into `0..=hi`.
fn wrap_clamp(i: &Array, n: usize, hi: usize) -> Array {
    let wrapped = where_(i.lt(0), i + n as i64, i);
    wrapped.maximum(0).minimum(hi as i64)
}

/// Per-example indices `idx` (batched along `idim`) into an axis of size `n`, made indices
/// into the `axis_size * n` rows of the batch flattened example-major: wrapped and clamped
/// per example (as `take` does), then offset by `example * n`. Shape: `[axis_size, K...]`.
fn flat_indices(idx: &Array, idim: usize, n: usize, axis_size: usize) -> Array {
    let wide = index_dtype(idx.dtype(), axis_size * n.max(1));
    let i = moveaxis(idx, idim, 0).astype(wide);
    let i = wrap_clamp(&i, n, n.saturating_sub(1));
    let example = Array::iota(wide, i.shape(), 0);
    i + example * n as i64
}

/// `x` with `updates` added at `indices` along `axis` (repeated indices accumulate): the
/// transpose of [`Take`]. Operands: `x`, `indices`, `updates` of shape
/// `x[..axis] + indices.shape + x[axis+1..]`. Indices are wrapped and clamped as `Take` does.
#[derive(Debug, Clone)]
pub struct IndexAdd {
    pub axis: usize,
}

/// The JVP of a scatter-add of updates `p[2]` into `p[0]` at indices `p[1]`: linear in the
/// operand and the updates, so the same scatter-add of their tangents.
fn scatter_add_jvp(
    scatter: impl Primitive,
    p: &[Operand],
    t: &[Option<Array>],
) -> Vec<Option<Array>> {
    if t[0].is_none() && t[2].is_none() {
        return vec![None];
    }
    let tx = or_zeros(&t[0], &p[0].aval());
    let tu = or_zeros(&t[2], &p[2].aval());
    vec![Some(bind1(
        scatter,
        &[Operand::from(&tx), p[1].borrowed(), Operand::from(&tu)],
    ))]
}

/// The VJP of that scatter-add: the operand's cotangent passes through, the updates' is the
/// cotangent read back at the indices by `gather` (the scatter's transpose).
fn scatter_add_vjp(
    gather: impl Primitive,
    p: &[Operand],
    cts: &[Option<Array>],
    wanted: &[bool],
) -> Vec<Option<Array>> {
    let Some(g) = &cts[0] else {
        return vec![None, None, None];
    };
    let taken = wanted[2].then(|| bind1(gather, &[Operand::from(g), p[1].borrowed()]));
    vec![Some(g.clone()).filter(|_| wanted[0]), None, taken]
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
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        scatter_add_jvp(self.clone(), p, t)
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        scatter_add_vjp(Take { axis: self.axis }, p, cts, wanted)
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
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (y, d) = index_add_batched(
            &args[0], dims[0], &args[1], dims[1], &args[2], dims[2], self.axis, axis_size,
        );
        (vec![y], vec![d])
    }
    as_any!();
}

/// `index_add(x, idx, u, axis)` for each example, each operand batched or not (at least one
/// is). Batched indices scatter into the batch flattened example-major, so repeated indices
/// still accumulate within their example only.
#[allow(clippy::too_many_arguments)]
fn index_add_batched(
    x: &Operand,
    xd: Option<usize>,
    idx: &Operand,
    id: Option<usize>,
    u: &Operand,
    ud: Option<usize>,
    axis: usize,
    axis_size: usize,
) -> (Array, Option<usize>) {
    let idx_arr = bound_array(idx);
    match id {
        None => {
            let b = xd.unwrap_or(0);
            let xb = move_bdim(x, xd, b, axis_size);
            let a = shift_axis(axis, b);
            let k = idx_arr.rank();
            let ub = move_bdim(u, ud, if b < a { b } else { b + k - 1 }, axis_size);
            let y = bind1(
                IndexAdd { axis: a },
                &[
                    Operand::from(&xb),
                    Operand::from(&*idx_arr),
                    Operand::from(&ub),
                ],
            );
            (y, Some(b))
        }
        Some(i) => {
            let k = idx_arr.rank() - 1;
            let x1 = moveaxis(&move_bdim(x, xd, 0, axis_size), axis + 1, 1);
            let n = x1.shape()[1];
            let mut flat_shape = vec![axis_size * n];
            flat_shape.extend_from_slice(&x1.shape()[2..]);
            let xf = bind1(Reshape { shape: flat_shape }, &[Operand::from(&x1)]);
            // u: [B, rest[..axis], K.., rest[axis..]] -> [B, K.., rest..].
            let u0 = move_bdim(u, ud, 0, axis_size);
            let mut perm = vec![0];
            perm.extend(1 + axis..1 + axis + k);
            perm.extend(1..1 + axis);
            perm.extend(1 + axis + k..u0.rank());
            let u1 = u0.transpose(perm);
            let flat = flat_indices(&idx_arr, i, n, axis_size);
            let y = bind1(
                IndexAdd { axis: 0 },
                &[Operand::from(&xf), Operand::from(&flat), Operand::from(&u1)],
            );
            let y = bind1(
                Reshape {
                    shape: x1.shape().to_vec(),
                },
                &[Operand::from(&y)],
            );
            (moveaxis(&y, 1, axis + 1), Some(0))
        }
    }
}

/// Checks the operands of an along-axis gather or scatter: integer `idx` of `x`'s rank whose
/// dims other than `axis` are `x`'s (the Array layer broadcasts them first).
fn check_along_axis(op: &str, x: &Aval, idx: &Aval, axis: usize) -> Result<(), String> {
    if axis >= x.rank() {
        return Err(format!(
            "{op}: axis {axis} is out of range for rank {}",
            x.rank()
        ));
    }
    if !idx.dtype.is_int() {
        return Err(format!(
            "{op}: indices must be integers, got {}",
            idx.dtype.name()
        ));
    }
    let other_dims_agree = (0..x.rank()).all(|d| d == axis || idx.shape[d] == x.shape[d]);
    if idx.rank() != x.rank() || !other_dims_agree {
        return Err(format!(
            "{op}: indices {:?} must have the shape of the operand {:?} outside axis {axis}",
            idx.shape, x.shape
        ));
    }
    if x.shape[axis] == 0 && idx.size() > 0 {
        return Err(format!("{op}: cannot take from an empty axis {axis}"));
    }
    Ok(())
}

/// The along-axis gather's and scatter's dimension numbers: every dim but `axis` is a
/// batching dim of both the operand and the indices (JAX's `take_along_axis`), so
/// element `i` of the indices reads (or writes) the element of `x` at `i` with `axis` replaced
/// by its index. Empty lists are left out, as JAX prints them.
fn along_axis_dims(fields: &[(&str, Vec<usize>)], index_vector_dim: usize) -> String {
    let mut parts: Vec<String> = fields
        .iter()
        .filter(|(_, dims)| !dims.is_empty())
        .map(|(name, dims)| format!("{name} = {}", dim_list(dims)))
        .collect();
    parts.push(format!("index_vector_dim = {index_vector_dim}"));
    parts.join(", ")
}

/// The indices of an along-axis gather or scatter as XLA takes them: negative ones counted
/// from the end (as JAX), reshaped to `idx.shape + [1]` (one start index per element).
fn along_axis_indices(cx: &mut LowerCtx, idx: &str, aval: &Aval, n: usize) -> (String, Aval) {
    let wrapped = wrap_negative(cx, idx, aval, n);
    let mut shape = aval.shape.clone();
    shape.push(1);
    let column = aval.with_shape(shape);
    let reshaped = cx.op1("stablehlo.reshape", &[&wrapped], &[aval], "", &column);
    (reshaped, column)
}

/// `jnp.take_along_axis(x, idx, axis)` with `idx` of `x`'s shape outside `axis`: the result
/// has `idx`'s shape, element `i` being `x` at `i` with `axis` replaced by `idx[i]`. Lowered
/// as JAX lowers it, one gather whose batching dims are all dims but `axis` (which XLA fuses
/// better than a gather from the flattened operand). Negative indices count from the end;
/// indices still out of range are clamped (XLA's gather semantics; the Array layer's
/// [`Array::take_along_axis`] masks them with JAX's fill value).
#[derive(Debug, Clone)]
pub struct TakeAlongAxis {
    pub axis: usize,
}

impl TakeAlongAxis {
    fn bind(axis: usize, x: &Array, idx: &Array) -> Array {
        bind1(
            TakeAlongAxis { axis },
            &[Operand::from(x), Operand::from(idx)],
        )
    }
}

impl Primitive for TakeAlongAxis {
    fn name(&self) -> &'static str {
        "take_along_axis"
    }
    fn params_string(&self) -> String {
        format!("axis={}", self.axis)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        let (x, idx) = (&inputs[0], &inputs[1]);
        check_along_axis("take_along_axis", x, idx, self.axis)?;
        Ok(vec![x.with_shape(idx.shape.clone())])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        // The other dimensions pair the operand's with the indices' (JAX's batching dims):
        // they may be sharded alike, or on one side only.
        let (x, idx) = (dims_of(&ins[0]), dims_of(&ins[1]));
        if x[self.axis] != PartitionDim::Replicated || idx[self.axis] != PartitionDim::Replicated {
            return Err(gather_ambiguous(&ins[0], &ins[1]));
        }
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        vec![t[0]
            .as_ref()
            .map(|t| bind1(self.clone(), &[Operand::from(t), p[1].borrowed()]))]
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = cts[0].as_ref().filter(|_| wanted[0]) else {
            return vec![None, None];
        };
        let base = zeros_like_aval(&p[0].aval());
        vec![
            Some(bind1(
                ScatterAddAlongAxis { axis: self.axis },
                &[Operand::from(&base), p[1].borrowed(), Operand::from(g)],
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
        if out[0].size() == 0 {
            // No element to read (a gather's slice would not fit an empty operand).
            return vec![cx.splat(0.0, &out[0])];
        }
        let a = self.axis;
        let (indices, indices_aval) = along_axis_indices(cx, &ins[1], idx, x.shape[a]);
        let batching: Vec<usize> = (0..x.rank()).filter(|&d| d != a).collect();
        let dims = along_axis_dims(
            &[
                ("collapsed_slice_dims", vec![a]),
                ("operand_batching_dims", batching.clone()),
                ("start_indices_batching_dims", batching),
                ("start_index_map", vec![a]),
            ],
            x.rank(),
        );
        let props = format!(
            "dimension_numbers = #stablehlo.gather<{dims}>, indices_are_sorted = false, slice_sizes = {}",
            i64_array(std::iter::repeat_n(1, x.rank()))
        );
        vec![cx.op1(
            "stablehlo.gather",
            &[&ins[0], &indices],
            &[x, &indices_aval],
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
        // The batch dim becomes one more batching dim of the gather: both operands carry it
        // at the same place (an unbatched one repeated along it).
        let (xs, to) = align(args, dims, axis_size);
        let y = TakeAlongAxis::bind(shift_axis(self.axis, to), &xs[0], &xs[1]);
        (vec![y], vec![Some(to)])
    }
    as_any!();
}

/// `x` with `updates[i]` added at element `i` of `x` with `axis` replaced by `idx[i]`
/// (repeated indices accumulate): the transpose of [`TakeAlongAxis`], one scatter whose
/// batching dims are all dims but `axis` (JAX's transpose of `take_along_axis`). Operands:
/// `x`, `idx` and `updates` of `idx`'s shape and `x`'s dtype. Indices are wrapped and clamped
/// as [`TakeAlongAxis`] reads them, so that this is its exact transpose.
#[derive(Debug, Clone)]
pub struct ScatterAddAlongAxis {
    pub axis: usize,
}

impl Primitive for ScatterAddAlongAxis {
    fn name(&self) -> &'static str {
        "scatter_add_along_axis"
    }
    fn params_string(&self) -> String {
        format!("axis={}", self.axis)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 3)?;
        let (x, idx, u) = (&inputs[0], &inputs[1], &inputs[2]);
        check_along_axis("scatter_add_along_axis", x, idx, self.axis)?;
        if u.shape != idx.shape || u.dtype != x.dtype {
            return Err(format!(
                "scatter_add_along_axis: updates {u} must have the shape of the indices {idx} and the dtype of the operand {x}"
            ));
        }
        Ok(vec![x.clone()])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        scatter_add_jvp(self.clone(), p, t)
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        scatter_add_vjp(TakeAlongAxis { axis: self.axis }, p, cts, wanted)
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let (x, idx, u) = (&in_avals[0], &in_avals[1], &in_avals[2]);
        if u.size() == 0 {
            return vec![ins[0].clone()];
        }
        let a = self.axis;
        let n = x.shape[a];
        let (indices, indices_aval) = along_axis_indices(cx, &ins[1], idx, n);
        // Clamp as the gather does (a scatter would drop out-of-range updates instead).
        let s = Aval::scalar(idx.dtype);
        let lo = cx.splat(0.0, &s);
        let hi = cx.splat(n.saturating_sub(1) as f64, &s);
        let clamped = cx.op1(
            "stablehlo.clamp",
            &[&lo, &indices, &hi],
            &[&s, &indices_aval, &s],
            "",
            &indices_aval,
        );
        let batching: Vec<usize> = (0..x.rank()).filter(|&d| d != a).collect();
        let dims = along_axis_dims(
            &[
                ("inserted_window_dims", vec![a]),
                ("input_batching_dims", batching.clone()),
                ("scatter_indices_batching_dims", batching),
                ("scatter_dims_to_operand_dims", vec![a]),
            ],
            x.rank(),
        );
        let props = format!(
            "indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<{dims}>, unique_indices = false"
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
            &[x, &indices_aval, u],
            &props,
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
        let (xs, to) = align(args, dims, axis_size);
        let ops: Vec<Operand> = xs.iter().map(Operand::from).collect();
        let y = bind1(
            ScatterAddAlongAxis {
                axis: shift_axis(self.axis, to),
            },
            &ops,
        );
        (vec![y], vec![Some(to)])
    }
    as_any!();
}

/// Refuses a dynamic slice or update of `sizes` that cuts a sharded dimension of `operand`
/// (which device holds a piece is known only at run time).
fn unsliced(op: &str, operand: &Aval, sizes: &[usize]) -> Result<(), String> {
    let dims = dims_of(operand);
    match (0..dims.len())
        .find(|&i| dims[i] != PartitionDim::Replicated && sizes[i] != operand.shape[i])
    {
        Some(i) => Err(format!(
            "{op} cuts dimension {i} of {operand}, which is sharded; reshard it to unsharded \
             along that dimension first"
        )),
        None => Ok(()),
    }
}

/// The message of a gather whose result's sharding would be ambiguous (JAX's words).
fn gather_ambiguous(operand: &Aval, indices: &Aval) -> String {
    format!(
        "the result's sharding cannot be resolved unambiguously (or would need collectives on \
         the operands): the indexed dimension of the operand and the indices must be \
         unsharded; reshard them first. Got operand {operand} and indices {indices}"
    )
}
