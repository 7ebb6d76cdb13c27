//! Generation with a KV cache: a jitted prefill and a jitted decode step over a donated cache
//! of fixed capacity, sampling in the same programs, and an [`Engine`] that keeps many
//! sequences in the cache's slots at once (continuous batching: a new sequence joins the
//! decode batch as soon as a slot is free).
//!
//! Prompts are padded to a length bucket (16, 32, 64, ... up to the capacity), so a prompt of
//! a new length compiles nothing new when its bucket has been seen: the prefill's cache key is
//! the bucket's shape. The decode step has one shape, `[slots]`, whatever the sequences'
//! lengths; a slot's position and mask come in as arrays.
//!
//! ```no_run
//! use jaxrs_models::generate::{generate, Engine, EngineConfig, GenerateOptions, SamplingParams};
//! use jaxrs_models::Transformer;
//!
//! let model = Transformer::from_pretrained("jaxrs-models/assets/shakespeare-gpt2", None)?;
//! let mut engine = Engine::new(model, EngineConfig { slots: 4, capacity: 256 })?;
//! let options = GenerateOptions { max_new_tokens: 32, sampling: SamplingParams::greedy(), stop_tokens: vec![] };
//! let outputs = generate(&mut engine, &[vec![1, 2, 3], vec![4, 5]], &options)?;
//! assert_eq!(outputs.len(), 2);
//! # Ok::<(), jaxrs_models::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::transformer::{KvCache, Transformer};
use jaxrs::prelude::*;
use jaxrs::{jit, lax, random, try_run, vmap};

/// How a token is drawn from the logits, as `transformers`' `generate` applies its warpers:
/// temperature, then top-k, then top-p (nucleus), then a draw with `jaxrs::random`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplingParams {
    /// Divides the logits; 0 takes the most likely token (greedy).
    pub temperature: f32,
    /// Keeps the `top_k` most likely tokens; 0 keeps all.
    pub top_k: usize,
    /// Keeps the smallest set of most likely tokens whose probability reaches `top_p`; 1 keeps
    /// all.
    pub top_p: f32,
    /// Seeds the sequence's draws: a sequence's tokens depend only on its seed, its prompt and
    /// its settings, not on what else is in the batch.
    pub seed: u64,
}

impl SamplingParams {
    /// The most likely token at each step.
    pub fn greedy() -> SamplingParams {
        SamplingParams {
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
            seed: 0,
        }
    }

    fn validate(&self) -> Result<()> {
        if !(self.temperature >= 0.0 && self.temperature.is_finite()) {
            return Err(Error::Invalid(format!(
                "temperature must be finite and >= 0, found {}",
                self.temperature
            )));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return Err(Error::Invalid(format!(
                "top_p must be in (0, 1], found {}",
                self.top_p
            )));
        }
        Ok(())
    }
}

impl Default for SamplingParams {
    fn default() -> Self {
        SamplingParams::greedy()
    }
}

/// The size of an [`Engine`]'s cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Sequences held at once (the decode step's batch).
    pub slots: usize,
    /// Positions per sequence: prompt and generated tokens together.
    pub capacity: usize,
}

/// Which slot of an [`Engine`] a sequence occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlotId(pub usize);

/// A sequence in a slot.
#[derive(Clone, Debug)]
struct Sequence {
    /// Tokens in the cache; the next token is written here.
    position: usize,
    /// The last token drawn, the next step's input.
    last_token: u32,
    sampling: SamplingParams,
    /// `random::key(seed)`'s two words; each step folds the position in.
    key: [u32; 2],
}

/// Per-row sampling settings as arrays, in the order the jitted functions take them.
struct SamplingArrays {
    keys: Array,
    temperature: Array,
    top_k: Array,
    top_p: Array,
}

impl SamplingArrays {
    fn new(rows: &[(SamplingParams, [u32; 2])]) -> SamplingArrays {
        let n = rows.len();
        SamplingArrays {
            keys: Array::from_vec(
                rows.iter().flat_map(|(_, k)| *k).collect::<Vec<u32>>(),
                &[n, 2],
            ),
            temperature: Array::from_vec(
                rows.iter()
                    .map(|(s, _)| s.temperature)
                    .collect::<Vec<f32>>(),
                &[n],
            ),
            top_k: Array::from_vec(
                rows.iter()
                    .map(|(s, _)| s.top_k.min(i32::MAX as usize) as i32)
                    .collect::<Vec<i32>>(),
                &[n],
            ),
            top_p: Array::from_vec(
                rows.iter().map(|(s, _)| s.top_p).collect::<Vec<f32>>(),
                &[n],
            ),
        }
    }
}

