//! Hugging Face checkpoints into [`Transformer`]s: each family's tensor names mapped to the
//! model's fields, `[out, in]` `nn.Linear` weights kept as they are (the layout [`Dense`] uses;
//! GPT-2's `Conv1D` `[in, out]` weights are transposed to it), GPT-2's fused `c_attn` split into
//! q, k and v, and tied output embeddings left tied.

use crate::config::{rope_inverse_frequencies, HfConfig};
use crate::dense::Dense;
use crate::error::{Error, Result};
use crate::hf::{checkpoint_dtype, read_json_text, TensorStore};
use crate::transformer::{Attention, Block, Mlp, Norm, Transformer};
use jaxrs::{Array, DType};
use std::path::Path;

impl Transformer {
    /// Loads a model folder as `transformers`' `save_pretrained` writes it: `config.json` and
    /// `model.safetensors` (or shards with `model.safetensors.index.json`). The parameters keep
    /// the checkpoint's dtype, or are cast to `dtype`.
    ///
    /// A config key the model does not support, a missing tensor, a tensor of the wrong shape,
    /// or a tensor the model has no place for is an [`Error`] naming it.
    pub fn from_pretrained(dir: impl AsRef<Path>, dtype: Option<DType>) -> Result<Transformer> {
        let dir = dir.as_ref();
        let config = HfConfig::from_json_str(&read_json_text(&dir.join("config.json"))?).map_err(
            |e| match e {
                Error::Format { message, .. } => Error::Format {
                    path: dir.join("config.json"),
                    message,
                },
                e => e,
            },
        )?;
        let store = TensorStore::open_dir(dir)?;
        Transformer::from_store(&config, store, dtype)
    }

    /// A model of `config` from the tensors of `store` (see [`Transformer::from_pretrained`]).
    pub fn from_store(
        config: &HfConfig,
        store: TensorStore,
        dtype: Option<DType>,
    ) -> Result<Transformer> {
        match config.model.model_type.as_str() {
            "gpt2" => load_gpt2(config, store, dtype),
            _ => load_llama(config, store, dtype),
        }
    }
}

/// Reads tensors of one dtype, by names relative to a prefix that checkpoints may or may not
/// carry (`transformer.` for GPT-2, `model.` for Llama).
struct Reader {
    store: TensorStore,
    prefix: &'static str,
    dtype: DType,
}

impl Reader {
    /// A reader of the checkpoint's tensors, under `prefix` if the checkpoint uses it (it holds
    /// `{prefix}{embedding}`), in `dtype` or else the checkpoint's own.
    fn open(
        store: TensorStore,
        prefix: &'static str,
        embedding: &str,
        cfg: &HfConfig,
        dtype: Option<DType>,
    ) -> Reader {
        let prefix = if store.contains(&format!("{prefix}{embedding}")) {
            prefix
        } else {
            ""
        };
        let stored = checkpoint_dtype(
            cfg.torch_dtype.as_deref(),
            &store,
            &format!("{prefix}{embedding}"),
        );
        Reader {
            store,
            prefix,
            dtype: dtype.unwrap_or(stored),
        }
    }

