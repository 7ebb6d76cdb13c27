//! `custom_vjp`: a function whose reverse-mode derivative the user supplies.

use crate::aval::{avals_to_string, Aval};
use crate::core::array::Array;
use crate::core::ir::Jaxpr;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::sharding_types::{as_typed_by_body, SpecRule};
use crate::core::trace::{bind, trace_to_jaxpr, Operand};
use crate::interpreters::batching::{
    batch_body_at_front, batch_jaxpr, jaxpr_uses_named_axis, move_bdim,
};
use std::fmt;
use std::sync::Arc;

/// The user's backward function on flat leaves: `(residuals, output cotangents) -> input
/// cotangents`.
pub type FlatBackward = Arc<dyn Fn(Vec<Array>, Vec<Array>) -> Vec<Array> + Send + Sync>;

/// A call of a `custom_vjp` function. Its program is the user's forward function, which
/// returns the outputs then the residuals (XLA drops the residuals when nothing uses them);
/// its reverse-mode rule is the user's backward function. Operands: the forward jaxpr's
/// constants, then the arguments.
#[derive(Clone)]
pub struct CustomVjpCall {
    pub name: &'static str,
    pub fwd: Arc<Jaxpr>,
    pub num_consts: usize,
    /// How many of the forward jaxpr's outputs are the function's outputs (the rest are
    /// residuals).
    pub num_outputs: usize,
    pub bwd: FlatBackward,
}

impl fmt::Debug for CustomVjpCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "custom_vjp[{}]", self.name)
    }
}

impl Primitive for CustomVjpCall {
    /// Its `Debug` leaves the body out: eager calls key on the lowered program.
    fn eager_key(&self) -> Option<String> {
        None
    }
    fn name(&self) -> &'static str {
        "custom_vjp_call"
    }
    fn params_string(&self) -> String {
        format!("name={} num_outputs={}", self.name, self.num_outputs)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let want: Vec<Aval> = self
            .fwd
            .constvars
            .iter()
            .chain(&self.fwd.invars)
            .map(|v| self.fwd.aval(*v).clone())
            .collect();
        if inputs.len() != want.len() || inputs.iter().zip(&want).any(|(a, b)| !a.same_type(b)) {
            return Err(format!(
                "{} was traced for ({}), not for these operands",
                self.name,
                avals_to_string(&want)
            ));
        }
        Ok(self.fwd.out_avals())
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = ins;
        as_typed_by_body(outs)
    }
    fn jvp(&self, _: &[Operand], _: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        panic!(
            "{}: a custom_vjp function supports reverse mode only (as in JAX); use grad/vjp",
            self.name
        )
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let residuals = outs[self.num_outputs..].to_vec();
        let out_cts: Vec<Array> = cts[..self.num_outputs]
            .iter()
            .zip(outs)
            .map(|(c, o)| {
                c.clone()
                    .unwrap_or_else(|| crate::interpreters::ad::zeros_like_aval(o.aval()))
            })
            .collect();
        let arg_cts = (self.bwd)(residuals, out_cts);
        let mut result = vec![None; self.num_consts];
        result.extend(arg_cts.into_iter().map(Some));
        // Cotangents reaching the residuals (when the backward pass is itself differentiated)
        // flow through the forward function's own operations, as in JAX.
        if cts[self.num_outputs..].iter().any(Option::is_some) {
            let operands: Vec<Array> = p.iter().map(|a| a.to_array().into_owned()).collect();
            let (consts, args) = operands.split_at(self.num_consts);
            let (_, linearized) =
                crate::interpreters::ad::linearize_jaxpr((*self.fwd).clone(), consts, args);
            let mut residual_cts = vec![None; self.num_outputs];
            residual_cts.extend(cts[self.num_outputs..].iter().cloned());
            for (slot, extra) in result[self.num_consts..]
                .iter_mut()
                .zip(linearized.backward(&residual_cts))
            {
                if let Some(extra) = extra {
                    *slot = Some(match slot.take() {
                        Some(c) => c + extra,
                        None => extra,
                    });
                }
            }
        }
        result
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], _: &[Aval], _: &[Aval]) -> Vec<String> {
        cx.lower_inline(&self.fwd, ins)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        custom_vjp_batched(self, args, dims, axis_size)
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        jaxpr_uses_named_axis(&self.fwd, name)
    }
    as_any!();
}

/// A `custom_vjp` call on a batch: a new call whose forward program is the batched forward
/// program (every output and residual batched along 0) and whose backward function maps the
/// user's backward function over the examples; the cotangent of an unbatched argument is
/// the sum of its examples' cotangents.
fn custom_vjp_batched(
    call: &CustomVjpCall,
    args: &[Operand],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let (ops, in_dims, closed) = batch_body_at_front(&call.fwd, args, dims, axis_size);
    let (nc, num_outputs) = (call.num_consts, call.num_outputs);
    let per_example_outs = call.fwd.out_avals();
    let mut bwd_avals = per_example_outs[num_outputs..].to_vec();
    bwd_avals.extend_from_slice(&per_example_outs[..num_outputs]);
    let arg_dims = in_dims[nc..].to_vec();
    let bwd = call.bwd.clone();
    let batched_bwd: FlatBackward = Arc::new(move |residuals: Vec<Array>, cts: Vec<Array>| {
        let num_res = residuals.len();
        let inner = trace_to_jaxpr(&bwd_avals, |mut tracers| {
            let cts = tracers.split_off(num_res);
            bwd(tracers, cts)
        });
        let inputs: Vec<Array> = residuals.into_iter().chain(cts).collect();
        let dims = vec![Some(0); inputs.len()];
        let (grads, grad_dims) =
            batch_jaxpr(&inner.jaxpr, &inner.consts, &inputs, &dims, axis_size);
        grads
            .iter()
            .zip(grad_dims)
            .zip(&arg_dims)
            .map(|((g, d), arg_dim)| match (arg_dim, d) {
                (Some(_), d) => move_bdim(&Operand::from(g), d, 0, axis_size),
                (None, Some(d)) => g.sum(d as i64, false),
                (None, None) => g * axis_size as f64,
            })
            .collect()
    });
    let operands: Vec<Operand> = closed
        .consts
        .iter()
        .chain(&ops)
        .map(Operand::from)
        .collect();
    let prim = CustomVjpCall {
        name: call.name,
        fwd: Arc::new(closed.jaxpr),
        num_consts: closed.consts.len() + nc,
        num_outputs,
        bwd: batched_bwd,
    };
    let outs = bind(Arc::new(prim), &operands);
    let n = outs.len();
    (outs, vec![Some(0); n])
}
