//! Inspecting programs: the IR and the StableHLO of any function over trees.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::ir::ClosedJaxpr;
use crate::core::lower::{lower_jaxpr, LowerOptions};
use crate::core::sharding::{NamedSharding, Sharding};
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
            bf16_dots_in_f32: crate::core::client::bf16_dots_in_f32(),
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

/// A leaf [`eval_shape`] and [`Jitted::lower`](crate::Jitted::lower) can take: an [`Array`],
/// its abstract value, or an abstract value with a sharding ([`ShardedShapeDtypeStruct`]).
pub trait AbstractLeaf: Clone {
    /// The shape, dtype and weak type.
    fn abstract_value(&self) -> Aval;

    /// How the value lies over a mesh, when it does.
    fn named_sharding(&self) -> Option<NamedSharding> {
        None
    }

    /// Whether [`AbstractLeaf::named_sharding`] is `Some` (asked on every jitted call, so an
    /// implementation answers without building the sharding).
    fn is_sharded(&self) -> bool {
        self.named_sharding().is_some()
    }
}

impl AbstractLeaf for Array {
    fn abstract_value(&self) -> Aval {
        self.aval().clone()
    }

    fn named_sharding(&self) -> Option<NamedSharding> {
        match self.sharding()? {
            Sharding::Named(n) => Some(n.clone()),
            _ => None,
        }
    }

    fn is_sharded(&self) -> bool {
        matches!(self.sharding(), Some(Sharding::Named(_)))
    }
}

impl AbstractLeaf for Aval {
    fn abstract_value(&self) -> Aval {
        self.clone()
    }
}

/// An abstract array laid out over a mesh: JAX's `ShapeDtypeStruct(shape, dtype,
/// sharding=...)`, made by [`Aval::with_sharding`] (jaxrs's [`ShapeDtypeStruct`] is the
/// sharding-free [`Aval`]). [`Jitted::lower`](crate::Jitted::lower) compiles for the layout it
/// names, as for an array laid out so.
///
/// ```
/// use jaxrs::{DType, Mesh, NamedSharding, ShapeDtypeStruct, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
/// let x = ShapeDtypeStruct::new([8, 4], DType::F32)
///     .with_sharding(NamedSharding::new(mesh, P!["dp", None])?);
/// assert_eq!(x.aval.to_string(), "f32[8,4]");
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ShardedShapeDtypeStruct {
    /// The shape and dtype.
    pub aval: Aval,
    /// How it lies (`None`: as the function's `in_shardings` say, else on one device).
    pub sharding: Option<NamedSharding>,
}

impl Aval {
    /// This abstract value laid out as `sharding` (JAX's `ShapeDtypeStruct(..., sharding=s)`).
    pub fn with_sharding(self, sharding: NamedSharding) -> ShardedShapeDtypeStruct {
        ShardedShapeDtypeStruct {
            aval: self,
            sharding: Some(sharding),
        }
    }
}

impl From<Aval> for ShardedShapeDtypeStruct {
    fn from(aval: Aval) -> Self {
        ShardedShapeDtypeStruct {
            aval,
            sharding: None,
        }
    }
}

impl AbstractLeaf for ShardedShapeDtypeStruct {
    fn abstract_value(&self) -> Aval {
        self.aval.clone()
    }

    fn named_sharding(&self) -> Option<NamedSharding> {
        self.sharding.clone()
    }
}

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
