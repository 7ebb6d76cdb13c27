//! Published models for jaxrs, as `transformers` gives them to JAX users: Hugging Face
//! checkpoints of GPT-2 and of the Llama family (Llama, Mistral, Qwen2) loaded into a
//! `#[derive(Tree)]` [`Transformer`] built from [`Dense`] layers, their tokenizers, and
//! generation with a KV cache ([`generate`]).
//!
//! This crate sits beside the `jaxrs` library rather than inside it, so that a program that
//! only trains what it defines does not compile a tokenizer or a model zoo.
//!
//! ```no_run
//! use jaxrs::prelude::*;
//! use jaxrs_models::Transformer;
//!
//! let model = Transformer::from_pretrained("jaxrs-models/tests/golden/hf/gpt2", None)?;
//! let tokens = Array::from_vec(vec![1i32, 2, 3], &[1, 3]);
//! let (logits, _kv) = model.prefill(&tokens);
//! assert_eq!(logits.shape(), &[1, 3, model.vocab_size()]);
//! # Ok::<(), jaxrs_models::Error>(())
//! ```

pub mod config;
pub mod dense;
mod error;
pub mod generate;
pub mod hf;
mod pretrained;
pub mod tokenizer;
mod transformer;

pub use config::TransformerConfig;
pub use dense::Dense;
pub use error::{Error, Result};
pub use transformer::{Attention, Block, KvCache, Mlp, Norm, Transformer};
