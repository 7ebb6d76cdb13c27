//! Control flow: `scan` (one XLA while loop over a traced body), `while_loop`, and `cond` /
//! `switch` with traced predicates. Each holds the jaxprs of its bodies; their constants are
//! operands (so captured arrays and outer tracers flow in, never pasted as literals).

use crate::aval::{avals_to_string, Aval};
use crate::core::array::Array;
use crate::core::ir::{Atom, Env, Jaxpr};
use crate::core::lower::{i64_array, LowerCtx};
use crate::core::primitive::{as_any, Backward, Primitive};
use crate::core::sharding_types::{as_typed_by_body, SpecRule};
use crate::core::trace::{bind, bind1, bind_at, eval_jaxpr, in_scope_of, trace_to_jaxpr, Operand};
use crate::dtype::DType;
use crate::interpreters::ad::{jvp_jaxpr, linearize_jaxpr, or_zeros, zeros_like_aval};
use crate::interpreters::batching::{
    batched_avals, batched_outputs, bound_array, eval_at_0, jaxpr_uses_named_axis, moveaxis,
    operands_at_0,
};
use crate::prims::elementwise::Select;
use crate::prims::reduce::{Reduce, ReduceOp};
use crate::prims::shape::BroadcastInDim;
use std::panic::Location;
use std::sync::Arc;

/// A jaxpr with its constants turned into leading inputs: what control-flow primitives hold.
pub fn close_over_consts(mut jaxpr: Jaxpr) -> Jaxpr {
    let mut invars = std::mem::take(&mut jaxpr.constvars);
    invars.append(&mut jaxpr.invars);
    jaxpr.invars = invars;
    jaxpr
}

fn body_in_avals(j: &Jaxpr) -> Vec<Aval> {
    j.in_avals()
}

fn check_operands(what: &str, got: &[Aval], want: &[Aval]) -> Result<(), String> {
    if got.len() != want.len() || got.iter().zip(want).any(|(a, b)| !a.same_type(b)) {
        return Err(format!(
            "{what} was traced for ({}), not for ({})",
            avals_to_string(want),
            avals_to_string(got)
        ));
    }
    Ok(())
}

fn operands<'a>(args: &'a [Array]) -> Vec<Operand<'a>> {
    args.iter().map(Operand::from).collect()
}

/// Adds a leading axis of `n` to an aval.
fn stacked(a: &Aval, n: usize) -> Aval {
    let mut shape = vec![n];
    shape.extend(&a.shape);
    a.with_shape(shape)
}

// ---------------------------------------------------------------------------------------------
// scan
// ---------------------------------------------------------------------------------------------

/// `scan`: runs `body` `length` times, threading a carry and slicing `xs` along their leading
/// axis, stacking the per-step outputs `ys`. Operands: consts, initial carry, xs. Outputs:
/// final carry, ys. `body` maps (consts, carry, x) to (carry, y).
#[derive(Clone)]
pub struct Scan {
    pub body: Arc<Jaxpr>,
    pub num_consts: usize,
    pub num_carry: usize,
    pub length: usize,
    pub reverse: bool,
    pub unroll: usize,
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "scan[{}]", self.params_string())
    }
}

impl Scan {
    fn num_xs(&self) -> usize {
        self.body.invars.len() - self.num_consts - self.num_carry
    }

    fn num_ys(&self) -> usize {
        self.body.outvars.len() - self.num_carry
    }

    /// Binds a scan over `body` with the same options.
    fn bind_like(
        &self,
        body: Jaxpr,
        num_consts: usize,
        num_carry: usize,
        reverse: bool,
        operands: &[Array],
    ) -> Vec<Array> {
        let prim = Scan {
            body: Arc::new(body),
            num_consts,
            num_carry,
            length: self.length,
            reverse,
            unroll: self.unroll,
        };
        bind_at(
            Arc::new(prim),
            &super::control::operands(operands),
            Location::caller(),
        )
    }
}

