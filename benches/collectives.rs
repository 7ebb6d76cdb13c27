//! Many-device dispatch on 8 CPU devices: µs per cached call of a pmapped `x * 2 + 1` on an
//! f32[8, 4] whose rows already lie one per device, and of a pmapped `psum` over the 8
//! devices, then the same two functions written with `jit(shard_map(..))` over a 1-D mesh of
//! the 8 devices (the spelling JAX moved `pmap` users to), beside JAX's `jax.pmap` and
//! `jax.jit(jax.shard_map(..))` of the same functions measured in the same run
//! (`benches/peer/collectives_jax.py`, with `--xla_force_host_platform_device_count=8`). The
//! pmap and shard_map rows side by side say which lowering is faster for a pmap pattern.
//!
//! Run: `cargo bench --bench collectives`. Set `JAXRS_BENCH_PYTHON` to a Python that has
//! `jax==0.10.2` (default `python3`) for JAX's figures; the ratios are printed at the end (best
//! of several rounds on both sides).

#[path = "common/peer.rs"]
mod peer;

use criterion::{criterion_group, Criterion};
use jaxrs::prelude::*;
use jaxrs::{shard_map, Jitted, Mesh, P};
use std::hint::black_box;

#[pmap(axis_name = "d")]
fn affine(x: &Array) -> Array {
    x * 2.0 + 1.0
}

#[pmap(axis_name = "d")]
fn summed(x: &Array) -> Array {
    psum(x, "d") * 1e-3
}

/// One cached call on an input already split over the devices, awaited on every device.
fn call(f: fn(&Array) -> Array, x: &Array) {
    let y = f(x);
    y.block_until_ready();
}

type Jit = Jitted<Box<dyn Fn(Array) -> Array>>;

/// `per_device` written as pmap users now write it in JAX: `jit(shard_map(..))` over a 1-D
/// mesh, each device's block `[1, 4]` of the f32[8, 4].
fn with_shard_map(mesh: &Mesh, per_device: fn(&Array) -> Array) -> Jit {
    let mesh = mesh.clone();
    jit(Box::new(move |x: Array| {
        shard_map(move |x: Array| per_device(&x))
            .mesh(&mesh)
            .in_specs(P!["d"])
            .out_specs(P!["d"])
            .call(x)
    }) as Box<dyn Fn(Array) -> Array>)
}

fn call_jitted(f: &Jit, x: &Array) {
    let y: Array = f.call(x.clone());
    y.block_until_ready();
}

/// The shard_map forms of `affine` and `summed`, and an input split over the mesh by the
/// first (as a training loop's previous output is).
fn shard_map_forms() -> (Jit, Jit, Array) {
    let mesh = jaxrs::make_mesh(&[8], &["d"]).expect("a mesh of the 8 devices");
    let affine = with_shard_map(&mesh, |x| x * 2.0 + 1.0);
    let summed = with_shard_map(&mesh, |x| psum(x, "d") * 1e-3);
    let x: Array = affine.call(Array::arange(0.0, 32.0, 1.0, DType::F32).reshape([8, 4]));
    (affine, summed, x)
}

/// An f32[8, 4], one row per device (a pmap's output, as in a training loop).
fn split_input() -> Array {
    affine(&Array::arange(0.0, 32.0, 1.0, DType::F32).reshape([8, 4]))
}

fn bench(c: &mut Criterion) {
    let x = split_input();
    let mut g = c.benchmark_group("collectives");
    g.bench_function("jaxrs_pmap_call_8_devices", |b| {
        b.iter(|| call(affine, black_box(&x)))
    });
    g.bench_function("jaxrs_pmap_psum_8_devices", |b| {
        b.iter(|| call(summed, black_box(&x)))
    });
    let (sm_affine, sm_summed, xs) = shard_map_forms();
    g.bench_function("jaxrs_shard_map_call_8_devices", |b| {
        b.iter(|| call_jitted(&sm_affine, black_box(&xs)))
    });
    g.bench_function("jaxrs_shard_map_psum_8_devices", |b| {
        b.iter(|| call_jitted(&sm_summed, black_box(&xs)))
    });
    g.finish();
}

fn ratios() {
    let (rounds, calls) = (5, 2000);
    let x = split_input();
    call(summed, &x);
    let pmap_us = peer::best_us(rounds, calls, || call(affine, &x));
    let psum_us = peer::best_us(rounds, calls, || call(summed, &x));
    let (sm_affine, sm_summed, xs) = shard_map_forms();
    call_jitted(&sm_summed, &xs);
    let sm_call_us = peer::best_us(rounds, calls, || call_jitted(&sm_affine, &xs));
    let sm_psum_us = peer::best_us(rounds, calls, || call_jitted(&sm_summed, &xs));
    let jax = peer::jax_figures("collectives_jax.py", &[calls.to_string()]);
    println!("\ncollectives summary (8 CPU devices, best of {rounds} rounds x {calls} calls):");
    for (what, ours, key) in [
        ("pmap x * 2 + 1 on f32[8, 4]", pmap_us, "jax_pmap_call_us"),
        ("pmap psum over 8 devices   ", psum_us, "jax_pmap_psum_us"),
        (
            "shard_map x * 2 + 1        ",
            sm_call_us,
            "jax_shard_map_call_us",
        ),
        (
            "shard_map psum over 8      ",
            sm_psum_us,
            "jax_shard_map_psum_us",
        ),
    ] {
        match peer::figure(&jax, key) {
            Some(j) => println!(
                "  {what}: jaxrs {ours:8.2} µs, JAX 0.10.2 {j:8.2} µs, speed-up over JAX {:.2}x",
                j / ours
            ),
            None => println!(
                "  {what}: jaxrs {ours:8.2} µs (JAX not measured: set JAXRS_BENCH_PYTHON to a \
                 Python with jax==0.10.2)"
            ),
        }
    }
}

criterion_group!(benches, bench);

fn main() {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratios();
}
