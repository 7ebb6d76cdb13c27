//! `optimization_barrier`: values XLA may not move computations across
//! (`stablehlo.optimization_barrier`).

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::sharding_types::{dims_of, SpecRule};
use crate::core::trace::{bind, Operand};
use crate::tree::{tree_unflatten, Tree};
use std::sync::Arc;

/// The identity on any number of operands, opaque to XLA's optimizer: what the barrier's
/// outputs depend on is computed before it, what depends on them after (JAX uses it to
/// keep rematerialised values from being merged back into the forward pass).
#[derive(Debug, Clone, Copy)]
pub struct OptimizationBarrier;

impl Primitive for OptimizationBarrier {
    fn name(&self) -> &'static str {
        "optimization_barrier"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        Ok(inputs.to_vec())
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        Ok(ins.iter().map(dims_of).collect())
    }
    // The derivatives are the identity's, as JAX's: a barrier orders computations and
    // changes no value.
    fn jvp(&self, _: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        t.to_vec()
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        cts.iter()
            .zip(wanted)
            .map(|(c, &w)| if w { c.clone() } else { None })
            .collect()
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        if ins.is_empty() {
            return vec![];
        }
        let operands: Vec<&str> = ins.iter().map(String::as_str).collect();
        let avals: Vec<&Aval> = in_avals.iter().collect();
        let results: Vec<&Aval> = out.iter().collect();
        cx.op(
            "stablehlo.optimization_barrier",
            &operands,
            &avals,
            "",
            &results,
        )
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // One barrier over the whole batch: each operand keeps its batch dim (or none).
        (bind(Arc::new(*self), args), dims.to_vec())
    }
    as_any!();
}

/// `x` unchanged, behind a barrier XLA's optimizer does not move computations across
/// (`lax.optimization_barrier`), for any tree of arrays. Differentiates and batches as the
/// identity.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let (a, b) = jaxrs::lax::optimization_barrier((x.clone(), x.sin()));
/// assert_eq!(a.to_vec::<f32>(), vec![1.0, 2.0]);
/// assert_eq!(b.shape(), &[2]);
/// ```
#[track_caller]
pub fn optimization_barrier<T: Tree>(x: T) -> T {
    let (leaves, def) = x.flatten();
    if leaves.is_empty() {
        return tree_unflatten(&def, leaves);
    }
    let operands: Vec<Operand> = leaves.iter().map(Operand::from).collect();
    tree_unflatten(&def, bind(Arc::new(OptimizationBarrier), &operands))
}
