//! Hugging Face tokenizers: a `tokenizer.json` loaded and applied by Hugging Face's own Rust
//! library (the `tokenizers` crate, which `transformers`' fast tokenizers wrap), so that the
//! ids are the ids a Python user gets.
//!
//! ```
//! use jaxrs_models::tokenizer::Tokenizer;
//!
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/hf/tokenizer");
//! let tok = Tokenizer::from_dir(dir)?;
//! let ids = tok.encode("ROMEO:\nBut, soft!", false)?;
//! assert_eq!(tok.decode(&ids, false)?, "ROMEO:\nBut, soft!");
//! assert_eq!(tok.eos_token_id(), tok.token_to_id("<|endoftext|>"));
//!
//! // Streaming, as a server sends text while a model generates it.
//! let mut stream = tok.decode_stream(false);
//! let mut text = String::new();
//! for &id in &ids {
//!     if let Some(piece) = stream.step(id)? {
//!         text.push_str(&piece);
//!     }
//! }
//! text.push_str(&stream.finish()?);
//! assert_eq!(text, "ROMEO:\nBut, soft!");
//! # Ok::<(), jaxrs_models::Error>(())
//! ```
//!
//! The files are untrusted: each is read up to [`MAX_FILE_BYTES`], and every problem (a
//! missing or oversized file, malformed JSON, a tokenizer the library rejects, a special
//! token that is not in the vocabulary) is an [`Error`] naming the file.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, Result};

/// The largest file the tokenizer reads (64 MiB; real `tokenizer.json` files are a few MB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// A Hugging Face tokenizer with the special tokens its model folder names.
///
/// Cloning is cheap (the vocabulary is shared), and a `Tokenizer` is `Send + Sync`.
///
/// ```
/// use jaxrs_models::tokenizer::Tokenizer;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/hf/tokenizer/tokenizer.json");
/// let tok = Tokenizer::from_file(path)?;
/// assert_eq!(tok.vocab_size(), 1024);
/// assert_eq!(tok.eos_token_id(), None); // a lone tokenizer.json names no eos token
/// # Ok::<(), jaxrs_models::Error>(())
/// ```
#[derive(Clone)]
pub struct Tokenizer {
    inner: Arc<tokenizers::Tokenizer>,
    eos_token_id: Option<u32>,
    bos_token_id: Option<u32>,
    stop_token_ids: Vec<u32>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.vocab_size())
            .field("eos_token_id", &self.eos_token_id)
            .field("bos_token_id", &self.bos_token_id)
            .field("stop_token_ids", &self.stop_token_ids)
            .finish()
    }
}

