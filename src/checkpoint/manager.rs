//! [`CheckpointManager`]: a folder of checkpoints, one per training step, as Orbax keeps them.
//! Its documentation says how, for users (this module is private; its items are re-exported
//! by `jaxrs::checkpoint`).

use super::{tensors_of, write_file, CheckpointError, Metadata, Piece, Tensor, TensorSpec};
use crate::{HostArray, Tree};
use jaxrs_runtime::fs_safety::WithPath;
use jaxrs_runtime::fs_safety::{open_regular, sync_folder, write_atomic, LockFile, PathError};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The largest `_CHECKPOINT_METADATA` file a manager reads or writes: 1 MiB (metrics and your
/// JSON are meant to be small). A bigger file on disk is refused before it is read; a save
/// whose metadata would be bigger is refused before anything is written.
pub const MAX_STEP_METADATA_BYTES: u64 = 1 << 20;

/// The tensors of a step, in its folder.
const STATE_FILE: &str = "state.safetensors";
/// A step's metadata, written last into its folder: a folder without it is not a step.
const METADATA_FILE: &str = "_CHECKPOINT_METADATA";
/// Between a step and a nonce in the name of a folder being written or deleted (Orbax's).
const TMP_MARK: &str = ".orbax-checkpoint-tmp-";
/// The lock file that keeps a second manager (whose opening deletes temp folders) off `DIR`.
const LOCK_FILE: &str = ".checkpoint-manager.lock";
/// The value of the metadata's `format` field.
const FORMAT: &str = "jaxrs.checkpoint_manager.v1";

/// A metric read from a step's metrics JSON, for keeping the best steps
/// ([`CheckpointManagerOptions::best_fn`]); `None` when the step has no such metric.
pub type BestFn = Arc<dyn Fn(&Value) -> Option<f64> + Send + Sync>;

/// Whether the best steps are those of the smallest metric (a loss) or the largest (an
/// accuracy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BestMode {
    /// Keep the steps of the smallest metric.
    #[default]
    Min,
    /// Keep the steps of the largest metric.
    Max,
}

/// How a [`CheckpointManager`] saves and which steps it keeps (Orbax's
/// `CheckpointManagerOptions`). The default keeps every step, saves every step it is given,
/// and saves asynchronously.
///
/// Retention runs after each completed save. Without `best_fn`, the steps beyond the
/// `max_to_keep` most recent are deleted; with it, those beyond the `max_to_keep` best by the
/// metric (ties: the older goes first). Either way a step that is a multiple of `keep_period`
/// is never deleted (it still counts among the `max_to_keep`), nor is the latest step, so a
/// run can always resume where it stopped.
///
/// ```
/// use jaxrs::checkpoint::{BestMode, CheckpointManagerOptions};
///
/// // The 3 steps of least loss, every 1000th step, and the latest.
/// let options = CheckpointManagerOptions {
///     max_to_keep: Some(3),
///     keep_period: Some(1000),
///     ..CheckpointManagerOptions::best_metric("loss", BestMode::Min)
/// };
/// assert_eq!(options.save_interval_steps, 1);
/// ```
#[derive(Clone)]
pub struct CheckpointManagerOptions {
    /// How many steps to keep (the latest ones, or the best ones with `best_fn`); `None`
    /// keeps all.
    pub max_to_keep: Option<usize>,
    /// Steps that are multiples of this are kept forever.
    pub keep_period: Option<u64>,
    /// The metric that ranks steps, read from the metrics each save was given.
    pub best_fn: Option<BestFn>,
    /// Whether `best_fn`'s best is its smallest or its largest value.
    pub best_mode: BestMode,
    /// With `best_fn`: whether a step without the metric is kept forever (`true`, Orbax's
    /// default) or deleted first.
    pub keep_checkpoints_without_metrics: bool,
    /// [`CheckpointManager::save`] saves only steps that are multiples of this (unless
    /// forced); at least 1.
    pub save_interval_steps: u64,
    /// Write in the background ([`CheckpointManager::save`] returns once the arrays are on
    /// the host); `false` writes before `save` returns.
    pub enable_async: bool,
}