impl Primitive for Scan {
    /// Its `Debug` leaves the body out: eager calls key on the lowered program.
    fn eager_key(&self) -> Option<String> {
        None
    }
    fn name(&self) -> &'static str {
        "scan"
    }
    fn params_string(&self) -> String {
        format!(
            "length={} reverse={} unroll={} num_consts={} num_carry={} jaxpr={}",
            self.length, self.reverse, self.unroll, self.num_consts, self.num_carry, self.body
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let want = body_in_avals(&self.body);
        let (nc, nk) = (self.num_consts, self.num_carry);
        if inputs.len() != want.len() {
            return Err(format!(
                "expected {} operands, got {}",
                want.len(),
                inputs.len()
            ));
        }
        check_operands("the scan body", &inputs[..nc + nk], &want[..nc + nk])?;
        for (x, w) in inputs[nc + nk..].iter().zip(&want[nc + nk..]) {
            if x.shape.first() != Some(&self.length)
                || !x.with_shape(x.shape[1..].to_vec()).same_type(w)
            {
                return Err(format!(
                    "a scanned input is {x}, expected {} (leading axis = length {})",
                    stacked(w, self.length),
                    self.length
                ));
            }
        }
        let outs = self.body.out_avals();
        let mut result: Vec<Aval> = inputs[nc..nc + nk].to_vec();
        result.extend(outs[nk..].iter().map(|y| stacked(y, self.length)));
        Ok(result)
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = ins;
        as_typed_by_body(outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let (nc, nk, nx) = (self.num_consts, self.num_carry, self.num_xs());
        let avals: Vec<Aval> = p.iter().map(Operand::aval).collect();
        // Tangents go with the inexact (float or complex) consts and xs that have one, and
        // with every inexact carry (a carry's tangent may become nonzero after a step even if
        // it starts at zero).
        let has_t: Vec<bool> = (0..p.len())
            .map(|i| avals[i].dtype.is_inexact() && (t[i].is_some() || (nc..nc + nk).contains(&i)))
            .collect();
        let ct_idx: Vec<usize> = (0..nc).filter(|&i| has_t[i]).collect();
        let kt_idx: Vec<usize> = (nc..nc + nk).filter(|&i| has_t[i]).collect();
        let xt_idx: Vec<usize> = (nc + nk..nc + nk + nx).filter(|&i| has_t[i]).collect();
        let body = self.body.clone();
        let body_avals = body_in_avals(&body);
        // The new body: (consts, const tangents, carry, carry tangents, xs, x tangents) ->
        // (carry, carry tangents, ys, y tangents).
        let order: Vec<(usize, bool)> = (0..nc)
            .map(|i| (i, false))
            .chain(ct_idx.iter().map(|&i| (i, true)))
            .chain((nc..nc + nk).map(|i| (i, false)))
            .chain(kt_idx.iter().map(|&i| (i, true)))
            .chain((nc + nk..nc + nk + nx).map(|i| (i, false)))
            .chain(xt_idx.iter().map(|&i| (i, true)))
            .collect();
        let in_avals: Vec<Aval> = order.iter().map(|&(i, _)| body_avals[i].clone()).collect();
        let y_inexact: Vec<bool> = body.out_avals()[nk..]
            .iter()
            .map(|a| a.dtype.is_inexact())
            .collect();
        let closed = trace_to_jaxpr(&in_avals, |vals| {
            let mut primals: Vec<Option<Array>> = vec![None; p.len()];
            let mut tangents: Vec<Option<Array>> = vec![None; p.len()];
            for (&(i, is_t), v) in order.iter().zip(vals) {
                if is_t {
                    tangents[i] = Some(v);
                } else {
                    primals[i] = Some(v);
                }
            }
            let primals: Vec<Array> = primals.into_iter().map(|p| p.expect("primal")).collect();
            let (outs, out_t) = jvp_jaxpr(&body, &[], &primals, &tangents);
            let mut result: Vec<Array> = outs[..nk].to_vec();
            for &i in &kt_idx {
                result.push(or_zeros(&out_t[i - nc], outs[i - nc].aval()));
            }
            result.extend(outs[nk..].iter().cloned());
            for (j, f) in y_inexact.iter().enumerate() {
                if *f {
                    result.push(or_zeros(&out_t[nk + j], outs[nk + j].aval()));
                }
            }
            result
        });
        let jaxpr = close_over_consts(closed.jaxpr);
        let mut ops: Vec<Array> = closed.consts.clone();
        for &(i, is_t) in &order {
            ops.push(if is_t {
                or_zeros(&t[i], &avals[i])
            } else {
                p[i].to_array().into_owned()
            });
        }
        let num_consts = closed.consts.len() + nc + ct_idx.len();
        let outs = self.bind_like(jaxpr, num_consts, nk + kt_idx.len(), self.reverse, &ops);
        // Map back: carry tangents, then y tangents for inexact ys.
        let mut result: Vec<Option<Array>> = vec![None; nk + y_inexact.len()];
        for (j, &i) in kt_idx.iter().enumerate() {
            result[i - nc] = Some(outs[nk + j].clone());
        }
        let ys_t = &outs[nk + kt_idx.len() + y_inexact.len()..];
        let mut k = 0;
        for (j, f) in y_inexact.iter().enumerate() {
            if *f {
                result[nk + j] = Some(ys_t[k].clone());
                k += 1;
            }
        }
        result
    }
    fn linearize(&self, p: &[Operand]) -> Option<(Vec<Array>, Backward)> {
        Some(scan_linearize(self, &Operand::to_arrays(p)))
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        lower_scan(self, cx, ins, in_avals, out)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        scan_batched(self, args, dims, axis_size)
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        jaxpr_uses_named_axis(&self.body, name)
    }
    as_any!();
}

/// `scan` on a batch: one scan whose body is the batched body. A carry is batched if it is
/// on entry or if the body makes it so (found by iterating to a fixed point); batched xs
/// keep their scanned axis first and the batch second, so each step's slice is batched
/// along 0, as are the consts and carries; ys come out stacked with the batch along 1.
fn scan_batched(
    s: &Scan,
    args: &[Operand],
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
            Some(d) => moveaxis(&bound_array(&args[j]), d, 1),
            None => bound_array(&args[j]).into_owned(),
        });
    }
    let body = s.body.clone();
    let mut out_batched = batched[nc..nc + nk].to_vec();
    out_batched.extend_from_slice(&out_b[nk..]);
    let avals = batched_avals(&body.in_avals(), &batched, axis_size);
    let closed = trace_to_jaxpr(&avals, |vals| {
        eval_at_0(&body, &vals, &batched, &out_batched, axis_size)
    });
    let prim = Scan {
        body: Arc::new(close_over_consts(closed.jaxpr)),
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
        .map(Operand::from)
        .collect();
    let outs = bind(Arc::new(prim), &operands);
    let mut out_dims: Vec<Option<usize>> =
        out_batched[..nk].iter().map(|&b| b.then_some(0)).collect();
    out_dims.extend(out_batched[nk..nk + ny].iter().map(|&b| b.then_some(1)));
    (outs, out_dims)
}

/// Which variables of `jaxpr` depend on the inputs flagged in `varying`.
fn varying_vars(jaxpr: &Jaxpr, varying: &[bool]) -> Vec<bool> {
    let mut marked = vec![false; jaxpr.avals.len()];
    for (v, &m) in jaxpr.invars.iter().zip(varying) {
        marked[v.0 as usize] = m;
    }
    for e in &jaxpr.eqns {
        let m = e
            .inputs
            .iter()
            .any(|a| matches!(a, Atom::Var(v) if marked[v.0 as usize]));
        for v in &e.outputs {
            marked[v.0 as usize] = m;
        }
    }
    marked
}

