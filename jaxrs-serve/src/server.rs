//! The HTTP side: routes, request handling, server-sent events, and the accept loop with its
//! connection cap, header timeout and graceful shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::TrySendError;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::sync::Semaphore;

use crate::api::{
    self, ApiError, Choice, CompletionResponse, FinishReason, Prompt, RequestLimits, Usage,
};
use crate::scheduler::{self, Backend, BoxError, Codec, Event, Job, Sampling, Scheduler, Stats};

/// The server's limits: everything an untrusted client could otherwise make unbounded.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Requests waiting for a slot; one more is answered 429.
    pub queue: usize,
    /// From a request's arrival to its last byte; past it the request gets 504 (or, once
    /// streaming, an error event) and its slot is released.
    pub timeout: Duration,
    /// Largest request body; a larger one is answered 413.
    pub max_body_bytes: usize,
    /// Open connections at most; more are closed as they are accepted.
    pub max_connections: usize,
    /// Time a connection has to send a request's headers.
    pub header_timeout: Duration,
    /// After the shutdown signal, how long in-flight requests have to finish.
    pub drain_timeout: Duration,
    /// `max_tokens` when a request does not say.
    pub default_max_tokens: usize,
    /// Run one short request through the engine before serving, so compiles are not billed
    /// to the first client.
    pub warmup: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            queue: 64,
            timeout: Duration::from_secs(60),
            max_body_bytes: 1 << 20,
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            drain_timeout: Duration::from_secs(60),
            default_max_tokens: 16,
            warmup: true,
        }
    }
}

/// What the handlers share.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

struct Inner {
    model: String,
    codec: Arc<dyn Codec>,
    limits: Limits,
    request_limits: RequestLimits,
    slots: usize,
    jobs: std::sync::mpsc::SyncSender<Job>,
    stats: Arc<Stats>,
    next_id: AtomicU64,
    started: u64,
}

impl AppState {
    /// The scheduler's counters.
    pub fn stats(&self) -> &Stats {
        &self.0.stats
    }
}

/// The routes: `POST /v1/completions`, `GET /v1/models`, `GET /health`; anything else is a
/// JSON 404 or 405.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/completions", post(completions))
        .route("/v1/models", get(models))
        .route("/health", get(health))
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "not_found",
                "no such route",
            )
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "invalid_request_error",
                "method_not_allowed",
                "method not allowed on this route",
            )
        })
        .with_state(state)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

async fn health(State(app): State<AppState>) -> Response {
    let stats = app.0.stats.snapshot();
    let body = serde_json::json!({
        "status": "ok",
        "model": app.0.model,
        "slots": app.0.slots,
        "capacity": app.0.request_limits.capacity,
        "queue": app.0.limits.queue,
        "stats": stats,
    });
    Json(body).into_response()
}

async fn models(State(app): State<AppState>) -> Response {
    Json(serde_json::json!({
        "object": "list",
        "data": [{"id": app.0.model, "object": "model", "created": app.0.started, "owned_by": "jaxrs"}],
    }))
    .into_response()
}

async fn completions(State(app): State<AppState>, request: Request) -> Response {
    match complete(app, request).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

/// Reads the body within the size limit and the deadline.
async fn read_body(
    request: Request,
    limit: usize,
    deadline: tokio::time::Instant,
) -> Result<axum::body::Bytes, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            "body_too_large",
            format!("the request body is larger than {limit} bytes"),
        )
    };
    // A declared length over the limit is refused before a byte is read.
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout_at(deadline, axum::body::to_bytes(request.into_body(), limit)).await
    {
        Err(_) => Err(scheduler::timeout()),
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => {
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
            while let Some(err) = source {
                if err.is::<http_body_util::LengthLimitError>() {
                    return Err(too_large());
                }
                source = err.source();
            }
            Err(ApiError::invalid(
                None,
                "invalid_body",
                format!("reading the body failed: {e}"),
            ))
        }
    }
}

