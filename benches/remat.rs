//! remat's price and payoff: step time of the jitted value-and-gradient of a 12-block residual
//! MLP (`x + gelu(x W1) W2`, B=512, D=256, f32) with and without remat on every block, and the
//! compiled temp memory of each (`GetCompiledMemoryStats`).
//!
//! Run: `cargo bench --bench remat`. The summary at the end prints both step times (best of
//! several rounds, interleaved), their ratio and both temp sizes.

use criterion::{criterion_group, Criterion};
use jaxrs::prelude::*;
use jaxrs::Jitted;
use std::time::{Duration, Instant};

const BLOCKS: usize = 12;
const BATCH: usize = 512;
const DIM: usize = 256;

type Params = Vec<(Array, Array)>;

fn rand(shape: &[usize], seed: u64, scale: f64) -> Array {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let v: Vec<f64> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            scale * (2.0 * ((s >> 11) as f64 / (1u64 << 53) as f64) - 1.0)
        })
        .collect();
    Array::from_f64s(&v, shape, DType::F32)
}

fn block_plain(x: &Array, w1: &Array, w2: &Array) -> Array {
    x + x.matmul(w1).gelu().matmul(w2)
}

#[remat]
fn block_remat(x: &Array, w1: &Array, w2: &Array) -> Array {
    x + x.matmul(w1).gelu().matmul(w2)
}

fn loss(p: &Params, x: &Array, remat: bool) -> Array {
    let mut h = x.clone();
    for (w1, w2) in p {
        h = if remat {
            block_remat(&h, w1, w2)
        } else {
            block_plain(&h, w1, w2)
        };
    }
    (&h * &h).mean(None, false)
}

/// The value-and-gradient function, boxed so that both variants share one type.
type StepFn = Box<dyn Fn((Params, Array)) -> (Array, Params)>;
type Step = Jitted<StepFn>;

/// The jitted step, compiled (one call made), and its temp bytes.
fn step(remat: bool, p: &Params, x: &Array) -> (Step, i64) {
    let f: StepFn =
        Box::new(move |(p, x): (Params, Array)| value_and_grad(|p: Params| loss(&p, &x, remat))(p));
    let f = jit(f);
    run(&f, p, x);
    let temp = f
        .site()
        .last_compiled_memory_stats()
        .expect("memory stats")
        .temp_bytes;
    (f, temp)
}

fn run(f: &Step, p: &Params, x: &Array) {
    let (loss, grads): (Array, Params) = f.call((p.clone(), x.clone()));
    loss.block_until_ready().expect("await");
    for (a, b) in &grads {
        a.block_until_ready().expect("await");
        b.block_until_ready().expect("await");
    }
}

fn inputs() -> (Params, Array) {
    let p = (0..BLOCKS)
        .map(|i| {
            let s = (1.0 / DIM as f64).sqrt();
            (
                rand(&[DIM, DIM], 100 + 2 * i as u64, s),
                rand(&[DIM, DIM], 101 + 2 * i as u64, s),
            )
        })
        .collect();
    (p, rand(&[BATCH, DIM], 7, 1.0))
}

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
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
