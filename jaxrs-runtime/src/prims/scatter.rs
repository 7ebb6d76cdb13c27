//! Scatter updates along axis 0 (`x.at[idx].set/add/mul/min/max(u)`): one primitive, lowered
//! to `stablehlo.scatter` with the update's region. Out-of-range indices are dropped, as JAX's
//! default mode for scatters does (the Array layer has already made negative ones count from
//! the end).

use super::index::Take;
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{dim_list, LowerCtx};
use crate::core::primitive::{as_any, Primitive};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;
use crate::interpreters::ad::or_zeros;
use crate::interpreters::batching::{bound_array, move_bdim};
use crate::ops::where_;

/// How an update combines with the value it lands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScatterOp {
    Set,
    Add,
    Mul,
    Min,
    Max,
}

/// `x` with `updates[i..]` combined into row `indices[i..]` of axis 0. Operands: `x` of shape
/// `[n, rest..]`, `indices` (int32) of any shape `I`, `updates` of shape `I + rest`, `x`'s
/// dtype. Repeated indices all apply (in an unspecified order for `Set`).
#[derive(Debug, Clone)]
pub struct Scatter {
    pub op: ScatterOp,
}

impl Scatter {
    fn bind(op: ScatterOp, x: &Array, idx: &Array, u: &Array) -> Array {
        bind1(
            Scatter { op },
            &[Operand::from(x), Operand::from(idx), Operand::from(u)],
        )
    }
}

/// Whether each index lands in `0..n`, shaped to broadcast against `updates` (`I + [1]..`).
fn in_range(idx: &Array, n: usize, updates_rank: usize) -> Array {
    let ok = idx.ge(0).logical_and(idx.lt(n as i64));
    let mut shape = idx.shape().to_vec();
    shape.resize(updates_rank, 1);
    ok.reshape(shape)
}

/// The rows of `x` at `idx` (updates-shaped), zero where the index is out of range: the
/// transpose of a scatter-add that drops those updates.
fn gather_rows(x: &Array, idx: &Array) -> Array {
    let n = x.shape()[0];
    let clamped = idx.maximum(0).minimum(n.saturating_sub(1) as i64);
    let rows = bind1(
        Take { axis: 0 },
        &[Operand::from(x), Operand::from(&clamped)],
    );
    where_(
        in_range(idx, n, rows.rank()),
        &rows,
        Array::zeros(&[], x.dtype()),
    )
}

/// For `Set` with repeated indices, which update won each row: `1..=m` scattered by the same
/// scatter (so the same one wins) and read back; returns (a mask over the updates that won, a
/// mask over `x` of the rows no update reached). JAX's rule for `scatter`'s derivative.
fn set_winners(x_shape: &[usize], idx: &Array, u_shape: &[usize]) -> (Array, Array) {
    let m: usize = u_shape.iter().product();
    let ids = (Array::iota(DType::I32, &[m], 0).add(1)).reshape(u_shape);
    let landed = Scatter::bind(
        ScatterOp::Set,
        &Array::zeros(x_shape, DType::I32),
        idx,
        &ids,
    );
    let won = gather_rows(&landed, idx).eq(&ids);
    (won, landed.eq(0))
}

