//! `jaxrs::checkpoint::CheckpointManager`: retention (the last N, every K-th, the best by a
//! metric), listing and metadata across reopening, bit-exact restores (bf16, u32, i32, bool,
//! a tree sharded over 8 CPU devices), asynchronous saves (the host copy is what is saved, a
//! second save waits for the first, a background failure is reported once), hostile folders,
//! and a child process killed with SIGKILL during asynchronous saves: every step listed
//! afterwards restores bit for bit.

mod common;

use common::lines_of;
use jaxrs::checkpoint::{
    self, BestMode, CheckpointError, CheckpointManager, CheckpointManagerOptions, SaveArgs,
    MAX_STEP_METADATA_BYTES,
};
use jaxrs::prelude::*;
use jaxrs::{NamedSharding, P};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

const CHILD: &str = "JAXRS_CHECKPOINT_MANAGER_CHILD";

/// Every test runs on 8 CPU devices (the count is fixed once per process).
fn setup() {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jaxrs-manager-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn sync_options() -> CheckpointManagerOptions {
    CheckpointManagerOptions {
        enable_async: false,
        ..Default::default()
    }
}

/// A one-leaf tree whose value says its step.
fn tiny(step: u64) -> Array {
    Array::full(&[2], step as f64, DType::F32)
}

/// Saves `tiny(step)` for each step with the metrics `metrics(step)`, synchronously.
fn save_steps(
    manager: &mut CheckpointManager,
    steps: impl IntoIterator<Item = u64>,
    metrics: impl Fn(u64) -> Option<serde_json::Value>,
) {
    for step in steps {
        let args = SaveArgs {
            metrics: metrics(step),
            ..Default::default()
        };
        assert!(
            manager.save(step, &tiny(step), args).unwrap(),
            "step {step}"
        );
    }
}

/// The step folders on disk, sorted.
fn folders(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort_by_key(|n| (n.len(), n.clone()));
    names
}

#[test]
fn retention_keeps_the_last_n_steps() {
    setup();
    let dir = temp_dir("last-n");
    let options = CheckpointManagerOptions {
        max_to_keep: Some(3),
        ..sync_options()
    };
    let mut manager = CheckpointManager::new(&dir, options).unwrap();
    save_steps(&mut manager, 1..=7, |_| None);
    assert_eq!(manager.all_steps(), vec![5, 6, 7]);
    assert_eq!(manager.latest_step(), Some(7));
    assert_eq!(folders(&dir), ["5", "6", "7"]);
    let restored = manager.restore(6, &tiny(0)).unwrap();
    assert_eq!(restored.to_vec::<f32>(), vec![6.0, 6.0]);
    drop(manager);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn retention_keeps_every_kth_step_besides_the_last_n() {
    setup();
    let dir = temp_dir("period");
    let options = CheckpointManagerOptions {
        max_to_keep: Some(2),
        keep_period: Some(3),
        ..sync_options()
    };
    let mut manager = CheckpointManager::new(&dir, options).unwrap();
    save_steps(&mut manager, 1..=10, |_| None);
    // 3, 6 and 9 are kept for their period; 9 and 10 are the last two.
    assert_eq!(manager.all_steps(), vec![3, 6, 9, 10]);
    assert_eq!(folders(&dir), ["3", "6", "9", "10"]);
    drop(manager);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The loss of steps 1..=7: the three smallest are at steps 4, 6 and 2.
const LOSSES: [f64; 7] = [5.0, 3.0, 8.0, 1.0, 9.0, 2.0, 7.0];

fn loss_of(step: u64) -> Option<serde_json::Value> {
    Some(json!({ "loss": LOSSES[step as usize - 1] }))
}

#[test]
fn retention_keeps_the_best_steps_by_a_metric() {
    setup();
    let dir = temp_dir("best-min");
    let options = CheckpointManagerOptions {
        max_to_keep: Some(3),
        enable_async: false,
        ..CheckpointManagerOptions::best_metric("loss", BestMode::Min)
    };
    let mut manager = CheckpointManager::new(&dir, options).unwrap();
    save_steps(&mut manager, 1..=7, loss_of);
    // The three of least loss, and the latest (7), which a run resumes from.
    assert_eq!(manager.all_steps(), vec![2, 4, 6, 7]);
    assert_eq!(manager.best_step(), Some(4));
    drop(manager);
    std::fs::remove_dir_all(&dir).unwrap();

    let dir = temp_dir("best-max");
    let options = CheckpointManagerOptions {
        max_to_keep: Some(2),
        enable_async: false,
        ..CheckpointManagerOptions::best_metric("loss", BestMode::Max)
    };
    let mut manager = CheckpointManager::new(&dir, options).unwrap();
    save_steps(&mut manager, 1..=7, loss_of);
    assert_eq!(manager.all_steps(), vec![3, 5, 7]);
    assert_eq!(manager.best_step(), Some(5));
    drop(manager);
    // Reopened, the manager ranks the steps by the metrics read back from their metadata.
    let options = CheckpointManagerOptions {
        max_to_keep: Some(2),
        enable_async: false,
        ..CheckpointManagerOptions::best_metric("loss", BestMode::Max)
    };
    let mut manager = CheckpointManager::new(&dir, options).unwrap();
    assert_eq!(manager.best_step(), Some(5));
    manager
        .save(8, &tiny(8), SaveArgs::metrics(json!({"loss": 8.5})))
        .unwrap();
    // 7 is no longer the latest, and 3 (8.0) is now worse than 8 (8.5): both go.
    assert_eq!(manager.all_steps(), vec![5, 8]);
    manager
        .save(9, &tiny(9), SaveArgs::metrics(json!({"loss": 0.0})))
        .unwrap();
    // The worst, but the latest: kept besides the best two.
    assert_eq!(manager.all_steps(), vec![5, 8, 9]);
    drop(manager);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn retention_combines_period_metric_and_steps_without_metrics() {
    setup();
    // Steps 1..=7 with LOSSES, except that 3 and 5 have no loss.
    let metrics = |step: u64| match step {
        3 | 5 => Some(json!({"accuracy": 0.5})),
        _ => loss_of(step),
    };
    for (keep_without, expected) in [(true, vec![2, 3, 4, 5, 6, 7]), (false, vec![2, 4, 6, 7])] {
        let dir = temp_dir(&format!("combined-{keep_without}"));
        let options = CheckpointManagerOptions {
            max_to_keep: Some(2),
            keep_period: Some(2),
            keep_checkpoints_without_metrics: keep_without,
            enable_async: false,
            ..CheckpointManagerOptions::best_metric("loss", BestMode::Min)
        };
        let mut manager = CheckpointManager::new(&dir, options).unwrap();
        save_steps(&mut manager, 1..=7, metrics);
        // Even steps are kept for their period and 7 as the latest; of 1, 3 and 5, step 1
        // (5.0) fell out of the best two, and 3 and 5 have no loss: kept, or deleted first.
        let steps = manager.all_steps();
        assert_eq!(
            steps, expected,
            "keep_checkpoints_without_metrics = {keep_without}"
        );
        drop(manager);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn steps_and_metadata_survive_reopening() {
    setup();
    let dir = temp_dir("reopen");
    let before = SystemTime::now();
    let mut manager = CheckpointManager::new(&dir, sync_options()).unwrap();
    assert_eq!(manager.latest_step(), None);
    assert!(manager.all_steps().is_empty());
    for step in [10, 20, 30] {
        let args = SaveArgs::metrics(json!({"loss": step as f64 / 10.0}))
            .with_custom(json!({"run": "reopen", "epoch": step / 10}));
        manager.save(step, &tiny(step), args).unwrap();
    }
    let after = SystemTime::now();
    drop(manager);

    let manager = CheckpointManager::new(&dir, sync_options()).unwrap();
    assert_eq!(manager.all_steps(), vec![10, 20, 30]);
    assert_eq!(manager.latest_step(), Some(30));
    let meta = manager.metadata(20).unwrap();
    assert_eq!(meta.step, 20);
    assert_eq!(meta.metrics, Some(json!({"loss": 2.0})));
    assert_eq!(meta.custom_metadata, json!({"run": "reopen", "epoch": 2}));
    assert!(before <= meta.init_time && meta.init_time <= meta.commit_time);
    assert!(meta.commit_time <= after);
    assert_eq!(
        manager.restore(30, &tiny(0)).unwrap().to_vec::<f32>(),
        vec![30.0; 2]
    );
    assert!(matches!(
        manager.restore(25, &tiny(0)),
        Err(CheckpointError::StepNotFound { step: 25, .. })
    ));
    assert!(matches!(
        manager.metadata(25),
        Err(CheckpointError::StepNotFound { step: 25, .. })
    ));
    drop(manager);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn interval_force_existing_steps_and_delete() {
    setup();
    let dir = temp_dir("interval");
    let options = CheckpointManagerOptions {
        save_interval_steps: 5,
        ..sync_options()
    };
    let mut manager = CheckpointManager::new(&dir, options).unwrap();
    let mut saved = Vec::new();
    for step in 0..=12 {
        if manager
            .save(step, &tiny(step), SaveArgs::default())
            .unwrap()
        {
            saved.push(step);
        }
    }
    assert_eq!(saved, vec![0, 5, 10]);
    assert!(!manager.should_save(10) && !manager.should_save(9) && manager.should_save(15));
    // Forced: saved off the interval; a step already saved is refused, not overwritten.
    assert!(manager
        .save(12, &tiny(12), SaveArgs::default().forced())
        .unwrap());
    let again = manager.save(12, &tiny(99), SaveArgs::default().forced());
    assert!(matches!(
        again,
        Err(CheckpointError::StepExists { step: 12, .. })
    ));
    assert_eq!(
        manager.restore(12, &tiny(0)).unwrap().to_vec::<f32>(),
        [12.0; 2]
    );
    // Not forced, an earlier step than the latest is skipped.
    assert!(!manager.save(10, &tiny(10), SaveArgs::default()).unwrap());

    manager.delete(5).unwrap();
    assert_eq!(manager.all_steps(), vec![0, 10, 12]);
    assert_eq!(folders(&dir), ["0", "10", "12"]);
    assert!(matches!(
        manager.delete(5),
        Err(CheckpointError::StepNotFound { step: 5, .. })
    ));
    drop(manager);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[derive(Tree, Clone)]
struct Mixed {
    bool_mask: Array,
    f32_odd: Array,
    f64_w: Array,
    i32_step: Array,
    i8_q: Array,
    u32_key: Array,
    w_bf16: Array,
}

fn mixed() -> Mixed {
    // f32 bit patterns a conversion could change: a NaN payload, -0.0, a subnormal.
    let odd = [
        f32::from_bits(0x7fc0_1234),
        -0.0,
        f32::from_bits(1),
        1.5,
        f32::MAX,
    ];
    Mixed {
        bool_mask: Array::from_vec(vec![true, false, true], &[3]),
        f32_odd: Array::from_vec(odd.to_vec(), &[5]),
        f64_w: Array::from_vec(vec![std::f64::consts::PI, -1e-300], &[2]),
        i32_step: Array::scalar(-123_456i32),
        i8_q: Array::from_vec(vec![-128i8, 0, 127], &[3]),
        u32_key: Array::from_vec(vec![0u32, 42, u32::MAX], &[3]),
        w_bf16: Array::from_vec(
            (0..12)
                .map(|i| half::bf16::from_f32(i as f32 * 0.37 - 2.0))
                .collect(),
            &[3, 4],
        ),
    }
}

fn leaf_bytes<T: Tree>(tree: &T) -> Vec<(DType, Vec<usize>, Vec<u8>)> {
    jaxrs::tree::leaves(tree)
        .iter()
        .map(|leaf| {
            let host = leaf.to_host();
            (
                host.dtype(),
                host.shape().to_vec(),
                host.as_bytes().to_vec(),
            )
        })
        .collect()
}

fn zeros_like<T: Tree>(tree: &T) -> T {
    jaxrs::tree::map(tree, |x| Array::zeros(x.shape(), x.dtype()))
}

#[test]
fn restores_are_bit_exact_in_every_dtype() {
    setup();
    let dir = temp_dir("dtypes");
    let mut manager = CheckpointManager::new(&dir, CheckpointManagerOptions::default()).unwrap();
    let state = mixed();
    manager.save(1, &state, SaveArgs::default()).unwrap();
    manager.wait_until_finished().unwrap();
    let restored = manager.restore(1, &zeros_like(&state)).unwrap();
    assert_eq!(leaf_bytes(&restored), leaf_bytes(&state));
    assert_eq!(restored.w_bf16.dtype(), DType::BF16);
    // A template of another dtype is a mismatch that names the tensor.
    let mut wrong = zeros_like(&state);
    wrong.u32_key = Array::zeros(&[3], DType::I32);
    match manager.restore(1, &wrong) {
        Err(CheckpointError::Mismatch(m)) => assert!(m.contains("u32_key"), "{m}"),
        other => panic!("expected a mismatch, got {:?}", other.map(|_| ())),
    }
    drop(manager);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sharded_tree_restores_onto_the_templates_layouts() {
    setup();
    let grid = jaxrs::make_mesh(&[2, 4], &["dp", "mp"]).unwrap();
    let row = jaxrs::make_mesh(&[8], &["d"]).unwrap();
    let on = |mesh: &jaxrs::Mesh, spec, x: &Array| {
        jaxrs::device_put(x, NamedSharding::new(mesh.clone(), spec).unwrap())
    };
    let w = Array::arange(0.0, 128.0, 1.0, DType::F32).reshape([16, 8]);
    let b = Array::arange(-4.0, 4.0, 1.0, DType::F32).astype(DType::BF16);
    let saved = (on(&grid, P!["dp", "mp"], &w), on(&grid, P![], &b));

    // Saved from the host copy (async) or straight from the devices (sync): the same file, the
    // one `to_bytes` makes of the gathered tree.
    for enable_async in [true, false] {
        let dir = temp_dir(&format!("sharded-{enable_async}"));
        let options = CheckpointManagerOptions {
            enable_async,
            ..Default::default()
        };
        let mut manager = CheckpointManager::new(&dir, options).unwrap();
        manager.save(3, &saved, SaveArgs::default()).unwrap();
        manager.wait_until_finished().unwrap();
        let file = std::fs::read(dir.join("3/state.safetensors")).unwrap();
        let gathered = (w.clone(), b.clone());
        let expected = checkpoint::to_bytes(&gathered, &checkpoint::Metadata::at_step(3));
        assert!(
            file == expected.unwrap(),
            "async {enable_async}: another file"
        );

        // Onto 8x1 rows and a replicated bias; then onto one device.
        let template = (
            on(&row, P!["d"], &Array::zeros(&[16, 8], DType::F32)),
            on(&row, P!["d"], &Array::zeros(&[8], DType::BF16)),
        );
        let restored = manager.restore(3, &template).unwrap();
        assert_eq!(restored.0.sharding(), template.0.sharding());
        assert_eq!(restored.1.sharding(), template.1.sharding());
        assert_eq!(restored.0.addressable_shards()[1].index, vec![2..4, 0..8]);
        assert_eq!(leaf_bytes(&restored), leaf_bytes(&gathered));
        let one_device = (
            Array::zeros(&[16, 8], DType::F32),
            Array::zeros(&[8], DType::BF16),
        );
        let single = manager.restore(3, &one_device).unwrap();
        assert_eq!(leaf_bytes(&single), leaf_bytes(&gathered));
        drop(manager);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A tree of about `mib` MiB whose values depend on `step` and on the position.
fn big_state(step: u64, mib: usize) -> (Array, Array) {
    let n = mib << 18; // u32 elements
    let large = &Array::arange(0.0, n as f64, 1.0, DType::U32)
        + &Array::scalar((step as u32).wrapping_mul(2_654_435_761));
    (large, Array::scalar(step as i32))
}

#[test]
fn an_async_save_writes_the_values_at_the_call() {
    setup();
    let dir = temp_dir("async");
    let mut manager = CheckpointManager::new(&dir, CheckpointManagerOptions::default()).unwrap();
    let expected = leaf_bytes(&big_state(1, 32));
    let state = big_state(1, 32);
    assert!(manager.save(1, &state, SaveArgs::default()).unwrap());
    // The arrays are on the host already: the caller may drop (or donate) them.
    drop(state);
    // A second save waits for the first: when it returns, step 1 is complete and listed.
    assert!(manager
        .save(2, &big_state(2, 32), SaveArgs::default())
        .unwrap());
    assert_eq!(manager.all_steps(), vec![1]);
    // A bounded wait (a zero one returns at once, whether the save is done or not).
    let _ = manager.wait_until_finished_for(Duration::ZERO).unwrap();
    assert!(manager
        .wait_until_finished_for(Duration::from_secs(120))
        .unwrap());
    assert!(!manager.is_saving());
    manager.wait_until_finished().unwrap();
    assert_eq!(manager.all_steps(), vec![1, 2]);
    let template = (Array::zeros(&[32 << 18], DType::U32), Array::scalar(0i32));
    assert_eq!(
        leaf_bytes(&manager.restore(1, &template).unwrap()),
        expected
    );
    assert_eq!(
        leaf_bytes(&manager.restore(2, &template).unwrap()),
        leaf_bytes(&big_state(2, 32))
    );
    // No temp folder is left behind.
    assert_eq!(folders(&dir), ["1", "2"]);
    drop(manager);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_background_save_is_reported_once_and_not_listed() {
    setup();
    let dir = temp_dir("failing");
    let mut manager = CheckpointManager::new(&dir, CheckpointManagerOptions::default()).unwrap();
    manager.save(1, &tiny(1), SaveArgs::default()).unwrap();
    manager.wait_until_finished().unwrap();
    // The folder vanishes under the manager (a removed or unmounted disk): the write fails
    // on the background thread.
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(manager.save(2, &tiny(2), SaveArgs::default()).unwrap());
    match manager.wait_until_finished() {
        Err(CheckpointError::AsyncSave { step: 2, error }) => {
            let message = error.to_string();
            assert!(
                matches!(*error, CheckpointError::Io(ref e) if e.kind() == std::io::ErrorKind::NotFound),
                "{message}"
            );
            assert!(
                message.contains("jaxrs-manager-failing"),
                "names the path: {message}"
            );
        }
        other => panic!("expected the background failure, got {other:?}"),
    }
    // Reported once; the step was never listed.
    manager.wait_until_finished().unwrap();
    assert_eq!(manager.all_steps(), vec![1]);

    // The next save reports the failure of the one before it, and is not made.
    assert!(manager.save(3, &tiny(3), SaveArgs::default()).unwrap());
    let next = manager.save(4, &tiny(4), SaveArgs::default());
    assert!(
        matches!(next, Err(CheckpointError::AsyncSave { step: 3, .. })),
        "{next:?}"
    );
    // Once the folder is back, saves work again.
    std::fs::create_dir_all(&dir).unwrap();
    assert!(manager.save(4, &tiny(4), SaveArgs::default()).unwrap());
    manager.close().unwrap();
    let manager = CheckpointManager::new(&dir, sync_options()).unwrap();
    assert_eq!(manager.all_steps(), vec![4]);

    // Synchronously, the same failure is the save's own error.
    let mut sync = manager;
    std::fs::remove_dir_all(&dir).unwrap();
    let err = sync.save(5, &tiny(5), SaveArgs::default()).unwrap_err();
    assert!(matches!(err, CheckpointError::Io(_)), "{err:?}");
    drop(sync);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_manager_can_move_to_another_thread() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<CheckpointManager>();
    send_and_sync::<CheckpointManagerOptions>();
}

#[test]
fn a_second_manager_on_one_folder_is_refused() {
    setup();
    let dir = temp_dir("locked");
    let first = CheckpointManager::new(&dir, sync_options()).unwrap();
    let second = CheckpointManager::new(&dir, sync_options()).unwrap_err();
    let message = second.to_string();
    assert!(
        message.contains("only one CheckpointManager")
            && message.contains(&std::process::id().to_string()),
        "{message}"
    );
    drop(first);
    CheckpointManager::new(&dir, sync_options()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hostile_folders_are_ignored_or_refused_by_name() {
    setup();
    let dir = temp_dir("hostile");
    let mut manager = CheckpointManager::new(&dir, sync_options()).unwrap();
    for step in [2, 3, 4, 5] {
        manager
            .save(step, &tiny(step), SaveArgs::default())
            .unwrap();
    }
    drop(manager);
    let write = |rel: &str, bytes: &[u8]| std::fs::write(dir.join(rel), bytes).unwrap();
    // Step 3's metadata is garbage; step 4's tensors are cut short; step 5's metadata is too
    // big to read.
    write("3/_CHECKPOINT_METADATA", b"{\"step\": 3, \"format\": ");
    let state = dir.join("4/state.safetensors");
    let len = std::fs::metadata(&state).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&state)
        .unwrap()
        .set_len(len - 3)
        .unwrap();
    write(
        "5/_CHECKPOINT_METADATA",
        &vec![b' '; MAX_STEP_METADATA_BYTES as usize + 1],
    );
    // Not steps: names that are not numbers as written, a folder without metadata, a file,
    // a symlink to a step; and a crashed save's temp folder.
    for name in ["abc", "007", "6", "8.orbax-checkpoint-tmp-123-0-1"] {
        std::fs::create_dir_all(dir.join(name)).unwrap();
    }
    std::fs::copy(
        dir.join("2/_CHECKPOINT_METADATA"),
        dir.join("abc/_CHECKPOINT_METADATA"),
    )
    .unwrap();
    write(
        "8.orbax-checkpoint-tmp-123-0-1/state.safetensors",
        b"partial",
    );
    write("7", b"a file");
    std::os::unix::fs::symlink(dir.join("2"), dir.join("9")).unwrap();

    let manager = CheckpointManager::new(&dir, sync_options()).unwrap();
    assert_eq!(manager.all_steps(), vec![2, 3, 4, 5]);
    assert_eq!(manager.latest_step(), Some(5));
    assert!(
        !dir.join("8.orbax-checkpoint-tmp-123-0-1").exists(),
        "leftover deleted"
    );
    for kept in ["abc", "007", "6", "7", "9"] {
        assert!(
            dir.join(kept).symlink_metadata().is_ok(),
            "{kept} left alone"
        );
    }
    let named = |e: CheckpointError, file: &str| {
        let message = e.to_string();
        assert!(matches!(e, CheckpointError::Format(_)), "{message}");
        assert!(message.contains(file), "names {file}: {message}");
    };
    named(manager.metadata(3).unwrap_err(), "3/_CHECKPOINT_METADATA");
    named(manager.metadata(5).unwrap_err(), "5/_CHECKPOINT_METADATA");
    named(
        manager.restore(4, &tiny(0)).unwrap_err(),
        "4/state.safetensors",
    );
    // Step 3's tensors are whole, and restore; 2 is untouched.
    assert_eq!(
        manager.restore(3, &tiny(0)).unwrap().to_vec::<f32>(),
        [3.0; 2]
    );
    assert_eq!(manager.metadata(2).unwrap().step, 2);
    // Metadata that says another step than its folder's is refused.
    std::fs::copy(
        dir.join("2/_CHECKPOINT_METADATA"),
        dir.join("3/_CHECKPOINT_METADATA"),
    )
    .unwrap();
    let message = manager.metadata(3).unwrap_err().to_string();
    assert!(message.contains("says step 2"), "{message}");
    // A tensor file replaced by a symlink (to a FIFO, say, or someone else's file) is refused.
    let planted = dir.join("2/state.safetensors");
    std::fs::remove_file(&planted).unwrap();
    std::os::unix::fs::symlink(dir.join("3/state.safetensors"), &planted).unwrap();
    named(
        manager.restore(2, &tiny(0)).unwrap_err(),
        "2/state.safetensors",
    );
    drop(manager);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Elements (u32) of the large leaf the killed child saves: 24 MiB.
const KILL_MIB: usize = 24;

/// The child: opens the manager on `dir`, and saves asynchronously, from the step after the
/// latest on, keeping 3, printing `saving N` before and `saved N` after each call returns.
fn save_loop(dir: &Path) {
    setup();
    let options = CheckpointManagerOptions {
        max_to_keep: Some(3),
        ..Default::default()
    };
    let mut manager = CheckpointManager::new(dir, options).unwrap();
    let first = manager.latest_step().map_or(1, |s| s + 1);
    for step in first.. {
        let state = big_state(step, KILL_MIB);
        println!("saving {step}");
        manager
            .save(step, &state, SaveArgs::metrics(json!({"step": step})))
            .unwrap();
        println!("saved {step}");
    }
}

fn spawn_child(dir: &Path) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "a_child_killed_during_async_saves_leaves_only_whole_steps",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the child starts")
}

/// A child process killed when the test lets go of it, even by panicking: a saving child left
/// behind would save forever.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (bounded) for the child's line `line`.
fn wait_for(lines: &mpsc::Receiver<String>, line: &str) {
    loop {
        match lines.recv_timeout(Duration::from_secs(180)) {
            Ok(l) if l == line => return,
            Ok(_) => {}
            Err(e) => panic!("the child never printed {line:?}: {e}"),
        }
    }
}

#[test]
fn a_child_killed_during_async_saves_leaves_only_whole_steps() {
    if let Ok(dir) = std::env::var(CHILD) {
        return save_loop(Path::new(&dir));
    }
    setup();
    let dir = temp_dir("killed");
    let template = (
        Array::zeros(&[KILL_MIB << 18], DType::U32),
        Array::scalar(0i32),
    );
    // Kills at several moments of the child's saves: as soon as a save call returns (the
    // write just started), and at delays spread over the writes that follow.
    let delays_ms = [0u64, 0, 3, 10, 25, 60, 120, 250];
    let mut latest_seen = 0;
    for (kill, &delay) in delays_ms.iter().enumerate() {
        let mut child = KillOnDrop(spawn_child(&dir));
        let lines = lines_of(&mut child.0);
        // The child starts after the latest step; wait until it has written at least one
        // more, and returned from the save after it.
        let first = latest_seen + 1;
        wait_for(&lines, &format!("saved {}", first + 1));
        std::thread::sleep(Duration::from_millis(delay));
        child.0.kill().expect("SIGKILL the saving child");
        child.0.wait().unwrap();
        // The last `saved N` the child printed: step N-1 was complete when it did.
        let mut returned = first + 1;
        while let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            if let Some(n) = line.strip_prefix("saved ") {
                returned = returned.max(n.parse().unwrap());
            }
        }

        let manager = CheckpointManager::new(&dir, CheckpointManagerOptions::default()).unwrap();
        let steps = manager.all_steps();
        let latest = manager.latest_step().expect("a complete step");
        assert!(
            latest + 1 >= returned && latest <= returned,
            "kill {kill} ({delay} ms): the latest step {latest}, but the save of {returned} had returned"
        );
        // Retention keeps 3; a kill between a rename and the deletions it causes may leave one
        // more.
        assert!(steps.len() <= 4, "kill {kill}: {steps:?}");
        for &step in &steps {
            let restored = manager.restore(step, &template).unwrap_or_else(|e| {
                panic!("kill {kill} ({delay} ms): step {step} does not restore: {e}")
            });
            assert_eq!(
                leaf_bytes(&restored),
                leaf_bytes(&big_state(step, KILL_MIB)),
                "kill {kill}: step {step}"
            );
            assert_eq!(
                manager.metadata(step).unwrap().metrics,
                Some(json!({"step": step}))
            );
        }
        // Opening deleted the temp folder of the save the kill interrupted.
        assert!(
            folders(&dir).iter().all(|n| !n.contains("tmp")),
            "{:?}",
            folders(&dir)
        );
        latest_seen = latest;
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