async fn complete(app: AppState, request: Request) -> Result<Response, ApiError> {
    let inner = &app.0;
    let arrived = Instant::now();
    let deadline = arrived + inner.limits.timeout;
    let tdeadline = tokio::time::Instant::from_std(deadline);
    let created = unix_now();

    let body = read_body(request, inner.limits.max_body_bytes, tdeadline).await?;
    let req = api::parse_request(&body)?;
    drop(body);
    let options = api::check_options(&req, &inner.model)?;
    let prompt = match req.prompt {
        Prompt::Tokens(ids) => ids,
        Prompt::Text(text) => encode(inner.codec.clone(), text, tdeadline).await?,
        Prompt::Texts(mut texts) if texts.len() == 1 => {
            encode(inner.codec.clone(), texts.remove(0), tdeadline).await?
        }
        Prompt::Texts(texts) => {
            return Err(ApiError::invalid(
                Some("prompt"),
                "invalid_value",
                format!("one prompt per request is served (got {})", texts.len()),
            ))
        }
    };
    let max_tokens = api::check_lengths(&prompt, req.max_tokens, &inner.request_limits)?;

    let (events, mut rx) = unbounded_channel();
    let job = Job {
        prompt,
        sampling: Sampling {
            temperature: options.temperature,
            top_p: options.top_p,
            seed: options.seed,
        },
        max_tokens,
        stop: options.stop,
        deadline,
        events,
    };
    // Counted before the send so the scheduler's decrement can never run first.
    inner.stats.queued.fetch_add(1, Ordering::Relaxed);
    match inner.jobs.try_send(job) {
        Ok(()) => {}
        Err(e) => {
            inner.stats.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(match e {
                TrySendError::Full(_) => {
                    inner.stats.rejected.fetch_add(1, Ordering::Relaxed);
                    ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        "rate_limit_error",
                        "queue_full",
                        format!(
                            "the server's queue of {} requests is full; retry later",
                            inner.limits.queue
                        ),
                    )
                }
                TrySendError::Disconnected(_) => ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "server_error",
                    "unavailable",
                    "the engine has stopped",
                ),
            });
        }
    }

    let id = format!(
        "cmpl-{:x}-{}",
        inner.started,
        inner.next_id.fetch_add(1, Ordering::Relaxed)
    );
    let meta = Meta {
        id,
        created,
        model: inner.model.clone(),
    };
    // Wait for the first event either way: an error before any text (a timeout in the queue,
    // a failed prefill) is then a proper status rather than a 200 stream that fails.
    let first = next_event(&mut rx, tdeadline).await;
    let first = match first {
        Event::Failed(e) => return Err(e),
        ev => ev,
    };
    if options.stream {
        Ok(stream_response(meta, first, rx, tdeadline))
    } else {
        let mut text = String::new();
        let mut event = first;
        loop {
            match event {
                Event::Text(t) => text.push_str(&t),
                Event::Done {
                    finish_reason,
                    usage,
                } => {
                    return Ok(
                        Json(meta.response(text, Some(finish_reason), Some(usage))).into_response()
                    )
                }
                Event::Failed(e) => return Err(e),
            }
            event = next_event(&mut rx, tdeadline).await;
        }
    }
}

/// The next event, or a timeout/internal failure when the deadline passes or the scheduler
/// drops the request. Returning drops nothing: the caller's receiver going away is what
/// releases the slot.
async fn next_event(rx: &mut UnboundedReceiver<Event>, deadline: tokio::time::Instant) -> Event {
    match tokio::time::timeout_at(deadline, rx.recv()).await {
        Ok(Some(ev)) => ev,
        Ok(None) => Event::Failed(scheduler::internal("the engine dropped the request")),
        Err(_) => Event::Failed(scheduler::timeout()),
    }
}

async fn encode(
    codec: Arc<dyn Codec>,
    text: String,
    deadline: tokio::time::Instant,
) -> Result<Vec<u32>, ApiError> {
    let start = codec.start_token_id();
    // Tokenizing a body-sized prompt is milliseconds of CPU: off the async workers.
    let task = tokio::task::spawn_blocking(move || codec.encode(&text));
    let ids = match tokio::time::timeout_at(deadline, task).await {
        Err(_) => return Err(scheduler::timeout()),
        Ok(Err(_)) => return Err(scheduler::internal("the tokenizer panicked")),
        Ok(Ok(Err(e))) => {
            return Err(ApiError::invalid(
                Some("prompt"),
                "invalid_value",
                format!("the prompt could not be tokenized: {e}"),
            ))
        }
        Ok(Ok(Ok(ids))) => ids,
    };
    // An empty prompt is continued from the start token, as GPT-2 (and OpenAI) do.
    match (ids.is_empty(), start) {
        (true, Some(start)) => Ok(vec![start]),
        _ => Ok(ids),
    }
}

struct Meta {
    id: String,
    created: u64,
    model: String,
}

