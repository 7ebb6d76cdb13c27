//! Trees with leaves of any type, and JAX's `jax.tree` functions over them.
//!
//! A [`Tree`] has [`Array`] leaves, because jit, grad and vmap trace arrays. JAX's tree
//! utilities go further: `jax.tree.map(lambda x: x.shape, params)` returns a tree of
//! shapes, `is_leaf` stops the walk at a subtree, `jax.tree.transpose` turns a list of pairs
//! into a pair of lists. [`TreeOf<U>`] is that tree: a structure ([`TreeDef`]) with one `U`
//! per leaf. The functions here take anything with [`Leaves`] (every `Tree`, whose leaves are
//! arrays, and every `TreeOf<U>`) and give back a `TreeOf` where the leaf type or the
//! structure changes; [`TreeOf::into_tree`] turns a `TreeOf<Array>` back into a typed tree.

use super::keys::{keyed_children, KeyEntry};
use super::{try_tree_unflatten, Tree, TreeDef, TreeMismatch};
use crate::core::array::Array;
use crate::dtype::{DType, C128, C64};
use std::fmt;

/// A structure with one value of type `U` per leaf: what JAX's tree functions return when
/// the leaves are not arrays (`jax.tree.map(lambda x: x.shape, params)`).
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[derive(Tree)]
/// struct Layer { w: Array, b: Array }
///
/// let layer = Layer { w: Array::zeros(&[2, 3], DType::F32), b: Array::zeros(&[3], DType::F32) };
/// let shapes = jaxrs::tree::map_to(&layer, |x| x.shape().to_vec());
/// assert_eq!(shapes.leaves(), &[vec![2, 3], vec![3]]);
/// assert_eq!(shapes.to_string(), "Layer { w: [2, 3], b: [3] }");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TreeOf<U> {
    def: TreeDef,
    leaves: Vec<U>,
}

impl<U> TreeOf<U> {
    /// A tree of structure `def` with these leaves, in order: JAX's `jax.tree.unflatten`
    /// for leaves of any type.
    ///
    /// Panics naming both counts when `leaves` does not have one value per leaf of `def`.
    #[track_caller]
    pub fn new(def: TreeDef, leaves: Vec<U>) -> TreeOf<U> {
        assert_eq!(
            def.num_leaves(),
            leaves.len(),
            "TreeOf::new: the structure {def} has {} leaves, {} were given",
            def.num_leaves(),
            leaves.len()
        );
        TreeOf { def, leaves }
    }

    /// A tree that is one leaf.
    pub fn leaf(value: U) -> TreeOf<U> {
        TreeOf {
            def: TreeDef::Leaf,
            leaves: vec![value],
        }
    }

    /// The structure.
    pub fn structure(&self) -> &TreeDef {
        &self.def
    }

    /// The leaves, in order.
    pub fn leaves(&self) -> &[U] {
        &self.leaves
    }

    /// The structure and the leaves.
    pub fn into_parts(self) -> (TreeDef, Vec<U>) {
        (self.def, self.leaves)
    }

    /// The value when the tree is one leaf.
    pub fn as_leaf(&self) -> Option<&U> {
        self.def.is_leaf().then(|| &self.leaves[0])
    }

    /// Applies `f` to every leaf, keeping the structure.
    pub fn map<V>(&self, f: impl FnMut(&U) -> V) -> TreeOf<V> {
        TreeOf {
            def: self.def.clone(),
            leaves: self.leaves.iter().map(f).collect(),
        }
    }
}

impl TreeOf<Array> {
    /// The typed tree of these arrays, as `T`: JAX's `jax.tree.unflatten` into a type.
    ///
    /// Panics naming both structures when the structure is not `T`'s.
    #[track_caller]
    pub fn into_tree<T: Tree>(self) -> T {
        self.try_into_tree()
            .unwrap_or_else(|e| panic!("TreeOf::into_tree: {e}"))
    }

    /// [`TreeOf::into_tree`], reporting a structure that is not `T`'s.
    pub fn try_into_tree<T: Tree>(self) -> Result<T, TreeMismatch> {
        try_tree_unflatten(&self.def, self.leaves)
    }
}