impl Tokenizer {
    /// Loads a `tokenizer.json` on its own: no eos or bos token is known (see
    /// [`Tokenizer::from_dir`] for a model folder, which names them).
    ///
    /// ```
    /// use jaxrs_models::{tokenizer::Tokenizer, Error};
    ///
    /// let err = Tokenizer::from_file("no/such/tokenizer.json").unwrap_err();
    /// assert!(matches!(err, Error::Io { .. }));
    /// ```
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = read_bounded(path)?;
        let inner = parse_tokenizer(path, &bytes)?;
        Ok(Self {
            inner: Arc::new(inner),
            eos_token_id: None,
            bos_token_id: None,
            stop_token_ids: Vec::new(),
        })
    }

    /// Loads a model folder's tokenizer as `transformers` saves it: `tokenizer.json`, and the
    /// special tokens from the files beside it, where present.
    ///
    /// * [`eos_token_id`](Self::eos_token_id) and [`bos_token_id`](Self::bos_token_id): the
    ///   `eos_token` / `bos_token` of `tokenizer_config.json` (a string, or an object with a
    ///   `content`, as older `transformers` write it), else the first `eos_token_id` /
    ///   `bos_token_id` of `generation_config.json`, else of `config.json`.
    /// * [`stop_token_ids`](Self::stop_token_ids): what `generate` stops at, the
    ///   `eos_token_id` of `generation_config.json` (one id or a list, as Llama 3 has), else of
    ///   `config.json`, else the tokenizer's eos token.
    ///
    /// A missing side file is no error; a malformed one is, as is a token or id that is not
    /// in the vocabulary.
    ///
    /// ```
    /// use jaxrs_models::tokenizer::Tokenizer;
    ///
    /// let tok = Tokenizer::from_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/hf/tokenizer"))?;
    /// assert_eq!(tok.eos_token_id(), Some(0));
    /// assert_eq!(tok.stop_token_ids(), &[0]);
    /// # Ok::<(), jaxrs_models::Error>(())
    /// ```
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let mut tok = Self::from_file(dir.join("tokenizer.json"))?;
        let tokenizer_config = read_json_if_present(&dir.join("tokenizer_config.json"))?;
        let generation_config = read_json_if_present(&dir.join("generation_config.json"))?;
        let config = read_json_if_present(&dir.join("config.json"))?;

        let from_token = |key: &str| -> Result<Option<u32>> {
            match &tokenizer_config {
                Some((path, json)) => tok.special_token(path, json, key),
                None => Ok(None),
            }
        };
        let from_ids = |key: &str| -> Result<Vec<u32>> {
            for (path, json) in generation_config.iter().chain(config.iter()) {
                let ids = tok.token_ids(path, json, key)?;
                if !ids.is_empty() {
                    return Ok(ids);
                }
            }
            Ok(Vec::new())
        };
        let eos_ids = from_ids("eos_token_id")?;
        let eos = from_token("eos_token")?.or(eos_ids.first().copied());
        let bos = from_token("bos_token")?.or(from_ids("bos_token_id")?.first().copied());
        tok.stop_token_ids = if eos_ids.is_empty() {
            eos.into_iter().collect()
        } else {
            eos_ids
        };
        tok.eos_token_id = eos;
        tok.bos_token_id = bos;
        Ok(tok)
    }

    /// The ids of `text`. With `add_special_tokens`, the tokenizer's post-processor adds what
    /// its model expects (a bos token for Llama's, nothing for GPT-2's), as `transformers`
    /// does by default. Special tokens written in the text (`<|endoftext|>`) are recognised
    /// either way.
    ///
    /// ```
    /// # use jaxrs_models::tokenizer::Tokenizer;
    /// # let tok = Tokenizer::from_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/hf/tokenizer"))?;
    /// let ids = tok.encode("Hello<|endoftext|>", true)?;
    /// assert_eq!(ids.last(), Some(&0));
    /// # Ok::<(), jaxrs_models::Error>(())
    /// ```
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        let encoding = self
            .inner
            .encode(text, add_special_tokens)
            .map_err(|e| Error::Tokenizer(format!("encoding: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The text of `ids`; with `skip_special_tokens`, special tokens are left out. As in
    /// `transformers`, an id outside the vocabulary is skipped, and bytes that are not UTF-8
    /// become U+FFFD.
    ///
    /// ```
    /// # use jaxrs_models::tokenizer::Tokenizer;
    /// # let tok = Tokenizer::from_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/hf/tokenizer"))?;
    /// let ids = tok.encode("soft<|endoftext|>", false)?;
    /// assert_eq!(tok.decode(&ids, false)?, "soft<|endoftext|>");
    /// assert_eq!(tok.decode(&ids, true)?, "soft");
    /// # Ok::<(), jaxrs_models::Error>(())
    /// ```
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        self.inner
            .decode(ids, skip_special_tokens)
            .map_err(|e| Error::Tokenizer(format!("decoding: {e}")))
    }

    /// An incremental decoder: feed it generated ids one by one and it returns text as soon
    /// as it is complete UTF-8 (see [`DecodeStream`]).
    pub fn decode_stream(&self, skip_special_tokens: bool) -> DecodeStream {
        DecodeStream {
            tokenizer: Arc::clone(&self.inner),
            skip_special_tokens,
            ids: Vec::new(),
            prefix_offset: 0,
            read_offset: 0,
            prefix: String::new(),
        }
    }

    /// The number of ids, added tokens included (`len(tokenizer)` in `transformers`).
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The id of a token (`"<|endoftext|>"`, or a vocabulary entry in the model's own
    /// spelling, such as `"Ġthe"` for GPT-2's byte-level BPE).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The token of an id, in the model's own spelling.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The end-of-sequence token's id, where the model folder names it.
    pub fn eos_token_id(&self) -> Option<u32> {
        self.eos_token_id
    }

    /// The beginning-of-sequence token's id, where the model folder names it.
    pub fn bos_token_id(&self) -> Option<u32> {
        self.bos_token_id
    }

    /// The ids generation stops at (empty where the folder names none).
    pub fn stop_token_ids(&self) -> &[u32] {
        &self.stop_token_ids
    }

    /// The `tokenizers` crate's tokenizer, for what this wrapper does not cover.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    /// A special token of `tokenizer_config.json`: a string, or `{"content": "..."}`.
    fn special_token(&self, path: &Path, json: &Value, key: &str) -> Result<Option<u32>> {
        let content = match json.get(key) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::String(s)) => s.as_str(),
            Some(Value::Object(o)) => match o.get("content") {
                Some(Value::String(s)) => s.as_str(),
                _ => {
                    return Err(format_error(
                        path,
                        format!("`{key}` has no string `content`"),
                    ))
                }
            },
            Some(other) => {
                return Err(format_error(
                    path,
                    format!("`{key}` is {other}, not a token"),
                ))
            }
        };
        match self.token_to_id(content) {
            Some(id) => Ok(Some(id)),
            None => Err(format_error(
                path,
                format!("`{key}` {content:?} is not in the tokenizer's vocabulary"),
            )),
        }
    }

    /// Token ids of `generation_config.json` / `config.json`: one id, a list, or null.
    fn token_ids(&self, path: &Path, json: &Value, key: &str) -> Result<Vec<u32>> {
        let values = match json.get(key) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(a)) => a.iter().collect::<Vec<_>>(),
            Some(v) => vec![v],
        };
        let vocab = self.vocab_size();
        let mut ids = Vec::with_capacity(values.len());
        for v in values {
            let id = v
                .as_u64()
                .and_then(|id| u32::try_from(id).ok())
                .filter(|&id| (id as usize) < vocab)
                .ok_or_else(|| {
                    format_error(
                        path,
                        format!("`{key}`: {v} is not a token id of a vocabulary of {vocab}"),
                    )
                })?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        Ok(ids)
    }
}

