//! Automatic differentiation as interpreters over a jaxpr.
//!
//! Both modes walk a traced jaxpr and bind into the current trace (or run eagerly when none is
//! open), so they compose with `jit` (inlined into its trace, compiled as one program), with
//! each other (`grad(grad(f))`: the outer transformation sees the inner one's primitives),
//! and with every other transformation. The rules themselves live beside their primitives
//! ([`crate::core::primitive::Primitive::jvp`] and [`crate::core::primitive::Primitive::vjp`]).
//!
//! Reverse mode evaluates the forward pass once, keeping every intermediate value, then walks
//! the equations backwards: the program it builds holds the forward computation once and the
//! backward computation once.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::ir::{Atom, Env, Jaxpr, Literal, Var};
use crate::core::primitive::Backward;
use crate::core::sharding::NamedSharding;
use crate::core::sharding_types::type_sharding_of;
use crate::core::trace::{bind_at, in_scope_of, trace_to_jaxpr, Operand};
use std::sync::Arc;

/// An array of `aval` filled with `value`, built from a literal so that, under a trace, it
/// is computed on the device rather than captured as a constant.
#[track_caller]
pub fn full_like_aval(aval: &Aval, value: f64) -> Array {
    Array::broadcast_literal(Literal::from_f64(value, aval.dtype, aval.weak), &aval.shape)
}

/// Zeros of `aval` (see [`full_like_aval`]).
#[track_caller]
pub fn zeros_like_aval(aval: &Aval) -> Array {
    full_like_aval(aval, 0.0)
}

/// Reverse mode from forward mode, as JAX derives it: the cotangents of the inputs of the
/// linear map `linear` (input tangents of `in_avals` to output tangents) given those of its
/// outputs (`None` = zero). The map is traced and run backward, so it must be linear in its
/// arguments; what it closes over (the primal point) is a constant.
pub fn transpose_linear(
    in_avals: &[Aval],
    linear: impl FnOnce(Vec<Array>) -> Vec<Array>,
    out_cts: &[Option<Array>],
) -> Vec<Array> {
    let point: Vec<Array> = in_avals.iter().map(zeros_like_aval).collect();
    let traced = trace_to_jaxpr(in_avals, linear);
    let out_avals = traced.jaxpr.out_avals();
    let (_, linearized) = linearize_jaxpr(traced.jaxpr, &traced.consts, &point);
    let cts: Vec<Option<Array>> = out_cts
        .iter()
        .zip(&out_avals)
        .map(|(c, aval)| Some(or_zeros(c, aval)))
        .collect();
    linearized
        .backward(&cts)
        .into_iter()
        .zip(in_avals)
        .map(|(ct, aval)| or_zeros(&ct, aval))
        .collect()
}

/// The tangent, or zeros of `aval` when it is a symbolic zero.
#[track_caller]
pub fn or_zeros(t: &Option<Array>, aval: &Aval) -> Array {
    match t {
        Some(t) => t.clone(),
        None => zeros_like_aval(aval),
    }
}

/// Can this value carry a tangent? Only floating-point and complex values do (like JAX's
/// float0 rule for integers and bools).
pub fn differentiable(aval: &Aval) -> bool {
    aval.dtype.is_inexact()
}

