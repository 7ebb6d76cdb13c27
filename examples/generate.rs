//! Generates text from a Hugging Face model folder (GPT-2, Llama, Mistral or Qwen2, as
//! `save_pretrained` writes it, with its `tokenizer.json`): the prompts are tokenized, prefilled
//! together into a KV cache (each padded to its length bucket) and decoded side by side, one
//! jitted step per token.
//!
//! Run: `cargo run --release --example generate -- "ROMEO:" ["JULIET:" ...]`, with options
//! `--model DIR` (default `jaxrs-models/assets/shakespeare-gpt2`, a small GPT-2 trained on
//! tiny Shakespeare), `--max-new-tokens N` (64), `--temperature T` (0: greedy), `--top-k K`,
//! `--top-p P`, `--seed S`, `--dtype f32|bf16|int8` (the checkpoint's, cast, or int8 weights),
//! `--capacity C` (positions per sequence, at most the model's).

use jaxrs::DType;
use jaxrs_models::generate::{Engine, EngineConfig, SamplingParams, SlotId};
use jaxrs_models::tokenizer::Tokenizer;
use jaxrs_models::Transformer;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

/// The command line.
struct Options {
    model: PathBuf,
    prompts: Vec<String>,
    max_new_tokens: usize,
    sampling: SamplingParams,
    dtype: Option<String>,
    capacity: Option<usize>,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        model: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/jaxrs-models/assets/shakespeare-gpt2"
        )),
        prompts: Vec::new(),
        max_new_tokens: 64,
        sampling: SamplingParams::greedy(),
        dtype: None,
        capacity: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        fn num<T: std::str::FromStr>(name: &str, v: String) -> Result<T, String> {
            v.parse().map_err(|_| format!("{name}: cannot read {v:?}"))
        }
        match arg.as_str() {
            "--model" => o.model = PathBuf::from(value("--model")?),
            "--max-new-tokens" => {
                o.max_new_tokens = num("--max-new-tokens", value("--max-new-tokens")?)?
            }
            "--temperature" => {
                o.sampling.temperature = num("--temperature", value("--temperature")?)?
            }
            "--top-k" => o.sampling.top_k = num("--top-k", value("--top-k")?)?,
            "--top-p" => o.sampling.top_p = num("--top-p", value("--top-p")?)?,
            "--seed" => o.sampling.seed = num("--seed", value("--seed")?)?,
            "--dtype" => o.dtype = Some(value("--dtype")?),
            "--capacity" => o.capacity = Some(num("--capacity", value("--capacity")?)?),
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => o.prompts.push(arg),
        }
    }
    if o.prompts.is_empty() {
        o.prompts.push("ROMEO:".into());
    }
    Ok(o)
}

fn main() {
    let options = match parse_args() {
        Ok(o) => o,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("error: {message}");
            }
            eprintln!("usage: generate [--model DIR] [--max-new-tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--dtype f32|bf16|int8] [--capacity C] PROMPT...");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(options) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(o: Options) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let (cast, quantize) = match o.dtype.as_deref() {
        None => (None, false),
        Some("f32") => (Some(DType::F32), false),
        Some("bf16") => (Some(DType::BF16), false),
        Some("int8") => (None, true),
        Some(other) => return Err(format!("--dtype {other}: expected f32, bf16 or int8").into()),
    };
    let mut model = Transformer::from_pretrained(&o.model, cast)?;
    if quantize {
        model = model.quantize_int8();
    }
    let tokenizer = Tokenizer::from_dir(&o.model)?;
    println!(
        "{} ({} layers, {} wide, {:?}) loaded from {} in {:.2?}",
        model.config.model_type,
        model.config.num_layers,
        model.config.hidden_size,
        model.dtype(),
        o.model.display(),
        started.elapsed()
    );
    let prompts = o
        .prompts
        .iter()
        .map(|p| tokenizer.encode(p, true))
        .collect::<Result<Vec<_>, _>>()?;
    let longest = prompts.iter().map(Vec::len).max().unwrap_or(0);
    let capacity = o
        .capacity
        .unwrap_or((longest + o.max_new_tokens).min(model.max_positions()));
    let mut engine = Engine::new(
        model,
        EngineConfig {
            slots: prompts.len(),
            capacity,
        },
    )?;
    let stop: Vec<u32> = tokenizer.stop_token_ids().to_vec();

    // Prefill all prompts in one call, then one decode step per token for all of them.
    let t0 = Instant::now();
    let requests: Vec<(&[u32], SamplingParams)> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                p.as_slice(),
                SamplingParams {
                    seed: o.sampling.seed + i as u64,
                    ..o.sampling
                },
            )
        })
        .collect();
    // Which prompt each occupied slot is generating.
    let mut slots: HashMap<SlotId, usize> = HashMap::new();
    let mut outputs = vec![Vec::new(); prompts.len()];
    for (i, (slot, token)) in engine.insert_many(&requests)?.into_iter().enumerate() {
        slots.insert(slot, i);
        outputs[i].push(token);
    }
    let prefill = t0.elapsed();
    let t1 = Instant::now();
    let mut decoded = 0usize;
    // The first decode step compiles; the rate is measured over the steps after it.
    let mut steady: Option<(Instant, usize)> = None;
    loop {
        slots.retain(|&slot, &mut i| {
            let out: &Vec<u32> = &outputs[i];
            let done = out.len() >= o.max_new_tokens
                || out.last().is_some_and(|t| stop.contains(t))
                || engine.position(slot) >= capacity;
            if done {
                engine.release(slot);
            }
            !done
        });
        if slots.is_empty() {
            break;
        }
        for (slot, token) in engine.step()? {
            if let Some(&i) = slots.get(&slot) {
                outputs[i].push(token);
                decoded += 1;
            }
        }
        steady.get_or_insert((Instant::now(), decoded));
    }
    let decode = t1.elapsed();
    for (prompt, out) in o.prompts.iter().zip(&outputs) {
        println!(
            "\n--- {prompt:?} ->\n{prompt}{}",
            tokenizer.decode(out, true)?
        );
    }
    let rate = steady
        .filter(|(_, first)| decoded > *first)
        .map(|(t, first)| (decoded - first) as f64 / t.elapsed().as_secs_f64().max(1e-9));
    println!(
        "\nprefill: {} prompt(s) in {prefill:.1?} (compile included); decode: {decoded} tokens in {decode:.1?}, {} tokens/s after the first step",
        prompts.len(),
        rate.map_or("-".to_string(), |r| format!("{r:.0}")),
    );
    Ok(())
}