impl Default for CheckpointManagerOptions {
    fn default() -> Self {
        CheckpointManagerOptions {
            max_to_keep: None,
            keep_period: None,
            best_fn: None,
            best_mode: BestMode::Min,
            keep_checkpoints_without_metrics: true,
            save_interval_steps: 1,
            enable_async: true,
        }
    }
}

impl CheckpointManagerOptions {
    /// Options that rank steps by the number under `key` in their metrics (`{"loss": 0.3}`),
    /// best as `mode` says; set `max_to_keep` to say how many.
    pub fn best_metric(key: &str, mode: BestMode) -> Self {
        let key = key.to_string();
        CheckpointManagerOptions {
            best_fn: Some(Arc::new(move |metrics: &Value| metrics.get(&key)?.as_f64())),
            best_mode: mode,
            ..Default::default()
        }
    }
}

impl fmt::Debug for CheckpointManagerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckpointManagerOptions")
            .field("max_to_keep", &self.max_to_keep)
            .field("keep_period", &self.keep_period)
            .field("best_fn", &self.best_fn.as_ref().map(|_| "Fn"))
            .field("best_mode", &self.best_mode)
            .field(
                "keep_checkpoints_without_metrics",
                &self.keep_checkpoints_without_metrics,
            )
            .field("save_interval_steps", &self.save_interval_steps)
            .field("enable_async", &self.enable_async)
            .finish()
    }
}

/// What a save records besides the tree (Orbax's `save(.., metrics=, force=,
/// custom_metadata=)`).
///
/// ```
/// use jaxrs::checkpoint::SaveArgs;
/// use serde_json::json;
///
/// let args = SaveArgs::metrics(json!({"loss": 0.25})).with_custom(json!({"run": "a"}));
/// assert!(!args.force);
/// ```
#[derive(Clone, Debug, Default)]
pub struct SaveArgs {
    /// Metrics of the step (a JSON object such as `{"loss": 0.25}`), which
    /// [`CheckpointManagerOptions::best_fn`] ranks steps by.
    pub metrics: Option<Value>,
    /// Any JSON of yours, returned by [`CheckpointManager::metadata`].
    pub custom_metadata: Value,
    /// Save even when the step is not a multiple of `save_interval_steps`, or not after the
    /// latest step.
    pub force: bool,
}

impl SaveArgs {
    /// A save recording `metrics`.
    pub fn metrics(metrics: Value) -> SaveArgs {
        SaveArgs {
            metrics: Some(metrics),
            ..Default::default()
        }
    }

    /// These args with `custom` as the custom metadata.
    pub fn with_custom(mut self, custom: Value) -> SaveArgs {
        self.custom_metadata = custom;
        self
    }

    /// These args, forced.
    pub fn forced(mut self) -> SaveArgs {
        self.force = true;
        self
    }
}

/// A step's metadata: `DIR/<step>/_CHECKPOINT_METADATA`.
#[derive(Clone, Debug, PartialEq)]
pub struct StepMetadata {
    /// The step.
    pub step: u64,
    /// When its save was called.
    pub init_time: SystemTime,
    /// When its files were written (just before the folder was renamed into place).
    pub commit_time: SystemTime,
    /// The metrics it was saved with.
    pub metrics: Option<Value>,
    /// The custom metadata it was saved with (`null` if none).
    pub custom_metadata: Value,
}

impl StepMetadata {
    fn to_json(&self) -> Vec<u8> {
        let nanos = |t: SystemTime| {
            t.duration_since(UNIX_EPOCH)
                .unwrap_or(Duration::ZERO)
                .as_nanos() as u64
        };
        let value = json!({
            "format": FORMAT,
            "step": self.step,
            "init_timestamp_nsecs": nanos(self.init_time),
            "commit_timestamp_nsecs": nanos(self.commit_time),
            "metrics": self.metrics,
            "custom_metadata": self.custom_metadata,
        });
        serde_json::to_vec_pretty(&value).expect("a JSON value serializes")
    }

