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
use crate::core::ir::{Env, Eqn, Jaxpr};
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Backward, Primitive};
use crate::core::sharding_types::{as_typed_by_body, dims_of, SpecRule};
use crate::core::trace::{bind, bind_at, in_scope_of, trace_to_jaxpr, Operand};
use crate::interpreters::ad::{jvp_jaxpr, linearize_jaxpr, linearize_jaxpr_reusing};
use crate::interpreters::batching::{
    batched_avals, batched_outputs, eval_at_0, jaxpr_uses_named_axis, operands_at_0,
};
use crate::prims::DotGeneral;
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
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        Ok(ins.iter().map(dims_of).collect())
    }
    fn jvp(&self, _: &[Operand], tangents: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        tangents.to_vec()
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
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
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // The identity on every operand: each keeps its batch dim.
        let ops: Vec<Operand> = args.iter().map(Operand::borrowed).collect();
        (bind(Arc::new(*self), &ops), dims.to_vec())
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
    fn jvp(&self, _: &[Operand], tangents: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        tangents.to_vec()
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
        cts.to_vec()
    }
    fn lower(&self, _: &mut LowerCtx, ins: &[String], _: &[Aval], _: &[Aval]) -> Vec<String> {
        vec![ins[0].clone()]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::unary(self.clone(), args, dims)
    }
    as_any!();
}

/// What a rematerialised function keeps from its forward pass for the backward one; the rest
/// is recomputed. Like `jax.checkpoint_policies`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum RematPolicy {
    /// Keep nothing but the inputs: recompute every intermediate value (the default, JAX's
    /// `nothing_saveable`).
    #[default]
    NothingSaveable,
    /// Keep the results of matrix products (`dot_general`), recompute the cheap elementwise
    /// work around them (`dots_saveable`).
    DotsSaveable,
    /// Keep everything: plain reverse mode, nothing recomputed (`everything_saveable`).
    EverythingSaveable,
    /// Keep the values marked with [`checkpoint_name`](crate::checkpoint_name) under one of these names
    /// (`save_only_these_names`).
    SaveOnlyTheseNames(Vec<String>),
}

impl RematPolicy {
    /// [`RematPolicy::SaveOnlyTheseNames`] from any list of names.
    pub fn save_only_these_names<S: Into<String>>(
        names: impl IntoIterator<Item = S>,
    ) -> RematPolicy {
        RematPolicy::SaveOnlyTheseNames(names.into_iter().map(Into::into).collect())
    }
}

impl fmt::Display for RematPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RematPolicy::NothingSaveable => f.write_str("nothing_saveable"),
            RematPolicy::DotsSaveable => f.write_str("dots_saveable"),
            RematPolicy::EverythingSaveable => f.write_str("everything_saveable"),
            RematPolicy::SaveOnlyTheseNames(names) => {
                write!(f, "save_only_these_names({})", names.join(", "))
            }
        }
    }
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
        let mut env = Env::new(jaxpr, "remat");
        for (v, a) in jaxpr.invars.iter().zip(operands) {
            env.set(*v, a.clone());
        }
        let mut saved = vec![None; jaxpr.eqns.len()];
        for (i, e) in jaxpr.eqns.iter().enumerate() {
            let ops: Vec<Operand> = e.inputs.iter().map(|a| env.operand(a)).collect();
            let outs = in_scope_of(e, || bind_at(e.prim.clone(), &ops, e.loc));
            drop(ops);
            if self.saves(e) {
                saved[i] = Some(outs.clone());
            }
            for (v, o) in e.outputs.iter().zip(outs) {
                env.set(*v, o);
            }
        }
        let outs = jaxpr.outvars.iter().map(|a| env.read(a)).collect();
        (outs, saved)
    }
}

impl Primitive for RematCall {
    /// Its `Debug` leaves the body out: eager calls key on the lowered program.
    fn eager_key(&self) -> Option<String> {
        None
    }
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
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = ins;
        as_typed_by_body(outs)
    }
    /// Forward mode differentiates through the function (no residuals to save).
    fn jvp(
        &self,
        primals: &[Operand],
        tangents: &[Option<Array>],
        _: &[Array],
    ) -> Vec<Option<Array>> {
        jvp_jaxpr(&self.jaxpr, &[], &Operand::to_arrays(primals), tangents).1
    }
    /// Only reached where an equation is given its outputs instead of computing them (an
    /// enclosing remat that saves everything): recompute and differentiate.
    fn vjp(
        &self,
        primals: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let (_, backward) = self.linearize(primals).expect("remat linearizes itself");
        backward(cts, wanted)
    }
    fn linearize(&self, primals: &[Operand]) -> Option<(Vec<Array>, Backward)> {
        let operands = Operand::to_arrays(primals);
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
            let ops: Vec<Operand> = values.into_iter().map(Operand::from).collect();
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
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        remat_batched(self, args, dims, axis_size)
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        jaxpr_uses_named_axis(&self.jaxpr, name)
    }
    as_any!();
}

/// A `remat` call on a batch: a call of the batched function (batched inputs and outputs
/// along 0), with the same policy, so that the backward pass recomputes the batched values.
fn remat_batched(
    r: &RematCall,
    args: &[Operand],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let batched: Vec<bool> = dims.iter().map(Option::is_some).collect();
    let out_b = batched_outputs(&r.jaxpr, &batched);
    let ops = operands_at_0(args, dims, &batched, axis_size);
    let jaxpr = r.jaxpr.clone();
    let avals = batched_avals(&jaxpr.in_avals(), &batched, axis_size);
    let closed = trace_to_jaxpr(&avals, |vals| {
        eval_at_0(&jaxpr, &vals, &batched, &out_b, axis_size)
    });
    let prim = RematCall {
        jaxpr: Arc::new(crate::higher_order::control::close_over_consts(
            closed.jaxpr,
        )),
        num_consts: closed.consts.len() + r.num_consts,
        policy: r.policy.clone(),
        loc: r.loc,
    };
    let operands: Vec<Operand> = closed
        .consts
        .iter()
        .chain(&ops)
        .map(Operand::from)
        .collect();
    let outs = bind(Arc::new(prim), &operands);
    (outs, out_b.iter().map(|&b| b.then_some(0)).collect())
}