impl Meta {
    fn response(
        &self,
        text: String,
        finish_reason: Option<FinishReason>,
        usage: Option<Usage>,
    ) -> CompletionResponse {
        CompletionResponse {
            id: self.id.clone(),
            object: "text_completion".into(),
            created: self.created,
            model: self.model.clone(),
            choices: vec![Choice {
                text,
                index: 0,
                logprobs: None,
                finish_reason,
            }],
            usage,
        }
    }

    fn chunk(
        &self,
        text: String,
        finish_reason: Option<FinishReason>,
        usage: Option<Usage>,
    ) -> SseEvent {
        let body =
            serde_json::to_string(&self.response(text, finish_reason, usage)).unwrap_or_default();
        SseEvent::default().data(body)
    }
}

enum Phase {
    Live(Option<Event>),
    Done,
    End,
}

struct StreamState {
    meta: Meta,
    rx: UnboundedReceiver<Event>,
    deadline: tokio::time::Instant,
    phase: Phase,
}

fn stream_response(
    meta: Meta,
    first: Event,
    rx: UnboundedReceiver<Event>,
    deadline: tokio::time::Instant,
) -> Response {
    let state = StreamState {
        meta,
        rx,
        deadline,
        phase: Phase::Live(Some(first)),
    };
    let stream = futures_util::stream::unfold(state, |mut st| async move {
        let event = match &mut st.phase {
            Phase::End => return None,
            Phase::Done => {
                st.phase = Phase::End;
                return Some((Ok::<_, Infallible>(SseEvent::default().data("[DONE]")), st));
            }
            Phase::Live(first) => match first.take() {
                Some(ev) => ev,
                None => next_event(&mut st.rx, st.deadline).await,
            },
        };
        let sse = match event {
            Event::Text(t) => st.meta.chunk(t, None, None),
            Event::Done {
                finish_reason,
                usage,
            } => {
                st.phase = Phase::Done;
                st.meta
                    .chunk(String::new(), Some(finish_reason), Some(usage))
            }
            Event::Failed(e) => {
                // Headers are sent: the error travels as an event, as OpenAI's streams do.
                st.phase = Phase::Done;
                SseEvent::default().data(e.to_json())
            }
        };
        Some((Ok(sse), st))
    });
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Starts the engine thread with `factory` (on that thread), then serves `listener` until
/// `shutdown` completes; then stops accepting, lets in-flight requests finish (at most
/// `limits.drain_timeout`), stops the engine and returns.
pub async fn serve_backend<B, F, S>(
    listener: TcpListener,
    factory: F,
    codec: Arc<dyn Codec>,
    model: String,
    limits: Limits,
    shutdown: S,
) -> Result<(), BoxError>
where
    B: Backend,
    F: FnOnce() -> Result<B, BoxError> + Send + 'static,
    S: Future<Output = ()> + Send,
{
    if limits.queue == 0 || limits.max_connections == 0 || limits.max_body_bytes == 0 {
        return Err("queue, max_connections and max_body_bytes must be at least 1".into());
    }
    let stats = Arc::new(Stats::default());
    let (queue, warmup, codec2, stats2) =
        (limits.queue, limits.warmup, codec.clone(), stats.clone());
    let scheduler = tokio::task::spawn_blocking(move || {
        Scheduler::spawn(factory, codec2, queue, stats2, warmup)
    })
    .await??;
    let request_limits = RequestLimits {
        capacity: scheduler.capacity,
        vocab_size: scheduler.vocab_size,
        default_max_tokens: limits.default_max_tokens,
    };
    let state = AppState(Arc::new(Inner {
        model,
        codec,
        limits: limits.clone(),
        request_limits,
        slots: scheduler.slots,
        jobs: scheduler.jobs.clone(),
        stats,
        next_id: AtomicU64::new(0),
        started: unix_now(),
    }));
    let app = router(state);
    accept_loop(listener, app, &limits, shutdown).await;
    // Every connection is done (or the drain timed out): no new job can arrive. The engine
    // finishes what it holds and ends; a step cannot be interrupted, hence the bound.
    let drain = limits.drain_timeout;
    let _ = tokio::task::spawn_blocking(move || scheduler.join(drain)).await;
    Ok(())
}

async fn accept_loop<S: Future<Output = ()> + Send>(
    listener: TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: S,
) {
    let graceful = GracefulShutdown::new();
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(_) => {
                    // Out of file descriptors and the like: back off rather than spin.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            // Over the cap: closing at once is cheaper than holding a socket we won't serve.
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop(permit);
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(limits.drain_timeout, graceful.shutdown()).await;
}

/// Completes on SIGTERM or ctrl-c: the usual `shutdown` for `serve`.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
