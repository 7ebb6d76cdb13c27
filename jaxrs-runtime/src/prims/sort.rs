//! Sorting: one primitive, `sort`, that sorts several same-shaped operands along one dimension
//! by the first `num_keys` of them (compared lexicographically), stably, as `lax.sort`.
//! `argsort` and `top_k` in the Array layer are sorts that carry an iota along.

use super::elementwise::{compare_props, CompareOp};
use super::index::{ScatterAddAlongAxis, TakeAlongAxis};
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::sharding::PartitionDim;
use crate::core::sharding_types::{dims_of, elementwise_rule, SpecRule};
use crate::core::trace::{bind, bind1, Operand};
use crate::dtype::DType;
use crate::interpreters::batching::{align, shift_axis};
use std::sync::Arc;

/// Sorts all operands along `dimension` by the first `num_keys` (the first key first, ties
/// broken by the next), stably: ascending with NaN last (as JAX's total order: `-0.0` ties
/// `0.0`, every NaN ties every NaN), or descending with NaN first (`top_k`'s order).
#[derive(Debug, Clone)]
pub struct Sort {
    pub dimension: usize,
    pub descending: bool,
    /// How many leading operands are keys (at least 1).
    pub num_keys: usize,
}

impl Sort {
    /// The permutation this sort applies to the key `x`: `perm[.., j, ..]` is the position
    /// along `dimension` of the element that lands at `j`.
    fn permutation(&self, primals: &[Operand]) -> Array {
        let keys: Vec<Array> = primals[..self.num_keys]
            .iter()
            .map(|k| k.to_array().into_owned())
            .collect();
        let iota = Array::iota(DType::I32, keys[0].shape(), self.dimension);
        let mut operands: Vec<Operand> = keys.iter().map(Operand::from).collect();
        operands.push(Operand::from(&iota));
        bind(Arc::new(self.clone()), &operands).remove(self.num_keys)
    }
}

