//! The profiler's recorder: host spans kept while a trace is on, written as a Chrome /
//! Perfetto trace with a per-function summary. The public face is `jaxrs::profiler` (its docs
//! are in `lib.rs`).

use crate::error::{Error, Result};
use crate::fs_safety::AtomicFile;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// Whether a trace is being recorded (read on every span).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The trace being recorded: where it goes, and its events.
static RECORDING: Mutex<Option<Recording>> = Mutex::new(None);

/// A trace holds at most this many events (about 200 bytes each): a program that runs for
/// days under `start_trace` keeps the first ones and counts the rest as dropped.
const MAX_EVENTS: usize = 4_000_000;

struct Recording {
    dir: PathBuf,
    events: Vec<Event>,
    dropped: u64,
}

/// One span: a Chrome trace "complete" event.
struct Event {
    name: &'static str,
    category: &'static str,
    /// What the span is about: a jitted function (`jit `step``), an eager primitive, a
    /// user's annotation.
    subject: String,
    start_us: f64,
    duration_us: f64,
    thread: u64,
    /// Extra arguments (`cache = "hit"`, `bytes = 1024`, `step_num = 3`).
    args: Vec<(&'static str, String)>,
}

/// The time origin of every trace of the process.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ID.with(|id| *id)
}

fn recording() -> std::sync::MutexGuard<'static, Option<Recording>> {
    RECORDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An open span: recorded when dropped (if a trace is on), and entered as a `tracing` span
/// meanwhile.
#[must_use = "a span lasts as long as its guard"]
pub(crate) struct HostSpan {
    recorded: Option<(Instant, Event)>,
    _entered: tracing::span::EnteredSpan,
}

impl HostSpan {
    /// Adds an argument to the recorded event (evaluated only while tracing).
    pub(crate) fn arg(&mut self, key: &'static str, value: impl FnOnce() -> String) {
        if let Some((_, event)) = &mut self.recorded {
            event.args.push((key, value()));
        }
    }
}

impl Drop for HostSpan {
    fn drop(&mut self) {
        let Some((start, mut event)) = self.recorded.take() else {
            return;
        };
        event.duration_us = start.elapsed().as_secs_f64() * 1e6;
        let mut recording = recording();
        if let Some(r) = recording.as_mut() {
            if r.events.len() < MAX_EVENTS {
                r.events.push(event);
            } else {
                r.dropped += 1;
            }
        }
    }
}

/// Opens a span `name` (`trace`, `lower`, `compile`, `execute`, `transfer`, ...) of
/// `category` about `subject` (formatted only while a trace is on).
pub(crate) fn span(
    category: &'static str,
    name: &'static str,
    subject: impl FnOnce() -> String,
) -> HostSpan {
    let entered = tracing::debug_span!(target: "jaxrs::profile", "jaxrs", category, name).entered();
    let recorded = ACTIVE.load(Ordering::Relaxed).then(|| {
        let start = Instant::now();
        let event = Event {
            name,
            category,
            subject: subject(),
            start_us: start.duration_since(epoch()).as_secs_f64() * 1e6,
            duration_us: 0.0,
            thread: thread_id(),
            args: Vec::new(),
        };
        (start, event)
    });
    HostSpan {
        recorded,
        _entered: entered,
    }
}

/// Starts recording a trace that [`stop_trace`] writes into `log_dir` (created if needed), as
/// `jax.profiler.start_trace`. A trace already being recorded is an error.
pub fn start_trace(log_dir: impl AsRef<Path>) -> Result<()> {
    let dir = log_dir.as_ref().to_path_buf();
    std::fs::create_dir_all(&dir)?;
    let mut recording = recording();
    if recording.is_some() {
        return Err(Error::Io(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "jaxrs::profiler: a trace is already being recorded (stop_trace it first)",
        )));
    }
    epoch();
    *recording = Some(Recording {
        dir,
        events: Vec::new(),
        dropped: 0,
    });
    ACTIVE.store(true, Ordering::Relaxed);
    Ok(())
}