/// JAX's derivative of a scatter min/max: the row's final value came from `x` and/or from
/// the updates equal to it, and the tangent is split evenly between all of them. Returns the
/// coefficient of `x`'s tangent (x-shaped) and of each update's (updates-shaped).
fn extremal_coefs(x: &Array, idx: &Array, u: &Array, out: &Array) -> (Array, Array) {
    let dt = x.dtype();
    let kept = out.eq(x).astype(dt);
    let won = gather_rows(out, idx)
        .eq(u)
        .logical_and(in_range(idx, x.shape()[0], u.rank()));
    let winners = Scatter::bind(
        ScatterOp::Add,
        &Array::zeros(x.shape(), dt),
        idx,
        &won.astype(dt),
    );
    let share = (&winners + &kept).maximum(1.0).powi(-1);
    let u_coef = where_(&won, gather_rows(&share, idx), Array::zeros(&[], dt));
    (&kept * &share, u_coef)
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
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        super::arity(inputs, 3)?;
        let (x, idx, u) = (&inputs[0], &inputs[1], &inputs[2]);
        if x.rank() == 0 {
            return Err("the operand must have at least 1 dimension".into());
        }
        if idx.dtype != DType::I32 {
            return Err("indices must be int32".into());
        }
        let mut want = idx.shape.clone();
        want.extend_from_slice(&x.shape[1..]);
        if u.shape != want || u.dtype != x.dtype {
            return Err(format!(
                "updates must be {}{:?} to go into {x} at {idx}",
                x.dtype.short_name(),
                want
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
            ScatterOp::Add | ScatterOp::Set => Scatter::bind(self.op, &tx, &idx, &tu),
            ScatterOp::Mul if t[2].is_none() => Scatter::bind(ScatterOp::Mul, &tx, &idx, &u),
            ScatterOp::Min | ScatterOp::Max => {
                let (x_coef, u_coef) = extremal_coefs(&x, &idx, &u, &outs[0]);
                let from_u = Scatter::bind(
                    ScatterOp::Add,
                    &Array::zeros(x.shape(), tu.dtype()),
                    &idx,
                    &(&u_coef * &tu),
                );
                &x_coef * &tx + from_u
            }
            ScatterOp::Mul => panic!(
                "scatter_mul: differentiation with respect to the updates is not supported \
                 (JAX supports it only for unique indices)"
            ),
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
            ScatterOp::Add => (g.clone(), gather_rows(g, &idx)),
            ScatterOp::Set => {
                let (won, untouched) = set_winners(x.shape(), &idx, u.shape());
                (
                    where_(&untouched, g, zero()),
                    where_(&won, gather_rows(g, &idx), zero()),
                )
            }
            ScatterOp::Mul => {
                if wanted[2] {
                    panic!(
                        "scatter_mul: differentiation with respect to the updates is not \
                         supported (JAX supports it only for unique indices)"
                    );
                }
                let ones = Array::ones(x.shape(), x.dtype());
                (g * &Scatter::bind(ScatterOp::Mul, &ones, &idx, &u), zero())
            }
            ScatterOp::Min | ScatterOp::Max => {
                let (x_coef, u_coef) = extremal_coefs(&x, &idx, &u, &outs[0]);
                (&x_coef * g, &u_coef * &gather_rows(g, &idx))
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
        let k = idx.rank();
        let window_dims: Vec<usize> = (k..k + x.rank() - 1).collect();
        let props = format!(
            "indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = {}, inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = {k}>, unique_indices = false",
            dim_list(&window_dims)
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
        // Every operand batched at 0, then the batch folded into axis 0: example b's row i is
        // row b * n + i, and an out-of-range index stays out of range (dropped).
        let x = move_bdim(&args[0], dims[0], 0, axis_size);
        let idx_rank = bound_array(&args[1]).rank() - usize::from(dims[1].is_some());
        let idx = move_bdim(&args[1], dims[1], 0, axis_size);
        let u = move_bdim(&args[2], dims[2], 0, axis_size);
        let n = x.shape()[1];
        let total = axis_size * n;
        let example = Array::iota(DType::I32, idx.shape(), 0);
        let ok = idx.ge(0).logical_and(idx.lt(n as i64));
        let flat_idx = where_(&ok, idx.add(example.mul(n as i64)), total as i64);
        let mut xs = vec![total];
        xs.extend_from_slice(&x.shape()[2..]);
        let m: usize = idx.shape().iter().product();
        let mut us = vec![m];
        us.extend_from_slice(&u.shape()[1 + idx_rank..]);
        let y = Scatter::bind(
            self.op,
            &x.reshape(xs),
            &flat_idx.reshape([m]),
            &u.reshape(us),
        );
        (vec![y.reshape(x.shape())], vec![Some(0)])
    }
    as_any!();
}
