//! Trees: flatten/unflatten round trips, tree_map, tree_map2, mismatches, derived structs.

use jaxrs::prelude::*;
use jaxrs::{tree_leaves, tree_unflatten, TreeDef};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

mod common;
use common::panic_message;

#[derive(Tree, Clone, Debug)]
struct Layer<T> {
    w: T,
    b: T,
}

#[derive(Tree, Clone, Debug)]
struct Model {
    layers: Vec<Layer<Array>>,
    scale: Option<Array>,
    extra: BTreeMap<String, Array>,
}

#[derive(Tree, Clone, Debug)]
struct Pair(Array, [Array; 2]);

fn v(x: f32) -> Array {
    Array::from_vec(vec![x, x + 1.0], &[2])
}

fn model() -> Model {
    let mut extra = BTreeMap::new();
    extra.insert("z".to_string(), v(9.0));
    extra.insert("a".to_string(), v(7.0));
    Model {
        layers: vec![
            Layer {
                w: v(1.0),
                b: v(2.0),
            },
            Layer {
                w: v(3.0),
                b: v(4.0),
            },
        ],
        scale: Some(v(5.0)),
        extra,
    }
}

#[test]
fn leaves_come_in_field_order_and_rebuild() {
    let m = model();
    let (leaves, def) = m.flatten();
    let firsts: Vec<f32> = leaves.iter().map(|l| l.to_vec::<f32>()[0]).collect();
    assert_eq!(firsts, vec![1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 9.0]);
    assert_eq!(def.num_leaves(), 7);
    let back: Model = tree_unflatten(&def, leaves);
    assert_eq!(back.layers[1].b.to_vec::<f32>(), vec![4.0, 5.0]);
    assert_eq!(back.extra["z"].to_vec::<f32>(), vec![9.0, 10.0]);
    let text = def.to_string();
    assert!(
        text.starts_with("Model { layers: vec![Layer { w: *, b: * }"),
        "{text}"
    );
}

#[test]
fn tuple_structs_and_fixed_arrays() {
    let p = Pair(v(0.0), [v(1.0), v(2.0)]);
    let doubled = tree_map(&p, |x| x * 2.0);
    assert_eq!(doubled.1[1].to_vec::<f32>(), vec![4.0, 6.0]);
    assert_eq!(tree_leaves(&p).len(), 3);
}

#[test]
fn tree_map2_zips_two_trees() {
    let params = model();
    let grads = tree_map(&params, |p| Array::ones(p.shape(), p.dtype()));
    let updated = tree_map2(&params, &grads, |p, g| p - g * 0.5);
    assert_eq!(updated.layers[0].w.to_vec::<f32>(), vec![0.5, 1.5]);
    assert_eq!(updated.scale.unwrap().to_vec::<f32>(), vec![4.5, 5.5]);
}

#[test]
fn a_structure_mismatch_names_both_structures() {
    let a = (v(1.0), v(2.0));
    let b = (v(1.0), vec![v(2.0)]);
    let err =
        catch_unwind(AssertUnwindSafe(|| tree_map2(&a, &b, |x, y| x + y))).expect_err("mismatch");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("(*, *)") && msg.contains("(*, vec![*])"),
        "{msg}"
    );

    let def = TreeDef::Tuple(vec![TreeDef::Leaf, TreeDef::Leaf]);
    let wrong = jaxrs::try_tree_unflatten::<Layer<Array>>(&def, vec![v(1.0), v(2.0)]).unwrap_err();
    assert!(wrong.to_string().contains("Layer"), "{wrong}");
}