/// The two words of `random::key(seed)` (threefry's raw key: the seed's high and low halves).
fn key_words(seed: u64) -> [u32; 2] {
    [(seed >> 32) as u32, seed as u32]
}

/// Draws one token per row of `logits` `[rows, vocab]` (float32): greedy where the row's
/// temperature is 0, else temperature, top-k and top-p warping and a categorical draw with the
/// row's key folded with `step` `[rows]`.
///
/// When every row is greedy, a `cond` skips the warping: its sort of the whole vocabulary and
/// one categorical draw per row cost more than the rest of a batched decode step.
#[track_caller]
pub fn sample(
    logits: &Array,
    keys: &Array,
    step: &Array,
    temperature: &Array,
    top_k: &Array,
    top_p: &Array,
) -> Array {
    let any_random = temperature.max(0, false).gt(0.0f32);
    let operands = vec![
        logits.clone(),
        keys.clone(),
        step.clone(),
        temperature.clone(),
        top_k.clone(),
        top_p.clone(),
    ];
    cond(
        &any_random,
        |o: Vec<Array>| sample_warped(&o[0], &o[1], &o[2], &o[3], &o[4], &o[5]),
        |o: Vec<Array>| o[0].argmax(-1, false).astype(DType::I32),
        operands,
    )
}

/// [`sample`] with the warping and the draws computed whatever the temperatures.
#[track_caller]
fn sample_warped(
    logits: &Array,
    keys: &Array,
    step: &Array,
    temperature: &Array,
    top_k: &Array,
    top_p: &Array,
) -> Array {
    let (rows, vocab) = (logits.shape()[0], logits.shape()[1]);
    let greedy = logits.argmax(-1, false).astype(DType::I32);
    let temp = temperature.reshape([rows, 1]);
    let scaled = logits / where_(temp.gt(0.0f32), &temp, Array::scalar(1.0f32));
    // Warping works on the logits sorted in descending order.
    let sorted = -(-&scaled).sort(-1);
    let rank = lax::broadcasted_iota(DType::I32, &[rows, vocab], 1);
    let k = top_k.reshape([rows, 1]);
    let in_top_k = k.eq(0).logical_or(rank.lt(&k));
    let neg_inf = Array::scalar(f32::NEG_INFINITY);
    let sorted = where_(&in_top_k, &sorted, &neg_inf);
    // Nucleus: keep a token while the mass before it is under top_p (the first always).
    let probs = sorted.softmax(-1);
    let before = probs.cumsum(-1) - &probs;
    let keep = before
        .lt(top_p.reshape([rows, 1]))
        .logical_and(sorted.gt(f32::NEG_INFINITY));
    let threshold = where_(&keep, &sorted, Array::scalar(f32::INFINITY)).min(-1, true);
    let warped = where_(scaled.ge(&threshold), &scaled, &neg_inf);
    // One categorical draw per row with the row's key folded with its step, vmapped so the
    // program's size does not grow with the rows.
    let draw = vmap(
        |(key, step, row): (Array, Array, Array)| {
            random::categorical(&random::fold_in(&key, step.astype(DType::U32)), &row, -1)
        },
        (0, 0, 0),
        0,
    );
    let drawn = draw((keys.clone(), step.clone(), warped)).astype(DType::I32);
    where_(temperature.gt(0.0f32), &drawn, &greedy)
}

