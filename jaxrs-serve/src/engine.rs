//! The real engine and tokenizer of [`jaxrs_models`] behind the scheduler's traits, and the
//! configuration that loads them from a model folder.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jaxrs_models::generate::{Engine, EngineConfig, SamplingParams, SlotId};
use jaxrs_models::tokenizer::Tokenizer;
use jaxrs_models::Transformer;
use tokio::net::TcpListener;

use crate::scheduler::{Backend, BoxError, Codec, Sampling};
use crate::server::{serve_backend, Limits};

/// How the weights are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightDtype {
    /// As float32.
    #[default]
    F32,
    /// Cast to bfloat16.
    Bf16,
    /// Weight-only int8 with per-channel scales.
    Int8,
}

impl std::str::FromStr for WeightDtype {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" => Ok(WeightDtype::F32),
            "bf16" => Ok(WeightDtype::Bf16),
            "int8" => Ok(WeightDtype::Int8),
            other => Err(format!("unknown dtype `{other}` (f32, bf16 or int8)")),
        }
    }
}

/// What `run` serves and how.
#[derive(Debug, Clone)]
pub struct Config {
    /// A model folder as `save_pretrained` writes it, with its `tokenizer.json`.
    pub model_dir: PathBuf,
    /// Where `tokenizer.json` is; default: `model_dir`.
    pub tokenizer_dir: Option<PathBuf>,
    /// The name requests use; default: the folder's name.
    pub model_name: Option<String>,
    /// Weights' dtype.
    pub dtype: WeightDtype,
    /// Cache rows: requests decoded together.
    pub slots: usize,
    /// Tokens per row (prompt plus completion); default: the model's context.
    pub capacity: Option<usize>,
    /// Queue, time, size and connection limits.
    pub limits: Limits,
}

impl Config {
    /// Defaults for `model_dir`: 8 slots, the model's whole context, f32.
    pub fn new(model_dir: impl Into<PathBuf>) -> Self {
        Config {
            model_dir: model_dir.into(),
            tokenizer_dir: None,
            model_name: None,
            dtype: WeightDtype::F32,
            slots: 8,
            capacity: None,
            limits: Limits::default(),
        }
    }

    /// The name the model is served under.
    pub fn name(&self) -> String {
        self.model_name.clone().unwrap_or_else(|| {
            self.model_dir
                .file_name()
                .map_or_else(|| "model".to_string(), |n| n.to_string_lossy().into_owned())
        })
    }
}

/// [`Engine`] as the scheduler drives it.
pub struct EngineBackend {
    engine: Engine,
    vocab_size: usize,
}

impl EngineBackend {
    /// Loads the model (cast or quantized as asked) and makes its engine. Call it on the
    /// thread that will drive the engine.
    pub fn load(
        dir: &Path,
        dtype: WeightDtype,
        slots: usize,
        capacity: Option<usize>,
    ) -> Result<Self, BoxError> {
        let model = match dtype {
            WeightDtype::F32 => Transformer::from_pretrained(dir, Some(jaxrs::DType::F32))?,
            WeightDtype::Bf16 => Transformer::from_pretrained(dir, Some(jaxrs::DType::BF16))?,
            WeightDtype::Int8 => {
                Transformer::from_pretrained(dir, Some(jaxrs::DType::F32))?.quantize_int8()
            }
        };
        let max = model.max_positions();
        let capacity = capacity.unwrap_or(max);
        if capacity < 2 || capacity > max {
            return Err(format!(
                "capacity must be in 2..={max} (the model's context), got {capacity}"
            )
            .into());
        }
        if slots == 0 {
            return Err("slots must be at least 1".into());
        }
        let vocab_size = model.vocab_size();
        let engine = Engine::new(model, EngineConfig { slots, capacity })?;
        Ok(EngineBackend { engine, vocab_size })
    }
}

