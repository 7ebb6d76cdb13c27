//! Reductions: reduce over axes, argmax/argmin, cumulative sums.

use super::arity;
use super::elementwise::{compare_props, CompareOp};
use super::index::{ScatterAddAlongAxis, TakeAlongAxis};
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{i64_array, LowerCtx};
use crate::core::primitive::{as_any, tuple_str, Primitive};
use crate::core::sharding::PartitionDim;
use crate::core::sharding_types::{dims_of, SpecRule};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;

/// The monoid a reduction folds with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
    And,
    Or,
    Xor,
}

impl ReduceOp {
    /// The StableHLO op combining two elements of `dtype`.
    fn combiner(self, dtype: DType) -> &'static str {
        match (self, dtype) {
            (ReduceOp::Sum, DType::Bool) | (ReduceOp::Max, DType::Bool) | (ReduceOp::Or, _) => {
                "stablehlo.or"
            }
            (ReduceOp::Prod, DType::Bool) | (ReduceOp::Min, DType::Bool) | (ReduceOp::And, _) => {
                "stablehlo.and"
            }
            (ReduceOp::Xor, _) => "stablehlo.xor",
            (ReduceOp::Sum, _) => "stablehlo.add",
            (ReduceOp::Prod, _) => "stablehlo.multiply",
            (ReduceOp::Max, _) => "stablehlo.maximum",
            (ReduceOp::Min, _) => "stablehlo.minimum",
        }
    }

    /// The identity element, as f64 (converted to the dtype when emitted).
    pub(crate) fn identity(self, dtype: DType) -> f64 {
        // A 64-bit bound is not an f64; its nearest f64 saturates back to it on conversion.
        let (lowest, highest) = match (dtype, dtype.int_range()) {
            (DType::Bool, _) => (0.0, 1.0),
            (_, Some((lo, hi))) => (lo as f64, hi as f64),
            _ => (f64::NEG_INFINITY, f64::INFINITY),
        };
        match self {
            ReduceOp::Sum | ReduceOp::Or | ReduceOp::Xor => 0.0,
            ReduceOp::Prod => 1.0,
            // Every bit set: true, the unsigned maximum, or -1.
            ReduceOp::And if dtype == DType::Bool || dtype.is_unsigned() => highest,
            ReduceOp::And => -1.0,
            ReduceOp::Max => lowest,
            ReduceOp::Min => highest,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "reduce_sum",
            ReduceOp::Prod => "reduce_prod",
            ReduceOp::Max => "reduce_max",
            ReduceOp::Min => "reduce_min",
            ReduceOp::And => "reduce_and",
            ReduceOp::Or => "reduce_or",
            ReduceOp::Xor => "reduce_xor",
        }
    }
}

/// Emits the two-argument combiner region of a reduction.
pub(crate) fn combiner_region(cx: &mut LowerCtx, op: ReduceOp, dtype: DType) -> String {
    let s = Aval::scalar(dtype);
    cx.region(&[s.clone(), s.clone()], |cx, args| {
        // A plain maximum/minimum propagates NaN under `lower::compile_options()`.
        let r = cx.op1(op.combiner(dtype), &[&args[0], &args[1]], &[&s, &s], "", &s);
        vec![(r, s.clone())]
    })
}

impl Reduce {
    /// Broadcasts a reduced value back over the reduced axes of `shape`.
    fn expand(&self, y: &Array, shape: &[usize]) -> Array {
        let dims: Vec<usize> = (0..shape.len())
            .filter(|d| !self.axes.contains(d))
            .collect();
        bind1(
            super::BroadcastInDim {
                shape: shape.to_vec(),
                dims,
            },
            &[Operand::from(y)],
        )
    }

