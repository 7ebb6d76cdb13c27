//! A decoder-only transformer's shape, read from a Hugging Face `config.json`.
//!
//! GPT-2 and the Llama family (Llama 1-3, Mistral, Qwen2) are one architecture with switches:
//! LayerNorm or RMSNorm, learned or rotary positions, a plain or a gated (SwiGLU) MLP, fused or
//! separate projections, tied or separate output embeddings. [`TransformerConfig`] holds the
//! switches; [`TransformerConfig::from_hf_json`] reads them from the keys each family's
//! `config.json` uses, and refuses (naming the key) what the model code does not implement,
//! rather than running something else silently.

use crate::error::{Error, Result};
use jaxrs::Tree;
use serde_json::Value;

/// The shape and switches of a [`Transformer`](crate::Transformer). Every field is static:
/// part of a jitted function's cache key, not an array.
#[derive(Tree, Clone, Debug, PartialEq)]
pub struct TransformerConfig {
    /// `config.json`'s `model_type`: `gpt2`, `llama`, `mistral` or `qwen2`.
    pub model_type: String,
    /// Tokens in the vocabulary.
    pub vocab_size: usize,
    /// The width of the residual stream.
    pub hidden_size: usize,
    /// Transformer blocks.
    pub num_layers: usize,
    /// Query heads.
    pub num_heads: usize,
    /// Key/value heads (fewer than `num_heads` for grouped-query attention).
    pub num_kv_heads: usize,
    /// Features per head.
    pub head_dim: usize,
    /// The MLP's hidden width.
    pub intermediate_size: usize,
    /// The longest sequence the positions cover.
    pub max_positions: usize,
    /// The normalisations' epsilon.
    pub norm_eps: f64,
    /// RMSNorm (Llama) rather than LayerNorm with a bias (GPT-2).
    pub rms_norm: bool,
    /// A gated MLP, `down(act(gate(x)) * up(x))` (SwiGLU), rather than `down(act(up(x)))`.
    pub gated_mlp: bool,
    /// The MLP's activation, by its `transformers` name: `gelu_new`,
    /// `gelu_pytorch_tanh`, `gelu`, `silu`, `relu`.
    pub activation: String,
    /// Learned absolute positions (GPT-2's `wpe`) rather than rotary embeddings.
    pub learned_positions: bool,
    /// Keys at most this many positions back are attended to (Mistral); 0 for no window.
    pub sliding_window: usize,
    /// The output projection is the token embedding, transposed.
    pub tie_word_embeddings: bool,
}

/// What a `config.json` says about rotary embeddings: the base and the scaling, turned into
/// per-pair frequencies by [`rope_inverse_frequencies`].
#[derive(Clone, Debug, PartialEq)]
pub enum RopeScaling {
    /// `inv_freq = theta^(-2i/d)`.
    Default,
    /// Positions divided by `factor`.
    Linear {
        /// The divisor.
        factor: f64,
    },
    /// Llama 3.1's: low frequencies divided by `factor`, high ones kept, a smooth ramp
    /// between.
    Llama3 {
        /// The divisor of the low frequencies.
        factor: f64,
        /// Wavelengths longer than `original_max_positions / low_freq_factor` are divided.
        low_freq_factor: f64,
        /// Wavelengths shorter than `original_max_positions / high_freq_factor` are kept.
        high_freq_factor: f64,
        /// The context length the model was pretrained on.
        original_max_positions: f64,
    },
}

/// A parsed `config.json`: the model's shape, and what the rest of loading needs.
#[derive(Clone, Debug)]
pub struct HfConfig {
    /// The model's shape and switches.
    pub model: TransformerConfig,
    /// Rotary embeddings' base (`rope_theta`); unused with learned positions.
    pub rope_theta: f64,
    /// Rotary embeddings' scaling.
    pub rope_scaling: RopeScaling,
    /// Whether q, k and v have biases (Qwen2; Llama's `attention_bias`).
    pub qkv_bias: bool,
    /// Whether the attention's output projection has a bias.
    pub o_bias: bool,
    /// Whether the MLP's projections have biases.
    pub mlp_bias: bool,
    /// The dtype the checkpoint was saved in (`torch_dtype` or `dtype`), if named.
    pub torch_dtype: Option<String>,
    /// `eos_token_id` (several for some models).
    pub eos_token_ids: Vec<u32>,
    /// `bos_token_id`.
    pub bos_token_id: Option<u32>,
}

