//! The FFTs beside JAX's, in the same run: `jnp.fft.fft` of 2^20 complex64 and complex128
//! points, `rfft` of 2^20 float32 points, and `fft2` of a 1024x1024 complex64 image, each a
//! jitted call awaited. JAX lowers to `stablehlo.fft`, which XLA's CPU backend runs with its
//! own FFT library; jaxrs, on the CPU plugin, calls its host kernel backed by rustfft
//! (`jaxrs-runtime/src/kernels/fft.rs`), which took less than half the time of the plugin's
//! XLA FFT at 2^20 points.
//!
//! Run: `cargo bench --bench fft` (the JAX column needs `JAXRS_BENCH_PYTHON` pointing at a
//! Python with jax==0.10.2, default `python3`; without it the column is empty). Prints one
//! row per case: jaxrs's and JAX's milliseconds per call (best of 3 rounds) and their ratio.

#[path = "common/peer.rs"]
mod peer;

use jaxrs::numpy::fft as jfft;
use jaxrs::prelude::*;

/// A deterministic signal: a sum of two sines plus a ramp, `n` points.
fn signal(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let t = i as f64 / n as f64;
            (t * 377.0).sin() + 0.5 * (t * 1021.0).cos() + t
        })
        .collect()
}

fn time_ms(f: impl Fn(Array) -> Array + 'static, x: &Array, calls: usize) -> f64 {
    let f = jit(f);
    let run = || {
        let y: Array = f.call(x.clone());
        y.block_until_ready();
    };
    run();
    peer::best_us(3, calls, run) / 1e3
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks rows by name.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wanted = |row: &str| filter.as_ref().is_none_or(|f| row.contains(f.as_str()));
    let n = 1 << 20;
    let real = Array::from_vec(signal(n), &[n]);
    let mut rows = Vec::new();
    for dtype in [DType::C64, DType::C128] {
        let row = format!("fft_1m_{}", dtype.name());
        if wanted(&row) {
            let x = real.astype(dtype);
            rows.push((row, time_ms(|x| jfft::fft(&x, None, -1, None), &x, 5)));
        }
    }
    if wanted("rfft_1m_float32") {
        let x = real.astype(DType::F32);
        let ms = time_ms(|x| jfft::rfft(&x, None, -1, None), &x, 5);
        rows.push(("rfft_1m_float32".to_string(), ms));
    }
    if wanted("fft2_1024_complex64") {
        let x = Array::from_vec(signal(n), &[1024, 1024]).astype(DType::C64);
        let ms = time_ms(|x| jfft::fft2(&x, None, &[-2, -1], None), &x, 5);
        rows.push(("fft2_1024_complex64".to_string(), ms));
    }
    let jax = peer::jax_figures("fft_jax.py", &[]);
    println!(
        "\n{:<22} {:>12} {:>12} {:>8}",
        "row", "jaxrs ms", "JAX ms", "ratio"
    );
    for (row, ms) in &rows {
        match peer::figure(&jax, row) {
            Some(j) => println!("{row:<22} {ms:>12.3} {j:>12.3} {:>7.2}x", ms / j),
            None => println!("{row:<22} {ms:>12.3} {:>12} {:>8}", "-", "-"),
        }
    }
}
