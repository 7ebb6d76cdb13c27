//! `reduce_window`: a reduction over sliding windows (pooling), with base and window
//! dilation and padding, as `lax.reduce_window`.

use super::arity;
use super::conv::{dilate_dim, stride_dim, vjp_lhs_padding};
use super::reduce::{combiner_region, ReduceOp};
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{i64_array, LowerCtx};
use crate::core::primitive::{as_any, tuple_str, Primitive};
use crate::core::trace::{bind1, Operand};

/// Folds every window of `window_dimensions` (placed every `window_strides` elements of the
/// operand dilated by `base_dilation` and padded with the identity) with `op`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReduceWindow {
    pub op: ReduceOp,
    pub window_dimensions: Vec<usize>,
    pub window_strides: Vec<usize>,
    pub padding: Vec<(i64, i64)>,
    pub base_dilation: Vec<usize>,
    pub window_dilation: Vec<usize>,
}

impl ReduceWindow {
    fn apply(&self, x: &Array) -> Array {
        bind1(self.clone(), &[Operand::from(x)])
    }

    /// The operand as the reduction sees it: dilated, then padded with `fill`.
    fn padded(&self, x: &Array, fill: f64) -> Array {
        let lo: Vec<i64> = self.padding.iter().map(|p| p.0).collect();
        let hi: Vec<i64> = self.padding.iter().map(|p| p.1).collect();
        let interior: Vec<i64> = self.base_dilation.iter().map(|&d| d as i64 - 1).collect();
        x.pad(&lo, &hi, &interior, fill)
    }

    /// Every window offset (row-major over the window), as the start of its strided slice of
    /// the padded operand.
    fn offsets(&self) -> Vec<Vec<usize>> {
        let mut all = vec![vec![]];
        for (&w, &d) in self.window_dimensions.iter().zip(&self.window_dilation) {
            all = all
                .into_iter()
                .flat_map(|prefix: Vec<usize>| {
                    (0..w).map(move |k| {
                        let mut p = prefix.clone();
                        p.push(k * d);
                        p
                    })
                })
                .collect();
        }
        all
    }

    /// The element each output takes at window offset `start` of the padded operand.
    fn patch(&self, padded: &Array, start: &[usize], out: &[usize]) -> Array {
        let limit: Vec<usize> = (0..start.len())
            .map(|i| {
                if out[i] == 0 {
                    start[i]
                } else {
                    start[i] + (out[i] - 1) * self.window_strides[i] + 1
                }
            })
            .collect();
        padded.slice(start, &limit, &self.window_strides)
    }

    /// For max and min: which window offset each output chose (the first on ties), as a
    /// one-hot mask per offset.
    fn choices(&self, x: &Array, out: &[usize]) -> Vec<Array> {
        let fill = if self.op == ReduceOp::Max {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        let padded = self.padded(x, fill);
        let offsets = self.offsets();
        let patches: Vec<Array> = offsets
            .iter()
            .map(|s| self.patch(&padded, s, out))
            .collect();
        let stacked = Array::stack(&patches, 0);
        let chosen = if self.op == ReduceOp::Max {
            stacked.argmax(0, false)
        } else {
            stacked.argmin(0, false)
        };
        (0..offsets.len())
            .map(|k| chosen.eq(Array::scalar(k as i32)))
            .collect()
    }

    /// For prod: per window offset, the product of the other offsets' elements (the partial
    /// derivative of the window's product by that element).
    fn other_products(&self, x: &Array, out: &[usize]) -> Vec<Array> {
        let padded = self.padded(x, 1.0);
        let patches: Vec<Array> = self
            .offsets()
            .iter()
            .map(|s| self.patch(&padded, s, out))
            .collect();
        (0..patches.len())
            .map(|k| {
                patches
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != k)
                    .map(|(_, p)| p.clone())
                    .reduce(|a, b| a * b)
                    .unwrap_or_else(|| Array::full(out, 1.0, x.dtype()))
            })
            .collect()
    }

    /// The shape of the operand dilated and padded.
    fn padded_shape(&self, shape: &[usize]) -> Vec<usize> {
        (0..shape.len())
            .map(|i| {
                (dilate_dim(shape[i], self.base_dilation[i]) as i64
                    + self.padding[i].0
                    + self.padding[i].1) as usize
            })
            .collect()
    }

