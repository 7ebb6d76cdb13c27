//! `remat` (gradient checkpointing, `jax.checkpoint`): a function whose intermediate values
//! are recomputed in the backward pass instead of being kept from the forward pass, trading
//! compute for memory. The `#[remat]` macro and [`remat`] both go through [`remat_call`]; the
//! primitive and its rules are in [`crate::higher_order::remat`].

use crate::core::array::Array;
use crate::core::trace::{bind1, bind_at, At, Operand};
pub use crate::higher_order::remat::RematPolicy;
use crate::higher_order::remat::{CheckpointName, RematCall};
use crate::transforms::traced::{avals_of, rebuild, trace_tree};
use crate::tree::Tree;
use std::panic::Location;
use std::sync::Arc;

/// A rematerialised function; see [`remat`].
#[derive(Clone)]
pub struct Remat<F> {
    f: F,
    policy: RematPolicy,
}

/// `jax.checkpoint` / `jax.remat`: `f` computes the same values, but under `grad`/`vjp` its
/// intermediate values are recomputed in the backward pass instead of being kept alive from
/// the forward pass (except those the [`RematPolicy`] saves). Compose it with everything:
/// `jit(value_and_grad(..))` over a model whose blocks are rematerialised keeps one block's
/// activations alive at a time instead of all of them.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // A residual block: under grad, its activations are recomputed instead of kept.
/// let block = remat(|(x, w): (Array, Array)| &x + x.matmul(&w).tanh());
/// let x = Array::from_vec(vec![1.0f32, 2.0], &[1, 2]);
/// let w = Array::zeros(&[2, 2], DType::F32);
/// let y: Array = block.call((x.clone(), w.clone()));
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 2.0]);
///
/// // The same derivatives as without remat, whatever the policy.
/// let cheap = block.clone().policy(RematPolicy::DotsSaveable);
/// for f in [&block, &cheap] {
///     let dw = grad(|w: Array| f.call::<_, Array>((x.clone(), w)).sum(None, false))(w.clone());
///     assert_eq!(dw.to_vec::<f32>(), vec![1.0, 1.0, 2.0, 2.0]);
/// }
/// ```
///
/// Values the function captures (weights in a closure) are differentiated like its
/// arguments.
pub fn remat<F>(f: F) -> Remat<F> {
    Remat {
        f,
        policy: RematPolicy::default(),
    }
}

impl<F> Remat<F> {
    /// The same function with another policy.
    pub fn policy(mut self, policy: RematPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The policy in force.
    pub fn current_policy(&self) -> &RematPolicy {
        &self.policy
    }

    /// Calls the function (it is traced on each call, then evaluated or recorded into the
    /// enclosing transformation as one `remat` equation).
    #[track_caller]
    pub fn call<A: Tree, R: Tree>(&self, args: A) -> R
    where
        F: Fn(A) -> R,
    {
        remat_call(self.policy.clone(), args, &self.f)
    }
}

/// Calls `body` on `args` as a rematerialised function. The `#[remat]` macro expands to this;
/// `args` may hold Rust scalars, which `body` receives as weakly typed 0-d arrays (so `A` and
/// `AT` differ), as with `#[jit]`.
#[track_caller]
pub fn remat_call<A: Tree, AT: Tree, R: Tree>(
    policy: RematPolicy,
    args: A,
    body: impl FnOnce(AT) -> R,
) -> R {
    let loc = Location::caller();
    let (leaves, in_def) = args.flatten();
    drop(args);
    let (closed, out_def) = trace_tree(
        format_args!("remat {}", At::line(loc)),
        &in_def,
        &avals_of(&leaves),
        body,
    );
    let mut jaxpr = closed.jaxpr;
    // Captured values become leading inputs, differentiated like the arguments.
    let num_consts = jaxpr.constvars.len();
    let mut invars = std::mem::take(&mut jaxpr.constvars);
    invars.append(&mut jaxpr.invars);
    jaxpr.invars = invars;
    let prim = RematCall {
        jaxpr: Arc::new(jaxpr),
        num_consts,
        policy,
        loc,
    };
    let operands: Vec<Operand> = closed
        .consts
        .iter()
        .chain(&leaves)
        .map(Operand::from)
        .collect();
    let outs = bind_at(Arc::new(prim), &operands, loc);
    rebuild(format_args!("remat {}", At::line(loc)), &out_def, outs)
}

/// `jax.ad_checkpoint.checkpoint_name`: `x` itself, marked with `name`, so that
/// [`RematPolicy::SaveOnlyTheseNames`] can keep it from the forward pass.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // Keeps the hidden layer for the backward pass, recomputes the rest.
/// let mlp = remat(|(x, w1, w2): (Array, Array, Array)| {
///     let h = checkpoint_name(&x.matmul(&w1), "hidden");
///     h.relu().matmul(&w2)
/// })
/// .policy(RematPolicy::save_only_these_names(["hidden"]));
/// let x = Array::ones(&[1, 2], DType::F32);
/// let w2 = Array::ones(&[2, 1], DType::F32);
/// let loss = |w1: Array| mlp.call::<_, Array>((x.clone(), w1, w2.clone())).sum(None, false);
/// let (y, dw1) = value_and_grad(loss)(Array::ones(&[2, 2], DType::F32));
/// assert_eq!(y.item::<f32>(), 4.0);
/// assert_eq!(dw1.to_vec::<f32>(), vec![1.0; 4]);
/// ```
#[track_caller]
pub fn checkpoint_name(x: &Array, name: &str) -> Array {
    bind1(
        CheckpointName {
            name: name.to_string(),
        },
        &[Operand::from(x)],
    )
}