/// Rust scalars in a tree are static values of its structure (issue 11), not leaves; only a
/// top-level scalar parameter of a macro is traced, wrapped as a weakly typed leaf.
#[test]
fn scalars_are_static_and_a_traced_scalar_is_a_weak_leaf() {
    let (leaves, def) = (2.5f32, 3i32).flatten();
    assert!(leaves.is_empty());
    assert_eq!(def.to_string(), "(2.5, 3)");
    let back: (f32, i32) = tree_unflatten(&def, leaves);
    assert_eq!(back, (2.5, 3));
    // Another value is another structure.
    assert_ne!(def, (2.5f32, 4i32).structure());

    use jaxrs::internals::macro_support::TracedScalar;
    let (leaves, def) = (TracedScalar(2.5f32), TracedScalar(3i32)).flatten();
    // Weak leaves at JAX's x64 defaults, as `jax.jit` traces a Python float or int.
    assert!(leaves[0].is_weak() && leaves[1].is_weak());
    assert_eq!(leaves[0].dtype(), DType::F64);
    assert_eq!(leaves[1].dtype(), DType::I64);
    assert_eq!(def, (TracedScalar(0.0f32), TracedScalar(0i32)).structure());
    let back: (Array, Array) = tree_unflatten(&def, leaves);
    assert_eq!((back.0.item::<f64>(), back.1.item::<i64>()), (2.5, 3));
}

// JAX's tree utilities (`jax.tree`, `jax.tree_util`). The expected values are what JAX
// 0.10.2 gives for the same trees; the cases with ints are the examples of JAX's own
// docstrings, written as `TreeOf`s of ints.

use jaxrs::tree::{self as jtree, KeyEntry, TreeOf};
use jaxrs::tree_util;

fn leaf() -> TreeDef {
    TreeDef::Leaf
}

fn tuple(c: Vec<TreeDef>) -> TreeDef {
    TreeDef::Tuple(c)
}

fn map_def(entries: &[(&str, TreeDef)]) -> TreeDef {
    TreeDef::Map(
        entries
            .iter()
            .map(|(k, d)| (k.to_string(), d.clone()))
            .collect(),
    )
}

#[test]
fn flatten_structure_leaves_and_unflatten_as_jax() {
    let m = model();
    let (leaves, def) = jtree::flatten(&m);
    assert_eq!(leaves.len(), 7);
    assert_eq!(def, jtree::structure(&m));
    assert_eq!(jtree::leaves(&m).len(), 7);
    let back: Model = jtree::unflatten(&def, leaves.clone());
    assert_eq!(back.extra["a"].to_vec::<f32>(), vec![7.0, 8.0]);
    // Unflattening into any leaf type, and back into the typed tree.
    let counts = TreeOf::new(def.clone(), (0..7).collect::<Vec<u32>>());
    assert_eq!(counts.leaves()[6], 6);
    let again: Model = TreeOf::new(def, leaves).into_tree();
    assert_eq!(again.layers[1].w.to_vec::<f32>(), vec![3.0, 4.0]);
    // The tree_util names are the same functions.
    assert_eq!(tree_util::tree_leaves(&m).len(), 7);
    assert_eq!(tree_util::tree_structure(&m), jtree::structure(&m));
    let (l, d) = tree_util::tree_flatten(&m);
    let rebuilt: Model = tree_unflatten(&d, l);
    assert_eq!(rebuilt.layers[0].b.to_vec::<f32>(), vec![2.0, 3.0]);
    let msg = panic_message(|| {
        let _ = TreeOf::new(tuple(vec![leaf(), leaf()]), vec![1]);
    });
    assert!(msg.contains("has 2 leaves, 1 were given"), "{msg}");
}

#[test]
fn map_to_any_leaf_type_and_is_leaf() {
    let m = model();
    // jax.tree.map(lambda x: x.shape, m)
    let shapes = jtree::map_to(&m, |x| x.shape().to_vec());
    assert_eq!(shapes.leaves().len(), 7);
    assert!(shapes
        .to_string()
        .starts_with("Model { layers: vec![Layer { w: [2], b: [2] }"));
    // jax.tree.map(f, tree, is_leaf=lambda n: isinstance(n, Layer)) sees each layer whole.
    let is_layer =
        |node: &TreeOf<Array>| matches!(node.structure(), TreeDef::Struct { name: "Layer", .. });
    let norms = jtree::map_is_leaf(&m.layers, is_layer, |layer| {
        let l: Layer<Array> = layer.clone().into_tree();
        (&l.w + &l.b).sum(None, false).item::<f32>()
    });
    assert_eq!(norms.leaves(), &[8.0, 16.0]);
    assert_eq!(norms.structure(), &TreeDef::List(vec![leaf(), leaf()]));
    // A leaf is a leaf whatever is_leaf says, and is_leaf sees the nodes from the root down.
    let mut seen = Vec::new();
    let cut = jtree::with_is_leaf(&m.layers, |node| {
        seen.push(node.structure().to_string());
        false
    });
    assert_eq!(
        seen,
        [
            "vec![Layer { w: *, b: * }, Layer { w: *, b: * }]",
            "Layer { w: *, b: * }",
            "Layer { w: *, b: * }"
        ]
    );
    assert_eq!(cut.leaves().len(), 4);
    assert!(cut.leaves().iter().all(|sub| sub.as_leaf().is_some()));
}

