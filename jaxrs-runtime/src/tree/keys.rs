//! Key paths: where a leaf sits in its tree, as JAX's `jax.tree_util` key entries.

use super::{Tree, TreeDef};
use crate::core::array::Array;
use std::fmt;

/// One step from a node to a child, as JAX's key entries: a struct field is JAX's
/// `GetAttrKey` (the field of a dataclass), an element of a tuple, `Vec` or `[T; N]` a
/// `SequenceKey`, an entry of a `BTreeMap<String, _>` a `DictKey`. `FlattenedIndex` is JAX's
/// `FlattenedIndexKey`, the key of a child of a node that names its children by position
/// only; no jaxrs container uses it, but [`KeyEntry`]s of that kind print as JAX prints them.
/// `Option::Some` adds no entry: `Some(x)` has the paths `x` has, as a JAX user writes `x`
/// where a Rust user writes `Some(x)`.
///
/// It prints as JAX's `str(key)` does: `.w`, `[0]`, `['w']`, `[0]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyEntry {
    /// A struct field (tuple structs name theirs `0`, `1`, ...): JAX's `GetAttrKey(name)`.
    GetAttr(&'static str),
    /// The element at an index: JAX's `SequenceKey(idx)`.
    Sequence(usize),
    /// A map entry: JAX's `DictKey(key)`.
    Dict(String),
    /// A child by flat position: JAX's `FlattenedIndexKey(key)`.
    FlattenedIndex(usize),
}

impl KeyEntry {
    /// The short form `keystr(..., simple=True)` uses: the name, index or key alone.
    pub fn simple(&self) -> String {
        match self {
            KeyEntry::GetAttr(name) => name.to_string(),
            KeyEntry::Sequence(i) | KeyEntry::FlattenedIndex(i) => i.to_string(),
            KeyEntry::Dict(k) => k.clone(),
        }
    }
}

impl fmt::Display for KeyEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyEntry::GetAttr(name) => write!(f, ".{name}"),
            KeyEntry::Sequence(i) | KeyEntry::FlattenedIndex(i) => write!(f, "[{i}]"),
            KeyEntry::Dict(k) => write!(f, "[{}]", python_repr(k)),
        }
    }
}

/// A string as Python's `repr` writes it, which is how JAX prints a `DictKey`.
fn python_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// The path from a tree's root to one of its nodes: JAX's `KeyPath`, a tuple of key entries.
pub type KeyPath = Vec<KeyEntry>;

/// A key path as one string, as JAX's `keystr(keys)`: the entries' printed forms joined
/// (`.layers[0].w`, `['a']['b']`).
///
/// ```
/// use jaxrs::tree_util::{keystr, keystr_simple, KeyEntry};
///
/// let path = [KeyEntry::Dict("foo".into()), KeyEntry::Sequence(1), KeyEntry::GetAttr("w")];
/// assert_eq!(keystr(&path), "['foo'][1].w");
/// assert_eq!(keystr_simple(&path, "/"), "foo/1/w");
/// ```
pub fn keystr(path: &[KeyEntry]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A key path in JAX's `keystr(keys, simple=True, separator=separator)` form: each entry's
/// name, index or key alone, joined by `separator`.
pub fn keystr_simple(path: &[KeyEntry], separator: &str) -> String {
    path.iter()
        .map(KeyEntry::simple)
        .collect::<Vec<_>>()
        .join(separator)
}

/// The children of a node, each with the key entry that reaches it (none for `Some`'s one
/// child); empty for a leaf and for a node without children.
pub(crate) fn keyed_children(def: &TreeDef) -> Vec<(Option<KeyEntry>, &TreeDef)> {
    match def {
        TreeDef::Leaf | TreeDef::Scalar(_) | TreeDef::Static(_) | TreeDef::None => Vec::new(),
        TreeDef::Some(t) => vec![(None, &**t)],
        TreeDef::Tuple(c) | TreeDef::List(c) | TreeDef::FixedArray(c) => c
            .iter()
            .enumerate()
            .map(|(i, t)| (Some(KeyEntry::Sequence(i)), t))
            .collect(),
        TreeDef::Map(c) => c
            .iter()
            .map(|(k, t)| (Some(KeyEntry::Dict(k.clone())), t))
            .collect(),
        TreeDef::Struct { fields, .. } => fields
            .iter()
            .map(|(k, t)| (Some(KeyEntry::GetAttr(k)), t))
            .collect(),
    }
}

/// The key path of every leaf of a structure, in leaf order.
pub fn leaf_key_paths(def: &TreeDef) -> Vec<KeyPath> {
    fn walk(def: &TreeDef, path: &mut KeyPath, out: &mut Vec<KeyPath>) {
        if def.is_leaf() {
            out.push(path.clone());
            return;
        }
        for (key, child) in keyed_children(def) {
            let pushed = key.map(|k| path.push(k)).is_some();
            walk(child, path, out);
            if pushed {
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    walk(def, &mut Vec::new(), &mut out);
    out
}

/// The leaves with their key paths, and the structure: JAX's `jax.tree.flatten_with_path`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::tree_util::keystr;
///
/// #[derive(Tree)]
/// struct Layer { w: Array, b: Array }
///
/// let layers = vec![Layer { w: Array::scalar(1.0f32), b: Array::scalar(2.0f32) }];
/// let (leaves, def) = jaxrs::tree::flatten_with_path(&layers);
/// let paths: Vec<String> = leaves.iter().map(|(p, _)| keystr(p)).collect();
/// assert_eq!(paths, ["[0].w", "[0].b"]);
/// assert_eq!(def.num_leaves(), 2);
/// ```
pub fn flatten_with_path<T: Tree>(tree: &T) -> (Vec<(KeyPath, Array)>, TreeDef) {
    let (leaves, def) = tree.flatten();
    (leaf_key_paths(&def).into_iter().zip(leaves).collect(), def)
}

/// The leaves with their key paths, in leaf order: JAX's `jax.tree.leaves_with_path`.
pub fn leaves_with_path<T: Tree>(tree: &T) -> Vec<(KeyPath, Array)> {
    flatten_with_path(tree).0
}

/// Applies `f` to every leaf and its key path, keeping the structure: JAX's
/// `jax.tree.map_with_path`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::tree_util::{keystr, KeyEntry};
///
/// #[derive(Tree)]
/// struct Layer { w: Array, b: Array }
///
/// let layer = Layer { w: Array::scalar(1.0f32), b: Array::scalar(1.0f32) };
/// // Decay the weights only.
/// let decayed = jaxrs::tree::map_with_path(&layer, |path, x| {
///     if path.last() == Some(&KeyEntry::GetAttr("w")) { x * 0.5 } else { x.clone() }
/// });
/// assert_eq!(decayed.w.item::<f32>(), 0.5);
/// assert_eq!(decayed.b.item::<f32>(), 1.0);
/// ```
#[track_caller]
pub fn map_with_path<T: Tree>(tree: &T, mut f: impl FnMut(&KeyPath, &Array) -> Array) -> T {
    let (leaves, def) = flatten_with_path(tree);
    super::tree_unflatten(&def, leaves.iter().map(|(p, x)| f(p, x)).collect())
}
