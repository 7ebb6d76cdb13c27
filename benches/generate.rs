//! Generation speed: prefill time of a 128-token prompt and decode tokens/s at batch 1 and
//! batch 8, for a GPT-2-small-sized and a Llama-shaped model in f32, bf16 and int8
//! (int8 kernels with per-output-channel scales, activation rows quantized on the fly, int8 x
//! int8 -> int32 products, as `Dense` does it), for jaxrs's
//! [`jaxrs_models::generate::Engine`] beside a JAX twin (`benches/peer/generate_jax.py`: the same
//! architecture in JAX, jitted prefill and a jitted decode step over a donated KV cache of the
//! same capacity) and `transformers`' `generate` (`benches/peer/generate_hf.py`, greedy, on
//! CPU with `torch.set_num_threads` set to this machine's cores, as XLA's CPU client uses), all
//! in the same run over the same weights. Each row runs jaxrs, then the JAX twin, then
//! `transformers` (each peer a fresh Python process for that row), so that the three share the
//! load of a shared machine.
//!
//! The models are random-initialised and written by this bench as Hugging Face folders
//! (`config.json` + `model.safetensors`, f32) under `target/bench-models/`, so the jaxrs rows
//! need no Python; the peers load the same folders. The JAX twin's greedy tokens are checked
//! against jaxrs's, so the two run the same computation.
//!
//! Run: `JAXRS_BENCH_PYTHON=/work/venv/bin/python cargo bench --bench generate` (a Python with
//! jax==0.10.2, torch and transformers; without one the peers' columns are empty). A filter
//! argument picks rows by name (e.g. `cargo bench --bench generate -- llama_bf16`);
//! `JAXRS_GENERATE_STEPS` sets the decode steps timed (default 12), and
//! `JAXRS_GENERATE_PREFILL_ROUNDS` the prefills timed, of which each side keeps its best (default
//! 3).
//!
//! Prefill is the time of one 128-token prompt into an empty slot, to its first token (best of
//! the rounds). Decode is steady-state tokens/s (after the compile and a warm-up step): one sequence
//! (batch 1), or eight at once (batch 8, tokens of all rows counted). `transformers`' prefill is
//! its first-token time (`generate` with one new token) and its decode rate is
//! `(n - 1) / (time(n tokens) - time(1 token))`.
//!
//! Figures (2 cores of an Intel Xeon with AMX-BF16/INT8, load average about 1.5, 12 steps, 5
//! minutes; the README's "Generation speed" says more), jaxrs / JAX twin / transformers:
//!
//! ```text
//! row          prefill ms         tok/s batch 1        tok/s batch 8
//! gpt2_f32     143 / 225 / 186    37.1 / 29.4 / 35.4   138.7 /  76.9 / 111.8
//! gpt2_bf16     73 /  86 /  80    57.6 /  8.4 / 37.3   232.7 /  60.3 / 184.2
//! gpt2_int8     43 /  99 / -      70.6 /  5.5 / -      303.6 / 115.8 / -
//! llama_f32    100 / 154 / 151    50.3 / 38.1 / 28.6   207.5 / 125.8 / 109.6
//! llama_bf16    69 / 120 /  65    65.0 /  6.6 / 45.0   390.5 / 120.5 / 202.8
//! llama_int8    51 /  82 / -      91.6 /  6.9 / -      436.7 / 293.4 / -
//! ```
//!
//! bf16 is 1.3-1.9x f32's tokens/s (the README says how: weights kept `[out, in]`, few-row
//! bf16 products with the weight on the left, the cache updated behind a barrier).

#[path = "common/peer.rs"]
mod peer;

use jaxrs::prelude::*;
use jaxrs_models::generate::{Engine, EngineConfig, SamplingParams};
use jaxrs_models::Transformer;
use safetensors::{Dtype, View};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Prompt tokens (one bucket: the prefill pads nothing).
const PROMPT: usize = 128;
/// Cache positions per sequence, in jaxrs and the JAX twin alike.
const CAPACITY: usize = 256;
/// Sequences in the batched decode.
const BATCH: usize = 8;
const DTYPES: [&str; 3] = ["f32", "bf16", "int8"];