impl Primitive for Sort {
    fn name(&self) -> &'static str {
        "sort"
    }
    fn params_string(&self) -> String {
        format!(
            "dimension={} is_stable=True num_keys={}{}",
            self.dimension,
            self.num_keys,
            if self.descending {
                " descending=True"
            } else {
                ""
            }
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let Some(first) = inputs.first() else {
            return Err("expected at least one operand".into());
        };
        if self.dimension >= first.rank() {
            return Err(format!(
                "dimension {} is out of range for rank {}",
                self.dimension,
                first.rank()
            ));
        }
        if self.num_keys == 0 || self.num_keys > inputs.len() {
            return Err(format!(
                "num_keys {} must be between 1 and the number of operands ({})",
                self.num_keys,
                inputs.len()
            ));
        }
        if inputs.iter().any(|a| a.shape != first.shape) {
            return Err("operands must have the same shape".into());
        }
        Ok(inputs.iter().map(|a| a.clone().weak(false)).collect())
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        for a in ins {
            if dims_of(a)[self.dimension] != PartitionDim::Replicated {
                return Err(format!(
                    "the arguments to sort must be unsharded over the sorting dimension; got {a} \
                     and sorting dimension {}",
                    self.dimension
                ));
            }
        }
        elementwise_rule(self.name(), ins, outs)
    }
    fn jvp(
        &self,
        primals: &[Operand],
        tangents: &[Option<Array>],
        _: &[Array],
    ) -> Vec<Option<Array>> {
        // As JAX: the tangents follow their primals through the sort's permutation.
        if tangents.iter().all(Option::is_none) {
            return vec![None; tangents.len()];
        }
        let perm = self.permutation(primals);
        tangents
            .iter()
            .map(|t| {
                t.as_ref().map(|t| {
                    bind1(
                        TakeAlongAxis {
                            axis: self.dimension,
                        },
                        &[Operand::from(t), Operand::from(&perm)],
                    )
                })
            })
            .collect()
    }
    fn vjp(
        &self,
        primals: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        if !cts.iter().zip(wanted).any(|(c, &w)| c.is_some() && w) {
            return vec![None; cts.len()];
        }
        let perm = self.permutation(primals);
        cts.iter()
            .zip(wanted)
            .map(|(ct, &w)| {
                ct.as_ref().filter(|_| w).map(|ct| {
                    bind1(
                        ScatterAddAlongAxis {
                            axis: self.dimension,
                        },
                        &[
                            Operand::from(&Array::zeros(ct.shape(), ct.dtype())),
                            Operand::from(&perm),
                            Operand::from(ct),
                        ],
                    )
                })
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
        let keys: Vec<DType> = in_avals[..self.num_keys].iter().map(|a| a.dtype).collect();
        let region_args: Vec<Aval> = in_avals
            .iter()
            .flat_map(|a| [Aval::scalar(a.dtype), Aval::scalar(a.dtype)])
            .collect();
        let descending = self.descending;
        let region = cx.region(&region_args, |cx, r| {
            let b = Aval::scalar(DType::Bool);
            // Lexicographic: key k decides when the keys before it tie; folded from the last
            // key, `lt = lt_k or (tie_k and lt_rest)`.
            let mut acc: Option<String> = None;
            for (k, &key) in keys.iter().enumerate().rev() {
                let (lhs, rhs) = (&r[2 * k], &r[2 * k + 1]);
                let lt = key_before(cx, key, descending, lhs, rhs);
                acc = Some(match acc {
                    None => lt,
                    Some(rest) => {
                        let gt = key_before(cx, key, descending, rhs, lhs);
                        before_then_by(cx, &lt, &gt, &rest)
                    }
                });
            }
            vec![(acc.expect("at least one key"), b)]
        });
        let operands: Vec<&str> = ins.iter().map(String::as_str).collect();
        let avals: Vec<&Aval> = in_avals.iter().collect();
        let outs: Vec<&Aval> = out.iter().collect();
        cx.op_with_regions(
            "stablehlo.sort",
            &operands,
            &avals,
            &format!("dimension = {} : i64, is_stable = true", self.dimension),
            &[region],
            &outs,
        )
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let (xs, to) = align(args, dims, axis_size);
        let prim = Sort {
            dimension: shift_axis(self.dimension, to),
            ..self.clone()
        };
        let operands: Vec<Operand> = xs.iter().map(Operand::from).collect();
        let outs = bind(Arc::new(prim), &operands);
        let n = outs.len();
        (outs, vec![Some(to); n])
    }
    as_any!();
}

/// Does `lhs` sort strictly before `rhs` by one key of dtype `key`? Ascending puts NaN after
/// every number, descending before. Complex keys order by real part, then imaginary part, each
/// with that NaN rule (JAX's comparator); XLA's `compare` has no order for complex numbers.
fn key_before(cx: &mut LowerCtx, key: DType, descending: bool, lhs: &str, rhs: &str) -> String {
    if key.is_complex() {
        return complex_key_before(cx, key, descending, lhs, rhs);
    }
    let (sv, b) = (Aval::scalar(key), Aval::scalar(DType::Bool));
    let dir = if descending {
        CompareOp::Gt
    } else {
        CompareOp::Lt
    };
    let ordered = cx.op1(
        "stablehlo.compare",
        &[lhs, rhs],
        &[&sv, &sv],
        &compare_props(dir, key),
        &b,
    );
    if !key.is_float() {
        return ordered;
    }
    // `lhs` goes first when it is a number and `rhs` a NaN (ascending), or the other way round.
    let ne = compare_props(CompareOp::Ne, key);
    let lhs_nan = cx.op1("stablehlo.compare", &[lhs, lhs], &[&sv, &sv], &ne, &b);
    let rhs_nan = cx.op1("stablehlo.compare", &[rhs, rhs], &[&sv, &sv], &ne, &b);
    let (nan, number) = if descending {
        (lhs_nan, rhs_nan)
    } else {
        (rhs_nan, lhs_nan)
    };
    let not_nan = cx.op1("stablehlo.not", &[&number], &[&b], "", &b);
    let nan_order = cx.op1("stablehlo.and", &[&nan, &not_nan], &[&b, &b], "", &b);
    cx.op1("stablehlo.or", &[&ordered, &nan_order], &[&b, &b], "", &b)
}

/// [`key_before`] for a complex key: lexicographic over its real and imaginary parts.
fn complex_key_before(
    cx: &mut LowerCtx,
    key: DType,
    descending: bool,
    lhs: &str,
    rhs: &str,
) -> String {
    let (sv, part) = (Aval::scalar(key), Aval::scalar(key.real_dtype()));
    let mut parts = |op: &str| [lhs, rhs].map(|z| cx.op1(op, &[z], &[&sv], "", &part));
    let [lre, rre] = parts("stablehlo.real");
    let [lim, rim] = parts("stablehlo.imag");
    let re_lt = key_before(cx, part.dtype, descending, &lre, &rre);
    let re_gt = key_before(cx, part.dtype, descending, &rre, &lre);
    let im_lt = key_before(cx, part.dtype, descending, &lim, &rim);
    before_then_by(cx, &re_lt, &re_gt, &im_lt)
}

/// Lexicographic order: `lt or (not lt and not gt and rest)`, where `lt`/`gt` compare by the
/// first key and `rest` by the keys after it.
fn before_then_by(cx: &mut LowerCtx, lt: &str, gt: &str, rest: &str) -> String {
    let b = Aval::scalar(DType::Bool);
    let either = cx.op1("stablehlo.or", &[lt, gt], &[&b, &b], "", &b);
    let tie = cx.op1("stablehlo.not", &[&either], &[&b], "", &b);
    let then = cx.op1("stablehlo.and", &[&tie, rest], &[&b, &b], "", &b);
    cx.op1("stablehlo.or", &[lt, &then], &[&b, &b], "", &b)
}
