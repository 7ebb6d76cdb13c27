//! Control flow over traced values: `scan`, `fori_loop`, `while_loop`, `cond`, `switch`.
//!
//! Each traces its body functions once into jaxprs and binds one primitive, so a loop of any
//! length is one XLA while loop and compiles in constant time.
//!
//! Loop-invariant inputs (weights) are simply captured by the step closure: captured arrays
//! become constants of the loop, passed in once, neither sliced nor carried.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::trace::{bind_at, At, Operand};
use crate::dtype::DType;
use crate::higher_order::control::close_over_consts;
use crate::higher_order::control::{Cond, Scan, While};
use crate::transforms::traced::{avals_of, rebuild, trace_tree};
use crate::tree::{leaf_paths, Tree, TreeDef};
use std::panic::Location;
use std::sync::Arc;

/// Options of [`scan_with`] (JAX's `length`, `reverse`, `unroll`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanOptions {
    /// The number of steps; needed when there are no `xs`, checked against them otherwise.
    pub length: Option<usize>,
    /// Scan from the last element of `xs` to the first (`ys` stay in `xs`'s order).
    pub reverse: bool,
    /// Steps per iteration of the compiled loop.
    pub unroll: usize,
}

impl Default for ScanOptions {
    fn default() -> ScanOptions {
        ScanOptions {
            length: None,
            reverse: false,
            unroll: 1,
        }
    }
}

/// Checks that `new` (structure and leaf types) is `old`, naming the first leaf that differs.
fn check_same(
    what: &str,
    old_def: &TreeDef,
    old: &[Aval],
    new_def: &TreeDef,
    new: &[Aval],
    loc: &Location<'_>,
) {
    if old_def != new_def {
        panic!(
            "{what}: the structure changed from {old_def} to {new_def} {}",
            At::line(loc)
        );
    }
    for ((path, a), b) in leaf_paths(old_def, "carry").into_iter().zip(old).zip(new) {
        if !a.same_type(b) {
            panic!("{what}: {path} changed from {a} to {b} {}", At::line(loc));
        }
    }
}

/// `jax.lax.scan`: `f(carry, x) -> (carry, y)` applied along the leading axis of `xs`,
/// returning the final carry and the stacked `ys`. Compiled as one XLA while loop whatever
/// the length; differentiable in both modes, batchable, and its reverse mode keeps per-step
/// residuals (loop-invariant ones once).
///
/// ```
/// use jaxrs::prelude::*;
///
/// // A leaky running sum; the decay is captured, not scanned (as an RNN's weights are).
/// let decay = Array::scalar(0.5f32);
/// let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]);
/// let step = |h: Array, x: Array| {
///     let h = &h * &decay + &x;
///     (h.clone(), h)
/// };
/// let (h_final, hs) = jaxrs::scan(step, Array::scalar(0.0f32), xs);
/// assert_eq!(h_final.item::<f32>(), 6.125);
/// assert_eq!(hs.to_vec::<f32>(), vec![1.0, 2.5, 4.25, 6.125]);
/// ```
#[track_caller]
pub fn scan<C: Tree, X: Tree, Y: Tree>(f: impl Fn(C, X) -> (C, Y), init: C, xs: X) -> (C, Y) {
    scan_with(f, init, xs, ScanOptions::default())
}

