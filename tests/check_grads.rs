//! Every differentiable primitive passes `check_grads` at order 2 in float64, in forward and
//! reverse mode (order 1 where a primitive is only once differentiable), on two shapes
//! including a broadcasting case.

use jaxrs::prelude::*;
use jaxrs::{check_grads, check_grads_with, stop_gradient, where_, DotDims, Modes};

/// Deterministic float64 values in [lo, hi].
fn vals(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

fn arr(shape: &[usize], seed: u64, lo: f64, hi: f64) -> Array {
    let n = shape.iter().product();
    Array::from_f64s(&vals(n, seed, lo, hi), shape, DType::F64)
}

/// The two shape configurations of each unary test: a matrix and a 3-d array.
const UNARY_SHAPES: [&[usize]; 2] = [&[3, 4], &[2, 1, 3]];

fn unary(name: &str, f: fn(&Array) -> Array, lo: f64, hi: f64, order: usize) {
    for (i, shape) in UNARY_SHAPES.iter().enumerate() {
        let x = arr(shape, 7 + i as u64, lo, hi);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_grads(|x: Array| f(&x), &x, order)
        }));
        if let Err(e) = result {
            let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
            panic!("{name} on {shape:?}: {msg}");
        }
    }
}

#[test]
fn unary_math() {
    unary("neg", |x| -x, -2.0, 2.0, 2);
    unary("exp", Array::exp, -2.0, 2.0, 2);
    unary("log", Array::log, 0.5, 3.0, 2);
    unary("log1p", Array::log1p, -0.5, 2.0, 2);
    unary("expm1", Array::expm1, -2.0, 2.0, 2);
    unary("tanh", Array::tanh, -2.0, 2.0, 2);
    unary("logistic", Array::logistic, -3.0, 3.0, 2);
    unary("sin", Array::sin, -3.0, 3.0, 2);
    unary("cos", Array::cos, -3.0, 3.0, 2);
    unary("sqrt", Array::sqrt, 0.5, 3.0, 2);
    unary("rsqrt", Array::rsqrt, 0.5, 3.0, 2);
    unary("abs", Array::abs, 0.2, 2.0, 2);
    unary("abs of negatives", Array::abs, -2.0, -0.2, 2);
    unary("erf", Array::erf, -2.0, 2.0, 2);
    unary("relu", Array::relu, 0.1, 2.0, 2);
    unary("gelu", Array::gelu, -2.0, 2.0, 2);
    unary("gelu_exact", Array::gelu_exact, -2.0, 2.0, 2);
    unary("integer_pow 3", |x| x.powi(3), -2.0, 2.0, 2);
    unary("integer_pow -2", |x| x.powi(-2), 0.5, 2.0, 2);
}

#[test]
fn casts_between_float_dtypes() {
    let x = arr(&[3, 4], 9, -1.0, 1.0).astype(DType::F32);
    check_grads(|x: Array| x.astype(DType::F64).sin(), &x, 2);
    let y = arr(&[3, 4], 10, -1.0, 1.0);
    check_grads(|y: Array| y.astype(DType::F32).exp(), &y, 1);
}

#[test]
fn piecewise_constant_ops_have_zero_derivatives() {
    for f in [Array::sign, Array::floor, Array::ceil, Array::round] {
        let x = arr(&[5], 3, 0.1, 2.9);
        let g = grad(|x: Array| f(&x).sum(None, false))(x.clone());
        assert_eq!(g.to_vec::<f64>(), vec![0.0; 5]);
    }
    let x = arr(&[4], 5, -1.0, 1.0);
    let g = grad(|x: Array| (stop_gradient(&x) * &x).sum(None, false))(x.clone());
    assert_eq!(g.to_vec::<f64>(), x.to_vec::<f64>());
    let g = grad(|x: Array| x.argmax(0, false).astype(DType::F64) + x.sum(None, false))(x.clone());
    assert_eq!(g.to_vec::<f64>(), vec![1.0; 4]);
}

fn binary(name: &str, f: fn(&Array, &Array) -> Array, lo: f64, hi: f64) {
    // Same shapes, then numpy broadcasting of [3, 1] with [4].
    for (i, (sa, sb)) in [
        (&[3usize, 4][..], &[3usize, 4][..]),
        (&[3, 1][..], &[4][..]),
    ]
    .iter()
    .enumerate()
    {
        let a = arr(sa, 11 + i as u64, lo, hi);
        let b = arr(sb, 23 + i as u64, lo, hi);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_grads(
                |(a, b): (Array, Array)| f(&a, &b),
                &(a.clone(), b.clone()),
                2,
            )
        }));
        if let Err(e) = result {
            let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
            panic!("{name} on {sa:?} x {sb:?}: {msg}");
        }
    }
}

