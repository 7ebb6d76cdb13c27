//! `conv_general_dilated`: lax's convolution, with its two transposes (JAX's
//! `_conv_general_dilated_transpose_lhs/rhs`) and its batching rule, which folds the mapped
//! axis into the batch or feature dims.

use super::arity;
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{i64_array, LowerCtx};
use crate::core::primitive::{as_any, tuple_str, Primitive};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;

/// Where each role lies in the operands and the result, as lax's `ConvDimensionNumbers`:
/// `lhs = [batch, feature, spatial...]`, `rhs = [out feature, in feature, spatial...]`,
/// `out = [batch, feature, spatial...]`, the spatial dims of all three listed in one order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvSpecs {
    pub lhs: Vec<usize>,
    pub rhs: Vec<usize>,
    pub out: Vec<usize>,
}

/// `lax.conv_general_dilated` with explicit padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvGeneralDilated {
    pub window_strides: Vec<usize>,
    pub padding: Vec<(i64, i64)>,
    pub lhs_dilation: Vec<usize>,
    pub rhs_dilation: Vec<usize>,
    pub specs: ConvSpecs,
    pub feature_group_count: usize,
    pub batch_group_count: usize,
}

/// The length of `d` elements with `dilation - 1` holes between neighbours.
pub(crate) fn dilate_dim(d: usize, dilation: usize) -> usize {
    if d == 0 {
        0
    } else {
        1 + dilation * (d - 1)
    }
}

/// How many windows of `window` fit in `d` at `stride`.
pub(crate) fn stride_dim(d: i64, window: usize, stride: usize) -> usize {
    if d < window as i64 {
        0
    } else {
        (d as usize - window) / stride + 1
    }
}

/// JAX's `_conv_general_vjp_lhs_padding`: the padding of the transposed convolution that
/// takes a cotangent of the result back to the shape of the input.
pub(crate) fn vjp_lhs_padding(
    in_shape: &[usize],
    window: &[usize],
    strides: &[usize],
    out_shape: &[usize],
    padding: &[(i64, i64)],
    lhs_dilation: &[usize],
    rhs_dilation: &[usize],
) -> Vec<(i64, i64)> {
    (0..in_shape.len())
        .map(|i| {
            let lhs_d = dilate_dim(in_shape[i], lhs_dilation[i]) as i64;
            let rhs_d = dilate_dim(window[i], rhs_dilation[i]) as i64;
            let out_d = dilate_dim(out_shape[i], strides[i]) as i64;
            let before = rhs_d - padding[i].0 - 1;
            let after = lhs_d + rhs_d - 1 - out_d - before;
            (before, after)
        })
        .collect()
}

/// JAX's `_conv_general_vjp_rhs_padding`.
fn vjp_rhs_padding(
    in_shape: &[usize],
    window: &[usize],
    strides: &[usize],
    out_shape: &[usize],
    padding: &[(i64, i64)],
    lhs_dilation: &[usize],
    rhs_dilation: &[usize],
) -> Vec<(i64, i64)> {
    (0..in_shape.len())
        .map(|i| {
            let lhs_d = dilate_dim(in_shape[i], lhs_dilation[i]) as i64;
            let rhs_d = dilate_dim(window[i], rhs_dilation[i]) as i64;
            let out_d = dilate_dim(out_shape[i], strides[i]) as i64;
            let lo = padding[i].0;
            (lo, out_d - lhs_d + rhs_d - lo - 1)
        })
        .collect()
}

/// The spec with its first two roles swapped (JAX's `_conv_spec_transpose`).
fn swap_roles(spec: &[usize]) -> Vec<usize> {
    let mut s = spec.to_vec();
    s.swap(0, 1);
    s
}

/// Merges axis `src` into axis `dst` (numbered after `src` is removed), `src` the major part.
fn reshape_axis_into(src: usize, dst: usize, x: &Array) -> Array {
    let mut perm: Vec<usize> = (0..x.rank()).filter(|&i| i != src).collect();
    perm.insert(dst, src);
    let mut shape: Vec<usize> = x.shape().to_vec();
    let n = shape.remove(src);
    shape[dst] *= n;
    x.transpose(perm).reshape(shape)
}

/// Splits axis `src` into `[size, rest]`.
fn reshape_axis_out_of(src: usize, size: usize, x: &Array) -> Array {
    let mut shape = x.shape().to_vec();
    let rest = shape[src] / size;
    shape.splice(src..src + 1, [size, rest]);
    x.reshape(shape)
}

