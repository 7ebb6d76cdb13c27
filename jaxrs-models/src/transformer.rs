//! The decoder-only transformer of GPT-2 and the Llama family, as a `#[derive(Tree)]` of
//! [`Dense`] layers and normalisations, with its two passes: [`Transformer::prefill`] over
//! whole prompts and [`Transformer::decode`] of one token per sequence over a [`KvCache`].

use crate::config::TransformerConfig;
use crate::dense::Dense;
use jaxrs::prelude::*;
use jaxrs::{lax, DotDims};

/// A normalisation over the last axis: LayerNorm (with `bias`, GPT-2) or RMSNorm (Llama), as
/// the model's config says.
#[derive(Tree, Clone, Debug)]
pub struct Norm {
    /// LayerNorm's shift, `[hidden]`; `None` for RMSNorm.
    pub bias: Option<Array>,
    /// The per-feature scale, `[hidden]`.
    pub scale: Array,
}

impl Norm {
    /// Normalises in float32, as `transformers` does for both kinds, and returns `x`'s dtype.
    fn apply(&self, x: &Array, config: &TransformerConfig) -> Array {
        let dtype = x.dtype();
        let x32 = x.astype(DType::F32);
        if config.rms_norm {
            // LlamaRMSNorm: the normalised value is cast back before the scale multiplies it.
            let inv = ((&x32 * &x32).mean(-1, true) + config.norm_eps).rsqrt();
            &self.scale * (x32 * inv).astype(dtype)
        } else {
            let mean = x32.mean(-1, true);
            let centered = x32 - mean;
            let var = (&centered * &centered).mean(-1, true);
            let normed = centered * (var + config.norm_eps).rsqrt();
            let bias = self.bias.as_ref().expect("a LayerNorm has a bias");
            (normed * self.scale.astype(DType::F32) + bias.astype(DType::F32)).astype(dtype)
        }
    }
}

/// Multi-head attention's projections (GPT-2's fused `c_attn` is split into `q`, `k`, `v`
/// when loaded).
#[derive(Tree, Clone, Debug)]
pub struct Attention {
    /// Keys, `[hidden, kv_heads * head_dim]`.
    pub k: Dense,
    /// The output, `[heads * head_dim, hidden]`.
    pub o: Dense,
    /// Queries, `[hidden, heads * head_dim]`.
    pub q: Dense,
    /// Values, `[hidden, kv_heads * head_dim]`.
    pub v: Dense,
}

/// The feed-forward part: `down(act(up(x)))`, or with `gate`, `down(act(gate(x)) * up(x))`.
#[derive(Tree, Clone, Debug)]
pub struct Mlp {
    /// `[intermediate, hidden]`.
    pub down: Dense,
    /// `[hidden, intermediate]`, in a gated (SwiGLU) MLP.
    pub gate: Option<Dense>,
    /// `[hidden, intermediate]`.
    pub up: Dense,
}

/// One pre-norm transformer block.
#[derive(Tree, Clone, Debug)]
pub struct Block {
    /// Self-attention.
    pub attention: Attention,
    /// The normalisation before attention (`ln_1`, `input_layernorm`).
    pub attention_norm: Norm,
    /// The feed-forward part.
    pub mlp: Mlp,
    /// The normalisation before the MLP (`ln_2`, `post_attention_layernorm`).
    pub mlp_norm: Norm,
}

/// A decoder-only transformer language model: GPT-2, or a Llama-family model (Llama,
/// Mistral, Qwen2), by its [`TransformerConfig`].
///
/// Load one with [`Transformer::from_pretrained`]; run it whole over prompts with
/// [`Transformer::prefill`], or one token at a time over a [`KvCache`] with
/// [`Transformer::decode`]; [`crate::generate`] jits both.
#[derive(Tree, Clone, Debug)]
pub struct Transformer {
    /// The blocks, first to last.
    pub blocks: Vec<Block>,
    /// The model's shape (static: part of jit's cache key).
    pub config: TransformerConfig,
    /// The token embedding, `[vocab, hidden]`.
    pub embedding: Array,
    /// The normalisation after the last block.
    pub final_norm: Norm,
    /// The output projection, `[hidden, vocab]`; `None` when it is the token embedding's
    /// transpose (tied).
    pub lm_head: Option<Dense>,
    /// Learned absolute positions, `[max_positions, hidden]` (GPT-2).
    pub positions: Option<Array>,
    /// Rotary embeddings' frequencies, `[head_dim / 2]` float32 (Llama family).
    pub rope_inverse_frequencies: Option<Array>,
}

