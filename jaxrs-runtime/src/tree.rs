//! Pytrees: values made of arrays, flattened to leaves plus a structure and rebuilt.
//!
//! jit, grad and vmap take and return trees. [`Tree`] is implemented for [`Array`], tuples,
//! `Vec`, fixed-size arrays, `Option`, `BTreeMap<String, _>`, Rust scalars, `bool` and
//! `String`, and derived for user structs with `#[derive(Tree)]`.
//!
//! The rule for what is traced: **arrays are leaves, everything else is static.** A Rust
//! scalar, `bool` or `String` in a tree is not a leaf but part of the tree's structure
//! ([`TreeDef::Static`]), as equinox treats non-array fields and flax a field marked
//! `pytree_node=False`: it is part of the jit cache key (a new value retraces), a traced
//! function reads it as the plain Rust value the caller passed, and grad and vmap leave it
//! alone (no cotangent, no batch axis). The one exception is a top-level scalar parameter
//! of a transformation macro (`#[jit] fn step(x: &Array, lr: f32)`), which the macro traces
//! as a weakly typed 0-d array, as JAX traces a Python float passed to `jax.jit`, so that a
//! new `lr` does not recompile.
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

use crate::core::array::{Array, HostArray};
use crate::core::ir::{LitValue, Literal};
use crate::dtype::DType;
use std::collections::BTreeMap;
use std::fmt;

mod generic;
mod keys;

pub use generic::{
    all, all_leaves, broadcast, flatten, flatten_one_level, flatten_one_level_with_keys,
    flatten_up_to, leaves, map_is_leaf, map_to, reduce, reduce_associative, structure, transpose,
    tree_of, treedef_children, treedef_is_leaf, treedef_tuple, with_is_leaf, Leaves, TreeOf,
    Truthy,
};
pub use keys::{
    flatten_with_path, keystr, keystr_simple, leaf_key_paths, leaves_with_path, map_with_path,
    KeyEntry, KeyPath,
};

/// The structure of a tree, without its leaves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TreeDef {
    /// An [`Array`].
    Leaf,
    /// A traced Rust scalar, carried as a weakly typed 0-d array of this dtype: a top-level
    /// scalar parameter of `#[jit]`, `#[pmap]` or `#[remat]` (see [`TracedScalar`]).
    Scalar(DType),
    /// A non-array value held in the structure itself, not a leaf (see [`StaticValue`]).
    Static(StaticValue),
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
            TreeDef::None | TreeDef::Static(_) => 0,
            TreeDef::Some(t) => t.num_leaves(),
            TreeDef::Tuple(c) | TreeDef::List(c) | TreeDef::FixedArray(c) => {
                c.iter().map(TreeDef::num_leaves).sum()
            }
            TreeDef::Map(c) => c.iter().map(|(_, t)| t.num_leaves()).sum(),
            TreeDef::Struct { fields, .. } => fields.iter().map(|(_, t)| t.num_leaves()).sum(),
        }
    }
}

impl TreeDef {
    /// Whether this is a leaf: an [`Array`] or a traced scalar.
    pub fn is_leaf(&self) -> bool {
        matches!(self, TreeDef::Leaf | TreeDef::Scalar(_))
    }

    /// The same node with each child replaced by `f(child)`; a leaf or a node without
    /// children as it is.
    pub fn map_children(&self, f: &mut dyn FnMut(&TreeDef) -> TreeDef) -> TreeDef {
        let list = |c: &[TreeDef], f: &mut dyn FnMut(&TreeDef) -> TreeDef| -> Vec<TreeDef> {
            c.iter().map(&mut *f).collect()
        };
        match self {
            TreeDef::Leaf | TreeDef::Scalar(_) | TreeDef::Static(_) | TreeDef::None => self.clone(),
            TreeDef::Some(t) => TreeDef::Some(Box::new(f(t))),
            TreeDef::Tuple(c) => TreeDef::Tuple(list(c, f)),
            TreeDef::List(c) => TreeDef::List(list(c, f)),
            TreeDef::FixedArray(c) => TreeDef::FixedArray(list(c, f)),
            TreeDef::Map(c) => TreeDef::Map(c.iter().map(|(k, t)| (k.clone(), f(t))).collect()),
            TreeDef::Struct { name, fields } => TreeDef::Struct {
                name,
                fields: fields.iter().map(|(k, t)| (*k, f(t))).collect(),
            },
        }
    }

