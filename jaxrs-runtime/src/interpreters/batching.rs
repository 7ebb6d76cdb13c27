//! Batching (vmap) as an interpreter over a jaxpr.
//!
//! [`batch_jaxpr`] walks a jaxpr traced for one example and binds, for each equation, the
//! primitive applied to the whole batch: every value carries a *batch dim* (the axis along
//! which its examples are stacked) or none (the value is the same for every example, like a
//! captured constant). An equation whose operands are all unbatched is bound as is; otherwise
//! its primitive's batching rule ([`crate::core::primitive::Primitive::batch`], written beside the
//! primitive) binds the batched computation. Binding goes into the current trace, or runs
//! eagerly when none is open, so vmap composes with jit (inlined into its trace), with itself
//! (an outer vmap traces the inner one's batched program) and with autodiff.
//!
//! Rules move batch dims only where a primitive needs them elsewhere: elementwise operations
//! align their operands on one batch dim (no transpose when they already agree), reductions
//! shift their axes, `dot_general` folds the batch dim into its batch or free dimensions.
//! The helpers they share are here.

use crate::core::array::Array;
use crate::core::ir::{Atom, Jaxpr, LitValue, Literal};
use crate::core::primitive::Primitive;
use crate::core::trace::{bind1, bind_at, with_location, Operand};
use crate::dtype::DType;
use crate::ops::where_;
use crate::ops::Arg;
use crate::prims::{BroadcastInDim, DynamicSlice, IndexAdd, Reshape, Select, Take, Transpose};
use std::borrow::Cow;
use std::collections::HashMap;

/// Runs `jaxpr` (traced for one example) on batched arguments: `args[i]` holds its examples
/// stacked along `in_dims[i]` (`None`: the same value for every example), `axis_size` of
/// them. The constants are unbatched. Returns the outputs and their batch dims.
pub fn batch_jaxpr(
    jaxpr: &Jaxpr,
    consts: &[Array],
    args: &[Array],
    in_dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let mut dims = vec![None; consts.len()];
    dims.extend_from_slice(in_dims);
    let inputs: Vec<Array> = consts.iter().chain(args).cloned().collect();
    batch_eval(jaxpr, &inputs, &dims, axis_size)
}

/// [`batch_jaxpr`] with a batch dim for every input, constants (first) included.
pub fn batch_eval(
    jaxpr: &Jaxpr,
    inputs: &[Array],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    assert_eq!(
        inputs.len(),
        jaxpr.constvars.len() + jaxpr.invars.len(),
        "batch_jaxpr: argument count"
    );
    assert_eq!(
        inputs.len(),
        dims.len(),
        "batch_jaxpr: one dim per argument"
    );
    let mut env: Vec<Option<(Array, Option<usize>)>> = vec![None; jaxpr.avals.len()];
    for ((v, a), d) in jaxpr
        .constvars
        .iter()
        .chain(&jaxpr.invars)
        .zip(inputs)
        .zip(dims)
    {
        env[v.0 as usize] = Some((a.clone(), *d));
    }
    let read =
        |env: &[Option<(Array, Option<usize>)>], a: &Atom| -> (Arg<'static>, Option<usize>) {
            match a {
                Atom::Var(v) => {
                    let (x, d) = env[v.0 as usize]
                        .as_ref()
                        .unwrap_or_else(|| panic!("batch_jaxpr: v{} unbound", v.0));
                    (Arg::Array(Cow::Owned(x.clone())), *d)
                }
                Atom::Lit(l) => (Arg::Scalar(*l), None),
            }
        };
    for e in &jaxpr.eqns {
        let (args, in_dims): (Vec<Arg>, Vec<Option<usize>>) =
            e.inputs.iter().map(|a| read(&env, a)).unzip();
        let (outs, out_dims) = if in_dims.iter().all(Option::is_none) {
            let ops: Vec<Operand> = args.iter().map(Arg::operand).collect();
            let outs = bind_at(e.prim.clone(), &ops, e.loc);
            let n = outs.len();
            (outs, vec![None; n])
        } else {
            with_location(e.loc, || e.prim.batch(&args, &in_dims, axis_size))
        };
        assert_eq!(
            (outs.len(), out_dims.len()),
            (e.outputs.len(), e.outputs.len()),
            "the batching rule of {} gave the wrong number of outputs",
            e.prim.name()
        );
        for ((v, o), d) in e.outputs.iter().zip(outs).zip(out_dims) {
            check_rule_output(e.prim.name(), jaxpr.aval(*v), &o, d, axis_size);
            env[v.0 as usize] = Some((o, d));
        }
    }
    jaxpr
        .outvars
        .iter()
        .map(|a| match a {
            Atom::Var(v) => env[v.0 as usize].clone().expect("output defined"),
            Atom::Lit(l) => (Array::from_literal(*l), None),
        })
        .unzip()
}

