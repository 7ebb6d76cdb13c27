//! vmap against a Rust loop: the per-example loss of a two-layer MLP over a batch, as
//! `jit(vmap(loss))` (one compiled program over the batch: batched matrix products) and as a
//! loop calling `jit(loss)` once per example (one dispatch per example, matrix-vector
//! products). Both return the batch's losses, awaited.
//!
//! Run: `cargo bench --bench vmap`. The summary at the end gives both times (best of several
//! rounds, interleaved) and the speed ratio.

#[path = "common/peer.rs"]
mod peer;

use criterion::{criterion_group, Criterion};
use jaxrs::prelude::*;
use jaxrs::{jit, Jitted};

const BATCH: usize = 128;
const IN: usize = 64;
const HIDDEN: usize = 128;
const OUT: usize = 10;

#[derive(Tree, Clone)]
struct Linear {
    w: Array,
    b: Array,
}

fn mlp_loss(layers: &[Linear], x: &Array, y: &Array) -> Array {
    let mut h = x.clone();
    for (i, l) in layers.iter().enumerate() {
        h = h.matmul(&l.w) + &l.b;
        if i + 1 < layers.len() {
            h = h.tanh();
        }
    }
    (h - y).powi(2).mean(None, false)
}

fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (((i * 7919 + seed * 104_729) % 1000) as f32 / 1000.0 - 0.5) * 0.2)
        .collect()
}

struct Setup {
    layers: Vec<Linear>,
    xs: Array,
    ys: Array,
    /// The same examples, one array each, made once (not part of the loop's time).
    examples: Vec<(Array, Array)>,
}

fn setup() -> Setup {
    let layer = |n_in: usize, n_out: usize, seed: usize| Linear {
        w: Array::from_vec(values(n_in * n_out, seed), &[n_in, n_out]),
        b: Array::from_vec(values(n_out, seed + 1), &[n_out]),
    };
    let layers = vec![layer(IN, HIDDEN, 1), layer(HIDDEN, OUT, 3)];
    let (x, y) = (values(BATCH * IN, 5), values(BATCH * OUT, 6));
    let examples = (0..BATCH)
        .map(|e| {
            (
                Array::from_slice(&x[e * IN..(e + 1) * IN], &[IN]),
                Array::from_slice(&y[e * OUT..(e + 1) * OUT], &[OUT]),
            )
        })
        .collect();
    Setup {
        layers,
        xs: Array::from_vec(x, &[BATCH, IN]),
        ys: Array::from_vec(y, &[BATCH, OUT]),
        examples,
    }
}

type Args = (Vec<Linear>, Array, Array);

fn batched() -> Jitted<impl Fn(Args) -> Array> {
    let per_batch = vmap(|(l, x, y): Args| mlp_loss(&l, &x, &y), (None, 0, 0), 0);
    jit(move |a: Args| per_batch(a))
}

fn single() -> Jitted<impl Fn(Args) -> Array> {
    jit(|(l, x, y): Args| mlp_loss(&l, &x, &y))
}

fn run_batched(f: &Jitted<impl Fn(Args) -> Array>, s: &Setup) -> Array {
    let losses: Array = f.call((s.layers.clone(), s.xs.clone(), s.ys.clone()));
    losses.block_until_ready();
    losses
}

fn run_loop(f: &Jitted<impl Fn(Args) -> Array>, s: &Setup) -> Vec<Array> {
    let losses: Vec<Array> = s
        .examples
        .iter()
        .map(|(x, y)| f.call((s.layers.clone(), x.clone(), y.clone())))
        .collect();
    for l in &losses {
        l.block_until_ready();
    }
    losses
}

fn bench(c: &mut Criterion) {
    let s = setup();
    let (b, l) = (batched(), single());
    check(&b, &l, &s);
    let mut g = c.benchmark_group("vmap");
    g.bench_function("jit_vmap_mlp_loss_batch128", |bench| {
        bench.iter(|| run_batched(&b, &s))
    });
    g.bench_function("loop_of_jit_mlp_loss_batch128", |bench| {
        bench.iter(|| run_loop(&l, &s))
    });
    g.finish();
}

/// Both compute the same losses.
fn check(b: &Jitted<impl Fn(Args) -> Array>, l: &Jitted<impl Fn(Args) -> Array>, s: &Setup) {
    let batched = run_batched(b, s).to_vec::<f32>();
    let looped: Vec<f32> = run_loop(l, s).iter().map(|a| a.item::<f32>()).collect();
    for (x, y) in batched.iter().zip(&looped) {
        assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{x} vs {y}");
    }
}

fn ratios() {
    let s = setup();
    let (b, l) = (batched(), single());
    check(&b, &l, &s);
    let (rounds, calls) = (5, 50);
    let mut batched_us = f64::INFINITY;
    let mut loop_us = f64::INFINITY;
    // Interleaved, so that both see the same machine state.
    for _ in 0..3 {
        batched_us = batched_us.min(peer::best_us(rounds, calls, || drop(run_batched(&b, &s))));
        loop_us = loop_us.min(peer::best_us(rounds, calls, || drop(run_loop(&l, &s))));
    }
    println!(
        "\nvmap summary (MLP {IN}-{HIDDEN}-{OUT} loss over a batch of {BATCH}, best of {rounds} \
         rounds x {calls} batches):"
    );
    println!("  jit(vmap(loss)), one call per batch:   {batched_us:10.1} µs per batch");
    println!(
        "  Rust loop of jit(loss), {BATCH} calls:   {loop_us:10.1} µs per batch ({:.2} µs per example)",
        loop_us / BATCH as f64
    );
    println!(
        "  jit(vmap) is {:.1}x faster than the loop",
        loop_us / batched_us
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratios();
}