    /// This structure with `inner` in place of each of its leaves, as JAX's
    /// `PyTreeDef.compose`: the structure of a tree of this shape whose leaves are trees of
    /// `inner`'s.
    pub fn compose(&self, inner: &TreeDef) -> TreeDef {
        if self.is_leaf() {
            return inner.clone();
        }
        self.map_children(&mut |child| child.compose(inner))
    }

    /// The structure written out, with `leaf(node)` in place of each leaf.
    pub(crate) fn render(&self, leaf: &mut dyn FnMut(&TreeDef) -> String) -> String {
        let list =
            |open: &str, c: &[TreeDef], close: &str, leaf: &mut dyn FnMut(&TreeDef) -> String| {
                let items: Vec<String> = c.iter().map(|t| t.render(leaf)).collect();
                let comma = if open == "(" && c.len() == 1 { "," } else { "" };
                format!("{open}{}{comma}{close}", items.join(", "))
            };
        match self {
            TreeDef::Leaf | TreeDef::Scalar(_) => leaf(self),
            TreeDef::Static(v) => v.to_string(),
            TreeDef::Tuple(c) => list("(", c, ")", leaf),
            TreeDef::List(c) => list("vec![", c, "]", leaf),
            TreeDef::FixedArray(c) => list("[", c, "]", leaf),
            TreeDef::None => "None".to_string(),
            TreeDef::Some(t) => format!("Some({})", t.render(leaf)),
            TreeDef::Map(c) => {
                let items: Vec<String> = c
                    .iter()
                    .map(|(k, t)| format!("{k:?}: {}", t.render(leaf)))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            TreeDef::Struct { name, fields } => {
                let items: Vec<String> = fields
                    .iter()
                    .map(|(k, t)| format!("{k}: {}", t.render(leaf)))
                    .collect();
                format!("{name} {{ {} }}", items.join(", "))
            }
        }
    }
}

impl fmt::Display for TreeDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&mut |leaf| match leaf {
            TreeDef::Scalar(d) => d.name().to_string(),
            _ => "*".to_string(),
        }))
    }
}

