//! `jaxrs::numpy`'s products (`dot`, `einsum`, `tensordot`, ...), polynomials, convolutions
//! and functional helpers against JAX 0.10.2 (`tests/golden/jnp_products.json`, written by
//! `tests/golden/gen_jnp_products.py`): values eagerly and under `jit`, JVP and VJP,
//! `check_grads`, and `vmap` with the batch axis first and last (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_bool, p_i64, p_i64s, p_opt_i64, p_str};
use common::golden::{dtype, In};
use jaxrs::numpy as jnp;
use jaxrs::numpy::{CrossOptions, Piece, PolyfitCov, PolyfitOptions, TraceOptions};
use jaxrs::prelude::*;
use serde_json::Value;

fn pet(p: &Value) -> Option<DType> {
    p.get("preferred_element_type").map(dtype)
}

/// The functions the functional helpers' cases apply, by the name the generator gives them.
fn func1d(name: &str, v: &Array) -> Array {
    match name {
        "sumsq" => (v * v).sum(None, false),
        "cumsum" => v.cumsum(0),
        "outer_self" => jnp::outer(v, v),
        other => panic!("unknown func {other}"),
    }
}

/// `jnp.polyfit` with the case's keywords: the coefficients, or with `full` its five
/// results, or with `cov` the coefficients and the covariance.
fn polyfit(p: &Value, x: &[In]) -> Vec<Array> {
    let deg = p_i64(p, "deg") as usize;
    let opts = PolyfitOptions {
        rcond: p.get("rcond").and_then(Value::as_f64),
        w: p_bool(p, "w").then(|| a(x, 2)),
    };
    let (xs, ys) = (a(x, 0), a(x, 1));
    if p_bool(p, "full") {
        let f = jnp::polyfit_full(xs, ys, deg, opts);
        return vec![
            f.coefficients,
            f.residuals,
            f.rank,
            f.singular_values,
            f.rcond,
        ];
    }
    match p.get("cov").and_then(Value::as_str) {
        Some(kind) => {
            let cov = if kind == "unscaled" {
                PolyfitCov::Unscaled
            } else {
                PolyfitCov::Scaled
            };
            let (c, v) = jnp::polyfit_cov(xs, ys, deg, opts, cov);
            vec![c, v]
        }
        None => vec![jnp::polyfit(xs, ys, deg, opts)],
    }
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let arrays: Vec<&Array> = (0..x.len()).map(|i| a(x, i)).collect();
    vec![match op {
        "jnp.dot" => jnp::dot(a(x, 0), a(x, 1), pet(p)),
        "jnp.vdot" => jnp::vdot(a(x, 0), a(x, 1), pet(p)),
        "jnp.inner" => jnp::inner(a(x, 0), a(x, 1), pet(p)),
        "jnp.outer" => jnp::outer(a(x, 0), a(x, 1)),
        "jnp.matmul" => jnp::matmul(a(x, 0), a(x, 1), pet(p)),
        "jnp.matvec" => jnp::matvec(a(x, 0), a(x, 1)),
        "jnp.vecmat" => jnp::vecmat(a(x, 0), a(x, 1)),
        "jnp.vecdot" => jnp::vecdot(a(x, 0), a(x, 1), p_opt_i64(p, "axis"), pet(p)),
        "jnp.tensordot" => match p.get("axes") {
            Some(n) => jnp::tensordot(a(x, 0), a(x, 1), n.as_u64().unwrap() as usize, None),
            None => {
                let (l, r) = (p_i64s(p, "axes_a"), p_i64s(p, "axes_b"));
                jnp::tensordot(a(x, 0), a(x, 1), (&l[..], &r[..]), None)
            }
        },
        "jnp.kron" => jnp::kron(a(x, 0), a(x, 1)),
        "jnp.trace" => {
            let d = TraceOptions::default();
            let options = TraceOptions {
                offset: p_opt_i64(p, "offset").unwrap_or(d.offset),
                axis1: p_opt_i64(p, "axis1").unwrap_or(d.axis1),
                axis2: p_opt_i64(p, "axis2").unwrap_or(d.axis2),
            };
            jnp::trace(a(x, 0), options)
        }
        "jnp.einsum" => jnp::einsum(p_str(p, "spec"), &arrays, pet(p)),
        "jnp.cross" => {
            let d = CrossOptions::default();
            let options = CrossOptions {
                axisa: p_opt_i64(p, "axisa").unwrap_or(d.axisa),
                axisb: p_opt_i64(p, "axisb").unwrap_or(d.axisb),
                axisc: p_opt_i64(p, "axisc").unwrap_or(d.axisc),
                axis: p_opt_i64(p, "axis"),
            };
            jnp::cross(a(x, 0), a(x, 1), options)
        }
        "jnp.convolve" => jnp::convolve(
            a(x, 0),
            a(x, 1),
            p.get("mode").and_then(Value::as_str),
            None,
        ),
        "jnp.correlate" => jnp::correlate(
            a(x, 0),
            a(x, 1),
            p.get("mode").and_then(Value::as_str),
            None,
        ),
        "jnp.polyval" => jnp::polyval(a(x, 0), a(x, 1)),
        "jnp.polyadd" => jnp::polyadd(a(x, 0), a(x, 1)),
        "jnp.polysub" => jnp::polysub(a(x, 0), a(x, 1)),
        "jnp.polymul" => jnp::polymul(a(x, 0), a(x, 1), Some(p_bool(p, "trim_leading_zeros"))),
        "jnp.polyder" => jnp::polyder(a(x, 0), p_opt_i64(p, "m").map(|m| m as usize)),
        "jnp.polyint" => jnp::polyint(
            a(x, 0),
            p_opt_i64(p, "m").map(|m| m as usize),
            p_bool(p, "k").then(|| a(x, 1)),
        ),
        "jnp.polydiv" => {
            let (q, r) = jnp::polydiv(a(x, 0), a(x, 1), Some(p_bool(p, "trim_leading_zeros")));
            return vec![q, r];
        }
        "jnp.poly" => jnp::poly(a(x, 0)),
        // In a canonical order: the eigenvalue kernel's need not be LAPACK's.
        "jnp.roots" => jnp::sort_complex(&jnp::roots(a(x, 0), p_bool(p, "strip_zeros"))),
        "jnp.polyfit" => return polyfit(p, x),
        "jnp.apply_along_axis" => {
            let name = p_str(p, "func");
            jnp::apply_along_axis(|v: &Array| func1d(name, v), p_i64(p, "axis"), a(x, 0))
        }
        "jnp.apply_over_axes" => {
            let f = |v: &Array, axis: i64| match p_str(p, "func") {
                "sum" => v.sum(axis, false),
                "cumsum" => v.cumsum(axis),
                other => panic!("unknown func {other}"),
            };
            jnp::apply_over_axes(f, a(x, 0), &p_i64s(p, "axes"))
        }
        "jnp.vectorize" => {
            let args: Vec<Array> = arrays.iter().map(|&v| v.clone()).collect();
            match p_str(p, "func") {
                "pick" => jnp::vectorize(
                    |v: &[Array]| where_(v[0].gt(&v[1]), &v[0] - &v[1], &v[0] * &v[1]),
                    &[],
                )(&args),
                "sin2" => jnp::vectorize(|v: &[Array]| v[0].sin() * 2.0, &[])(&args),
                other => panic!("unknown func {other}"),
            }
        }
        "jnp.fromfunction" => {
            let shape: Vec<usize> = p_i64s(p, "shape").iter().map(|&s| s as usize).collect();
            let dt = dtype(&p["dtype"]);
            match p_str(p, "func") {
                "affine" => jnp::fromfunction(|ij: &[Array]| &ij[0] * 3 + &ij[1], &shape, dt),
                "sin_sq" => {
                    jnp::fromfunction(|ij: &[Array]| ij[0].sin() + &ij[1] * &ij[1], &shape, dt)
                }
                "half" => jnp::fromfunction(|i: &[Array]| &i[0] * 0.5 + 1.0, &shape, dt),
                other => panic!("unknown func {other}"),
            }
        }
        "jnp.piecewise" => {
            let v = a(x, 0);
            match p_str(p, "which") {
                "three" => {
                    let (neg, sq) = (|x: &Array| -x, |x: &Array| x * x);
                    jnp::piecewise(
                        v,
                        &[&v.lt(0.0), &v.gt(1.0)],
                        &[Piece::Fn(&neg), Piece::Fn(&sq), Piece::Const(0.5)],
                    )
                }
                "one" => {
                    let sin = |x: &Array| x.sin();
                    jnp::piecewise(v, &[&v.lt(0.0)], &[Piece::Fn(&sin)])
                }
                "ints" => {
                    let inc = |x: &Array| x + 1;
                    jnp::piecewise(
                        v,
                        &[&v.lt(0), &v.ge(0)],
                        &[Piece::Const(-1.0), Piece::Fn(&inc)],
                    )
                }
                other => panic!("unknown piecewise {other}"),
            }
        }
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn jnp_products_match_jax() {
    assert!(check_file("jnp_products", apply) >= 130);
}