    /// Parses the metadata of `step` from `bytes`, read from `path`; the error names the path.
    fn from_json(bytes: &[u8], step: u64, path: &Path) -> Result<StepMetadata, CheckpointError> {
        let bad = |why: String| {
            CheckpointError::Format(format!("{}: not a step's metadata: {why}", path.display()))
        };
        let value: Value = serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
        let object = value
            .as_object()
            .ok_or_else(|| bad("not a JSON object".into()))?;
        let number = |key: &str| {
            object
                .get(key)
                .and_then(Value::as_u64)
                .ok_or_else(|| bad(format!("`{key}` is missing or not a whole number")))
        };
        if object.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(bad(format!("`format` is not \"{FORMAT}\"")));
        }
        let saved = number("step")?;
        if saved != step {
            return Err(bad(format!(
                "it says step {saved}, in the folder of step {step}"
            )));
        }
        let time = |key: &str| number(key).map(|n| UNIX_EPOCH + Duration::from_nanos(n));
        Ok(StepMetadata {
            step,
            init_time: time("init_timestamp_nsecs")?,
            commit_time: time("commit_timestamp_nsecs")?,
            metrics: object.get("metrics").filter(|m| !m.is_null()).cloned(),
            custom_metadata: object
                .get("custom_metadata")
                .cloned()
                .unwrap_or(Value::Null),
        })
    }
}

/// The complete steps in the folder, with their metrics (`None`: none recorded, or the
/// metadata did not parse; [`CheckpointManager::metadata`] says why).
type Steps = BTreeMap<u64, Option<Value>>;

/// A save writing on its background thread.
struct Pending {
    step: u64,
    thread: JoinHandle<Result<(), CheckpointError>>,
}

/// Keeps checkpoints of a training run in a folder, one per step (Orbax's
/// `CheckpointManager`): atomic step folders, asynchronous saves, retention by recency,
/// period and metric, and restore onto a template (sharded leaves onto the template's
/// layouts).
///
/// ```text
/// DIR/
///   .checkpoint-manager.lock          held by the one manager writing DIR
///   1000/
///     state.safetensors               the tree (the file `jaxrs::checkpoint::save` writes)
///     _CHECKPOINT_METADATA            step, wall times, metrics, your JSON
///   2000/ ...
///   3000.orbax-checkpoint-tmp-...     a save under way (or a crashed one's remains)
/// ```
///
/// A step is written into a temp folder beside its final name, fsynced, and renamed onto
/// `DIR/<step>` when complete, so a process killed at any moment leaves only whole steps (and
/// perhaps a temp folder, which the next manager opened on `DIR` deletes). With `enable_async`
/// (the default) [`save`](Self::save) returns once the arrays are copied to host memory, and
/// the files are written on a background thread; the next save,
/// [`wait_until_finished`](Self::wait_until_finished) or closing the manager waits for it and
/// reports its failure. After each completed save, the retention policy
/// ([`CheckpointManagerOptions`]) deletes the steps it no longer keeps.
///
/// What is read from the folder is untrusted: an entry whose name is not a step number
/// written plainly, a step folder without its metadata file, and symlinks are not steps; a
/// metadata file is bounded ([`MAX_STEP_METADATA_BYTES`]) before it is read, and one that is
/// not valid is an error naming it; tensor files are read as [`load`](super::load) reads them.
///
/// Only one manager may hold a folder at a time (a lock file in it says which process does);
/// dropping the manager waits for its save under way, as [`close`](Self::close) does.
///
/// ```
/// use jaxrs::checkpoint::{CheckpointManager, CheckpointManagerOptions, SaveArgs};
/// use jaxrs::prelude::*;
/// use serde_json::json;
///
/// let dir = std::env::temp_dir().join(format!("jaxrs-manager-doc-{}", std::process::id()));
/// let options = CheckpointManagerOptions { max_to_keep: Some(2), ..Default::default() };
/// let mut manager = CheckpointManager::new(&dir, options).unwrap();
/// let mut w = Array::zeros(&[3], DType::F32);
/// for step in 1..=4u64 {
///     w = &w + 1.0;
///     // Returns once `w` is on the host; the file is written in the background.
///     manager.save(step, &w, SaveArgs::metrics(json!({"loss": 1.0 / step as f64}))).unwrap();
/// }
/// manager.wait_until_finished().unwrap();
/// assert_eq!(manager.all_steps(), vec![3, 4]);
/// assert_eq!(manager.latest_step(), Some(4));
/// let restored = manager.restore(4, &Array::zeros(&[3], DType::F32)).unwrap();
/// assert_eq!(restored.to_vec::<f32>(), vec![4.0; 3]);
/// assert_eq!(manager.metadata(4).unwrap().metrics, Some(json!({"loss": 0.25})));
/// # drop(manager);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct CheckpointManager {
    dir: PathBuf,
    options: CheckpointManagerOptions,
    steps: Arc<Mutex<Steps>>,
    pending: Option<Pending>,
    _lock: LockFile,
}