impl Backend for EngineBackend {
    fn slots(&self) -> usize {
        self.engine.slots()
    }

    fn capacity(&self) -> usize {
        self.engine.capacity()
    }

    fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    fn free_slots(&self) -> usize {
        self.engine.free_slots()
    }

    fn insert(&mut self, prompt: &[u32], sampling: &Sampling) -> Result<(usize, u32), BoxError> {
        let params = SamplingParams {
            temperature: sampling.temperature,
            top_k: 0,
            top_p: sampling.top_p,
            seed: sampling.seed,
        };
        let (SlotId(slot), token) = self.engine.insert(prompt, params)?;
        Ok((slot, token))
    }

    fn step(&mut self) -> Result<Vec<(usize, u32)>, BoxError> {
        Ok(self
            .engine
            .step()?
            .into_iter()
            .map(|(SlotId(s), t)| (s, t))
            .collect())
    }

    fn position(&self, slot: usize) -> usize {
        self.engine.position(SlotId(slot))
    }

    fn release(&mut self, slot: usize) {
        self.engine.release(SlotId(slot));
    }

    /// Compiles the prefill of every prompt-length bucket and the decode step, so that no
    /// request waits on a compile (a bucket's first prefill would otherwise be billed to
    /// whichever request first had a prompt of that length).
    fn warm_up(&mut self) -> Result<(), BoxError> {
        let capacity = self.engine.capacity();
        let lengths: Vec<usize> = self
            .engine
            .buckets()
            .iter()
            .map(|&b| b.min(capacity - 1))
            .collect();
        for len in lengths {
            let (slot, _) = self
                .engine
                .insert(&vec![0; len], SamplingParams::greedy())?;
            let stepped = self.engine.step();
            self.engine.release(slot);
            stepped?;
        }
        Ok(())
    }
}

/// A model folder's tokenizer (`tokenizer.json` and its side files), with the stop tokens
/// `generate` uses (one or several, as Llama 3 has).
pub struct TokenizerCodec(Tokenizer);

impl TokenizerCodec {
    /// Loads the tokenizer of a model folder.
    pub fn load(dir: &Path) -> Result<Self, BoxError> {
        Ok(TokenizerCodec(Tokenizer::from_dir(dir)?))
    }
}

impl Codec for TokenizerCodec {
    /// With the model's special tokens (Llama's bos), as `transformers` encodes by default.
    fn encode(&self, text: &str) -> Result<Vec<u32>, BoxError> {
        Ok(self.0.encode(text, true)?)
    }

    /// Special tokens are left out of completions, as OpenAI's API does.
    fn decode(&self, ids: &[u32]) -> Result<String, BoxError> {
        Ok(self.0.decode(ids, true)?)
    }

    fn stop_token_ids(&self) -> &[u32] {
        self.0.stop_token_ids()
    }

    fn start_token_id(&self) -> Option<u32> {
        self.0.bos_token_id().or(self.0.eos_token_id())
    }
}

/// Serves `config`'s model on `listener` until `shutdown` completes, then drains in-flight
/// requests and returns. The model is loaded, and the engine compiled and warmed up, before
/// the first connection is accepted.
pub async fn serve(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), BoxError> {
    let codec = Arc::new(TokenizerCodec::load(
        config.tokenizer_dir.as_ref().unwrap_or(&config.model_dir),
    )?);
    let name = config.name();
    let (dir, dtype, slots, capacity) = (
        config.model_dir.clone(),
        config.dtype,
        config.slots,
        config.capacity,
    );
    serve_backend(
        listener,
        move || EngineBackend::load(&dir, dtype, slots, capacity),
        codec,
        name,
        config.limits,
        shutdown,
    )
    .await
}

/// Binds `addr` and [`serve`]s.
pub async fn run(
    addr: SocketAddr,
    config: Config,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), BoxError> {
    let listener = TcpListener::bind(addr).await?;
    serve(listener, config, shutdown).await
}
