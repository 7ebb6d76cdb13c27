//! Continuous batching: one dedicated thread owns the engine and interleaves admitting new
//! requests into free cache slots with decode steps over every occupied slot.
//!
//! The engine is not thread-safe and a decode step is a blocking call into XLA, so it lives
//! on a plain `std::thread`, never on the async runtime. Requests reach it through a bounded
//! channel (its capacity is the queue: a full channel is the HTTP layer's 429) and each
//! request's tokens go back through its own channel. That channel doubles as the cancellation
//! signal: when the HTTP side drops its receiver (the client went away, or the request timed
//! out) the slot is released before the next step.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;

use crate::api::{ApiError, FinishReason, Usage};
use crate::text::TextStream;

/// Errors from an engine or a tokenizer.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How one request samples (OpenAI's options, checked).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 is greedy.
    pub temperature: f32,
    /// Nucleus mass; 1 is off.
    pub top_p: f32,
    /// The sampler's seed.
    pub seed: u64,
}

/// What the scheduler needs of an engine: a KV cache of `slots()` rows of `capacity()`
/// positions, filled by `insert` and advanced, all occupied rows at once, by `step`.
///
/// The real one is [`jaxrs_models::generate::Engine`] (see `crate::engine`); the trait exists
/// so the scheduler's bookkeeping can be tested with a deterministic stand-in.
pub trait Backend {
    /// Rows of the cache.
    fn slots(&self) -> usize;
    /// Positions per row: prompt plus generated tokens.
    fn capacity(&self) -> usize;
    /// Rows of the embedding: token ids must be below this.
    fn vocab_size(&self) -> usize;
    /// Rows free for `insert`.
    fn free_slots(&self) -> usize;
    /// Prefills `prompt` into a free row and samples its first token.
    fn insert(&mut self, prompt: &[u32], sampling: &Sampling) -> Result<(usize, u32), BoxError>;
    /// One decode step of every occupied row: the token each produced.
    fn step(&mut self) -> Result<Vec<(usize, u32)>, BoxError>;
    /// Tokens in the row's cache; a row must be released before this reaches `capacity()`.
    fn position(&self, slot: usize) -> usize;
    /// Frees a row.
    fn release(&mut self, slot: usize);
    /// Runs a short request through, before serving, so that compiles are not billed to the
    /// first clients: by default a one-token prompt and one step.
    fn warm_up(&mut self) -> Result<(), BoxError> {
        if self.capacity() < 3 {
            return Ok(());
        }
        let sampling = Sampling {
            temperature: 0.0,
            top_p: 1.0,
            seed: 0,
        };
        let (slot, _) = self.insert(&[0], &sampling)?;
        let stepped = self.step();
        self.release(slot);
        stepped.map(|_| ())
    }
}

/// What the server needs of a tokenizer. Shared by the HTTP handlers (encoding) and the
/// scheduler thread (decoding).
pub trait Codec: Send + Sync {
    /// Text to token ids.
    fn encode(&self, text: &str) -> Result<Vec<u32>, BoxError>;
    /// Token ids to text; an incomplete UTF-8 sequence becomes U+FFFD.
    fn decode(&self, ids: &[u32]) -> Result<String, BoxError>;
    /// Tokens that end a completion (the model's end of sequence; possibly several).
    fn stop_token_ids(&self) -> &[u32];
    /// What an empty prompt is continued from (GPT-2's `<|endoftext|>`, Llama's bos).
    fn start_token_id(&self) -> Option<u32>;
}

/// A request, checked and tokenized, on its way to a slot.
pub(crate) struct Job {
    pub prompt: Vec<u32>,
    pub sampling: Sampling,
    pub max_tokens: usize,
    pub stop: Vec<String>,
    pub deadline: Instant,
    pub events: UnboundedSender<Event>,
}

/// What the scheduler tells a request, in order: text pieces, then `Done` or `Failed`.
#[derive(Debug)]
pub(crate) enum Event {
    Text(String),
    Done {
        finish_reason: FinishReason,
        usage: Usage,
    },
    Failed(ApiError),
}

