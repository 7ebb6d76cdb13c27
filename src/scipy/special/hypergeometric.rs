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

/// `finfo(dtype).eps * 50`: how near an integer JAX takes a parameter to be that integer.
fn integer_tol(x: &Array) -> f64 {
    machine_eps(x.dtype()) * 50.0
}

/// `x` is a whole number (`x % 1 == 0`).
fn is_whole(x: &Array) -> Array {
    x.rem(1.0).eq(0.0)
}

/// The Taylor series of `2F1` (Eq. 4.1 of Pearson, Olver and Porter): at most 250 terms, until
/// a term falls below `eps` of the sum.
fn hyp2f1_serie(a: &Array, b: &Array, c: &Array, x: &Array) -> Array {
    let rtol = machine_eps(x.dtype());
    let done = elementwise_while(
        |s| {
            s[1].lt(250.0)
                .bitwise_and(s[2].abs().gt(&(&s[0].abs() * rtol)))
        },
        |s| {
            let (serie, k, term) = (&s[0], &s[1], &s[2]);
            let ratio = &(&(&(&(&(a + k) - 1.0) * &(&(b + k) - 1.0)) / &(&(c + k) - 1.0)) / k) * x;
            vec![serie + term, k + 1.0, term * &ratio]
        },
        vec![full_like(x, 0.0), full_like(x, 1.0), full_like(x, 1.0)],
    );
    done[0].clone()
}

/// The terminating series, a polynomial when `a` or `b` is a non-positive integer: JAX's
/// `fori_loop(1, |a| + 1)` over float bounds, a while loop per element.
fn hyp2f1_terminal(a: &Array, b: &Array, c: &Array, x: &Array) -> Array {
    let eps = integer_tol(x);
    // The loop runs to the negative integer of larger magnitude, unless a non-positive integer
    // `c` above `b` would make the series divide by zero first.
    let c_pole_first = is_whole(c).bitwise_and(c.le(0.0)).bitwise_and(c.gt(b));
    let swap = b
        .lt(a)
        .bitwise_and((b - &b.round()).abs().lt(eps))
        .bitwise_and(c_pole_first.logical_not());
    let (a, b) = (where_(&swap, b, a).abs(), where_(&swap, a, b));
    let upper = &a + 1.0;
    let done = elementwise_while(
        |s| s[0].lt(&upper),
        |s| {
            let (i, serie, term) = (&s[0], &s[1], &s[2]);
            let ratio =
                &(&(&(&-(&(&a - i) + 1.0) / &(&(c + i) - 1.0)) * &(&(&b + i) - 1.0)) / i) * x;
            let term = term * &ratio;
            vec![i + 1.0, serie + &term, term]
        },
        vec![full_like(x, 1.0), full_like(x, 1.0), full_like(x, 1.0)],
    );
    done[1].clone()
}

/// The series, or near `x = 1` with `c - a - b` an integer the digamma transformation, or the
/// terminating series: JAX evaluates all three and selects.
fn hyp2f1_terminal_or_serie(a: &Array, b: &Array, c: &Array, x: &Array) -> Array {
    let eps = integer_tol(x);
    let d = &(c - a) - b;
    let near_int = |v: &Array| (v - &v.round()).abs().lt(eps);
    let neg_int_a = a.le(0.0).bitwise_and(near_int(a));
    let neg_int_b = b.le(0.0).bitwise_and(near_int(b));
    let terminates = neg_int_a.bitwise_or(&neg_int_b);
    let i32_of = |v: i32| Array::full(x.shape(), v as f64, crate::DType::I32);
    let index = where_(
        x.gt(0.9).bitwise_and(terminates.logical_not()),
        where_((&d - &d.round()).abs().ge(eps), i32_of(0), i32_of(1)),
        where_(&terminates, i32_of(2), i32_of(0)),
    );
    lax::select_n(
        &index,
        &[
            &hyp2f1_serie(a, b, c, x),
            &hyp2f1_digamma_transform(a, b, c, x),
            &hyp2f1_terminal(a, b, c, x),
        ],
    )
}

/// `ψ(1)` as JAX computes `digamma(1.0)`: in float64 (a weakly typed Python float), rounded
/// to `x`'s dtype where it is added, which in float32 differs from float32's own `ψ(1)`.
const DIGAMMA_ONE: f64 = -0.577_215_664_901_533_4;