/// Prefills `tokens` `[rows, bucket]` (right-padded; `lengths` `[rows]` real tokens each)
/// into the cache's rows `slots` `[rows]` and draws each row's first token.
#[jit(donate = cache)]
#[allow(clippy::too_many_arguments)]
fn prefill_step(
    model: &Transformer,
    cache: KvCache,
    tokens: &Array,
    lengths: &Array,
    slots: &Array,
    keys: &Array,
    temperature: &Array,
    top_k: &Array,
    top_p: &Array,
) -> (KvCache, Array) {
    let rows = tokens.shape()[0];
    // The logits at each row's last real token.
    let (last_logits, kvs) = model.prefill_last(tokens, lengths);
    let KvCache {
        keys: mut cache_keys,
        values: mut cache_values,
    } = cache;
    for (layer, (k, v)) in kvs.iter().enumerate() {
        for r in 0..rows {
            let slot = slots.slice(&[r], &[r + 1], &[1]).reshape([0usize; 0]);
            let zero = Array::scalar(0i32);
            let starts = [slot, zero.clone(), zero.clone(), zero];
            // The row in the cache's layouts ([1, kv_heads, D, T] keys, [1, kv_heads, T, D]
            // values).
            let row = |x: &Array| {
                x.slice(
                    &[r, 0, 0, 0],
                    &[r + 1, x.shape()[1], x.shape()[2], x.shape()[3]],
                    &[1, 1, 1, 1],
                )
            };
            let (k, v) = (
                crate::transformer::cache_keys(&row(k)),
                crate::transformer::cache_values(&row(v)),
            );
            cache_keys[layer] = cache_keys[layer].dynamic_update_slice(&k, &starts);
            cache_values[layer] = cache_values[layer].dynamic_update_slice(&v, &starts);
        }
    }
    let first = sample(&last_logits, keys, lengths, temperature, top_k, top_p);
    (
        KvCache {
            keys: cache_keys,
            values: cache_values,
        },
        first,
    )
}

/// One decode step of every slot: `tokens` at `positions` (both `[slots]`), each slot's next
/// token drawn.
#[jit(donate = cache)]
#[allow(clippy::too_many_arguments)]
fn decode_step(
    model: &Transformer,
    cache: KvCache,
    tokens: &Array,
    positions: &Array,
    keys: &Array,
    temperature: &Array,
    top_k: &Array,
    top_p: &Array,
) -> (KvCache, Array) {
    let (logits, cache) = model.decode(tokens, positions, cache);
    let next = sample(&logits, keys, &(positions + 1), temperature, top_k, top_p);
    (cache, next)
}

/// The prompt-length buckets of a cache of `capacity`: 16, 32, 64, ... and `capacity` itself.
pub fn prompt_buckets(capacity: usize) -> Vec<usize> {
    let mut buckets: Vec<usize> = std::iter::successors(Some(16usize), |b| b.checked_mul(2))
        .take_while(|&b| b < capacity)
        .collect();
    buckets.push(capacity);
    buckets
}

/// Sequences generated side by side over one model and one KV cache of `slots` sequences of
/// `capacity` positions: continuous batching's engine.
///
/// [`Engine::insert`] prefills a prompt into a free slot and draws its first token;
/// [`Engine::step`] advances every occupied slot by one token in one jitted call;
/// [`Engine::release`] frees a slot. The engine is not thread-safe: drive it from one thread.
pub struct Engine {
    model: Transformer,
    /// `None` only while a jitted call holds it (it is donated).
    cache: Option<KvCache>,
    config: EngineConfig,
    buckets: Vec<usize>,
    sequences: Vec<Option<Sequence>>,
}

impl Engine {
    /// An engine over `model` with a zeroed cache. The capacity must fit the model's positions.
    pub fn new(model: Transformer, config: EngineConfig) -> Result<Engine> {
        if config.slots == 0 || config.capacity < 2 {
            return Err(Error::Invalid(format!(
                "an engine needs at least 1 slot and 2 positions, given {config:?}"
            )));
        }
        if config.capacity > model.max_positions() {
            return Err(Error::Invalid(format!(
                "a capacity of {} positions exceeds the model's {}",
                config.capacity,
                model.max_positions()
            )));
        }
        let cache = KvCache::new(&model, config.slots, config.capacity);
        Ok(Engine {
            model,
            cache: Some(cache),
            config,
            buckets: prompt_buckets(config.capacity),
            sequences: vec![None; config.slots],
        })
    }

    /// The model.
    pub fn model(&self) -> &Transformer {
        &self.model
    }

    /// Sequences held at once.
    pub fn slots(&self) -> usize {
        self.config.slots
    }

    /// Positions per sequence.
    pub fn capacity(&self) -> usize {
        self.config.capacity
    }

    /// Slots holding no sequence.
    pub fn free_slots(&self) -> usize {
        self.sequences.iter().filter(|s| s.is_none()).count()
    }