/// Counters of the scheduler, readable at `GET /health`.
#[derive(Debug, Default)]
pub struct Stats {
    /// Requests waiting in the queue.
    pub queued: AtomicU64,
    /// Requests holding a slot.
    pub active: AtomicU64,
    /// Requests finished with a completion.
    pub completed: AtomicU64,
    /// Requests whose client went away (their slot was released early).
    pub cancelled: AtomicU64,
    /// Requests past their deadline.
    pub timed_out: AtomicU64,
    /// Requests the engine failed.
    pub failed: AtomicU64,
    /// Requests refused because the queue was full.
    pub rejected: AtomicU64,
    /// Tokens generated.
    pub tokens: AtomicU64,
    /// Decode steps run.
    pub steps: AtomicU64,
    /// Sum over steps of the slots each advanced: `/ steps` is the mean batch.
    pub batched: AtomicU64,
}

/// A copy of [`Stats`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[allow(missing_docs)]
pub struct StatsSnapshot {
    pub queued: u64,
    pub active: u64,
    pub completed: u64,
    pub cancelled: u64,
    pub timed_out: u64,
    pub failed: u64,
    pub rejected: u64,
    pub tokens: u64,
    pub steps: u64,
    pub batched: u64,
}

impl Stats {
    /// The counters now (each read relaxed: a health probe, not a ledger).
    pub fn snapshot(&self) -> StatsSnapshot {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        StatsSnapshot {
            queued: r(&self.queued),
            active: r(&self.active),
            completed: r(&self.completed),
            cancelled: r(&self.cancelled),
            timed_out: r(&self.timed_out),
            failed: r(&self.failed),
            rejected: r(&self.rejected),
            tokens: r(&self.tokens),
            steps: r(&self.steps),
            batched: r(&self.batched),
        }
    }
}

fn bump(a: &AtomicU64) {
    a.fetch_add(1, Ordering::Relaxed);
}

fn drop1(a: &AtomicU64) {
    a.fetch_sub(1, Ordering::Relaxed);
}

/// How long the idle scheduler waits for a request before looking at the closing flag.
const IDLE_POLL: Duration = Duration::from_millis(20);

/// The running scheduler thread and the way in.
pub(crate) struct Scheduler {
    pub jobs: SyncSender<Job>,
    pub slots: usize,
    pub capacity: usize,
    pub vocab_size: usize,
    closing: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Scheduler {
    /// Starts the thread, builds the engine on it with `factory`, warms it up (so the first
    /// request does not pay for compiles), and returns once it is ready. Blocking.
    pub fn spawn<B, F>(
        factory: F,
        codec: Arc<dyn Codec>,
        queue: usize,
        stats: Arc<Stats>,
        warmup: bool,
    ) -> Result<Scheduler, BoxError>
    where
        B: Backend,
        F: FnOnce() -> Result<B, BoxError> + Send + 'static,
    {
        let (jobs, rx) = std::sync::mpsc::sync_channel::<Job>(queue.max(1));
        let (ready_tx, ready_rx) =
            std::sync::mpsc::channel::<Result<(usize, usize, usize), String>>();
        let closing = Arc::new(AtomicBool::new(false));
        let closing2 = closing.clone();
        let thread = std::thread::Builder::new()
            .name("jaxrs-serve-engine".into())
            .spawn(move || {
                let mut backend = match factory() {
                    Ok(b) => b,
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("loading the engine: {e}")));
                        return;
                    }
                };
                if warmup {
                    if let Err(e) = backend.warm_up() {
                        let _ = ready_tx.send(Err(format!("warming the engine up: {e}")));
                        return;
                    }
                }
                let _ = ready_tx.send(Ok((
                    backend.slots(),
                    backend.capacity(),
                    backend.vocab_size(),
                )));
                Loop {
                    backend,
                    codec,
                    rx,
                    stats,
                    closing: closing2,
                    active: HashMap::new(),
                }
                .run();
            })?;
        let (slots, capacity, vocab_size) = match ready_rx.recv() {
            Ok(Ok(info)) => info,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e.into());
            }
            Err(_) => {
                let _ = thread.join();
                return Err("the engine thread ended while starting (it panicked)".into());
            }
        };
        Ok(Scheduler {
            jobs,
            slots,
            capacity,
            vocab_size,
            closing,
            thread: Some(thread),
        })
    }

    /// Whether the thread has ended (only after `close`, or if the engine panicked).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Tells the thread to finish what it holds and what is queued, then end.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
    }

    /// Closes and waits for the thread (blocking), at most `timeout`. `false`: it is still
    /// running, left detached (a decode step cannot be interrupted).
    pub fn join(mut self, timeout: Duration) -> bool {
        self.close();
        let until = Instant::now() + timeout;
        while !self.is_finished() {
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        true
    }
}

