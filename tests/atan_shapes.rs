//! The arctangent on shapes where the CPU plugin's vectorised `atan2` went wrong (elements
//! left unwritten: values such as 1e-278 or NaN, different from run to run), eagerly, under
//! `jit`, under `vmap` with the batch axis last, and inside a fusion; and the functions
//! XLA expands through `atan2`. jaxrs compiles programs with an arctangent with 128-bit
//! vectors (`core::lower::with_plugin_workarounds`).

use jaxrs::lax;
use jaxrs::prelude::*;

/// Shapes that went wrong, and values on both sides of |x| = 1.
const SHAPES: [&[usize]; 5] = [&[12, 2], &[8, 3], &[4, 6], &[3, 4, 2], &[2, 3, 4]];

fn values(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64 * 0.3 - 3.0).collect()
}

fn assert_close(what: &str, got: &Array, want: impl Fn(f64) -> f64, inputs: &[f64], tol: f64) {
    let got = got.astype(DType::F64).reshape([-1]).to_vec::<f64>();
    for (i, (g, x)) in got.iter().zip(inputs).enumerate() {
        let w = want(*x);
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: element {i} is {g}, want {w} (x = {x})"
        );
    }
}

#[test]
fn atan_is_right_on_every_shape() {
    for shape in SHAPES {
        for (dtype, tol) in [(DType::F64, 1e-14), (DType::F32, 1e-6)] {
            let n = shape.iter().product();
            let v = values(n);
            let x = Array::from_vec(v.clone(), shape).astype(dtype);
            let what = format!("atan {dtype:?}{shape:?}");
            assert_close(&format!("{what} eager"), &lax::atan(&x), f64::atan, &v, tol);
            let jitted = jit(|x: Array| lax::atan(&x)).call(x.clone());
            assert_close(&format!("{what} jit"), &jitted, f64::atan, &v, tol);
            let fused = jit(|x: Array| lax::atan(&(&x * 2.0)) + 1.0).call(x.clone());
            assert_close(
                &format!("{what} fused"),
                &fused,
                |x| (2.0 * x).atan() + 1.0,
                &v,
                tol,
            );
            let ones = Array::ones(shape, dtype);
            assert_close(
                &format!("atan2 {dtype:?}{shape:?}"),
                &lax::atan2(&x, &ones),
                f64::atan,
                &v,
                tol,
            );
        }
    }
}

#[test]
fn vmapped_atan_with_the_batch_axis_last_is_right() {
    let v = values(24);
    let x = Array::from_vec(v.clone(), &[3, 4, 2]);
    let batched = vmap(|x: Array| lax::atan(&x), -1, -1)(x.clone());
    assert_close("vmap atan", &batched, f64::atan, &v, 1e-14);
}

#[test]
fn functions_expanded_through_atan2_are_right() {
    let v: Vec<f64> = (0..24).map(|i| i as f64 * 0.08 - 0.95).collect();
    let x = Array::from_vec(v.clone(), &[8, 3]);
    assert_close("acos", &lax::acos(&x), f64::acos, &v, 1e-14);
    assert_close("asin", &lax::asin(&x), f64::asin, &v, 1e-14);
    let big: Vec<f64> = (0..24).map(|i| i as f64 * 0.5 + 1.0).collect();
    let y = Array::from_vec(big.clone(), &[8, 3]);
    assert_close("acosh", &lax::acosh(&y), f64::acosh, &big, 1e-14);
}
