//! NaN propagates through max, min, their reductions and relu, eagerly and under jit, as in
//! JAX: they are lowered as plain `stablehlo.maximum`/`minimum`, and every program is compiled
//! with `xla_cpu_enable_fast_min_max=false` (without it XLA's CPU backend may return the
//! other operand). The derivatives at NaN and at ties follow JAX too.

use jaxrs::prelude::*;

fn v(xs: &[f32]) -> Array {
    Array::from_vec(xs.to_vec(), &[xs.len()])
}

/// Each of the ops on `[NaN, 1, -2, 3]` and `[0, NaN, 5, -1]`, as one array per op.
fn ops(x: &Array, y: &Array) -> Vec<Array> {
    vec![
        x.maximum(y),
        y.maximum(x),
        x.minimum(y),
        y.minimum(x),
        x.max(None, false),
        y.min(None, false),
        x.relu(),
        x.maximum(0.5),
    ]
}

fn check(out: &[Array]) {
    let got: Vec<Vec<f32>> = out.iter().map(|a| a.to_vec::<f32>()).collect();
    let nan = f32::NAN;
    let want: Vec<Vec<f32>> = vec![
        vec![nan, nan, 5.0, 3.0],
        vec![nan, nan, 5.0, 3.0],
        vec![nan, nan, -2.0, -1.0],
        vec![nan, nan, -2.0, -1.0],
        vec![nan],
        vec![nan],
        vec![nan, 1.0, 0.0, 3.0],
        vec![nan, 1.0, 0.5, 3.0],
    ];
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let same = g.len() == w.len()
            && g.iter()
                .zip(w)
                .all(|(a, b)| (a.is_nan() && b.is_nan()) || a == b);
        assert!(same, "op {i}: got {g:?}, want {w:?}");
    }
}

#[test]
fn nan_wins_in_max_min_reductions_and_relu_eagerly() {
    let x = v(&[f32::NAN, 1.0, -2.0, 3.0]);
    let y = v(&[0.0, f32::NAN, 5.0, -1.0]);
    check(&ops(&x, &y));
}

#[test]
fn nan_wins_in_max_min_reductions_and_relu_under_jit() {
    let x = v(&[f32::NAN, 1.0, -2.0, 3.0]);
    let y = v(&[0.0, f32::NAN, 5.0, -1.0]);
    let f = jit(|(x, y): (Array, Array)| ops(&x, &y));
    check(&f.call((x, y)));
}

#[test]
fn relu_gradient_is_zero_at_zero_and_at_nan_as_in_jax() {
    let x = v(&[f32::NAN, -1.0, 0.0, 2.0]);
    let g = grad(|x: Array| x.relu().sum(None, false))(x.clone());
    assert_eq!(g.to_vec::<f32>(), vec![0.0, 0.0, 0.0, 1.0]);
    let (_, t) = jvp(|x: Array| x.relu(), &x, &Array::ones(&[4], DType::F32));
    assert_eq!(t.to_vec::<f32>(), vec![0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn relu_lowers_to_a_plain_maximum_as_jax_does() {
    let text = stablehlo(|x: Array| x.relu(), &v(&[1.0, -1.0]));
    assert!(text.contains("stablehlo.maximum"), "{text}");
    assert!(!text.contains("stablehlo.select"), "{text}");
    assert!(!text.contains("stablehlo.compare"), "{text}");
}