#[test]
fn binary_arithmetic() {
    binary("add", |a, b| a + b, -2.0, 2.0);
    binary("sub", |a, b| a - b, -2.0, 2.0);
    binary("mul", |a, b| a * b, -2.0, 2.0);
    binary("div", |a, b| a / b, 0.5, 2.0);
    binary("pow", |a, b| a.pow(b), 0.5, 2.0);
    binary("maximum", |a, b| a.maximum(b), -2.0, 2.0);
    binary("minimum", |a, b| a.minimum(b), -2.0, 2.0);
    binary("atan2", |a, b| a.atan2(b), 0.5, 2.0);
    binary("rem", |a, b| a.rem(b * 3.0 + 7.0), 0.5, 2.0);
    binary("where", |a, b| where_(a.gt(0.0), a, b), -2.0, 2.0);
    binary(
        "scalar operands",
        |a, b| (a * 2.0 - 1.0) / (b * b + 1.0),
        -2.0,
        2.0,
    );
}

fn reduction(name: &str, f: impl Fn(&Array) -> Array) {
    for (i, shape) in [&[3usize, 4][..], &[2, 3, 2][..]].iter().enumerate() {
        let x = arr(shape, 31 + i as u64, 0.5, 2.0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_grads(|x: Array| f(&x), &x, 2)
        }));
        if let Err(e) = result {
            let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
            panic!("{name} on {shape:?}: {msg}");
        }
    }
}

#[test]
fn reductions() {
    reduction("sum all", |x| x.sum(None, false));
    reduction("sum axis 0", |x| x.sum(0, true));
    reduction("mean", |x| x.mean(-1, false));
    reduction("max", |x| x.max(1, false));
    reduction("min", |x| x.min(None, false));
    reduction("prod", |x| x.prod(0, false));
    reduction("prod all", |x| x.prod(None, false));
    reduction("logsumexp", |x| x.logsumexp(-1, false));
    reduction("softmax", |x| x.softmax(-1));
    reduction("log_softmax", |x| x.log_softmax(0));
    reduction("cumsum", |x| x.cumsum(1));
}

#[test]
fn prod_and_max_at_awkward_points() {
    // A zero element: d prod / dx_i is the product of the others, not prod / x_i.
    let x = Array::from_vec(vec![2.0f64, 0.0, 3.0], &[3]);
    assert_eq!(
        grad(|x: Array| x.prod(None, false))(x).to_vec::<f64>(),
        vec![0.0, 6.0, 0.0]
    );
    // Ties split the derivative, as in JAX.
    let x = Array::from_vec(vec![1.0f64, 3.0, 3.0], &[3]);
    assert_eq!(
        grad(|x: Array| x.max(None, false))(x).to_vec::<f64>(),
        vec![0.0, 0.5, 0.5]
    );
    // The norm's gradient at zero is zero (a double `where`), not NaN, in both modes.
    let z = Array::zeros(&[3], DType::F64);
    assert_eq!(
        grad(|x: Array| x.norm())(z.clone()).to_vec::<f64>(),
        vec![0.0; 3]
    );
    let ones = Array::ones(&[3], DType::F64);
    assert_eq!(jvp(|x: Array| x.norm(), &z, &ones).1.item::<f64>(), 0.0);
}

fn shaped(name: &str, shape: &[usize], f: impl Fn(&Array) -> Array) {
    let x = arr(shape, 41, -1.0, 1.0);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_grads(|x: Array| f(&x), &x, 2)
    }));
    if let Err(e) = result {
        let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
        panic!("{name}: {msg}");
    }
}

#[test]
fn shape_ops() {
    shaped("reshape", &[3, 4], |x| x.reshape([2, 6]) * 2.0);
    shaped("transpose", &[2, 3, 4], |x| x.transpose([2, 0, 1]).sin());
    shaped("broadcast_to", &[3, 1], |x| {
        x.broadcast_to(&[2, 3, 4]).sin()
    });
    shaped("expand/squeeze", &[3, 4], |x| {
        x.expand_dims(1).sin().squeeze([1])
    });
    shaped("concatenate", &[2, 3], |x| {
        Array::concatenate(&[x.clone(), x.sin(), x * 2.0], 0)
    });
    shaped("stack", &[2, 3], |x| {
        Array::stack(&[x.clone(), x.cos()], -1)
    });
    shaped("slice", &[5, 6], |x| {
        x.slice(&[1, 0], &[5, 5], &[2, 2]).sin()
    });
    shaped("pad", &[3, 4], |x| {
        x.sin().pad(&[1, -1], &[-1, 2], &[1, 0], 0.5)
    });
    shaped("flip", &[3, 4], |x| x.flip([1]).sin() * x);
    shaped("swap_axes", &[3, 4], |x| x.swap_axes(0, 1).exp());
}

