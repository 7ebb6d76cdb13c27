//! JAX's `jax.tree`: the tree utilities under their short names, `jaxrs::tree::map` for
//! `jax.tree.map`.
//!
//! A [`Tree`](crate::Tree)'s leaves are arrays, and the functions that keep the tree's type
//! ([`map`], [`map2`], [`map_n`], [`map_with_path`], [`unflatten`]) take and give typed
//! trees. The rest take anything with [`Leaves`] (a `Tree` or a [`TreeOf`]) and give a
//! [`TreeOf<U>`], a structure with leaves of any type, where JAX's result has other leaves
//! or another structure: [`map_to`] (`jax.tree.map(lambda x: x.shape, params)`),
//! [`with_is_leaf`] and [`map_is_leaf`] (JAX's `is_leaf=`), [`broadcast`], [`transpose`].
//! [`TreeOf::into_tree`] turns a `TreeOf<Array>` back into a typed tree.
//!
//! | JAX | jaxrs |
//! |---|---|
//! | `jax.tree.map(f, tree)` | [`map`]`(&tree, f)` (arrays to arrays), [`map_to`] (to any leaf type) |
//! | `jax.tree.map(f, a, b)` | [`map2`]`(&a, &b, f)`, [`map_n`]`(&[&a, &b, &c], f)` |
//! | `jax.tree.map(f, tree, is_leaf=p)` | [`map_is_leaf`]`(&tree, p, f)` |
//! | `jax.tree.map_with_path(f, tree)` | [`map_with_path`]`(&tree, f)` |
//! | `jax.tree.leaves`, `flatten`, `structure`, `unflatten` | [`leaves`], [`flatten`], [`structure`], [`unflatten`] (typed) or [`TreeOf::new`] (any leaves) |
//! | `jax.tree.leaves_with_path`, `flatten_with_path` | [`leaves_with_path`], [`flatten_with_path`] |
//! | `jax.tree.reduce(f, tree, init)`, `reduce_associative` | [`reduce`]`(f, &tree, init)`, [`reduce_associative`]`(f, &tree, identity)` |
//! | `jax.tree.all`, `broadcast`, `transpose` | [`all`], [`broadcast`], [`transpose`] |
//! | `jax.tree.static` (a static dataclass field) | a non-array field of a `#[derive(Tree)]` struct: static without a marker |
//!
//! ```
//! use jaxrs::prelude::*;
//!
//! #[derive(Tree)]
//! struct Layer { w: Array, b: Array }
//!
//! let layer = Layer { w: Array::ones(&[2, 2], DType::F32), b: Array::zeros(&[2], DType::F32) };
//! let sizes = jaxrs::tree::map_to(&layer, |x| x.size());
//! assert_eq!(jaxrs::tree::reduce(|n, s| n + s, &sizes, 0), 6);
//! let halved: Layer = jaxrs::tree::map(&layer, |x| x * 0.5);
//! assert_eq!(halved.w.to_vec::<f32>(), vec![0.5; 4]);
//! ```

pub use jaxrs_runtime::tree_utils::{
    all, broadcast, flatten, flatten_with_path, leaves, leaves_with_path, map_is_leaf, map_to,
    map_with_path, reduce, reduce_associative, structure, transpose, tree_of, with_is_leaf,
    KeyEntry, KeyPath, Leaves, TreeOf, Truthy,
};
pub use jaxrs_runtime::{
    tree_map as map, tree_map2 as map2, tree_map_n as map_n, tree_unflatten as unflatten,
    try_tree_unflatten as try_unflatten,
};
