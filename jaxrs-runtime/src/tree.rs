//! Pytrees: values made of arrays, flattened to leaves plus a structure and rebuilt.
//!
//! jit, grad and vmap take and return trees. [`Tree`] is implemented for [`Array`], Rust
//! scalars (traced as weakly typed 0-d arrays, like Python scalars in JAX), tuples, `Vec`,
//! fixed-size arrays, `Option`, `BTreeMap<String, _>`, and derived for user structs with
//! `#[derive(Tree)]`.
//!
//! ```
//! use jaxrs::prelude::*;
//!
//! #[derive(Tree, Clone)]
//! struct Params {
//!     w: Array,
//!     b: Array,
//! }
//!
//! let params = Params { w: Array::ones(&[2], DType::F32), b: Array::scalar(0.5f32) };
//! let doubled = tree_map(&params, |leaf| leaf * 2.0);
//! assert_eq!(doubled.w.to_vec::<f32>(), vec![2.0, 2.0]);
//! assert_eq!(doubled.b.item::<f32>(), 1.0);
//! ```

use crate::core::array::Array;
use crate::dtype::DType;
use std::collections::BTreeMap;
use std::fmt;

/// The structure of a tree, without its leaves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TreeDef {
    /// An [`Array`].
    Leaf,
    /// A Rust scalar, carried as a weakly typed 0-d array of this dtype.
    Scalar(DType),
    /// A tuple, `()` included.
    Tuple(Vec<TreeDef>),
    /// A `Vec`.
    List(Vec<TreeDef>),
    /// A fixed-size array `[T; N]`.
    FixedArray(Vec<TreeDef>),
    /// `Option::None`.
    None,
    /// `Option::Some`.
    Some(Box<TreeDef>),
    /// A `BTreeMap<String, _>`, keys in order.
    Map(Vec<(String, TreeDef)>),
    /// A struct with `#[derive(Tree)]`: its name and fields (tuple structs use `0`, `1`, ...).
    Struct {
        name: &'static str,
        fields: Vec<(&'static str, TreeDef)>,
    },
}

impl TreeDef {
    /// The number of leaves a tree of this structure has.
    pub fn num_leaves(&self) -> usize {
        match self {
            TreeDef::Leaf | TreeDef::Scalar(_) => 1,
            TreeDef::None => 0,
            TreeDef::Some(t) => t.num_leaves(),
            TreeDef::Tuple(c) | TreeDef::List(c) | TreeDef::FixedArray(c) => {
                c.iter().map(TreeDef::num_leaves).sum()
            }
            TreeDef::Map(c) => c.iter().map(|(_, t)| t.num_leaves()).sum(),
            TreeDef::Struct { fields, .. } => fields.iter().map(|(_, t)| t.num_leaves()).sum(),
        }
    }
}

impl fmt::Display for TreeDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, open: &str, c: &[TreeDef], close: &str) -> fmt::Result {
            f.write_str(open)?;
            for (i, t) in c.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{t}")?;
            }
            if open == "(" && c.len() == 1 {
                f.write_str(",")?;
            }
            f.write_str(close)
        }
        match self {
            TreeDef::Leaf => f.write_str("*"),
            TreeDef::Scalar(d) => write!(f, "{}", d.name()),
            TreeDef::Tuple(c) => list(f, "(", c, ")"),
            TreeDef::List(c) => list(f, "vec![", c, "]"),
            TreeDef::FixedArray(c) => list(f, "[", c, "]"),
            TreeDef::None => f.write_str("None"),
            TreeDef::Some(t) => write!(f, "Some({t})"),
            TreeDef::Map(c) => {
                f.write_str("{")?;
                for (i, (k, t)) in c.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k:?}: {t}")?;
                }
                f.write_str("}")
            }
            TreeDef::Struct { name, fields } => {
                write!(f, "{name} {{ ")?;
                for (i, (k, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {t}")?;
                }
                f.write_str(" }")
            }
        }
    }
}