#[test]
fn indexing_ops() {
    let i = Array::scalar(1i32);
    let j = Array::scalar(-2i32);
    shaped("dynamic_slice", &[4, 5], |x| {
        x.sin().dynamic_slice(&[i.clone(), j.clone()], &[2, 3])
    });
    shaped("dynamic_update_slice", &[4, 5], |x| {
        let update = x.slice(&[0, 0], &[2, 2], &[]).exp();
        x.dynamic_update_slice(&update, &[i.clone(), j.clone()])
    });
    let idx = Array::from_vec(vec![2i32, 0, 2, -1], &[2, 2]);
    shaped("take axis 0 (repeated indices)", &[3, 4], |x| {
        x.take(&idx, 0).sin()
    });
    shaped("take axis 1", &[3, 4], |x| x.take(&idx, 1).sin());
    for (axis, idx) in [
        (
            0,
            Array::from_vec(vec![1i32, -2, 0, 1, 1, 0, -1, 0], &[2, 4]),
        ),
        (1, Array::from_vec(vec![2i32, 0, 2, -1, 1, 1], &[3, 2])),
        (-1, Array::from_vec(vec![3i32, 3, 0, -1, -4, 2], &[3, 2])),
    ] {
        shaped("take_along_axis", &[3, 4], |x| {
            x.take_along_axis(&idx, axis).sin()
        });
    }
    let idx3 = Array::from_vec(vec![2i32, 0, -1, 1, 1, 0, 2, -3], &[2, 1, 4]);
    shaped(
        "take_along_axis rank 3, broadcast indices",
        &[2, 3, 4],
        |x| x.take_along_axis(&idx3, 1).sin(),
    );
}

#[test]
fn contractions() {
    let cases: [(&[usize], &[usize]); 4] = [
        (&[3, 4], &[4, 2]),
        (&[4], &[4, 2]),
        (&[2, 3, 4], &[4, 5]),
        (&[2, 3, 4], &[2, 4, 5]),
    ];
    for (i, (sa, sb)) in cases.iter().enumerate() {
        let a = arr(sa, 51 + i as u64, -1.0, 1.0);
        let b = arr(sb, 61 + i as u64, -1.0, 1.0);
        check_grads(|(a, b): (Array, Array)| a.matmul(&b), &(a, b), 2);
    }
    let a = arr(&[2, 3, 4], 71, -1.0, 1.0);
    let b = arr(&[4, 2, 5], 72, -1.0, 1.0);
    let dims = DotDims {
        lhs_contract: vec![2],
        rhs_contract: vec![0],
        lhs_batch: vec![0],
        rhs_batch: vec![1],
    };
    check_grads(
        |(a, b): (Array, Array)| a.dot_general(&b, &dims),
        &(a, b),
        2,
    );
}

#[test]
fn one_hot_and_iota_are_constants() {
    let labels = Array::from_vec(vec![0i32, 2, 1], &[3]);
    let logits = arr(&[3, 3], 81, -1.0, 1.0);
    let loss =
        |l: Array| -(Array::one_hot(&labels, 3, DType::F64) * l.log_softmax(-1)).sum(None, false);
    check_grads(loss, &logits, 2);
}

#[test]
fn the_norm_is_differentiable_in_both_modes() {
    for shape in [&[4usize][..], &[2, 3]] {
        let x = arr(shape, 91, -1.0, 1.0);
        check_grads(|x: Array| x.norm(), &x, 2);
    }
}

/// The L2 norm as a `custom_vjp` function (reverse mode only, as in JAX), with the gradient
/// `x / |x|` and 0 at `x = 0`.
fn custom_norm(x: Array) -> Array {
    custom_vjp(
        "norm",
        |x: Array| {
            let n = (&x * &x).sum(None, false).sqrt();
            (n.clone(), (x, n))
        },
        |(x, n): (Array, Array), g: Array| {
            let safe = where_(n.eq(0.0), 1.0, &n);
            where_(n.eq(0.0), 0.0, &x * (g / safe))
        },
    )
    .call(x)
}

#[test]
fn custom_vjp_is_reverse_mode_only_like_jax() {
    for shape in [&[4usize][..], &[2, 3]] {
        let x = arr(shape, 91, -1.0, 1.0);
        check_grads_with(custom_norm, &x, 2, Modes::Reverse);
    }
    let x = arr(&[4], 91, -1.0, 1.0);
    let err = std::panic::catch_unwind(|| jvp(custom_norm, &x, &x))
        .expect_err("forward mode must refuse");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("reverse mode only"), "{msg}");
}
