//! Rematerialisation (gradient checkpointing): the `remat` call primitive, the optimisation
//! barrier that keeps XLA from merging the recomputation with the forward pass, and the
//! `checkpoint_name` marker that named-value policies look for.
//!
//! A [`RematCall`] evaluates like the function it holds (lowering inlines its jaxpr). Its
//! reverse-mode rule is [`Primitive::linearize`]: the forward pass keeps only what the policy
//! saves (plus the inputs, which the caller holds anyway); the backward function runs the
//! forward computation again, from the inputs and saved values passed through an
//! [`OptimizationBarrier`] together with the output cotangents, then the backward pass over
//! it. The barrier makes the recomputed values new values as far as XLA can tell (no CSE with
//! the forward pass), and the cotangents in it make the recomputation wait until the backward
//! pass reaches the block, so that its activations are alive only then.

use crate::aval::{avals_to_string, Aval};
use crate::core::array::Array;
use crate::core::ir::{Atom, Eqn, Jaxpr};
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Backward, Primitive};
use crate::core::trace::{bind_at, Operand};
use crate::interpreters::ad::{arg_array, jvp_jaxpr, linearize_jaxpr, linearize_jaxpr_reusing};
use crate::ops::Arg;
use crate::prims::DotGeneral;
use crate::transforms::remat::RematPolicy;
use std::fmt;
use std::panic::Location;
use std::sync::Arc;

/// `stablehlo.optimization_barrier`: the identity on any number of operands, which XLA may
/// not look through (no CSE across it, no moving computations over it).
#[derive(Debug, Clone, Copy)]
pub struct OptimizationBarrier;

impl Primitive for OptimizationBarrier {
    fn name(&self) -> &'static str {
        "optimization_barrier"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        Ok(inputs.to_vec())
    }
    fn jvp(&self, _: &[Arg], tangents: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        tangents.to_vec()
    }
    fn vjp(&self, _: &[Arg], _: &[Array], cts: &[Option<Array>], _: &[bool]) -> Vec<Option<Array>> {
        cts.to_vec()
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out_avals: &[Aval],
    ) -> Vec<String> {
        if ins.is_empty() {
            return vec![];
        }
        let operands: Vec<&str> = ins.iter().map(String::as_str).collect();
        let in_avals: Vec<&Aval> = in_avals.iter().collect();
        let out_avals: Vec<&Aval> = out_avals.iter().collect();
        cx.op(
            "stablehlo.optimization_barrier",
            &operands,
            &in_avals,
            "",
            &out_avals,
        )
    }
    fn batch(
        &self,
        args: &[Arg],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // The identity on every operand: each keeps its batch dim.
        let ops: Vec<Operand> = args.iter().map(Arg::operand).collect();
        (
            crate::core::trace::bind(Arc::new(*self), &ops),
            dims.to_vec(),
        )
    }
    as_any!();
}

/// `checkpoint_name(x, name)`: the identity, marking `x` as a value that
/// [`RematPolicy::SaveOnlyTheseNames`] may save.
#[derive(Debug, Clone)]
pub struct CheckpointName {
    pub name: String,
}

impl Primitive for CheckpointName {
    fn name(&self) -> &'static str {
        "name"
    }
    fn params_string(&self) -> String {
        format!("name={}", self.name)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        crate::prims::arity(inputs, 1)?;
        Ok(vec![inputs[0].clone()])
    }
    fn jvp(&self, _: &[Arg], tangents: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        tangents.to_vec()
    }
    fn vjp(&self, _: &[Arg], _: &[Array], cts: &[Option<Array>], _: &[bool]) -> Vec<Option<Array>> {
        cts.to_vec()
    }
    fn lower(&self, _: &mut LowerCtx, ins: &[String], _: &[Aval], _: &[Aval]) -> Vec<String> {
        vec![ins[0].clone()]
    }
    fn batch(
        &self,
        args: &[Arg],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::unary(self.clone(), args, dims)
    }
    as_any!();
}

/// A call of a rematerialised function. Its jaxpr has no constants: the values the function
/// captured are its leading inputs (`num_consts` of them), so that they are differentiated
/// like the arguments (a captured weight gets its gradient).
#[derive(Clone)]
pub struct RematCall {
    pub jaxpr: Arc<Jaxpr>,
    pub num_consts: usize,
    pub policy: RematPolicy,
    /// Where the rematerialised function was called: the barrier and the recomputation are
    /// attributed to it.
    pub loc: &'static Location<'static>,
}

impl fmt::Debug for RematCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "remat[policy={}]", self.policy)
    }
}

impl RematCall {
    /// Does the policy keep the outputs of this equation of the forward pass?
    fn saves(&self, e: &Eqn) -> bool {
        match &self.policy {
            RematPolicy::NothingSaveable => false,
            RematPolicy::EverythingSaveable => true,
            RematPolicy::DotsSaveable => e.prim.as_any().is::<DotGeneral>(),
            RematPolicy::SaveOnlyTheseNames(names) => e
                .prim
                .as_any()
                .downcast_ref::<CheckpointName>()
                .is_some_and(|n| names.contains(&n.name)),
        }
    }