/// Keys and values of every layer for `slots` sequences of up to `capacity` positions each:
/// `keys[l]` is `[slots, kv_heads, head_dim, capacity]` and `values[l]` is `[slots, kv_heads,
/// capacity, head_dim]`.
///
/// These are the layouts attention's two dots read as they are (batch axes first, then the
/// contracted axis before the free one for keys, after it for values), so a decode step
/// copies no part of the cache; in `transformers`' `[slots, capacity, kv_heads, head_dim]`
/// XLA transposes every layer's keys and values at every step.
#[derive(Tree, Clone, Debug)]
pub struct KvCache {
    /// Per layer.
    pub keys: Vec<Array>,
    /// Per layer.
    pub values: Vec<Array>,
}

impl KvCache {
    /// A zeroed cache for `model`, of its dtype.
    pub fn new(model: &Transformer, slots: usize, capacity: usize) -> KvCache {
        let c = &model.config;
        let zeros = |shape: [usize; 4]| {
            (0..c.num_layers)
                .map(|_| Array::zeros(&shape, model.dtype()))
                .collect()
        };
        KvCache {
            keys: zeros([slots, c.num_kv_heads, c.head_dim, capacity]),
            values: zeros([slots, c.num_kv_heads, capacity, c.head_dim]),
        }
    }

    /// Sequences the cache holds.
    pub fn slots(&self) -> usize {
        self.keys.first().map_or(0, |k| k.shape()[0])
    }

    /// Positions per sequence.
    pub fn capacity(&self) -> usize {
        self.values.first().map_or(0, |v| v.shape()[2])
    }
}

/// The activation named by `transformers`' `hidden_act` / `activation_function`.
fn activate(x: &Array, name: &str) -> Array {
    match name {
        "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => x.gelu(),
        "gelu" => x.gelu_exact(),
        "silu" | "swish" => x.silu(),
        "relu" => x.relu(),
        other => unreachable!("the config reader refuses the activation {other:?}"),
    }
}

/// Keys `[B, T, kv_heads, D]` in the cache's layout, `[B, kv_heads, D, T]`.
pub(crate) fn cache_keys(k: &Array) -> Array {
    k.transpose([0, 2, 3, 1])
}

/// Values `[B, T, kv_heads, D]` in the cache's layout, `[B, kv_heads, T, D]`.
pub(crate) fn cache_values(v: &Array) -> Array {
    v.transpose([0, 2, 1, 3])
}

/// `transformers`' `rotate_half`: `[-x2, x1]` of the two halves of the last axis.
fn rotate_half(x: &Array) -> Array {
    let d = x.shape()[x.rank() - 1];
    let rank = x.rank();
    let halves = lax::split(x, &[d / 2, d / 2], (rank - 1) as i64);
    Array::concatenate(&[-&halves[1], halves[0].clone()], -1)
}

impl Transformer {
    /// The dtype of the activations and the cache: the token embedding's.
    pub fn dtype(&self) -> DType {
        self.embedding.dtype()
    }

    /// Tokens in the vocabulary.
    pub fn vocab_size(&self) -> usize {
        self.config.vocab_size
    }

    /// The longest sequence the model's positions cover.
    pub fn max_positions(&self) -> usize {
        self.config.max_positions
    }

    /// The model with every float parameter cast to `dtype` (int8 weights stay int8; rotary
    /// frequencies stay float32).
    pub fn astype(&self, dtype: DType) -> Transformer {
        let norm = |n: &Norm| Norm {
            bias: n.bias.as_ref().map(|b| b.astype(dtype)),
            scale: n.scale.astype(dtype),
        };
        Transformer {
            blocks: self
                .blocks
                .iter()
                .map(|b| Block {
                    attention: Attention {
                        k: b.attention.k.astype(dtype),
                        o: b.attention.o.astype(dtype),
                        q: b.attention.q.astype(dtype),
                        v: b.attention.v.astype(dtype),
                    },
                    attention_norm: norm(&b.attention_norm),
                    mlp: Mlp {
                        down: b.mlp.down.astype(dtype),
                        gate: b.mlp.gate.as_ref().map(|g| g.astype(dtype)),
                        up: b.mlp.up.astype(dtype),
                    },
                    mlp_norm: norm(&b.mlp_norm),
                })
                .collect(),
            config: self.config.clone(),
            embedding: self.embedding.astype(dtype),
            final_norm: norm(&self.final_norm),
            lm_head: self.lm_head.as_ref().map(|h| h.astype(dtype)),
            positions: self.positions.as_ref().map(|p| p.astype(dtype)),
            rope_inverse_frequencies: self.rope_inverse_frequencies.clone(),
        }
    }