/// A tree did not have the structure a type or another tree required.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tree structure mismatch: expected {expected}, found {found}")]
pub struct TreeMismatch {
    pub expected: String,
    pub found: String,
}

impl TreeMismatch {
    pub fn new(expected: impl fmt::Display, found: impl fmt::Display) -> TreeMismatch {
        TreeMismatch {
            expected: expected.to_string(),
            found: found.to_string(),
        }
    }
}

/// A value made of arrays: it can be flattened to its leaves and rebuilt from new ones.
///
/// Derive it for your structs with `#[derive(Tree)]`; every field must be a `Tree`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tree of arrays",
    label = "not a `jaxrs::Tree`",
    note = "jit, grad and vmap take arrays, Rust scalars, tuples, Vec, [T; N], Option and BTreeMap<String, _> of them, and structs with #[derive(Tree)]; pass anything else as a static argument (`#[jit(static = name)]`)"
)]
pub trait Tree: Sized {
    /// Appends this value's leaves, depth first, in field order.
    fn flatten_into(&self, leaves: &mut Vec<Array>);
    /// This value's structure.
    fn structure(&self) -> TreeDef;
    /// Rebuilds a value with structure `def`, taking its leaves from `leaves` in order.
    fn unflatten_from(
        def: &TreeDef,
        leaves: &mut dyn Iterator<Item = Array>,
    ) -> Result<Self, TreeMismatch>;

    /// Flattens into leaves and structure.
    fn flatten(&self) -> (Vec<Array>, TreeDef) {
        let mut leaves = Vec::new();
        self.flatten_into(&mut leaves);
        (leaves, self.structure())
    }
}

/// Takes the next leaf, or reports that the tree ran short.
pub fn next_leaf(
    leaves: &mut dyn Iterator<Item = Array>,
    expected: &TreeDef,
) -> Result<Array, TreeMismatch> {
    leaves
        .next()
        .ok_or_else(|| TreeMismatch::new(expected, "fewer leaves than the structure needs"))
}

impl Tree for Array {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        leaves.push(self.clone());
    }
    fn structure(&self) -> TreeDef {
        TreeDef::Leaf
    }
    fn unflatten_from(
        def: &TreeDef,
        leaves: &mut dyn Iterator<Item = Array>,
    ) -> Result<Self, TreeMismatch> {
        match def {
            TreeDef::Leaf | TreeDef::Scalar(_) => next_leaf(leaves, def),
            other => Err(TreeMismatch::new("*", other)),
        }
    }
}

macro_rules! scalar_tree {
    ($($t:ty),*) => {$(
        impl Tree for $t {
            fn flatten_into(&self, leaves: &mut Vec<Array>) {
                leaves.push(Array::weak_scalar(*self));
            }
            fn structure(&self) -> TreeDef {
                TreeDef::Scalar(<$t as crate::dtype::Element>::DTYPE)
            }
            /// A scalar can only be rebuilt from a concrete leaf: a traced value has no Rust
            /// value yet.
            fn unflatten_from(
                def: &TreeDef,
                leaves: &mut dyn Iterator<Item = Array>,
            ) -> Result<Self, TreeMismatch> {
                match def {
                    TreeDef::Leaf | TreeDef::Scalar(_) => Ok(next_leaf(leaves, def)?.item::<$t>()),
                    other => Err(TreeMismatch::new(stringify!($t), other)),
                }
            }
        }
    )*};
}
scalar_tree!(f32, f64, i32, i64, u32, u8, i8, bool);

impl Tree for () {
    fn flatten_into(&self, _: &mut Vec<Array>) {}
    fn structure(&self) -> TreeDef {
        TreeDef::Tuple(vec![])
    }
    fn unflatten_from(
        def: &TreeDef,
        _: &mut dyn Iterator<Item = Array>,
    ) -> Result<Self, TreeMismatch> {
        match def {
            TreeDef::Tuple(c) if c.is_empty() => Ok(()),
            other => Err(TreeMismatch::new("()", other)),
        }
    }
}

