//! The errors of loading and running published models.

use std::path::PathBuf;

/// What went wrong reading a model folder, a tokenizer, or running generation.
///
/// Files are untrusted: every problem with their contents is one of these, naming the file,
/// the key or the tensor, and never a panic.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A file is larger than the bound the reader accepts.
    #[error("{path}: {size} bytes, over the bound of {limit} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The bound.
        limit: u64,
    },
    /// A file is not what its name says (malformed JSON, a bad safetensors header...).
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A `config.json` key is missing, has the wrong type, or asks for what is not supported.
    #[error("config.json: `{key}`: {message}")]
    Config {
        /// The key.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A tensor is missing, has the wrong shape or dtype, or is left over.
    #[error("tensor `{name}`: {message}")]
    Tensor {
        /// The tensor's name in the checkpoint.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// The tokenizer could not be loaded or applied.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A prompt is empty or does not fit the cache with room for one new token.
    #[error("a prompt of {len} tokens does not fit a context of {capacity} (it needs 1 to {} tokens)", capacity - 1)]
    PromptLength {
        /// The prompt's length.
        len: usize,
        /// Tokens per cache slot.
        capacity: usize,
    },
    /// A token id is outside the model's vocabulary.
    #[error("token id {id} is outside the vocabulary of {vocab_size}")]
    TokenId {
        /// The id.
        id: u32,
        /// The vocabulary's size.
        vocab_size: usize,
    },
    /// Every slot of the cache holds a sequence.
    #[error("every one of the {slots} cache slots is in use")]
    NoFreeSlot {
        /// The number of slots.
        slots: usize,
    },
    /// A setting is outside its range.
    #[error("{0}")]
    Invalid(String),
    /// The runtime failed (compilation, memory, devices).
    #[error(transparent)]
    Runtime(#[from] jaxrs::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