    /// The model with every projection's weight quantized to int8 per output channel
    /// ([`Dense::quantize_int8`]); embeddings and norms keep their dtype. A tied output
    /// projection is untied into a quantized copy of the embedding, so the lookup stays exact.
    pub fn quantize_int8(&self) -> Transformer {
        let mut q = self.clone();
        for b in &mut q.blocks {
            for d in [
                &mut b.attention.k,
                &mut b.attention.o,
                &mut b.attention.q,
                &mut b.attention.v,
                &mut b.mlp.down,
                &mut b.mlp.up,
            ] {
                *d = d.quantize_int8();
            }
            if let Some(g) = &mut b.mlp.gate {
                *g = g.quantize_int8();
            }
        }
        q.lm_head = Some(match &self.lm_head {
            Some(h) => h.quantize_int8(),
            None => Dense::new(self.embedding.clone(), None).quantize_int8(),
        });
        q.config.tie_word_embeddings = false;
        q
    }

    /// Token (and, for GPT-2, position) embeddings of `tokens` `[B, T]` at `positions`.
    fn embed(&self, tokens: &Array, positions: &Array) -> Array {
        let x = self.embedding.take(tokens, 0);
        match &self.positions {
            Some(table) => x + table.take(positions, 0),
            None => x,
        }
    }

    /// The rotary embedding's cosines and sines at `positions` `[B, T]`, each `[B, T, 1,
    /// head_dim]` in float32, or `None` for a model without rotary embeddings. Computed once
    /// per forward, behind an `optimization_barrier`, and read by every layer's queries and
    /// keys: otherwise XLA fuses the `sin` and `cos` into each layer's rotation and evaluates
    /// them once per head (3 million `sincosf` calls in a 12-layer Llama prefill of 128
    /// tokens, found in the optimized HLO and `perf`).
    fn rotary(&self, positions: &Array) -> Option<(Array, Array)> {
        let inv_freq = self.rope_inverse_frequencies.as_ref()?;
        // transformers: freqs = positions (float32) outer inv_freq, cos/sin in float32, then
        // cast to the activations' dtype (in `qkv`).
        let freqs = positions.astype(DType::F32).expand_dims(-1) * inv_freq;
        let angles = Array::concatenate(&[freqs.clone(), freqs], -1).expand_dims(2);
        Some(lax::optimization_barrier((angles.cos(), angles.sin())))
    }

    /// Queries, keys and values of `h` `[B, T, hidden]`, rotated by `rotary` (from
    /// [`Transformer::rotary`]): `[B, T, heads, head_dim]` and twice `[B, T, kv_heads,
    /// head_dim]`.
    fn qkv(
        &self,
        block: &Block,
        h: &Array,
        rotary: Option<&(Array, Array)>,
    ) -> (Array, Array, Array) {
        let c = &self.config;
        let (b, t) = (h.shape()[0], h.shape()[1]);
        let q = block
            .attention
            .q
            .apply(h)
            .reshape([b, t, c.num_heads, c.head_dim]);
        let k = block
            .attention
            .k
            .apply(h)
            .reshape([b, t, c.num_kv_heads, c.head_dim]);
        let v = block
            .attention
            .v
            .apply(h)
            .reshape([b, t, c.num_kv_heads, c.head_dim]);
        match rotary {
            Some((cos, sin)) => {
                let (cos, sin) = (cos.astype(q.dtype()), sin.astype(q.dtype()));
                let rotate = |x: &Array| x * &cos + rotate_half(x) * &sin;
                (rotate(&q), rotate(&k), v)
            }
            None => (q, k, v),
        }
    }