    fn name(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Array> {
        let full = self.name(name);
        self.store.take(&full, shape, self.dtype)
    }

    fn take_opt(&mut self, name: &str, shape: &[usize], present: bool) -> Result<Option<Array>> {
        present.then(|| self.take(name, shape)).transpose()
    }

    /// An `nn.Linear` `[out, in]` weight as it is, with its bias if it has one.
    fn linear(&mut self, name: &str, d_in: usize, d_out: usize, bias: bool) -> Result<Dense> {
        let weight = self.take(&format!("{name}.weight"), &[d_out, d_in])?;
        let bias = self.take_opt(&format!("{name}.bias"), &[d_out], bias)?;
        Ok(Dense::new(weight, bias))
    }
}

fn load_gpt2(cfg: &HfConfig, store: TensorStore, dtype: Option<DType>) -> Result<Transformer> {
    let c = &cfg.model;
    let mut r = Reader::open(store, "transformer.", "wte.weight", cfg, dtype);
    let h = c.hidden_size;
    let embedding = r.take("wte.weight", &[c.vocab_size, h])?;
    let positions = r.take("wpe.weight", &[c.max_positions, h])?;
    let mut blocks = Vec::with_capacity(c.num_layers);
    for i in 0..c.num_layers {
        let p = format!("h.{i}");
        let norm = |r: &mut Reader, n: &str| -> Result<Norm> {
            Ok(Norm {
                bias: Some(r.take(&format!("{p}.{n}.bias"), &[h])?),
                scale: r.take(&format!("{p}.{n}.weight"), &[h])?,
            })
        };
        let attention_norm = norm(&mut r, "ln_1")?;
        let mlp_norm = norm(&mut r, "ln_2")?;
        // Conv1D keeps its weight as [in, out] (transposed here to Dense's [out, in]);
        // c_attn's columns are q, then k, then v.
        let qkv_w = r
            .take(&format!("{p}.attn.c_attn.weight"), &[h, 3 * h])?
            .transpose([1, 0]);
        let qkv_b = r.take(&format!("{p}.attn.c_attn.bias"), &[3 * h])?;
        let ws = jaxrs::lax::split(&qkv_w, &[h, h, h], 0);
        let bs = jaxrs::lax::split(&qkv_b, &[h, h, h], 0);
        let dense = |i: usize| Dense::new(ws[i].clone(), Some(bs[i].clone()));
        let conv1d = |r: &mut Reader, n: &str, d_in: usize, d_out: usize| -> Result<Dense> {
            Ok(Dense::new(
                r.take(&format!("{p}.{n}.weight"), &[d_in, d_out])?
                    .transpose([1, 0]),
                Some(r.take(&format!("{p}.{n}.bias"), &[d_out])?),
            ))
        };
        let o = conv1d(&mut r, "attn.c_proj", h, h)?;
        let up = conv1d(&mut r, "mlp.c_fc", h, c.intermediate_size)?;
        let down = conv1d(&mut r, "mlp.c_proj", c.intermediate_size, h)?;
        // Older checkpoints carry the causal mask as buffers; the model builds its own.
        for buffer in ["attn.bias", "attn.masked_bias"] {
            let name = r.name(&format!("{p}.{buffer}"));
            r.store.skip(&name);
        }
        blocks.push(Block {
            attention: Attention {
                k: dense(1),
                o,
                q: dense(0),
                v: dense(2),
            },
            attention_norm,
            mlp: Mlp {
                down,
                gate: None,
                up,
            },
            mlp_norm,
        });
    }
    let final_norm = Norm {
        bias: Some(r.take("ln_f.bias", &[h])?),
        scale: r.take("ln_f.weight", &[h])?,
    };
    let lm_head = output_head(&mut r, "lm_head.weight", c.tie_word_embeddings, &embedding)?;
    r.store.finish()?;
    Ok(Transformer {
        blocks,
        config: c.clone(),
        embedding,
        final_norm,
        lm_head,
        positions: Some(positions),
        rope_inverse_frequencies: None,
    })
}

/// The output projection: absent from tied checkpoints (or equal to the embedding, when a
/// checkpoint stores both), an `[vocab, hidden]` weight otherwise.
fn output_head(r: &mut Reader, name: &str, tied: bool, embedding: &Array) -> Result<Option<Dense>> {
    let (vocab, hidden) = (embedding.shape()[0], embedding.shape()[1]);
    if !r.store.contains(name) {
        return if tied {
            Ok(None)
        } else {
            Err(Error::Tensor {
                name: name.into(),
                message: "missing, and tie_word_embeddings is false".into(),
            })
        };
    }
    let weight = r.store.take(name, &[vocab, hidden], r.dtype)?;
    Ok(if tied {
        None
    } else {
        Some(Dense::new(weight, None))
    })
}

fn load_llama(cfg: &HfConfig, store: TensorStore, dtype: Option<DType>) -> Result<Transformer> {
    let c = &cfg.model;
    let mut r = Reader::open(store, "model.", "embed_tokens.weight", cfg, dtype);
    let h = c.hidden_size;
    let (q_out, kv_out) = (c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim);
    let embedding = r.take("embed_tokens.weight", &[c.vocab_size, h])?;
    let mut blocks = Vec::with_capacity(c.num_layers);
    for i in 0..c.num_layers {
        let p = format!("layers.{i}");
        let norm = |r: &mut Reader, n: &str| -> Result<Norm> {
            Ok(Norm {
                bias: None,
                scale: r.take(&format!("{p}.{n}.weight"), &[h])?,
            })
        };
        let attention_norm = norm(&mut r, "input_layernorm")?;
        let mlp_norm = norm(&mut r, "post_attention_layernorm")?;
        let attention = Attention {
            q: r.linear(&format!("{p}.self_attn.q_proj"), h, q_out, cfg.qkv_bias)?,
            k: r.linear(&format!("{p}.self_attn.k_proj"), h, kv_out, cfg.qkv_bias)?,
            v: r.linear(&format!("{p}.self_attn.v_proj"), h, kv_out, cfg.qkv_bias)?,
            o: r.linear(&format!("{p}.self_attn.o_proj"), q_out, h, cfg.o_bias)?,
        };
        let mlp = Mlp {
            gate: Some(r.linear(
                &format!("{p}.mlp.gate_proj"),
                h,
                c.intermediate_size,
                cfg.mlp_bias,
            )?),
            up: r.linear(
                &format!("{p}.mlp.up_proj"),
                h,
                c.intermediate_size,
                cfg.mlp_bias,
            )?,
            down: r.linear(
                &format!("{p}.mlp.down_proj"),
                c.intermediate_size,
                h,
                cfg.mlp_bias,
            )?,
        };
        // Some checkpoints store the rotary frequencies; the model computes its own.
        let name = r.name(&format!("{p}.self_attn.rotary_emb.inv_freq"));
        r.store.skip(&name);
        blocks.push(Block {
            attention,
            attention_norm,
            mlp,
            mlp_norm,
        });
    }
    let final_norm = Norm {
        bias: None,
        scale: r.take("norm.weight", &[h])?,
    };
    // lm_head sits outside the `model.` prefix.
    let lm_head = output_head(&mut r, "lm_head.weight", c.tie_word_embeddings, &embedding)?;
    r.store.finish()?;
    let inv_freq = rope_inverse_frequencies(c.head_dim, cfg.rope_theta, &cfg.rope_scaling);
    Ok(Transformer {
        blocks,
        config: c.clone(),
        embedding,
        final_norm,
        lm_head,
        positions: None,
        rope_inverse_frequencies: Some(Array::from_vec(inv_freq, &[c.head_dim / 2])),
    })
}
