//! `custom_jvp`: a function whose forward-mode derivative the user supplies.
//!
//! Reverse mode comes from the same rule, as in JAX: the user's JVP is linear in the tangents,
//! so the cotangents are the pullback of `tangents -> jvp(primals, tangents)` (jaxrs traces
//! that function of the tangents and runs its reverse pass: the transpose of the linear map).

use crate::aval::{avals_to_string, Aval};
use crate::core::array::Array;
use crate::core::ir::Jaxpr;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::sharding_types::{as_typed_by_body, SpecRule};
use crate::core::trace::{bind, trace_to_jaxpr, Operand};
use crate::interpreters::ad::{transpose_linear, zeros_like_aval};
use crate::interpreters::batching::{
    batch_body_at_front, batch_jaxpr, jaxpr_uses_named_axis, move_bdim,
};
use std::fmt;
use std::sync::Arc;

/// The user's JVP on flat leaves: `(primal arguments, their tangents) -> output tangents`.
pub type FlatJvp = Arc<dyn Fn(Vec<Array>, Vec<Array>) -> Vec<Array> + Send + Sync>;

/// A call of a `custom_jvp` function. Its program is the user's function; its derivative
/// rules are the user's JVP and that JVP's transpose. Operands: the function's jaxpr's
/// constants (values it closes over, which the rule gives no tangent), then the arguments.
pub struct CustomJvpCall {
    pub name: &'static str,
    pub fun: Arc<Jaxpr>,
    pub num_consts: usize,
    pub jvp: FlatJvp,
}

impl fmt::Debug for CustomJvpCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CustomJvpCall({})", self.name)
    }
}

impl CustomJvpCall {
    /// Stops when a value the function closes over is being differentiated: the user's rule
    /// knows only the arguments, so its derivative would be dropped.
    fn refuse_closed_over(&self, differentiated: impl Iterator<Item = bool>) {
        if differentiated.take(self.num_consts).any(|d| d) {
            panic!(
                "custom_jvp `{}`: the function closes over a value that is being \
                 differentiated; pass it as an argument so that the JVP rule sees its tangent",
                self.name
            );
        }
    }

    fn arguments(&self, p: &[Operand]) -> Vec<Array> {
        p[self.num_consts..]
            .iter()
            .map(|a| a.to_array().into_owned())
            .collect()
    }
}

impl Primitive for CustomJvpCall {
    /// Its `Debug` leaves the body out: eager calls key on the lowered program.
    fn eager_key(&self) -> Option<String> {
        None
    }
    fn name(&self) -> &'static str {
        "custom_jvp_call"
    }
    fn params_string(&self) -> String {
        format!("name={}", self.name)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let want: Vec<Aval> = self
            .fun
            .constvars
            .iter()
            .chain(&self.fun.invars)
            .map(|v| self.fun.aval(*v).clone())
            .collect();
        if inputs.len() != want.len() || inputs.iter().zip(&want).any(|(a, b)| !a.same_type(b)) {
            return Err(format!(
                "{} was traced for ({}), not for these operands",
                self.name,
                avals_to_string(&want)
            ));
        }
        Ok(self.fun.out_avals())
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = ins;
        as_typed_by_body(outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        self.refuse_closed_over(t.iter().map(Option::is_some));
        let primals = self.arguments(p);
        let tangents: Vec<Array> = t[self.num_consts..]
            .iter()
            .zip(&primals)
            .map(|(t, x)| t.clone().unwrap_or_else(|| zeros_like_aval(x.aval())))
            .collect();
        (self.jvp)(primals, tangents)
            .into_iter()
            .map(Some)
            .collect()
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        self.refuse_closed_over(wanted.iter().copied());
        let primals = self.arguments(p);
        // Only float arguments have tangents to transpose; the others stay zero.
        let inexact: Vec<usize> = (0..primals.len())
            .filter(|&i| primals[i].dtype().is_inexact())
            .collect();
        let (jvp, args) = (self.jvp.clone(), primals.clone());
        let positions = inexact.clone();
        let linear = move |t: Vec<Array>| -> Vec<Array> {
            let mut tangents: Vec<Array> = args.iter().map(|a| zeros_like_aval(a.aval())).collect();
            for (slot, t) in positions.iter().zip(t) {
                tangents[*slot] = t;
            }
            jvp(args.clone(), tangents)
        };
        let avals: Vec<Aval> = inexact.iter().map(|&i| primals[i].aval().clone()).collect();
        let arg_cts = transpose_linear(&avals, linear, cts);
        let mut result = vec![None; p.len()];
        for (i, ct) in inexact.into_iter().zip(arg_cts) {
            result[self.num_consts + i] = Some(ct);
        }
        result
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], _: &[Aval], _: &[Aval]) -> Vec<String> {
        cx.lower_inline(&self.fun, ins)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        custom_jvp_batched(self, args, dims, axis_size)
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        jaxpr_uses_named_axis(&self.fun, name)
    }
    as_any!();
}

/// A `custom_jvp` call on a batch: a new call whose program is the batched program (every
/// output batched along 0) and whose JVP is the user's JVP batched the same way (a tangent is
/// batched where its primal is).
fn custom_jvp_batched(
    call: &CustomJvpCall,
    args: &[Operand],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let (ops, in_dims, closed) = batch_body_at_front(&call.fun, args, dims, axis_size);
    let nc = call.num_consts;
    let per_example: Vec<Aval> = call
        .fun
        .invars
        .iter()
        .map(|v| call.fun.aval(*v).clone())
        .collect();
    let mut jvp_avals = per_example.clone();
    jvp_avals.extend(per_example);
    let arg_dims = in_dims[nc..].to_vec();
    let jvp = call.jvp.clone();
    let batched_jvp: FlatJvp = Arc::new(move |primals: Vec<Array>, tangents: Vec<Array>| {
        let n = primals.len();
        let inner = trace_to_jaxpr(&jvp_avals, |mut tracers| {
            let t = tracers.split_off(n);
            jvp(tracers, t)
        });
        let inputs: Vec<Array> = primals.into_iter().chain(tangents).collect();
        let dims: Vec<Option<usize>> = arg_dims.iter().chain(&arg_dims).copied().collect();
        let (outs, out_dims) = batch_jaxpr(&inner.jaxpr, &inner.consts, &inputs, &dims, axis_size);
        outs.iter()
            .zip(out_dims)
            .map(|(o, d)| move_bdim(&Operand::from(o), d, 0, axis_size))
            .collect()
    });
    let operands: Vec<Operand> = closed
        .consts
        .iter()
        .chain(&ops)
        .map(Operand::from)
        .collect();
    let prim = CustomJvpCall {
        name: call.name,
        fun: Arc::new(closed.jaxpr),
        num_consts: closed.consts.len() + nc,
        jvp: batched_jvp,
    };
    let outs = bind(Arc::new(prim), &operands);
    let n = outs.len();
    (outs, vec![Some(0); n])
}
