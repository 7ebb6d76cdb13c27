//! Jacobians and Hessians: `jacfwd` pushes a basis of tangents forward (one `jvp`, mapped
//! with `vmap` over the basis), `jacrev` pulls a basis of cotangents back (one `vjp`, its
//! pullback mapped), as JAX's `jacfwd` and `jacrev`; `hessian` is `jacfwd(jacrev(f))`.
//!
//! The Jacobian of `f: A -> Array` is a tree shaped like `A` whose leaf for an input leaf
//! of shape `S` has shape `out_shape + S`: JAX's layout for a function with one output.

use crate::core::array::Array;
use crate::core::trace::At;
use crate::interpreters::batching::moveaxis;
use crate::transforms::grad::{jvp, vjp};
use crate::transforms::vmap::vmap;
use crate::tree::{tree_unflatten, Tree};
use crate::DType;
use std::panic::Location;

/// The `n` standard basis vectors of the space of `leaves` (of `n` elements in all), one
/// tree of leaves each, stacked: per leaf an array of shape `[n] + leaf_shape`.
fn standard_basis(shapes: &[(Vec<usize>, DType)]) -> Vec<Array> {
    let n: usize = shapes
        .iter()
        .map(|(s, _)| s.iter().product::<usize>())
        .sum();
    let mut offset = 0;
    shapes
        .iter()
        .map(|(shape, dtype)| {
            let size: usize = shape.iter().product();
            let mut values = vec![0.0; n * size];
            for j in 0..size {
                values[(offset + j) * size + j] = 1.0;
            }
            offset += size;
            let mut full = vec![n];
            full.extend(shape);
            Array::from_f64s(&values, &full, *dtype)
        })
        .collect()
}

#[track_caller]
fn check_real(what: &str, side: &str, a: &Array, loc: &Location<'_>) {
    if !a.dtype().is_float() {
        panic!(
            "{what} requires real-valued {side}s (a floating-point dtype), but got {} {}",
            a.aval(),
            At::line(loc)
        );
    }
}

/// `jax.jacfwd`: the Jacobian of `f` by forward mode, one JVP per input element (batched
/// into one with `vmap`). Best when `f` has fewer inputs than outputs.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // f(x) = x² elementwise: the Jacobian is diag(2x).
/// let jac = jaxrs::jacfwd(|x: Array| &x * &x);
/// let j = jac(Array::from_vec(vec![1.0f32, 3.0], &[2]));
/// assert_eq!(j.shape(), &[2, 2]);
/// assert_eq!(j.to_vec::<f32>(), vec![2.0, 0.0, 0.0, 6.0]);
/// ```
#[track_caller]
pub fn jacfwd<A: Tree, F: Fn(A) -> Array>(f: F) -> impl Fn(A) -> A {
    let loc = Location::caller();
    move |x: A| {
        let (leaves, def) = x.flatten();
        for leaf in &leaves {
            check_real("jacfwd", "input", leaf, loc);
        }
        let shapes: Vec<(Vec<usize>, DType)> = leaves
            .iter()
            .map(|l| (l.shape().to_vec(), l.dtype()))
            .collect();
        let basis = standard_basis(&shapes);
        let push = |t: Vec<Array>| {
            let primals: A = tree_unflatten(&def, leaves.clone());
            let tangents: A = tree_unflatten(&def, t);
            jvp(&f, &primals, &tangents).1
        };
        // [n, out...]: one pushed-forward basis vector per row.
        let columns = vmap(push, 0, 0)(basis);
        let out_rank = columns.rank() - 1;
        let out_shape = columns.shape()[1..].to_vec();
        let columns = moveaxis(&columns, 0, out_rank);
        let mut offset = 0;
        let jac: Vec<Array> = shapes
            .iter()
            .map(|(shape, _)| {
                let size: usize = shape.iter().product();
                let mut start = vec![0; out_rank + 1];
                let mut limit = columns.shape().to_vec();
                start[out_rank] = offset;
                limit[out_rank] = offset + size;
                let block = columns.slice(&start, &limit, &[]);
                offset += size;
                let mut full = out_shape.clone();
                full.extend(shape);
                block.reshape(&full)
            })
            .collect();
        tree_unflatten(&def, jac)
    }
}

/// `jax.jacrev` (`jax.jacobian`): the Jacobian of `f` by reverse mode, one VJP per output
/// element (batched into one with `vmap`). Best when `f` has fewer outputs than inputs.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // f(x) = [x0 x1, x0 + x1]: the Jacobian is [[x1, x0], [1, 1]].
/// let f = |x: Array| {
///     let (a, b) = (x.index(0), x.index(1));
///     jaxrs::numpy::stack(&[&(&a * &b), &(&a + &b)], 0)
/// };
/// let j = jaxrs::jacrev(f)(Array::from_vec(vec![2.0f32, 5.0], &[2]));
/// assert_eq!(j.to_vec::<f32>(), vec![5.0, 2.0, 1.0, 1.0]);
/// ```
#[track_caller]
pub fn jacrev<A: Tree, F: Fn(A) -> Array>(f: F) -> impl Fn(A) -> A {
    let loc = Location::caller();
    move |x: A| {
        let (leaves, def) = x.flatten();
        for leaf in &leaves {
            check_real("jacrev", "input", leaf, loc);
        }
        let (y, pullback) = vjp(&f, &x);
        check_real("jacrev", "output", &y, loc);
        let out_shape = y.shape().to_vec();
        let basis = standard_basis(&[(out_shape.clone(), y.dtype())]).remove(0);
        // A tree of [m, leaf...]: one pulled-back basis vector per row.
        let rows: A = vmap(|ct: Array| pullback.call(&ct), 0, 0)(basis);
        let (rows, _) = rows.flatten();
        let jac: Vec<Array> = rows
            .into_iter()
            .map(|r| {
                let mut full = out_shape.clone();
                full.extend(&r.shape()[1..]);
                r.reshape(&full)
            })
            .collect();
        tree_unflatten(&def, jac)
    }
}

/// `jax.jacobian`, an alias of [`jacrev`].
#[track_caller]
pub fn jacobian<A: Tree, F: Fn(A) -> Array>(f: F) -> impl Fn(A) -> A {
    jacrev(f)
}

/// `jax.hessian`: the matrix of second derivatives of `f`, `jacfwd(jacrev(f))`, of shape
/// `out_shape + in_shape + in_shape` (for a scalar `f`, the usual square Hessian). Takes one
/// array: a tree's Hessian is a tree of trees, which Rust's types do not spell.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // f(x) = x0² x1: the Hessian is [[2 x1, 2 x0], [2 x0, 0]].
/// let f = |x: Array| x.index(0).powi(2) * x.index(1);
/// let h = jaxrs::hessian(f)(Array::from_vec(vec![1.0f64, 3.0], &[2]));
/// assert_eq!(h.to_vec::<f64>(), vec![6.0, 2.0, 2.0, 0.0]);
/// ```
#[track_caller]
pub fn hessian<F: Fn(Array) -> Array>(f: F) -> impl Fn(Array) -> Array {
    let inner = jacrev(f);
    jacfwd(inner)
}