/// Reverse mode of scan. The forward scan also stacks, per step, the residuals the body's
/// backward pass needs; residuals that do not change across steps (weights and what is
/// computed from them alone) are computed once outside the loop instead. The backward pass
/// is a scan in the other direction that accumulates the constants' cotangents in its carry.
fn scan_linearize(s: &Scan, args: &[Array]) -> (Vec<Array>, Backward) {
    let (nc, nk, nx) = (s.num_consts, s.num_carry, s.num_xs());
    let ny = s.num_ys();
    let body = s.body.clone();
    let body_avals = body_in_avals(&body);
    let out_avals = body.out_avals();
    // F: (consts, carry, x) -> (carry, y, residuals), and the backward jaxpr over residuals.
    let mut backward_jaxpr = None;
    let forward = trace_to_jaxpr(&body_avals, |vals| {
        let (outs, lin) = linearize_jaxpr((*body).clone(), &[], &vals);
        let bwd = trace_to_jaxpr(&out_avals, |cts| {
            let cts: Vec<Option<Array>> = cts.into_iter().map(Some).collect();
            lin.backward(&cts)
                .into_iter()
                .zip(&body_avals)
                .map(|(c, a)| or_zeros(&c, a))
                .collect()
        });
        let mut result = outs;
        result.extend(bwd.consts.iter().cloned());
        backward_jaxpr = Some(bwd.jaxpr);
        result
    });
    let bwd = backward_jaxpr.expect("traced");
    let num_res = bwd.constvars.len();
    let f_consts = forward.consts.clone();
    let f = close_over_consts(forward.jaxpr);
    // F's inputs are (F's own consts, consts, carry, x): the last two vary per step.
    let nf = f_consts.len();
    let varying_in: Vec<bool> = (0..f.invars.len()).map(|i| i >= nf + nc).collect();
    let marked = varying_vars(&f, &varying_in);
    let res_outvars = &f.outvars[nk + ny..];
    let res_varies: Vec<bool> = res_outvars
        .iter()
        .map(|a| matches!(a, Atom::Var(v) if marked[v.0 as usize]))
        .collect();
    // Loop-invariant residuals: evaluate F's invariant part once, here.
    let invariant_values: Vec<Option<Array>> = if res_varies.iter().all(|&v| v) {
        vec![None; num_res]
    } else {
        let mut fixed = f.clone();
        fixed.outvars = res_outvars.to_vec();
        let values = eval_invariant(
            &fixed,
            &marked,
            &[f_consts.as_slice(), &args[..nc]].concat(),
        );
        values
            .into_iter()
            .zip(&res_varies)
            .map(|(v, &varies)| if varies { None } else { v })
            .collect()
    };
    // The forward scan stacks only the varying residuals.
    let mut f_loop = f.clone();
    f_loop.outvars = f.outvars[..nk + ny]
        .iter()
        .chain(
            res_outvars
                .iter()
                .zip(&res_varies)
                .filter(|(_, &v)| v)
                .map(|(a, _)| a),
        )
        .cloned()
        .collect();
    let mut ops: Vec<Array> = f_consts.clone();
    ops.extend(args.iter().cloned());
    let outs = s.bind_like(f_loop, nf + nc, nk, s.reverse, &ops);
    let primal_outs = outs[..nk + ny].to_vec();
    let varying_stacks = outs[nk + ny..].to_vec();

    let s = s.clone();
    let backward: Backward = Box::new(move |cts: &[Option<Array>], wanted: &[bool]| {
        let invariant: Vec<Array> = invariant_values.iter().flatten().cloned().collect();
        let nv = varying_stacks.len();
        let ni = invariant.len();
        // Cotangents are accumulated only for the inexact constants that need one, and
        // stacked only for the xs that need one; the loop computes nothing for the others.
        let inexact_const: Vec<bool> = body_avals[..nc]
            .iter()
            .zip(wanted)
            .map(|(a, &w)| w && a.dtype.is_inexact())
            .collect();
        let x_wanted: Vec<bool> = wanted[nc + nk..nc + nk + nx].to_vec();
        // Step: (invariant residuals; ct carry, const-ct accumulators; varying residuals, ct y)
        // -> (ct carry before the step, accumulators, ct x).
        let mut step_avals: Vec<Aval> = invariant.iter().map(|a| a.aval().clone()).collect();
        step_avals.extend(out_avals[..nk].iter().cloned());
        step_avals.extend(
            body_avals[..nc]
                .iter()
                .zip(&inexact_const)
                .filter(|(_, &f)| f)
                .map(|(a, _)| a.clone()),
        );
        step_avals.extend(
            varying_stacks
                .iter()
                .map(|r| r.aval().with_shape(r.shape()[1..].to_vec())),
        );
        step_avals.extend(out_avals[nk..].iter().cloned());
        let n_acc = inexact_const.iter().filter(|&&f| f).count();
        let step = trace_to_jaxpr(&step_avals, |vals| {
            let (inv, rest) = vals.split_at(ni);
            let (ct_carry, rest) = rest.split_at(nk);
            let (acc, rest) = rest.split_at(n_acc);
            let (var, ct_y) = rest.split_at(nv);
            let (mut iv, mut vv) = (inv.iter(), var.iter());
            let residuals: Vec<Array> = res_varies
                .iter()
                .map(|&varies| {
                    if varies { vv.next() } else { iv.next() }
                        .expect("residual")
                        .clone()
                })
                .collect();
            let mut ct_outs: Vec<Array> = ct_carry.to_vec();
            ct_outs.extend(ct_y.iter().cloned());
            let in_cts = eval_jaxpr(&bwd, &residuals, &ct_outs);
            let mut result: Vec<Array> = in_cts[nc..nc + nk].to_vec();
            let mut a = acc.iter();
            for (i, &f) in inexact_const.iter().enumerate() {
                if f {
                    result.push(a.next().expect("accumulator") + &in_cts[i]);
                }
            }
            result.extend(
                in_cts[nc + nk..]
                    .iter()
                    .zip(&x_wanted)
                    .filter(|(_, &w)| w)
                    .map(|(c, _)| c.clone()),
            );
            result
        });
        let step_consts = step.consts.clone();
        let step_jaxpr = close_over_consts(step.jaxpr);
        let mut ops: Vec<Array> = step_consts.clone();
        ops.extend(invariant.iter().cloned());
        for (c, a) in cts[..nk].iter().zip(&out_avals[..nk]) {
            ops.push(or_zeros(c, a));
        }
        for (a, _) in body_avals[..nc]
            .iter()
            .zip(&inexact_const)
            .filter(|(_, &f)| f)
        {
            ops.push(zeros_like_aval(a));
        }
        ops.extend(varying_stacks.iter().cloned());
        for (c, a) in cts[nk..nk + ny].iter().zip(&out_avals[nk..]) {
            ops.push(or_zeros(c, &stacked(a, s.length)));
        }
        let outs = s.bind_like(
            step_jaxpr,
            step_consts.len() + ni,
            nk + n_acc,
            !s.reverse,
            &ops,
        );
        let mut result: Vec<Option<Array>> = Vec::with_capacity(nc + nk + nx);
        let mut acc = outs[nk..nk + n_acc].iter();
        for &f in &inexact_const {
            result.push(if f { acc.next().cloned() } else { None });
        }
        result.extend(outs[..nk].iter().cloned().map(Some));
        let mut ct_xs = outs[nk + n_acc..].iter();
        result.extend(
            x_wanted
                .iter()
                .map(|&w| if w { ct_xs.next().cloned() } else { None }),
        );
        result
    });
    (primal_outs, backward)
}

