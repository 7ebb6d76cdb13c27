//! XLA's general `gather` and `scatter`, with JAX's dimension numbers: the primitives that
//! numpy-style indexing (`x.index(s![..])`, `x.at(s![..])`) lowers to, as
//! `jax.lax.gather` / `jax.lax.scatter*` are for `x[...]` / `x.at[...]`.
//!
//! The index vector is always the last dim of the indices (JAX's convention). The gather
//! reads as XLA's does: a start index that would put the window out of bounds is clamped
//! (JAX's `clip` and `promise_in_bounds`); the scatter writes as XLA's does: an update whose
//! window would land out of bounds is dropped (JAX's `drop`). The Array layer builds the
//! other modes from these (`fill` masks the gather's result, `clip` clamps the scatter's
//! indices), as JAX lowers them.

use super::shape::BroadcastInDim;
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{dim_list, i64_array, LowerCtx};
use crate::core::primitive::{as_any, Primitive};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;
use crate::interpreters::ad::{or_zeros, zeros_like_aval};
use crate::interpreters::batching::{bound_array, move_bdim};
use crate::ops::where_;

/// `lax.GatherDimensionNumbers` (the index vector dim is the indices' last).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GatherDims {
    /// Output dims that hold the window (the dims of the slice not collapsed).
    pub offset_dims: Vec<usize>,
    /// Operand dims whose slice size is 1 and that the output drops.
    pub collapsed_slice_dims: Vec<usize>,
    /// For each component of an index vector, the operand dim it starts.
    pub start_index_map: Vec<usize>,
    /// Operand dims paired with `start_indices_batching_dims` (one example each).
    pub operand_batching_dims: Vec<usize>,
    /// Indices dims paired with `operand_batching_dims`.
    pub start_indices_batching_dims: Vec<usize>,
}

/// `lax.ScatterDimensionNumbers` (the index vector dim is the indices' last).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScatterDims {
    /// Updates dims that hold the window.
    pub update_window_dims: Vec<usize>,
    /// Operand dims of window size 1 that the updates leave out.
    pub inserted_window_dims: Vec<usize>,
    /// For each component of an index vector, the operand dim it starts.
    pub scatter_dims_to_operand_dims: Vec<usize>,
    /// Operand dims paired with `scatter_indices_batching_dims`.
    pub operand_batching_dims: Vec<usize>,
    /// Indices dims paired with `operand_batching_dims`.
    pub scatter_indices_batching_dims: Vec<usize>,
}

impl GatherDims {
    /// The scatter that writes where this gather reads (its transpose).
    pub fn to_scatter(&self) -> ScatterDims {
        ScatterDims {
            update_window_dims: self.offset_dims.clone(),
            inserted_window_dims: self.collapsed_slice_dims.clone(),
            scatter_dims_to_operand_dims: self.start_index_map.clone(),
            operand_batching_dims: self.operand_batching_dims.clone(),
            scatter_indices_batching_dims: self.start_indices_batching_dims.clone(),
        }
    }
}

impl ScatterDims {
    /// The gather that reads where this scatter writes.
    pub fn to_gather(&self) -> GatherDims {
        GatherDims {
            offset_dims: self.update_window_dims.clone(),
            collapsed_slice_dims: self.inserted_window_dims.clone(),
            start_index_map: self.scatter_dims_to_operand_dims.clone(),
            operand_batching_dims: self.operand_batching_dims.clone(),
            start_indices_batching_dims: self.scatter_indices_batching_dims.clone(),
        }
    }

    /// The window size along each operand dim, read off the updates' shape.
    pub fn window_sizes(&self, operand_rank: usize, updates_shape: &[usize]) -> Vec<usize> {
        let mut pos = 0;
        (0..operand_rank)
            .map(|d| {
                if self.inserted_window_dims.contains(&d) || self.operand_batching_dims.contains(&d)
                {
                    1
                } else {
                    let s = updates_shape[self.update_window_dims[pos]];
                    pos += 1;
                    s
                }
            })
            .collect()
    }
}

/// Printed as MLIR prints the attribute: empty lists left out.
fn dims_attr(fields: &[(&str, &[usize])], index_vector_dim: usize) -> String {
    let mut parts: Vec<String> = fields
        .iter()
        .filter(|(_, d)| !d.is_empty())
        .map(|(n, d)| format!("{n} = {}", dim_list(d)))
        .collect();
    parts.push(format!("index_vector_dim = {index_vector_dim}"));
    parts.join(", ")
}