    /// The forward pass: the outputs, and the outputs of the equations the policy saves
    /// (by equation index).
    fn forward(&self, operands: &[Array]) -> (Vec<Array>, Vec<Option<Vec<Array>>>) {
        let jaxpr = &*self.jaxpr;
        let mut env: Vec<Option<Array>> = vec![None; jaxpr.avals.len()];
        for (v, a) in jaxpr.invars.iter().zip(operands) {
            env[v.0 as usize] = Some(a.clone());
        }
        let mut saved = vec![None; jaxpr.eqns.len()];
        for (i, e) in jaxpr.eqns.iter().enumerate() {
            let ops: Vec<Operand> = e
                .inputs
                .iter()
                .map(|a| match a {
                    Atom::Lit(l) => Operand::Lit(*l),
                    Atom::Var(v) => Operand::Array(
                        env[v.0 as usize]
                            .as_ref()
                            .unwrap_or_else(|| panic!("remat: v{} has no value", v.0)),
                    ),
                })
                .collect();
            let outs = bind_at(e.prim.clone(), &ops, e.loc);
            if self.saves(e) {
                saved[i] = Some(outs.clone());
            }
            for (v, o) in e.outputs.iter().zip(outs) {
                env[v.0 as usize] = Some(o);
            }
        }
        let outs = jaxpr
            .outvars
            .iter()
            .map(|a| match a {
                Atom::Var(v) => env[v.0 as usize].clone().expect("remat: output defined"),
                Atom::Lit(l) => Array::from_literal(*l),
            })
            .collect();
        (outs, saved)
    }
}

fn operand_arrays(primals: &[Arg]) -> Vec<Array> {
    primals.iter().map(|a| arg_array(a).into_owned()).collect()
}

impl Primitive for RematCall {
    fn name(&self) -> &'static str {
        "remat"
    }
    fn params_string(&self) -> String {
        format!("policy={} num_consts={}", self.policy, self.num_consts)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let want = self.jaxpr.in_avals();
        if inputs.len() != want.len() || inputs.iter().zip(&want).any(|(a, b)| !a.same_type(b)) {
            return Err(format!(
                "the rematerialised function was traced for ({}), not for these operands",
                avals_to_string(&want)
            ));
        }
        Ok(self.jaxpr.out_avals())
    }
    /// Forward mode differentiates through the function (no residuals to save).
    fn jvp(&self, primals: &[Arg], tangents: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        jvp_jaxpr(&self.jaxpr, &[], &operand_arrays(primals), tangents).1
    }
    /// Only reached where an equation is given its outputs instead of computing them (an
    /// enclosing remat that saves everything): recompute and differentiate.
    fn vjp(
        &self,
        primals: &[Arg],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let (_, backward) = self.linearize(primals).expect("remat linearizes itself");
        backward(cts, wanted)
    }
    fn linearize(&self, primals: &[Arg]) -> Option<(Vec<Array>, Backward)> {
        let operands = operand_arrays(primals);
        if self.policy == RematPolicy::EverythingSaveable {
            // Nothing is recomputed: plain reverse mode.
            let (outs, linearized) = linearize_jaxpr((*self.jaxpr).clone(), &[], &operands);
            return Some((outs, Box::new(move |cts, _| linearized.backward(cts))));
        }
        let (outs, saved) = self.forward(&operands);
        let call = self.clone();
        let backward = move |cts: &[Option<Array>], _: &[bool]| -> Vec<Option<Array>> {
            // One barrier over the inputs, the saved values and the cotangents.
            let mut values: Vec<&Array> = operands.iter().collect();
            values.extend(saved.iter().flatten().flatten());
            values.extend(cts.iter().flatten());
            let ops: Vec<Operand> = values.into_iter().map(Operand::Array).collect();
            let mut barriered = bind_at(Arc::new(OptimizationBarrier), &ops, call.loc).into_iter();
            let inputs: Vec<Array> = barriered.by_ref().take(operands.len()).collect();
            let reuse: Vec<Option<Vec<Array>>> = saved
                .iter()
                .map(|s| {
                    s.as_ref()
                        .map(|outs| barriered.by_ref().take(outs.len()).collect())
                })
                .collect();
            let cts: Vec<Option<Array>> = cts
                .iter()
                .map(|c| c.as_ref().map(|_| barriered.next().expect("cotangent")))
                .collect();
            let (_, linearized) =
                linearize_jaxpr_reusing((*call.jaxpr).clone(), &[], &inputs, reuse);
            linearized.backward(&cts)
        };
        Some((outs, Box::new(backward)))
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], _: &[Aval], _: &[Aval]) -> Vec<String> {
        cx.lower_inline(&self.jaxpr, ins)
    }
    fn batch(
        &self,
        args: &[Arg],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::remat_batched(self, args, dims, axis_size)
    }
    as_any!();
}