    /// The transpose of taking the patch at `start`: its cotangent scattered back into the
    /// padded operand's shape.
    fn unpatch(&self, ct: &Array, start: &[usize], padded_shape: &[usize]) -> Array {
        let lo: Vec<i64> = start.iter().map(|&s| s as i64).collect();
        let interior: Vec<i64> = self.window_strides.iter().map(|&s| s as i64 - 1).collect();
        let hi: Vec<i64> = (0..start.len())
            .map(|i| {
                let used = if ct.shape()[i] == 0 {
                    0
                } else {
                    (ct.shape()[i] - 1) * self.window_strides[i] + 1
                };
                padded_shape[i] as i64 - start[i] as i64 - used as i64
            })
            .collect();
        ct.pad(&lo, &hi, &interior, 0.0)
    }

    /// The transpose of `padded`: crop the padding, drop the dilation holes.
    fn unpad(&self, ct: &Array, shape: &[usize]) -> Array {
        let lo: Vec<i64> = self.padding.iter().map(|p| -p.0).collect();
        let hi: Vec<i64> = self.padding.iter().map(|p| -p.1).collect();
        let cropped = ct.pad(&lo, &hi, &[], 0.0);
        let limit: Vec<usize> = cropped.shape().to_vec();
        let start = vec![0; shape.len()];
        cropped.slice(&start, &limit, &self.base_dilation)
    }
}