impl<U: fmt::Debug> fmt::Display for TreeOf<U> {
    /// The structure as [`TreeDef`] prints it, with each leaf's `Debug` form in its place.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut leaves = self.leaves.iter();
        let text = self
            .def
            .render(&mut |_| format!("{:?}", leaves.next().expect("one value per leaf")));
        f.write_str(&text)
    }
}

/// A value whose leaves can be listed: every [`Tree`] (its leaves are arrays) and every
/// [`TreeOf`]. The functions of `jaxrs::tree` take it.
pub trait Leaves {
    /// The type of a leaf.
    type Leaf: Clone;
    /// The leaves, in order, and the structure.
    fn leaves_and_structure(&self) -> (Vec<Self::Leaf>, TreeDef);
}

impl<T: Tree> Leaves for T {
    type Leaf = Array;
    fn leaves_and_structure(&self) -> (Vec<Array>, TreeDef) {
        self.flatten()
    }
}

impl<U: Clone> Leaves for TreeOf<U> {
    type Leaf = U;
    fn leaves_and_structure(&self) -> (Vec<U>, TreeDef) {
        (self.leaves.clone(), self.def.clone())
    }
}

/// The leaves and the structure: JAX's `jax.tree.flatten`.
pub fn flatten<L: Leaves>(tree: &L) -> (Vec<L::Leaf>, TreeDef) {
    tree.leaves_and_structure()
}

/// The leaves, in order: JAX's `jax.tree.leaves`.
pub fn leaves<L: Leaves>(tree: &L) -> Vec<L::Leaf> {
    tree.leaves_and_structure().0
}

/// The structure: JAX's `jax.tree.structure`.
pub fn structure<L: Leaves>(tree: &L) -> TreeDef {
    tree.leaves_and_structure().1
}

/// The tree as a [`TreeOf`] of its leaves.
pub fn tree_of<L: Leaves>(tree: &L) -> TreeOf<L::Leaf> {
    let (leaves, def) = tree.leaves_and_structure();
    TreeOf { def, leaves }
}

/// Applies `f` to every leaf and keeps the structure, whatever `f` returns: JAX's
/// `jax.tree.map` to another leaf type. [`crate::tree_map`] is the form that maps arrays
/// to arrays and gives back the typed tree.
pub fn map_to<L: Leaves, U>(tree: &L, f: impl FnMut(&L::Leaf) -> U) -> TreeOf<U> {
    tree_of(tree).map(f)
}

/// The tree with every subtree for which `is_leaf` holds made one leaf (a [`TreeOf`] of its
/// own leaves): what JAX's `is_leaf=` argument does to a walk. `is_leaf` sees each node from
/// the root down, before its children, and never goes below a node it accepted; a leaf is
/// a leaf whatever it says. Every function here then applies to the result.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::TreeDef;
///
/// let x = || Array::scalar(1.0f32);
/// let pairs = vec![(x(), x()), (x(), x())];
/// // Treat each pair as one leaf: two leaves, each a tree of two arrays.
/// let cut = jaxrs::tree::with_is_leaf(&pairs, |node| matches!(node.structure(), TreeDef::Tuple(_)));
/// assert_eq!(cut.leaves().len(), 2);
/// assert_eq!(cut.leaves()[0].leaves().len(), 2);
/// ```
pub fn with_is_leaf<L: Leaves>(
    tree: &L,
    mut is_leaf: impl FnMut(&TreeOf<L::Leaf>) -> bool,
) -> TreeOf<TreeOf<L::Leaf>> {
    fn walk<U: Clone>(
        def: &TreeDef,
        leaves: &mut std::vec::IntoIter<U>,
        is_leaf: &mut dyn FnMut(&TreeOf<U>) -> bool,
        out: &mut Vec<TreeOf<U>>,
    ) -> TreeDef {
        let n = def.num_leaves();
        let take = |leaves: &mut std::vec::IntoIter<U>| TreeOf {
            def: def.clone(),
            leaves: leaves.by_ref().take(n).collect(),
        };
        if def.is_leaf() {
            out.push(take(leaves));
            return TreeDef::Leaf;
        }
        let here = TreeOf {
            def: def.clone(),
            leaves: leaves.as_slice()[..n].to_vec(),
        };
        if is_leaf(&here) {
            out.push(take(leaves));
            return TreeDef::Leaf;
        }
        def.map_children(&mut |child| walk(child, leaves, is_leaf, out))
    }
    let (leaves, def) = tree.leaves_and_structure();
    let mut out = Vec::new();
    let def = walk(&def, &mut leaves.into_iter(), &mut is_leaf, &mut out);
    TreeOf { def, leaves: out }
}