/// Text from ids fed one at a time, as `transformers`' `TextStreamer` gives it: a piece is
/// returned once its bytes are complete UTF-8 (a character split over several byte-level
/// tokens, such as an emoji, comes out whole), and the pieces of a sequence concatenate to
/// [`Tokenizer::decode`] of the whole.
///
/// Each step decodes a short window of the latest ids with the tokens before them as
/// context, so decoders that treat the first token differently (SentencePiece's leading
/// space) give the same text as a full decode. It owns a handle on the vocabulary, so it is
/// `Send` and `'static`, and can live in a server's task beside its sequence.
///
/// ```
/// # use jaxrs_models::tokenizer::Tokenizer;
/// # let tok = Tokenizer::from_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/hf/tokenizer"))?;
/// let ids = tok.encode("naïve 🙂", false)?;
/// let mut stream = tok.decode_stream(false);
/// let pieces: Vec<String> = ids.iter().filter_map(|&id| stream.step(id).transpose()).collect::<Result<_, _>>()?;
/// assert_eq!(pieces.concat() + &stream.finish()?, "naïve 🙂");
/// # Ok::<(), jaxrs_models::Error>(())
/// ```
#[derive(Clone)]
pub struct DecodeStream {
    tokenizer: Arc<tokenizers::Tokenizer>,
    skip_special_tokens: bool,
    /// The ids from `prefix_offset` on (older ones are dropped).
    ids: Vec<u32>,
    /// Where, in `ids`, the context window starts (always 0 after a step returns text).
    prefix_offset: usize,
    /// Where, in `ids`, the ids not yet returned as text start.
    read_offset: usize,
    /// The text of `ids[prefix_offset..read_offset]`, decoded as a window on its own.
    prefix: String,
}

impl std::fmt::Debug for DecodeStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodeStream")
            .field("pending_ids", &self.pending())
            .field("skip_special_tokens", &self.skip_special_tokens)
            .finish()
    }
}

