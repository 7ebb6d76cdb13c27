//! Inspecting programs: the IR and the StableHLO of any function over trees.

use crate::core::ir::ClosedJaxpr;
use crate::core::lower::{lower_jaxpr, LowerOptions};
use crate::transforms::traced::{avals_of, trace_tree};
use crate::tree::Tree;

/// Traces `f` on abstract values shaped like `example` and returns its jaxpr.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let (a, b) = (Array::zeros(&[3], DType::F32), Array::zeros(&[3], DType::F32));
/// let jaxpr = jaxrs::make_jaxpr(|(x, y): (Array, Array)| (&x * &y).sum(None, false), &(a, b));
/// println!("{jaxpr}");
/// assert!(jaxpr.to_string().contains("c:f32[3] = mul a b"));
/// ```
///
/// prints
///
/// ```text
/// { lambda  ; a:f32[3] b:f32[3]. let
///     c:f32[3] = mul a b
///     d:f32[] = reduce_sum[axes=(0,)] c
///   in (d) }
/// ```
pub fn make_jaxpr<A: Tree, R: Tree>(f: impl FnOnce(A) -> R, example: &A) -> ClosedJaxpr {
    let (leaves, def) = example.flatten();
    trace_tree("make_jaxpr", &def, &avals_of(&leaves), f).0
}

/// The StableHLO module XLA receives for `f` at arguments shaped like `example` (the constants
/// too large to embed first, then the leaves of `example`), with each op located at its Rust source line.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let module = jaxrs::stablehlo(|x: Array| x.sin(), &Array::zeros(&[3], DType::F32));
/// assert!(module.contains("stablehlo.sine"));
/// ```
pub fn stablehlo<A: Tree, R: Tree>(f: impl FnOnce(A) -> R, example: &A) -> String {
    let closed = make_jaxpr(f, example);
    lower_jaxpr(
        &closed.jaxpr,
        &LowerOptions {
            with_locations: true,
            bf16_dots_in_f32: crate::core::client::bf16_dots_in_f32(),
            // As jit lowers it: small constants embedded.
            embedded_consts: crate::transforms::jit::embedded_constants(&closed.consts),
            ..Default::default()
        },
    )
}