/// `jax.tree.map(f, tree, is_leaf=is_leaf)`: [`with_is_leaf`], then `f` on each of its
/// leaves (a subtree, or a tree of one leaf).
pub fn map_is_leaf<L: Leaves, U>(
    tree: &L,
    is_leaf: impl FnMut(&TreeOf<L::Leaf>) -> bool,
    f: impl FnMut(&TreeOf<L::Leaf>) -> U,
) -> TreeOf<U> {
    with_is_leaf(tree, is_leaf).map(f)
}

/// Folds `f` over the leaves from the left, starting at `initializer`: JAX's
/// `jax.tree.reduce(function, tree, initializer)`. Without an initializer JAX folds from the
/// first leaf; [`reduce_associative`] is that form here.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let params = (Array::zeros(&[2, 3], DType::F32), vec![Array::zeros(&[4], DType::F32)]);
/// let count = jaxrs::tree::reduce(|n, x: &Array| n + x.size(), &params, 0);
/// assert_eq!(count, 10);
/// ```
pub fn reduce<L: Leaves, A>(f: impl FnMut(A, &L::Leaf) -> A, tree: &L, initializer: A) -> A {
    leaves(tree).iter().fold(initializer, f)
}

/// Reduces the leaves with an associative `operation` in pairs, a balanced tree of
/// logarithmic depth: JAX's `jax.tree.reduce_associative`. `identity` is the result for a
/// tree without leaves.
///
/// Panics when the tree has no leaves and `identity` is `None`, as JAX raises.
///
/// ```
/// let xs = jaxrs::tree::TreeOf::new(
///     jaxrs::TreeDef::List(vec![jaxrs::TreeDef::Leaf; 4]),
///     vec![1, 2, 3, 4],
/// );
/// assert_eq!(jaxrs::tree::reduce_associative(|a, b| a + b, &xs, None), 10);
/// ```
#[track_caller]
pub fn reduce_associative<L: Leaves>(
    mut operation: impl FnMut(L::Leaf, L::Leaf) -> L::Leaf,
    tree: &L,
    identity: Option<L::Leaf>,
) -> L::Leaf {
    let mut level = leaves(tree);
    if level.is_empty() {
        return identity.unwrap_or_else(|| {
            panic!(
                "tree::reduce_associative: the tree has no leaves; give an identity for the \
                 reduction of an empty tree"
            )
        });
    }
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        let mut it = level.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) => operation(a, b),
                None => a,
            });
        }
        level = next;
    }
    level.pop().expect("one leaf is left")
}

/// A value with a truth value, as Python's `bool(x)`: what [`all`] asks of each leaf.
pub trait Truthy {
    /// Whether the value counts as true.
    fn truth(&self) -> bool;
}

impl Truthy for bool {
    fn truth(&self) -> bool {
        *self
    }
}

macro_rules! truthy_numbers {
    ($($t:ty),*) => {$(
        impl Truthy for $t {
            fn truth(&self) -> bool {
                *self != (0 as $t)
            }
        }
    )*};
}
truthy_numbers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64);

impl Truthy for Array {
    /// A one-element array is true when its element is non-zero (NaN is true), as
    /// `bool(jnp.array(x))`; it is read from the device.
    ///
    /// Panics for an array of more than one element, whose truth value is ambiguous as in
    /// numpy (use `jnp::all` first), and for a traced array.
    #[track_caller]
    fn truth(&self) -> bool {
        if self.size() != 1 {
            panic!(
                "the truth value of an array with {} elements ({}) is ambiguous; reduce it \
                 with jnp::all or jnp::any first",
                self.size(),
                self.aval()
            );
        }
        match self.dtype() {
            DType::C64 => self.item::<C64>() != C64::new(0.0, 0.0),
            DType::C128 => self.item::<C128>() != C128::new(0.0, 0.0),
            _ => self.to_f64_vec()[0] != 0.0,
        }
    }
}

impl<T: Truthy> Truthy for TreeOf<T> {
    fn truth(&self) -> bool {
        self.leaves.iter().all(Truthy::truth)
    }
}