#[test]
fn key_paths_are_jax_key_paths() {
    let m = model();
    let (with_paths, def) = jtree::flatten_with_path(&m);
    assert_eq!(def.num_leaves(), with_paths.len());
    let paths: Vec<String> = with_paths
        .iter()
        .map(|(p, _)| tree_util::keystr(p))
        .collect();
    // `Some` adds no key; maps are dict keys in Python's quotes; struct fields are attributes.
    assert_eq!(
        paths,
        [
            ".layers[0].w",
            ".layers[0].b",
            ".layers[1].w",
            ".layers[1].b",
            ".scale",
            ".extra['a']",
            ".extra['z']",
        ]
    );
    assert_eq!(
        with_paths[5].0,
        vec![KeyEntry::GetAttr("extra"), KeyEntry::Dict("a".into())]
    );
    let simple: Vec<String> = jtree::leaves_with_path(&m)
        .iter()
        .map(|(p, _)| tree_util::keystr_simple(p, "/"))
        .collect();
    assert_eq!(simple[1], "layers/0/b");
    assert_eq!(tree_util::tree_leaves_with_path(&m).len(), 7);
    assert_eq!(tree_util::tree_flatten_with_path(&m).1, def);
    // JAX's docstring example of keystr: {'foo': {'bar': {'baz': 1, 'bat': [2, 3]}}}.
    let def = map_def(&[(
        "foo",
        map_def(&[(
            "bar",
            map_def(&[
                ("bat", TreeDef::List(vec![leaf(), leaf()])),
                ("baz", leaf()),
            ]),
        )]),
    )]);
    let paths: Vec<String> = tree_util::leaf_key_paths(&def)
        .iter()
        .map(|p| tree_util::keystr(p))
        .collect();
    assert_eq!(
        paths,
        [
            "['foo']['bar']['bat'][0]",
            "['foo']['bar']['bat'][1]",
            "['foo']['bar']['baz']"
        ]
    );
    assert_eq!(KeyEntry::FlattenedIndex(3).to_string(), "[3]");
    assert_eq!(KeyEntry::Dict("it's".into()).to_string(), "[\"it's\"]");
    // map_with_path sees the path of each leaf.
    let decayed = jtree::map_with_path(&m, |path, x| match path.first() {
        Some(KeyEntry::GetAttr("layers")) => x * 0.0,
        _ => x.clone(),
    });
    assert_eq!(decayed.layers[1].b.to_vec::<f32>(), vec![0.0, 0.0]);
    assert_eq!(decayed.scale.unwrap().to_vec::<f32>(), vec![5.0, 6.0]);
    let same = tree_util::tree_map_with_path(&m, |_, x| x.clone());
    assert_eq!(same.extra["z"].to_vec::<f32>(), vec![9.0, 10.0]);
}

