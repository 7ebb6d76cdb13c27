//! Hugging Face checkpoints load and give `transformers`' numbers: float32 logits to 1e-4 and
//! 32 greedy tokens exactly, for GPT-2, Llama (grouped-query attention; Llama 3.1's rotary
//! scaling), Qwen2 (q/k/v biases, tied embeddings) and Mistral (a sliding window shorter than
//! the sequences), from one file or from shards; bfloat16 and float16 checkpoints to their
//! precision. Goldens: `tests/golden/gen_hf.py` (transformers and torch on CPU).

mod common;

use common::{golden_dir, worst_relative, Expected};
use jaxrs::prelude::*;
use jaxrs_models::generate::{generate, Engine, EngineConfig, GenerateOptions, SamplingParams};
use jaxrs_models::Transformer;

/// Every float32 golden: (model folder, the golden's folder).
const FLOAT32: [(&str, &str); 6] = [
    ("gpt2", "gpt2"),
    ("llama", "llama"),
    ("llama3", "llama3"),
    ("qwen2", "qwen2"),
    ("mistral", "mistral"),
    // The same weights as `llama`, in four shards with an index.
    ("llama-sharded", "llama"),
];

/// The logits of each row alone, and of both rows right-padded in one batch.
fn check_logits(model: &Transformer, e: &Expected, tolerance: f32) -> f32 {
    let ids = e.ids("input_ids");
    let (_, row0) = e.f32s("logits_row0");
    let (shape1, row1) = e.f32s("logits_row1");
    let (t, len1, v) = (24, shape1[0], model.vocab_size());
    let as_i32 = |ids: &[u32]| ids.iter().map(|&i| i as i32).collect::<Vec<_>>();
    let (alone0, _) = model.prefill(&Array::from_vec(as_i32(&ids[..t]), &[1, t]));
    let (alone1, _) = model.prefill(&Array::from_vec(as_i32(&ids[t..t + len1]), &[1, len1]));
    let (batch, _) = model.prefill(&Array::from_vec(as_i32(&ids), &[2, t]));
    let batch = batch.to_vec::<f32>();
    let worst = [
        worst_relative(&alone0.to_vec::<f32>(), &row0),
        worst_relative(&alone1.to_vec::<f32>(), &row1),
        worst_relative(&batch[..t * v], &row0),
        // The padded row's logits at its real positions.
        worst_relative(&batch[t * v..(t + len1) * v], &row1),
    ]
    .into_iter()
    .fold(0.0, f32::max);
    assert!(
        worst <= tolerance,
        "worst relative logit error {worst} > {tolerance}"
    );
    worst
}

fn greedy_tokens(model: Transformer, e: &Expected) -> Vec<u32> {
    let prompt = e.ids("greedy_prompt");
    let expected = e.ids("greedy_tokens");
    let mut engine = Engine::new(
        model,
        EngineConfig {
            slots: 1,
            capacity: 64,
        },
    )
    .unwrap();
    let options = GenerateOptions {
        max_new_tokens: expected.len(),
        sampling: SamplingParams::greedy(),
        stop_tokens: vec![],
    };
    generate(&mut engine, &[prompt], &options)
        .unwrap()
        .remove(0)
}

#[test]
fn float32_checkpoints_match_transformers() {
    for (folder, golden) in FLOAT32 {
        let model = Transformer::from_pretrained(golden_dir(folder), None).unwrap();
        assert_eq!(model.dtype(), DType::F32, "{folder}");
        let e = Expected::load(golden);
        let worst = check_logits(&model, &e, 1e-4);
        eprintln!("{folder}: worst relative logit error {worst:e}");
        assert_eq!(greedy_tokens(model, &e), e.ids("greedy_tokens"), "{folder}");
    }
}

