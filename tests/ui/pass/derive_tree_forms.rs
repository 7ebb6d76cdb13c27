//! Every struct shape #[derive(Tree)] accepts.
use jaxrs::prelude::*;
use jaxrs::TreeDef;

#[derive(Tree, Clone)]
pub struct Linear {
    pub w: Array,
    pub b: Option<Array>,
}

#[derive(Tree, Clone)]
struct Mlp<L> {
    layers: Vec<L>,
    scale: f32,
}

#[derive(Tree)]
struct Pair<A, B>(A, B)
where
    A: Clone;

#[derive(Tree)]
struct Stack<T: Tree, const N: usize> {
    items: [T; N],
}

#[derive(Tree, Clone, Debug, PartialEq)]
struct Marker;

#[derive(Tree)]
struct Nested {
    mlp: Mlp<Linear>,
    pair: Pair<Marker, (Array, Array)>,
    stack: Stack<Marker, 3>,
    #[allow(dead_code)]
    r#ref: (),
}

fn is_tree<T: Tree>() {}

fn main() {
    is_tree::<Linear>();
    is_tree::<Mlp<Linear>>();
    is_tree::<Pair<Marker, Array>>();
    is_tree::<Stack<Linear, 2>>();
    is_tree::<Nested>();

    assert_eq!(
        Marker.structure(),
        TreeDef::Struct {
            name: "Marker",
            fields: vec![]
        }
    );
    assert_eq!(
        Stack {
            items: [Marker, Marker]
        }
        .structure()
        .to_string(),
        "Stack { items: [Marker {  }, Marker {  }] }"
    );
}