/// Stops when a rule's output is not the per-example output batched along `dim`: a bug in
/// the rule, caught at the equation rather than as a wrong shape later.
fn check_rule_output(
    prim: &str,
    want: &crate::aval::Aval,
    got: &Array,
    dim: Option<usize>,
    axis_size: usize,
) {
    let mut shape = got.shape().to_vec();
    let ok_dim = match dim {
        None => true,
        Some(d) => d < shape.len() && shape.remove(d) == axis_size,
    };
    if !ok_dim || shape != want.shape || got.dtype() != want.dtype {
        panic!(
            "vmap: the batching rule of {prim} gave {} batched along {dim:?} for the \
             per-example {want} with {axis_size} examples (a bug in jaxrs)",
            got.aval()
        );
    }
}

/// Where per-example axis `axis` lies in an operand batched along `bdim`.
pub fn shift_axis(axis: usize, bdim: usize) -> usize {
    if axis >= bdim {
        axis + 1
    } else {
        axis
    }
}

/// The array of an operand; a literal becomes a traced (or eager) 0-d array.
pub fn arg_array<'a>(a: &'a Arg) -> Cow<'a, Array> {
    match a {
        Arg::Array(a) => Cow::Borrowed(&**a),
        Arg::Scalar(l) => Cow::Owned(bind1(
            BroadcastInDim {
                shape: vec![],
                dims: vec![],
            },
            &[Operand::Lit(*l)],
        )),
    }
}

/// `x` with axis `from` moved to position `to`, the others keeping their order.
pub fn moveaxis(x: &Array, from: usize, to: usize) -> Array {
    if from == to {
        return x.clone();
    }
    let mut perm: Vec<usize> = (0..x.rank()).filter(|&i| i != from).collect();
    perm.insert(to, from);
    bind1(Transpose { perm }, &[Operand::Array(x)])
}

/// The operand batched along `to`: its batch dim moved there, or, when it is unbatched, the
/// value repeated `axis_size` times along a new axis `to`.
pub fn move_bdim(x: &Arg, dim: Option<usize>, to: usize, axis_size: usize) -> Array {
    match dim {
        Some(d) => moveaxis(&arg_array(x), d, to),
        None => {
            let aval = x.aval();
            let mut shape = aval.shape.clone();
            shape.insert(to, axis_size);
            let dims = (0..aval.rank()).map(|i| shift_axis(i, to)).collect();
            bind1(BroadcastInDim { shape, dims }, &[x.operand()])
        }
    }
}

/// The batch dim most operands already have (the first on ties): aligning on it moves the
/// fewest.
pub fn common_bdim(dims: &[Option<usize>]) -> usize {
    let mut counts: HashMap<usize, usize> = HashMap::new();
    let mut best: Option<(usize, usize)> = None;
    for d in dims.iter().flatten() {
        let c = counts.entry(*d).or_default();
        *c += 1;
        if best.is_none_or(|(_, n)| *c > n) {
            best = Some((*d, *c));
        }
    }
    best.map(|(d, _)| d)
        .expect("common_bdim: at least one operand is batched")
}

/// Operands of one per-example shape (elementwise operations) all batched along one dim.
pub fn align(args: &[Arg], dims: &[Option<usize>], axis_size: usize) -> (Vec<Array>, usize) {
    let to = common_bdim(dims);
    let xs = args
        .iter()
        .zip(dims)
        .map(|(a, d)| move_bdim(a, *d, to, axis_size))
        .collect();
    (xs, to)
}

/// The rule of an elementwise primitive: align the operands, apply it once.
pub fn elementwise(
    prim: impl Primitive,
    args: &[Arg],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let (xs, d) = align(args, dims, axis_size);
    let ops: Vec<Operand> = xs.iter().map(Operand::Array).collect();
    (vec![bind1(prim, &ops)], vec![Some(d)])
}

/// The rule of a one-operand primitive that works on each element (or each example) alike:
/// apply it to the batch, the batch dim stays.
pub fn unary(
    prim: impl Primitive,
    args: &[Arg],
    dims: &[Option<usize>],
) -> (Vec<Array>, Vec<Option<usize>>) {
    (vec![bind1(prim, &[args[0].operand()])], vec![dims[0]])
}

/// Binds `prim` on operands with batch dims: as is when none is batched, else through its
/// batching rule. Lets a rule reuse other primitives' rules.
pub fn bind_batched(
    prim: impl Primitive,
    args: &[Arg],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    if dims.iter().all(Option::is_none) {
        let ops: Vec<Operand> = args.iter().map(Arg::operand).collect();
        let outs = crate::core::trace::bind(std::sync::Arc::new(prim), &ops);
        let n = outs.len();
        (outs, vec![None; n])
    } else {
        prim.batch(args, dims, axis_size)
    }
}

fn arr(x: &Array) -> Arg<'_> {
    Arg::Array(Cow::Borrowed(x))
}

/// An integer literal of `dtype`.
pub fn int_literal(value: i64, dtype: DType) -> Literal {
    Literal {
        value: LitValue::Int(value),
        dtype,
        weak: false,
    }
}