fn take(shape: &[usize], idx: &[usize]) -> Vec<usize> {
    idx.iter().map(|&i| shape[i]).collect()
}

impl ConvGeneralDilated {
    fn conv(&self, lhs: &Array, rhs: &Array) -> Array {
        bind1(self.clone(), &[Operand::from(lhs), Operand::from(rhs)])
    }

    /// The cotangent of the input, given the result's cotangent `g` (JAX's
    /// `_conv_general_dilated_transpose_lhs`).
    fn transpose_lhs(&self, g: &Array, lhs_shape: &[usize], rhs: &Array) -> Array {
        let ConvSpecs {
            lhs: lhs_spec,
            rhs: rhs_spec,
            out: out_spec,
        } = &self.specs;
        let mut groups = self.feature_group_count;
        let mut rhs = rhs.clone();
        if self.feature_group_count > 1 || self.batch_group_count > 1 {
            // The group axis moves from the kernel's output features into its input features.
            groups = self.feature_group_count.max(self.batch_group_count);
            rhs = reshape_axis_out_of(rhs_spec[0], groups, &rhs);
            rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], &rhs);
        }
        let padding = vjp_lhs_padding(
            &take(lhs_shape, &lhs_spec[2..]),
            &take(rhs.shape(), &rhs_spec[2..]),
            &self.window_strides,
            &take(g.shape(), &out_spec[2..]),
            &self.padding,
            &self.lhs_dilation,
            &self.rhs_dilation,
        );
        let reversed = rhs.flip(rhs_spec[2..].to_vec());
        let prim = ConvGeneralDilated {
            window_strides: self.lhs_dilation.clone(),
            padding,
            lhs_dilation: self.window_strides.clone(),
            rhs_dilation: self.rhs_dilation.clone(),
            specs: ConvSpecs {
                lhs: out_spec.clone(),
                rhs: swap_roles(rhs_spec),
                out: lhs_spec.clone(),
            },
            feature_group_count: groups,
            batch_group_count: 1,
        };
        let mut out = prim.conv(g, &reversed);
        if self.batch_group_count > 1 {
            out = reshape_axis_out_of(lhs_spec[1], self.batch_group_count, &out);
            out = reshape_axis_into(lhs_spec[1], lhs_spec[0], &out);
        }
        out
    }

    /// The cotangent of the kernel (JAX's `_conv_general_dilated_transpose_rhs`).
    fn transpose_rhs(&self, g: &Array, lhs: &Array, rhs_shape: &[usize]) -> Array {
        let specs = &self.specs;
        let (feature_groups, batch_groups) = if self.batch_group_count > 1 {
            (self.batch_group_count, 1)
        } else {
            (1, self.feature_group_count)
        };
        let padding = vjp_rhs_padding(
            &take(lhs.shape(), &specs.lhs[2..]),
            &take(rhs_shape, &specs.rhs[2..]),
            &self.window_strides,
            &take(g.shape(), &specs.out[2..]),
            &self.padding,
            &self.lhs_dilation,
            &self.rhs_dilation,
        );
        let prim = ConvGeneralDilated {
            window_strides: self.rhs_dilation.clone(),
            padding,
            lhs_dilation: self.lhs_dilation.clone(),
            rhs_dilation: self.window_strides.clone(),
            specs: ConvSpecs {
                lhs: swap_roles(&specs.lhs),
                rhs: swap_roles(&specs.out),
                out: swap_roles(&specs.rhs),
            },
            feature_group_count: feature_groups,
            batch_group_count: batch_groups,
        };
        prim.conv(lhs, g)
    }
}

/// The `#stablehlo.conv` layout of one operand: `b`/`f` (or `o`/`i`) and spatial numbers.
fn layout(spec: &[usize], first: char, second: char) -> String {
    let mut items = vec![String::new(); spec.len()];
    items[spec[0]] = first.to_string();
    items[spec[1]] = second.to_string();
    for (i, &d) in spec[2..].iter().enumerate() {
        items[d] = i.to_string();
    }
    format!("[{}]", items.join(", "))
}

fn is_permutation(spec: &[usize], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    spec.len() == rank
        && spec
            .iter()
            .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true))
}

