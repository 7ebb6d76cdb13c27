//! `custom_vjp`: a function whose reverse-mode derivative the user supplies.

use crate::aval::{avals_to_string, Aval};
use crate::core::array::Array;
use crate::core::ir::Jaxpr;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::ops::Arg;
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
    fn jvp(&self, _: &[Arg], _: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        panic!(
            "{}: a custom_vjp function supports reverse mode only (as in JAX); use grad/vjp",
            self.name
        )
    }
    fn vjp(
        &self,
        p: &[Arg],
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
                    .unwrap_or_else(|| crate::interpreters::ad::zeros(o.aval()))
            })
            .collect();
        let arg_cts = (self.bwd)(residuals, out_cts);
        let mut result = vec![None; self.num_consts];
        result.extend(arg_cts.into_iter().map(Some));
        // Cotangents reaching the residuals (when the backward pass is itself differentiated)
        // flow through the forward function's own operations, as in JAX.
        if cts[self.num_outputs..].iter().any(Option::is_some) {
            let operands: Vec<Array> = p
                .iter()
                .map(|a| crate::interpreters::ad::arg_array(a).into_owned())
                .collect();
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
        args: &[Arg],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        crate::interpreters::batching::custom_vjp_batched(self, args, dims, axis_size)
    }
    as_any!();
}