struct Active {
    job: Job,
    text: TextStream,
    generated: usize,
}

struct Loop<B> {
    backend: B,
    codec: Arc<dyn Codec>,
    rx: Receiver<Job>,
    stats: Arc<Stats>,
    closing: Arc<AtomicBool>,
    active: HashMap<usize, Active>,
}

impl<B: Backend> Loop<B> {
    fn run(mut self) {
        let mut open = true;
        loop {
            self.reap();
            // Admit while rows are free. With nothing running, block (briefly) for work;
            // with requests running, take only what is already waiting so decode goes on.
            while open && self.backend.free_slots() > 0 {
                let job = if self.active.is_empty() {
                    match self.rx.recv_timeout(IDLE_POLL) {
                        Ok(job) => job,
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => {
                            open = false;
                            break;
                        }
                    }
                } else {
                    match self.rx.try_recv() {
                        Ok(job) => job,
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => {
                            open = false;
                            break;
                        }
                    }
                };
                drop1(&self.stats.queued);
                self.admit(job);
            }
            if self.active.is_empty() {
                // Closing: end once nothing runs and nothing waits.
                if !open
                    || (self.closing.load(Ordering::Acquire)
                        && self.stats.queued.load(Ordering::Relaxed) == 0)
                {
                    break;
                }
                continue;
            }
            self.step();
        }
        // Whatever still holds a slot (only after a failed step) is told so.
        let slots: Vec<usize> = self.active.keys().copied().collect();
        for slot in slots {
            self.fail(slot, internal("the server is shutting down"));
        }
    }

    fn admit(&mut self, job: Job) {
        if job.events.is_closed() {
            bump(&self.stats.cancelled);
            return;
        }
        if Instant::now() >= job.deadline {
            bump(&self.stats.timed_out);
            let _ = job.events.send(Event::Failed(timeout()));
            return;
        }
        match self.backend.insert(&job.prompt, &job.sampling) {
            Ok((slot, token)) => {
                bump(&self.stats.active);
                let text = TextStream::new(&job.prompt, job.stop.clone());
                self.active.insert(
                    slot,
                    Active {
                        job,
                        text,
                        generated: 0,
                    },
                );
                self.on_token(slot, token);
            }
            Err(e) => {
                bump(&self.stats.failed);
                let _ = job
                    .events
                    .send(Event::Failed(internal(&format!("prefill failed: {e}"))));
            }
        }
    }

    /// Releases rows whose client went away or whose deadline passed, and those a step
    /// would take to capacity.
    fn reap(&mut self) {
        let now = Instant::now();
        let capacity = self.backend.capacity();
        let mut gone = Vec::new();
        let mut late = Vec::new();
        let mut full = Vec::new();
        for (&slot, a) in &self.active {
            // Late before gone: a handler that timed out drops its receiver at the deadline,
            // and that request is a timeout, not a client that left.
            if now >= a.job.deadline {
                late.push(slot);
            } else if a.job.events.is_closed() {
                gone.push(slot);
            } else if self.backend.position(slot) + 1 >= capacity {
                full.push(slot);
            }
        }
        for slot in gone {
            bump(&self.stats.cancelled);
            self.remove(slot);
        }
        for slot in late {
            bump(&self.stats.timed_out);
            if let Some(a) = self.remove(slot) {
                let _ = a.job.events.send(Event::Failed(timeout()));
            }
        }
        for slot in full {
            self.finish(slot, FinishReason::Length);
        }
    }