/// `2F1` near `x = 1` for an integer `c - a - b` (AMS 55, 15.3.10 to 15.3.12), as JAX writes
/// it (after Cephes's `hys2f1`): the logarithmic series, up to 250 terms, and the finite sum.
fn hyp2f1_digamma_transform(a: &Array, b: &Array, c: &Array, x: &Array) -> Array {
    let rtol = machine_eps(x.dtype());
    let zero = full_like(x, 0.0);
    let d = &(c - a) - b;
    let s: Array = 1.0 - x;
    let rd = d.round();
    let nonneg = rd.ge(0.0);
    let e = where_(&nonneg, &d, &-&d);
    let d1 = where_(&nonneg, &d, &zero);
    let d2 = where_(&nonneg, &zero, &d);
    let ard = where_(&nonneg, &rd, &-&rd).astype(crate::DType::I32);
    let ax = s.log();

    let psi_one_e = &(&e + 1.0).digamma() + DIGAMMA_ONE;
    let y = &(&(&(&psi_one_e - &(a + &d1).digamma()) - &(b + &d1).digamma()) - &ax)
        / &gamma(&(&e + 1.0));
    let p = &(&(&(a + &d1) * &(b + &d1)) * &s) / &gamma(&(&e + 2.0));
    // Carry (p, q, t, y); q starts at y, so the first test compares y with itself.
    let done = elementwise_while(
        |st| {
            st[2]
                .lt(250.0)
                .bitwise_and(st[1].abs().ge(&(&st[3].abs() * rtol)))
        },
        |st| {
            let (p, t, y) = (&st[0], &st[2], &st[3]);
            let r = &(&(&(&(t + 1.0).digamma() + &(&(t + 1.0) + &e).digamma())
                - &(&(a + t) + &d1).digamma())
                - &(&(b + t) + &d1).digamma())
                - &ax;
            let q = p * &r;
            let y = y + &q;
            let p = p * &(&(&s * &(&(a + t) + &d1)) / &(t + 1.0));
            let p = &p * &(&(&(b + t) + &d1) / &(&(t + 1.0) + &e));
            vec![p, q, t + 1.0, y]
        },
        vec![p, y.clone(), full_like(x, 1.0), y],
    );
    let y = done[3].clone();

    // The finite sum of `|c - a - b| - 1` terms: JAX's `fori_loop(1, ard)`.
    let sum = elementwise_while(
        |st| st[0].lt(&ard),
        |st| {
            let (i, p, t, y1) = (&st[0], &st[1], &st[2], &st[3]);
            let r = &(-&e + 1.0) + t;
            let p = p * &(&(&(&s * &(&(a + t) + &d2)) * &(&(b + t) + &d2)) / &r);
            let t = t + 1.0;
            let p = &p / &t;
            let y1 = y1 + &p;
            vec![i + 1, p, t, y1]
        },
        vec![
            Array::full(x.shape(), 1.0, crate::DType::I32),
            full_like(x, 1.0),
            full_like(x, 0.0),
            full_like(x, 1.0),
        ],
    );
    let gc = gamma(c);
    let y1 = &sum[3] * &(&(&gamma(&e) * &gc) / &(&gamma(&(a + &d1)) * &gamma(&(b + &d1))));
    let ys = &y * &(&gc / &(&gamma(&(a + &d2)) * &gamma(&(b + &d2))));
    let ys = where_(ard.bitwise_and(1).ne(0), &-&ys, &ys);
    let q = s.pow(&rd);
    let finite_sum = where_(rd.gt(0.0), &(&ys * &q) + &y1, &ys + &(&y1 * &q));

    where_(
        rd.eq(0.0),
        &(&y * &gc) / &(&gamma(a) * &gamma(b)),
        &finite_sum,
    )
}

fn hyp2f1_value(a: &Array, b: &Array, c: &Array, x: &Array) -> Array {
    let eps = integer_tol(x);
    let d = &(c - a) - b;
    let s: Array = 1.0 - x;
    let ca = c - a;
    let cb = c - b;
    let id = d.round();

    let i32_of = |v: i32| Array::full(x.shape(), v as f64, crate::DType::I32);
    let one = x
        .eq(0.0)
        .bitwise_or(a.eq(0.0).bitwise_or(b.eq(0.0)).bitwise_and(c.ne(0.0)));
    let c_pole = c.eq(0.0).bitwise_or(c.lt(0.0).bitwise_and(is_whole(c)));
    // Euler's transformation for `c - a - b <= -1`, unless `x > 1` with it fractional.
    let euler = d.le(-1.0).bitwise_and(
        (&d - &id)
            .abs()
            .ge(eps)
            .bitwise_and(s.lt(0.0))
            .logical_not(),
    );
    let index = where_(
        &one,
        i32_of(0),
        where_(
            &c_pole,
            i32_of(1),
            where_(
                &euler,
                i32_of(2),
                where_(
                    d.le(0.0).bitwise_and(x.eq(1.0)),
                    i32_of(1),
                    where_(
                        x.lt(1.0).bitwise_and(b.eq(c)),
                        i32_of(3),
                        where_(
                            x.lt(1.0).bitwise_and(a.eq(c)),
                            i32_of(4),
                            where_(
                                x.gt(1.0),
                                i32_of(1),
                                where_(x.eq(1.0), i32_of(5), i32_of(6)),
                            ),
                        ),
                    ),
                ),
            ),
        ),
    );
    lax::select_n(
        &index,
        &[
            &full_like(x, 1.0),
            &full_like(x, f64::INFINITY),
            &(&s.pow(&d) * &hyp2f1_terminal_or_serie(&ca, &cb, c, x)),
            &s.pow(&-a),
            &s.pow(&-b),
            &(&(&gamma(c) * &gamma(&d)) / &(&gamma(&ca) * &gamma(&cb))),
            &hyp2f1_terminal_or_serie(a, b, c, x),
        ],
    )
}

