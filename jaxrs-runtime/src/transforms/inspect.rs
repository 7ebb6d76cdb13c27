//! Inspecting programs: the IR and the StableHLO of any function over trees.

use crate::aval::Aval;
use crate::core::ir::ClosedJaxpr;
use crate::core::lower::{lower_jaxpr, LowerOptions};
use crate::core::trace::trace_to_jaxpr;
use crate::tree::Tree;

/// Traces `f` on abstract values shaped like `example` and returns its jaxpr.
///
/// ```ignore
/// let jaxpr = make_jaxpr(|(x, y): (Array, Array)| (&x * &y).sum(None, false), &(a, b));
/// println!("{jaxpr}");
/// ```
pub fn make_jaxpr<A: Tree, R: Tree>(f: impl FnOnce(A) -> R, example: &A) -> ClosedJaxpr {
    let (leaves, def) = example.flatten();
    let avals: Vec<Aval> = leaves.iter().map(|l| l.aval().clone()).collect();
    trace_to_jaxpr(&avals, |tracers| {
        let args = crate::tree::try_tree_unflatten::<A>(&def, tracers)
            .unwrap_or_else(|e| panic!("make_jaxpr: {e}"));
        f(args).flatten().0
    })
}

/// The StableHLO module XLA receives for `f` at arguments shaped like `example` (constants
/// first, then the leaves of `example`), with each op located at its Rust source line.
pub fn stablehlo<A: Tree, R: Tree>(f: impl FnOnce(A) -> R, example: &A) -> String {
    let closed = make_jaxpr(f, example);
    lower_jaxpr(
        &closed.jaxpr,
        &LowerOptions {
            with_locations: true,
            ..Default::default()
        },
    )
}
