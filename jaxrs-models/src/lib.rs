//! Published models for jaxrs, as `transformers` gives them to JAX users: Hugging Face
//! checkpoints of GPT-2 and of the Llama family (Llama, Mistral, Qwen2) loaded into
//! `#[derive(Tree)]` models built from `jaxrs::nn`, their tokenizers, and generation with a
//! KV cache.
//!
//! This crate sits beside the `jaxrs` library rather than inside it, so that a program that
//! only trains what it defines does not compile a tokenizer or a model zoo.

pub mod dense;
mod error;
pub mod hf;
pub mod tokenizer;

pub use dense::Dense;
pub use error::{Error, Result};