/// [`scan`] with options (`length` for scans without `xs`, `reverse`, `unroll`).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{scan_with, ScanOptions};
///
/// // From the last element to the first: suffix sums (`ys` stay in the order of `xs`).
/// let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let add = |total: Array, x: Array| {
///     let total = &total + &x;
///     (total.clone(), total)
/// };
/// let reverse = ScanOptions { reverse: true, ..ScanOptions::default() };
/// let (_, suffix_sums) = scan_with(add, Array::scalar(0.0f32), xs, reverse);
/// assert_eq!(suffix_sums.to_vec::<f32>(), vec![6.0, 5.0, 3.0]);
///
/// // No `xs`: `length` gives the number of steps.
/// let five = ScanOptions { length: Some(5), ..ScanOptions::default() };
/// let (n, ()) = scan_with(|n: Array, (): ()| (&n + 1.0, ()), Array::scalar(0.0f32), (), five);
/// assert_eq!(n.item::<f32>(), 5.0);
/// ```
#[track_caller]
pub fn scan_with<C: Tree, X: Tree, Y: Tree>(
    f: impl Fn(C, X) -> (C, Y),
    init: C,
    xs: X,
    options: ScanOptions,
) -> (C, Y) {
    let loc = Location::caller();
    let (carry, cdef) = init.flatten();
    let (xs, xdef) = xs.flatten();
    let mut length = options.length;
    for (path, x) in leaf_paths(&xdef, "xs").into_iter().zip(&xs) {
        let n = *x.shape().first().unwrap_or_else(|| {
            panic!(
                "scan: {path} is a scalar ({}); scanned inputs need a leading axis, {}",
                x.aval(),
                At::line(loc)
            )
        });
        match length {
            None => length = Some(n),
            Some(l) if l != n => panic!(
                "scan: {path} has {n} steps along its leading axis but the scan has {l} ({}), {}",
                x.aval(),
                At::line(loc)
            ),
            _ => {}
        }
    }
    let length = length.unwrap_or_else(|| {
        panic!(
            "scan: no xs to scan over; give ScanOptions::length, {}",
            At::line(loc)
        )
    });
    let carry_avals = avals_of(&carry);
    let mut in_avals = carry_avals.clone();
    in_avals.extend(
        xs.iter()
            .map(|x| x.aval().with_shape(x.shape()[1..].to_vec())),
    );
    let nk = carry.len();
    let (closed, out_def) = trace_tree(
        "scan",
        &TreeDef::Tuple(vec![cdef.clone(), xdef]),
        &in_avals,
        |(c, x): (C, X)| {
            let (c2, y) = f(c, x);
            let (c2_leaves, c2def) = c2.flatten();
            check_same(
                "scan: the carry returned by the step function",
                &cdef,
                &carry_avals,
                &c2def,
                &avals_of(&c2_leaves),
                loc,
            );
            (c2, y)
        },
    );
    let prim = Scan {
        num_consts: closed.consts.len(),
        body: Arc::new(close_over_consts(closed.jaxpr)),
        num_carry: nk,
        length,
        reverse: options.reverse,
        unroll: options.unroll.max(1),
    };
    let operands: Vec<Operand> = closed
        .consts
        .iter()
        .chain(&carry)
        .chain(&xs)
        .map(Operand::from)
        .collect();
    // The carry's structure is `cdef`: checked above.
    rebuild("scan", &out_def, bind_at(Arc::new(prim), &operands, loc))
}

/// `jax.lax.fori_loop` with static bounds: `body(i, carry)` for `i` in `lower..upper`.
/// Lowered to a scan, so it is differentiable in both modes.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // 1 + 2 + ... + 10; `i` is an i32 scalar array.
/// let total = jaxrs::fori_loop(1, 11, |i, total: Array| &total + i, Array::scalar(0i32));
/// assert_eq!(total.item::<i32>(), 55);
/// ```
#[track_caller]
pub fn fori_loop<C: Tree>(lower: i32, upper: i32, body: impl Fn(&Array, C) -> C, init: C) -> C {
    let steps = (upper - lower).max(0) as usize;
    let indices = Array::arange(lower as f64, upper as f64, 1.0, DType::I32);
    let options = ScanOptions {
        length: Some(steps),
        ..ScanOptions::default()
    };
    scan_with(|c: C, i: Array| (body(&i, c), ()), init, indices, options).0
}

/// `jax.lax.while_loop`: repeats `body` while `cond(&carry)` (a bool scalar) holds. Forward
/// mode works; reverse mode is an error, as in JAX (use [`scan`] or [`fori_loop`]).
///
/// ```
/// use jaxrs::prelude::*;
///
/// // Doubles 3 until it reaches 100.
/// let x = jaxrs::while_loop(|x: &Array| x.lt(100.0), |x: Array| &x * 2.0, Array::scalar(3.0f32));
/// assert_eq!(x.item::<f32>(), 192.0);
/// ```
#[track_caller]
pub fn while_loop<C: Tree>(cond: impl Fn(&C) -> Array, body: impl Fn(C) -> C, init: C) -> C {
    let loc = Location::caller();
    let (carry, cdef) = init.flatten();
    let avals = avals_of(&carry);
    let (cond_j, _) = trace_tree("while_loop", &cdef, &avals, |c: C| {
        let p = cond(&c);
        if p.rank() != 0 || p.dtype() != DType::Bool {
            panic!(
                "while_loop: the condition must return a bool scalar, not {}, {}",
                p.aval(),
                At::line(loc)
            );
        }
        p
    });
    // The body returns its result's leaves, flattened to check them against the carry; the
    // carry's structure rebuilds the loop's result.
    let (body_j, _) = trace_tree("while_loop", &cdef, &avals, |c: C| {
        let (outs, d) = body(c).flatten();
        check_same(
            "while_loop: the carry returned by the body",
            &cdef,
            &avals,
            &d,
            &avals_of(&outs),
            loc,
        );
        outs
    });
    let prim = While {
        cond_consts: cond_j.consts.len(),
        body_consts: body_j.consts.len(),
        cond: Arc::new(close_over_consts(cond_j.jaxpr)),
        body: Arc::new(close_over_consts(body_j.jaxpr)),
    };
    let operands: Vec<Operand> = cond_j
        .consts
        .iter()
        .chain(&body_j.consts)
        .chain(&carry)
        .map(Operand::from)
        .collect();
    rebuild("while_loop", &cdef, bind_at(Arc::new(prim), &operands, loc))
}