/// Evaluates the equations of `jaxpr` that do not depend on varying inputs (given the values
/// of the leading, invariant inputs) and returns its outputs where they are invariant.
fn eval_invariant(
    jaxpr: &Jaxpr,
    marked: &[bool],
    invariant_inputs: &[Array],
) -> Vec<Option<Array>> {
    let mut env = Env::new(jaxpr, "eval_invariant");
    for (v, a) in jaxpr.invars.iter().zip(invariant_inputs) {
        env.set(*v, a.clone());
    }
    for e in &jaxpr.eqns {
        if e.outputs.iter().any(|v| marked[v.0 as usize]) {
            continue;
        }
        let ops: Vec<Operand> = e.inputs.iter().map(|a| env.operand(a)).collect();
        let outs = in_scope_of(e, || bind_at(e.prim.clone(), &ops, e.loc));
        drop(ops);
        for (v, o) in e.outputs.iter().zip(outs) {
            env.set(*v, o);
        }
    }
    jaxpr
        .outvars
        .iter()
        .map(|a| match a {
            Atom::Var(v) if !marked[v.0 as usize] => env.try_get(*v).cloned(),
            Atom::Lit(l) => Some(Array::from_literal(*l)),
            _ => None,
        })
        .collect()
}

/// One `stablehlo.while` whose carry is (counter, consts, carry, xs, ys accumulators).
fn lower_scan(
    s: &Scan,
    cx: &mut LowerCtx,
    ins: &[String],
    in_avals: &[Aval],
    out: &[Aval],
) -> Vec<String> {
    let (nc, nk, nx, ny) = (s.num_consts, s.num_carry, s.num_xs(), s.num_ys());
    let counter = Aval::scalar(DType::I32);
    let zero = cx.splat(0.0, &counter);
    let ys_avals: Vec<Aval> = out[nk..].to_vec();
    let ys_init: Vec<String> = ys_avals.iter().map(|a| cx.splat(0.0, a)).collect();
    let mut loop_avals = vec![counter.clone()];
    loop_avals.extend(in_avals.iter().cloned());
    loop_avals.extend(ys_avals.iter().cloned());
    let mut loop_ins: Vec<String> = vec![zero];
    loop_ins.extend(ins.iter().cloned());
    loop_ins.extend(ys_init);
    let unroll = s.unroll.clamp(1, s.length.max(1));
    let trips = s.length / unroll;
    let body = s.body.clone();
    let length = s.length;
    let reverse = s.reverse;
    // One step at `index` (a traced i32) over the loop state; returns the new state.
    let step = move |cx: &mut LowerCtx, state: &[String], index: &str| -> Vec<String> {
        let b = Aval::scalar(DType::I32);
        let idx = if reverse {
            let last = cx.splat((length - 1) as f64, &b);
            cx.op1("stablehlo.subtract", &[&last, index], &[&b, &b], "", &b)
        } else {
            index.to_string()
        };
        let x_avals = &body.in_avals()[nc + nk..];
        let mut body_ins: Vec<String> = state[..nc + nk].to_vec();
        for (k, xa) in x_avals.iter().enumerate() {
            let full = stacked(xa, length);
            let zero = cx.splat(0.0, &b);
            let mut starts: Vec<&str> = vec![&idx];
            starts.extend(std::iter::repeat_n(zero.as_str(), xa.rank()));
            let mut operands = vec![state[nc + nk + k].as_str()];
            operands.extend(starts);
            let mut op_avals = vec![&full];
            op_avals.extend(std::iter::repeat_n(&b, xa.rank() + 1));
            let one = stacked(xa, 1);
            let sizes = i64_array(one.shape.iter().map(|&d| d as i64));
            let slice = cx.op1(
                "stablehlo.dynamic_slice",
                &operands,
                &op_avals,
                &format!("slice_sizes = {sizes}"),
                &one,
            );
            body_ins.push(cx.op1("stablehlo.reshape", &[&slice], &[&one], "", xa));
        }
        let outs = cx.lower_inline(&body, &body_ins);
        let mut next: Vec<String> = state[..nc].to_vec();
        next.extend(outs[..nk].iter().cloned());
        next.extend(state[nc + nk..nc + nk + nx].iter().cloned());
        let y_avals = body.out_avals();
        for k in 0..ny {
            let ya = &y_avals[nk + k];
            let one = stacked(ya, 1);
            let full = stacked(ya, length);
            let expanded = cx.op1("stablehlo.reshape", &[&outs[nk + k]], &[ya], "", &one);
            let zero = cx.splat(0.0, &b);
            let mut operands = vec![
                state[nc + nk + nx + k].as_str(),
                expanded.as_str(),
                idx.as_str(),
            ];
            operands.extend(std::iter::repeat_n(zero.as_str(), ya.rank()));
            let mut op_avals = vec![&full, &one];
            op_avals.extend(std::iter::repeat_n(&b, ya.rank() + 1));
            next.push(cx.op1(
                "stablehlo.dynamic_update_slice",
                &operands,
                &op_avals,
                "",
                &full,
            ));
        }
        next
    };
    let cond_avals = loop_avals.clone();
    let cond = cx.region(&cond_avals, |cx, r| {
        let limit = cx.splat(trips as f64, &counter);
        let b = Aval::scalar(DType::Bool);
        let lt = cx.op1(
            "stablehlo.compare",
            &[&r[0], &limit],
            &[&counter, &counter],
            &crate::prims::elementwise::compare_props(crate::prims::CompareOp::Lt, DType::I32),
            &b,
        );
        vec![(lt, b)]
    });
    let body_avals = loop_avals.clone();
    let body_region = cx.region(&body_avals, |cx, r| {
        let mut state: Vec<String> = r[1..].to_vec();
        let u = Aval::scalar(DType::I32);
        let factor = cx.splat(unroll as f64, &u);
        let base = cx.op1("stablehlo.multiply", &[&r[0], &factor], &[&u, &u], "", &u);
        for k in 0..unroll {
            let offset = cx.splat(k as f64, &u);
            let index = cx.op1("stablehlo.add", &[&base, &offset], &[&u, &u], "", &u);
            state = step(cx, &state, &index);
        }
        let one = cx.splat(1.0, &u);
        let next = cx.op1("stablehlo.add", &[&r[0], &one], &[&u, &u], "", &u);
        let mut result = vec![(next, u.clone())];
        result.extend(state.into_iter().zip(body_avals[1..].iter().cloned()));
        result
    });
    let operand_refs: Vec<&str> = loop_ins.iter().map(String::as_str).collect();
    let aval_refs: Vec<&Aval> = loop_avals.iter().collect();
    let results = cx.op_with_regions(
        "stablehlo.while",
        &operand_refs,
        &aval_refs,
        "",
        &[cond, body_region],
        &aval_refs,
    );
    // Steps the unrolled loop did not cover run after it.
    let mut state: Vec<String> = results[1..].to_vec();
    for k in trips * unroll..s.length {
        let index = cx.splat(k as f64, &counter);
        state = step(cx, &state, &index);
    }
    let mut outs: Vec<String> = state[nc..nc + nk].to_vec();
    outs.extend(state[nc + nk + nx..].iter().cloned());
    outs
}

