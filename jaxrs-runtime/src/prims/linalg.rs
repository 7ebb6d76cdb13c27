//! `dot_general`: contractions with batch dimensions (matmul, einsum-like products).

use super::arity;
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{dim_list, LowerCtx};
use crate::core::primitive::{as_any, tuple_str, Primitive};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;

/// Puts the dims of a cotangent computed as `[batch, free, other side's contracting dims in
/// increasing order]` back into the operand's own order.
fn transpose_back(
    ct: Array,
    batch: &[usize],
    free: &[usize],
    contract: &[usize],
    other_contract: &[usize],
) -> Array {
    let mut pairs: Vec<(usize, usize)> = other_contract
        .iter()
        .copied()
        .zip(contract.iter().copied())
        .collect();
    pairs.sort_unstable();
    let source: Vec<usize> = batch
        .iter()
        .chain(free)
        .copied()
        .chain(pairs.into_iter().map(|(_, c)| c))
        .collect();
    let mut perm = vec![0; source.len()];
    for (position, &dim) in source.iter().enumerate() {
        perm[dim] = position;
    }
    ct.transpose(perm)
}

/// Contracts `lhs_contract` with `rhs_contract`, pairing `lhs_batch` with `rhs_batch`.
/// The result's dims are: batch dims, then lhs's free dims, then rhs's free dims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotGeneral {
    pub lhs_contract: Vec<usize>,
    pub rhs_contract: Vec<usize>,
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
}

impl DotGeneral {
    /// The free (neither batch nor contracted) dims of an operand of rank `rank`.
    pub fn free_dims(rank: usize, contract: &[usize], batch: &[usize]) -> Vec<usize> {
        (0..rank)
            .filter(|d| !contract.contains(d) && !batch.contains(d))
            .collect()
    }
}

