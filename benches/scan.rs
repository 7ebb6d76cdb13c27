//! Compile time of a loop: `scan` stays flat from T=10 to T=1000 steps (one while loop),
//! while the same loop unrolled by a Rust `for` inside `jit` grows with T (XLA's CPU compiler
//! takes about 50 ms per unrolled step here, as it does for JAX's unrolled loops).
//!
//! Run: `cargo bench --bench scan`. Each sample traces, lowers and compiles a fresh jitted
//! function (a new cache), then runs it once.

use criterion::{criterion_group, BenchmarkId, Criterion};
use jaxrs::prelude::*;
use jaxrs::scan;
use std::time::{Duration, Instant};

const WIDTH: usize = 16;

fn weights() -> Array {
    Array::from_vec(
        (0..WIDTH * WIDTH)
            .map(|i| ((i * 7) % 11) as f32 * 0.01)
            .collect(),
        &[WIDTH, WIDTH],
    )
}

/// Trace + compile + run a scan of `t` RNN-like steps.
fn compile_scan(t: usize, w: &Array) -> Duration {
    let xs = Array::zeros(&[t, WIDTH], DType::F32);
    let start = Instant::now();
    let f = jit(|xs: Array| {
        scan(
            |h: Array, x: Array| ((h.matmul(w) + &x).tanh(), ()),
            Array::zeros(&[WIDTH], DType::F32),
            xs,
        )
        .0
    });
    let y: Array = f.call(xs);
    y.block_until_ready();
    start.elapsed()
}

/// The same loop unrolled by Rust at trace time.
fn compile_unrolled(t: usize, w: &Array) -> Duration {
    let xs = Array::zeros(&[t, WIDTH], DType::F32);
    let start = Instant::now();
    let f = jit(|xs: Array| {
        let mut h = Array::zeros(&[WIDTH], DType::F32);
        for i in 0..t {
            h = (h.matmul(w) + xs.slice_axis(0, i, i + 1).reshape([WIDTH as i64])).tanh();
        }
        h
    });
    let y: Array = f.call(xs);
    y.block_until_ready();
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let w = weights();
    let mut g = c.benchmark_group("loop_compile");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    for t in [10usize, 100, 1000] {
        g.bench_with_input(BenchmarkId::new("scan", t), &t, |b, &t| {
            b.iter(|| compile_scan(t, &w))
        });
    }
    for t in [10usize, 50] {
        g.bench_with_input(BenchmarkId::new("unrolled", t), &t, |b, &t| {
            b.iter(|| compile_unrolled(t, &w))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    let w = weights();
    let best =
        |f: &dyn Fn() -> Duration| (0..3).map(|_| f()).min().expect("runs").as_secs_f64() * 1e3;
    println!("\ncompile + first run (best of 3):");
    let s10 = best(&|| compile_scan(10, &w));
    let s1000 = best(&|| compile_scan(1000, &w));
    println!(
        "  scan     T=10: {s10:7.1} ms   T=1000: {s1000:7.1} ms   ratio {:.2}x",
        s1000 / s10
    );
    let u10 = best(&|| compile_unrolled(10, &w));
    let u300 = best(&|| compile_unrolled(300, &w));
    println!(
        "  unrolled T=10: {u10:7.1} ms   T=300:  {u300:7.1} ms   ratio {:.2}x",
        u300 / u10
    );
}