fn shifted(dims: &[usize]) -> Vec<usize> {
    dims.iter().map(|d| d + 1).collect()
}

fn with_front(dims: &[usize]) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(shifted(dims));
    v
}

/// How a gather's out-of-bounds starts were meant: both read as XLA's gather reads (clamped);
/// they differ in the transpose, as JAX's: a `Clip` gather's cotangent goes to the clamped
/// place, a `PromiseInBounds` one's is dropped (the scatter's own rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatherMode {
    Clip,
    PromiseInBounds,
}

/// `lax.gather(x, indices, dims, slice_sizes)` with XLA's clamping of out-of-bounds starts.
#[derive(Debug, Clone)]
pub struct Gather {
    pub dims: GatherDims,
    pub slice_sizes: Vec<usize>,
    pub mode: GatherMode,
    pub indices_are_sorted: bool,
    pub unique_indices: bool,
}

impl Gather {
    /// Binds the gather of `x` at `indices`.
    pub fn bind(&self, x: &Array, indices: &Array) -> Array {
        bind1(self.clone(), &[Operand::from(x), Operand::from(indices)])
    }
}

/// The output shape of a gather, or what is wrong.
fn gather_shape(
    x: &Aval,
    idx: &Aval,
    d: &GatherDims,
    slice_sizes: &[usize],
) -> Result<Vec<usize>, String> {
    if !idx.dtype.is_int() || idx.rank() == 0 {
        return Err(format!("indices must be integers of rank >= 1, got {idx}"));
    }
    let k = idx.shape[idx.rank() - 1];
    if k != d.start_index_map.len() {
        return Err(format!(
            "the index vector has {k} components but start_index_map {:?} names {}",
            d.start_index_map,
            d.start_index_map.len()
        ));
    }
    if slice_sizes.len() != x.rank() {
        return Err(format!(
            "slice_sizes {slice_sizes:?} must have one size per operand dim"
        ));
    }
    if let Some(i) = (0..x.rank()).find(|&i| slice_sizes[i] > x.shape[i]) {
        return Err(format!(
            "slice size {} does not fit dim {i} of size {}",
            slice_sizes[i], x.shape[i]
        ));
    }
    let dropped =
        |i: &usize| d.collapsed_slice_dims.contains(i) || d.operand_batching_dims.contains(i);
    if d.collapsed_slice_dims
        .iter()
        .chain(&d.operand_batching_dims)
        .any(|&i| i >= x.rank() || slice_sizes[i] != 1)
        || d.start_index_map.iter().any(|&i| i >= x.rank())
    {
        return Err(format!("dimension numbers {d:?} do not fit {x}"));
    }
    let window: Vec<usize> = (0..x.rank())
        .filter(|i| !dropped(i))
        .map(|i| slice_sizes[i])
        .collect();
    if window.len() != d.offset_dims.len() {
        return Err(format!(
            "offset_dims {:?} must name the {} window dims",
            d.offset_dims,
            window.len()
        ));
    }
    let batch = &idx.shape[..idx.rank() - 1];
    let rank = batch.len() + window.len();
    let (mut b, mut w) = (batch.iter(), window.iter());
    Ok((0..rank)
        .map(|i| {
            if d.offset_dims.contains(&i) {
                *w.next().unwrap()
            } else {
                *b.next().unwrap()
            }
        })
        .collect())
}

