//! `#[derive(Tree)]`: structure and rebuilding of derived structs. These use only leaves that
//! need no device (`()`, `Vec<()>`, `Option`, and scalars' structure); value tests with arrays
//! live with the runtime's tests.

use jaxrs::{StaticValue, Tree, TreeDef, TreeMismatch};

#[derive(Tree, Debug, PartialEq)]
struct Params {
    w: (),
    b: (),
}

#[derive(Tree, Debug, PartialEq)]
struct Model {
    first: Params,
    layers: Vec<()>,
    scale: Option<()>,
}

#[derive(Tree, Debug, PartialEq)]
struct Pair((), Params);

#[derive(Tree, Debug, PartialEq)]
struct Empty;

#[derive(Tree, Debug, PartialEq)]
struct Braces {}

#[derive(Tree, Debug, PartialEq)]
struct Wrap<T> {
    inner: T,
}

#[derive(Tree, Debug, PartialEq)]
struct Bounded<T: Clone, const N: usize>
where
    T: PartialEq,
{
    items: [T; N],
    rest: Option<Wrap<T>>,
}

#[derive(Tree)]
struct Scalars {
    lr: f32,
    step: i64,
}

#[derive(Tree, Debug, PartialEq)]
#[allow(non_camel_case_types)]
struct r#type {
    r#in: (),
}

fn params_def() -> TreeDef {
    TreeDef::Struct {
        name: "Params",
        fields: vec![("w", TreeDef::Tuple(vec![])), ("b", TreeDef::Tuple(vec![]))],
    }
}

fn rebuild<T: Tree>(def: &TreeDef) -> Result<T, TreeMismatch> {
    T::unflatten_from(def, &mut std::iter::empty())
}

#[test]
fn named_struct_structure() {
    assert_eq!(Params { w: (), b: () }.structure(), params_def());
}

#[test]
fn nested_structure() {
    let model = Model {
        first: Params { w: (), b: () },
        layers: vec![(), ()],
        scale: None,
    };
    let expected = TreeDef::Struct {
        name: "Model",
        fields: vec![
            ("first", params_def()),
            (
                "layers",
                TreeDef::List(vec![TreeDef::Tuple(vec![]), TreeDef::Tuple(vec![])]),
            ),
            ("scale", TreeDef::None),
        ],
    };
    assert_eq!(model.structure(), expected);
    assert_eq!(
        Model {
            scale: Some(()),
            ..model
        }
        .structure()
        .to_string(),
        "Model { first: Params { w: (), b: () }, layers: vec![(), ()], scale: Some(()) }"
    );
}

#[test]
fn tuple_and_unit_structs() {
    let expected = TreeDef::Struct {
        name: "Pair",
        fields: vec![("0", TreeDef::Tuple(vec![])), ("1", params_def())],
    };
    assert_eq!(Pair((), Params { w: (), b: () }).structure(), expected);
    let empty = TreeDef::Struct {
        name: "Empty",
        fields: vec![],
    };
    assert_eq!(Empty.structure(), empty);
    assert_eq!(rebuild::<Empty>(&empty), Ok(Empty));
    assert_eq!(
        Braces {}.structure(),
        TreeDef::Struct {
            name: "Braces",
            fields: vec![]
        }
    );
}

#[test]
fn generic_structs() {
    let wrap = Wrap { inner: vec![()] };
    assert_eq!(
        wrap.structure(),
        TreeDef::Struct {
            name: "Wrap",
            fields: vec![("inner", TreeDef::List(vec![TreeDef::Tuple(vec![])]))],
        }
    );
    assert_eq!(rebuild::<Wrap<Vec<()>>>(&wrap.structure()), Ok(wrap));

    let bounded: Bounded<(), 2> = Bounded {
        items: [(), ()],
        rest: Some(Wrap { inner: () }),
    };
    assert_eq!(
        bounded.structure().to_string(),
        "Bounded { items: [(), ()], rest: Some(Wrap { inner: () }) }"
    );
    assert_eq!(rebuild::<Bounded<(), 2>>(&bounded.structure()), Ok(bounded));
}

/// Scalar fields are static: values in the structure, no leaves (issue 11; they were
/// weakly typed leaves, which a traced function could not read back as Rust values).
#[test]
fn scalar_fields_are_static_values_in_the_structure() {
    let s = Scalars { lr: 0.1, step: 3 };
    assert_eq!(
        s.structure(),
        TreeDef::Struct {
            name: "Scalars",
            fields: vec![
                ("lr", TreeDef::Static(StaticValue::F32(0.1))),
                ("step", TreeDef::Static(StaticValue::I64(3))),
            ],
        }
    );
    assert!(s.flatten().0.is_empty());
    let back: Scalars = jaxrs::tree_unflatten(&s.structure(), vec![]);
    assert_eq!((back.lr, back.step), (0.1, 3));
}

#[test]
fn raw_identifiers_are_unraw_in_structure() {
    assert_eq!(
        r#type { r#in: () }.structure(),
        TreeDef::Struct {
            name: "type",
            fields: vec![("in", TreeDef::Tuple(vec![]))],
        }
    );
}

#[test]
fn flatten_has_no_leaves_for_unit_fields() {
    let model = Model {
        first: Params { w: (), b: () },
        layers: vec![(); 3],
        scale: Some(()),
    };
    let (leaves, def) = model.flatten();
    assert!(leaves.is_empty());
    assert_eq!(def.num_leaves(), 0);
}

#[test]
fn unflatten_round_trips() {
    let model = Model {
        first: Params { w: (), b: () },
        layers: vec![(); 2],
        scale: Some(()),
    };
    assert_eq!(rebuild::<Model>(&model.structure()), Ok(model));
    assert_eq!(
        rebuild::<Pair>(&Pair((), Params { w: (), b: () }).structure()),
        Ok(Pair((), Params { w: (), b: () }))
    );
}

#[test]
fn unflatten_checks_name_and_fields() {
    let renamed = TreeDef::Struct {
        name: "Other",
        fields: vec![("w", TreeDef::Tuple(vec![])), ("b", TreeDef::Tuple(vec![]))],
    };
    assert_eq!(
        rebuild::<Params>(&renamed),
        Err(TreeMismatch::new("Params { w, b }", &renamed))
    );

    let reordered = TreeDef::Struct {
        name: "Params",
        fields: vec![("b", TreeDef::Tuple(vec![])), ("w", TreeDef::Tuple(vec![]))],
    };
    assert!(rebuild::<Params>(&reordered).is_err());

    let missing = TreeDef::Struct {
        name: "Params",
        fields: vec![("w", TreeDef::Tuple(vec![]))],
    };
    assert!(rebuild::<Params>(&missing).is_err());

    let tuple = TreeDef::Tuple(vec![TreeDef::Tuple(vec![]), TreeDef::Tuple(vec![])]);
    let err = rebuild::<Params>(&tuple).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structure mismatch: expected Params { w, b }, found ((), ())"
    );

    let err = rebuild::<Empty>(&params_def()).unwrap_err();
    assert_eq!(err.expected, "Empty {}");
}

#[test]
fn unflatten_reports_mismatch_inside_fields() {
    // The outer struct fits; a field does not.
    let def = TreeDef::Struct {
        name: "Wrap",
        fields: vec![("inner", TreeDef::None)],
    };
    let err = rebuild::<Wrap<()>>(&def).unwrap_err();
    assert_eq!(err.expected, "()");
    assert_eq!(err.found, "None");
}