    /// `d out / d x` per element of `x`, for the multiplicative and selecting reductions.
    fn local_derivative(&self, x: &Array, y: &Array) -> Array {
        match self.op {
            // The derivative goes to the elements equal to the extreme, split evenly on ties.
            ReduceOp::Max | ReduceOp::Min => {
                let location = x.eq(self.expand(y, x.shape())).astype(x.dtype());
                let counts = bind1(
                    Reduce {
                        op: ReduceOp::Sum,
                        axes: self.axes.clone(),
                    },
                    &[Operand::from(&location)],
                );
                location / self.expand(&counts, x.shape())
            }
            // The product of the other elements, exact with zeros and differentiable again:
            // along the reduced axes flattened to one of length n, an [n, n] grid that holds x
            // off the diagonal and 1 on it, multiplied across.
            ReduceOp::Prod => {
                let rank = x.rank();
                let kept: Vec<usize> = (0..rank).filter(|d| !self.axes.contains(d)).collect();
                let perm: Vec<usize> = kept.iter().chain(&self.axes).copied().collect();
                let mut flat_shape: Vec<usize> = kept.iter().map(|&d| x.shape()[d]).collect();
                let n: usize = self.axes.iter().map(|&d| x.shape()[d]).product();
                flat_shape.push(n);
                let flat = x.transpose(perm.clone()).reshape(flat_shape.clone());
                let mut grid_shape = flat_shape.clone();
                grid_shape.push(n);
                let k = flat_shape.len();
                // grid[..., i, j] = x[..., j]
                let dims: Vec<usize> = (0..k - 1).chain([k]).collect();
                let grid = bind1(
                    super::BroadcastInDim {
                        shape: grid_shape.clone(),
                        dims,
                    },
                    &[Operand::from(&flat)],
                );
                let rows = Array::iota(DType::I32, &grid_shape, k - 1);
                let cols = Array::iota(DType::I32, &grid_shape, k);
                let masked = crate::ops::where_(rows.eq(&cols), 1.0, &grid);
                let others = bind1(
                    Reduce {
                        op: ReduceOp::Prod,
                        axes: vec![k],
                    },
                    &[Operand::from(&masked)],
                );
                let mut inverse = vec![0; rank];
                for (i, &p) in perm.iter().enumerate() {
                    inverse[p] = i;
                }
                let moved_shape: Vec<usize> = perm.iter().map(|&d| x.shape()[d]).collect();
                others.reshape(moved_shape).transpose(inverse)
            }
            ReduceOp::Sum | ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => {
                unreachable!("handled by the rules")
            }
        }
    }
}

/// Folds `axes` (sorted, distinct) away with `op`.
#[derive(Debug, Clone)]
pub struct Reduce {
    pub op: ReduceOp,
    pub axes: Vec<usize>,
}

impl Primitive for Reduce {
    fn name(&self) -> &'static str {
        self.op.name()
    }
    fn params_string(&self) -> String {
        format!("axes={}", tuple_str(&self.axes))
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        if self.axes.iter().any(|&x| x >= a.rank()) || self.axes.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!(
                "axes {:?} must be distinct, sorted and below rank {}",
                self.axes,
                a.rank()
            ));
        }
        let shape: Vec<usize> = (0..a.rank())
            .filter(|i| !self.axes.contains(i))
            .map(|i| a.shape[i])
            .collect();
        Ok(vec![a.with_shape(shape)])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        let dims = dims_of(&ins[0]);
        Ok(vec![(0..dims.len())
            .filter(|i| !self.axes.contains(i))
            .map(|i| dims[i].clone())
            .collect()])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let t = t[0].as_ref().expect("a tangent");
        let sum = |v: &Array| {
            bind1(
                Reduce {
                    op: ReduceOp::Sum,
                    axes: self.axes.clone(),
                },
                &[Operand::from(v)],
            )
        };
        match self.op {
            ReduceOp::Sum => vec![Some(sum(t))],
            ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => vec![None],
            _ => vec![Some(sum(
                &(t * self.local_derivative(&p[0].to_array(), &outs[0]))
            ))],
        }
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let g = cts[0].as_ref().expect("a cotangent");
        let x = p[0].to_array();
        match self.op {
            ReduceOp::Sum => vec![Some(self.expand(g, x.shape()))],
            ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => vec![None],
            _ => vec![Some(
                self.expand(g, x.shape()) * self.local_derivative(&x, &outs[0]),
            )],
        }
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let a = &in_avals[0];
        let s = Aval::scalar(a.dtype);
        let init = cx.splat(self.op.identity(a.dtype), &s);
        let region = combiner_region(cx, self.op, a.dtype);
        let props = format!(
            "dimensions = {}",
            i64_array(self.axes.iter().map(|&x| x as i64))
        );
        cx.op_with_regions(
            "stablehlo.reduce",
            &[&ins[0], &init],
            &[a, &s],
            &props,
            &[region],
            &[&out[0]],
        )
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // Reduce the same axes of every example; the batch dim shifts left past those
        // reduced before it.
        let b = dims[0].expect("the operand is batched");
        let axes: Vec<usize> = self
            .axes
            .iter()
            .map(|&a| crate::interpreters::batching::shift_axis(a, b))
            .collect();
        let out = b - axes.iter().filter(|&&a| a < b).count();
        let prim = Reduce { op: self.op, axes };
        (vec![bind1(prim, &[args[0].borrowed()])], vec![Some(out)])
    }
    as_any!();
}