    /// Tokens held in `slot`'s cache (prompt and generated so far); 0 for a free slot.
    pub fn position(&self, slot: SlotId) -> usize {
        self.sequences
            .get(slot.0)
            .and_then(Option::as_ref)
            .map_or(0, |s| s.position)
    }

    /// The prompt-length buckets: a prompt is padded to the first that holds it.
    pub fn buckets(&self) -> &[usize] {
        &self.buckets
    }

    fn check_prompt(&self, prompt: &[u32]) -> Result<()> {
        if prompt.is_empty() || prompt.len() >= self.config.capacity {
            return Err(Error::PromptLength {
                len: prompt.len(),
                capacity: self.config.capacity,
            });
        }
        let vocab_size = self.model.vocab_size();
        if let Some(&id) = prompt.iter().find(|&&id| id as usize >= vocab_size) {
            return Err(Error::TokenId { id, vocab_size });
        }
        Ok(())
    }

    /// Prefills `prompt` into a free slot and draws its first token.
    pub fn insert(&mut self, prompt: &[u32], sampling: SamplingParams) -> Result<(SlotId, u32)> {
        Ok(self.insert_many(&[(prompt, sampling)])?[0])
    }

    /// Prefills several prompts at once, padded to the bucket of the longest, each into its own
    /// free slot; their first tokens, in order.
    pub fn insert_many(
        &mut self,
        prompts: &[(&[u32], SamplingParams)],
    ) -> Result<Vec<(SlotId, u32)>> {
        if prompts.is_empty() {
            return Ok(Vec::new());
        }
        for (prompt, sampling) in prompts {
            self.check_prompt(prompt)?;
            sampling.validate()?;
        }
        let free: Vec<usize> = (0..self.config.slots)
            .filter(|&i| self.sequences[i].is_none())
            .take(prompts.len())
            .collect();
        if free.len() < prompts.len() {
            return Err(Error::NoFreeSlot {
                slots: self.config.slots,
            });
        }
        let longest = prompts.iter().map(|(p, _)| p.len()).max().unwrap_or(1);
        let bucket = *self
            .buckets
            .iter()
            .find(|&&b| b >= longest)
            .expect("the last bucket is the capacity");
        let rows = prompts.len();
        let mut tokens = vec![0i32; rows * bucket];
        for (r, (prompt, _)) in prompts.iter().enumerate() {
            for (t, &id) in prompt.iter().enumerate() {
                tokens[r * bucket + t] = id as i32;
            }
        }
        let lengths: Vec<i32> = prompts.iter().map(|(p, _)| p.len() as i32).collect();
        let slots: Vec<i32> = free.iter().map(|&s| s as i32).collect();
        let rows_sampling: Vec<_> = prompts
            .iter()
            .map(|(_, s)| (*s, key_words(s.seed)))
            .collect();
        let s = SamplingArrays::new(&rows_sampling);
        let cache = self
            .cache
            .take()
            .expect("the cache is back after every call");
        let (cache, first) = try_run(|| {
            prefill_step(
                &self.model,
                cache,
                &Array::from_vec(tokens, &[rows, bucket]),
                &Array::from_vec(lengths, &[rows]),
                &Array::from_vec(slots, &[rows]),
                &s.keys,
                &s.temperature,
                &s.top_k,
                &s.top_p,
            )
        })?;
        self.cache = Some(cache);
        let first = first.try_to_vec::<i32>()?;
        let mut out = Vec::with_capacity(rows);
        for ((&slot, (prompt, sampling)), &token) in free.iter().zip(prompts).zip(&first) {
            self.sequences[slot] = Some(Sequence {
                position: prompt.len(),
                last_token: token as u32,
                sampling: *sampling,
                key: key_words(sampling.seed),
            });
            out.push((SlotId(slot), token as u32));
        }
        Ok(out)
    }

