//! remat's price and payoff: step time of the jitted value-and-gradient of a 12-block residual
//! MLP (`x + gelu(x W1) W2`, B=512, D=256, f32) with and without remat on every block, and the
//! compiled temp memory of each (`GetCompiledMemoryStats`), beside the temp memory of JAX's
//! programs of the same model (`jax.checkpoint` on every block or not; committed StableHLO from
//! `tests/golden/gen_program_form.py`) compiled through jaxrs's PJRT layer, on the same XLA.
//!
//! Run: `cargo bench --bench remat`. The summary at the end prints both step times (best of
//! several rounds, interleaved), their ratio, and both temp sizes and their drop for jaxrs and
//! for JAX.

#[path = "common/remat_model.rs"]
mod remat_model;

use criterion::{criterion_group, Criterion};
use jaxrs::Array;
use remat_model::{inputs, jax_program, run, step, temp_bytes, Params, Step, BATCH, BLOCKS, DIM};
use std::time::{Duration, Instant};

fn bench(c: &mut Criterion) {
    let (p, x) = inputs();
    let (plain, _) = step(false, &p, &x);
    let (remat, _) = step(true, &p, &x);
    let mut g = c.benchmark_group("remat_12_block_mlp_value_and_grad");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("without_remat", |b| b.iter(|| run(&plain, &p, &x)));
    g.bench_function("with_remat", |b| b.iter(|| run(&remat, &p, &x)));
    g.finish();
}

/// ms per step: the best of `rounds` rounds of `steps` steps.
fn best_ms(rounds: usize, steps: usize, f: &Step, p: &Params, x: &Array) -> f64 {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..steps {
                run(f, p, x);
            }
            t.elapsed().as_secs_f64() * 1e3 / steps as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn summary() {
    let (p, x) = inputs();
    let (plain, plain_temp) = step(false, &p, &x);
    let (remat, remat_temp) = step(true, &p, &x);
    let (mut plain_ms, mut remat_ms) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        plain_ms = plain_ms.min(best_ms(3, 5, &plain, &p, &x));
        remat_ms = remat_ms.min(best_ms(3, 5, &remat, &p, &x));
    }
    let mib = |b: i64| b as f64 / (1024.0 * 1024.0);
    println!(
        "\nremat summary: jit(value_and_grad) of a {BLOCKS}-block MLP, B={BATCH} D={DIM} f32 \
         (best of 9 rounds x 5 steps):"
    );
    println!(
        "  without remat: {plain_ms:8.2} ms/step   temp {:7.2} MiB",
        mib(plain_temp)
    );
    println!(
        "  with remat:    {remat_ms:8.2} ms/step   temp {:7.2} MiB",
        mib(remat_temp)
    );
    println!(
        "  remat costs {:.2}x the step time and saves {:.2}x the temp memory",
        remat_ms / plain_ms,
        plain_temp as f64 / remat_temp as f64
    );
    let (jax_plain, jax_remat) = (
        temp_bytes(&jax_program("remat_plain")),
        temp_bytes(&jax_program("remat_checkpoint")),
    );
    println!("\ntemp memory beside JAX's programs of the same model (same plugin, same options):");
    println!("           without remat   with remat      drop");
    for (who, plain, remat) in [
        ("jaxrs", plain_temp, remat_temp),
        ("JAX", jax_plain, jax_remat),
    ] {
        println!(
            "  {who:<6} {:>10.2} MiB {:>9.2} MiB {:>7.2}x ({:.2} MiB)",
            mib(plain),
            mib(remat),
            plain as f64 / remat as f64,
            mib(plain - remat)
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