#[test]
fn half_precision_checkpoints_keep_their_dtype_and_match_to_its_precision() {
    for (folder, dtype) in [("llama-bf16", DType::BF16), ("gpt2-f16", DType::F16)] {
        let e = Expected::load(folder);
        // The goldens are float32 computations from the stored (rounded) weights: loading them
        // as float32 gives those numbers exactly as the float32 checkpoints do.
        let as_f32 = Transformer::from_pretrained(golden_dir(folder), Some(DType::F32)).unwrap();
        check_logits(&as_f32, &e, 1e-4);
        assert_eq!(
            greedy_tokens(as_f32, &e),
            e.ids("greedy_tokens"),
            "{folder}"
        );
        // Run in the stored dtype, the logits are those numbers to the dtype's precision: a few
        // of its ulps per layer, relative to the logits' size.
        let native = Transformer::from_pretrained(golden_dir(folder), None).unwrap();
        assert_eq!(native.dtype(), dtype, "{folder}");
        let (_, row0) = e.f32s("logits_row0");
        let scale = row0.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let ids: Vec<i32> = e.ids("input_ids")[..24].iter().map(|&i| i as i32).collect();
        let (logits, _) = native.prefill(&Array::from_vec(ids, &[1, 24]));
        let logits = logits.to_vec::<f32>();
        let max_abs_diff = |a: &[f32], b: &[f32]| {
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0f32, f32::max)
        };
        let ours = max_abs_diff(&logits, &row0);
        // torch computing in the same dtype is the yardstick of "its precision".
        let (_, torch_native) = e.f32s("logits_row0_native");
        let torch = max_abs_diff(&torch_native, &row0);
        eprintln!("{folder} in {dtype:?}: |logit error| {ours} (torch in {dtype:?}: {torch}; logits up to {scale})");
        assert!(
            ours <= 1.25 * torch + 1e-3 * scale,
            "{folder}: {ours} vs torch's {torch}"
        );
    }
}

#[test]
fn int8_layers_stay_as_close_to_float32_as_a_few_bfloat16_roundings() {
    for folder in ["gpt2", "llama"] {
        let e = Expected::load(folder);
        let (_, row0) = e.f32s("logits_row0");
        let scale = row0.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let ids = Array::from_vec(
            e.ids("input_ids")[..24]
                .iter()
                .map(|&i| i as i32)
                .collect::<Vec<_>>(),
            &[1, 24],
        );
        let worst_abs = |model: &Transformer| {
            let (logits, _) = model.prefill(&ids);
            logits
                .to_vec::<f32>()
                .iter()
                .zip(&row0)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max)
        };
        let float = Transformer::from_pretrained(golden_dir(folder), None).unwrap();
        let int8 = float.quantize_int8();
        assert_eq!(int8.blocks[0].mlp.up.weight.dtype(), DType::I8);
        assert_eq!(
            int8.blocks[0].mlp.up.scale.as_ref().unwrap().dtype(),
            DType::F32
        );
        // The yardstick: the same model computed in bfloat16 (8 significant bits). Int8 layers
        // quantize their weights per output channel and each activation row on the fly (7
        // bits and a sign each, see `Dense`), so their error is of the same order, a few times
        // bfloat16's at most.
        let bf16 = worst_abs(&float.astype(DType::BF16));
        let ours = worst_abs(&int8);
        eprintln!("{folder}: |logit error| int8 {ours}, bfloat16 {bf16}, logits up to {scale}");
        assert!(
            ours <= 3.0 * bf16,
            "{folder}: int8 {ours} vs bfloat16 {bf16}"
        );
        assert!(ours <= 0.2 * scale, "{folder}: {ours} vs {scale}");
    }
}

#[test]
fn the_demo_model_generates_its_golden_text() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/shakespeare-gpt2");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let ids = |v: &serde_json::Value| -> Vec<u32> {
        let v = match v.as_str() {
            Some(text) => serde_json::from_str(text).unwrap(),
            None => v.clone(),
        };
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap() as u32)
            .collect()
    };
    let tokenizer = jaxrs_models::tokenizer::Tokenizer::from_dir(&dir).unwrap();
    let prompt = tokenizer
        .encode(expected["prompt"].as_str().unwrap(), true)
        .unwrap();
    assert_eq!(prompt, ids(&expected["prompt_ids"]));
    let model = Transformer::from_pretrained(&dir, None).unwrap();
    let want = ids(&expected["greedy_tokens"]);
    let mut engine = Engine::new(
        model,
        EngineConfig {
            slots: 1,
            capacity: 128,
        },
    )
    .unwrap();
    let options = GenerateOptions {
        max_new_tokens: want.len(),
        sampling: SamplingParams::greedy(),
        stop_tokens: vec![],
    };
    let got = generate(&mut engine, &[prompt], &options)
        .unwrap()
        .remove(0);
    assert_eq!(got, want);
    assert_eq!(
        tokenizer.decode(&got, true).unwrap(),
        expected["greedy_decoded"].as_str().unwrap()
    );
}