fn key_error(key: &str, message: impl Into<String>) -> Error {
    Error::Config {
        key: key.into(),
        message: message.into(),
    }
}

/// Typed reads of `config.json` keys, each error naming the key.
struct Keys<'a>(&'a serde_json::Map<String, Value>);

impl Keys<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    fn usize(&self, key: &str) -> Result<usize> {
        self.usize_or(key, None)
    }

    fn usize_or(&self, key: &str, default: Option<usize>) -> Result<usize> {
        match self.get(key) {
            None => default.ok_or_else(|| key_error(key, "missing")),
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| {
                    key_error(key, format!("expected a non-negative integer, found {v}"))
                }),
        }
    }

    fn f64_or(&self, key: &str, default: f64) -> Result<f64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_f64()
                .ok_or_else(|| key_error(key, format!("expected a number, found {v}"))),
        }
    }

    fn bool_or(&self, key: &str, default: bool) -> Result<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| key_error(key, format!("expected true or false, found {v}"))),
        }
    }

    fn str_or<'b>(&'b self, key: &str, default: &'b str) -> Result<&'b str> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_str()
                .ok_or_else(|| key_error(key, format!("expected a string, found {v}"))),
        }
    }

    /// A token id or a list of them.
    fn token_ids(&self, key: &str) -> Result<Vec<u32>> {
        let one = |v: &Value| {
            v.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| key_error(key, format!("expected a token id, found {v}")))
        };
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(ids)) => ids.iter().map(one).collect(),
            Some(v) => Ok(vec![one(v)?]),
        }
    }
}

/// Positive sizes that divide as attention needs.
fn check_shape(c: &TransformerConfig) -> Result<()> {
    for (key, v) in [
        ("vocab_size", c.vocab_size),
        ("hidden_size", c.hidden_size),
        ("num_hidden_layers", c.num_layers),
        ("num_attention_heads", c.num_heads),
        ("num_key_value_heads", c.num_kv_heads),
        ("head_dim", c.head_dim),
        ("intermediate_size", c.intermediate_size),
        ("max_position_embeddings", c.max_positions),
    ] {
        if v == 0 {
            return Err(key_error(key, "must be positive"));
        }
        // Bound every size before anything is allocated from it: 2^24 covers every published
        // vocabulary and width many times over.
        if v > 1 << 24 {
            return Err(key_error(
                key,
                format!("{v} is beyond the supported bound of {}", 1 << 24),
            ));
        }
    }
    if !c.num_heads.is_multiple_of(c.num_kv_heads) {
        return Err(key_error(
            "num_key_value_heads",
            format!(
                "{} does not divide num_attention_heads = {}",
                c.num_kv_heads, c.num_heads
            ),
        ));
    }
    if !c.learned_positions && !c.head_dim.is_multiple_of(2) {
        return Err(key_error(
            "head_dim",
            format!(
                "rotary embeddings need an even head_dim, found {}",
                c.head_dim
            ),
        ));
    }
    Ok(())
}

fn activation(keys: &Keys<'_>, key: &str, default: &str) -> Result<String> {
    let act = keys.str_or(key, default)?;
    match act {
        "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" | "gelu" | "silu" | "swish" | "relu" => {
            Ok(act.to_string())
        }
        other => Err(key_error(
            key,
            format!("the activation {other:?} is not supported"),
        )),
    }
}

