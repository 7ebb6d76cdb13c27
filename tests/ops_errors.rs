//! Misuse of the numeric helpers, sort/top_k, scatter updates and einsum: each message names
//! the op, the shapes involved and the user's line.

use jaxrs::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("must panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn v(n: usize) -> Array {
    Array::from_vec((0..n).map(|i| i as f32).collect(), &[n])
}

fn assert_names(msg: &str, parts: &[&str], line: u32) {
    for p in parts {
        assert!(msg.contains(p), "missing {p:?} in: {msg}");
    }
    assert!(
        msg.contains(&format!("tests/ops_errors.rs:{line}")),
        "missing the user's line {line} in: {msg}"
    );
}

#[test]
fn tril_of_a_vector() {
    let line = line!() + 1;
    let msg = message(|| drop(v(3).tril(0)));
    assert_names(&msg, &["tril", "at least 2 dimensions", "f32[3]"], line);
    let line = line!() + 1;
    let msg = message(|| drop(v(3).triu(0)));
    assert_names(&msg, &["triu", "f32[3]"], line);
}

#[test]
fn var_over_a_missing_axis() {
    let line = line!() + 1;
    let msg = message(|| drop(v(3).var(1, false, 0)));
    assert_names(&msg, &["var", "axis 1", "f32[3]"], line);
    let line = line!() + 1;
    let msg = message(|| drop(v(3).std(-2, false, 0)));
    assert_names(&msg, &["std", "axis -2", "f32[3]"], line);
}

#[test]
fn sort_along_a_missing_axis() {
    let line = line!() + 1;
    let msg = message(|| drop(v(3).sort(1)));
    assert_names(&msg, &["sort", "axis 1", "f32[3]"], line);
    let line = line!() + 1;
    let msg = message(|| drop(v(3).argsort(-2)));
    assert_names(&msg, &["argsort", "axis -2", "f32[3]"], line);
    let line = line!() + 1;
    let msg = message(|| drop(Array::scalar(1.0f32).sort(0)));
    assert_names(&msg, &["sort", "at least 1 dimension", "f32[]"], line);
}

#[test]
fn top_k_larger_than_the_axis() {
    let line = line!() + 1;
    let msg = message(|| drop(v(3).reshape([1, 3]).top_k(4)));
    assert_names(&msg, &["top_k", "k = 4", "(3)", "f32[1,3]"], line);
}

#[test]
fn indexed_update_misuse() {
    let idx = Array::from_vec(vec![0i32, 2], &[2]);
    let line = line!() + 1;
    let msg = message(|| drop(v(4).at(&idx).set(v(3))));
    assert_names(&msg, &["at.set", "[2]", "f32[3]", "f32[4]"], line);
    let line = line!() + 1;
    let msg = message(|| drop(v(4).at(v(2)).add(1.0)));
    assert_names(&msg, &["at", "integers", "f32[2]"], line);
    let line = line!() + 1;
    let msg = message(|| drop(Array::scalar(1.0f32).at(0).get()));
    assert_names(&msg, &["at", "0-d", "f32[]"], line);
}

#[test]
fn einsum_misuse() {
    let m = Array::zeros(&[2, 3], DType::F32);
    let line = line!() + 1;
    let msg = message(|| drop(jaxrs::einsum("ii->i", &[&m])));
    assert_names(
        &msg,
        &[
            "einsum",
            "\"ii->i\"",
            "label 'i'",
            "size 2",
            "3",
            "f32[2,3]",
        ],
        line,
    );
    let line = line!() + 1;
    let msg = message(|| drop(jaxrs::einsum("ij,jk->ik", &[&m, &m])));
    assert_names(
        &msg,
        &["einsum", "label 'j'", "size 3", "2", "f32[2,3]"],
        line,
    );
    let n = Array::zeros(&[3, 2], DType::F32);
    let line = line!() + 1;
    let msg = message(|| drop(jaxrs::einsum("...i,...i", &[&m, &n])));
    assert_names(&msg, &["einsum", "`...`", "size 2", "3"], line);
    let line = line!() + 1;
    let msg = message(|| drop(jaxrs::einsum("ijk->k", &[&m])));
    assert_names(&msg, &["einsum", "rank 2", "3 labels"], line);
    let line = line!() + 1;
    let msg = message(|| drop(jaxrs::einsum("ij->z", &[&m])));
    assert_names(&msg, &["einsum", "output label 'z'"], line);
    let line = line!() + 1;
    let msg = message(|| drop(jaxrs::einsum("i,i->", &[&v(2), &v(2), &v(2)])));
    assert_names(&msg, &["einsum", "names 2 operands but 3"], line);
    let line = line!() + 1;
    let msg = message(|| drop(jaxrs::einsum("i.j", &[&m])));
    assert_names(&msg, &["einsum", "'.' is not a label"], line);
}

#[test]
fn take_along_axis_with_mismatched_indices() {
    let x = Array::zeros(&[2, 3], DType::F32);
    let line = line!() + 1;
    let msg = message(|| drop(x.take_along_axis(&Array::zeros(&[3], DType::I32), 1)));
    assert_names(
        &msg,
        &["take_along_axis", "same rank", "f32[2,3]", "i32[3]"],
        line,
    );
    let line = line!() + 1;
    let msg = message(|| drop(x.take_along_axis(&Array::zeros(&[4, 1], DType::I32), 1)));
    assert_names(
        &msg,
        &["take_along_axis", "broadcast", "f32[2,3]", "i32[4,1]"],
        line,
    );
    let line = line!() + 1;
    let msg = message(|| drop(x.take_along_axis(&Array::zeros(&[2, 1], DType::F32), 1)));
    assert_names(&msg, &["take_along_axis", "integers", "f32[2,1]"], line);
    let line = line!() + 1;
    let msg = message(|| drop(x.take_along_axis(&Array::zeros(&[2, 1], DType::I32), 2)));
    assert_names(&msg, &["take_along_axis", "axis 2", "f32[2,3]"], line);
}