impl DecodeStream {
    /// Feeds one id; returns the text it completes, or `None` while the bytes so far end in
    /// the middle of a character (or the id adds no text, as a skipped special token).
    pub fn step(&mut self, id: u32) -> Result<Option<String>> {
        self.ids.push(id);
        let text = self.window_text()?;
        if text.ends_with('\u{FFFD}') {
            return Ok(None);
        }
        let piece = self.new_text(&text)?;
        if piece.is_empty() {
            return Ok(None);
        }
        // The ids just returned become the context of the next window.
        self.ids.drain(..self.read_offset);
        self.read_offset = self.ids.len();
        self.prefix_offset = 0;
        self.prefix = self.window_text()?;
        Ok(Some(piece))
    }

    /// The text of the ids fed but not yet returned: bytes that never completed a character
    /// come out as U+FFFD, as [`Tokenizer::decode`] gives them. Empty when nothing is pending.
    pub fn finish(&mut self) -> Result<String> {
        if self.pending() == 0 {
            return Ok(String::new());
        }
        let text = self.window_text()?;
        let piece = self.new_text(&text)?;
        self.ids.clear();
        self.prefix_offset = 0;
        self.read_offset = 0;
        self.prefix.clear();
        Ok(piece)
    }

    /// How many ids have been fed whose text has not been returned yet.
    pub fn pending(&self) -> usize {
        self.ids.len() - self.read_offset
    }

    fn window_text(&self) -> Result<String> {
        self.tokenizer
            .decode(&self.ids[self.prefix_offset..], self.skip_special_tokens)
            .map_err(|e| Error::Tokenizer(format!("decoding: {e}")))
    }

    /// What `text` (the window's decode) adds to the prefix.
    fn new_text(&self, text: &str) -> Result<String> {
        match text.strip_prefix(self.prefix.as_str()) {
            Some(rest) => Ok(rest.to_string()),
            None => Err(Error::Tokenizer(format!(
                "streaming decode: the text of the latest ids {text:?} does not extend the \
                 text already returned {:?}",
                self.prefix
            ))),
        }
    }
}

/// Reads a whole file of at most [`MAX_FILE_BYTES`], without trusting its reported size
/// (a pipe or a device reports none).
fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let reported = file.metadata().map_err(io)?.len();
    let too_large = |size| Error::TooLarge {
        path: path.to_path_buf(),
        size,
        limit: MAX_FILE_BYTES,
    };
    if reported > MAX_FILE_BYTES {
        return Err(too_large(reported));
    }
    let mut bytes = Vec::with_capacity(reported as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

fn format_error(path: &Path, message: String) -> Error {
    Error::Format {
        path: path.to_path_buf(),
        message,
    }
}

fn parse_json(path: &Path, bytes: &[u8]) -> Result<Value> {
    serde_json::from_slice(bytes).map_err(|e| format_error(path, format!("malformed JSON: {e}")))
}

fn read_json_if_present(path: &Path) -> Result<Option<(PathBuf, Value)>> {
    match read_bounded(path) {
        Ok(bytes) => Ok(Some((path.to_path_buf(), parse_json(path, &bytes)?))),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn parse_tokenizer(path: &Path, bytes: &[u8]) -> Result<tokenizers::Tokenizer> {
    // Malformed JSON (a truncated download) is told apart from JSON the library rejects.
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes)
        .map_err(|e| format_error(path, format!("malformed JSON: {e}")))?;
    // The library returns errors for what it rejects; a panic on a hostile file would be its
    // bug, and is turned into an error here all the same.
    let parsed = std::panic::catch_unwind(|| tokenizers::Tokenizer::from_bytes(bytes));
    match parsed {
        Ok(Ok(tok)) => Ok(tok),
        Ok(Err(e)) => Err(Error::Tokenizer(format!("{}: {e}", path.display()))),
        Err(_) => Err(Error::Tokenizer(format!(
            "{}: the tokenizers library panicked reading it",
            path.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_and_stream_are_send_sync_static() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Tokenizer>();
        check::<DecodeStream>();
    }
}