/// Evaluates `jaxpr` on `primals` with `tangents` (`None` = zero), returning the outputs and
/// their tangents.
pub fn jvp_jaxpr(
    jaxpr: &Jaxpr,
    consts: &[Array],
    primals: &[Array],
    tangents: &[Option<Array>],
) -> (Vec<Array>, Vec<Option<Array>>) {
    let mut env = Env::new(jaxpr, "autodiff");
    let mut tan: Vec<Option<Array>> = vec![None; jaxpr.avals.len()];
    for (v, c) in jaxpr.constvars.iter().zip(consts) {
        env.set(*v, c.clone());
    }
    for ((v, p), t) in jaxpr.invars.iter().zip(primals).zip(tangents) {
        env.set(*v, p.clone());
        tan[v.0 as usize] = t.clone().filter(|_| differentiable(jaxpr.aval(*v)));
    }
    for e in &jaxpr.eqns {
        let args: Vec<Operand> = e.inputs.iter().map(|a| env.operand(a)).collect();
        let outs = in_scope_of(e, || bind_at(e.prim.clone(), &args, e.loc));
        let in_tangents: Vec<Option<Array>> = e
            .inputs
            .iter()
            .map(|a| match a {
                Atom::Var(v) => tan[v.0 as usize].clone(),
                Atom::Lit(_) => None,
            })
            .collect();
        let out_tangents = if in_tangents.iter().all(Option::is_none) {
            vec![None; outs.len()]
        } else {
            let tangents = in_scope_of(e, || e.prim.jvp(&args, &in_tangents, &outs));
            typed_like(tangents, outs.iter().map(type_sharding_of))
        };
        drop(args);
        for ((v, o), t) in e.outputs.iter().zip(outs).zip(out_tangents) {
            tan[v.0 as usize] = t.filter(|_| differentiable(jaxpr.aval(*v)));
            env.set(*v, o);
        }
    }
    let outs = jaxpr.outvars.iter().map(|a| env.read(a)).collect();
    let out_tangents = jaxpr
        .outvars
        .iter()
        .map(|a| match a {
            Atom::Var(v) => tan[v.0 as usize].clone(),
            Atom::Lit(_) => None,
        })
        .collect();
    (outs, out_tangents)
}

/// The forward pass of reverse mode: every intermediate value, ready for [`Linearized::backward`].
pub struct Linearized {
    jaxpr: Jaxpr,
    env: Env<Array>,
    /// The backward functions of equations whose primitive ran its own forward pass.
    custom: Vec<Option<Backward>>,
    /// Does this variable depend on a differentiated input (so that it needs a cotangent)?
    active: Vec<bool>,
}

/// Evaluates `jaxpr` keeping every intermediate value for a backward pass.
pub fn linearize_jaxpr(
    jaxpr: Jaxpr,
    consts: &[Array],
    primals: &[Array],
) -> (Vec<Array>, Linearized) {
    linearize_jaxpr_reusing(jaxpr, consts, primals, Vec::new())
}

/// [`linearize_jaxpr`], taking the outputs of some equations as given instead of computing
/// them: `reuse[i]`, when present, holds the outputs of equation `i` (remat's saved values).
/// Such an equation is not bound; its reverse-mode rule ([`crate::core::primitive::Primitive::vjp`])
/// still runs in the backward pass, on the given outputs.
pub fn linearize_jaxpr_reusing(
    jaxpr: Jaxpr,
    consts: &[Array],
    primals: &[Array],
    mut reuse: Vec<Option<Vec<Array>>>,
) -> (Vec<Array>, Linearized) {
    let mut env = Env::new(&jaxpr, "autodiff");
    for (v, c) in jaxpr
        .constvars
        .iter()
        .zip(consts)
        .chain(jaxpr.invars.iter().zip(primals))
    {
        env.set(*v, c.clone());
    }
    let mut custom = Vec::with_capacity(jaxpr.eqns.len());
    let mut active = vec![false; jaxpr.avals.len()];
    for v in &jaxpr.invars {
        active[v.0 as usize] = differentiable(jaxpr.aval(*v));
    }
    for (i, e) in jaxpr.eqns.iter().enumerate() {
        let depends = e
            .inputs
            .iter()
            .any(|a| matches!(a, Atom::Var(v) if active[v.0 as usize]));
        for v in &e.outputs {
            active[v.0 as usize] = depends && differentiable(jaxpr.aval(*v));
        }
        if let Some(outs) = reuse.get_mut(i).and_then(Option::take) {
            custom.push(None);
            for (v, o) in e.outputs.iter().zip(outs) {
                env.set(*v, o);
            }
            continue;
        }
        let args: Vec<Operand> = e.inputs.iter().map(|a| env.operand(a)).collect();
        let (outs, backward) = in_scope_of(e, || match e.prim.linearize(&args) {
            Some((outs, backward)) => (outs, Some(backward)),
            None => (bind_at(e.prim.clone(), &args, e.loc), None),
        });
        custom.push(backward);
        drop(args);
        for (v, o) in e.outputs.iter().zip(outs) {
            env.set(*v, o);
        }
    }
    let outs = jaxpr.outvars.iter().map(|a| env.read(a)).collect();
    (
        outs,
        Linearized {
            jaxpr,
            env,
            custom,
            active,
        },
    )
}

