//! `jaxrs::lax::custom_root` and `custom_linear_solve` against JAX 0.10.2
//! (`tests/golden/lax_solves.json`, written by `tests/golden/gen_lax_solves.py`): each case's
//! outputs are the solution and JAX's gradient of `sum(sin(solution))` with respect to the
//! parameters, eagerly and under `jit`. The solvers are the generator's, written again here.

mod common;

use common::cases::{a, check_file, p_bool, p_str};
use common::golden::In;
use jaxrs::lax;
use jaxrs::prelude::*;
use serde_json::Value;

fn newton(g: &dyn Fn(&Array) -> Array, y0: &Array) -> Array {
    let mut y = y0.clone();
    for _ in 0..30 {
        let d = (g(&(&y + 1e-4)) - g(&(&y - 1e-4))) / 2e-4;
        y = &y - g(&y) / d;
    }
    y
}

fn diag_solve(g: &dyn Fn(&Array) -> Array, y: &Array) -> Array {
    y / g(&jaxrs::numpy::ones_like(y, None))
}

fn vdot(a: &Array, b: &Array) -> Array {
    (a * b).sum(None, false)
}

fn cg(matvec: &dyn Fn(&Array) -> Array, b: &Array) -> Array {
    let nonzero = |v: &Array| where_(v.eq(0.0), jaxrs::numpy::ones_like(v, None), v);
    let mut x = Array::zeros_like(b);
    let mut r = b - matvec(&x);
    let mut p = r.clone();
    for _ in 0..8 {
        let rr = vdot(&r, &r);
        let ap = matvec(&p);
        let alpha = &rr / nonzero(&vdot(&p, &ap));
        x = &x + &alpha * &p;
        let r_new = &r - &alpha * &ap;
        let beta = vdot(&r_new, &r_new) / nonzero(&rr);
        p = &r_new + &beta * &p;
        r = r_new;
    }
    x
}

fn cramer2(matvec: &dyn Fn(&Array) -> Array, b: &Array) -> Array {
    let e = |i: usize| Array::from_vec(vec![(i == 0) as u8 as f64, (i == 1) as u8 as f64], &[2]);
    let (c0, c1) = (matvec(&e(0)), matvec(&e(1)));
    let at = |v: &Array, i: i64| v.index(i);
    let det = at(&c0, 0) * at(&c1, 1) - at(&c1, 0) * at(&c0, 1);
    Array::stack(
        &[
            (at(b, 0) * at(&c1, 1) - at(&c1, 0) * at(b, 1)) / &det,
            (at(&c0, 0) * at(b, 1) - at(b, 0) * at(&c0, 1)) / &det,
        ],
        0,
    )
}

fn loss(y: &Array) -> Array {
    y.sin().sum(None, false)
}

fn root(name: &str, x: &[In]) -> Vec<Array> {
    let y0 = a(x, x.len() - 1).clone();
    let one = |f: fn(&Array, &Array) -> Array| {
        let p = a(x, 0).clone();
        let y0b = y0.clone();
        let solution = move |p: Array| lax::custom_root(f, &p, &y0b, newton, diag_solve);
        let y = solution(p.clone());
        vec![y, grad(move |p: Array| loss(&solution(p)))(p)]
    };
    match name {
        "sqrt_cubed" => one(|p, y| y * y - p * p * p),
        "cubic" => one(|p, y| y * y * y + y - p),
        "ratio" => {
            let f = |p: &(Array, Array), y: &Array| &p.0 * y - &p.1;
            let p = (a(x, 0).clone(), a(x, 1).clone());
            let solution =
                move |p: (Array, Array)| lax::custom_root(f, &p, &y0, newton, diag_solve);
            let y = solution(p.clone());
            let (ga, gb) = grad(move |p: (Array, Array)| loss(&solution(p)))(p);
            vec![y, ga, gb]
        }
        other => panic!("unknown f {other}"),
    }
}

fn linear(symmetric: bool, x: &[In]) -> Vec<Array> {
    let (m, b) = (a(x, 0).clone(), a(x, 1).clone());
    let solution = move |m: Array, b: Array| {
        let matvec = |m: &Array, v: &Array| m.matmul(v);
        if symmetric {
            lax::custom_linear_solve(
                matvec,
                &m,
                &b,
                cg,
                None::<fn(&dyn Fn(&Array) -> Array, &Array) -> Array>,
                true,
            )
        } else {
            lax::custom_linear_solve(matvec, &m, &b, cramer2, Some(cramer2), false)
        }
    };
    let y = solution(m.clone(), b.clone());
    let (gm, gb) = grad(move |(m, b): (Array, Array)| loss(&solution(m, b)))((m, b));
    vec![y, gm, gb]
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    match op {
        "lax.custom_root" => root(p_str(p, "f"), x),
        "lax.custom_linear_solve" => linear(p_bool(p, "symmetric"), x),
        other => panic!("no case for {other}"),
    }
}

#[test]
fn solutions_and_their_implicit_gradients_match_jax() {
    assert!(check_file("lax_solves", apply) >= 6);
}

#[test]
#[should_panic(expected = "needs transpose_solve")]
fn an_unsymmetric_solve_without_its_transpose_has_no_gradient() {
    let m = Array::from_vec(vec![2.0f64, 1.0, 0.0, 3.0], &[2, 2]);
    let b = Array::from_vec(vec![1.0f64, 1.0], &[2]);
    grad(|b: Array| {
        lax::custom_linear_solve(
            |m: &Array, v: &Array| m.matmul(v),
            &m,
            &b,
            cramer2,
            None::<fn(&dyn Fn(&Array) -> Array, &Array) -> Array>,
            false,
        )
        .sum(None, false)
    })(b);
}