    fn step(&mut self) {
        match self.backend.step() {
            Ok(tokens) => {
                self.stats.steps.fetch_add(1, Ordering::Relaxed);
                self.stats
                    .batched
                    .fetch_add(tokens.len() as u64, Ordering::Relaxed);
                for (slot, token) in tokens {
                    if self.active.contains_key(&slot) {
                        self.on_token(slot, token);
                    }
                }
            }
            Err(e) => {
                let message = format!("decode step failed: {e}");
                let slots: Vec<usize> = self.active.keys().copied().collect();
                for slot in slots {
                    self.fail(slot, internal(&message));
                }
            }
        }
    }

    fn on_token(&mut self, slot: usize, token: u32) {
        let Some(a) = self.active.get_mut(&slot) else {
            return;
        };
        a.generated += 1;
        self.stats.tokens.fetch_add(1, Ordering::Relaxed);
        if self.codec.stop_token_ids().contains(&token) {
            self.finish(slot, FinishReason::Stop);
            return;
        }
        let piece = match a.text.push(self.codec.as_ref(), token) {
            Ok(p) => p,
            Err(e) => {
                self.fail(slot, internal(&format!("detokenizing failed: {e}")));
                return;
            }
        };
        if !piece.is_empty() && a.job.events.send(Event::Text(piece)).is_err() {
            // The handler is gone: at its deadline that is a timeout, else the client left.
            let late = Instant::now() >= a.job.deadline;
            bump(if late {
                &self.stats.timed_out
            } else {
                &self.stats.cancelled
            });
            self.remove(slot);
            return;
        }
        let (stopped, spent) = (a.text.stopped(), a.generated >= a.job.max_tokens);
        if stopped {
            self.finish(slot, FinishReason::Stop);
        } else if spent {
            self.finish(slot, FinishReason::Length);
        }
    }

    fn finish(&mut self, slot: usize, reason: FinishReason) {
        let Some(mut a) = self.remove(slot) else {
            return;
        };
        match a.text.finish(self.codec.as_ref()) {
            Ok(rest) => {
                if !rest.is_empty() {
                    let _ = a.job.events.send(Event::Text(rest));
                }
                let usage = Usage {
                    prompt_tokens: a.job.prompt.len(),
                    completion_tokens: a.generated,
                    total_tokens: a.job.prompt.len() + a.generated,
                };
                let _ = a.job.events.send(Event::Done {
                    finish_reason: reason,
                    usage,
                });
                bump(&self.stats.completed);
            }
            Err(e) => {
                bump(&self.stats.failed);
                let _ = a.job.events.send(Event::Failed(internal(&format!(
                    "detokenizing failed: {e}"
                ))));
            }
        }
    }

    fn fail(&mut self, slot: usize, error: ApiError) {
        if let Some(a) = self.remove(slot) {
            bump(&self.stats.failed);
            let _ = a.job.events.send(Event::Failed(error));
        }
    }

    fn remove(&mut self, slot: usize) -> Option<Active> {
        let a = self.active.remove(&slot)?;
        self.backend.release(slot);
        drop1(&self.stats.active);
        Some(a)
    }
}

pub(crate) fn timeout() -> ApiError {
    ApiError::new(
        StatusCode::GATEWAY_TIMEOUT,
        "timeout",
        "timeout",
        "the request did not finish within the server's time limit",
    )
}

pub(crate) fn internal(message: &str) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        "internal",
        message,
    )
}