/// A model the bench writes: its family and `config.json`.
struct Spec {
    name: &'static str,
    config: &'static str,
    vocab: usize,
}

const MODELS: [Spec; 2] = [
    Spec {
        name: "gpt2",
        config: r#"{
  "architectures": ["GPT2LMHeadModel"],
  "model_type": "gpt2",
  "vocab_size": 50257,
  "n_embd": 768,
  "n_layer": 12,
  "n_head": 12,
  "n_positions": 1024,
  "activation_function": "gelu_new",
  "layer_norm_epsilon": 1e-05,
  "tie_word_embeddings": true,
  "bos_token_id": 50256,
  "eos_token_id": 50256,
  "torch_dtype": "float32"
}"#,
        vocab: 50257,
    },
    Spec {
        name: "llama",
        config: r#"{
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "vocab_size": 32000,
  "hidden_size": 768,
  "num_hidden_layers": 12,
  "num_attention_heads": 12,
  "num_key_value_heads": 4,
  "intermediate_size": 2048,
  "max_position_embeddings": 2048,
  "rms_norm_eps": 1e-06,
  "rope_theta": 10000.0,
  "hidden_act": "silu",
  "tie_word_embeddings": false,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "torch_dtype": "float32"
}"#,
        vocab: 32000,
    },
];

/// A deterministic stream of uniform numbers in [-1, 1) (xorshift).
struct Uniform(u64);

