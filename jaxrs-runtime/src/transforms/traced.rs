//! Tracing a function over trees, the step every transformation starts with: the inputs'
//! leaves become tracers, the tracers are rebuilt into the function's argument type, and the
//! result is flattened again, its structure kept to rebuild the outputs after.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::ir::ClosedJaxpr;
use crate::core::trace::trace_to_jaxpr_for;
use crate::tree::{try_tree_unflatten, Tree, TreeDef, TreeMismatch};
use std::fmt::Display;

/// Who rebuilds a tree, named in the panic when its leaves do not fit its structure.
///
/// Anything `Display` says `"{what}: {mismatch}"`; [`worded`] words the whole message and
/// [`Unnamed`] gives the mismatch alone, for the callers whose messages always had those forms.
pub(crate) trait Blame {
    fn message(&self, e: &TreeMismatch) -> String;

    /// The transformation a trace runs for, named when the user reads one of its tracers.
    fn transformation(&self) -> Option<String> {
        None
    }
}

impl<W: Display + ?Sized> Blame for W {
    fn message(&self, e: &TreeMismatch) -> String {
        format!("{self}: {e}")
    }

    fn transformation(&self) -> Option<String> {
        Some(self.to_string())
    }
}

/// A message worded by the caller around the mismatch; see [`worded`].
pub(crate) struct Worded<F>(F);

/// Blames with `message(mismatch)` (a function, so the closure's argument type is inferred).
pub(crate) fn worded<F: Fn(&TreeMismatch) -> String>(message: F) -> Worded<F> {
    Worded(message)
}

impl<F: Fn(&TreeMismatch) -> String> Blame for Worded<F> {
    fn message(&self, e: &TreeMismatch) -> String {
        (self.0)(e)
    }
}

/// The mismatch alone.
pub(crate) struct Unnamed;

impl Blame for Unnamed {
    fn message(&self, e: &TreeMismatch) -> String {
        e.to_string()
    }
}

/// The avals of `leaves`, the input signature of a trace.
pub(crate) fn avals_of(leaves: &[Array]) -> Vec<Aval> {
    leaves.iter().map(|l| l.aval().clone()).collect()
}

/// Rebuilds a `T` of structure `def` from `leaves`, or panics with `what`'s message.
#[track_caller]
pub(crate) fn rebuild<T: Tree>(what: impl Blame, def: &TreeDef, leaves: Vec<Array>) -> T {
    // A `match`, not `unwrap_or_else`: the panic then points at the caller's line.
    match try_tree_unflatten(def, leaves) {
        Ok(tree) => tree,
        Err(e) => panic!("{}", what.message(&e)),
    }
}

/// Traces `f` on tracers of `in_avals` rebuilt as a tree of structure `in_def`; returns the
/// jaxpr (its outputs are the leaves of `f`'s result) and the result's structure.
pub(crate) fn trace_tree<A: Tree, R: Tree>(
    what: impl Blame,
    in_def: &TreeDef,
    in_avals: &[Aval],
    f: impl FnOnce(A) -> R,
) -> (ClosedJaxpr, TreeDef) {
    trace_leaves(what.transformation(), in_avals, |tracers| {
        f(rebuild(what, in_def, tracers))
    })
}

/// [`trace_tree`] for a caller that builds the argument from the tracers itself (vmap passes
/// some leaves in untraced); `transformation` names it to a user who reads a tracer.
pub(crate) fn trace_leaves<R: Tree>(
    transformation: Option<String>,
    in_avals: &[Aval],
    f: impl FnOnce(Vec<Array>) -> R,
) -> (ClosedJaxpr, TreeDef) {
    let mut out_def = None;
    let closed = trace_to_jaxpr_for(transformation, in_avals, |tracers| {
        let (outs, def) = f(tracers).flatten();
        out_def = Some(def);
        outs
    });
    (closed, out_def.expect("traced"))
}