/// `∂ 2F1` in `a`, `b` or `c`: the series `Σ term_k (ψ-difference)_k` JAX differentiates with.
fn hyp2f1_parameter_derivative(
    a: &Array,
    b: &Array,
    c: &Array,
    x: &Array,
    digamma_term: impl Fn(&Array) -> Array,
) -> Array {
    series(
        x,
        (full_like(x, 0.0), &(&(a * b) / c) * x),
        |sum, k, term| {
            let sum = sum + &(term * &digamma_term(k));
            let ratio = &(&(&(&(a + k) * &(b + k)) / &(c + k)) / &(k + 1.0)) * x;
            (sum, term * &ratio)
        },
    )
}

/// The Gauss hypergeometric function `2F1(a, b; c; x) = Σ (a)ₖ (b)ₖ / ((c)ₖ k!) xᵏ`
/// (`jax.scipy.special.hyp2f1`), for real arguments, by JAX's (Pearson, Olver and Porter's)
/// selections: 1 at `x = 0` and at `a = 0` or `b = 0` (with `c != 0`); `inf` at a
/// non-positive integer `c`, at `x > 1`, and at `x = 1` with `c - a - b <= 0`; Euler's
/// transformation `(1 - x)^(c-a-b) 2F1(c - a, c - b; c; x)` for `c - a - b <= -1`;
/// `(1 - x)^(-a)` at `b = c` (and the same in `b` at `a = c`); Gauss's `Γ(c) Γ(c - a - b) /
/// (Γ(c - a) Γ(c - b))` at `x = 1`; otherwise the terminating series for a non-positive integer
/// `a` or `b`, the digamma transformation for `x > 0.9` with `c - a - b` an integer, and the
/// Taylor series (at most 250 terms) elsewhere, `x < -1` included, where it does not converge,
/// as in JAX. The derivatives are JAX's series in `a`, `b` and `c` (valid for `|x| < 1`) and
/// `(a b / c) 2F1(a + 1, b + 1; c + 1; x)` in `x`. As JAX warns, large values lose accuracy,
/// in float32 most.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::special::hyp2f1;
///
/// // 2F1(1, 1; 2; x) = -log(1 - x) / x.
/// let one = Array::scalar(1.0f64);
/// let x = Array::from_vec(vec![0.5f64, -0.5], &[2]);
/// let f = hyp2f1(&one, &one, &Array::scalar(2.0f64), &x).to_vec::<f64>();
/// assert!((f[0] - 2.0 * 2f64.ln()).abs() < 1e-14);
/// assert!((f[1] - 2.0 * 1.5f64.ln()).abs() < 1e-14);
/// ```
#[track_caller]
pub fn hyp2f1(a: &Array, b: &Array, c: &Array, x: &Array) -> Array {
    let args = promote_broadcast("hyp2f1", &[a, b, c, x]);
    real_only("hyp2f1", &args[3]);
    let (a, b, c, x) = (
        args[0].clone(),
        args[1].clone(),
        args[2].clone(),
        args[3].clone(),
    );
    custom_jvp(
        "hyp2f1",
        |(a, b, c, x): (Array, Array, Array, Array)| hyp2f1_value(&a, &b, &c, &x),
        |(a, b, c, x): (Array, Array, Array, Array),
         (da, db, dc, dx): (Array, Array, Array, Array)| {
            let out = hyp2f1_value(&a, &b, &c, &x);
            let d_a =
                hyp2f1_parameter_derivative(&a, &b, &c, &x, |k| &(&a + k).digamma() - &a.digamma());
            let d_b =
                hyp2f1_parameter_derivative(&a, &b, &c, &x, |k| &(&b + k).digamma() - &b.digamma());
            let d_c =
                hyp2f1_parameter_derivative(&a, &b, &c, &x, |k| &c.digamma() - &(&c + k).digamma());
            // Through the public function, as JAX's rule calls `hyp2f1` itself, so a second
            // derivative in `x` takes this rule again.
            let d_x = &(&(&a * &b) / &c) * &hyp2f1(&(&a + 1.0), &(&b + 1.0), &(&c + 1.0), &x);
            let t = &(&(&(&d_a * &da) + &(&d_b * &db)) + &(&d_c * &dc)) + &(&d_x * &dx);
            (out, t)
        },
    )
    .call((a, b, c, x))
}
