//! Inspecting programs: the IR and the StableHLO of any function over trees.

use crate::aval::Aval;
use crate::core::ir::ClosedJaxpr;
use crate::core::lower::{lower_jaxpr, LowerOptions};
pub use crate::transforms::abstract_leaf::{AbstractLeaf, ShardedShapeDtypeStruct};
use crate::transforms::traced::{avals_of, trace_tree};
use crate::tree::{Leaves, Tree, TreeOf};

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
            for_cpu: crate::core::client::for_cpu(),
            bf16_rows_kernel: crate::core::client::bf16_rows_kernel(),
            // As jit lowers it: small constants embedded.
            embedded_consts: crate::transforms::jit::embedded_constants(&closed.consts),
            ..Default::default()
        },
    )
}

/// The abstract value of an array: its shape, dtype and weak type, as JAX's
/// `jax.ShapeDtypeStruct` (the sharding is not part of it yet). It is jaxrs's [`Aval`], the
/// type tracing works with.
///
/// ```
/// use jaxrs::{DType, ShapeDtypeStruct};
///
/// let x = ShapeDtypeStruct::new([2, 3], DType::F32);
/// assert_eq!(x.to_string(), "f32[2,3]");
/// ```
pub type ShapeDtypeStruct = Aval;

/// The shapes and dtypes of `f`'s outputs, found by tracing it, without compiling or
/// running anything: JAX's `jax.eval_shape`. `args` is the argument tree (arrays), or its
/// structure with a [`ShapeDtypeStruct`] per leaf (a [`TreeOf`], as
/// `jaxrs::tree::map_to(&params, |x| x.aval().clone())` makes), so that no array of that
/// size need exist.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::tree::TreeOf;
/// use jaxrs::{ShapeDtypeStruct, TreeDef};
///
/// // A 1e6 x 1e6 matmul: nothing is allocated.
/// let big = ShapeDtypeStruct::new([1_000_000, 1_000_000], DType::F32);
/// let args = TreeOf::new(TreeDef::Tuple(vec![TreeDef::Leaf; 2]), vec![big.clone(), big]);
/// let out = jaxrs::eval_shape(|(a, b): (Array, Array)| a.matmul(&b).sum(1, false), &args);
/// assert_eq!(out.leaves(), &[ShapeDtypeStruct::new([1_000_000], DType::F32)]);
/// ```
#[track_caller]
pub fn eval_shape<A: Tree, R: Tree, S: Leaves>(f: impl FnOnce(A) -> R, args: &S) -> TreeOf<Aval>
where
    S::Leaf: AbstractLeaf,
{
    let (leaves, def) = args.leaves_and_structure();
    let avals: Vec<Aval> = leaves.iter().map(AbstractLeaf::abstract_value).collect();
    let (closed, out_def) = trace_tree("eval_shape", &def, &avals, f);
    let out_avals = closed
        .jaxpr
        .outvars
        .iter()
        .map(|a| closed.jaxpr.atom_aval(a))
        .collect();
    TreeOf::new(out_def, out_avals)
}