impl HfConfig {
    /// Reads a `config.json`'s text.
    ///
    /// ```
    /// let cfg = jaxrs_models::config::HfConfig::from_json_str(r#"{
    ///     "model_type": "llama", "vocab_size": 32, "hidden_size": 16, "num_hidden_layers": 2,
    ///     "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 40,
    ///     "max_position_embeddings": 64
    /// }"#).unwrap();
    /// assert_eq!(cfg.model.head_dim, 4);
    /// assert!(cfg.model.rms_norm && cfg.model.gated_mlp);
    /// ```
    pub fn from_json_str(text: &str) -> Result<HfConfig> {
        let value: Value = serde_json::from_str(text).map_err(|e| Error::Format {
            path: "config.json".into(),
            message: e.to_string(),
        })?;
        let Value::Object(map) = &value else {
            return Err(Error::Format {
                path: "config.json".into(),
                message: "expected a JSON object".into(),
            });
        };
        let keys = Keys(map);
        let model_type = keys.str_or("model_type", "")?;
        let mut cfg = match model_type {
            "gpt2" => gpt2(&keys)?,
            "llama" | "mistral" | "qwen2" => llama_family(&keys, model_type)?,
            "" => return Err(key_error("model_type", "missing")),
            other => {
                return Err(key_error(
                    "model_type",
                    format!("{other:?} is not supported (gpt2, llama, mistral, qwen2 are)"),
                ))
            }
        };
        check_shape(&cfg.model)?;
        cfg.torch_dtype = match keys.get("torch_dtype").or_else(|| keys.get("dtype")) {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        cfg.eos_token_ids = keys.token_ids("eos_token_id")?;
        cfg.bos_token_id = keys.token_ids("bos_token_id")?.first().copied();
        Ok(cfg)
    }
}

fn gpt2(keys: &Keys<'_>) -> Result<HfConfig> {
    let hidden = keys.usize("n_embd")?;
    let heads = keys.usize("n_head")?;
    if heads == 0 || hidden % heads != 0 {
        return Err(key_error(
            "n_head",
            format!("{heads} does not divide n_embd = {hidden}"),
        ));
    }
    // Variants of GPT-2's attention that the model code does not implement.
    for key in ["scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"] {
        if keys.bool_or(key, false)? {
            return Err(key_error(key, "is not supported (only false)"));
        }
    }
    if !keys.bool_or("scale_attn_weights", true)? {
        return Err(key_error(
            "scale_attn_weights",
            "is not supported (only true)",
        ));
    }
    let model = TransformerConfig {
        model_type: "gpt2".into(),
        vocab_size: keys.usize("vocab_size")?,
        hidden_size: hidden,
        num_layers: keys.usize("n_layer")?,
        num_heads: heads,
        num_kv_heads: heads,
        head_dim: hidden / heads,
        intermediate_size: keys.usize_or("n_inner", Some(4 * hidden))?,
        max_positions: keys.usize("n_positions")?,
        norm_eps: keys.f64_or("layer_norm_epsilon", 1e-5)?,
        rms_norm: false,
        gated_mlp: false,
        activation: activation(keys, "activation_function", "gelu_new")?,
        learned_positions: true,
        sliding_window: 0,
        tie_word_embeddings: keys.bool_or("tie_word_embeddings", true)?,
    };
    Ok(HfConfig {
        model,
        rope_theta: 0.0,
        rope_scaling: RopeScaling::Default,
        qkv_bias: true,
        o_bias: true,
        mlp_bias: true,
        torch_dtype: None,
        eos_token_ids: Vec::new(),
        bos_token_id: None,
    })
}

fn llama_family(keys: &Keys<'_>, model_type: &str) -> Result<HfConfig> {
    let hidden = keys.usize("hidden_size")?;
    let heads = keys.usize("num_attention_heads")?;
    if heads == 0 {
        return Err(key_error("num_attention_heads", "must be positive"));
    }
    let head_dim = keys.usize_or("head_dim", Some(hidden / heads))?;
    let sliding_window = match model_type {
        "mistral" => keys.usize_or("sliding_window", Some(0))?,
        // Qwen2 applies its window only when `use_sliding_window` says so.
        "qwen2" if keys.bool_or("use_sliding_window", false)? => {
            return Err(key_error(
                "use_sliding_window",
                "is not supported (only false)",
            ))
        }
        _ => 0,
    };
    if keys.usize_or("pretraining_tp", Some(1))? != 1 {
        return Err(key_error("pretraining_tp", "is not supported (only 1)"));
    }
    let attention_bias = keys.bool_or("attention_bias", false)?;
    let model = TransformerConfig {
        model_type: model_type.into(),
        vocab_size: keys.usize("vocab_size")?,
        hidden_size: hidden,
        num_layers: keys.usize("num_hidden_layers")?,
        num_heads: heads,
        num_kv_heads: keys.usize_or("num_key_value_heads", Some(heads))?,
        head_dim,
        intermediate_size: keys.usize("intermediate_size")?,
        max_positions: keys.usize_or("max_position_embeddings", Some(2048))?,
        norm_eps: keys.f64_or("rms_norm_eps", 1e-6)?,
        rms_norm: true,
        gated_mlp: true,
        activation: activation(keys, "hidden_act", "silu")?,
        learned_positions: false,
        sliding_window,
        tie_word_embeddings: keys.bool_or("tie_word_embeddings", false)?,
    };
    Ok(HfConfig {
        model,
        rope_theta: rope_theta(keys)?,
        rope_scaling: rope_scaling(keys)?,
        qkv_bias: model_type == "qwen2" || attention_bias,
        o_bias: attention_bias,
        mlp_bias: keys.bool_or("mlp_bias", false)?,
        torch_dtype: None,
        eos_token_ids: Vec::new(),
        bos_token_id: None,
    })
}

/// The rotary parameters' object: `rope_scaling` (transformers 4's spelling, beside a
/// top-level `rope_theta`) or `rope_parameters` (transformers 5's, holding `rope_theta` too).
fn rope_object<'a>(
    keys: &Keys<'a>,
) -> Result<Option<(&'static str, &'a serde_json::Map<String, Value>)>> {
    for key in ["rope_scaling", "rope_parameters"] {
        match keys.0.get(key).filter(|v| !v.is_null()) {
            None => {}
            Some(Value::Object(map)) => return Ok(Some((key, map))),
            Some(v) => return Err(key_error(key, format!("expected an object, found {v}"))),
        }
    }
    Ok(None)
}