/// `jax.lax.switch`: runs `branches[index]` (the index is clamped into range) on `operands`.
/// Every branch is traced once; their outputs must agree in structure and types. Under
/// `vmap` with a batched index it becomes a select over all branches.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let double = |x: Array| &x * 2.0;
/// let square = |x: Array| &x * &x;
/// let negate = |x: Array| -x;
/// let branches: [&dyn Fn(Array) -> Array; 3] = [&double, &square, &negate];
/// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let y = jaxrs::switch(&Array::scalar(1i32), &branches, x.clone());
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 4.0]);
/// let clamped = jaxrs::switch(&Array::scalar(7i32), &branches, x);
/// assert_eq!(clamped.to_vec::<f32>(), vec![-1.0, -2.0]);
/// ```
#[track_caller]
pub fn switch<A: Tree, R: Tree>(index: &Array, branches: &[&dyn Fn(A) -> R], operands: A) -> R {
    switch_named(
        Branching::Switch,
        index,
        branches,
        operands,
        Location::caller(),
    )
}

/// Which function the user called: [`cond`] is a switch over `[false_fn, true_fn]`, but its
/// messages speak of `cond`, its predicate and its true and false branches.
#[derive(Clone, Copy)]
enum Branching {
    Switch,
    Cond,
}

impl Branching {
    fn op(self) -> &'static str {
        match self {
            Branching::Switch => "switch",
            Branching::Cond => "cond",
        }
    }

    fn branch(self, k: usize) -> String {
        match (self, k) {
            (Branching::Switch, k) => format!("branch {k}"),
            (Branching::Cond, 0) => "the false branch".into(),
            (Branching::Cond, _) => "the true branch".into(),
        }
    }
}

fn switch_named<A: Tree, R: Tree>(
    named: Branching,
    index: &Array,
    branches: &[&dyn Fn(A) -> R],
    operands: A,
    loc: &'static Location<'static>,
) -> R {
    let op = named.op();
    if branches.is_empty() {
        panic!("{op}: no branches, {}", At::line(loc));
    }
    if index.rank() != 0 || !(index.dtype().is_int() || index.dtype() == DType::Bool) {
        let what = match named {
            Branching::Switch => "the index must be an integer scalar",
            Branching::Cond => "the predicate must be a bool scalar",
        };
        panic!("{op}: {what}, not {}, {}", index.aval(), At::line(loc));
    }
    let (leaves, def) = operands.flatten();
    let avals = avals_of(&leaves);
    let mut first: Option<(TreeDef, Vec<Aval>)> = None;
    let mut traced = Vec::with_capacity(branches.len());
    for (k, branch) in branches.iter().enumerate() {
        let (closed, d) = trace_tree(op, &def, &avals, |a: A| branch(a));
        let out_avals = closed.jaxpr.out_avals();
        match &first {
            None => first = Some((d, out_avals)),
            Some((d0, a0)) => {
                let (this, other) = (named.branch(k), named.branch(0));
                if *d0 != d {
                    panic!(
                        "{op}: {this} returns {d} but {other} returns {d0}, {}",
                        At::line(loc)
                    );
                }
                for ((path, x), y) in leaf_paths(d0, "output").into_iter().zip(a0).zip(&out_avals) {
                    if !x.same_type(y) {
                        panic!(
                            "{op}: {this} returns {y} for {path} but {other} returns {x}, {}",
                            At::line(loc)
                        );
                    }
                }
            }
        }
        traced.push(closed);
    }
    let index = if index.dtype() == DType::I32 {
        index.clone()
    } else {
        index.astype(DType::I32)
    };
    let mut ops = vec![index];
    let mut counts = Vec::new();
    for c in &traced {
        ops.extend(c.consts.iter().cloned());
        counts.push(c.consts.len());
    }
    ops.extend(leaves);
    let prim = Cond {
        branches: traced
            .into_iter()
            .map(|c| Arc::new(close_over_consts(c.jaxpr)))
            .collect(),
        branch_consts: counts,
    };
    let operands: Vec<Operand> = ops.iter().map(Operand::from).collect();
    let outs = bind_at(Arc::new(prim), &operands, loc);
    rebuild(op, &first.expect("a branch").0, outs)
}

/// `jax.lax.cond`: `true_fn(operands)` if `pred` (a bool scalar) holds, else
/// `false_fn(operands)`. Both are traced; their outputs must agree in structure and types.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let x = Array::scalar(-2.0f32);
/// let abs = jaxrs::cond(&x.lt(0.0), |x: Array| -x, |x: Array| x, x.clone());
/// assert_eq!(abs.item::<f32>(), 2.0);
/// ```
#[track_caller]
pub fn cond<A: Tree, R: Tree>(
    pred: &Array,
    true_fn: impl Fn(A) -> R,
    false_fn: impl Fn(A) -> R,
    operands: A,
) -> R {
    switch_named(
        Branching::Cond,
        pred,
        &[&false_fn, &true_fn],
        operands,
        Location::caller(),
    )
}