impl Primitive for DotGeneral {
    fn name(&self) -> &'static str {
        "dot_general"
    }
    fn params_string(&self) -> String {
        format!(
            "dimension_numbers=(({}, {}), ({}, {}))",
            tuple_str(&self.lhs_contract),
            tuple_str(&self.rhs_contract),
            tuple_str(&self.lhs_batch),
            tuple_str(&self.rhs_batch)
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        let (l, r) = (&inputs[0], &inputs[1]);
        if l.dtype != r.dtype {
            return Err("operands must have the same dtype".into());
        }
        if l.dtype == DType::Bool {
            return Err("dot_general is not defined on bool".into());
        }
        if self.lhs_contract.len() != self.rhs_contract.len()
            || self.lhs_batch.len() != self.rhs_batch.len()
        {
            return Err("contracting and batch dims must pair up".into());
        }
        let in_range = |dims: &[usize], rank: usize| dims.iter().all(|&d| d < rank);
        if !in_range(&self.lhs_contract, l.rank())
            || !in_range(&self.lhs_batch, l.rank())
            || !in_range(&self.rhs_contract, r.rank())
            || !in_range(&self.rhs_batch, r.rank())
        {
            return Err(format!(
                "dimension numbers {} out of range",
                self.params_string()
            ));
        }
        for (&a, &b) in self.lhs_contract.iter().zip(&self.rhs_contract) {
            if l.shape[a] != r.shape[b] {
                return Err(format!(
                    "contracting dims differ: lhs dim {a} is {} but rhs dim {b} is {}",
                    l.shape[a], r.shape[b]
                ));
            }
        }
        for (&a, &b) in self.lhs_batch.iter().zip(&self.rhs_batch) {
            if l.shape[a] != r.shape[b] {
                return Err(format!(
                    "batch dims differ: lhs dim {a} is {} but rhs dim {b} is {}",
                    l.shape[a], r.shape[b]
                ));
            }
        }
        let mut shape: Vec<usize> = self.lhs_batch.iter().map(|&d| l.shape[d]).collect();
        shape.extend(
            DotGeneral::free_dims(l.rank(), &self.lhs_contract, &self.lhs_batch)
                .iter()
                .map(|&d| l.shape[d]),
        );
        shape.extend(
            DotGeneral::free_dims(r.rank(), &self.rhs_contract, &self.rhs_batch)
                .iter()
                .map(|&d| r.shape[d]),
        );
        Ok(vec![l.with_shape(shape).weak(l.weak && r.weak)])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let (x, y) = (p[0].to_array(), p[1].to_array());
        let dot = |a: &Array, b: &Array| bind1(self.clone(), &[Operand::from(a), Operand::from(b)]);
        let left = t[0].as_ref().map(|t| dot(t, &y));
        let right = t[1].as_ref().map(|t| dot(&x, t));
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
        let (lb, lc, rb, rc) = (
            &self.lhs_batch,
            &self.lhs_contract,
            &self.rhs_batch,
            &self.rhs_contract,
        );
        let lf = DotGeneral::free_dims(x.rank(), lc, lb);
        let rf = DotGeneral::free_dims(y.rank(), rc, rb);
        let nb = lb.len();
        let g_batch: Vec<usize> = (0..nb).collect();
        let g_lhs_free: Vec<usize> = (nb..nb + lf.len()).collect();
        let g_rhs_free: Vec<usize> = (nb + lf.len()..g.rank()).collect();
        // d lhs: contract g's rhs-free dims with rhs's free dims; what remains of rhs are its
        // contracting dims, which map back to lhs's contracting dims.
        let ct_x = wanted[0].then(|| {
            transpose_back(
                bind1(
                    DotGeneral {
                        lhs_contract: g_rhs_free,
                        rhs_contract: rf.clone(),
                        lhs_batch: g_batch.clone(),
                        rhs_batch: rb.clone(),
                    },
                    &[Operand::from(g), Operand::from(&*y)],
                ),
                lb,
                &lf,
                lc,
                rc,
            )
        });
        let ct_y = wanted[1].then(|| {
            transpose_back(
                bind1(
                    DotGeneral {
                        lhs_contract: g_lhs_free,
                        rhs_contract: lf.clone(),
                        lhs_batch: g_batch,
                        rhs_batch: lb.clone(),
                    },
                    &[Operand::from(g), Operand::from(&*x)],
                ),
                rb,
                &rf,
                rc,
                lc,
            )
        });
        vec![ct_x, ct_y]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let mut fields = Vec::new();
        if !self.lhs_batch.is_empty() {
            fields.push(format!(
                "lhs_batching_dimensions = {}",
                dim_list(&self.lhs_batch)
            ));
            fields.push(format!(
                "rhs_batching_dimensions = {}",
                dim_list(&self.rhs_batch)
            ));
        }
        if !self.lhs_contract.is_empty() {
            fields.push(format!(
                "lhs_contracting_dimensions = {}",
                dim_list(&self.lhs_contract)
            ));
            fields.push(format!(
                "rhs_contracting_dimensions = {}",
                dim_list(&self.rhs_contract)
            ));
        }
        let props = format!(
            "dot_dimension_numbers = #stablehlo.dot<{}>",
            fields.join(", ")
        );
        let (l, r) = (&in_avals[0], &in_avals[1]);
        if l.dtype == DType::BF16 && r.dtype == DType::BF16 && cx.bf16_dots_in_f32() {
            // jaxlib's program on CPU: f32 products and sums, rounded once (why: the doc of
            // `core::client::bf16_dots_in_f32`).
            let (l32, r32) = (l.with_dtype(DType::F32), r.with_dtype(DType::F32));
            let o32 = out[0].with_dtype(DType::F32);
            let a = cx.op1("stablehlo.convert", &[&ins[0]], &[l], "", &l32);
            let b = cx.op1("stablehlo.convert", &[&ins[1]], &[r], "", &r32);
            let d = cx.op1(
                "stablehlo.dot_general",
                &[&a, &b],
                &[&l32, &r32],
                &props,
                &o32,
            );
            if out[0].dtype == DType::F32 {
                return vec![d];
            }
            return vec![cx.op1("stablehlo.convert", &[&d], &[&o32], "", &out[0])];
        }
        vec![cx.op1(
            "stablehlo.dot_general",
            &[&ins[0], &ins[1]],
            &[l, r],
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
        // No transpose: both sides batched make one more batch dimension (the first of the
        // result); one side batched makes its batch dim a free dim of the result.
        use crate::interpreters::batching::shift_axis;
        let shifted = |ds: &[usize], b: Option<usize>| -> Vec<usize> {
            ds.iter()
                .map(|&d| b.map_or(d, |b| shift_axis(d, b)))
                .collect()
        };
        let (ld, rd) = (dims[0], dims[1]);
        let mut prim = DotGeneral {
            lhs_contract: shifted(&self.lhs_contract, ld),
            rhs_contract: shifted(&self.rhs_contract, rd),
            lhs_batch: shifted(&self.lhs_batch, ld),
            rhs_batch: shifted(&self.rhs_batch, rd),
        };
        let (lhs, rhs) = (args[0].aval(), args[1].aval());
        let nbatch = prim.lhs_batch.len();
        let out = match (ld, rd) {
            (Some(l), Some(r)) => {
                prim.lhs_batch.insert(0, l);
                prim.rhs_batch.insert(0, r);
                0
            }
            (Some(l), None) => {
                let free = DotGeneral::free_dims(lhs.rank(), &prim.lhs_contract, &prim.lhs_batch);
                nbatch + free.iter().position(|&d| d == l).expect("a free dim")
            }
            (None, Some(r)) => {
                let lhs_free = lhs.rank() - prim.lhs_contract.len() - nbatch;
                let free = DotGeneral::free_dims(rhs.rank(), &prim.rhs_contract, &prim.rhs_batch);
                nbatch + lhs_free + free.iter().position(|&d| d == r).expect("a free dim")
            }
            (None, None) => unreachable!("a batching rule has a batched operand"),
        };
        let y = bind1(prim, args);
        (vec![y], vec![Some(out)])
    }
    as_any!();
}