/// The integer dtype indices are computed in: wide enough for `bound` and for every value
/// of `dtype`.
fn index_dtype(dtype: DType, bound: usize) -> DType {
    let narrow = matches!(dtype, DType::I8 | DType::U8 | DType::I32);
    if narrow && bound <= i32::MAX as usize {
        DType::I32
    } else {
        DType::I64
    }
}

/// Indices into an axis of size `n` made what XLA's gather uses: a negative index counts
/// from the end, then the index is clamped into `0..=hi`.
fn wrap_clamp(i: &Array, n: usize, hi: usize) -> Array {
    let wrapped = where_(i.lt(0), i + n as i64, i);
    wrapped.maximum(0).minimum(hi as i64)
}

/// Per-example indices `idx` (batched along `idim`) into an axis of size `n`, made indices
/// into the `axis_size * n` rows of the batch flattened example-major: wrapped and clamped
/// per example (as `take` does), then offset by `example * n`. Shape: `[axis_size, K...]`.
fn flat_indices(idx: &Array, idim: usize, n: usize, axis_size: usize) -> Array {
    let wide = index_dtype(idx.dtype(), axis_size * n.max(1));
    let i = moveaxis(idx, idim, 0).astype(wide);
    let i = wrap_clamp(&i, n, n.saturating_sub(1));
    let example = Array::iota(wide, i.shape(), 0);
    i + example * n as i64
}

/// `take(x, idx, axis)` for each example: `x` batched along `xd` (or not), `idx` along `id`.
/// Batched indices into a batched operand become one gather from the batch flattened
/// example-major; otherwise the batch rides along as an axis of the operand or the indices.
pub fn take_batched(
    x: &Array,
    xd: Option<usize>,
    idx: &Array,
    id: Option<usize>,
    axis: usize,
    axis_size: usize,
) -> (Array, Option<usize>) {
    let k = idx.rank() - id.is_some() as usize;
    let take = |x: &Array, idx: &Array, axis: usize| {
        bind1(Take { axis }, &[Operand::Array(x), Operand::Array(idx)])
    };
    match (xd, id) {
        (None, None) => (take(x, idx, axis), None),
        (None, Some(i)) => (take(x, idx, axis), Some(axis + i)),
        (Some(b), None) => {
            let a = shift_axis(axis, b);
            // The batch dim is before the taken axis, or after it and the index dims.
            (take(x, idx, a), Some(if b < a { b } else { b + k - 1 }))
        }
        (Some(b), Some(i)) => {
            // [B, n, rest..] flattened to [B*n, rest..]: row `e * n + j` is x[e][j].
            let x1 = moveaxis(&moveaxis(x, b, 0), axis + 1, 1);
            let n = x1.shape()[1];
            let mut flat_shape = vec![axis_size * n];
            flat_shape.extend_from_slice(&x1.shape()[2..]);
            let xf = bind1(Reshape { shape: flat_shape }, &[Operand::Array(&x1)]);
            let y = take(&xf, &flat_indices(idx, i, n, axis_size), 0);
            // [B, K.., rest..] -> [B, rest[..axis], K.., rest[axis..]].
            let mut perm = vec![0];
            perm.extend(1 + k..1 + k + axis);
            perm.extend(1..1 + k);
            perm.extend(1 + k + axis..y.rank());
            (y.transpose(perm), Some(0))
        }
    }
}

/// `index_add(x, idx, u, axis)` for each example, each operand batched or not (at least one
/// is). Batched indices scatter into the batch flattened example-major, so repeated indices
/// still accumulate within their example only.
#[allow(clippy::too_many_arguments)]
pub fn index_add_batched(
    x: &Arg,
    xd: Option<usize>,
    idx: &Arg,
    id: Option<usize>,
    u: &Arg,
    ud: Option<usize>,
    axis: usize,
    axis_size: usize,
) -> (Array, Option<usize>) {
    let idx_arr = arg_array(idx);
    match id {
        None => {
            let b = xd.unwrap_or(0);
            let xb = move_bdim(x, xd, b, axis_size);
            let a = shift_axis(axis, b);
            let k = idx_arr.rank();
            let ub = move_bdim(u, ud, if b < a { b } else { b + k - 1 }, axis_size);
            let y = bind1(
                IndexAdd { axis: a },
                &[
                    Operand::Array(&xb),
                    Operand::Array(&idx_arr),
                    Operand::Array(&ub),
                ],
            );
            (y, Some(b))
        }
        Some(i) => {
            let k = idx_arr.rank() - 1;
            let x1 = moveaxis(&move_bdim(x, xd, 0, axis_size), axis + 1, 1);
            let n = x1.shape()[1];
            let mut flat_shape = vec![axis_size * n];
            flat_shape.extend_from_slice(&x1.shape()[2..]);
            let xf = bind1(Reshape { shape: flat_shape }, &[Operand::Array(&x1)]);
            // u: [B, rest[..axis], K.., rest[axis..]] -> [B, K.., rest..].
            let u0 = move_bdim(u, ud, 0, axis_size);
            let mut perm = vec![0];
            perm.extend(1 + axis..1 + axis + k);
            perm.extend(1..1 + axis);
            perm.extend(1 + axis + k..u0.rank());
            let u1 = u0.transpose(perm);
            let flat = flat_indices(&idx_arr, i, n, axis_size);
            let y = bind1(
                IndexAdd { axis: 0 },
                &[
                    Operand::Array(&xf),
                    Operand::Array(&flat),
                    Operand::Array(&u1),
                ],
            );
            let y = bind1(
                Reshape {
                    shape: x1.shape().to_vec(),
                },
                &[Operand::Array(&y)],
            );
            (moveaxis(&y, 1, axis + 1), Some(0))
        }
    }
}

