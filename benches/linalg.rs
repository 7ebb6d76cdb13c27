//! The decompositions beside JAX's, in the same run: `cholesky`, `solve`, `eigh`, `svd`
//! (reduced) and `qr` (reduced) of one 256x256 and one 1024x1024 matrix in f32 and f64, and
//! the Cholesky factors of a batch of 512 64x64 matrices, each a jitted call awaited. jaxrs
//! runs them as host kernels (faer) through XLA FFI custom calls; jaxlib calls LAPACK.
//!
//! Run: `cargo bench --bench linalg` (the JAX column needs `JAXRS_BENCH_PYTHON` pointing at
//! a Python with jax==0.10.2, default `python3`; without it the column is empty). Prints one
//! row per case: jaxrs's and JAX's milliseconds per call (best of 3 rounds) and their ratio.

#[path = "common/peer.rs"]
mod peer;

use jaxrs::numpy as jnp;
use jaxrs::prelude::*;

type Op = fn(&Array, &Array) -> Vec<Array>;

const OPS: [(&str, Op, bool); 5] = [
    (
        "cholesky",
        |a, _| vec![jnp::linalg::cholesky(a, false)],
        true,
    ),
    ("solve", |a, b| vec![jnp::linalg::solve(a, b)], true),
    (
        "eigh",
        |a, _| {
            let (w, v) = jnp::linalg::eigh(a, None, true);
            vec![w, v]
        },
        true,
    ),
    (
        "svd",
        |a, _| {
            let (u, s, vt) = jnp::linalg::svd(a, false);
            vec![u, s, vt]
        },
        false,
    ),
    (
        "qr",
        |a, _| {
            let (q, r) = jnp::linalg::qr(a, "reduced");
            vec![q.expect("reduced"), r]
        },
        false,
    ),
];

/// A deterministic uniform [-0.5, 0.5) batch of matrices; positive definite `x xᵀ / n + I`
/// when asked.
fn inputs(batch: &[usize], n: usize, dtype: DType, positive: bool) -> (Array, Array) {
    let count: usize = batch.iter().product::<usize>() * n * n;
    let mut state = n as u64 * 0x9E37_79B9_7F4A_7C15 + 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut shape = batch.to_vec();
    shape.extend([n, n]);
    let x = Array::from_vec((0..count).map(|_| next()).collect::<Vec<f64>>(), &shape);
    let x = if positive {
        let eye = jnp::eye(n, None, 0, Some(DType::F64));
        x.matmul(&x.swap_axes(-1, -2)) / n as f64 + eye
    } else {
        x
    };
    let mut b_shape = batch.to_vec();
    b_shape.extend([n, 1]);
    let b = Array::from_vec(
        (0..count / n).map(|_| next()).collect::<Vec<f64>>(),
        &b_shape,
    );
    (x.astype(dtype), b.astype(dtype))
}

fn time_ms(op: Op, a: &Array, b: &Array, calls: usize) -> f64 {
    let f = jit(move |(a, b): (Array, Array)| op(&a, &b));
    let run = || {
        let outs: Vec<Array> = f.call((a.clone(), b.clone()));
        for o in &outs {
            o.block_until_ready();
        }
    };
    run();
    peer::best_us(3, calls, run) / 1e3
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks rows by name.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut rows = Vec::new();
    for (name, op, positive) in OPS {
        for n in [256, 1024] {
            for dtype in [DType::F32, DType::F64] {
                let row = format!("{name}_{n}_{}", dtype.name());
                if filter.as_ref().is_some_and(|f| !row.contains(f.as_str())) {
                    continue;
                }
                let (a, b) = inputs(&[], n, dtype, positive);
                rows.push((row, time_ms(op, &a, &b, if n == 256 { 10 } else { 2 })));
            }
        }
    }
    for dtype in [DType::F32, DType::F64] {
        let row = format!("cholesky_512x64_{}", dtype.name());
        if filter.as_ref().is_some_and(|f| !row.contains(f.as_str())) {
            continue;
        }
        let (a, b) = inputs(&[512], 64, dtype, true);
        rows.push((row, time_ms(OPS[0].1, &a, &b, 10)));
    }
    let jax = peer::jax_figures("linalg_jax.py", &[]);
    println!(
        "\n{:<26} {:>12} {:>12} {:>8}",
        "row", "jaxrs ms", "JAX ms", "ratio"
    );
    for (row, ms) in &rows {
        match peer::figure(&jax, row) {
            Some(j) => println!("{row:<26} {ms:>12.3} {j:>12.3} {:>7.2}x", ms / j),
            None => println!("{row:<26} {ms:>12.3} {:>12} {:>8}", "-", "-"),
        }
    }
}
