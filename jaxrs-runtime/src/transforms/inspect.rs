//! Inspecting programs: the IR and the StableHLO of any function over trees.

use crate::core::ir::ClosedJaxpr;
use crate::core::lower::{lower_jaxpr, LowerOptions};
use crate::transforms::traced::{avals_of, trace_tree};
use crate::tree::Tree;

/// Traces `f` on abstract values shaped like `example` and returns its jaxpr.
///
/// ```ignore
/// let jaxpr = make_jaxpr(|(x, y): (Array, Array)| (&x * &y).sum(None, false), &(a, b));
/// println!("{jaxpr}");
/// ```
pub fn make_jaxpr<A: Tree, R: Tree>(f: impl FnOnce(A) -> R, example: &A) -> ClosedJaxpr {
    let (leaves, def) = example.flatten();
    trace_tree("make_jaxpr", &def, &avals_of(&leaves), f).0
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