impl Uniform {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

/// An f32 tensor for `safetensors::serialize_to_file`.
struct Tensor {
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl View for &Tensor {
    fn dtype(&self) -> Dtype {
        Dtype::F32
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// The tensors of a model's checkpoint: name, shape, and `(center, spread)` of its uniform
/// values (weights about GPT-2's 0.02 standard deviation, norms' scales about 1).
fn tensor_list(name: &str) -> Vec<(String, Vec<usize>, f32, f32)> {
    let weight = |n: String, shape: Vec<usize>| (n, shape, 0.0f32, 0.035f32);
    let mut t = Vec::new();
    let h = 768;
    if name == "gpt2" {
        let p = "transformer";
        t.push(weight(format!("{p}.wte.weight"), vec![50257, h]));
        t.push(weight(format!("{p}.wpe.weight"), vec![1024, h]));
        for i in 0..12 {
            let l = format!("{p}.h.{i}");
            for n in ["ln_1", "ln_2"] {
                t.push((format!("{l}.{n}.weight"), vec![h], 1.0, 0.1));
                t.push(weight(format!("{l}.{n}.bias"), vec![h]));
            }
            for (n, d_in, d_out) in [
                ("attn.c_attn", h, 3 * h),
                ("attn.c_proj", h, h),
                ("mlp.c_fc", h, 4 * h),
                ("mlp.c_proj", 4 * h, h),
            ] {
                t.push(weight(format!("{l}.{n}.weight"), vec![d_in, d_out]));
                t.push(weight(format!("{l}.{n}.bias"), vec![d_out]));
            }
        }
        t.push((format!("{p}.ln_f.weight"), vec![h], 1.0, 0.1));
        t.push(weight(format!("{p}.ln_f.bias"), vec![h]));
    } else {
        let (kv, inter, vocab) = (256, 2048, 32000);
        t.push(weight("model.embed_tokens.weight".into(), vec![vocab, h]));
        for i in 0..12 {
            let l = format!("model.layers.{i}");
            for n in ["input_layernorm", "post_attention_layernorm"] {
                t.push((format!("{l}.{n}.weight"), vec![h], 1.0, 0.1));
            }
            for (n, d_out, d_in) in [
                ("self_attn.q_proj", h, h),
                ("self_attn.k_proj", kv, h),
                ("self_attn.v_proj", kv, h),
                ("self_attn.o_proj", h, h),
                ("mlp.gate_proj", inter, h),
                ("mlp.up_proj", inter, h),
                ("mlp.down_proj", h, inter),
            ] {
                t.push(weight(format!("{l}.{n}.weight"), vec![d_out, d_in]));
            }
        }
        t.push(("model.norm.weight".into(), vec![h], 1.0, 0.1));
        t.push(weight("lm_head.weight".into(), vec![vocab, h]));
    }
    t
}

/// Writes the model's folder (once: an existing folder is kept) and returns its path.
fn write_model(spec: &Spec) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/bench-models")
        .join(spec.name);
    let weights = dir.join("model.safetensors");
    if weights.exists() && dir.join("config.json").exists() {
        return dir;
    }
    std::fs::create_dir_all(&dir).expect("create target/bench-models");
    let mut rng = Uniform(0x9E37_79B9_7F4A_7C15 ^ spec.vocab as u64);
    let tensors: Vec<(String, Tensor)> = tensor_list(spec.name)
        .into_iter()
        .map(|(name, shape, center, spread)| {
            let count: usize = shape.iter().product();
            let data = (0..count)
                .flat_map(|_| (center + spread * rng.next()).to_le_bytes())
                .collect();
            (name, Tensor { shape, data })
        })
        .collect();
    let partial = dir.join("model.safetensors.partial");
    safetensors::serialize_to_file(
        tensors.iter().map(|(n, t)| (n.as_str(), t)),
        Some([("format".to_string(), "pt".to_string())].into()),
        &partial,
    )
    .expect("write model.safetensors");
    std::fs::write(dir.join("config.json"), spec.config).expect("write config.json");
    std::fs::rename(partial, weights).expect("rename model.safetensors");
    dir
}

/// The prompt of row `row`: deterministic token ids below `vocab`.
fn prompt(vocab: usize, row: usize) -> Vec<u32> {
    let mut rng = Uniform(1234 + row as u64);
    (0..PROMPT)
        .map(|_| ((rng.next() * 0.5 + 0.5) * (vocab - 1) as f32) as u32)
        .collect()
}

/// jaxrs's figures of one model and dtype, and its batch-1 greedy tokens.
struct Measured {
    prefill_ms: f64,
    decode1: f64,
    decode8: f64,
    tokens: Vec<u32>,
}

fn measure(model: &Transformer, vocab: usize, steps: usize, prefill_rounds: usize) -> Measured {
    let greedy = SamplingParams::greedy();
    let p0 = prompt(vocab, 0);
    // Batch 1: prefill (timed, best of `prefill_rounds` after the compile), then decode.
    let mut engine = Engine::new(
        model.clone(),
        EngineConfig {
            slots: 1,
            capacity: CAPACITY,
        },
    )
    .expect("engine");
    let mut prefill_ms = f64::INFINITY;
    let mut first = 0;
    for round in 0..=prefill_rounds {
        let t = Instant::now();
        let (slot, token) = engine.insert(&p0, greedy).expect("insert");
        if round > 0 {
            prefill_ms = prefill_ms.min(t.elapsed().as_secs_f64() * 1e3);
        }
        first = token;
        if round < prefill_rounds {
            engine.release(slot);
        }
    }
    let mut tokens = vec![first];
    // The compile and one warm-up step, then the timed steps.
    for _ in 0..2 {
        tokens.push(engine.step().expect("step")[0].1);
    }
    let t = Instant::now();
    for _ in 0..steps {
        tokens.push(engine.step().expect("step")[0].1);
    }
    let decode1 = steps as f64 / t.elapsed().as_secs_f64();
    drop(engine);
    // Batch 8: all prompts prefilled at once, then decode.
    let mut engine = Engine::new(
        model.clone(),
        EngineConfig {
            slots: BATCH,
            capacity: CAPACITY,
        },
    )
    .expect("engine");
    let prompts: Vec<Vec<u32>> = (0..BATCH).map(|r| prompt(vocab, r)).collect();
    let requests: Vec<(&[u32], SamplingParams)> =
        prompts.iter().map(|p| (p.as_slice(), greedy)).collect();
    engine.insert_many(&requests).expect("insert_many");
    for _ in 0..2 {
        engine.step().expect("step");
    }
    let t = Instant::now();
    for _ in 0..steps {
        assert_eq!(engine.step().expect("step").len(), BATCH);
    }
    let decode8 = (steps * BATCH) as f64 / t.elapsed().as_secs_f64();
    Measured {
        prefill_ms,
        decode1,
        decode8,
        tokens,
    }
}

/// A peer's output: `name: value` figures and `name_tokens: id id ...` lines.
struct PeerOut {
    figures: Vec<(String, f64)>,
    tokens: Vec<(String, Vec<u32>)>,
}

/// Runs `benches/peer/<script>` with the Python in `JAXRS_BENCH_PYTHON` (default `python3`);
/// `None` when it is missing or fails (its stderr is shown).
fn run_peer(script: &str, args: &[String]) -> Option<PeerOut> {
    let python = std::env::var("JAXRS_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let path = format!("{}/benches/peer/{script}", env!("CARGO_MANIFEST_DIR"));
    eprintln!("running {script} ...");
    let out = std::process::Command::new(&python)
        .arg(&path)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("{script} failed ({}); its column stays empty", out.status);
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let tokens = text
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(": ")?;
            let k = k.strip_suffix("_tokens")?;
            Some((
                k.to_string(),
                v.split_whitespace()
                    .filter_map(|t| t.parse().ok())
                    .collect(),
            ))
        })
        .collect();
    Some(PeerOut {
        figures: peer::parse_figures(&out.stdout),
        tokens,
    })
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let steps: usize = std::env::var("JAXRS_GENERATE_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let prefill_rounds: usize = std::env::var("JAXRS_GENERATE_PREFILL_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut rows: Vec<(String, Measured)> = Vec::new();
    let (mut jax, mut hf): (Option<PeerOut>, Option<PeerOut>) = (None, None);
    for spec in &MODELS {
        let wanted: Vec<&str> = DTYPES
            .into_iter()
            .filter(|d| {
                filter
                    .as_ref()
                    .is_none_or(|f| format!("{}_{d}", spec.name).contains(f.as_str()))
            })
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let dir = write_model(spec);
        // The prompts, one row of ids a line, for the peers.
        let lines: Vec<String> = (0..BATCH)
            .map(|r| {
                let ids: Vec<String> = prompt(spec.vocab, r).iter().map(u32::to_string).collect();
                ids.join(" ")
            })
            .collect();
        std::fs::write(dir.join("prompts.txt"), lines.join("\n") + "\n").expect("write prompts");
        let f32_model = Transformer::from_pretrained(&dir, None).expect("load the model");
        for dtype in wanted {
            let model = match dtype {
                "f32" => f32_model.clone(),
                "bf16" => f32_model.astype(DType::BF16),
                _ => f32_model.quantize_int8(),
            };
            let row = format!("{}_{dtype}", spec.name);
            eprintln!("jaxrs {row} ...");
            let m = measure(&model, spec.vocab, steps, prefill_rounds);
            eprintln!(
                "  prefill {:.1} ms, decode {:.1} tok/s (batch 1), {:.1} tok/s (batch {BATCH})",
                m.prefill_ms, m.decode1, m.decode8
            );
            // The peers run this row right after jaxrs, so that all three see the same
            // load on a shared machine.
            let args = vec![
                format!("--rows={row}"),
                format!("--steps={steps}"),
                format!("--prompt={PROMPT}"),
                format!("--capacity={CAPACITY}"),
                format!("--batch={BATCH}"),
                format!("--threads={threads}"),
                format!("--prefill-rounds={prefill_rounds}"),
                format!("--model={}={}", spec.name, dir.display()),
            ];
            let peers: [(&str, &mut Option<PeerOut>); 2] =
                [("generate_jax.py", &mut jax), ("generate_hf.py", &mut hf)];
            for (script, all) in peers {
                // transformers has no int8 row (see generate_hf.py).
                if script == "generate_hf.py" && dtype == "int8" {
                    continue;
                }
                if let Some(out) = run_peer(script, &args) {
                    let all = all.get_or_insert_with(|| PeerOut {
                        figures: Vec::new(),
                        tokens: Vec::new(),
                    });
                    all.figures.extend(out.figures);
                    all.tokens.extend(out.tokens);
                }
            }
            rows.push((row, m));
        }
    }
    if rows.is_empty() {
        return;
    }

    println!(
        "\nprompt {PROMPT} tokens, cache {CAPACITY} positions, {steps} decode steps timed, \
         {threads} threads; ratio = jaxrs speed / peer's (>1: jaxrs ahead)"
    );
    println!(
        "{:<12} {:>22} {:>8} {:>8} {:>22} {:>8} {:>8} {:>22} {:>8} {:>8}",
        "row",
        "prefill ms (jaxrs)",
        "/JAX",
        "/HF",
        "tok/s b1 (jaxrs)",
        "/JAX",
        "/HF",
        format!("tok/s b{BATCH} (jaxrs)"),
        "/JAX",
        "/HF"
    );
    let get = |p: &Option<PeerOut>, name: String| {
        p.as_ref().and_then(|p| peer::figure(&p.figures, &name))
    };
    // A peer's time over jaxrs's (prefill), or jaxrs's rate over the peer's (decode).
    let ratio = |x: Option<f64>| x.map_or("-".to_string(), |r| format!("{r:.2}x"));
    for (row, m) in &rows {
        let pre =
            |p: &Option<PeerOut>| get(p, format!("{row}_prefill_ms")).map(|t| t / m.prefill_ms);
        let dec = |p: &Option<PeerOut>, b: usize, ours: f64| {
            get(p, format!("{row}_decode{b}_tps")).map(|t| ours / t)
        };
        println!(
            "{row:<12} {:>22.1} {:>8} {:>8} {:>22.1} {:>8} {:>8} {:>22.1} {:>8} {:>8}",
            m.prefill_ms,
            ratio(pre(&jax)),
            ratio(pre(&hf)),
            m.decode1,
            ratio(dec(&jax, 1, m.decode1)),
            ratio(dec(&hf, 1, m.decode1)),
            m.decode8,
            ratio(dec(&jax, BATCH, m.decode8)),
            ratio(dec(&hf, BATCH, m.decode8)),
        );
    }
    println!("\npeers' figures (prefill ms, tok/s batch 1, tok/s batch {BATCH}):");
    for (row, _) in &rows {
        for (who, p) in [("JAX", &jax), ("transformers", &hf)] {
            let f = |what: &str| {
                get(p, format!("{row}_{what}")).map_or("-".to_string(), |v| format!("{v:.1}"))
            };
            println!(
                "  {row:<12} {who:<13} {:>10} {:>10} {:>10}",
                f("prefill_ms"),
                f("decode1_tps"),
                f(&format!("decode{BATCH}_tps"))
            );
        }
    }
    // The same computation: greedy tokens of the batch-1 run.
    println!(
        "\ngreedy tokens (batch 1, {} tokens) equal to jaxrs's:",
        steps + 3
    );
    for (row, m) in &rows {
        for (who, p) in [("JAX", &jax), ("transformers", &hf)] {
            let Some(theirs) = p
                .as_ref()
                .and_then(|p| p.tokens.iter().find(|(r, _)| r == row))
            else {
                continue;
            };
            let same = m
                .tokens
                .iter()
                .zip(&theirs.1)
                .take_while(|(a, b)| a == b)
                .count();
            println!(
                "  {row:<12} {who:<13} {same}/{} {}",
                m.tokens.len(),
                if same == m.tokens.len() {
                    "equal"
                } else {
                    "DIFFER"
                }
            );
        }
    }
}