impl fmt::Debug for CheckpointManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckpointManager")
            .field("dir", &self.dir)
            .field("options", &self.options)
            .field("steps", &self.all_steps())
            .field("saving", &self.pending.as_ref().map(|p| p.step))
            .finish()
    }
}

fn io(e: PathError) -> CheckpointError {
    CheckpointError::Io(e.into())
}

fn lock(steps: &Mutex<Steps>) -> MutexGuard<'_, Steps> {
    // A panic elsewhere while holding the lock leaves the map itself whole (every update is
    // a single insert or remove).
    steps
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A name no other temp folder of this process or another has.
fn nonce() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_nanos();
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The step a folder entry's name stands for: a number written as `u64::to_string` writes
/// it (so `007`, `+7` and `7.bak` are not steps).
fn step_of(name: &str) -> Option<u64> {
    let step: u64 = name.parse().ok()?;
    (step.to_string() == name).then_some(step)
}

/// Whether a folder entry's name is one of a temp folder ([`TMP_MARK`]) after a step.
fn is_temp(name: &str) -> bool {
    name.split_once(TMP_MARK)
        .is_some_and(|(step, _)| step_of(step).is_some())
}

fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

fn is_real_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// Reads a step's metadata file, bounded by [`MAX_STEP_METADATA_BYTES`] before reading.
fn read_metadata(dir: &Path, step: u64) -> Result<StepMetadata, CheckpointError> {
    let path = dir.join(step.to_string()).join(METADATA_FILE);
    let mut file = open_regular(&path).at("open", &path).map_err(io)?;
    let len = file
        .metadata()
        .at("read the size of", &path)
        .map_err(io)?
        .len();
    if len > MAX_STEP_METADATA_BYTES {
        return Err(CheckpointError::Format(format!(
            "{}: {len} bytes, more than the {MAX_STEP_METADATA_BYTES} a step's metadata may have",
            path.display()
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    (&mut file)
        .take(MAX_STEP_METADATA_BYTES + 1)
        .read_to_end(&mut bytes)
        .at("read", &path)
        .map_err(io)?;
    StepMetadata::from_json(&bytes, step, &path)
}

/// Renames a step's folder out of the listing, then deletes it: a crash in between leaves a
/// temp folder, never half a step.
fn delete_step_folder(dir: &Path, step: u64) -> Result<(), CheckpointError> {
    let folder = dir.join(step.to_string());
    let doomed = dir.join(format!("{step}{TMP_MARK}deleting-{}", nonce()));
    std::fs::rename(&folder, &doomed)
        .at("rename for deletion", &folder)
        .map_err(io)?;
    sync_folder(dir).map_err(io)?;
    std::fs::remove_dir_all(&doomed)
        .at("delete", &doomed)
        .map_err(io)
}

/// The steps retention deletes from `steps` (see [`CheckpointManagerOptions`]).
fn steps_to_delete(steps: &Steps, options: &CheckpointManagerOptions) -> Vec<u64> {
    let Some(max_to_keep) = options.max_to_keep else {
        return Vec::new();
    };
    let latest = steps.keys().next_back().copied();
    // The steps that may be deleted, least worth keeping first.
    let ranked: Vec<u64> = match &options.best_fn {
        None => steps.keys().copied().collect(),
        Some(best_fn) => {
            let metric = |m: &Option<Value>| m.as_ref().and_then(|m| best_fn(m));
            let (mut with, mut without) = (Vec::new(), Vec::new());
            for (&step, metrics) in steps {
                match metric(metrics) {
                    Some(value) if !value.is_nan() => with.push((step, value)),
                    _ => without.push(step),
                }
            }
            // Worst first; of equal metrics, the older first.
            with.sort_by(|(sa, a), (sb, b)| {
                let worse = match options.best_mode {
                    BestMode::Min => b.total_cmp(a),
                    BestMode::Max => a.total_cmp(b),
                };
                worse.then(sa.cmp(sb))
            });
            let with = with.into_iter().map(|(step, _)| step);
            if options.keep_checkpoints_without_metrics {
                with.collect()
            } else {
                without.into_iter().chain(with).collect()
            }
        }
    };
    let excess = ranked.len().saturating_sub(max_to_keep);
    ranked[..excess]
        .iter()
        .copied()
        .filter(|&step| Some(step) != latest)
        .filter(|&step| {
            !options
                .keep_period
                .is_some_and(|k| k > 0 && step.is_multiple_of(k))
        })
        .collect()
}

/// A piece of an array copied to the host: its range along each dimension, its elements.
type HostPiece = (Vec<Range<usize>>, HostArray);

/// A tree copied to the host: each tensor's distinct pieces (replicas once).
struct HostTree {
    tensors: Vec<Vec<HostPiece>>,
}

impl HostTree {
    fn of(tensors: Vec<Tensor>) -> Result<HostTree, CheckpointError> {
        let tensors = tensors
            .into_iter()
            .map(|tensor| {
                tensor
                    .leaf
                    .addressable_shards()
                    .into_iter()
                    .filter(|shard| shard.replica_id == 0)
                    .map(|shard| {
                        let host = shard.data.try_to_host();
                        Ok((shard.index, host.map_err(CheckpointError::Device)?))
                    })
                    .collect::<Result<Vec<_>, CheckpointError>>()
            })
            .collect::<Result<Vec<_>, CheckpointError>>()?;
        Ok(HostTree { tensors })
    }
}

/// Everything a save's write needs but the tensors' pieces, owned, so that it can run on
/// another thread.
struct SaveJob {
    dir: PathBuf,
    step: u64,
    specs: Vec<TensorSpec>,
    metadata: StepMetadata,
    options: CheckpointManagerOptions,
    steps: Arc<Mutex<Steps>>,
}

impl SaveJob {
    /// Writes the step's folder, each tensor's pieces given by `pieces` (as [`write_file`]
    /// takes them), lists the step, and applies retention.
    fn run(
        mut self,
        pieces: impl FnMut(usize, &mut Piece<'_>) -> Result<(), CheckpointError>,
    ) -> Result<(), CheckpointError> {
        let temp = self.dir.join(format!("{}{TMP_MARK}{}", self.step, nonce()));
        let written = self.write(&temp, pieces);
        if written.is_err() {
            // Best effort: what is left is a temp folder, which the next open deletes.
            let _ = std::fs::remove_dir_all(&temp);
        }
        written?;
        let doomed = {
            let mut steps = lock(&self.steps);
            steps.insert(self.step, self.metadata.metrics.take());
            let doomed = steps_to_delete(&steps, &self.options);
            for step in &doomed {
                steps.remove(step);
            }
            doomed
        };
        doomed
            .into_iter()
            .try_for_each(|step| delete_step_folder(&self.dir, step))
    }

    fn write(
        &mut self,
        temp: &Path,
        pieces: impl FnMut(usize, &mut Piece<'_>) -> Result<(), CheckpointError>,
    ) -> Result<(), CheckpointError> {
        std::fs::create_dir(temp)
            .at("create the folder", temp)
            .map_err(io)?;
        let state = temp.join(STATE_FILE);
        write_file(&state, &self.specs, &Metadata::at_step(self.step), pieces)?;
        self.metadata.commit_time = SystemTime::now();
        write_atomic(&temp.join(METADATA_FILE), &self.metadata.to_json()).map_err(io)?;
        sync_folder(temp).map_err(io)?;
        let folder = self.dir.join(self.step.to_string());
        std::fs::rename(temp, &folder)
            .at("rename onto", &folder)
            .map_err(io)?;
        sync_folder(&self.dir).map_err(io)
    }
}

impl CheckpointManager {
    /// Opens (creating it if needed) the checkpoint folder `dir`, lists its complete steps,
    /// and deletes what crashed saves left there (temp folders). Entries that are not steps
    /// (names other than numbers, folders without their metadata, symlinks) are ignored and
    /// left alone.
    ///
    /// Fails with an I/O error naming the path when the folder cannot be created or read, or
    /// when another manager (in this process or another) holds it.
    pub fn new(
        dir: impl AsRef<Path>,
        options: CheckpointManagerOptions,
    ) -> Result<CheckpointManager, CheckpointError> {
        assert!(
            options.save_interval_steps > 0,
            "CheckpointManager::new: save_interval_steps must be at least 1"
        );
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)
            .at("create the folder", &dir)
            .map_err(io)?;
        let lock_path = dir.join(LOCK_FILE);
        let mut lock_file = LockFile::open(&lock_path).map_err(io)?;
        if !lock_file.try_lock().map_err(io)? {
            let holder = lock_file
                .holder()
                .map_or("another manager".to_string(), |pid| {
                    format!("process {pid}")
                });
            return Err(CheckpointError::Io(std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                format!(
                    "{} is held by {holder}: only one CheckpointManager may write a folder",
                    dir.display()
                ),
            )));
        }
        let mut steps = Steps::new();
        for entry in std::fs::read_dir(&dir).at("list", &dir).map_err(io)? {
            let entry = entry.at("list", &dir).map_err(io)?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let path = entry.path();
            if is_temp(&name) {
                let removed = if is_real_dir(&path) {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                removed.at("delete the leftover", &path).map_err(io)?;
            } else if let Some(step) = step_of(&name) {
                if is_real_dir(&path) && is_real_file(&path.join(METADATA_FILE)) {
                    let metrics = read_metadata(&dir, step).ok().and_then(|m| m.metrics);
                    steps.insert(step, metrics);
                }
            }
        }
        Ok(CheckpointManager {
            dir,
            options,
            steps: Arc::new(Mutex::new(steps)),
            pending: None,
            _lock: lock_file,
        })
    }

    /// The folder.
    pub fn directory(&self) -> &Path {
        &self.dir
    }

    /// The options it was opened with.
    pub fn options(&self) -> &CheckpointManagerOptions {
        &self.options
    }

    /// The complete steps, in increasing order (a save under way is not listed until it
    /// completes).
    pub fn all_steps(&self) -> Vec<u64> {
        lock(&self.steps).keys().copied().collect()
    }

    /// The latest complete step, if any.
    pub fn latest_step(&self) -> Option<u64> {
        lock(&self.steps).keys().next_back().copied()
    }

    /// The complete step of the best metric (`best_fn`, `best_mode`), if `best_fn` is set and
    /// any step has the metric; the latest of equals.
    pub fn best_step(&self) -> Option<u64> {
        let best_fn = self.options.best_fn.as_ref()?;
        let steps = lock(&self.steps);
        let scored = steps.iter().filter_map(|(&step, metrics)| {
            let value = best_fn(metrics.as_ref()?)?;
            (!value.is_nan()).then_some((step, value))
        });
        let best = match self.options.best_mode {
            BestMode::Min => scored.min_by(|(sa, a), (sb, b)| a.total_cmp(b).then(sb.cmp(sa))),
            BestMode::Max => scored.max_by(|(sa, a), (sb, b)| a.total_cmp(b).then(sa.cmp(sb))),
        };
        best.map(|(step, _)| step)
    }

    /// Whether [`save`](Self::save) would save `step`: a multiple of `save_interval_steps`,
    /// after the latest step saved or being saved.
    pub fn should_save(&self, step: u64) -> bool {
        let last = self
            .pending
            .as_ref()
            .map(|p| p.step)
            .max(self.latest_step());
        last.is_none_or(|last| step > last) && step.is_multiple_of(self.options.save_interval_steps)
    }

    /// Saves `tree` as `step` (unless [`should_save`](Self::should_save) says no and `args`
    /// does not force it: then `Ok(false)`), with `args`' metrics and custom metadata.
    ///
    /// First waits for the save under way, and returns its failure if it failed
    /// ([`CheckpointError::AsyncSave`]; this save is then not made). Then, with
    /// `enable_async`, copies the tree's arrays to host memory (each distinct shard of a
    /// sharded array) and returns while a background thread writes them; otherwise writes them
    /// straight from the devices, one shard on the host at a time, and returns when they are
    /// written. The step is listed once complete, and retention runs then. An async save
    /// holds one host copy of the tree until it is written; as each save first waits for the
    /// one before, there is never more than one.
    ///
    /// Errors: [`CheckpointError::StepExists`] for a step already in the folder, a metadata
    /// JSON over [`MAX_STEP_METADATA_BYTES`], a device failure while copying, and (when
    /// writing synchronously) the write's failure.
    pub fn save<T: Tree>(
        &mut self,
        step: u64,
        tree: &T,
        args: SaveArgs,
    ) -> Result<bool, CheckpointError> {
        self.wait_until_finished()?;
        if !args.force && !self.should_save(step) {
            return Ok(false);
        }
        if lock(&self.steps).contains_key(&step) || self.dir.join(step.to_string()).exists() {
            return Err(CheckpointError::StepExists {
                step,
                dir: self.dir.clone(),
            });
        }
        let metadata = StepMetadata {
            step,
            init_time: SystemTime::now(),
            commit_time: SystemTime::now(),
            metrics: args.metrics,
            custom_metadata: args.custom_metadata,
        };
        let json_len = metadata.to_json().len() as u64;
        if json_len > MAX_STEP_METADATA_BYTES {
            return Err(CheckpointError::Format(format!(
                "the metadata of step {step} would take {json_len} bytes, more than the \
                 {MAX_STEP_METADATA_BYTES} a step's metadata may have"
            )));
        }
        let tensors = tensors_of(tree)?;
        let job = SaveJob {
            dir: self.dir.clone(),
            step,
            specs: tensors.iter().map(Tensor::spec).collect(),
            metadata,
            options: self.options.clone(),
            steps: Arc::clone(&self.steps),
        };
        if !self.options.enable_async {
            // Straight from the devices, one shard on the host at a time, as `save` writes.
            job.run(|i, write| {
                for shard in tensors[i].leaf.addressable_shards() {
                    if shard.replica_id == 0 {
                        let host = shard.data.try_to_host();
                        write(&shard.index, &host.map_err(CheckpointError::Device)?)?;
                    }
                }
                Ok(())
            })?;
            return Ok(true);
        }
        // Every distinct shard copied to the host now: the caller may then change or donate
        // the arrays while the thread writes.
        let host = HostTree::of(tensors)?;
        let thread = std::thread::Builder::new()
            .name(format!("checkpoint-save-{step}"))
            .spawn(move || {
                job.run(|i, write| {
                    host.tensors[i]
                        .iter()
                        .try_for_each(|(index, piece)| write(index, piece))
                })
            })
            .map_err(|e| {
                CheckpointError::Io(std::io::Error::new(
                    e.kind(),
                    format!("cannot start the thread that saves step {step}: {e}"),
                ))
            })?;
        self.pending = Some(Pending { step, thread });
        Ok(true)
    }

    /// Waits for the save under way, if any, and returns its failure as
    /// [`CheckpointError::AsyncSave`] (once: the next call returns `Ok`).
    pub fn wait_until_finished(&mut self) -> Result<(), CheckpointError> {
        let Some(Pending { step, thread }) = self.pending.take() else {
            return Ok(());
        };
        let result = thread.join().unwrap_or_else(|panic| {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(CheckpointError::Format(format!(
                "the save thread panicked: {why}"
            )))
        });
        result.map_err(|error| CheckpointError::AsyncSave {
            step,
            error: Box::new(error),
        })
    }

    /// [`CheckpointManager::wait_until_finished`] for at most `timeout`: `Ok(true)` when no
    /// save is under way any more (its failure returned as there), `Ok(false)` when the save
    /// is still writing at the deadline (a dead disk, say); the save then goes on, and a later
    /// wait collects it.
    pub fn wait_until_finished_for(&mut self, timeout: Duration) -> Result<bool, CheckpointError> {
        let deadline = Instant::now() + timeout;
        loop {
            match &self.pending {
                None => return Ok(true),
                Some(p) if p.thread.is_finished() => {
                    self.wait_until_finished()?;
                    return Ok(true);
                }
                Some(_) if Instant::now() >= deadline => return Ok(false),
                // The writer signals nothing but its end; a short poll costs nothing next to
                // a checkpoint's write.
                Some(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    }

    /// Whether a save is being written in the background.
    pub fn is_saving(&self) -> bool {
        self.pending
            .as_ref()
            .is_some_and(|p| !p.thread.is_finished())
    }

    /// Reads step `step` into the structure, shapes, dtypes and layouts of `template` (see
    /// [`load`](super::load): each leaf restored onto the template leaf's sharding).
    pub fn restore<T: Tree>(&self, step: u64, template: &T) -> Result<T, CheckpointError> {
        let path = self.step_folder(step)?.join(STATE_FILE);
        // `load` follows symlinks (a user's file may be one); a step's file never is.
        if !is_real_file(&path) {
            return Err(CheckpointError::Format(format!(
                "{}: missing, or not a regular file",
                path.display()
            )));
        }
        let (tree, _) = super::load(path, template)?;
        Ok(tree)
    }

    /// The metadata of step `step`; a file that is not valid metadata is an error naming it.
    pub fn metadata(&self, step: u64) -> Result<StepMetadata, CheckpointError> {
        self.step_folder(step)?;
        read_metadata(&self.dir, step)
    }

    /// Deletes step `step`'s folder.
    pub fn delete(&mut self, step: u64) -> Result<(), CheckpointError> {
        if lock(&self.steps).remove(&step).is_none() {
            return Err(self.not_found(step));
        }
        delete_step_folder(&self.dir, step)
    }

    /// Waits for the save under way and closes the manager, returning that save's failure.
    pub fn close(mut self) -> Result<(), CheckpointError> {
        self.wait_until_finished()
    }

    fn not_found(&self, step: u64) -> CheckpointError {
        CheckpointError::StepNotFound {
            step,
            dir: self.dir.clone(),
        }
    }

    /// The folder of a listed step, checked to be a folder still (not a symlink planted
    /// since).
    fn step_folder(&self, step: u64) -> Result<PathBuf, CheckpointError> {
        let folder = self.dir.join(step.to_string());
        if !lock(&self.steps).contains_key(&step) || !is_real_dir(&folder) {
            return Err(self.not_found(step));
        }
        Ok(folder)
    }
}

impl Drop for CheckpointManager {
    fn drop(&mut self) {
        // A failure nobody can be told of any more is at least not silent.
        if let Err(e) = self.wait_until_finished() {
            eprintln!("jaxrs::checkpoint::CheckpointManager: {e}");
        }
    }
}