/// Whether every leaf is true: JAX's `jax.tree.all`. A tree without leaves is true.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let finite = jaxrs::tree::map_to(&(Array::scalar(1.0f32), Array::scalar(f32::NAN)), |x| {
///     x.to_vec::<f32>().iter().all(|v| v.is_finite())
/// });
/// assert!(!jaxrs::tree::all(&finite));
/// ```
#[track_caller]
pub fn all<L: Leaves>(tree: &L) -> bool
where
    L::Leaf: Truthy,
{
    leaves(tree).iter().all(Truthy::truth)
}

/// The tree `full` has, with each leaf of `prefix` repeated over the leaves of the subtree
/// of `full` at its place: JAX's `jax.tree.broadcast(prefix_tree, full_tree)`. `prefix`
/// must be a prefix of `full`: the same nodes down to its own leaves.
///
/// Panics naming the first place where `prefix` is not a prefix of `full`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::TreeDef;
/// use jaxrs::tree::{broadcast, TreeOf};
///
/// #[derive(Tree)]
/// struct Layer { w: Array, b: Array }
///
/// let z = || Array::scalar(0.0f32);
/// let layers = vec![Layer { w: z(), b: z() }, Layer { w: z(), b: z() }];
/// // One learning rate per layer, repeated over the layer's parameters.
/// let lrs = TreeOf::new(TreeDef::List(vec![TreeDef::Leaf; 2]), vec![0.1, 0.01]);
/// let per_leaf = broadcast(&lrs, &layers);
/// assert_eq!(per_leaf.leaves(), &[0.1, 0.1, 0.01, 0.01]);
/// ```
#[track_caller]
pub fn broadcast<P: Leaves, F: Leaves>(prefix: &P, full: &F) -> TreeOf<P::Leaf> {
    let (prefix_leaves, prefix_def) = prefix.leaves_and_structure();
    let full_def = structure(full);
    let subtrees = flatten_up_to(&prefix_def, &full_def).unwrap_or_else(|e| {
        panic!("tree::broadcast: the first tree is not a prefix of the second: {e}")
    });
    let leaves = prefix_leaves
        .into_iter()
        .zip(&subtrees)
        .flat_map(|(leaf, sub)| std::iter::repeat_n(leaf, sub.num_leaves()))
        .collect();
    TreeOf {
        def: full_def,
        leaves,
    }
}

