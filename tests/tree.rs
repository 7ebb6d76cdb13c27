//! Trees: flatten/unflatten round trips, tree_map, tree_map2, mismatches, derived structs.

use jaxrs::prelude::*;
use jaxrs::{tree_leaves, tree_unflatten, TreeDef};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

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