    /// One decode step: every occupied slot with room in its cache takes its last token and
    /// draws the next, all in one jitted call. Returns `(slot, token)` for each; a slot whose
    /// cache is full draws nothing (release it).
    pub fn step(&mut self) -> Result<Vec<(SlotId, u32)>> {
        let capacity = self.config.capacity;
        let active: Vec<usize> = (0..self.config.slots)
            .filter(|&i| {
                self.sequences[i]
                    .as_ref()
                    .is_some_and(|s| s.position < capacity)
            })
            .collect();
        if active.is_empty() {
            return Ok(Vec::new());
        }
        let n = self.config.slots;
        let mut tokens = vec![0i32; n];
        let mut positions = vec![0i32; n];
        let mut rows = vec![(SamplingParams::greedy(), [0u32; 2]); n];
        for &i in &active {
            let s = self.sequences[i].as_ref().expect("active");
            tokens[i] = s.last_token as i32;
            positions[i] = s.position as i32;
            rows[i] = (s.sampling, s.key);
        }
        let s = SamplingArrays::new(&rows);
        let cache = self
            .cache
            .take()
            .expect("the cache is back after every call");
        let (cache, next) = try_run(|| {
            decode_step(
                &self.model,
                cache,
                &Array::from_vec(tokens, &[n]),
                &Array::from_vec(positions, &[n]),
                &s.keys,
                &s.temperature,
                &s.top_k,
                &s.top_p,
            )
        })?;
        self.cache = Some(cache);
        let next = next.try_to_vec::<i32>()?;
        Ok(active
            .into_iter()
            .map(|i| {
                let s = self.sequences[i].as_mut().expect("active");
                s.position += 1;
                s.last_token = next[i] as u32;
                (SlotId(i), s.last_token)
            })
            .collect())
    }

    /// Frees `slot` (a free slot stays free).
    pub fn release(&mut self, slot: SlotId) {
        if let Some(s) = self.sequences.get_mut(slot.0) {
            *s = None;
        }
    }

    /// How many programs the prefill and the decode step have compiled (the prefill once per
    /// bucket and batch size, the decode step once).
    pub fn compiles() -> (u64, u64) {
        (
            prefill_step::jit_site().cache_misses(),
            decode_step::jit_site().cache_misses(),
        )
    }
}

/// What [`generate`] produces per prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct GenerateOptions {
    /// Tokens to generate at most per prompt (fewer if a stop token comes or the cache fills).
    pub max_new_tokens: usize,
    /// How tokens are drawn (each prompt's seed is `sampling.seed + its index`).
    pub sampling: SamplingParams,
    /// A sequence ends after drawing one of these (it is kept in the output).
    pub stop_tokens: Vec<u32>,
}

/// Generates a continuation of each prompt, side by side in `engine`'s slots (prompts beyond
/// the free slots wait for a slot to free up): the new tokens of each, in order.
pub fn generate(
    engine: &mut Engine,
    prompts: &[Vec<u32>],
    options: &GenerateOptions,
) -> Result<Vec<Vec<u32>>> {
    let mut outputs = vec![Vec::new(); prompts.len()];
    if options.max_new_tokens == 0 {
        return Ok(outputs);
    }
    let sampling = |i: usize| SamplingParams {
        seed: options.sampling.seed.wrapping_add(i as u64),
        ..options.sampling
    };
    let mut waiting = 0..prompts.len();
    let mut running: Vec<(SlotId, usize)> = Vec::new();
    let finished = |out: &Vec<u32>, engine: &Engine, slot: SlotId| {
        out.len() >= options.max_new_tokens
            || out.last().is_some_and(|t| options.stop_tokens.contains(t))
            || engine.position(slot) >= engine.capacity()
    };
    loop {
        // Fill free slots with waiting prompts, in one prefill.
        let take = engine.free_slots().min(waiting.len());
        if take > 0 {
            let batch: Vec<usize> = waiting.by_ref().take(take).collect();
            let requests: Vec<(&[u32], SamplingParams)> = batch
                .iter()
                .map(|&i| (prompts[i].as_slice(), sampling(i)))
                .collect();
            for ((slot, token), &i) in engine.insert_many(&requests)?.into_iter().zip(&batch) {
                outputs[i].push(token);
                if finished(&outputs[i], engine, slot) {
                    engine.release(slot);
                } else {
                    running.push((slot, i));
                }
            }
        }
        if running.is_empty() {
            if waiting.is_empty() {
                return Ok(outputs);
            }
            continue;
        }
        let drawn = engine.step()?;
        for (slot, token) in drawn {
            if let Some(&(_, i)) = running.iter().find(|(s, _)| *s == slot) {
                outputs[i].push(token);
            }
        }
        running.retain(|&(slot, i)| {
            let done = finished(&outputs[i], engine, slot);
            if done {
                engine.release(slot);
            }
            !done
        });
    }
}