impl Primitive for ConvGeneralDilated {
    fn name(&self) -> &'static str {
        "conv_general_dilated"
    }
    fn params_string(&self) -> String {
        let pads: Vec<String> = self
            .padding
            .iter()
            .map(|(lo, hi)| format!("({lo}, {hi})"))
            .collect();
        format!(
            "window_strides={} padding=({}) lhs_dilation={} rhs_dilation={} dimension_numbers=ConvDimensionNumbers(lhs_spec={}, rhs_spec={}, out_spec={}) feature_group_count={} batch_group_count={}",
            tuple_str(&self.window_strides),
            pads.join(", "),
            tuple_str(&self.lhs_dilation),
            tuple_str(&self.rhs_dilation),
            tuple_str(&self.specs.lhs),
            tuple_str(&self.specs.rhs),
            tuple_str(&self.specs.out),
            self.feature_group_count,
            self.batch_group_count
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        let (l, r) = (&inputs[0], &inputs[1]);
        if l.dtype != r.dtype {
            return Err("operands must have the same dtype".into());
        }
        if l.dtype == DType::Bool {
            return Err("convolution is not defined on bool".into());
        }
        if l.rank() != r.rank() {
            return Err(format!(
                "lhs and rhs must have the same rank, got {} and {}",
                l.rank(),
                r.rank()
            ));
        }
        let rank = l.rank();
        if rank < 3 {
            return Err("operands need a batch, a feature and at least one spatial dim".into());
        }
        let s = &self.specs;
        if !is_permutation(&s.lhs, rank)
            || !is_permutation(&s.rhs, rank)
            || !is_permutation(&s.out, rank)
        {
            return Err(format!(
                "dimension numbers {:?} are not permutations of the {rank} dims",
                s
            ));
        }
        let n = rank - 2;
        for (what, len) in [
            ("window_strides", self.window_strides.len()),
            ("padding", self.padding.len()),
            ("lhs_dilation", self.lhs_dilation.len()),
            ("rhs_dilation", self.rhs_dilation.len()),
        ] {
            if len != n {
                return Err(format!("{what} has {len} entries for {n} spatial dims"));
            }
        }
        if self
            .window_strides
            .iter()
            .chain(&self.lhs_dilation)
            .chain(&self.rhs_dilation)
            .any(|&x| x == 0)
        {
            return Err("strides and dilations must be positive".into());
        }
        let (fgc, bgc) = (self.feature_group_count, self.batch_group_count);
        if fgc == 0 || bgc == 0 {
            return Err("group counts must be positive".into());
        }
        if fgc > 1 && bgc > 1 {
            return Err(
                "at most one of feature_group_count and batch_group_count may be > 1".into(),
            );
        }
        let in_features = l.shape[s.lhs[1]];
        if in_features % fgc != 0 {
            return Err(format!(
                "feature_group_count {fgc} must divide the lhs feature dim {in_features}"
            ));
        }
        if in_features / fgc != r.shape[s.rhs[1]] {
            return Err(format!(
                "lhs features {in_features} / feature_group_count {fgc} must equal the rhs input feature dim {}",
                r.shape[s.rhs[1]]
            ));
        }
        let out_features = r.shape[s.rhs[0]];
        if out_features % fgc != 0 || out_features % bgc != 0 {
            return Err(format!(
                "the rhs output feature dim {out_features} must be a multiple of the group count"
            ));
        }
        let batch = l.shape[s.lhs[0]];
        if batch % bgc != 0 {
            return Err(format!(
                "batch_group_count {bgc} must divide the lhs batch dim {batch}"
            ));
        }
        let mut canonical = vec![batch / bgc, out_features];
        for i in 0..n {
            let lhs_d = dilate_dim(l.shape[s.lhs[2 + i]], self.lhs_dilation[i]) as i64;
            let padded = lhs_d + self.padding[i].0 + self.padding[i].1;
            if padded < 0 {
                return Err(format!(
                    "padding {:?} is larger than spatial dim {i} of the lhs",
                    self.padding[i]
                ));
            }
            let window = dilate_dim(r.shape[s.rhs[2 + i]], self.rhs_dilation[i]);
            canonical.push(stride_dim(padded, window, self.window_strides[i]));
        }
        let mut shape = vec![0; rank];
        for (i, &d) in s.out.iter().enumerate() {
            shape[d] = canonical[i];
        }
        Ok(vec![l.with_shape(shape).weak(l.weak && r.weak)])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let (x, y) = (p[0].to_array(), p[1].to_array());
        let left = t[0].as_ref().map(|t| self.conv(t, &y));
        let right = t[1].as_ref().map(|t| self.conv(&x, t));
        match (left, right) {
            (Some(a), Some(b)) => vec![Some(a + b)],
            (a, b) => vec![a.or(b)],
        }
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
        let (x, y) = (p[0].to_array(), p[1].to_array());
        let ct_x = wanted[0].then(|| self.transpose_lhs(g, x.shape(), &y));
        let ct_y = (wanted[1] && g.size() > 0).then(|| self.transpose_rhs(g, &x, y.shape()));
        vec![ct_x, ct_y]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let n = self.padding.len();
        let pads: Vec<String> = self
            .padding
            .iter()
            .map(|(lo, hi)| format!("[{lo}, {hi}]"))
            .collect();
        let props = format!(
            "batch_group_count = {} : i64, dimension_numbers = #stablehlo.conv<{}x{}->{}>, feature_group_count = {} : i64, lhs_dilation = {}, padding = dense<[{}]> : tensor<{n}x2xi64>, rhs_dilation = {}, window_strides = {}",
            self.batch_group_count,
            layout(&self.specs.lhs, 'b', 'f'),
            layout(&self.specs.rhs, 'o', 'i'),
            layout(&self.specs.out, 'b', 'f'),
            self.feature_group_count,
            i64_array(self.lhs_dilation.iter().map(|&x| x as i64)),
            pads.join(", "),
            i64_array(self.rhs_dilation.iter().map(|&x| x as i64)),
            i64_array(self.window_strides.iter().map(|&x| x as i64)),
        );
        vec![cx.op1(
            "stablehlo.convolution",
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
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // JAX's `_conv_general_dilated_batch_rule`: the mapped axis becomes part of the batch
        // dim (lhs mapped), of the output features (rhs mapped), or, both mapped, one more
        // feature group per example.
        let (lhs, rhs) = (args[0].to_array(), args[1].to_array());
        let (ls, rs, os) = (&self.specs.lhs, &self.specs.rhs, &self.specs.out);
        let (fgc, bgc) = (self.feature_group_count, self.batch_group_count);
        match (dims[0], dims[1]) {
            (Some(lb), Some(rb)) => {
                let size = lhs.shape()[lb];
                let mut prim = self.clone();
                let new_lhs = if bgc > 1 {
                    prim.batch_group_count *= size;
                    reshape_axis_into(lb, ls[0], &lhs)
                } else {
                    prim.feature_group_count *= size;
                    reshape_axis_into(lb, ls[1], &lhs)
                };
                let new_rhs = reshape_axis_into(rb, rs[0], &rhs);
                let out = prim.conv(&new_lhs, &new_rhs);
                (
                    vec![reshape_axis_out_of(os[1], size, &out)],
                    vec![Some(os[1])],
                )
            }
            (Some(lb), None) => {
                let size = lhs.shape()[lb];
                let new_lhs = if bgc == 1 {
                    reshape_axis_into(lb, ls[0], &lhs)
                } else {
                    // The groups stay outermost in the batch dim, the examples inside them.
                    let x = reshape_axis_out_of(ls[0] + usize::from(lb <= ls[0]), bgc, &lhs);
                    let x = reshape_axis_into(lb + usize::from(ls[0] < lb), ls[0] + 1, &x);
                    reshape_axis_into(ls[0], ls[0], &x)
                };
                let out = self.conv(&new_lhs, &rhs);
                (
                    vec![reshape_axis_out_of(os[0], size, &out)],
                    vec![Some(os[0])],
                )
            }
            (None, Some(rb)) => {
                let size = rhs.shape()[rb];
                if fgc == 1 && bgc == 1 {
                    let new_rhs = reshape_axis_into(rb, rs[0], &rhs);
                    let out = self.conv(&lhs, &new_rhs);
                    return (
                        vec![reshape_axis_out_of(os[1], size, &out)],
                        vec![Some(os[1])],
                    );
                }
                let groups = fgc.max(bgc);
                let w = reshape_axis_out_of(rs[0] + usize::from(rb <= rs[0]), groups, &rhs);
                let w = reshape_axis_into(rb + usize::from(rs[0] < rb), rs[0] + 1, &w);
                let w = reshape_axis_into(rs[0], rs[0], &w);
                let out = self.conv(&lhs, &w);
                let out = reshape_axis_out_of(os[1], groups, &out);
                let out = reshape_axis_out_of(os[1] + 1, size, &out);
                let out = reshape_axis_into(os[1], os[1] + 1, &out);
                (vec![out], vec![Some(os[1])])
            }
            (None, None) => unreachable!("a batching rule has a batched operand"),
        }
    }
    as_any!();
}
