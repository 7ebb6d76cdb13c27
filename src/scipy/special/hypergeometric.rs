//! The confluent and Gauss hypergeometric functions `hyp1f1` and `hyp2f1`: the series,
//! asymptotic expansions and transformations of Pearson, Olver and Porter (2014), as JAX
//! 0.10.2 writes them, each loop running per element as JAX's `jnp.vectorize` runs it.

use super::expint::{elementwise_while, machine_eps};
use super::{full_like, gamma, real_only};
use crate::{custom_jvp, lax, where_, Array};
use jaxrs_runtime::promote_args_inexact;

/// Promotes the operands together, as `promote_args_inexact`, and broadcasts them to one shape,
/// as `jnp.vectorize`.
#[track_caller]
fn promote_broadcast(op: &str, args: &[&Array]) -> Vec<Array> {
    let mut promoted: Vec<Array> = args.iter().map(|a| (*a).clone()).collect();
    // Pairwise promotion reaches the common dtype of all of them.
    for _ in 0..2 {
        for i in 1..promoted.len() {
            let (a, b) = promote_args_inexact(op, &promoted[0], &promoted[i]);
            promoted[0] = a;
            promoted[i] = b;
        }
    }
    let shapes: Vec<&[usize]> = promoted.iter().map(|a| a.shape()).collect();
    let shape = crate::numpy::broadcast_shapes(&shapes);
    promoted.iter().map(|a| a.broadcast_to(&shape)).collect()
}

/// `Σ_k term_k` by a loop that stops once the term is below `eps` of the sum, or at 250 terms
/// (JAX's stopping rule for these series): carry `(sum, k, term)`, `step` giving the next sum
/// and term from the current ones.
fn series(
    x: &Array,
    init: (Array, Array),
    step: impl Fn(&Array, &Array, &Array) -> (Array, Array),
) -> Array {
    let eps = machine_eps(x.dtype());
    let (sum, term) = init;
    let done = elementwise_while(
        |c| {
            c[1].lt(250.0)
                .bitwise_and((&c[2].abs() / &c[0].abs()).gt(eps))
        },
        |c| {
            let (sum, term) = step(&c[0], &c[1], &c[2]);
            vec![sum, &c[1] + 1.0, term]
        },
        vec![sum, full_like(x, 1.0), term],
    );
    done[0].clone()
}

/// The Taylor series of `1F1` (for `|x| < 100`).
fn hyp1f1_series(a: &Array, b: &Array, x: &Array) -> Array {
    series(x, (full_like(x, 1.0), &(a / b) * x), |sum, k, term| {
        let ratio = &(&(&(a + k) / &(b + k)) * x) / &(k + 1.0);
        (sum + term, term * &ratio)
    })
}

/// The asymptotic expansion of `1F1` for large `|x|`.
fn hyp1f1_asymptotic(a: &Array, b: &Array, x: &Array) -> Array {
    let b_a = b - a;
    let one_a = 1.0 - a;
    let sum = series(
        x,
        (full_like(x, 1.0), &(&b_a * &one_a) / x),
        |sum, k, term| {
            let ratio = &(&(&(&b_a + k) * &(&one_a + k)) / &(k + 1.0)) / x;
            (sum + term, term * &ratio)
        },
    );
    &(&(&(&gamma(b) / &gamma(a)) * &x.exp()) * &x.pow(&(a - b))) * &sum
}

fn hyp1f1_value(a: &Array, b: &Array, x: &Array) -> Array {
    let result = where_(
        x.abs().lt(100.0),
        hyp1f1_series(a, b, x),
        hyp1f1_asymptotic(a, b, x),
    );
    let a_nonzero = a.ne(0.0);
    let index = &(&a.eq(0.0).astype(crate::DType::I32)
        + &(a.eq(b).bitwise_and(&a_nonzero).astype(crate::DType::I32) * 2))
        + &(b.eq(0.0).bitwise_and(&a_nonzero).astype(crate::DType::I32) * 3);
    lax::select_n(
        &index,
        &[
            &result,
            &full_like(x, 1.0),
            &x.exp(),
            &full_like(x, f64::INFINITY),
        ],
    )
}

/// `∂ₐ 1F1` (or `∂_b`): the series `Σ term_k (ψ-difference)_k` that JAX differentiates with.
fn hyp1f1_parameter_derivative(
    a: &Array,
    b: &Array,
    x: &Array,
    digamma_term: impl Fn(&Array) -> Array,
) -> Array {
    series(x, (full_like(x, 0.0), &(a / b) * x), |sum, k, term| {
        let sum = sum + &(term * &digamma_term(k));
        let ratio = &(&(&(a + k) / &(b + k)) * x) / &(k + 1.0);
        (sum, term * &ratio)
    })
}

/// The confluent hypergeometric function `1F1(a; b; x) = Σ (a)ₖ / ((b)ₖ k!) xᵏ`
/// (`jax.scipy.special.hyp1f1`), for real arguments: the Taylor series for `|x| < 100`, the
/// asymptotic expansion beyond (each up to 250 terms), 1 at `a = 0` (also where `a = b = 0`,
/// unlike scipy), `eˣ` at `a = b`, `inf` at `b = 0`. The derivatives are JAX's series in `a`
/// and `b` and `(a / b) 1F1(a + 1; b + 1; x)` in `x`. As JAX warns, large values lose accuracy,
/// in float32 most.
#[track_caller]
pub fn hyp1f1(a: &Array, b: &Array, x: &Array) -> Array {
    let args = promote_broadcast("hyp1f1", &[a, b, x]);
    real_only("hyp1f1", &args[2]);
    let (a, b, x) = (args[0].clone(), args[1].clone(), args[2].clone());
    custom_jvp(
        "hyp1f1",
        |(a, b, x): (Array, Array, Array)| hyp1f1_value(&a, &b, &x),
        |(a, b, x): (Array, Array, Array), (da, db, dx): (Array, Array, Array)| {
            let out = hyp1f1_value(&a, &b, &x);
            let d_a =
                hyp1f1_parameter_derivative(&a, &b, &x, |k| &(&a + k).digamma() - &a.digamma());
            let d_b =
                hyp1f1_parameter_derivative(&a, &b, &x, |k| &b.digamma() - &(&b + k).digamma());
            let d_x = &(&a / &b) * &hyp1f1_value(&(&a + 1.0), &(&b + 1.0), &x);
            let t = &(&(&d_a * &da) + &(&d_b * &db)) + &(&d_x * &dx);
            (out, t)
        },
    )
    .call((a, b, x))
}