/// A start index of a dynamic slice per example, as a `[axis_size]` vector (batched) or a
/// 0-d array (unbatched), in a dtype wide enough for `n`, clamped as XLA clamps starts so
/// that a slice of `size` stays inside an axis of size `n`.
fn clamped_start(start: &Arg, dim: Option<usize>, n: usize, size: usize) -> Array {
    let s = match dim {
        Some(d) => moveaxis(&arg_array(start), d, 0),
        None => arg_array(start).into_owned(),
    };
    let s = s.astype(index_dtype(s.dtype(), n));
    wrap_clamp(&s, n, n - size)
}

/// `dynamic_slice` with start indices that differ between examples: the unbatched starts
/// slice first (one `dynamic_slice`), then each axis with batched starts gathers its
/// window, `start + iota(size)` per example.
pub fn dynamic_slice_batched(
    x: &Arg,
    xd: Option<usize>,
    starts: &[Arg],
    sd: &[Option<usize>],
    sizes: &[usize],
    axis_size: usize,
) -> (Array, Option<usize>) {
    let x = arg_array(x).into_owned();
    let mut per_example = x.shape().to_vec();
    if let Some(b) = xd {
        per_example.remove(b);
    }
    let (mut cur, mut cd) = (x, xd);
    let start_dtype = starts[0].aval().dtype;
    let static_part = (0..sizes.len()).any(|k| sd[k].is_none() && sizes[k] < per_example[k]);
    if static_part {
        let mut ops: Vec<Operand> = Vec::new();
        let mut slice_sizes = Vec::new();
        for k in 0..sizes.len() {
            if sd[k].is_none() {
                ops.push(starts[k].operand());
                slice_sizes.push(sizes[k]);
            } else {
                ops.push(Operand::Lit(int_literal(0, starts[k].aval().dtype)));
                slice_sizes.push(per_example[k]);
            }
        }
        if let Some(b) = cd {
            ops.insert(b, Operand::Lit(int_literal(0, start_dtype)));
            slice_sizes.insert(b, axis_size);
        }
        ops.insert(0, Operand::Array(&cur));
        let sliced = bind1(DynamicSlice { sizes: slice_sizes }, &ops);
        cur = sliced;
    }
    for k in 0..sizes.len() {
        let (Some(d), n, size) = (sd[k], per_example[k], sizes[k]) else {
            continue;
        };
        if size == n {
            continue; // the start clamps to 0: nothing to gather
        }
        let s = clamped_start(&starts[k], Some(d), n, size);
        let idx = s.reshape([axis_size, 1]) + Array::iota(s.dtype(), &[1, size], 1);
        (cur, cd) = take_batched(&cur, cd, &idx, Some(0), k, axis_size);
    }
    (cur, cd)
}

/// `dynamic_update_slice` with start indices that differ between examples, as a select:
/// along each axis the update is gathered into place (`update[j - start]`), and a mask
/// (`start <= j < start + size` on every axis) picks it over the operand.
#[allow(clippy::too_many_arguments)]
pub fn dynamic_update_slice_batched(
    x: &Arg,
    xd: Option<usize>,
    u: &Arg,
    ud: Option<usize>,
    starts: &[Arg],
    sd: &[Option<usize>],
    axis_size: usize,
) -> (Array, Option<usize>) {
    let per = |a: &Arg, d: Option<usize>| {
        let mut s = a.aval().shape;
        if let Some(d) = d {
            s.remove(d);
        }
        s
    };
    let (per_x, per_u) = (per(x, xd), per(u, ud));
    let (mut cur, mut cd) = (arg_array(u).into_owned(), ud);
    let mut mask: Option<(Array, Option<usize>)> = None;
    for k in 0..per_x.len() {
        let (n, size) = (per_x[k], per_u[k]);
        if size == n {
            continue; // the start clamps to 0: the update covers the axis
        }
        let s = clamped_start(&starts[k], sd[k], n, size);
        let (idx, m, md) = match sd[k] {
            Some(_) => {
                let s = s.reshape([axis_size, 1]);
                let j = Array::iota(s.dtype(), &[axis_size, n], 1);
                let idx = (&j - &s).maximum(0).minimum(size as i64 - 1);
                let inside = j.ge(&s).logical_and(j.lt(&s + size as i64));
                let mut shape = vec![axis_size];
                shape.extend(&per_x);
                let m = bind1(
                    BroadcastInDim {
                        shape,
                        dims: vec![0, k + 1],
                    },
                    &[Operand::Array(&inside)],
                );
                (idx, m, Some(0))
            }
            None => {
                let j = Array::iota(s.dtype(), &[n], 0);
                let idx = (&j - &s).maximum(0).minimum(size as i64 - 1);
                let inside = j.ge(&s).logical_and(j.lt(&s + size as i64));
                let m = bind1(
                    BroadcastInDim {
                        shape: per_x.clone(),
                        dims: vec![k],
                    },
                    &[Operand::Array(&inside)],
                );
                (idx, m, None)
            }
        };
        (cur, cd) = take_batched(&cur, cd, &idx, md, k, axis_size);
        mask = Some(match mask {
            None => (m, md),
            Some((prev, pd)) => {
                let (mut o, mut od) = bind_batched(
                    crate::prims::Binary(crate::prims::BinaryOp::And),
                    &[arr(&prev), arr(&m)],
                    &[pd, md],
                    axis_size,
                );
                (o.remove(0), od.remove(0))
            }
        });
    }
    let Some((mask, md)) = mask else {
        return (cur, cd);
    };
    let (mut o, mut od) = bind_batched(
        Select,
        &[arr(&mask), arr(&cur), x.clone_arg()],
        &[md, cd, xd],
        axis_size,
    );
    (o.remove(0), od.remove(0))
}

