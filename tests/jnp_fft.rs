//! `jaxrs::numpy::fft` and `lax.fft` against JAX 0.10.2 (`tests/golden/jnp_fft.json`, written
//! by `tests/golden/gen_jnp_fft.py`): every transform on real and complex inputs of both
//! precisions, padded and cropped lengths, other axes, the three normalisations, four axes
//! (two XLA transforms), the frequency helpers and the shifts; eagerly, under `jit`, their
//! JVP and VJP, and `vmap` (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_f64, p_i64, p_i64s, p_opt_i64, p_opt_i64s, p_str};
use common::golden::In;
use common::panic_message;
use jaxrs::numpy as jnp;
use jaxrs::numpy::fft::{self as F, Norm};
use jaxrs::prelude::*;
use jaxrs::{lax, FftType};
use serde_json::Value;

fn norm(p: &Value) -> Option<Norm> {
    p.get("norm").and_then(Value::as_str).map(|n| match n {
        "ortho" => Norm::Ortho,
        "forward" => Norm::Forward,
        "backward" => Norm::Backward,
        other => panic!("norm {other}"),
    })
}

type OneD = fn(&Array, Option<usize>, i64, Option<Norm>) -> Array;
type TwoD = fn(&Array, Option<&[usize]>, &[i64], Option<Norm>) -> Array;
type ND = fn(&Array, Option<&[usize]>, Option<&[i64]>, Option<Norm>) -> Array;

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let s: Option<Vec<usize>> =
        p_opt_i64s(p, "s").map(|s| s.into_iter().map(|n| n as usize).collect());
    let axes = p_opt_i64s(p, "axes");
    let one_d: Option<OneD> = match op {
        "jnp.fft.fft" => Some(F::fft),
        "jnp.fft.ifft" => Some(F::ifft),
        "jnp.fft.rfft" => Some(F::rfft),
        "jnp.fft.irfft" => Some(F::irfft),
        "jnp.fft.hfft" => Some(F::hfft),
        "jnp.fft.ihfft" => Some(F::ihfft),
        _ => None,
    };
    if let Some(f) = one_d {
        let n = p_opt_i64(p, "n").map(|n| n as usize);
        return vec![f(a(x, 0), n, p_i64(p, "axis"), norm(p))];
    }
    let two_d: Option<TwoD> = match op {
        "jnp.fft.fft2" => Some(F::fft2),
        "jnp.fft.ifft2" => Some(F::ifft2),
        "jnp.fft.rfft2" => Some(F::rfft2),
        "jnp.fft.irfft2" => Some(F::irfft2),
        _ => None,
    };
    if let Some(f) = two_d {
        let axes = axes.expect("axes");
        return vec![f(a(x, 0), s.as_deref(), &axes, norm(p))];
    }
    let n_d: Option<ND> = match op {
        "jnp.fft.fftn" => Some(F::fftn),
        "jnp.fft.ifftn" => Some(F::ifftn),
        "jnp.fft.rfftn" => Some(F::rfftn),
        "jnp.fft.irfftn" => Some(F::irfftn),
        _ => None,
    };
    if let Some(f) = n_d {
        return vec![f(a(x, 0), s.as_deref(), axes.as_deref(), norm(p))];
    }
    let dtype = p
        .get("dtype")
        .and_then(Value::as_str)
        .map(|d| DType::from_name(d).expect("dtype"));
    vec![match op {
        "jnp.fft.fftfreq" => F::fftfreq(p_i64(p, "n") as usize, p_f64(p, "d"), dtype),
        "jnp.fft.rfftfreq" => F::rfftfreq(p_i64(p, "n") as usize, p_f64(p, "d"), dtype),
        "jnp.fft.fftshift" => F::fftshift(a(x, 0), axes.as_deref()),
        "jnp.fft.ifftshift" => F::ifftshift(a(x, 0), axes.as_deref()),
        "lax.fft" => {
            let t = match p_str(p, "fft_type") {
                "FFT" => FftType::Fft,
                "IFFT" => FftType::Ifft,
                "RFFT" => FftType::Rfft,
                "IRFFT" => FftType::Irfft,
                other => panic!("fft_type {other}"),
            };
            let lengths: Vec<usize> = p_i64s(p, "fft_lengths")
                .into_iter()
                .map(|n| n as usize)
                .collect();
            lax::fft(a(x, 0), t, &lengths)
        }
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn jnp_fft_matches_jax() {
    check_file("jnp_fft", apply);
}

#[test]
fn a_round_trip_gives_the_signal_back() {
    let x = Array::from_vec((0..12).map(|i| (i as f64 * 0.7).sin()).collect(), &[3, 4]);
    let back = F::irfft2(
        &F::rfft2(&x, None, &[-2, -1], None),
        Some(&[3, 4]),
        &[-2, -1],
        None,
    );
    let err = jnp::max(&jnp::abs(&(&back - &x)), None, false).item::<f64>();
    assert!(err < 1e-14, "{err}");
    let z = F::ifftn(
        &F::fftn(&x, None, None, Some(Norm::Ortho)),
        None,
        None,
        Some(Norm::Ortho),
    );
    let err = jnp::max(&jnp::abs(&(&z - &x)), None, false).item::<f64>();
    assert!(err < 1e-14, "{err}");
}

#[test]
fn bad_transforms_name_the_function_and_the_line() {
    let z = Array::zeros(&[4], DType::C64);
    let msg = panic_message(|| {
        F::rfft(&z, None, -1, None);
    });
    assert!(
        msg.contains("rfft") && msg.contains("real") && msg.contains("jnp_fft.rs"),
        "{msg}"
    );
    let x = Array::zeros(&[2, 2, 2, 2], DType::F32);
    let msg = panic_message(|| {
        F::rfftn(&x, None, None, None);
    });
    assert!(msg.contains("more than 3 axes"), "{msg}");
    let msg = panic_message(|| {
        F::fft2(&x, Some(&[2]), &[0, 1], None);
    });
    assert!(msg.contains("different lengths"), "{msg}");
    let msg = panic_message(|| {
        F::fft(&x, None, 7, None);
    });
    assert!(msg.contains("axis 7"), "{msg}");
}