/// Stops the trace [`start_trace`] began, writes it as
/// `jaxrs-<ms since the epoch>-<pid>-<n>.trace.json` in its folder (Chrome's trace event format, which Perfetto's UI and `chrome://tracing`
/// open), prints the per-function summary to standard error, and returns it.
pub fn stop_trace() -> Result<TraceSummary> {
    ACTIVE.store(false, Ordering::Relaxed);
    let Some(recording) = recording().take() else {
        return Err(Error::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "jaxrs::profiler: no trace is being recorded (start_trace first)",
        )));
    };
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    // Two traces of one process in one millisecond still get two files.
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    let path = recording
        .dir
        .join(format!("jaxrs-{millis}-{pid}-{n}.trace.json"));
    let mut file = AtomicFile::create(&path).map_err(std::io::Error::from)?;
    write_chrome_trace(&mut file, &recording)?;
    file.commit().map_err(std::io::Error::from)?;
    let summary = TraceSummary::of(&recording, path);
    eprint!("{summary}");
    Ok(summary)
}

/// [`start_trace`] as a guard (`with jax.profiler.trace(dir):`): the trace stops when the
/// guard is dropped, or with [`TraceGuard::stop`], which returns the summary.
pub fn trace(log_dir: impl AsRef<Path>) -> Result<TraceGuard> {
    start_trace(log_dir)?;
    Ok(TraceGuard { stopped: false })
}

/// The trace [`trace`] started; stops it when dropped.
#[must_use = "the trace stops when the guard is dropped"]
pub struct TraceGuard {
    stopped: bool,
}

impl TraceGuard {
    /// Stops the trace now, returning what [`stop_trace`] returns.
    pub fn stop(mut self) -> Result<TraceSummary> {
        self.stopped = true;
        stop_trace()
    }
}

impl Drop for TraceGuard {
    fn drop(&mut self) {
        if !self.stopped {
            if let Err(e) = stop_trace() {
                log::warn!(target: "jaxrs::profile", "cannot write the trace: {e}");
            }
        }
    }
}

/// A span of the user's own in the trace (`jax.profiler.TraceAnnotation`), lasting as long as
/// the guard.
#[must_use = "the annotation lasts as long as its guard"]
pub struct TraceAnnotation {
    _span: HostSpan,
}

impl TraceAnnotation {
    /// An annotation named `name` (copied only while a trace is on).
    pub fn new(name: &str) -> TraceAnnotation {
        TraceAnnotation {
            _span: span("annotation", "annotation", || name.to_string()),
        }
    }
}

/// A training step in the trace (`jax.profiler.StepTraceAnnotation`): an annotation with its
/// step number, which the summary counts.
#[must_use = "the annotation lasts as long as its guard"]
pub struct StepTraceAnnotation {
    _span: HostSpan,
}

impl StepTraceAnnotation {
    /// Step `step_num` of the loop named `name` (copied only while a trace is on).
    pub fn new(name: &str, step_num: u64) -> StepTraceAnnotation {
        let mut span = span("step", "step", || name.to_string());
        span.arg("step_num", || step_num.to_string());
        StepTraceAnnotation { _span: span }
    }
}

fn write_chrome_trace(out: &mut impl Write, recording: &Recording) -> std::io::Result<()> {
    use serde_json::{json, Value};
    let mut events: Vec<Value> = vec![json!({
        "name": "process_name", "ph": "M", "pid": std::process::id(),
        "args": {"name": "jaxrs (host)"},
    })];
    for e in &recording.events {
        let mut args = serde_json::Map::new();
        args.insert("subject".into(), Value::String(e.subject.clone()));
        for (k, v) in &e.args {
            args.insert((*k).into(), Value::String(v.clone()));
        }
        let name = match e.category {
            "annotation" | "step" => e.subject.clone(),
            _ => format!("{} {}", e.name, e.subject),
        };
        events.push(json!({
            "name": name,
            "cat": e.category,
            "ph": "X",
            "ts": e.start_us,
            "dur": e.duration_us,
            "pid": std::process::id(),
            "tid": e.thread,
            "args": args,
        }));
    }
    let trace = json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"producer": "jaxrs", "dropped_events": recording.dropped},
    });
    serde_json::to_writer(&mut *out, &trace)?;
    out.flush()
}

