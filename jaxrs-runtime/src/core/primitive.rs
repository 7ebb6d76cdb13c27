//! The primitive table: each primitive is one type implementing [`Primitive`], with all its
//! rules side by side (shape/dtype inference, lowering; the autodiff and batching rules join
//! them in the same impl).
//!
//! The primitives themselves live in the `prims` and `higher_order` modules, one module per
//! family.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::LowerCtx;
use crate::core::sharding_types::SpecRule;
use crate::core::trace::Operand;
use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

/// A primitive operation with its parameters (e.g. `reduce_sum[axes=(1,)]`).
pub trait Primitive: Debug + Send + Sync + 'static {
    /// The name printed in jaxprs.
    fn name(&self) -> &'static str;

    /// The parameters as printed in jaxprs (`axes=(1,)`); empty when there are none.
    fn params_string(&self) -> String {
        String::new()
    }

    /// What tells this primitive's programs apart, for the eager executable cache (with the
    /// operand and result types): its derived `Debug` text, which shows every parameter.
    /// Primitives whose `Debug` is written by hand and leaves parts out (bodies, callbacks)
    /// return `None`, and eager calls of them are keyed on their lowered program instead.
    fn eager_key(&self) -> Option<String> {
        Some(format!("{self:?}"))
    }

    /// Shape and dtype inference. `Err` carries what is wrong, without the op name or the
    /// shapes: the caller adds both, and the user's source line.
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String>;

    /// How the results lie over explicit mesh axes given the operands' type shardings (JAX's
    /// sharding rule; see `core::sharding_types`): one spec entry per result dimension, per
    /// result. Called only when an operand has a type sharding. `Err` says why the results'
    /// sharding would be ambiguous. The default refuses sharded operands.
    fn sharding_rule(&self, inputs: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = (inputs, outs);
        Err(crate::core::sharding_types::no_rule(self.name()))
    }

    /// Forward mode: the tangents of the outputs, given the primal inputs, their tangents
    /// (`None` is a zero tangent: a constant, or an integer value) and the primal outputs.
    /// Written with array operations, so the rule is itself traced and differentiable.
    fn jvp(
        &self,
        primals: &[Operand],
        tangents: &[Option<Array>],
        outs: &[Array],
    ) -> Vec<Option<Array>> {
        let _ = (primals, tangents, outs);
        panic!("{}: no forward-mode differentiation rule", self.name())
    }

    /// Reverse mode: the cotangents of the inputs, given the primal inputs and outputs and the
    /// outputs' cotangents (`None` is zero). `None` for an input means a zero cotangent.
    /// `wanted[i]` says whether input `i` needs one at all (constants do not): a rule may skip
    /// the work for the others.
    fn vjp(
        &self,
        primals: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let _ = (primals, outs, cts, wanted);
        panic!("{}: no reverse-mode differentiation rule", self.name())
    }

    /// Reverse mode for primitives that run their own forward pass, choosing what to keep for
    /// the backward one (loops keep per-step residuals, remat keeps almost nothing): returns
    /// the outputs and the backward function. `None` (the default) means: bind normally, then
    /// use [`Primitive::vjp`].
    fn linearize(&self, primals: &[Operand]) -> Option<(Vec<Array>, Backward)> {
        let _ = primals;
        None
    }

    /// Emits StableHLO for one equation; returns the SSA names of its results.
    fn lower(
        &self,
        cx: &mut LowerCtx,
        inputs: &[String],
        in_avals: &[Aval],
        out_avals: &[Aval],
    ) -> Vec<String>;

    /// Batching (vmap): the outputs and their batch dims, given the operands and their batch
    /// dims (`None`: unbatched, the same for every example; a literal is never batched) and
    /// the batch size. At least one operand is batched (or, for a collective over the batch
    /// axis, none may be: see [`Primitive::uses_named_axis`]). A rule binds (through the array API or
    /// [`crate::core::trace::bind1`]) the primitive applied to the whole batch at once, moving batch
    /// dims only where the primitive needs them elsewhere; an output may be unbatched.
    /// Helpers: the batching toolkit (`interpreters::batching`).
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        let _ = (args, dims, axis_size);
        panic!("no batching rule for {} (vmap cannot map it)", self.name())
    }

    /// Does this equation communicate over the named axis `name` (a collective such as
    /// `psum(x, "i")`, or a higher-order primitive whose body holds one)? The batching pass
    /// of `vmap(axis_name = name)` then runs the batching rule even when no operand is
    /// batched: `axis_index("i")` has no operands, yet differs between examples.
    fn uses_named_axis(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// Runs the primitive on concrete operands without compiling it, for a primitive that
    /// acts on the host (`debug_print`). `None` (the default): compile and run it as a
    /// single-op program.
    fn eager(&self, inputs: &[Operand]) -> Option<Vec<Array>> {
        let _ = inputs;
        None
    }

    /// For transformations that look for specific primitives.
    fn as_any(&self) -> &dyn Any;
}

/// The backward half of [`Primitive::linearize`]: output cotangents to input cotangents.
/// Its second argument says which inputs need a cotangent at all (as `vjp`'s `wanted`).
pub type Backward = Box<dyn Fn(&[Option<Array>], &[bool]) -> Vec<Option<Array>>>;

/// A shared primitive, as stored in equations.
pub type Prim = Arc<dyn Primitive>;

/// Implements `as_any` for a primitive type.
macro_rules! as_any {
    () => {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    };
}
pub(crate) use as_any;

/// Formats `[1, 2]` as `(1, 2)` like JAX's params.
pub(crate) fn tuple_str<T: std::fmt::Display>(items: &[T]) -> String {
    let inner: Vec<String> = items.iter().map(|x| x.to_string()).collect();
    if inner.len() == 1 {
        format!("({},)", inner[0])
    } else {
        format!("({})", inner.join(", "))
    }
}