/// The subtrees of `full` at the leaves of `prefix`, in order, as JAX's
/// `PyTreeDef.flatten_up_to`; an error names the first node where `prefix` is not a prefix.
pub fn flatten_up_to(prefix: &TreeDef, full: &TreeDef) -> Result<Vec<TreeDef>, TreeMismatch> {
    fn walk(
        prefix: &TreeDef,
        full: &TreeDef,
        path: String,
        out: &mut Vec<TreeDef>,
    ) -> Result<(), TreeMismatch> {
        if prefix.is_leaf() {
            out.push(full.clone());
            return Ok(());
        }
        let same_node = match (prefix, full) {
            (TreeDef::Struct { name: a, .. }, TreeDef::Struct { name: b, .. }) => a == b,
            (TreeDef::Static(a), TreeDef::Static(b)) => a == b,
            _ => std::mem::discriminant(prefix) == std::mem::discriminant(full),
        };
        let (pc, fc) = (keyed_children(prefix), keyed_children(full));
        let same_keys = pc.len() == fc.len() && pc.iter().zip(&fc).all(|(a, b)| a.0 == b.0);
        if !same_node || !same_keys {
            let at = if path.is_empty() {
                "the root".into()
            } else {
                path
            };
            return Err(TreeMismatch::new(
                format!("{prefix} at {at}"),
                full.to_string(),
            ));
        }
        for ((key, p), (_, f)) in pc.into_iter().zip(fc) {
            let step = key.map(|k| k.to_string()).unwrap_or_default();
            walk(p, f, format!("{path}{step}"), out)?;
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(prefix, full, String::new(), &mut out)?;
    Ok(out)
}

/// Turns a tree of structure `outer` of trees of structure `inner` into a tree of structure
/// `inner` of trees of structure `outer`: JAX's `jax.tree.transpose(outer_treedef,
/// inner_treedef, tree)`. `inner` is read from the tree's first subtree when `None`.
///
/// Panics naming the structures when the tree's is not `outer` composed with `inner`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::TreeDef;
///
/// let x = |v: f32| Array::scalar(v);
/// // A list of (loss, accuracy) pairs into a pair of lists.
/// let steps = vec![(x(1.0), x(0.5)), (x(0.8), x(0.6))];
/// let outer = TreeDef::List(vec![TreeDef::Leaf; 2]);
/// let (losses, accuracies): (Vec<Array>, Vec<Array>) =
///     jaxrs::tree::transpose(&outer, None, &steps).into_tree();
/// assert_eq!(losses[1].item::<f32>(), 0.8);
/// assert_eq!(accuracies[0].item::<f32>(), 0.5);
/// ```
#[track_caller]
pub fn transpose<L: Leaves>(outer: &TreeDef, inner: Option<&TreeDef>, tree: &L) -> TreeOf<L::Leaf> {
    let (flat, def) = tree.leaves_and_structure();
    let inner = match inner {
        Some(inner) => inner.clone(),
        None => flatten_up_to(outer, &def)
            .ok()
            .and_then(|subtrees| subtrees.into_iter().next())
            .unwrap_or_else(|| {
                panic!("tree::transpose: the tree {def} does not have the outer structure {outer}")
            }),
    };
    let (n_outer, n_inner) = (outer.num_leaves(), inner.num_leaves());
    let expected = outer.compose(&inner);
    if flat.len() != n_outer * n_inner || expected != def {
        panic!("tree::transpose: {}", TreeMismatch::new(&expected, &def));
    }
    let leaves = (0..n_inner)
        .flat_map(|i| (0..n_outer).map(move |o| o * n_inner + i))
        .map(|k| flat[k].clone())
        .collect();
    TreeOf {
        def: inner.compose(outer),
        leaves,
    }
}

/// The children of the root with their key entries, each a tree of its own: JAX's
/// `jax.tree_util.flatten_one_level_with_keys` (`Some`'s one child has no key: `None`).
///
/// Panics for a leaf, which has no level to flatten, as JAX raises.
#[track_caller]
pub fn flatten_one_level_with_keys<L: Leaves>(
    tree: &L,
) -> Vec<(Option<KeyEntry>, TreeOf<L::Leaf>)> {
    let (leaves, def) = tree.leaves_and_structure();
    if def.is_leaf() {
        panic!("tree_util::flatten_one_level: a leaf ({def}) has no children to flatten");
    }
    let mut leaves = leaves.into_iter();
    keyed_children(&def)
        .into_iter()
        .map(|(key, child)| {
            let n = child.num_leaves();
            let sub = TreeOf {
                def: child.clone(),
                leaves: leaves.by_ref().take(n).collect(),
            };
            (key, sub)
        })
        .collect()
}

/// The children of the root, each a tree of its own: JAX's `jax.tree_util.flatten_one_level`.
///
/// Panics for a leaf.
#[track_caller]
pub fn flatten_one_level<L: Leaves>(tree: &L) -> Vec<TreeOf<L::Leaf>> {
    flatten_one_level_with_keys(tree)
        .into_iter()
        .map(|(_, sub)| sub)
        .collect()
}

/// Whether every item is a single leaf: JAX's `jax.tree_util.all_leaves`.
pub fn all_leaves<L: Leaves>(items: &[L]) -> bool {
    items.iter().all(|x| structure(x).is_leaf())
}

/// The structures of the root's children: JAX's `jax.tree_util.treedef_children`.
pub fn treedef_children(def: &TreeDef) -> Vec<TreeDef> {
    keyed_children(def)
        .into_iter()
        .map(|(_, t)| t.clone())
        .collect()
}

/// Whether a structure has one node, as JAX's `jax.tree_util.treedef_is_leaf`: a leaf, and
/// also a node without children (`None`, `()`, an empty `Vec` or map), as in JAX.
pub fn treedef_is_leaf(def: &TreeDef) -> bool {
    def.is_leaf() || treedef_children(def).is_empty()
}

/// The structure of a tuple of trees of these structures: JAX's
/// `jax.tree_util.treedef_tuple`.
pub fn treedef_tuple(defs: impl IntoIterator<Item = TreeDef>) -> TreeDef {
    TreeDef::Tuple(defs.into_iter().collect())
}