// ---------------------------------------------------------------------------------------------
// while_loop
// ---------------------------------------------------------------------------------------------

/// `while_loop`: repeats `body` while `cond` holds. Operands: cond's consts, body's consts,
/// the initial carry; outputs: the final carry. Forward-differentiable; reverse mode is an
/// error, as in JAX (the number of steps is not known ahead, so residuals cannot be stacked).
#[derive(Clone)]
pub struct While {
    pub cond: Arc<Jaxpr>,
    pub body: Arc<Jaxpr>,
    pub cond_consts: usize,
    pub body_consts: usize,
}

impl std::fmt::Debug for While {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "while[cond={} body={}]", self.cond, self.body)
    }
}

impl Primitive for While {
    /// Its `Debug` leaves the body out: eager calls key on the lowered program.
    fn eager_key(&self) -> Option<String> {
        None
    }
    fn name(&self) -> &'static str {
        "while"
    }
    fn params_string(&self) -> String {
        format!("cond_jaxpr={} body_jaxpr={}", self.cond, self.body)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let (cc, bc) = (self.cond_consts, self.body_consts);
        if inputs.len() < cc + bc {
            return Err("too few operands".into());
        }
        let carry = &inputs[cc + bc..];
        let mut cond_in = inputs[..cc].to_vec();
        cond_in.extend(carry.iter().cloned());
        check_operands("the while condition", &cond_in, &self.cond.in_avals())?;
        let mut body_in = inputs[cc..cc + bc].to_vec();
        body_in.extend(carry.iter().cloned());
        check_operands("the while body", &body_in, &self.body.in_avals())?;
        Ok(carry.to_vec())
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = ins;
        as_typed_by_body(outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let (cc, bc) = (self.cond_consts, self.body_consts);
        let avals: Vec<Aval> = p.iter().map(Operand::aval).collect();
        let nk = p.len() - cc - bc;
        let inexact_carry: Vec<bool> = avals[cc + bc..]
            .iter()
            .map(|a| a.dtype.is_inexact())
            .collect();
        let bct: Vec<usize> = (cc..cc + bc)
            .filter(|&i| avals[i].dtype.is_inexact() && t[i].is_some())
            .collect();
        let nkt = inexact_carry.iter().filter(|&&f| f).count();
        // Body over (body consts, their tangents, carry, carry tangents).
        let body = self.body.clone();
        let mut in_avals: Vec<Aval> = avals[cc..cc + bc].to_vec();
        in_avals.extend(bct.iter().map(|&i| avals[i].clone()));
        in_avals.extend(avals[cc + bc..].iter().cloned());
        in_avals.extend(
            avals[cc + bc..]
                .iter()
                .zip(&inexact_carry)
                .filter(|(_, &f)| f)
                .map(|(a, _)| a.clone()),
        );
        let jbody = trace_to_jaxpr(&in_avals, |vals| {
            let (consts, rest) = vals.split_at(bc);
            let (ctan, rest) = rest.split_at(bct.len());
            let (carry, ktan) = rest.split_at(nk);
            let mut tangents: Vec<Option<Array>> = vec![None; bc + nk];
            for (j, &i) in bct.iter().enumerate() {
                tangents[i - cc] = Some(ctan[j].clone());
            }
            let mut kt = ktan.iter();
            for (k, &f) in inexact_carry.iter().enumerate() {
                if f {
                    tangents[bc + k] = kt.next().cloned();
                }
            }
            let primals: Vec<Array> = consts.iter().chain(carry).cloned().collect();
            let (outs, out_t) = jvp_jaxpr(&body, &[], &primals, &tangents);
            let mut result = outs.clone();
            for (k, &f) in inexact_carry.iter().enumerate() {
                if f {
                    result.push(or_zeros(&out_t[k], outs[k].aval()));
                }
            }
            result
        });
        // The condition sees the primal carry only; it ignores the tangents appended to it.
        let cond = self.cond.clone();
        let mut cond_avals: Vec<Aval> = avals[..cc].to_vec();
        cond_avals.extend(avals[cc + bc..].iter().cloned());
        cond_avals.extend(
            avals[cc + bc..]
                .iter()
                .zip(&inexact_carry)
                .filter(|(_, &f)| f)
                .map(|(a, _)| a.clone()),
        );
        let jcond = trace_to_jaxpr(&cond_avals, |vals| eval_jaxpr(&cond, &[], &vals[..cc + nk]));
        let mut ops: Vec<Array> = jcond.consts.clone();
        ops.extend(Operand::to_arrays(&p[..cc]));
        ops.extend(jbody.consts.iter().cloned());
        ops.extend(Operand::to_arrays(&p[cc..cc + bc]));
        ops.extend(bct.iter().map(|&i| t[i].clone().expect("tangent")));
        ops.extend(Operand::to_arrays(&p[cc + bc..]));
        for (k, &f) in inexact_carry.iter().enumerate() {
            if f {
                ops.push(or_zeros(&t[cc + bc + k], &avals[cc + bc + k]));
            }
        }
        let prim = While {
            cond: Arc::new(close_over_consts(jcond.jaxpr)),
            body: Arc::new(close_over_consts(jbody.jaxpr)),
            cond_consts: jcond.consts.len() + cc,
            body_consts: jbody.consts.len() + bc + bct.len(),
        };
        let outs = bind_at(Arc::new(prim), &operands(&ops), Location::caller());
        debug_assert_eq!(outs.len(), nk + nkt);
        let mut tangents = outs[nk..].iter();
        inexact_carry
            .iter()
            .map(|&f| if f { tangents.next().cloned() } else { None })
            .collect()
    }
    fn vjp(
        &self,
        _: &[Operand],
        _: &[Array],
        _: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        panic!(
            "while_loop: reverse-mode differentiation does not work for a loop whose number of steps is only \
             known at run time (as in JAX); use scan, or fori_loop with static bounds, which lowers to scan"
        )
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        _: &[Aval],
    ) -> Vec<String> {
        let (cc, bc) = (self.cond_consts, self.body_consts);
        let avals: Vec<Aval> = in_avals.to_vec();
        let (cond, body) = (self.cond.clone(), self.body.clone());
        let cond_region = cx.region(&avals, |cx, r| {
            let mut cin: Vec<String> = r[..cc].to_vec();
            cin.extend(r[cc + bc..].iter().cloned());
            let out = cx.lower_inline(&cond, &cin);
            vec![(out[0].clone(), Aval::scalar(DType::Bool))]
        });
        let body_region = cx.region(&avals, |cx, r| {
            let bin: Vec<String> = r[cc..].to_vec();
            let out = cx.lower_inline(&body, &bin);
            let mut next: Vec<(String, Aval)> = r[..cc + bc]
                .iter()
                .cloned()
                .zip(avals[..cc + bc].iter().cloned())
                .collect();
            next.extend(out.into_iter().zip(avals[cc + bc..].iter().cloned()));
            next
        });
        let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
        let aval_refs: Vec<&Aval> = avals.iter().collect();
        let results = cx.op_with_regions(
            "stablehlo.while",
            &refs,
            &aval_refs,
            "",
            &[cond_region, body_region],
            &aval_refs,
        );
        results[cc + bc..].to_vec()
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        while_batched(self, args, dims, axis_size)
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        jaxpr_uses_named_axis(&self.cond, name) || jaxpr_uses_named_axis(&self.body, name)
    }
    as_any!();
}

