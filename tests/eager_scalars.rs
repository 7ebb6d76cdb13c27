//! Eager operations with a Rust scalar operand reuse the device array of a recently used
//! scalar instead of uploading it again. These pin that the reuse never changes a result:
//! more distinct scalars than the cache keeps, repeats, NaN and -0.0 (their own bits), weak
//! and strong types, and a donated result that must not take a kept scalar with it.

use jaxrs::prelude::*;

fn xs() -> Vec<f32> {
    vec![-2.0, 0.5, 3.0, 7.25]
}

fn x() -> Array {
    Array::from_vec(xs(), &[4])
}

/// `x * v` and `v + x` as XLA computes them: the weak scalar rounded to f32 first.
fn want_mul(v: f64) -> Vec<f32> {
    xs().iter().map(|&a| a * v as f32).collect()
}

#[test]
fn many_distinct_scalars_and_repeats_give_exact_results() {
    let x = x();
    let x0 = Array::scalar(1.5f32);
    // 100 distinct values (more than the cache keeps), then a cycle longer than the cache
    // (every call evicts the next one needed), then a short cycle that stays cached.
    let distinct = (0..100).map(|i| i as f64 * 0.37 - 5.0);
    let long_cycle = (0..2).flat_map(|_| (0..40).map(|i| i as f64 + 0.5));
    let short_cycle = (0..20).map(|i| [0.1, 2.0, -3.0][i % 3]);
    for v in distinct.chain(long_cycle).chain(short_cycle) {
        // A shaped operand: the scalar is spread to its shape.
        assert_eq!((&x * v).to_vec::<f32>(), want_mul(v), "x * {v}");
        // A 0-d operand: the scalar is a 0-d program input.
        assert_eq!((&x0 * v).item::<f32>(), 1.5 * v as f32, "x0 * {v}");
        // The scalar first, and another op on the same kept scalar.
        let sum: Vec<f32> = xs().iter().map(|&a| v as f32 + a).collect();
        assert_eq!((v + &x).to_vec::<f32>(), sum, "{v} + x");
    }
}

#[test]
fn integer_and_bool_scalars_are_told_apart_from_floats() {
    let i = Array::from_vec(vec![1i32, -2, 3], &[3]);
    for v in [2, 3, 2, -7, 3] {
        assert_eq!((&i * v).to_vec::<i32>(), vec![v, -2 * v, 3 * v]);
    }
    let f = Array::from_vec(vec![1.0f32, -2.0, 3.0], &[3]);
    assert_eq!((&f * 2).to_vec::<f32>(), vec![2.0, -4.0, 6.0]);
    let b = Array::from_vec(vec![true, false, true], &[3]);
    assert_eq!(
        b.logical_and(true).to_vec::<bool>(),
        vec![true, false, true]
    );
    assert_eq!(b.logical_and(false).to_vec::<bool>(), vec![false; 3]);
    assert_eq!(
        b.logical_and(true).to_vec::<bool>(),
        vec![true, false, true]
    );
}

#[test]
fn nan_and_negative_zero_are_their_own_scalars() {
    let zeros = Array::from_vec(vec![-0.0f32; 3], &[3]);
    let zero0 = Array::scalar(-0.0f32);
    let sign_bits = |a: &Array| {
        a.to_vec::<f32>()
            .iter()
            .map(|v| v.is_sign_negative())
            .collect::<Vec<_>>()
    };
    for _ in 0..3 {
        // -0 + 0 is +0, -0 + -0 is -0: a kept +0 served for -0 (or back) flips the sign.
        assert_eq!(sign_bits(&(&zeros + 0.0)), vec![false; 3]);
        assert_eq!(sign_bits(&(&zeros + -0.0)), vec![true; 3]);
        assert!((&zero0 + 0.0).item::<f32>().is_sign_positive());
        assert!((&zero0 + -0.0).item::<f32>().is_sign_negative());
        assert!((&x() * f64::NAN).to_vec::<f32>().iter().all(|v| v.is_nan()));
        assert!((&zero0 * f64::NAN).item::<f32>().is_nan());
        assert_eq!((&x() * 1.0).to_vec::<f32>(), xs());
    }
}

#[test]
fn weak_scalars_keep_the_array_dtype_and_strong_ones_promote_as_jax() {
    let b = Array::from_vec(vec![1.5f32, -2.0, 3.0], &[3]).astype(DType::BF16);
    let f = Array::from_vec(vec![1.5f32, -2.0, 3.0], &[3]);
    let want = vec![3.0f32, -4.0, 6.0];
    for _ in 0..3 {
        // The same Rust scalar 2.0 meets bf16, then f32, then bf16 again: each its own array.
        let by_weak = &b * 2.0;
        assert_eq!((by_weak.dtype(), by_weak.is_weak()), (DType::BF16, false));
        assert_eq!(by_weak.astype(DType::F32).to_vec::<f32>(), want);
        let f_by_weak = &f * 2.0;
        assert_eq!(
            (f_by_weak.dtype(), f_by_weak.is_weak()),
            (DType::F32, false)
        );
        assert_eq!(f_by_weak.to_vec::<f32>(), want);
        // A strongly typed f32 scalar promotes bf16 to f32 (JAX: bf16 * f32 is f32).
        let by_strong = &b * Array::scalar(2.0f32);
        assert_eq!(
            (by_strong.dtype(), by_strong.is_weak()),
            (DType::F32, false)
        );
        assert_eq!(by_strong.to_vec::<f32>(), want);
        // 0-d operands: a weak one stays weak with a Rust scalar, a strong one stays strong.
        // (JAX with x64: a weak float is a weak float64.)
        let weak0 = Array::weak_scalar(1.5f64) * 2.0;
        assert_eq!((weak0.dtype(), weak0.is_weak()), (DType::F64, true));
        assert_eq!(weak0.item::<f64>(), 3.0);
        let strong0 = Array::scalar(1.5f32) * 2.0;
        assert_eq!((strong0.dtype(), strong0.is_weak()), (DType::F32, false));
        assert_eq!(strong0.item::<f32>(), 3.0);
        let bf0 = Array::scalar(1.5f32).astype(DType::BF16) * 2.0;
        assert_eq!((bf0.dtype(), bf0.is_weak()), (DType::BF16, false));
        assert_eq!(bf0.astype(DType::F32).item::<f32>(), 3.0);
    }
}

#[jit(donate = x)]
fn add_one_in_place(x: Array) -> Array {
    &x + 1.0
}

#[test]
fn donating_a_result_leaves_the_kept_scalars_intact() {
    let x = x();
    for round in 0..3 {
        // The products are fresh buffers: donating them must not consume the kept 0.5.
        let y = &x * 0.5;
        let y0 = Array::scalar(4.0f32) * 0.5;
        let want: Vec<f32> = want_mul(0.5).iter().map(|v| v + 1.0).collect();
        assert_eq!(add_one_in_place(y).to_vec::<f32>(), want, "round {round}");
        assert_eq!(add_one_in_place(y0).item::<f32>(), 3.0, "round {round}");
    }
}
