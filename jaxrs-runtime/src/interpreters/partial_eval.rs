//! Partial evaluation: run the part of a jaxpr whose inputs are known now and keep the rest
//! as a smaller jaxpr of the unknown inputs, as JAX's `partial_eval` does for `linearize`.

use crate::core::array::Array;
use crate::core::ir::{Atom, ClosedJaxpr, Env, Jaxpr, Var};
use crate::core::trace::{bind_at, in_scope_of, Operand};

/// What [`partial_eval_jaxpr`] gives: the outputs known now, and the program of the rest.
pub struct PartialEval {
    /// Each output of the jaxpr: its value when it is known now, `None` when it depends on
    /// an unknown input.
    pub known_outs: Vec<Option<Array>>,
    /// The rest of the program: its inputs are the unknown inputs, in order, its constants
    /// the known values it reads (the residuals), its outputs the unknown outputs, in order.
    pub staged: ClosedJaxpr,
}

/// Evaluates every equation of `jaxpr` whose inputs are all known (the constants, and the
/// inputs given in `known`), and stages the rest (see [`PartialEval`]).
///
/// An equation is evaluated at most once, here, so a side effect of the known part (a
/// `debug_print!`) happens once, as in JAX.
pub fn partial_eval_jaxpr(jaxpr: &Jaxpr, consts: &[Array], known: &[Option<Array>]) -> PartialEval {
    assert_eq!(
        known.len(),
        jaxpr.invars.len(),
        "partial_eval: argument count"
    );
    let mut env: Env<Array> = Env::new(jaxpr, "partial_eval");
    for (v, c) in jaxpr.constvars.iter().zip(consts) {
        env.set(*v, c.clone());
    }
    let mut unknown_invars = Vec::new();
    for (v, k) in jaxpr.invars.iter().zip(known) {
        match k {
            Some(value) => env.set(*v, value.clone()),
            None => unknown_invars.push(*v),
        }
    }
    let is_known = |env: &Env<Array>, a: &Atom| match a {
        Atom::Var(v) => env.try_get(*v).is_some(),
        Atom::Lit(_) => true,
    };
    let mut staged = Vec::new();
    for e in &jaxpr.eqns {
        if e.inputs.iter().all(|a| is_known(&env, a)) {
            let ops: Vec<Operand> = e.inputs.iter().map(|a| env.operand(a)).collect();
            let outs = in_scope_of(e, || bind_at(e.prim.clone(), &ops, e.loc));
            drop(ops);
            for (v, o) in e.outputs.iter().zip(outs) {
                env.set(*v, o);
            }
        } else {
            staged.push(e.clone());
        }
    }
    let known_outs: Vec<Option<Array>> = jaxpr
        .outvars
        .iter()
        .map(|a| is_known(&env, a).then(|| env.read(a)))
        .collect();
    let unknown_outs: Vec<Atom> = jaxpr
        .outvars
        .iter()
        .filter(|a| !is_known(&env, a))
        .cloned()
        .collect();
    // The residuals: known variables the staged part reads, each once, in first-use order.
    let mut residuals: Vec<Var> = Vec::new();
    let mut is_residual = vec![false; jaxpr.avals.len()];
    for a in staged.iter().flat_map(|e| e.inputs.iter()) {
        if let Atom::Var(v) = a {
            if env.try_get(*v).is_some() && !is_residual[v.0 as usize] {
                is_residual[v.0 as usize] = true;
                residuals.push(*v);
            }
        }
    }
    let consts = residuals.iter().map(|v| env.get(*v).clone()).collect();
    PartialEval {
        known_outs,
        staged: ClosedJaxpr {
            jaxpr: Jaxpr {
                constvars: residuals,
                invars: unknown_invars,
                eqns: staged,
                outvars: unknown_outs,
                avals: jaxpr.avals.clone(),
            },
            consts,
        },
    }
}