/// The index of the largest (or smallest) element along `axis`; the first one on ties, and a
/// NaN counts as the extreme (as in JAX).
#[derive(Debug, Clone)]
pub struct Argmax {
    pub axis: usize,
    pub is_min: bool,
    pub index_dtype: DType,
}

impl Primitive for Argmax {
    fn name(&self) -> &'static str {
        if self.is_min {
            "argmin"
        } else {
            "argmax"
        }
    }
    fn params_string(&self) -> String {
        format!(
            "axes=({},) index_dtype={}",
            self.axis,
            self.index_dtype.name()
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        if self.axis >= a.rank() {
            return Err(format!(
                "axis {} is out of range for rank {}",
                self.axis,
                a.rank()
            ));
        }
        if a.shape[self.axis] == 0 {
            return Err("cannot take the arg-extreme of an empty axis".into());
        }
        let shape: Vec<usize> = (0..a.rank())
            .filter(|&i| i != self.axis)
            .map(|i| a.shape[i])
            .collect();
        Ok(vec![Aval::new(shape, self.index_dtype)])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        let mut dims = dims_of(&ins[0]);
        dims.remove(self.axis);
        Ok(vec![dims])
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
        vec![None]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let a = &in_avals[0];
        let idx_aval = a.with_dtype(self.index_dtype).weak(false);
        let iota = cx.op1(
            "stablehlo.iota",
            &[],
            &[],
            &format!("iota_dimension = {} : i64", self.axis),
            &idx_aval,
        );
        let (sv, si) = (Aval::scalar(a.dtype), Aval::scalar(self.index_dtype));
        let extreme = if self.is_min {
            ReduceOp::Min
        } else {
            ReduceOp::Max
        };
        let init_v = cx.splat(extreme.identity(a.dtype), &sv);
        let init_i = cx.splat(0.0, &si);
        let dir = if self.is_min {
            CompareOp::Lt
        } else {
            CompareOp::Gt
        };
        let b = Aval::scalar(DType::Bool);
        let region = cx.region(
            &[sv.clone(), si.clone(), sv.clone(), si.clone()],
            |cx, r| {
                let better = cx.op1(
                    "stablehlo.compare",
                    &[&r[0], &r[2]],
                    &[&sv, &sv],
                    &compare_props(dir, a.dtype),
                    &b,
                );
                let pick_a = if a.dtype.is_float() {
                    let nan = cx.op1(
                        "stablehlo.compare",
                        &[&r[0], &r[0]],
                        &[&sv, &sv],
                        &compare_props(CompareOp::Ne, a.dtype),
                        &b,
                    );
                    cx.op1("stablehlo.or", &[&better, &nan], &[&b, &b], "", &b)
                } else {
                    better
                };
                let eq = cx.op1(
                    "stablehlo.compare",
                    &[&r[0], &r[2]],
                    &[&sv, &sv],
                    &compare_props(CompareOp::Eq, a.dtype),
                    &b,
                );
                let lower_idx = cx.op1(
                    "stablehlo.compare",
                    &[&r[1], &r[3]],
                    &[&si, &si],
                    &compare_props(CompareOp::Lt, self.index_dtype),
                    &b,
                );
                let tie = cx.op1("stablehlo.and", &[&eq, &lower_idx], &[&b, &b], "", &b);
                let pick_i = cx.op1("stablehlo.or", &[&pick_a, &tie], &[&b, &b], "", &b);
                let v = cx.op1(
                    "stablehlo.select",
                    &[&pick_a, &r[0], &r[2]],
                    &[&b, &sv, &sv],
                    "",
                    &sv,
                );
                let i = cx.op1(
                    "stablehlo.select",
                    &[&pick_i, &r[1], &r[3]],
                    &[&b, &si, &si],
                    "",
                    &si,
                );
                vec![(v, sv.clone()), (i, si.clone())]
            },
        );
        let props = format!("dimensions = {}", i64_array([self.axis as i64]));
        let vals_out = out[0].with_dtype(a.dtype);
        let res = cx.op_with_regions(
            "stablehlo.reduce",
            &[&ins[0], &iota, &init_v, &init_i],
            &[a, &idx_aval, &sv, &si],
            &props,
            &[region],
            &[&vals_out, &out[0]],
        );
        vec![res[1].clone()]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let b = dims[0].expect("the operand is batched");
        let axis = crate::interpreters::batching::shift_axis(self.axis, b);
        let prim = Argmax {
            axis,
            ..self.clone()
        };
        let out = if axis < b { b - 1 } else { b };
        (vec![bind1(prim, &[args[0].borrowed()])], vec![Some(out)])
    }
    as_any!();
}