macro_rules! tuple_tree {
    ($(($($name:ident $idx:tt),+))*) => {$(
        impl<$($name: Tree),+> Tree for ($($name,)+) {
            fn flatten_into(&self, leaves: &mut Vec<Array>) {
                $(self.$idx.flatten_into(leaves);)+
            }
            fn structure(&self) -> TreeDef {
                TreeDef::Tuple(vec![$(self.$idx.structure()),+])
            }
            fn unflatten_from(
                def: &TreeDef,
                leaves: &mut dyn Iterator<Item = Array>,
            ) -> Result<Self, TreeMismatch> {
                const N: usize = [$($idx),+].len();
                match def {
                    TreeDef::Tuple(c) if c.len() == N => {
                        Ok(($($name::unflatten_from(&c[$idx], leaves)?,)+))
                    }
                    other => Err(TreeMismatch::new(format!("a tuple of {N}"), other)),
                }
            }
        }
    )*};
}
tuple_tree! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

impl<T: Tree> Tree for Vec<T> {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        self.iter().for_each(|t| t.flatten_into(leaves));
    }
    fn structure(&self) -> TreeDef {
        TreeDef::List(self.iter().map(Tree::structure).collect())
    }
    fn unflatten_from(
        def: &TreeDef,
        leaves: &mut dyn Iterator<Item = Array>,
    ) -> Result<Self, TreeMismatch> {
        match def {
            TreeDef::List(c) => c.iter().map(|d| T::unflatten_from(d, leaves)).collect(),
            other => Err(TreeMismatch::new("vec![..]", other)),
        }
    }
}

impl<T: Tree, const N: usize> Tree for [T; N] {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        self.iter().for_each(|t| t.flatten_into(leaves));
    }
    fn structure(&self) -> TreeDef {
        TreeDef::FixedArray(self.iter().map(Tree::structure).collect())
    }
    fn unflatten_from(
        def: &TreeDef,
        leaves: &mut dyn Iterator<Item = Array>,
    ) -> Result<Self, TreeMismatch> {
        match def {
            TreeDef::FixedArray(c) if c.len() == N => {
                let items = c
                    .iter()
                    .map(|d| T::unflatten_from(d, leaves))
                    .collect::<Result<Vec<T>, _>>()?;
                Ok(items
                    .try_into()
                    .unwrap_or_else(|_| unreachable!("length checked above")))
            }
            other => Err(TreeMismatch::new(format!("an array of {N}"), other)),
        }
    }
}

impl<T: Tree> Tree for Option<T> {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        if let Some(t) = self {
            t.flatten_into(leaves);
        }
    }
    fn structure(&self) -> TreeDef {
        match self {
            None => TreeDef::None,
            Some(t) => TreeDef::Some(Box::new(t.structure())),
        }
    }
    fn unflatten_from(
        def: &TreeDef,
        leaves: &mut dyn Iterator<Item = Array>,
    ) -> Result<Self, TreeMismatch> {
        match def {
            TreeDef::None => Ok(None),
            TreeDef::Some(d) => Ok(Some(T::unflatten_from(d, leaves)?)),
            other => Err(TreeMismatch::new("an Option", other)),
        }
    }
}

impl<T: Tree> Tree for BTreeMap<String, T> {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        self.values().for_each(|t| t.flatten_into(leaves));
    }
    fn structure(&self) -> TreeDef {
        TreeDef::Map(
            self.iter()
                .map(|(k, v)| (k.clone(), v.structure()))
                .collect(),
        )
    }
    fn unflatten_from(
        def: &TreeDef,
        leaves: &mut dyn Iterator<Item = Array>,
    ) -> Result<Self, TreeMismatch> {
        match def {
            TreeDef::Map(c) => c
                .iter()
                .map(|(k, d)| Ok((k.clone(), T::unflatten_from(d, leaves)?)))
                .collect(),
            other => Err(TreeMismatch::new("a map", other)),
        }
    }
}