fn rope_theta(keys: &Keys<'_>) -> Result<f64> {
    if keys.get("rope_theta").is_some() {
        return keys.f64_or("rope_theta", 10000.0);
    }
    match rope_object(keys)? {
        Some(("rope_parameters", map)) => Keys(map)
            .f64_or("rope_theta", 10000.0)
            .map_err(|_| key_error("rope_parameters.rope_theta", "expected a number")),
        _ => Ok(10000.0),
    }
}

fn rope_scaling(keys: &Keys<'_>) -> Result<RopeScaling> {
    let Some((object_key, map)) = rope_object(keys)? else {
        return Ok(RopeScaling::Default);
    };
    let scaling = Keys(map);
    // `transformers` has spelt the kind both ways.
    let kind = match scaling.get("rope_type") {
        Some(_) => scaling.str_or("rope_type", "default")?,
        None => scaling.str_or("type", "default")?,
    };
    let factor = |key: &str| {
        scaling
            .get(key)
            .and_then(Value::as_f64)
            .filter(|f| *f > 0.0)
            .ok_or_else(|| key_error(&format!("{object_key}.{key}"), "expected a positive number"))
    };
    match kind {
        "default" => Ok(RopeScaling::Default),
        "linear" => Ok(RopeScaling::Linear {
            factor: factor("factor")?,
        }),
        "llama3" => {
            let low = factor("low_freq_factor")?;
            let high = factor("high_freq_factor")?;
            if high <= low {
                return Err(key_error(
                    "rope_scaling.high_freq_factor",
                    "must exceed low_freq_factor",
                ));
            }
            Ok(RopeScaling::Llama3 {
                factor: factor("factor")?,
                low_freq_factor: low,
                high_freq_factor: high,
                original_max_positions: factor("original_max_position_embeddings")?,
            })
        }
        other => Err(key_error(
            &format!("{object_key}.rope_type"),
            format!("{other:?} is not supported (default, linear, llama3 are)"),
        )),
    }
}

/// The rotary embedding's frequency of each pair of features, `head_dim / 2` of them, as
/// `transformers` computes them (in float32 from float64 parameters).
pub fn rope_inverse_frequencies(head_dim: usize, theta: f64, scaling: &RopeScaling) -> Vec<f32> {
    (0..head_dim / 2)
        .map(|i| {
            // transformers: 1 / theta ** (arange(0, dim, 2).float() / dim), in float32.
            let exponent = (2 * i) as f32 / head_dim as f32;
            let base = 1.0f32 / (theta as f32).powf(exponent);
            match *scaling {
                RopeScaling::Default => base,
                RopeScaling::Linear { factor } => base / factor as f32,
                RopeScaling::Llama3 {
                    factor,
                    low_freq_factor,
                    high_freq_factor,
                    original_max_positions,
                } => {
                    let wavelen = 2.0 * std::f32::consts::PI / base;
                    let low_wavelen = original_max_positions as f32 / low_freq_factor as f32;
                    let high_wavelen = original_max_positions as f32 / high_freq_factor as f32;
                    if wavelen < high_wavelen {
                        base
                    } else if wavelen > low_wavelen {
                        base / factor as f32
                    } else {
                        let smooth = (original_max_positions as f32 / wavelen
                            - low_freq_factor as f32)
                            / (high_freq_factor as f32 - low_freq_factor as f32);
                        (1.0 - smooth) * base / factor as f32 + smooth * base
                    }
                }
            }
        })
        .collect()
}