impl Arg<'_> {
    /// A borrowed copy of this operand.
    pub(crate) fn clone_arg(&self) -> Arg<'_> {
        match self {
            Arg::Array(a) => Arg::Array(Cow::Borrowed(&**a)),
            Arg::Scalar(l) => Arg::Scalar(*l),
        }
    }
}

/// A `custom_vjp` call on a batch: a new call whose forward program is the batched forward
/// program (every output and residual batched along 0) and whose backward function maps the
/// user's backward function over the examples; the cotangent of an unbatched argument is
/// the sum of its examples' cotangents.
pub fn custom_vjp_batched(
    call: &crate::higher_order::custom_vjp::CustomVjpCall,
    args: &[Arg],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let ops: Vec<Array> = args
        .iter()
        .zip(dims)
        .map(|(a, d)| match d {
            Some(d) => moveaxis(&arg_array(a), *d, 0),
            None => arg_array(a).into_owned(),
        })
        .collect();
    let in_dims: Vec<Option<usize>> = dims.iter().map(|d| d.map(|_| 0)).collect();
    let avals: Vec<crate::aval::Aval> = ops.iter().map(|o| o.aval().clone()).collect();
    let fwd = call.fwd.clone();
    let closed = crate::core::trace::trace_to_jaxpr(&avals, |tracers| {
        let (outs, out_dims) = batch_eval(&fwd, &tracers, &in_dims, axis_size);
        outs.iter()
            .zip(out_dims)
            .map(|(o, d)| move_bdim(&arr(o), d, 0, axis_size))
            .collect()
    });
    let (nc, num_outputs) = (call.num_consts, call.num_outputs);
    let per_example_outs = call.fwd.out_avals();
    let mut bwd_avals = per_example_outs[num_outputs..].to_vec();
    bwd_avals.extend_from_slice(&per_example_outs[..num_outputs]);
    let arg_dims = in_dims[nc..].to_vec();
    let bwd = call.bwd.clone();
    let batched_bwd: crate::higher_order::custom_vjp::FlatBackward =
        std::sync::Arc::new(move |residuals: Vec<Array>, cts: Vec<Array>| {
            let num_res = residuals.len();
            let inner = crate::core::trace::trace_to_jaxpr(&bwd_avals, |mut tracers| {
                let cts = tracers.split_off(num_res);
                bwd(tracers, cts)
            });
            let inputs: Vec<Array> = residuals.into_iter().chain(cts).collect();
            let dims = vec![Some(0); inputs.len()];
            let (grads, grad_dims) =
                batch_jaxpr(&inner.jaxpr, &inner.consts, &inputs, &dims, axis_size);
            grads
                .iter()
                .zip(grad_dims)
                .zip(&arg_dims)
                .map(|((g, d), arg_dim)| match (arg_dim, d) {
                    (Some(_), d) => move_bdim(&arr(g), d, 0, axis_size),
                    (None, Some(d)) => g.sum(d as i64, false),
                    (None, None) => g * axis_size as f64,
                })
                .collect()
        });
    let operands: Vec<Operand> = closed
        .consts
        .iter()
        .chain(&ops)
        .map(Operand::Array)
        .collect();
    let prim = crate::higher_order::custom_vjp::CustomVjpCall {
        name: call.name,
        fwd: std::sync::Arc::new(closed.jaxpr),
        num_consts: closed.consts.len() + nc,
        num_outputs,
        bwd: batched_bwd,
    };
    let outs = crate::core::trace::bind(std::sync::Arc::new(prim), &operands);
    let n = outs.len();
    (outs, vec![Some(0); n])
}