/// The leaves of a tree, in order.
pub fn tree_leaves<T: Tree>(tree: &T) -> Vec<Array> {
    tree.flatten().0
}

/// Rebuilds a tree of type `T` and structure `def` from `leaves`.
///
/// Panics with both structures named when they do not fit; see [`try_tree_unflatten`].
#[track_caller]
pub fn tree_unflatten<T: Tree>(def: &TreeDef, leaves: Vec<Array>) -> T {
    try_tree_unflatten(def, leaves).unwrap_or_else(|e| panic!("tree_unflatten: {e}"))
}

/// Rebuilds a tree, reporting a structure mismatch or a leaf count that does not fit.
pub fn try_tree_unflatten<T: Tree>(def: &TreeDef, leaves: Vec<Array>) -> Result<T, TreeMismatch> {
    let n = leaves.len();
    if n != def.num_leaves() {
        return Err(TreeMismatch::new(
            format!("{def} ({} leaves)", def.num_leaves()),
            format!("{n} leaves"),
        ));
    }
    T::unflatten_from(def, &mut leaves.into_iter())
}

/// Applies `f` to every leaf, keeping the structure.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let params = (Array::ones(&[2], DType::F32), vec![Array::scalar(3.0f32)]);
/// let zeros = tree_map(&params, |p| Array::zeros_like(p));
/// assert_eq!(zeros.0.to_vec::<f32>(), vec![0.0, 0.0]);
/// assert_eq!(zeros.1[0].item::<f32>(), 0.0);
/// ```
#[track_caller]
pub fn tree_map<T: Tree>(tree: &T, mut f: impl FnMut(&Array) -> Array) -> T {
    let (leaves, def) = tree.flatten();
    tree_unflatten(&def, leaves.iter().map(&mut f).collect())
}