impl Primitive for ReduceWindow {
    fn name(&self) -> &'static str {
        match self.op {
            ReduceOp::Sum => "reduce_window_sum",
            ReduceOp::Max => "reduce_window_max",
            ReduceOp::Min => "reduce_window_min",
            ReduceOp::Prod => "reduce_window_prod",
            ReduceOp::And => "reduce_window_and",
            ReduceOp::Or => "reduce_window_or",
            ReduceOp::Xor => "reduce_window_xor",
        }
    }
    fn params_string(&self) -> String {
        let pads: Vec<String> = self
            .padding
            .iter()
            .map(|(lo, hi)| format!("({lo}, {hi})"))
            .collect();
        format!(
            "window_dimensions={} window_strides={} padding=({}) base_dilation={} window_dilation={}",
            tuple_str(&self.window_dimensions),
            tuple_str(&self.window_strides),
            pads.join(", "),
            tuple_str(&self.base_dilation),
            tuple_str(&self.window_dilation)
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let r = a.rank();
        for (what, len) in [
            ("window_dimensions", self.window_dimensions.len()),
            ("window_strides", self.window_strides.len()),
            ("padding", self.padding.len()),
            ("base_dilation", self.base_dilation.len()),
            ("window_dilation", self.window_dilation.len()),
        ] {
            if len != r {
                return Err(format!("{what} has {len} entries for rank {r}"));
            }
        }
        if self
            .window_strides
            .iter()
            .chain(&self.base_dilation)
            .chain(&self.window_dilation)
            .any(|&x| x == 0)
        {
            return Err("strides and dilations must be positive".into());
        }
        let mut shape = Vec::with_capacity(r);
        for i in 0..r {
            let padded = dilate_dim(a.shape[i], self.base_dilation[i]) as i64
                + self.padding[i].0
                + self.padding[i].1;
            if padded < 0 {
                return Err(format!(
                    "padding {:?} is larger than dim {i}",
                    self.padding[i]
                ));
            }
            let window = dilate_dim(self.window_dimensions[i], self.window_dilation[i]);
            shape.push(stride_dim(padded, window, self.window_strides[i]));
        }
        Ok(vec![a.with_shape(shape)])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let Some(t) = &t[0] else {
            return vec![None];
        };
        match self.op {
            ReduceOp::Sum => vec![Some(self.apply(t))],
            ReduceOp::Max | ReduceOp::Min => {
                // The tangent of the element each window chose.
                let out = outs[0].shape();
                let masks = self.choices(&p[0].to_array(), out);
                let padded = self.padded(t, 0.0);
                let picked = self
                    .offsets()
                    .iter()
                    .zip(&masks)
                    .map(|(s, m)| crate::ops::where_(m, self.patch(&padded, s, out), 0.0))
                    .reduce(|a, b| a + b)
                    .expect("a non-empty window");
                vec![Some(picked)]
            }
            ReduceOp::Prod => {
                // The sum over window elements of each tangent times the other elements.
                let out = outs[0].shape();
                let others = self.other_products(&p[0].to_array(), out);
                let padded = self.padded(t, 0.0);
                let tangent = self
                    .offsets()
                    .iter()
                    .zip(&others)
                    .map(|(s, o)| self.patch(&padded, s, out) * o)
                    .reduce(|a, b| a + b)
                    .expect("a non-empty window");
                vec![Some(tangent)]
            }
            _ => panic!(
                "{}: only sum, prod, max and min are differentiable",
                self.name()
            ),
        }
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else {
            return vec![None];
        };
        let x = p[0].aval();
        match self.op {
            // JAX's `_reduce_window_sum_transpose_rule`: a sum over windows of the cotangent
            // spread back with the strides as holes.
            ReduceOp::Sum => {
                let pads = vjp_lhs_padding(
                    &x.shape,
                    &self.window_dimensions,
                    &self.window_strides,
                    g.shape(),
                    &self.padding,
                    &self.base_dilation,
                    &self.window_dilation,
                );
                let lo: Vec<i64> = pads.iter().map(|p| p.0).collect();
                let hi: Vec<i64> = pads.iter().map(|p| p.1).collect();
                let interior: Vec<i64> =
                    self.window_strides.iter().map(|&s| s as i64 - 1).collect();
                let spread = g.pad(&lo, &hi, &interior, 0.0);
                let prim = ReduceWindow {
                    op: ReduceOp::Sum,
                    window_dimensions: self.window_dimensions.clone(),
                    window_strides: self.base_dilation.clone(),
                    padding: vec![(0, 0); x.rank()],
                    base_dilation: vec![1; x.rank()],
                    window_dilation: self.window_dilation.clone(),
                };
                vec![Some(prim.apply(&spread))]
            }
            ReduceOp::Max | ReduceOp::Min => {
                let xa = p[0].to_array();
                let out = outs[0].shape();
                let masks = self.choices(&xa, out);
                let padded_shape: Vec<usize> = (0..x.rank())
                    .map(|i| {
                        (dilate_dim(x.shape[i], self.base_dilation[i]) as i64
                            + self.padding[i].0
                            + self.padding[i].1) as usize
                    })
                    .collect();
                let ct = self
                    .offsets()
                    .iter()
                    .zip(&masks)
                    .map(|(s, m)| self.unpatch(&crate::ops::where_(m, g, 0.0), s, &padded_shape))
                    .reduce(|a, b| a + b)
                    .expect("a non-empty window");
                vec![Some(self.unpad(&ct, &x.shape))]
            }
            ReduceOp::Prod => {
                let out = outs[0].shape();
                let others = self.other_products(&p[0].to_array(), out);
                let padded_shape = self.padded_shape(&x.shape);
                let ct = self
                    .offsets()
                    .iter()
                    .zip(&others)
                    .map(|(s, o)| self.unpatch(&(g * o), s, &padded_shape))
                    .reduce(|a, b| a + b)
                    .expect("a non-empty window");
                vec![Some(self.unpad(&ct, &x.shape))]
            }
            _ => panic!(
                "{}: only sum, prod, max and min are differentiable",
                self.name()
            ),
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
        let r = a.rank();
        let s = Aval::scalar(a.dtype);
        let init = cx.splat(self.op.identity(a.dtype), &s);
        let region = combiner_region(cx, self.op, a.dtype);
        let pads: Vec<String> = self
            .padding
            .iter()
            .map(|(lo, hi)| format!("[{lo}, {hi}]"))
            .collect();
        let arr = |xs: &[usize]| i64_array(xs.iter().map(|&x| x as i64));
        let padding = if r == 0 {
            "dense<> : tensor<0x2xi64>".to_string()
        } else {
            format!("dense<[{}]> : tensor<{r}x2xi64>", pads.join(", "))
        };
        let props = format!(
            "base_dilations = {}, padding = {padding}, window_dilations = {}, window_dimensions = {}, window_strides = {}",
            arr(&self.base_dilation),
            arr(&self.window_dilation),
            arr(&self.window_dimensions),
            arr(&self.window_strides),
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
        // Every example is its own window along the batch dim.
        let b = dims[0].expect("the operand is batched");
        let mut prim = self.clone();
        prim.window_dimensions.insert(b, 1);
        prim.window_strides.insert(b, 1);
        prim.padding.insert(b, (0, 0));
        prim.base_dilation.insert(b, 1);
        prim.window_dilation.insert(b, 1);
        (vec![prim.apply(&args[0].to_array())], vec![Some(b)])
    }
    as_any!();
}