/// Which outputs of `jaxpr` may be batched when the inputs flagged in `batched` are (its
/// constants first, then its inputs): an equation's outputs are batched when any of its
/// inputs is. Never wrong the other way: an output marked unbatched is unbatched.
pub fn batched_outputs(jaxpr: &Jaxpr, batched: &[bool]) -> Vec<bool> {
    let mut marked = vec![false; jaxpr.avals.len()];
    for (v, &b) in jaxpr.constvars.iter().chain(&jaxpr.invars).zip(batched) {
        marked[v.0 as usize] = b;
    }
    for e in &jaxpr.eqns {
        let b = e
            .inputs
            .iter()
            .any(|a| matches!(a, Atom::Var(v) if marked[v.0 as usize]));
        for v in &e.outputs {
            marked[v.0 as usize] = b;
        }
    }
    jaxpr
        .outvars
        .iter()
        .map(|a| matches!(a, Atom::Var(v) if marked[v.0 as usize]))
        .collect()
}

/// The avals of a batched program's inputs: `axis_size` inserted at 0 where batched.
fn batched_avals(
    avals: &[crate::aval::Aval],
    batched: &[bool],
    axis_size: usize,
) -> Vec<crate::aval::Aval> {
    avals
        .iter()
        .zip(batched)
        .map(|(a, &b)| {
            let mut a = a.clone();
            if b {
                a.shape.insert(0, axis_size);
            }
            a
        })
        .collect()
}

/// The operands batched along 0 where `batched` says (unbatched ones materialised), the
/// others as they are.
fn operands_at_0(
    args: &[Arg],
    dims: &[Option<usize>],
    batched: &[bool],
    axis_size: usize,
) -> Vec<Array> {
    args.iter()
        .zip(dims)
        .zip(batched)
        .map(|((a, d), &b)| {
            if b {
                move_bdim(a, *d, 0, axis_size)
            } else {
                arg_array(a).into_owned()
            }
        })
        .collect()
}

/// Runs `jaxpr` batched (inputs along 0 where `batched`) and returns its outputs, batched
/// along 0 where `out_batched` says (materialised if the rule left one unbatched).
fn eval_at_0(
    jaxpr: &Jaxpr,
    inputs: &[Array],
    batched: &[bool],
    out_batched: &[bool],
    axis_size: usize,
) -> Vec<Array> {
    let dims: Vec<Option<usize>> = batched.iter().map(|&b| b.then_some(0)).collect();
    let (outs, out_dims) = batch_eval(jaxpr, inputs, &dims, axis_size);
    outs.iter()
        .zip(out_dims)
        .zip(out_batched)
        .map(|((o, d), &b)| {
            if b {
                move_bdim(&arr(o), d, 0, axis_size)
            } else {
                assert!(d.is_none(), "vmap: an output thought unbatched is batched");
                o.clone()
            }
        })
        .collect()
}

