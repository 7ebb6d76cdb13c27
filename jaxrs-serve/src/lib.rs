//! An OpenAI-style completions service over [`jaxrs_models`]: `POST /v1/completions` (with
//! server-sent-event streaming), `GET /v1/models` and `GET /health`, on axum and tokio.
//!
//! Concurrent requests are batched into one decode step as they arrive: a dedicated engine
//! thread admits queued requests into the KV cache's free slots between steps, and releases a
//! slot as soon as its request ends (stop string, end of sequence, `max_tokens`, capacity,
//! timeout, or a client that went away). Everything an untrusted client controls is bounded
//! before it is allocated — body size, prompt length, `max_tokens`, stop strings, queue
//! length, open connections, time — and bad input is a 4xx with an OpenAI-shaped JSON error,
//! never a panic.
//!
//! The server's crates (axum, tokio, hyper) are this crate's, so the `jaxrs` library's own
//! dependency tree stays lean; `examples/serve.rs` in the root package is its command line.

pub mod api;
pub mod client;
pub mod engine;
pub mod scheduler;
pub mod server;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
mod text;

pub use api::{ApiError, Choice, CompletionRequest, CompletionResponse, FinishReason, Usage};
pub use scheduler::{Backend, BoxError, Codec, Sampling, Stats, StatsSnapshot};
pub use server::{router, serve_backend, shutdown_signal, AppState, Limits};