macro_rules! static_values {
    ($($variant:ident($t:ty) $key:ident,)*) => {
        /// A non-array value of a tree: a static field, part of the tree's structure.
        ///
        /// Rust scalars, `bool` and `String` are static wherever they sit in a tree (a
        /// struct field, a `Vec`, a tuple, an `Option`, a map), like equinox's non-array
        /// fields and flax's `pytree_node=False`: they contribute no leaf, and two trees
        /// with different static values have different structures, so jit compiles once per
        /// value and a traced function reads the plain Rust value. Floats compare and hash
        /// by their bits (`NaN` equals itself, `0.0` differs from `-0.0`), as a cache key must.
        ///
        /// ```
        /// use jaxrs::prelude::*;
        /// use jaxrs::{StaticValue, TreeDef};
        ///
        /// #[derive(Tree)]
        /// struct Cfg { w: Array, scale: f32 }
        ///
        /// let cfg = Cfg { w: Array::ones(&[2], DType::F32), scale: 0.5 };
        /// assert_eq!(jaxrs::tree_leaves(&cfg).len(), 1);
        /// let TreeDef::Struct { fields, .. } = cfg.structure() else { unreachable!() };
        /// assert_eq!(fields[1], ("scale", TreeDef::Static(StaticValue::F32(0.5))));
        /// assert_eq!(cfg.structure().to_string(), "Cfg { w: *, scale: 0.5 }");
        /// ```
        #[derive(Debug, Clone)]
        pub enum StaticValue {
            $(#[doc = concat!("A `", stringify!($t), "`.")] $variant($t),)*
        }

        impl StaticValue {
            /// What is compared and hashed: the variant, then floats by bits and the rest
            /// as they are.
            fn key(&self) -> (std::mem::Discriminant<StaticValue>, StaticKey<'_>) {
                let key = match self {
                    $(StaticValue::$variant(v) => static_key!($key, v),)*
                };
                (std::mem::discriminant(self), key)
            }
        }

        $(
            impl Tree for $t {
                fn flatten_into(&self, _: &mut Vec<Array>) {}
                fn structure(&self) -> TreeDef {
                    TreeDef::Static(StaticValue::$variant(self.clone()))
                }
                fn unflatten_from(
                    def: &TreeDef,
                    _: &mut dyn Iterator<Item = Array>,
                ) -> Result<Self, TreeMismatch> {
                    match def {
                        TreeDef::Static(StaticValue::$variant(v)) => Ok(v.clone()),
                        other => Err(TreeMismatch::new(
                            concat!("a static ", stringify!($t)),
                            other,
                        )),
                    }
                }
            }
        )*
    };
}

/// The comparable form of a [`StaticValue`].
#[derive(PartialEq, Eq, Hash)]
enum StaticKey<'a> {
    Bits(u64),
    Int(i128),
    Str(&'a str),
}

macro_rules! static_key {
    (float, $v:ident) => {
        StaticKey::Bits(f64::from(*$v).to_bits())
    };
    (int, $v:ident) => {
        StaticKey::Int(*$v as i128)
    };
    (str, $v:ident) => {
        StaticKey::Str($v.as_str())
    };
}

static_values! {
    F32(f32) float,
    F64(f64) float,
    I8(i8) int,
    I16(i16) int,
    I32(i32) int,
    I64(i64) int,
    Isize(isize) int,
    U8(u8) int,
    U16(u16) int,
    U32(u32) int,
    U64(u64) int,
    Usize(usize) int,
    Bool(bool) int,
    Char(char) int,
    String(String) str,
}

impl PartialEq for StaticValue {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for StaticValue {}

impl std::hash::Hash for StaticValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

/// As Rust's `Debug` writes the value: `0.5`, `3`, `true`, `"relu"`.
impl fmt::Display for StaticValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StaticValue::F32(v) => write!(f, "{v:?}"),
            StaticValue::F64(v) => write!(f, "{v:?}"),
            StaticValue::I8(v) => write!(f, "{v}"),
            StaticValue::I16(v) => write!(f, "{v}"),
            StaticValue::I32(v) => write!(f, "{v}"),
            StaticValue::I64(v) => write!(f, "{v}"),
            StaticValue::Isize(v) => write!(f, "{v}"),
            StaticValue::U8(v) => write!(f, "{v}"),
            StaticValue::U16(v) => write!(f, "{v}"),
            StaticValue::U32(v) => write!(f, "{v}"),
            StaticValue::U64(v) => write!(f, "{v}"),
            StaticValue::Usize(v) => write!(f, "{v}"),
            StaticValue::Bool(v) => write!(f, "{v}"),
            StaticValue::Char(v) => write!(f, "{v:?}"),
            StaticValue::String(v) => write!(f, "{v:?}"),
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
///
/// **What is traced and what is static.** The [`Array`]s of a tree are its leaves: jit,
/// grad and vmap trace them. Its Rust scalars (`f32`, `f64`, the integers, `usize`),
/// `bool`s, `char`s and `String`s, also inside a `Vec`, tuple, array, `Option` or map, are
/// static metadata ([`TreeDef::Static`]), as equinox treats a module's non-array fields and
/// flax a field with `pytree_node=False`: they are part of the tree's structure, hence of
/// jit's cache key (a new value retraces, and the recompile explanation names the field),
/// the traced function reads them as the plain Rust values the caller passed (so they can
/// steer Rust control flow: `if cfg.scale > 1.0`), grad gives them no cotangent (the
/// gradient tree carries the input's values) and vmap no batch axis (an axis given for
/// one is ignored: it has no leaf to map). A value that should be traced is an `Array`
/// (`Array::scalar(0.5f32)`).
///
/// The one exception: a top-level scalar parameter of `#[jit]`, `#[pmap]` or `#[remat]`
/// (`fn step(x: &Array, lr: f32)`) is traced, as a weakly typed 0-d array that the body
/// sees as an `&Array`, as `jax.jit` traces a Python float: a new `lr` reuses the compiled
/// program. Make it static with `#[jit(static = lr)]`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Layer {
///     w: Array,         // a leaf: traced, differentiated, batched
///     scale: f32,       // static: part of the structure
///     activation: String,
/// }
///
/// #[jit]
/// fn apply(layer: &Layer, x: &Array) -> Array {
///     let y = x.matmul(&layer.w) * layer.scale; // `layer.scale` is a plain f32 here
///     if layer.activation == "relu" { y.relu() } else { y }
/// }
///
/// let layer = Layer { w: Array::ones(&[2, 2], DType::F32), scale: 0.5, activation: "relu".into() };
/// let x = Array::from_vec(vec![1.0f32, -3.0], &[1, 2]);
/// assert_eq!(apply(&layer, &x).to_vec::<f32>(), vec![0.0, 0.0]);
/// let layer = Layer { activation: "none".into(), ..layer };
/// assert_eq!(apply(&layer, &x).to_vec::<f32>(), vec![-1.0, -1.0]);
/// assert_eq!(apply::jit_site().cache_misses(), 2); // a new static value retraced
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tree of arrays",
    label = "not a `jaxrs::Tree`",
    note = "jit, grad and vmap take arrays, tuples, Vec, [T; N], Option and BTreeMap<String, _> of them, structs with #[derive(Tree)], and Rust scalars, bool and String (static fields); pass anything else as a static argument (`#[jit(static = name)]`)"
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

/// A Rust scalar that a transformation traces, as a weakly typed 0-d array (one leaf,
/// [`TreeDef::Scalar`]), where a bare scalar in a tree would be static.
///
/// The transformation macros wrap their top-level scalar parameters in it, so that
/// `#[jit] fn step(x: &Array, lr: f32)` traces `lr` as `jax.jit` traces a Python float (a new
/// `lr` reuses the compiled program) and the body sees it as an `&Array`. The closure forms
/// (`jit(f).call(..)`, `grad`, `vmap`) take the tree the closure takes, where a scalar is
/// static: pass a scalar you want traced there as an array (`Array::scalar(x)`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TracedScalar<T>(pub T);

macro_rules! traced_scalar_tree {
    ($($t:ty),*) => {$(
        impl Tree for TracedScalar<$t> {
            fn flatten_into(&self, leaves: &mut Vec<Array>) {
                leaves.push(Array::weak_scalar(self.0));
            }
            fn structure(&self) -> TreeDef {
                TreeDef::Scalar(<$t as crate::dtype::Element>::DTYPE)
            }
            /// Only from a concrete leaf: a traced value has no Rust value yet (the
            /// transformations rebuild a traced scalar as an [`Array`]).
            fn unflatten_from(
                def: &TreeDef,
                leaves: &mut dyn Iterator<Item = Array>,
            ) -> Result<Self, TreeMismatch> {
                match def {
                    TreeDef::Leaf | TreeDef::Scalar(_) => {
                        Ok(TracedScalar(next_leaf(leaves, def)?.item::<$t>()))
                    }
                    other => Err(TreeMismatch::new(stringify!($t), other)),
                }
            }
        }
    )*};
}
traced_scalar_tree!(f32, f64, i32, u32, u8, i8, bool);

/// 64-bit integers, and those that have no dtype of their own in jaxrs (`u64`, `i16`, `u16`),
/// travel as what JAX makes of a Python int under `jax_enable_x64`: a weakly typed int64
/// scalar, which takes the other operand's dtype in arithmetic and keeps all 64 bits. (A `u64` dtype, once jaxrs has one, need change
/// nothing here; values above `i64::MAX` stop, as JAX's do.)
macro_rules! traced_int_tree {
    ($($t:ty),*) => {$(
        impl Tree for TracedScalar<$t> {
            #[track_caller]
            fn flatten_into(&self, leaves: &mut Vec<Array>) {
                let v = i64::try_from(self.0 as i128).unwrap_or_else(|_| {
                    panic!(
                        "a traced {} of {} does not fit in int64, the dtype a traced Rust \
                         integer takes (as JAX's OverflowError for a Python int); make the \
                         parameter static or pass an array",
                        stringify!($t),
                        self.0
                    )
                });
                leaves.push(Array::from_literal(Literal {
                    value: LitValue::Int(v as i128),
                    dtype: DType::I64,
                    weak: true,
                }));
            }
            fn structure(&self) -> TreeDef {
                TreeDef::Scalar(DType::I64)
            }
            /// Only from a concrete leaf: a traced value has no Rust value yet (the
            /// transformations rebuild a traced scalar as an [`Array`]).
            fn unflatten_from(
                def: &TreeDef,
                leaves: &mut dyn Iterator<Item = Array>,
            ) -> Result<Self, TreeMismatch> {
                match def {
                    TreeDef::Leaf | TreeDef::Scalar(_) => {
                        let v = next_leaf(leaves, def)?.item::<i64>();
                        <$t>::try_from(v as i128)
                            .map(TracedScalar)
                            .map_err(|_| TreeMismatch::new(stringify!($t), "an out-of-range value"))
                    }
                    other => Err(TreeMismatch::new(stringify!($t), other)),
                }
            }
        }
    )*};
}
traced_int_tree!(i64, u64, i16, u16);

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

/// Waits until every leaf of `tree` is computed and returns the tree, as JAX's
/// `jax.block_until_ready(tree)` (dispatch is asynchronous). A failure of a computation that
/// made a leaf is the environment's: a panic that [`crate::try_run`] returns as its `Error`.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::ones(&[3], DType::F32);
/// let (y, z) = jaxrs::block_until_ready((&x * 2.0, vec![&x + 1.0]));
/// assert_eq!(y.to_vec::<f32>(), vec![2.0; 3]);
/// assert_eq!(z[0].to_vec::<f32>(), vec![2.0; 3]);
/// ```
#[track_caller]
pub fn block_until_ready<T: Tree>(tree: T) -> T {
    for leaf in tree_leaves(&tree) {
        leaf.block_until_ready();
    }
    tree
}

/// Copies every leaf of `tree` to host memory, as JAX's `jax.device_get(tree)`: the same
/// structure with a [`HostArray`] in each leaf's place. Panics as [`Array::to_host`] does;
/// [`try_device_get`] returns device failures instead.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let params = (Array::ones(&[2], DType::F32), vec![Array::scalar(3i32)]);
/// let host = jaxrs::device_get(&params);
/// assert_eq!(host.leaves()[0].to_vec::<f32>(), vec![1.0, 1.0]);
/// assert_eq!(host.leaves()[1].to_vec::<i32>(), vec![3]);
/// assert_eq!(host.structure(), &jaxrs::tree::structure(&params));
/// ```
#[track_caller]
pub fn device_get<T: Tree>(tree: &T) -> TreeOf<HostArray> {
    map_to(tree, Array::to_host)
}

/// [`device_get`], returning the first device failure as an error.
#[track_caller]
pub fn try_device_get<T: Tree>(tree: &T) -> crate::error::Result<TreeOf<HostArray>> {
    let (leaves, def) = flatten(tree);
    let host = leaves
        .iter()
        .map(Array::try_to_host)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(TreeOf::new(def, host))
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
            TreeDef::None | TreeDef::Static(_) => {}
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

/// The children of a node with the suffix each adds to a readable path: `.w` for a struct
/// field, `[2]` for an element, `["k"]` for a map entry (Rust's quotes); none for a leaf or
/// static value.
fn children(def: &TreeDef) -> Vec<(String, &TreeDef)> {
    keys::keyed_children(def)
        .into_iter()
        .map(|(key, child)| {
            let suffix = match key {
                None => String::new(),
                Some(KeyEntry::Dict(k)) => format!("[{k:?}]"),
                Some(other) => other.to_string(),
            };
            (suffix, child)
        })
        .collect()
}

/// A readable path for each leaf: `arg[1].w`, `donated[0][2]`.
pub fn leaf_paths(def: &TreeDef, root: &str) -> Vec<String> {
    fn walk(def: &TreeDef, path: String, out: &mut Vec<String>) {
        if matches!(def, TreeDef::Leaf | TreeDef::Scalar(_)) {
            out.push(path);
            return;
        }
        for (suffix, child) in children(def) {
            walk(child, format!("{path}{suffix}"), out);
        }
    }
    let mut out = Vec::new();
    walk(def, root.to_string(), &mut out);
    out
}

/// A static value that differs between two structures, at its readable path (as
/// [`leaf_paths`] writes them), with its old and new value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StaticDiff {
    pub(crate) path: String,
    pub(crate) old: StaticValue,
    pub(crate) new: StaticValue,
}

/// The static values that differ between `old` and `new` when they differ in nothing else
/// (the same nodes, field names and lengths); `None` when their shapes differ too.
pub(crate) fn static_diffs(old: &TreeDef, new: &TreeDef, root: &str) -> Option<Vec<StaticDiff>> {
    fn walk(old: &TreeDef, new: &TreeDef, path: String, out: &mut Vec<StaticDiff>) -> bool {
        match (old, new) {
            (TreeDef::Static(o), TreeDef::Static(n)) => {
                if o != n {
                    out.push(StaticDiff {
                        path,
                        old: o.clone(),
                        new: n.clone(),
                    });
                }
                true
            }
            (TreeDef::Struct { name: a, .. }, TreeDef::Struct { name: b, .. }) if a != b => false,
            _ if std::mem::discriminant(old) != std::mem::discriminant(new) => false,
            (TreeDef::Scalar(a), TreeDef::Scalar(b)) => a == b,
            _ => {
                let (o, n) = (children(old), children(new));
                o.len() == n.len()
                    && o.into_iter().zip(n).all(|((so, co), (sn, cn))| {
                        so == sn && walk(co, cn, format!("{path}{so}"), out)
                    })
            }
        }
    }
    let mut out = Vec::new();
    walk(old, new, root.to_string(), &mut out).then_some(out)
}