impl Cumulative {
    /// For each output of a running max (min) `y` of `x`, the position along `axis` of the
    /// element it came from: the nearest one at or before it (after it, reversed) that equals
    /// its own running extreme. (JAX's derivative, through an associative scan, splits ties;
    /// this one gives the whole tangent to the nearest.)
    fn extreme_source(&self, x: &Array, y: &Array) -> Array {
        let n = x.shape()[self.axis] as i32;
        let iota = Array::iota(DType::I32, x.shape(), self.axis);
        let (missing, op) = if self.reverse {
            (n, ReduceOp::Min)
        } else {
            (-1, ReduceOp::Max)
        };
        let marked = crate::ops::where_(x.eq(y), &iota, missing);
        bind1(
            Cumulative {
                op,
                axis: self.axis,
                reverse: self.reverse,
            },
            &[Operand::from(&marked)],
        )
    }

    /// `x` with `axis` moved last.
    fn to_last(&self, x: &Array) -> Array {
        let r = x.rank();
        let perm: Vec<usize> = (0..r)
            .filter(|&d| d != self.axis)
            .chain([self.axis])
            .collect();
        x.transpose(perm)
    }

    /// The inverse of [`to_last`](Self::to_last).
    fn axis_back(&self, x: &Array) -> Array {
        let r = x.rank();
        let perm: Vec<usize> = (0..r)
            .map(|d| match d.cmp(&self.axis) {
                std::cmp::Ordering::Less => d,
                std::cmp::Ordering::Equal => r - 1,
                std::cmp::Ordering::Greater => d - 1,
            })
            .collect();
        x.transpose(perm)
    }

    /// `m[.., j, i] = d y_i / d x_j` of a running product along `axis` (moved last): the
    /// product of the elements up to `i` but `j`, for `j <= i` (`j >= i` reversed), else 0.
    /// Built from running products, never by division, so it is exact where `x` has zeros
    /// and differentiable again.
    fn prod_partials(&self, x: &Array) -> Array {
        let x = self.to_last(x);
        let x = if self.reverse { x.flip([-1i64]) } else { x };
        let r = x.rank();
        let n = x.shape()[r - 1];
        let cum = |v: &Array, axis: usize| {
            bind1(
                Cumulative {
                    op: ReduceOp::Prod,
                    axis,
                    reverse: false,
                },
                &[Operand::from(v)],
            )
        };
        // before[j] = prod_{k < j} x_k
        let ones = Array::full(
            &[x.shape()[..r - 1].to_vec(), vec![1]].concat(),
            1.0,
            x.dtype(),
        );
        let before = Array::concatenate(&[ones, cum(&x, r - 1).slice_axis(-1, 0, n - 1)], -1);
        // grid[j, i] = x_i where i > j, else 1; its running product along i is
        // prod_{j < k <= i} x_k.
        let mut grid_shape = x.shape().to_vec();
        grid_shape.push(n);
        let xi = x.expand_dims(-2).broadcast_to(&grid_shape);
        let rows = Array::iota(DType::I32, &grid_shape, r - 1);
        let cols = Array::iota(DType::I32, &grid_shape, r);
        let after = cum(&crate::ops::where_(cols.gt(&rows), &xi, 1.0), r);
        let m = crate::ops::where_(cols.ge(&rows), before.expand_dims(-1) * after, 0.0);
        if self.reverse {
            m.flip([-1i64, -2])
        } else {
            m
        }
    }
}

/// An inclusive prefix fold (cumsum, cumprod, cummax, cummin) along `axis`.
#[derive(Debug, Clone)]
pub struct Cumulative {
    pub op: ReduceOp,
    pub axis: usize,
    pub reverse: bool,
}

