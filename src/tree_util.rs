//! JAX's `jax.tree_util`: the tree utilities under their long names (`tree_map`,
//! `tree_leaves_with_path`, ...), the key entries and `keystr`, and the `treedef_*`
//! helpers. [`crate::tree`] has the same functions under `jax.tree`'s short names and says
//! how typed trees and [`TreeOf`] divide the work.
//!
//! What JAX registers by hand, Rust derives: `register_pytree_node`,
//! `register_pytree_node_class`, `register_pytree_with_keys` and `register_dataclass` are
//! `#[derive(Tree)]` (the keys are the field names), and `register_static` is a struct whose
//! fields are not arrays (all static). `Partial` has no counterpart: a Rust closure that
//! captures a tree is already a value `jit` and `grad` can close over.
//!
//! ```
//! use jaxrs::prelude::*;
//! use jaxrs::tree_util::{keystr, tree_leaves_with_path};
//! use std::collections::BTreeMap;
//!
//! let mut params = BTreeMap::new();
//! params.insert("bias".to_string(), vec![Array::scalar(0.0f32)]);
//! params.insert("kernel".to_string(), vec![Array::scalar(1.0f32), Array::scalar(2.0f32)]);
//! let paths: Vec<String> = tree_leaves_with_path(&params).iter().map(|(p, _)| keystr(p)).collect();
//! assert_eq!(paths, ["['bias'][0]", "['kernel'][0]", "['kernel'][1]"]);
//! ```

pub use jaxrs_runtime::tree_utils::{
    all as tree_all, all_leaves, broadcast as tree_broadcast, flatten as tree_flatten,
    flatten_one_level, flatten_one_level_with_keys, flatten_up_to,
    flatten_with_path as tree_flatten_with_path, keystr, keystr_simple, leaf_key_paths,
    leaves as tree_leaves, leaves_with_path as tree_leaves_with_path,
    map_with_path as tree_map_with_path, reduce as tree_reduce,
    reduce_associative as tree_reduce_associative, structure as tree_structure,
    transpose as tree_transpose, treedef_children, treedef_is_leaf, treedef_tuple, KeyEntry,
    KeyPath, Leaves, TreeOf,
};
pub use jaxrs_runtime::{
    tree_map, tree_map2, tree_map_n, tree_unflatten, try_tree_unflatten, TreeDef as PyTreeDef,
};
