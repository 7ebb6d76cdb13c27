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

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::ir::{Atom, ClosedJaxpr, Env, Jaxpr};
use crate::core::primitive::Primitive;
use crate::core::sharding::PartitionDim;
use crate::core::sharding_types::{dims_of, type_sharding};
use crate::core::trace::{
    bind, bind1, bind_at, in_scope_of, trace_to_jaxpr, with_location, Operand,
};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// Runs `jaxpr` (traced for one example) on batched arguments: `args[i]` holds its examples
/// stacked along `in_dims[i]` (`None`: the same value for every example), `axis_size` of
/// them. The constants are unbatched. Returns the outputs and their batch dims. Within a
/// batching pass (a rule batching a body), the pass's axis name carries on.
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

/// [`batch_jaxpr`] as a new batching pass (vmap's), whose batch axis is called `axis_name`
/// (`vmap(axis_name = "i")`, `None` for an unnamed one): collectives over that name become
/// operations across the batch (see [`axis_name`]).
pub fn batch_jaxpr_named(
    jaxpr: &Jaxpr,
    consts: &[Array],
    args: &[Array],
    in_dims: &[Option<usize>],
    axis_size: usize,
    axis_name: Option<&str>,
) -> (Vec<Array>, Vec<Option<usize>>) {
    BATCH_AXIS.with(|b| b.borrow_mut().push(axis_name.map(str::to_owned)));
    let _guard = BatchAxisGuard;
    batch_jaxpr(jaxpr, consts, args, in_dims, axis_size)
}

thread_local! {
    /// The names of the batch axes whose batching passes are running, innermost last.
    static BATCH_AXIS: RefCell<Vec<Option<String>>> = const { RefCell::new(Vec::new()) };
}

/// Pops the name [`batch_jaxpr_named`] pushed, also when a rule panics.
struct BatchAxisGuard;

impl Drop for BatchAxisGuard {
    fn drop(&mut self) {
        BATCH_AXIS.with(|b| b.borrow_mut().pop());
    }
}

/// The name of the axis the running batching pass maps (`None` for an unnamed vmap, or
/// outside any pass). A collective's batching rule compares it with its own axis: over this
/// axis it becomes an operation across the batch dim (`psum` a sum over it, `axis_index` an
/// iota); over another axis it stays a collective, applied to the whole batch. Rules of
/// higher-order primitives need not pass it on: their bodies run in the same pass.
pub fn axis_name() -> Option<String> {
    BATCH_AXIS.with(|b| b.borrow().last().cloned().flatten())
}

/// Does an equation of `jaxpr` communicate over the named axis `name` (for
/// [`Primitive::uses_named_axis`] of primitives holding jaxprs)?
pub fn jaxpr_uses_named_axis(jaxpr: &Jaxpr, name: &str) -> bool {
    jaxpr.eqns.iter().any(|e| e.prim.uses_named_axis(name))
}

/// The batching rule's first half for a primitive that holds a jaxpr and binds a new one on
/// the batch (custom_jvp, custom_vjp): the operands with their batch dims moved to 0, those
/// dims, and `body` traced on them with every output batched along 0.
pub fn batch_body_at_front(
    body: &Jaxpr,
    args: &[Operand],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>, ClosedJaxpr) {
    let ops: Vec<Array> = args
        .iter()
        .zip(dims)
        .map(|(a, d)| match d {
            Some(d) => moveaxis(&bound_array(a), *d, 0),
            None => bound_array(a).into_owned(),
        })
        .collect();
    let in_dims: Vec<Option<usize>> = dims.iter().map(|d| d.map(|_| 0)).collect();
    let avals: Vec<Aval> = ops.iter().map(|o| o.aval().clone()).collect();
    let closed = trace_to_jaxpr(&avals, |tracers| {
        let (outs, out_dims) = batch_eval(body, &tracers, &in_dims, axis_size);
        outs.iter()
            .zip(out_dims)
            .map(|(o, d)| move_bdim(&Operand::from(o), d, 0, axis_size))
            .collect()
    });
    (ops, in_dims, closed)
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
    let batch_axis = axis_name();
    // Each value with its batch dim.
    let mut env: Env<(Array, Option<usize>)> = Env::new(jaxpr, "batch_jaxpr");
    for ((v, a), d) in jaxpr
        .constvars
        .iter()
        .chain(&jaxpr.invars)
        .zip(inputs)
        .zip(dims)
    {
        env.set(*v, (a.clone(), *d));
    }
    for e in &jaxpr.eqns {
        let (args, in_dims): (Vec<Operand>, Vec<Option<usize>>) = e
            .inputs
            .iter()
            .map(|a| match a {
                Atom::Var(v) => {
                    let (x, d) = env.get(*v);
                    (Operand::from(x), *d)
                }
                Atom::Lit(l) => (Operand::Lit(*l), None),
            })
            .unzip();
        let over_this_axis = batch_axis
            .as_deref()
            .is_some_and(|name| e.prim.uses_named_axis(name));
        let (outs, out_dims) = if in_dims.iter().all(Option::is_none) && !over_this_axis {
            let outs = in_scope_of(e, || bind_at(e.prim.clone(), &args, e.loc));
            let n = outs.len();
            (outs, vec![None; n])
        } else {
            in_scope_of(e, || {
                with_location(e.loc, || e.prim.batch(&args, &in_dims, axis_size))
            })
        };
        drop(args);
        assert_eq!(
            (outs.len(), out_dims.len()),
            (e.outputs.len(), e.outputs.len()),
            "the batching rule of {} gave the wrong number of outputs",
            e.prim.name()
        );
        for ((v, o), d) in e.outputs.iter().zip(outs).zip(out_dims) {
            check_rule_output(e.prim.name(), jaxpr.aval(*v), &o, d, axis_size);
            env.set(*v, (o, d));
        }
    }
    jaxpr
        .outvars
        .iter()
        .map(|a| match a {
            Atom::Var(v) => env.get(*v).clone(),
            Atom::Lit(l) => (Array::from_literal(*l), None),
        })
        .unzip()
}