/// What one jitted function (or eager primitive) did during a trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SiteSummary {
    /// Times its body was traced (once per new specialisation).
    pub traces: u64,
    /// Programs compiled or loaded for it, of which the persistent cache answered `disk_hits`.
    pub compiles: u64,
    pub disk_hits: u64,
    /// Launches of its compiled programs.
    pub executes: u64,
    /// Host time in each, in milliseconds.
    pub trace_ms: f64,
    pub lower_ms: f64,
    pub compile_ms: f64,
    pub execute_ms: f64,
}

/// The summary [`stop_trace`] prints: per jitted function (``jit `step` ``; eager operations as
/// ``eager `add` ``), and the transfers between host and devices.
#[derive(Clone, Debug)]
pub struct TraceSummary {
    /// The trace file written.
    pub path: PathBuf,
    pub sites: BTreeMap<String, SiteSummary>,
    /// Host-to-device and device-to-host copies, and their bytes.
    pub uploads: u64,
    pub upload_bytes: u64,
    pub downloads: u64,
    pub download_bytes: u64,
    /// `StepTraceAnnotation`s recorded.
    pub steps: u64,
    /// Events beyond the trace's capacity, not recorded.
    pub dropped_events: u64,
}

impl TraceSummary {
    fn of(recording: &Recording, path: PathBuf) -> TraceSummary {
        let mut summary = TraceSummary {
            path,
            sites: BTreeMap::new(),
            uploads: 0,
            upload_bytes: 0,
            downloads: 0,
            download_bytes: 0,
            steps: 0,
            dropped_events: recording.dropped,
        };
        let bytes = |e: &Event| {
            e.args
                .iter()
                .find(|(k, _)| *k == "bytes")
                .and_then(|(_, v)| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        for e in &recording.events {
            let ms = e.duration_us / 1e3;
            match (e.category, e.name) {
                ("transfer", "upload") => {
                    summary.uploads += 1;
                    summary.upload_bytes += bytes(e);
                }
                ("transfer", "download") => {
                    summary.downloads += 1;
                    summary.download_bytes += bytes(e);
                }
                ("step", _) => summary.steps += 1,
                ("annotation", _) => {}
                (_, name) => {
                    let site = summary.sites.entry(e.subject.clone()).or_default();
                    match name {
                        "trace" => {
                            site.traces += 1;
                            site.trace_ms += ms;
                        }
                        "lower" => site.lower_ms += ms,
                        "compile" => {
                            site.compiles += 1;
                            site.compile_ms += ms;
                            if e.args.iter().any(|(k, v)| *k == "cache" && v == "hit") {
                                site.disk_hits += 1;
                            }
                        }
                        "execute" => {
                            site.executes += 1;
                            site.execute_ms += ms;
                        }
                        _ => {}
                    }
                }
            }
        }
        summary
    }
}

impl fmt::Display for TraceSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "jaxrs profile: {}", self.path.display())?;
        writeln!(
            f,
            "{:<40} {:>6} {:>9} {:>8} {:>9} {:>10} {:>9} {:>11} {:>9}",
            "function",
            "traces",
            "trace ms",
            "lower ms",
            "compiles",
            "disk hits",
            "compile ms",
            "executes",
            "exec ms"
        )?;
        let mut sites: Vec<_> = self.sites.iter().collect();
        // The functions that took the most host time first.
        sites.sort_by(|a, b| {
            let total = |s: &SiteSummary| s.trace_ms + s.lower_ms + s.compile_ms + s.execute_ms;
            total(b.1).total_cmp(&total(a.1))
        });
        for (name, s) in sites {
            let name: String = name.chars().take(40).collect();
            writeln!(
                f,
                "{name:<40} {:>6} {:>9.2} {:>8.2} {:>9} {:>10} {:>10.2} {:>11} {:>9.2}",
                s.traces,
                s.trace_ms,
                s.lower_ms,
                s.compiles,
                s.disk_hits,
                s.compile_ms,
                s.executes,
                s.execute_ms
            )?;
        }
        writeln!(
            f,
            "transfers: {} uploads ({} bytes), {} downloads ({} bytes); {} steps{}",
            self.uploads,
            self.upload_bytes,
            self.downloads,
            self.download_bytes,
            self.steps,
            if self.dropped_events > 0 {
                format!("; {} events dropped", self.dropped_events)
            } else {
                String::new()
            }
        )
    }
}