/// `while_loop` on a batch. A carry is batched if it is on entry or if the body makes it so.
/// When the predicate is the same for every example, one loop runs the batched body. When it
/// differs, the loop runs while any example's predicate holds, and each step keeps the old
/// carry of the examples whose predicate no longer does (every carry is then batched).
fn while_batched(
    w: &While,
    args: &[Operand],
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
    let jcond = trace_to_jaxpr(&cond_avals, |vals| {
        let pred = eval_at_0(&cond, &vals, &cond_b, &[pred_batched], axis_size).remove(0);
        if pred_batched {
            let any = Reduce {
                op: ReduceOp::Or,
                axes: vec![0],
            };
            vec![bind1(any, &[Operand::from(&pred)])]
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
    let jbody = trace_to_jaxpr(&body_avals, |vals| {
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
                    &[Operand::from(&running)],
                );
                bind1(
                    Select,
                    &[Operand::from(&mask), Operand::from(n), Operand::from(old)],
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
    let prim = While {
        cond: Arc::new(close_over_consts(jcond.jaxpr)),
        body: Arc::new(close_over_consts(jbody.jaxpr)),
        cond_consts: jcond.consts.len() + cc,
        body_consts: jbody.consts.len() + bc + if pred_batched { cc } else { 0 },
    };
    let operands: Vec<Operand> = operands.into_iter().map(Operand::from).collect();
    let outs = bind(Arc::new(prim), &operands);
    let out_dims = carry_b.iter().map(|&b| b.then_some(0)).collect();
    (outs, out_dims)
}

// ---------------------------------------------------------------------------------------------
// cond / switch
// ---------------------------------------------------------------------------------------------

/// `switch`: runs branch `index` (clamped into range) on the operands. Operands: the index
/// (i32), every branch's constants in branch order, then the operands.
#[derive(Clone)]
pub struct Cond {
    pub branches: Vec<Arc<Jaxpr>>,
    /// How many constants each branch takes (its leading inputs).
    pub branch_consts: Vec<usize>,
}

impl std::fmt::Debug for Cond {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cond[{} branches]", self.branches.len())
    }
}

impl Cond {
    fn total_consts(&self) -> usize {
        self.branch_consts.iter().sum()
    }

    /// The operands of branch `k`: its own constants, then the shared operands.
    fn branch_inputs<T: Clone>(&self, k: usize, all: &[T]) -> Vec<T> {
        let start: usize = self.branch_consts[..k].iter().sum();
        let total = self.total_consts();
        let mut v = all[1 + start..1 + start + self.branch_consts[k]].to_vec();
        v.extend(all[1 + total..].iter().cloned());
        v
    }

    /// Binds a switch over new branches that all take `consts` then `operands`.
    fn bind_branches(
        index: &Array,
        branches: Vec<crate::core::ir::ClosedJaxpr>,
        operands: &[Array],
    ) -> Vec<Array> {
        let mut ops = vec![index.clone()];
        let mut counts = Vec::new();
        let mut jaxprs = Vec::new();
        for b in &branches {
            ops.extend(b.consts.iter().cloned());
            counts.push(b.consts.len());
        }
        for b in branches {
            jaxprs.push(Arc::new(close_over_consts(b.jaxpr)));
        }
        ops.extend(operands.iter().cloned());
        let prim = Cond {
            branches: jaxprs,
            branch_consts: counts,
        };
        bind_at(
            Arc::new(prim),
            &super::control::operands(&ops),
            Location::caller(),
        )
    }
}

impl Primitive for Cond {
    /// Its `Debug` leaves the body out: eager calls key on the lowered program.
    fn eager_key(&self) -> Option<String> {
        None
    }
    fn name(&self) -> &'static str {
        "cond"
    }
    fn params_string(&self) -> String {
        let b: Vec<String> = self.branches.iter().map(|j| j.to_string()).collect();
        format!("branches=({})", b.join(", "))
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        if inputs.is_empty() || inputs[0].rank() != 0 || inputs[0].dtype != DType::I32 {
            return Err("the branch index must be an int32 scalar".into());
        }
        for (k, b) in self.branches.iter().enumerate() {
            check_operands(
                &format!("branch {k}"),
                &self.branch_inputs(k, inputs),
                &b.in_avals(),
            )?;
        }
        Ok(self.branches[0].out_avals())
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = ins;
        as_typed_by_body(outs)
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let total = self.total_consts();
        let all = Operand::to_arrays(p);
        let index = &all[0];
        let ops = &all[1 + total..];
        let op_avals: Vec<Aval> = ops.iter().map(|a| a.aval().clone()).collect();
        let inexact_ops: Vec<bool> = op_avals.iter().map(|a| a.dtype.is_inexact()).collect();
        let out_avals = self.branches[0].out_avals();
        let inexact_outs: Vec<bool> = out_avals.iter().map(|a| a.dtype.is_inexact()).collect();
        // Branches over (operands, their tangents) -> (outputs, their tangents); constants'
        // tangents are zero here unless given, so they join as extra constants.
        let mut in_avals = op_avals.clone();
        in_avals.extend(
            op_avals
                .iter()
                .zip(&inexact_ops)
                .filter(|(_, &f)| f)
                .map(|(a, _)| a.clone()),
        );
        let mut offset = 1;
        let branches: Vec<crate::core::ir::ClosedJaxpr> = self
            .branches
            .iter()
            .zip(&self.branch_consts)
            .map(|(b, &n)| {
                let consts = all[offset..offset + n].to_vec();
                let const_t: Vec<Option<Array>> = t[offset..offset + n].to_vec();
                offset += n;
                trace_to_jaxpr(&in_avals, |vals| {
                    let (prim, tans) = vals.split_at(ops.len());
                    let mut tangents: Vec<Option<Array>> = const_t.clone();
                    let mut tv = tans.iter();
                    for &f in &inexact_ops {
                        tangents.push(if f { tv.next().cloned() } else { None });
                    }
                    let primals: Vec<Array> = consts.iter().chain(prim).cloned().collect();
                    let (outs, out_t) = jvp_jaxpr(b, &[], &primals, &tangents);
                    let mut result = outs.clone();
                    for (k, &f) in inexact_outs.iter().enumerate() {
                        if f {
                            result.push(or_zeros(&out_t[k], &out_avals[k]));
                        }
                    }
                    result
                })
            })
            .collect();
        let mut operands: Vec<Array> = ops.to_vec();
        for (k, &f) in inexact_ops.iter().enumerate() {
            if f {
                operands.push(or_zeros(&t[1 + total + k], &op_avals[k]));
            }
        }
        let outs = Cond::bind_branches(index, branches, &operands);
        let mut tangents = outs[out_avals.len()..].iter();
        inexact_outs
            .iter()
            .map(|&f| if f { tangents.next().cloned() } else { None })
            .collect()
    }
    fn vjp(
        &self,
        p: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _wanted: &[bool],
    ) -> Vec<Option<Array>> {
        // The backward pass is a switch too: branch k recomputes its forward pass and pulls
        // the cotangents back through it, returning cotangents for every branch's constants
        // (zero for the others) and for the operands.
        let total = self.total_consts();
        let all = Operand::to_arrays(p);
        let index = &all[0];
        let out_avals: Vec<Aval> = outs.iter().map(|o| o.aval().clone()).collect();
        let mut in_avals: Vec<Aval> = all[1..].iter().map(|a| a.aval().clone()).collect();
        in_avals.extend(out_avals.iter().cloned());
        let const_avals: Vec<Aval> = all[1..1 + total].iter().map(|a| a.aval().clone()).collect();
        let op_avals: Vec<Aval> = all[1 + total..].iter().map(|a| a.aval().clone()).collect();
        let mut offset = 0;
        let branches: Vec<crate::core::ir::ClosedJaxpr> = self
            .branches
            .iter()
            .zip(&self.branch_consts)
            .map(|(b, &n)| {
                let start = offset;
                offset += n;
                trace_to_jaxpr(&in_avals, |vals| {
                    let (inputs, cts) = vals.split_at(total + op_avals.len());
                    let mut primals: Vec<Array> = inputs[start..start + n].to_vec();
                    primals.extend(inputs[total..].iter().cloned());
                    let (_, lin) = linearize_jaxpr((**b).clone(), &[], &primals);
                    let cts: Vec<Option<Array>> = cts.iter().cloned().map(Some).collect();
                    let in_cts = lin.backward(&cts);
                    let mut result: Vec<Array> = const_avals.iter().map(zeros_like_aval).collect();
                    for (j, c) in in_cts[..n].iter().enumerate() {
                        result[start + j] = or_zeros(c, &const_avals[start + j]);
                    }
                    for (c, a) in in_cts[n..].iter().zip(&op_avals) {
                        result.push(or_zeros(c, a));
                    }
                    result
                })
            })
            .collect();
        let mut operands: Vec<Array> = all[1..].to_vec();
        for (c, a) in cts.iter().zip(&out_avals) {
            operands.push(or_zeros(c, a));
        }
        let in_cts = Cond::bind_branches(index, branches, &operands);
        let mut result = vec![None];
        result.extend(
            in_cts
                .into_iter()
                .zip(all[1..].iter())
                .map(|(c, a)| a.dtype().is_inexact().then_some(c)),
        );
        result
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], _: &[Aval], out: &[Aval]) -> Vec<String> {
        let n = self.branches.len();
        let i = Aval::scalar(DType::I32);
        // Clamp the index into range, as JAX's switch does.
        let lo = cx.splat(0.0, &i);
        let hi = cx.splat((n - 1) as f64, &i);
        let index = cx.op1(
            "stablehlo.clamp",
            &[&lo, &ins[0], &hi],
            &[&i, &i, &i],
            "",
            &i,
        );
        let regions: Vec<String> = (0..n)
            .map(|k| {
                let inputs = self.branch_inputs(k, ins);
                let branch = self.branches[k].clone();
                let outs_avals = out.to_vec();
                cx.region(&[], |cx, _| {
                    let outs = cx.lower_inline(&branch, &inputs);
                    outs.into_iter().zip(outs_avals).collect()
                })
            })
            .collect();
        let out_refs: Vec<&Aval> = out.iter().collect();
        cx.op_with_regions("stablehlo.case", &[&index], &[&i], "", &regions, &out_refs)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        cond_batched(self, args, dims, axis_size)
    }
    fn uses_named_axis(&self, name: &str) -> bool {
        self.branches.iter().any(|b| jaxpr_uses_named_axis(b, name))
    }
    as_any!();
}

/// `cond`/`switch` on a batch. With one branch index for every example, one `cond` of the
/// batched branches (an output batched in any branch is batched in all). With an index per
/// example, every branch runs on the batch and each example selects its branch's outputs.
fn cond_batched(
    c: &Cond,
    args: &[Operand],
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
            let closed = trace_to_jaxpr(&avals, |vals| {
                eval_at_0(branch, &vals, &branch_b[k], &out_b, axis_size)
            });
            operands.extend(closed.consts.iter().cloned());
            operands.extend(
                inputs[k][..c.branch_consts[k]]
                    .iter()
                    .map(|&i| ops[i].clone()),
            );
            counts.push(closed.consts.len() + c.branch_consts[k]);
            jaxprs.push(Arc::new(close_over_consts(closed.jaxpr)));
        }
        operands.extend(ops[shared].iter().cloned());
        let prim = Cond {
            branches: jaxprs,
            branch_consts: counts,
        };
        let operands: Vec<Operand> = operands.iter().map(Operand::from).collect();
        let outs = bind(Arc::new(prim), &operands);
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
                    &[Operand::from(&pick)],
                );
                bind1(
                    Select,
                    &[Operand::from(&mask), Operand::from(o), Operand::from(r)],
                )
            })
            .collect();
    }
    (result, vec![Some(0); num_outs])
}