impl Linearized {
    /// The cotangents of the inputs given those of the outputs (`None` = zero); `None` for an
    /// input whose cotangent is zero.
    pub fn backward(&self, cts_out: &[Option<Array>]) -> Vec<Option<Array>> {
        let jaxpr = &self.jaxpr;
        let mut ct: Vec<Option<Array>> = vec![None; jaxpr.avals.len()];
        for (a, c) in jaxpr.outvars.iter().zip(cts_out) {
            if let (Atom::Var(v), Some(c)) = (a, c) {
                accumulate(&mut ct, *v, c.clone(), jaxpr);
            }
        }
        for (e, custom) in jaxpr.eqns.iter().zip(&self.custom).rev() {
            let out_cts: Vec<Option<Array>> =
                e.outputs.iter().map(|v| ct[v.0 as usize].take()).collect();
            // Constants (and what is computed from them alone) need no cotangent.
            let wanted: Vec<bool> = e
                .inputs
                .iter()
                .map(|a| matches!(a, Atom::Var(v) if self.active[v.0 as usize]))
                .collect();
            if out_cts.iter().all(Option::is_none) || !wanted.iter().any(|&w| w) {
                continue;
            }
            let in_cts = in_scope_of(e, || match custom {
                Some(backward) => backward(&out_cts, &wanted),
                None => {
                    let args: Vec<Operand> = e.inputs.iter().map(|a| self.env.operand(a)).collect();
                    let outs: Vec<Array> =
                        e.outputs.iter().map(|v| self.env.get(*v).clone()).collect();
                    let cts = e.prim.vjp(&args, &outs, &out_cts, &wanted);
                    typed_like(
                        cts,
                        args.iter().map(|a| match a {
                            Operand::Array(a) => type_sharding_of(a),
                            Operand::Lit(_) => None,
                        }),
                    )
                }
            });
            for ((a, c), &w) in e.inputs.iter().zip(in_cts).zip(&wanted) {
                if let (Atom::Var(v), Some(c)) = (a, c) {
                    if w {
                        accumulate(&mut ct, *v, c, jaxpr);
                    }
                }
            }
        }
        jaxpr
            .invars
            .iter()
            .map(|v| ct[v.0 as usize].take())
            .collect()
    }
}

fn accumulate(ct: &mut [Option<Array>], v: Var, c: Array, jaxpr: &Jaxpr) {
    let c = if c.dtype() != jaxpr.aval(v).dtype {
        c.astype(jaxpr.aval(v).dtype)
    } else {
        c
    };
    let slot = &mut ct[v.0 as usize];
    *slot = Some(match slot.take() {
        None => c,
        Some(prev) => prev + c,
    });
}

/// The tangents or cotangents a rule returned (it ran `relaxed`), each resharded to its
/// primal's type sharding (`likes`) where either has one.
fn typed_like(
    values: Vec<Option<Array>>,
    likes: impl Iterator<Item = Option<Arc<NamedSharding>>>,
) -> Vec<Option<Array>> {
    values
        .into_iter()
        .zip(likes)
        .map(|(v, like)| {
            v.map(|v| match like.is_some() || type_sharding_of(&v).is_some() {
                true => v.retyped_as(like),
                false => v,
            })
        })
        .collect()
}