impl Primitive for Gather {
    fn name(&self) -> &'static str {
        "gather"
    }
    fn params_string(&self) -> String {
        format!(
            "dimension_numbers={:?} slice_sizes={:?}",
            self.dims, self.slice_sizes
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        super::arity(inputs, 2)?;
        let shape = gather_shape(&inputs[0], &inputs[1], &self.dims, &self.slice_sizes)?;
        Ok(vec![inputs[0].with_shape(shape)])
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
        let x = p[0].aval();
        let idx = p[1].to_array();
        // A clipping gather read the clamped places: its cotangent goes there too.
        let idx = match self.mode {
            GatherMode::Clip => clamp_starts(
                &idx,
                &x.shape,
                &self.dims.start_index_map,
                &self.slice_sizes,
            ),
            GatherMode::PromiseInBounds => idx.into_owned(),
        };
        let scatter = Scatter {
            op: ScatterOp::Add,
            dims: self.dims.to_scatter(),
            indices_are_sorted: self.indices_are_sorted,
            unique_indices: self.unique_indices,
            promise_in_bounds: self.mode == GatherMode::PromiseInBounds,
        };
        vec![Some(scatter.bind(&zeros_like_aval(&x), &idx, g)), None]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        if out[0].size() == 0 || in_avals[0].size() == 0 {
            return vec![cx.splat(0.0, &out[0])];
        }
        let d = &self.dims;
        let dims = dims_attr(
            &[
                ("offset_dims", &d.offset_dims),
                ("collapsed_slice_dims", &d.collapsed_slice_dims),
                ("operand_batching_dims", &d.operand_batching_dims),
                (
                    "start_indices_batching_dims",
                    &d.start_indices_batching_dims,
                ),
                ("start_index_map", &d.start_index_map),
            ],
            in_avals[1].rank() - 1,
        );
        let props = format!(
            "dimension_numbers = #stablehlo.gather<{dims}>, indices_are_sorted = {}, slice_sizes = {}",
            self.indices_are_sorted,
            i64_array(self.slice_sizes.iter().map(|&s| s as i64))
        );
        vec![cx.op1(
            "stablehlo.gather",
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
        let d = &self.dims;
        let (dims_new, sizes, x, idx) = match (dims[0], dims[1]) {
            (Some(_), None) => {
                // One window per example: the batch dim is a window dim, kept whole.
                let mut sizes = vec![axis_size];
                sizes.extend(&self.slice_sizes);
                let nd = GatherDims {
                    offset_dims: with_front(&d.offset_dims),
                    collapsed_slice_dims: shifted(&d.collapsed_slice_dims),
                    start_index_map: shifted(&d.start_index_map),
                    operand_batching_dims: shifted(&d.operand_batching_dims),
                    start_indices_batching_dims: d.start_indices_batching_dims.clone(),
                };
                let x = move_bdim(&args[0], dims[0], 0, axis_size);
                (nd, sizes, x, bound_array(&args[1]).into_owned())
            }
            (None, Some(_)) => {
                // Indices per example: the batch dim is one more index batch dim, which
                // lands first in the output (its first non-window dim).
                let nd = GatherDims {
                    offset_dims: shifted(&d.offset_dims),
                    start_indices_batching_dims: shifted(&d.start_indices_batching_dims),
                    ..d.clone()
                };
                let idx = move_bdim(&args[1], dims[1], 0, axis_size);
                let x = bound_array(&args[0]).into_owned();
                (nd, self.slice_sizes.clone(), x, idx)
            }
            _ => {
                // Both: the batch dim pairs the operand's with the indices'.
                let mut sizes = vec![1];
                sizes.extend(&self.slice_sizes);
                let nd = GatherDims {
                    offset_dims: shifted(&d.offset_dims),
                    collapsed_slice_dims: shifted(&d.collapsed_slice_dims),
                    start_index_map: shifted(&d.start_index_map),
                    operand_batching_dims: with_front(&d.operand_batching_dims),
                    start_indices_batching_dims: with_front(&d.start_indices_batching_dims),
                };
                let x = move_bdim(&args[0], dims[0], 0, axis_size);
                let idx = move_bdim(&args[1], dims[1], 0, axis_size);
                (nd, sizes, x, idx)
            }
        };
        let g = Gather {
            dims: dims_new,
            slice_sizes: sizes,
            ..self.clone()
        };
        (vec![g.bind(&x, &idx)], vec![Some(0)])
    }
    as_any!();
}

/// Start indices (index vector last) clamped so that a window of `sizes` starting there
/// stays inside `shape`, as XLA's gather clamps them.
pub fn clamp_starts(idx: &Array, shape: &[usize], map: &[usize], sizes: &[usize]) -> Array {
    let k = map.len();
    if k == 0 {
        return idx.clone();
    }
    let hi: Vec<i64> = map.iter().map(|&d| (shape[d] - sizes[d]) as i64).collect();
    let hi = Array::from_vec(hi, &[k]).astype(idx.dtype());
    idx.maximum(0).minimum(&hi)
}

/// Whether each index vector puts its window of `sizes` inside `shape` (a bool array of the
/// indices' batch shape): the mask of JAX's `fill` gather and `drop` scatter.
pub fn in_bounds(idx: &Array, shape: &[usize], map: &[usize], sizes: &[usize]) -> Array {
    let k = map.len();
    let batch = idx.shape()[..idx.rank() - 1].to_vec();
    if k == 0 {
        return Array::ones(&batch, DType::Bool);
    }
    let hi: Vec<i64> = map
        .iter()
        .map(|&d| shape[d] as i64 - sizes[d] as i64)
        .collect();
    let wide = idx.astype(DType::I64);
    let hi = Array::from_vec(hi, &[k]);
    let ok = wide.ge(0).logical_and(wide.le(&hi));
    // All components in range: the minimum over the index vector.
    ok.astype(DType::I32)
        .min(Some(idx.rank() as i64 - 1), false)
        .astype(DType::Bool)
}

/// A mask over the indices' batch shape broadcast to the shape of a gather's output (or a
/// scatter's updates), whose non-window dims are the batch dims in order.
pub fn broadcast_mask(mask: &Array, out_shape: &[usize], window_dims: &[usize]) -> Array {
    let dims: Vec<usize> = (0..out_shape.len())
        .filter(|d| !window_dims.contains(d))
        .collect();
    bind1(
        BroadcastInDim {
            shape: out_shape.to_vec(),
            dims,
        },
        &[Operand::from(mask)],
    )
}

/// How a scatter's update combines with the value it lands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScatterOp {
    Set,
    Add,
    Mul,
    Min,
    Max,
}

/// `lax.scatter*(x, indices, updates, dims)`: XLA's scatter, which drops an update whose
/// window lands out of bounds. Repeated indices all apply (in an unspecified order for `Set`).
#[derive(Debug, Clone)]
pub struct Scatter {
    pub op: ScatterOp,
    pub dims: ScatterDims,
    pub indices_are_sorted: bool,
    pub unique_indices: bool,
    /// The caller promised every window fits (JAX's `PROMISE_IN_BOUNDS`). The values are
    /// the same; the transpose differs, as JAX's: the updates' cotangent is read back with
    /// XLA's clamping gather rather than zeroed where an update was dropped.
    pub promise_in_bounds: bool,
}

impl Scatter {
    /// Binds the scatter of `u` into `x` at `idx`.
    pub fn bind(&self, x: &Array, idx: &Array, u: &Array) -> Array {
        bind1(
            self.clone(),
            &[Operand::from(x), Operand::from(idx), Operand::from(u)],
        )
    }

    fn with_op(&self, op: ScatterOp) -> Scatter {
        Scatter { op, ..self.clone() }
    }

    /// The gather reading the updates' places of an array shaped as the operand.
    fn gather_back(&self, x_shape: &[usize], u_shape: &[usize]) -> Gather {
        Gather {
            dims: self.dims.to_gather(),
            slice_sizes: self.dims.window_sizes(x_shape.len(), u_shape),
            mode: GatherMode::PromiseInBounds,
            indices_are_sorted: self.indices_are_sorted,
            unique_indices: self.unique_indices,
        }
    }

    /// Whether each update element lands in bounds (updates-shaped).
    fn landed(&self, x_shape: &[usize], idx: &Array, u_shape: &[usize]) -> Array {
        let sizes = self.dims.window_sizes(x_shape.len(), u_shape);
        let m = in_bounds(
            idx,
            x_shape,
            &self.dims.scatter_dims_to_operand_dims,
            &sizes,
        );
        broadcast_mask(&m, u_shape, &self.dims.update_window_dims)
    }

    /// `x` read at each update's place (updates-shaped), zero where the update was dropped:
    /// the transpose of a scatter-add.
    fn read_back(&self, x: &Array, idx: &Array, u_shape: &[usize]) -> Array {
        let g = self.gather_back(x.shape(), u_shape).bind(x, idx);
        if self.promise_in_bounds {
            return g;
        }
        where_(
            self.landed(x.shape(), idx, u_shape),
            &g,
            Array::zeros(&[], x.dtype()),
        )
    }

    /// For `Set` with repeated indices, which update won each place: `1..=m` scattered by
    /// the same scatter (so the same ones win) and read back. Returns (a mask over the
    /// updates that won, a mask over `x` of the places no update reached): JAX's rule.
    fn set_winners(&self, x_shape: &[usize], idx: &Array, u_shape: &[usize]) -> (Array, Array) {
        let m: usize = u_shape.iter().product();
        let ids = (Array::iota(DType::I32, &[m], 0).add(1)).reshape(u_shape);
        let landed = self.bind(&Array::zeros(x_shape, DType::I32), idx, &ids);
        let won = self.read_back(&landed, idx, u_shape).eq(&ids);
        (won, landed.eq(0))
    }

    /// JAX's derivative of a scatter min/max: the final value came from `x` and/or from the
    /// updates equal to it, and the tangent is split evenly between them. Returns the
    /// coefficients of `x`'s tangent (x-shaped) and of each update's (updates-shaped).
    fn extremal_coefs(&self, x: &Array, idx: &Array, u: &Array, out: &Array) -> (Array, Array) {
        let dt = x.dtype();
        let kept = out.eq(x).astype(dt);
        let won = self
            .gather_back(x.shape(), u.shape())
            .bind(out, idx)
            .eq(u)
            .logical_and(self.landed(x.shape(), idx, u.shape()));
        let winners =
            self.with_op(ScatterOp::Add)
                .bind(&Array::zeros(x.shape(), dt), idx, &won.astype(dt));
        let share = (&winners + &kept).maximum(1.0).powi(-1);
        let u_coef = where_(
            &won,
            self.gather_back(x.shape(), u.shape()).bind(&share, idx),
            Array::zeros(&[], dt),
        );
        (&kept * &share, u_coef)
    }
}

fn mul_grad_unsupported() -> ! {
    panic!(
        "scatter_mul: differentiation with respect to the updates needs unique indices \
         (`unique_indices`, as in JAX)"
    )
}

impl Primitive for Scatter {
    fn name(&self) -> &'static str {
        match self.op {
            ScatterOp::Set => "scatter",
            ScatterOp::Add => "scatter_add",
            ScatterOp::Mul => "scatter_mul",
            ScatterOp::Min => "scatter_min",
            ScatterOp::Max => "scatter_max",
        }
    }
    fn params_string(&self) -> String {
        format!("dimension_numbers={:?}", self.dims)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        super::arity(inputs, 3)?;
        let (x, idx, u) = (&inputs[0], &inputs[1], &inputs[2]);
        if u.dtype != x.dtype {
            return Err(format!("updates {u} must have the operand's dtype ({x})"));
        }
        let d = &self.dims;
        if u.rank() < d.update_window_dims.len() {
            return Err(format!("updates {u} are missing window dims {d:?}"));
        }
        let sizes = d.window_sizes(x.rank(), &u.shape);
        let want = gather_shape(x, idx, &d.to_gather(), &sizes)?;
        if want != u.shape {
            return Err(format!(
                "updates {u} must have shape {want:?} to go into {x} at {idx}"
            ));
        }
        Ok(vec![x.clone()])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        if t[0].is_none() && t[2].is_none() {
            return vec![None];
        }
        let (x, idx, u) = (p[0].to_array(), p[1].to_array(), p[2].to_array());
        let tx = or_zeros(&t[0], &x.aval().clone());
        let tu = or_zeros(&t[2], &u.aval().clone());
        let out = match self.op {
            // Linear, and for Set the tangent scatter picks the same winners as the primal.
            ScatterOp::Add | ScatterOp::Set => self.bind(&tx, &idx, &tu),
            ScatterOp::Mul if t[2].is_none() => self.bind(&tx, &idx, &u),
            // Each place is multiplied by at most one update: d(x u)/du = x, JAX's rule.
            ScatterOp::Mul if self.unique_indices => {
                let placed = self.with_op(ScatterOp::Add).bind(
                    &Array::zeros(x.shape(), tu.dtype()),
                    &idx,
                    &tu,
                );
                self.bind(&tx, &idx, &u) + x.as_ref() * &placed
            }
            ScatterOp::Mul => mul_grad_unsupported(),
            ScatterOp::Min | ScatterOp::Max => {
                let (x_coef, u_coef) = self.extremal_coefs(&x, &idx, &u, &outs[0]);
                let from_u = self.with_op(ScatterOp::Add).bind(
                    &Array::zeros(x.shape(), tu.dtype()),
                    &idx,
                    &(&u_coef * &tu),
                );
                &x_coef * &tx + from_u
            }
        };
        vec![Some(out)]
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else {
            return vec![None, None, None];
        };
        let (x, idx, u) = (p[0].to_array(), p[1].to_array(), p[2].to_array());
        let zero = || Array::zeros(&[], g.dtype());
        let (ct_x, ct_u) = match self.op {
            ScatterOp::Add => (g.clone(), self.read_back(g, &idx, u.shape())),
            ScatterOp::Set => {
                let (won, untouched) = self.set_winners(x.shape(), &idx, u.shape());
                (
                    where_(&untouched, g, zero()),
                    where_(&won, self.read_back(g, &idx, u.shape()), zero()),
                )
            }
            ScatterOp::Mul => {
                if wanted[2] && !self.unique_indices {
                    mul_grad_unsupported();
                }
                let ones = Array::ones(x.shape(), x.dtype());
                let ct_u = if wanted[2] {
                    self.read_back(&(g * x.as_ref()), &idx, u.shape())
                } else {
                    zero()
                };
                (g * &self.bind(&ones, &idx, &u), ct_u)
            }
            ScatterOp::Min | ScatterOp::Max => {
                let (x_coef, u_coef) = self.extremal_coefs(&x, &idx, &u, &outs[0]);
                (&x_coef * g, &u_coef * &self.read_back(g, &idx, u.shape()))
            }
        };
        vec![
            Some(ct_x).filter(|_| wanted[0]),
            None,
            Some(ct_u).filter(|_| wanted[2]),
        ]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let (x, idx, u) = (&in_avals[0], &in_avals[1], &in_avals[2]);
        if u.size() == 0 || x.size() == 0 {
            return vec![ins[0].clone()];
        }
        let d = &self.dims;
        let dims = dims_attr(
            &[
                ("update_window_dims", &d.update_window_dims),
                ("inserted_window_dims", &d.inserted_window_dims),
                ("input_batching_dims", &d.operand_batching_dims),
                (
                    "scatter_indices_batching_dims",
                    &d.scatter_indices_batching_dims,
                ),
                (
                    "scatter_dims_to_operand_dims",
                    &d.scatter_dims_to_operand_dims,
                ),
            ],
            idx.rank() - 1,
        );
        let props = format!(
            "indices_are_sorted = {}, scatter_dimension_numbers = #stablehlo.scatter<{dims}>, unique_indices = {}",
            self.indices_are_sorted, self.unique_indices
        );
        let sx = Aval::scalar(x.dtype);
        let op = self.op;
        let region = cx.region(&[sx.clone(), sx.clone()], |cx, r| {
            let bool_ = x.dtype == DType::Bool;
            let name = match op {
                ScatterOp::Set => return vec![(r[1].clone(), sx.clone())],
                ScatterOp::Add if bool_ => "stablehlo.or",
                ScatterOp::Add => "stablehlo.add",
                ScatterOp::Mul if bool_ => "stablehlo.and",
                ScatterOp::Mul => "stablehlo.multiply",
                ScatterOp::Min if bool_ => "stablehlo.and",
                ScatterOp::Max if bool_ => "stablehlo.or",
                ScatterOp::Min => "stablehlo.minimum",
                ScatterOp::Max => "stablehlo.maximum",
            };
            vec![(
                cx.op1(name, &[&r[0], &r[1]], &[&sx, &sx], "", &sx),
                sx.clone(),
            )]
        });
        cx.op_with_regions(
            "stablehlo.scatter",
            &[&ins[0], &ins[1], &ins[2]],
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
        // Every operand batched at 0; the batch dim is one more batching dim of the
        // operand and the indices, and the first scatter dim of the updates.
        let x = move_bdim(&args[0], dims[0], 0, axis_size);
        let idx = move_bdim(&args[1], dims[1], 0, axis_size);
        let u = move_bdim(&args[2], dims[2], 0, axis_size);
        let d = &self.dims;
        let s = Scatter {
            dims: ScatterDims {
                update_window_dims: shifted(&d.update_window_dims),
                inserted_window_dims: shifted(&d.inserted_window_dims),
                scatter_dims_to_operand_dims: shifted(&d.scatter_dims_to_operand_dims),
                operand_batching_dims: with_front(&d.operand_batching_dims),
                scatter_indices_batching_dims: with_front(&d.scatter_indices_batching_dims),
            },
            ..self.clone()
        };
        (vec![s.bind(&x, &idx, &u)], vec![Some(0)])
    }
    as_any!();
}