impl Primitive for Cumulative {
    fn name(&self) -> &'static str {
        match self.op {
            ReduceOp::Sum => "cumsum",
            ReduceOp::Prod => "cumprod",
            ReduceOp::Max => "cummax",
            ReduceOp::Min => "cummin",
            ReduceOp::And => "cumand",
            ReduceOp::Or => "cumor",
            ReduceOp::Xor => "cumxor",
        }
    }
    fn params_string(&self) -> String {
        format!("axis={} reverse={}", self.axis, self.reverse)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        if self.axis >= inputs[0].rank() {
            return Err(format!(
                "axis {} is out of range for rank {}",
                self.axis,
                inputs[0].rank()
            ));
        }
        Ok(vec![inputs[0].clone()])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        let dims = dims_of(&ins[0]);
        if dims[self.axis] != PartitionDim::Replicated {
            return Err(format!(
                "the input should be unsharded over the axis being reduced; got input type {} \
                 and axis {}",
                ins[0], self.axis
            ));
        }
        Ok(vec![dims])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let t = t[0].as_ref().expect("a tangent");
        match self.op {
            ReduceOp::Sum => vec![Some(bind1(self.clone(), &[Operand::from(t)]))],
            // Each output's tangent is the tangent of the element its extreme came from.
            ReduceOp::Max | ReduceOp::Min => {
                let src = self.extreme_source(&p[0].to_array(), &outs[0]);
                vec![Some(bind1(
                    TakeAlongAxis { axis: self.axis },
                    &[Operand::from(t), Operand::from(&src)],
                ))]
            }
            ReduceOp::Prod => {
                let m = self.prod_partials(&p[0].to_array());
                // dy_i = sum_j t_j m[j, i]
                let t = self.to_last(t).expand_dims(-1);
                vec![Some(self.axis_back(&(t * m).sum(-2, false)))]
            }
            ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => vec![None],
        }
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let g = cts[0].as_ref().expect("a cotangent");
        match self.op {
            // The transpose of a running sum is the running sum the other way.
            ReduceOp::Sum => vec![Some(bind1(
                Cumulative {
                    reverse: !self.reverse,
                    ..self.clone()
                },
                &[Operand::from(g)],
            ))],
            ReduceOp::Max | ReduceOp::Min => {
                let src = self.extreme_source(&p[0].to_array(), &outs[0]);
                vec![Some(bind1(
                    ScatterAddAlongAxis { axis: self.axis },
                    &[
                        Operand::from(&Array::zeros(g.shape(), g.dtype())),
                        Operand::from(&src),
                        Operand::from(g),
                    ],
                ))]
            }
            ReduceOp::Prod => {
                let m = self.prod_partials(&p[0].to_array());
                // dx_j = sum_i g_i m[j, i]
                let g = self.to_last(g).expand_dims(-2);
                vec![Some(self.axis_back(&(g * m).sum(-1, false)))]
            }
            ReduceOp::And | ReduceOp::Or | ReduceOp::Xor => vec![None],
        }
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let a = &in_avals[0];
        if a.size() == 0 {
            return vec![ins[0].clone()];
        }
        let n = a.shape[self.axis];
        let s = Aval::scalar(a.dtype);
        let init = cx.splat(self.op.identity(a.dtype), &s);
        let region = combiner_region(cx, self.op, a.dtype);
        let r = a.rank();
        let window: Vec<i64> = (0..r)
            .map(|i| if i == self.axis { n as i64 } else { 1 })
            .collect();
        let pads: Vec<String> = (0..r)
            .map(|i| match (i == self.axis, self.reverse) {
                (false, _) => "[0, 0]".to_string(),
                (true, false) => format!("[{}, 0]", n - 1),
                (true, true) => format!("[0, {}]", n - 1),
            })
            .collect();
        let ones = i64_array(std::iter::repeat_n(1i64, r));
        let props = format!(
            "base_dilations = {ones}, padding = dense<[{}]> : tensor<{r}x2xi64>, window_dilations = {ones}, window_dimensions = {}, window_strides = {ones}",
            pads.join(", "),
            i64_array(window)
        );
        cx.op_with_regions(
            "stablehlo.reduce_window",
            &[&ins[0], &init],
            &[a, &s],
            &props,
            &[region],
            &[&out[0]],
        )
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let b = dims[0].expect("the operand is batched");
        let prim = Cumulative {
            axis: crate::interpreters::batching::shift_axis(self.axis, b),
            ..self.clone()
        };
        (vec![bind1(prim, &[args[0].borrowed()])], vec![Some(b)])
    }
    as_any!();
}
