//! `Dense`'s int8 layer: `quantize_int8`'s exact values, and `apply`'s int8 product (activation
//! rows quantized on the fly, int8 x int8 -> int32) against the float layer it came from.

use jaxrs::prelude::*;
use jaxrs_models::dense::Dense;

/// A deterministic uniform [-1, 1) vector.
fn uniform(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

#[test]
fn quantize_int8_rounds_per_output_channel() {
    // Output channels (rows of the `[out, in]` weight): max |.| = 2.54 (scale 0.02), 1.27
    // (0.01), and a zero row (scale 1).
    let w = Array::from_vec(vec![2.54f32, -1.0, -1.27, 0.004, 0.0, 0.0], &[3, 2]);
    let q = Dense::new(w, None).quantize_int8();
    assert_eq!(q.weight.dtype(), DType::I8);
    assert_eq!(q.weight.to_vec::<i8>(), vec![127, -50, -127, 0, 0, 0]);
    let scale = q.scale.as_ref().expect("int8 layer").to_vec::<f32>();
    for (s, want) in scale.iter().zip([0.02f32, 0.01, 1.0]) {
        assert!((s - want).abs() < 1e-7, "{scale:?}");
    }
    // Quantizing again is the identity.
    let again = q.quantize_int8();
    assert_eq!(again.weight.to_vec::<i8>(), q.weight.to_vec::<i8>());
}

/// The largest |a - b| over the largest |b|.
fn rel_err(a: &[f32], b: &[f32]) -> f32 {
    let scale = b.iter().fold(0f32, |m, v| m.max(v.abs()));
    a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs())) / scale
}

#[test]
fn int8_apply_is_within_two_percent_of_the_float_layer() {
    let (n_in, n_out) = (768, 96);
    let weight = Array::from_vec(
        uniform(n_in * n_out, 1)
            .iter()
            .map(|v| v * 0.05)
            .collect::<Vec<_>>(),
        &[n_out, n_in],
    );
    let bias = Array::from_vec(uniform(n_out, 2), &[n_out]);
    let float = Dense::new(weight, Some(bias));
    let int8 = float.quantize_int8();
    // One row (the decode step's two-row product), several rows, and a zero row.
    for rows in [1usize, 5] {
        let mut xs = uniform(rows * n_in, 3 + rows as u64);
        if rows > 1 {
            xs[..n_in].iter_mut().for_each(|v| *v = 0.0);
        }
        let x = Array::from_vec(xs, &[rows, n_in]);
        let want = float.apply(&x).to_vec::<f32>();
        let got = int8.apply(&x);
        assert_eq!((got.shape(), got.dtype()), (&[rows, n_out][..], DType::F32));
        let got = got.to_vec::<f32>();
        let err = rel_err(&got, &want);
        assert!(err < 0.02, "rows {rows}: relative error {err}");
        // Not the float layer itself: the int8 path really ran.
        assert!(err > 0.0, "rows {rows}");
        if rows > 1 {
            // The zero row is the bias exactly (no 0/0 in its scale).
            let bias = float.bias.as_ref().expect("bias").to_vec::<f32>();
            assert_eq!(&got[..n_out], &bias[..]);
        }
        // Under jit (the generation loop's form) the same values.
        let f = jit(|(d, x): (Dense, Array)| d.apply(&x));
        let jitted = f.call((int8.clone(), x.clone())).to_vec::<f32>();
        assert!(rel_err(&jitted, &got) < 1e-6);
    }
    // bf16 activations: the result stays bf16, within bf16's rounding of the f32 result.
    let x = Array::from_vec(uniform(3 * n_in, 9), &[3, n_in]);
    let want = float.apply(&x).to_vec::<f32>();
    let got = int8.astype(DType::BF16).apply(&x.astype(DType::BF16));
    assert_eq!(got.dtype(), DType::BF16);
    let err = rel_err(&got.astype(DType::F32).to_vec::<f32>(), &want);
    assert!(err < 0.03, "bf16: relative error {err}");
}
