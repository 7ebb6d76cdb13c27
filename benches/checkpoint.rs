//! How long a `CheckpointManager` save holds up the training loop: an asynchronous save
//! (returns once the arrays are on the host) beside the device-to-host copy alone
//! (`jaxrs::try_device_get`) and a synchronous save (returns once the step folder is written,
//! fsynced and renamed), for a 128 MiB tree (eight 16 MiB f32 leaves), on the CPU plugin.
//!
//! Run: `cargo bench --bench checkpoint` (folders under `std::env::temp_dir()`, at most three
//! steps of 128 MiB at a time, deleted at the end).
//!
//! Measured on the development machine (2 cores shared with other builds, a virtual disk),
//! `cargo bench --bench checkpoint`, criterion's median of 10 samples, two runs:
//!
//! | what the caller waits for | run 1 | run 2 |
//! |---|---|---|
//! | the device-to-host copy alone (`try_device_get`) | 85 ms | 93 ms |
//! | an async `save` (the copy; the write goes on in the background) | 98 ms | 103 ms |
//! | a sync `save` (shard by shard from the devices, write, fsync, rename) | 232 ms | 228 ms |
//!
//! The async save blocks for the copy plus about 10 ms (the tree's paths, the metadata, fresh
//! host buffers for every shard, starting the thread); the rest of the write overlaps the training loop. Each timed async save first
//! waits, untimed, for the previous one, so the figure is the call's own cost, not a wait for
//! the disk; a loop that saves faster than the disk writes waits in its next `save`.

use criterion::{criterion_group, Criterion};
use jaxrs::checkpoint::{CheckpointManager, CheckpointManagerOptions, SaveArgs};
use jaxrs::prelude::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Leaves of the tree and the elements (f32) of each: 8 x 16 MiB.
const LEAVES: usize = 8;
const ELEMENTS: usize = 4 << 20;

fn tree() -> Vec<Array> {
    (0..LEAVES)
        .map(|i| Array::full(&[ELEMENTS], i as f64, DType::F32))
        .collect()
}

fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "jaxrs-bench-checkpoint-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn manager(dir: &PathBuf, enable_async: bool) -> CheckpointManager {
    let options = CheckpointManagerOptions {
        max_to_keep: Some(2),
        enable_async,
        ..Default::default()
    };
    CheckpointManager::new(dir, options).expect("a checkpoint folder")
}

fn bench(c: &mut Criterion) {
    let state = jaxrs::block_until_ready(tree());
    let mut g = c.benchmark_group("checkpoint_save_128MiB");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(2));

    g.bench_function("device_to_host_copy", |b| {
        b.iter(|| jaxrs::try_device_get(&state).unwrap())
    });

    let dir = folder("async");
    let mut asynchronous = manager(&dir, true);
    let mut step = 0u64;
    g.bench_function("async_save_blocks_for", |b| {
        b.iter_custom(|iterations| {
            let mut blocked = Duration::ZERO;
            for _ in 0..iterations {
                // The previous save's write is not this call's cost.
                asynchronous.wait_until_finished().unwrap();
                step += 1;
                let start = Instant::now();
                asynchronous
                    .save(step, &state, SaveArgs::default())
                    .unwrap();
                blocked += start.elapsed();
            }
            blocked
        })
    });
    asynchronous.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    let dir = folder("sync");
    let mut synchronous = manager(&dir, false);
    let mut step = 0u64;
    g.bench_function("sync_save", |b| {
        b.iter(|| {
            step += 1;
            synchronous.save(step, &state, SaveArgs::default()).unwrap()
        })
    });
    drop(synchronous);
    let _ = std::fs::remove_dir_all(&dir);
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