/// Applies `f` to the leaves of two trees of the same structure, pairwise.
///
/// Panics naming both structures when they differ.
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Params {
///     w: Array,
///     b: Array,
/// }
///
/// let params = Params { w: Array::from_vec(vec![1.0f32, 2.0], &[2]), b: Array::scalar(0.5f32) };
/// let grads = Params { w: Array::from_vec(vec![10.0f32, -10.0], &[2]), b: Array::scalar(1.0f32) };
/// let lr = 0.5f32;
/// let updated = tree_map2(&params, &grads, |p, g| p - g * lr);
/// assert_eq!(updated.w.to_vec::<f32>(), vec![-4.0, 7.0]);
/// assert_eq!(updated.b.item::<f32>(), 0.0);
/// ```
#[track_caller]
pub fn tree_map2<T: Tree, U: Tree>(a: &T, b: &U, mut f: impl FnMut(&Array, &Array) -> Array) -> T {
    let (la, da) = a.flatten();
    let (lb, db) = b.flatten();
    if da != db {
        panic!("tree_map2: {}", TreeMismatch::new(&da, &db));
    }
    tree_unflatten(&da, la.iter().zip(&lb).map(|(x, y)| f(x, y)).collect())
}

/// Applies `f` to the leaves of several trees of the same structure, leaf by leaf: `f` gets
/// the leaves at one position, one from each tree, in the order of `trees`. Optimizers use it
/// to combine parameters with their moments.
///
/// Panics when `trees` is empty or naming both structures when two differ.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let p = (Array::scalar(1.0f32), Array::from_vec(vec![1.0f32, 2.0], &[2]));
/// let m = (Array::scalar(2.0f32), Array::from_vec(vec![3.0f32, 4.0], &[2]));
/// let v = (Array::scalar(4.0f32), Array::from_vec(vec![1.0f32, 1.0], &[2]));
/// let out = tree_map_n(&[&p, &m, &v], |&[p, m, v]| p + m * v);
/// assert_eq!(out.0.item::<f32>(), 9.0);
/// assert_eq!(out.1.to_vec::<f32>(), vec![4.0, 6.0]);
/// ```
#[track_caller]
pub fn tree_map_n<T: Tree, const N: usize>(
    trees: &[&T; N],
    mut f: impl FnMut(&[&Array; N]) -> Array,
) -> T {
    assert!(N > 0, "tree_map_n: no trees given");
    let flat: Vec<(Vec<Array>, TreeDef)> = trees.iter().map(|t| t.flatten()).collect();
    let def = &flat[0].1;
    for (_, other) in &flat[1..] {
        if other != def {
            panic!("tree_map_n: {}", TreeMismatch::new(def, other));
        }
    }
    let leaves = (0..def.num_leaves())
        .map(|i| f(&std::array::from_fn(|k| &flat[k].0[i])))
        .collect();
    tree_unflatten(def, leaves)
}

/// The path of each leaf, in leaf order, as dot-separated names: struct fields by name,
/// tuple, `Vec` and array elements by index, map entries by key (`layers.0.w`, `b`), the
/// convention of PyTorch's and safetensors' tensor names. A tree that is a single leaf has
/// the path `""`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[derive(Tree)]
/// struct Layer { w: Array, b: Array }
/// #[derive(Tree)]
/// struct Model { layers: Vec<Layer>, scale: Array }
///
/// let layer = || Layer { w: Array::ones(&[2, 2], DType::F32), b: Array::zeros(&[2], DType::F32) };
/// let model = Model { layers: vec![layer(), layer()], scale: Array::scalar(1.0f32) };
/// assert_eq!(
///     jaxrs::tree_paths(&model),
///     ["layers.0.w", "layers.0.b", "layers.1.w", "layers.1.b", "scale"]
/// );
/// ```
pub fn tree_paths<T: Tree>(tree: &T) -> Vec<String> {
    fn join(path: &str, name: &str) -> String {
        if path.is_empty() {
            name.to_string()
        } else {
            format!("{path}.{name}")
        }
    }
    fn walk(def: &TreeDef, path: &str, out: &mut Vec<String>) {
        match def {
            TreeDef::Leaf | TreeDef::Scalar(_) => out.push(path.to_string()),
            TreeDef::None => {}
            TreeDef::Some(t) => walk(t, path, out),
            TreeDef::Tuple(c) | TreeDef::List(c) | TreeDef::FixedArray(c) => {
                for (i, t) in c.iter().enumerate() {
                    walk(t, &join(path, &i.to_string()), out);
                }
            }
            TreeDef::Map(c) => {
                for (k, t) in c {
                    walk(t, &join(path, k), out);
                }
            }
            TreeDef::Struct { fields, .. } => {
                for (k, t) in fields {
                    walk(t, &join(path, k), out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&tree.structure(), "", &mut out);
    out
}

/// A readable path for each leaf: `arg[1].w`, `donated[0][2]`.
pub fn leaf_paths(def: &TreeDef, root: &str) -> Vec<String> {
    fn walk(def: &TreeDef, path: String, out: &mut Vec<String>) {
        match def {
            TreeDef::Leaf | TreeDef::Scalar(_) => out.push(path),
            TreeDef::None => {}
            TreeDef::Some(t) => walk(t, path, out),
            TreeDef::Tuple(c) | TreeDef::List(c) | TreeDef::FixedArray(c) => {
                for (i, t) in c.iter().enumerate() {
                    walk(t, format!("{path}[{i}]"), out);
                }
            }
            TreeDef::Map(c) => {
                for (k, t) in c {
                    walk(t, format!("{path}[{k:?}]"), out);
                }
            }
            TreeDef::Struct { fields, .. } => {
                for (k, t) in fields {
                    walk(t, format!("{path}.{k}"), out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(def, root.to_string(), &mut out);
    out
}