    /// Grouped-query attention of `q` `[B, T, heads, D]` over keys `k` `[B, kv_heads, D, S]`
    /// and values `v` `[B, kv_heads, S, D]` (the cache's layouts) where `mask` `[B, T, S]` is
    /// true; `[B, T, heads * D]`.
    fn attend(&self, q: &Array, k: &Array, v: &Array, mask: &Array) -> Array {
        let c = &self.config;
        let (b, t) = (q.shape()[0], q.shape()[1]);
        let s = k.shape()[3];
        let groups = c.num_heads / c.num_kv_heads;
        // Query head h reads key/value head h / groups, as transformers' repeat_kv.
        let q = q.reshape([b, t, c.num_kv_heads, groups, c.head_dim]);
        let scores = q.dot_general(
            k,
            &DotDims {
                lhs_contract: vec![4],
                rhs_contract: vec![2],
                lhs_batch: vec![0, 2],
                rhs_batch: vec![0, 1],
            },
        ); // [B, KV, T, G, S]
        let scores = scores.astype(DType::F32) * (1.0 / (c.head_dim as f64).sqrt()) as f32;
        let mask = mask.reshape([b, 1, t, 1, s]);
        let scores = where_(&mask, &scores, Array::scalar(f32::MIN));
        let probs = scores.softmax(-1).astype(v.dtype());
        let out = probs.dot_general(
            v,
            &DotDims {
                lhs_contract: vec![4],
                rhs_contract: vec![2],
                lhs_batch: vec![0, 1],
                rhs_batch: vec![0, 1],
            },
        ); // [B, KV, T, G, D]
        out.transpose([0, 2, 1, 3, 4])
            .reshape([b, t, c.num_heads * c.head_dim])
    }

    fn mlp(&self, block: &Block, h: &Array) -> Array {
        let act = &self.config.activation;
        let hidden = match &block.mlp.gate {
            Some(gate) => activate(&gate.apply(h), act) * block.mlp.up.apply(h),
            None => activate(&block.mlp.up.apply(h), act),
        };
        block.mlp.down.apply(&hidden)
    }

    /// Float32 logits of the final hidden states.
    fn logits(&self, x: &Array) -> Array {
        let h = self.final_norm.apply(x, &self.config);
        let logits = match &self.lm_head {
            Some(head) => head.apply(&h),
            None => h.dot_general(
                &self.embedding,
                &DotDims {
                    lhs_contract: vec![h.rank() - 1],
                    rhs_contract: vec![1],
                    ..DotDims::default()
                },
            ),
        };
        logits.astype(DType::F32)
    }

    /// Whether key position `key_pos` is visible from query position `query_pos` (causal,
    /// and within the sliding window if the model has one).
    fn visible(&self, query_pos: &Array, key_pos: &Array) -> Array {
        let causal = key_pos.le(query_pos);
        match self.config.sliding_window {
            0 => causal,
            w => causal.logical_and((query_pos - key_pos).lt(w as i32)),
        }
    }

    /// Runs `tokens` `[B, T]` (int32) from position 0, each row causally: float32 logits
    /// `[B, T, vocab]`, and each layer's keys and values `[B, T, kv_heads, head_dim]` to seed a
    /// cache. Rows of different lengths are right-padded: a row's logits at its positions
    /// before the padding do not depend on the padding.
    #[track_caller]
    pub fn prefill(&self, tokens: &Array) -> (Array, Vec<(Array, Array)>) {
        let (x, kvs) = self.prefill_hidden(tokens, None);
        (self.logits(&x), kvs)
    }

    /// [`Transformer::prefill`] with the logits of each row's last real token only: `lengths`
    /// `[B]` (int32) real tokens per row; float32 logits `[B, vocab]`. Nothing reads the last
    /// layer's outputs at the other positions (the cache keeps only its keys and values), so
    /// that layer's attention, output projection and MLP run on one position per row, and so
    /// does the output projection (for GPT-2 small and a 128-token prompt, the head would
    /// otherwise be 45% of the prefill's flops, and the last layer's rest 6%).
    #[track_caller]
    pub fn prefill_last(&self, tokens: &Array, lengths: &Array) -> (Array, Vec<(Array, Array)>) {
        let b = tokens.shape()[0];
        let (x, kvs) = self.prefill_hidden(tokens, Some(lengths));
        let logits = self.logits(&x).reshape([b, self.config.vocab_size]);
        (logits, kvs)
    }