/// Stops when a rule's output is not the per-example output batched along `dim`: a bug in
/// the rule, caught at the equation rather than as a wrong shape later.
fn check_rule_output(prim: &str, want: &Aval, got: &Array, dim: Option<usize>, axis_size: usize) {
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

/// The operand as an array, a literal bound as a 0-d broadcast (an equation under a trace,
/// computed on the device) where [`Operand::to_array`] would upload it as a constant.
pub fn bound_array<'a>(x: &'a Operand) -> Cow<'a, Array> {
    match x {
        Operand::Array(a) => Cow::Borrowed(&**a),
        Operand::Lit(l) => Cow::Owned(Array::broadcast_literal(*l, &[])),
    }
}

/// `x` with axis `from` moved to position `to`, the others keeping their order.
pub fn moveaxis(x: &Array, from: usize, to: usize) -> Array {
    if from == to {
        return x.clone();
    }
    let mut perm: Vec<usize> = (0..x.rank()).filter(|&i| i != from).collect();
    perm.insert(to, from);
    x.transpose(perm)
}

/// The operand batched along `to`: its batch dim moved there, or, when it is unbatched, the
/// value repeated `axis_size` times along a new axis `to`.
pub fn move_bdim(x: &Operand, dim: Option<usize>, to: usize, axis_size: usize) -> Array {
    match dim {
        Some(d) => moveaxis(&x.to_array(), d, to),
        None => {
            let aval = x.aval();
            let mut shape = aval.shape.clone();
            shape.insert(to, axis_size);
            match x {
                Operand::Array(a) => {
                    let dims: Vec<usize> = (0..aval.rank()).map(|i| shift_axis(i, to)).collect();
                    a.broadcast_in_dim(&shape, &dims)
                }
                Operand::Lit(l) => Array::broadcast_literal(*l, &shape),
            }
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
pub fn align(args: &[Operand], dims: &[Option<usize>], axis_size: usize) -> (Vec<Array>, usize) {
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
    args: &[Operand],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let (xs, d) = align(args, dims, axis_size);
    let ops: Vec<Operand> = xs.iter().map(Operand::from).collect();
    (vec![bind1(prim, &ops)], vec![Some(d)])
}

/// The rule of a one-operand primitive that works on each element (or each example) alike:
/// apply it to the batch, the batch dim stays.
pub fn unary(
    prim: impl Primitive,
    args: &[Operand],
    dims: &[Option<usize>],
) -> (Vec<Array>, Vec<Option<usize>>) {
    (vec![bind1(prim, &[args[0].borrowed()])], vec![dims[0]])
}

/// Binds `prim` on operands with batch dims: as is when none is batched, else through its
/// batching rule. Lets a rule reuse other primitives' rules.
pub fn bind_batched(
    prim: impl Primitive,
    args: &[Operand],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let over_this_axis = axis_name().is_some_and(|name| prim.uses_named_axis(&name));
    if dims.iter().all(Option::is_none) && !over_this_axis {
        let outs = bind(Arc::new(prim), args);
        let n = outs.len();
        (outs, vec![None; n])
    } else {
        prim.batch(args, dims, axis_size)
    }
}

/// Which outputs of `jaxpr` may be batched when the inputs flagged in `batched` are (its
/// constants first, then its inputs): an equation's outputs are batched when any of its
/// inputs is, or when it is a collective over the running pass's batch axis. Never wrong
/// the other way: an output marked unbatched is unbatched.
pub fn batched_outputs(jaxpr: &Jaxpr, batched: &[bool]) -> Vec<bool> {
    let mut marked = vec![false; jaxpr.avals.len()];
    for (v, &b) in jaxpr.constvars.iter().chain(&jaxpr.invars).zip(batched) {
        marked[v.0 as usize] = b;
    }
    // A collective over the batch axis may differ between examples without batched inputs.
    let batch_axis = axis_name();
    for e in &jaxpr.eqns {
        let b = e
            .inputs
            .iter()
            .any(|a| matches!(a, Atom::Var(v) if marked[v.0 as usize]))
            || batch_axis
                .as_deref()
                .is_some_and(|name| e.prim.uses_named_axis(name));
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
pub fn batched_avals(avals: &[Aval], batched: &[bool], axis_size: usize) -> Vec<Aval> {
    avals
        .iter()
        .zip(batched)
        .map(|(a, &b)| {
            if !b {
                return a.clone();
            }
            let mut shape = a.shape.clone();
            shape.insert(0, axis_size);
            let mut dims = dims_of(a);
            dims.insert(0, PartitionDim::Replicated);
            Aval {
                sharding: a
                    .sharding
                    .as_ref()
                    .and_then(|s| type_sharding(s.mesh(), &dims, shape.len())),
                ..a.with_shape(shape)
            }
        })
        .collect()
}

/// The operands batched along 0 where `batched` says (unbatched ones materialised), the
/// others as they are.
pub fn operands_at_0(
    args: &[Operand],
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
                bound_array(a).into_owned()
            }
        })
        .collect()
}

/// Runs `jaxpr` batched (inputs along 0 where `batched`) and returns its outputs, batched
/// along 0 where `out_batched` says (materialised if the rule left one unbatched).
pub fn eval_at_0(
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
                move_bdim(&Operand::from(o), d, 0, axis_size)
            } else {
                assert!(d.is_none(), "vmap: an output thought unbatched is batched");
                o.clone()
            }
        })
        .collect()
}
