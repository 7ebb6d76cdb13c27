//! `remat` (gradient checkpointing, `jax.checkpoint`): a function whose intermediate values
//! are recomputed in the backward pass instead of being kept from the forward pass, trading
//! compute for memory. The `#[remat]` macro and [`remat`] both go through [`remat_call`]; the
//! primitive and its rules are in [`crate::higher_order::remat`].

use crate::core::array::Array;
use crate::core::trace::{bind1, bind_at, At, Operand};
use crate::higher_order::remat::{CheckpointName, RematCall};
use crate::transforms::traced::{avals_of, rebuild, trace_tree};
use crate::tree::Tree;
use std::fmt;
use std::panic::Location;
use std::sync::Arc;

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
    /// Keep the values marked with [`checkpoint_name`] under one of these names
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
/// ```ignore
/// let block = remat(|(x, w1, w2): (Array, Array, Array)| &x + x.matmul(&w1).gelu().matmul(&w2));
/// let y: Array = block.call((x, w1, w2));
/// let cheap = remat(f).policy(RematPolicy::DotsSaveable);
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
        .map(Operand::Array)
        .collect();
    let outs = bind_at(Arc::new(prim), &operands, loc);
    rebuild(format_args!("remat {}", At::line(loc)), &out_def, outs)
}

/// `jax.ad_checkpoint.checkpoint_name`: `x` itself, marked with `name`, so that
/// [`RematPolicy::SaveOnlyTheseNames`] can keep it from the forward pass.
///
/// ```ignore
/// let h = checkpoint_name(&x.matmul(&w1), "hidden");
/// let block = remat(f).policy(RematPolicy::save_only_these_names(["hidden"]));
/// ```
#[track_caller]
pub fn checkpoint_name(x: &Array, name: &str) -> Array {
    bind1(
        CheckpointName {
            name: name.to_string(),
        },
        &[Operand::Array(x)],
    )
}