#[test]
fn reduce_and_reduce_associative_fold_the_leaves() {
    // jax.tree.reduce(lambda a, x: a + x.size, m, 0)
    let m = model();
    assert_eq!(jtree::reduce(|n, x: &Array| n + x.size(), &m, 0), 14);
    let total = jtree::reduce(
        |acc: f32, x: &Array| acc + x.sum(None, false).item::<f32>(),
        &m,
        0.0,
    );
    assert_eq!(total, 3.0 + 5.0 + 7.0 + 9.0 + 11.0 + 15.0 + 19.0);
    assert_eq!(tree_util::tree_reduce(|n, _: &Array| n + 1, &m, 0), 7);
    // JAX's docstring: reduce_associative(operator.add, [1, (2, 3), [4, 5, 6]]) == 21.
    let def = TreeDef::List(vec![
        leaf(),
        tuple(vec![leaf(), leaf()]),
        TreeDef::List(vec![leaf(); 3]),
    ]);
    let ints = TreeOf::new(def, vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(jtree::reduce_associative(|a, b| a + b, &ints, None), 21);
    // Pairs first: ((1 2) (3 4)) (5 6), a balanced order.
    let order = jtree::reduce_associative(
        |a: String, b: String| format!("({a} {b})"),
        &ints.map(|i| i.to_string()),
        None,
    );
    assert_eq!(order, "(((1 2) (3 4)) (5 6))");
    // An empty tree needs the identity, as in JAX.
    let empty = TreeOf::<i32>::new(tuple(vec![]), vec![]);
    assert_eq!(
        tree_util::tree_reduce_associative(|a, b| a * b, &empty, Some(1)),
        1
    );
    let err = panic_message(|| {
        let _ = jtree::reduce_associative(|a, b| a + b, &empty, None);
    });
    assert!(err.contains("give an identity"));
    // Arrays reduce to arrays.
    let sum = jtree::reduce_associative(|a, b| &a + &b, &m, None);
    assert_eq!(sum.to_vec::<f32>(), vec![31.0, 38.0]);
}

#[test]
fn all_asks_every_leaf() {
    // JAX's docstring: all([True, {'a': True, 'b': (True, True)}]) and all([False, (True, False)]).
    let def = TreeDef::List(vec![
        leaf(),
        map_def(&[("a", leaf()), ("b", tuple(vec![leaf(), leaf()]))]),
    ]);
    assert!(jtree::all(&TreeOf::new(def, vec![true; 4])));
    let def = TreeDef::List(vec![leaf(), tuple(vec![leaf(), leaf()])]);
    assert!(!tree_util::tree_all(&TreeOf::new(
        def,
        vec![false, true, false]
    )));
    // Arrays of one element have a truth value; NaN is true, 0 is false, as bool(jnp.array(x)).
    let s = |x: f32| Array::scalar(x);
    assert!(jtree::all(&(
        s(1.0),
        s(f32::NAN),
        vec![Array::scalar(true)]
    )));
    assert!(!jtree::all(&(s(1.0), s(0.0))));
    assert!(jtree::all(&()));
    let err = panic_message(|| {
        let _ = jtree::all(&(v(1.0),));
    });
    assert!(err.contains("ambiguous"));
}

#[test]
fn broadcast_repeats_a_prefix_over_the_full_tree() {
    // JAX's docstring: broadcast((1, 2, 3), (0, {'a': 0, 'b': 0}, (0, 0))) == (1, {'a': 2, 'b': 2}, (3, 3)).
    let prefix = TreeOf::new(tuple(vec![leaf(); 3]), vec![1, 2, 3]);
    let full_def = tuple(vec![
        leaf(),
        map_def(&[("a", leaf()), ("b", leaf())]),
        tuple(vec![leaf(), leaf()]),
    ]);
    let full = TreeOf::new(full_def.clone(), vec![0; 5]);
    let out = jtree::broadcast(&prefix, &full);
    assert_eq!(out.structure(), &full_def);
    assert_eq!(out.leaves(), &[1, 2, 2, 3, 3]);
    assert_eq!(out.to_string(), "(1, {\"a\": 2, \"b\": 2}, (3, 3))");
    // Over a typed tree: one value per layer onto each layer's parameters.
    let m = model();
    let per_layer = TreeOf::new(TreeDef::List(vec![leaf(), leaf()]), vec![0.1f32, 0.2]);
    let lrs = tree_util::tree_broadcast(&per_layer, &m.layers);
    assert_eq!(lrs.leaves(), &[0.1, 0.1, 0.2, 0.2]);
    // Arrays broadcast too, and come back as the full tree's type.
    let scales = jtree::broadcast(&vec![v(1.0), v(2.0)], &m.layers);
    let as_layers: Vec<Layer<Array>> = scales.into_tree();
    assert_eq!(as_layers[1].b.to_vec::<f32>(), vec![2.0, 3.0]);
    // Not a prefix: the message names the place.
    let msg = panic_message(|| {
        let _ = jtree::broadcast(&prefix, &TreeOf::new(tuple(vec![leaf(); 2]), vec![0, 0]));
    });
    assert!(
        msg.contains("not a prefix") && msg.contains("(*, *)"),
        "{msg}"
    );
    let wrong_key = TreeOf::new(map_def(&[("a", leaf()), ("c", leaf())]), vec![0, 0]);
    let right_key = TreeOf::new(map_def(&[("a", leaf()), ("b", leaf())]), vec![1, 1]);
    let err = panic_message(|| {
        let _ = jtree::broadcast(&right_key, &wrong_key);
    });
    assert!(err.contains("at the root"));
}

#[test]
fn transpose_swaps_outer_and_inner_structures() {
    // JAX's docstring: transpose(structure(['*', '*']), structure(('*', '*', '*')),
    // [(1, 2, 3), (4, 5, 6)]) == ([1, 4], [2, 5], [3, 6]).
    let outer = TreeDef::List(vec![leaf(); 2]);
    let inner = tuple(vec![leaf(); 3]);
    let tree = TreeOf::new(outer.compose(&inner), vec![1, 2, 3, 4, 5, 6]);
    let t = jtree::transpose(&outer, Some(&inner), &tree);
    assert_eq!(t.structure(), &inner.compose(&outer));
    assert_eq!(t.leaves(), &[1, 4, 2, 5, 3, 6]);
    assert_eq!(t.to_string(), "(vec![1, 4], vec![2, 5], vec![3, 6])");
    // The inner structure inferred, as with inner_treedef=None.
    assert_eq!(tree_util::tree_transpose(&outer, None, &tree), t);
    // Typed: a Vec of layers into a layer of Vecs.
    let m = model();
    let stacked: Layer<Vec<Array>> =
        jtree::transpose(&TreeDef::List(vec![leaf(); 2]), None, &m.layers).into_tree();
    assert_eq!(stacked.w[1].to_vec::<f32>(), vec![3.0, 4.0]);
    assert_eq!(stacked.b[0].to_vec::<f32>(), vec![2.0, 3.0]);
    let err = panic_message(|| {
        let _ = jtree::transpose(&outer, Some(&tuple(vec![leaf(); 2])), &tree);
    });
    assert!(err.contains("tree structure mismatch"));
}

#[test]
fn treedef_helpers_and_one_level_flattening() {
    let m = model();
    let def = jtree::structure(&m);
    let children = tree_util::treedef_children(&def);
    assert_eq!(children.len(), 3);
    assert_eq!(children[1], TreeDef::Some(Box::new(leaf())));
    assert!(tree_util::treedef_is_leaf(&leaf()));
    // As in JAX, a node without children is a one-node tree too.
    assert!(tree_util::treedef_is_leaf(&TreeDef::None));
    assert!(tree_util::treedef_is_leaf(&tuple(vec![])));
    assert!(!tree_util::treedef_is_leaf(&def));
    let pair = tree_util::treedef_tuple([leaf(), def.clone()]);
    assert_eq!(pair, tuple(vec![leaf(), def]));
    let level = tree_util::flatten_one_level_with_keys(&m);
    let keys: Vec<Option<KeyEntry>> = level.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(
        keys,
        [
            Some(KeyEntry::GetAttr("layers")),
            Some(KeyEntry::GetAttr("scale")),
            Some(KeyEntry::GetAttr("extra"))
        ]
    );
    let subtrees = tree_util::flatten_one_level(&m);
    assert_eq!(subtrees[0].leaves().len(), 4);
    assert_eq!(subtrees[2].leaves()[1].to_vec::<f32>(), vec![9.0, 10.0]);
    let err = panic_message(|| {
        let _ = tree_util::flatten_one_level(&v(1.0));
    });
    assert!(err.contains("has no children"));
    assert!(tree_util::all_leaves(&[v(1.0), v(2.0)]));
    assert!(!tree_util::all_leaves(&[(v(1.0),)]));
}