    /// The final hidden states (before the final norm) and each layer's keys and values:
    /// `[B, T, hidden]`, or `[B, 1, hidden]` at each row's last real token when `lengths` is
    /// given (the last layer then computes only those rows past its keys and values).
    #[track_caller]
    fn prefill_hidden(
        &self,
        tokens: &Array,
        lengths: Option<&Array>,
    ) -> (Array, Vec<(Array, Array)>) {
        let (b, t) = (tokens.shape()[0], tokens.shape()[1]);
        let positions = lax::broadcasted_iota(DType::I32, &[b, t], 1);
        let query_pos = lax::broadcasted_iota(DType::I32, &[b, t, t], 1);
        let key_pos = lax::broadcasted_iota(DType::I32, &[b, t, t], 2);
        let mask = self.visible(&query_pos, &key_pos);
        let mut x = self.embed(tokens, &positions);
        let rotary = self.rotary(&positions);
        let mut kvs = Vec::with_capacity(self.blocks.len());
        let last_block = self.blocks.len().saturating_sub(1);
        for (i, block) in self.blocks.iter().enumerate() {
            let h = block.attention_norm.apply(&x, &self.config);
            let (mut q, k, v) = self.qkv(block, &h, rotary.as_ref());
            let (k_cache, v_cache) = (cache_keys(&k), cache_values(&v));
            let mut mask = mask.clone();
            if let (Some(lengths), true) = (lengths, i == last_block) {
                let last = (lengths - 1).reshape([b, 1]);
                let at_last = |a: &Array| {
                    let mut index_shape = a.shape().to_vec();
                    index_shape[1] = 1;
                    let mut index = vec![b, 1];
                    index.resize(a.rank(), 1);
                    a.take_along_axis(&last.reshape(index).broadcast_to(&index_shape), 1)
                };
                q = at_last(&q);
                x = at_last(&x);
                mask = self.visible(
                    &last.reshape([b, 1, 1]),
                    &lax::broadcasted_iota(DType::I32, &[b, 1, t], 2),
                );
            }
            x = x + block
                .attention
                .o
                .apply(&self.attend(&q, &k_cache, &v_cache, &mask));
            x = &x + self.mlp(block, &block.mlp_norm.apply(&x, &self.config));
            kvs.push((k, v));
        }
        (x, kvs)
    }

    /// One token per cache slot: `tokens` `[slots]` (int32) at `positions` `[slots]`, each
    /// written into the cache at its position and attending to the slot's earlier positions.
    /// Returns float32 logits `[slots, vocab]` and the updated cache.
    #[track_caller]
    pub fn decode(&self, tokens: &Array, positions: &Array, cache: KvCache) -> (Array, KvCache) {
        let slots = tokens.shape()[0];
        let capacity = cache.capacity();
        let positions = positions.reshape([slots, 1]);
        let key_pos = lax::broadcasted_iota(DType::I32, &[slots, 1, capacity], 2);
        let mask = self.visible(&positions.expand_dims(-1), &key_pos);
        // Each slot writes its one new row in place with a `dynamic_update_slice` (a select
        // over the whole cache would read and write all of it every step: at 8 slots of 256
        // positions, more bytes than the model's weights). A position must be below the
        // capacity (the update's start would be clamped). `new` is `[slots, ...]` in the cache's layout, whose position axis is `axis`.
        let write = |cache: Array, new: &Array, axis: usize| -> Array {
            (0..slots).fold(cache, |cache, r| {
                let mut limits = new.shape().to_vec();
                limits[0] = r + 1;
                let row = new.slice(&[r, 0, 0, 0], &limits, &[1, 1, 1, 1]);
                let position = positions
                    .slice(&[r, 0], &[r + 1, 1], &[1, 1])
                    .reshape([0usize; 0]);
                let mut starts = vec![Array::scalar(0i32); 4];
                starts[0] = Array::scalar(r as i32);
                starts[axis] = position;
                cache.dynamic_update_slice(&row, &starts)
            })
        };
        let mut x = self.embed(&tokens.reshape([slots, 1]), &positions);
        let rotary = self.rotary(&positions);
        let KvCache { keys, values } = cache;
        let mut new_keys = Vec::with_capacity(keys.len());
        let mut new_values = Vec::with_capacity(values.len());
        for ((block, cached_k), cached_v) in self.blocks.iter().zip(keys).zip(values) {
            let h = block.attention_norm.apply(&x, &self.config);
            let (q, k, v) = self.qkv(block, &h, rotary.as_ref());
            let cached_k = write(cached_k, &cache_keys(&k), 3);
            let cached_v = write(cached_v, &cache_values(&v), 2);
            // Without the barrier XLA fuses the last slot's update into attention's read of
            // the cache as well as into the returned cache, and then copies every layer's
            // whole cache twice per step to keep the two apart (at 8 slots of GPT-2 in bf16,
            // 150 MB a step; seen in the optimized HLO): behind it the updates run in place.
            let (cached_k, cached_v) = lax::optimization_barrier((cached_k, cached_v));
            x = x + block
                .attention
                .o
                .apply(&self.attend(&q, &cached_k, &cached_v, &mask));
            x = &x + self.mlp(block, &block.mlp_norm.apply(&x, &self.config));
            new_keys.push(cached_k);
            new_values.push(cached_v);
        }
        let logits = self.logits(&x).reshape([slots, self.config.vocab_size]);
        (
            logits,
            KvCache {
                keys: new_keys,
                values: new_values,
            },
        )
    }
}