/// `scan` on a batch: one scan whose body is the batched body. A carry is batched if it is
/// on entry or if the body makes it so (found by iterating to a fixed point); batched xs
/// keep their scanned axis first and the batch second, so each step's slice is batched
/// along 0, as are the consts and carries; ys come out stacked with the batch along 1.
pub fn scan_batched(
    s: &crate::higher_order::control::Scan,
    args: &[Arg],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let (nc, nk) = (s.num_consts, s.num_carry);
    let nx = args.len() - nc - nk;
    let ny = s.body.outvars.len() - nk;
    let given: Vec<bool> = dims.iter().map(Option::is_some).collect();
    let mut batched = given.clone();
    loop {
        let out = batched_outputs(&s.body, &batched);
        let mut changed = false;
        for k in 0..nk {
            if out[k] && !batched[nc + k] {
                batched[nc + k] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let out_b = batched_outputs(&s.body, &batched);
    let mut ops = operands_at_0(
        &args[..nc + nk],
        &dims[..nc + nk],
        &batched[..nc + nk],
        axis_size,
    );
    for j in nc + nk..nc + nk + nx {
        ops.push(match dims[j] {
            Some(d) => moveaxis(&arg_array(&args[j]), d, 1),
            None => arg_array(&args[j]).into_owned(),
        });
    }
    let body = s.body.clone();
    let mut out_batched = batched[nc..nc + nk].to_vec();
    out_batched.extend_from_slice(&out_b[nk..]);
    let avals = batched_avals(&body.in_avals(), &batched, axis_size);
    let closed = crate::core::trace::trace_to_jaxpr(&avals, |vals| {
        eval_at_0(&body, &vals, &batched, &out_batched, axis_size)
    });
    let prim = crate::higher_order::control::Scan {
        body: std::sync::Arc::new(crate::higher_order::control::close_over_consts(
            closed.jaxpr,
        )),
        num_consts: closed.consts.len() + nc,
        num_carry: nk,
        length: s.length,
        reverse: s.reverse,
        unroll: s.unroll,
    };
    let operands: Vec<Operand> = closed
        .consts
        .iter()
        .chain(&ops)
        .map(Operand::Array)
        .collect();
    let outs = crate::core::trace::bind(std::sync::Arc::new(prim), &operands);
    let mut out_dims: Vec<Option<usize>> =
        out_batched[..nk].iter().map(|&b| b.then_some(0)).collect();
    out_dims.extend(out_batched[nk..nk + ny].iter().map(|&b| b.then_some(1)));
    (outs, out_dims)
}

/// `while_loop` on a batch. A carry is batched if it is on entry or if the body makes it so.
/// When the predicate is the same for every example, one loop runs the batched body. When it
/// differs, the loop runs while any example's predicate holds, and each step keeps the old
/// carry of the examples whose predicate no longer does (every carry is then batched).
pub fn while_batched(
    w: &crate::higher_order::control::While,
    args: &[Arg],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let (cc, bc) = (w.cond_consts, w.body_consts);
    let nk = args.len() - cc - bc;
    let mut batched: Vec<bool> = dims.iter().map(Option::is_some).collect();
    let cond_inputs =
        |b: &[bool]| -> Vec<bool> { b[..cc].iter().chain(&b[cc + bc..]).copied().collect() };
    loop {
        let out = batched_outputs(&w.body, &batched[cc..]);
        let mut changed = false;
        for k in 0..nk {
            if out[k] && !batched[cc + bc + k] {
                batched[cc + bc + k] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let pred_batched = batched_outputs(&w.cond, &cond_inputs(&batched))[0];
    if pred_batched {
        for b in &mut batched[cc + bc..] {
            *b = true;
        }
    }
    let ops = operands_at_0(args, dims, &batched, axis_size);
    let carry_b = batched[cc + bc..].to_vec();
    let (cond, body) = (w.cond.clone(), w.body.clone());

    // The condition: any example still running.
    let cond_b = cond_inputs(&batched);
    let cond_avals = batched_avals(&cond.in_avals(), &cond_b, axis_size);
    let jcond = crate::core::trace::trace_to_jaxpr(&cond_avals, |vals| {
        let pred = eval_at_0(&cond, &vals, &cond_b, &[pred_batched], axis_size).remove(0);
        if pred_batched {
            let any = crate::prims::Reduce {
                op: crate::prims::ReduceOp::Or,
                axes: vec![0],
            };
            vec![bind1(any, &[Operand::Array(&pred)])]
        } else {
            vec![pred]
        }
    });

    // The body: (body consts, [cond consts], carries) -> carries.
    let body_b = batched[cc..].to_vec();
    let mut body_avals = batched_avals(&body.in_avals(), &body_b, axis_size);
    if pred_batched {
        let cavals = batched_avals(&cond.in_avals()[..cc], &batched[..cc], axis_size);
        body_avals.splice(bc..bc, cavals);
    }
    let jbody = crate::core::trace::trace_to_jaxpr(&body_avals, |vals| {
        let (body_consts, rest) = vals.split_at(bc);
        let (cond_consts, carry) = rest.split_at(if pred_batched { cc } else { 0 });
        let inputs: Vec<Array> = body_consts.iter().chain(carry).cloned().collect();
        let new = eval_at_0(&body, &inputs, &body_b, &carry_b, axis_size);
        if !pred_batched {
            return new;
        }
        let inputs: Vec<Array> = cond_consts.iter().chain(carry).cloned().collect();
        let running = eval_at_0(&cond, &inputs, &cond_b, &[true], axis_size).remove(0);
        new.iter()
            .zip(carry)
            .map(|(n, old)| {
                let mask = bind1(
                    BroadcastInDim {
                        shape: n.shape().to_vec(),
                        dims: vec![0],
                    },
                    &[Operand::Array(&running)],
                );
                bind1(
                    Select,
                    &[
                        Operand::Array(&mask),
                        Operand::Array(n),
                        Operand::Array(old),
                    ],
                )
            })
            .collect()
    });

    let mut operands: Vec<&Array> = jcond.consts.iter().chain(&ops[..cc]).collect();
    operands.extend(jbody.consts.iter().chain(&ops[cc..cc + bc]));
    if pred_batched {
        operands.extend(&ops[..cc]);
    }
    operands.extend(&ops[cc + bc..]);
    let prim = crate::higher_order::control::While {
        cond: std::sync::Arc::new(crate::higher_order::control::close_over_consts(jcond.jaxpr)),
        body: std::sync::Arc::new(crate::higher_order::control::close_over_consts(jbody.jaxpr)),
        cond_consts: jcond.consts.len() + cc,
        body_consts: jbody.consts.len() + bc + if pred_batched { cc } else { 0 },
    };
    let operands: Vec<Operand> = operands.into_iter().map(Operand::Array).collect();
    let outs = crate::core::trace::bind(std::sync::Arc::new(prim), &operands);
    let out_dims = carry_b.iter().map(|&b| b.then_some(0)).collect();
    (outs, out_dims)
}

/// `cond`/`switch` on a batch. With one branch index for every example, one `cond` of the
/// batched branches (an output batched in any branch is batched in all). With an index per
/// example, every branch runs on the batch and each example selects its branch's outputs.
pub fn cond_batched(
    c: &crate::higher_order::control::Cond,
    args: &[Arg],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let nb = c.branches.len();
    let total: usize = c.branch_consts.iter().sum();
    let shared = 1 + total..args.len();
    // Each branch's operands (its consts, then the shared ones) and their dims.
    let mut start = 1;
    let inputs: Vec<Vec<usize>> = c
        .branch_consts
        .iter()
        .map(|&n| {
            let mut idx: Vec<usize> = (start..start + n).collect();
            start += n;
            idx.extend(shared.clone());
            idx
        })
        .collect();
    let batched: Vec<bool> = dims.iter().map(Option::is_some).collect();
    let branch_b: Vec<Vec<bool>> = inputs
        .iter()
        .map(|idx| idx.iter().map(|&i| batched[i]).collect())
        .collect();
    let num_outs = c.branches[0].outvars.len();
    let mut out_b = vec![dims[0].is_some(); num_outs];
    for (b, bb) in c.branches.iter().zip(&branch_b) {
        for (o, x) in out_b.iter_mut().zip(batched_outputs(b, bb)) {
            *o |= x;
        }
    }
    let ops = operands_at_0(args, dims, &batched, axis_size);
    let branch_ops =
        |k: usize| -> Vec<Array> { inputs[k].iter().map(|&i| ops[i].clone()).collect() };

    if dims[0].is_none() {
        let mut operands: Vec<Array> = vec![ops[0].clone()];
        let mut counts = Vec::with_capacity(nb);
        let mut jaxprs = Vec::with_capacity(nb);
        for (k, branch) in c.branches.iter().enumerate() {
            let avals = batched_avals(&branch.in_avals(), &branch_b[k], axis_size);
            let closed = crate::core::trace::trace_to_jaxpr(&avals, |vals| {
                eval_at_0(branch, &vals, &branch_b[k], &out_b, axis_size)
            });
            operands.extend(closed.consts.iter().cloned());
            operands.extend(
                inputs[k][..c.branch_consts[k]]
                    .iter()
                    .map(|&i| ops[i].clone()),
            );
            counts.push(closed.consts.len() + c.branch_consts[k]);
            jaxprs.push(std::sync::Arc::new(
                crate::higher_order::control::close_over_consts(closed.jaxpr),
            ));
        }
        operands.extend(ops[shared].iter().cloned());
        let prim = crate::higher_order::control::Cond {
            branches: jaxprs,
            branch_consts: counts,
        };
        let operands: Vec<Operand> = operands.iter().map(Operand::Array).collect();
        let outs = crate::core::trace::bind(std::sync::Arc::new(prim), &operands);
        let out_dims = out_b.iter().map(|&b| b.then_some(0)).collect();
        return (outs, out_dims);
    }

    // An index per example (clamped, as the primitive does): every branch, then a select.
    let index = ops[0].maximum(0).minimum(nb as i64 - 1);
    let all_b = vec![true; num_outs];
    let outs: Vec<Vec<Array>> = (0..nb)
        .map(|k| {
            eval_at_0(
                &c.branches[k],
                &branch_ops(k),
                &branch_b[k],
                &all_b,
                axis_size,
            )
        })
        .collect();
    let mut result = outs[nb - 1].clone();
    for k in (0..nb - 1).rev() {
        let pick = index.eq(k as i64);
        result = result
            .iter()
            .zip(&outs[k])
            .map(|(r, o)| {
                let mask = bind1(
                    BroadcastInDim {
                        shape: r.shape().to_vec(),
                        dims: vec![0],
                    },
                    &[Operand::Array(&pick)],
                );
                bind1(
                    Select,
                    &[Operand::Array(&mask), Operand::Array(o), Operand::Array(r)],
                )
            })
            .collect();
    }
    (result, vec![Some(0); num_outs])
}

/// A `remat` call on a batch: a call of the batched function (batched inputs and outputs
/// along 0), with the same policy, so that the backward pass recomputes the batched values.
pub fn remat_batched(
    r: &crate::higher_order::remat::RematCall,
    args: &[Arg],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let batched: Vec<bool> = dims.iter().map(Option::is_some).collect();
    let out_b = batched_outputs(&r.jaxpr, &batched);
    let ops = operands_at_0(args, dims, &batched, axis_size);
    let jaxpr = r.jaxpr.clone();
    let avals = batched_avals(&jaxpr.in_avals(), &batched, axis_size);
    let closed = crate::core::trace::trace_to_jaxpr(&avals, |vals| {
        eval_at_0(&jaxpr, &vals, &batched, &out_b, axis_size)
    });
    let prim = crate::higher_order::remat::RematCall {
        jaxpr: std::sync::Arc::new(crate::higher_order::control::close_over_consts(
            closed.jaxpr,
        )),
        num_consts: closed.consts.len() + r.num_consts,
        policy: r.policy.clone(),
        loc: r.loc,
    };
    let operands: Vec<Operand> = closed
        .consts
        .iter()
        .chain(&ops)
        .map(Operand::Array)
        .collect();
    let outs = crate::core::trace::bind(std::sync::Arc::new(prim), &operands);
    (outs, out_b.iter().map(|&b| b.then_some(0)).collect())
}
