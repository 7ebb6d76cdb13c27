//! Generation over the KV cache: batches of prompts of different lengths give what each gives
//! alone, the cache's decode equals a full recomputation, sampling follows its settings and
//! its seed, and bad requests are errors.

mod common;

use common::{golden_dir, worst_relative, Expected};
use jaxrs::prelude::*;
use jaxrs_models::generate::{
    generate, sample, Engine, EngineConfig, GenerateOptions, SamplingParams, SlotId,
};
use jaxrs_models::{Error, Transformer};

fn load(name: &str) -> Transformer {
    Transformer::from_pretrained(golden_dir(name), None).unwrap()
}

fn greedy(max_new_tokens: usize) -> GenerateOptions {
    GenerateOptions {
        max_new_tokens,
        sampling: SamplingParams::greedy(),
        stop_tokens: vec![],
    }
}

fn prompts(e: &Expected) -> Vec<Vec<u32>> {
    let ids = e.ids("input_ids");
    vec![ids[..5].to_vec(), ids[..13].to_vec(), ids[3..20].to_vec()]
}

#[test]
fn decode_over_the_cache_equals_recomputing_the_whole_sequence() {
    for name in ["gpt2", "llama"] {
        let model = load(name);
        let e = Expected::load(name);
        let ids = e.ids("input_ids");
        // Greedy continuation of 6 tokens through the engine (prefill + 5 decode steps)...
        let mut engine = Engine::new(
            model.clone(),
            EngineConfig {
                slots: 1,
                capacity: 32,
            },
        )
        .unwrap();
        let out = generate(&mut engine, &[ids[..7].to_vec()], &greedy(6))
            .unwrap()
            .remove(0);
        // ...equals taking the argmax of a full prefill of the growing sequence each time.
        let mut seq: Vec<i32> = ids[..7].iter().map(|&t| t as i32).collect();
        for &token in &out {
            let (logits, _) = model.prefill(&Array::from_vec(seq.clone(), &[1, seq.len()]));
            let v = model.vocab_size();
            let last = logits.to_vec::<f32>()[(seq.len() - 1) * v..].to_vec();
            let best = (0..v).max_by(|&a, &b| last[a].total_cmp(&last[b])).unwrap();
            assert_eq!(best as u32, token, "{name}");
            seq.push(token as i32);
        }
    }
}

#[test]
fn a_padded_batch_gives_each_row_its_own_logits() {
    let model = load("llama");
    let e = Expected::load("llama");
    let ids: Vec<i32> = e.ids("input_ids").iter().map(|&t| t as i32).collect();
    let (short, long) = (&ids[..6], &ids[..16]);
    let mut batch = vec![0i32; 32];
    batch[..6].copy_from_slice(short);
    batch[16..].copy_from_slice(long);
    let (logits, _) = model.prefill(&Array::from_vec(batch, &[2, 16]));
    let logits = logits.to_vec::<f32>();
    let v = model.vocab_size();
    let (alone_short, _) = model.prefill(&Array::from_vec(short.to_vec(), &[1, 6]));
    let (alone_long, _) = model.prefill(&Array::from_vec(long.to_vec(), &[1, 16]));
    assert!(worst_relative(&logits[..6 * v], &alone_short.to_vec::<f32>()) < 1e-5);
    assert!(worst_relative(&logits[16 * v..], &alone_long.to_vec::<f32>()) < 1e-5);
}

#[test]
fn prefill_last_gives_the_full_prefills_last_logits_and_cache() {
    for name in ["gpt2", "llama", "mistral"] {
        let model = load(name);
        let ids: Vec<i32> = Expected::load(name)
            .ids("input_ids")
            .iter()
            .map(|&t| t as i32)
            .collect();
        // Two right-padded rows, 9 and 16 real tokens.
        let mut batch = ids[..32].to_vec();
        batch[9..16].fill(0);
        let tokens = Array::from_vec(batch, &[2, 16]);
        let (full, full_kvs) = model.prefill(&tokens);
        let (last, last_kvs) = model.prefill_last(&tokens, &Array::from_vec(vec![9i32, 16], &[2]));
        let (full, v) = (full.to_vec::<f32>(), model.vocab_size());
        let last = last.to_vec::<f32>();
        assert_eq!(last.len(), 2 * v);
        assert!(
            worst_relative(&last[..v], &full[8 * v..9 * v]) < 1e-5,
            "{name}"
        );
        assert!(worst_relative(&last[v..], &full[31 * v..]) < 1e-5, "{name}");
        for ((k, v), (full_k, full_v)) in last_kvs.iter().zip(&full_kvs) {
            assert_eq!(k.to_vec::<f32>(), full_k.to_vec::<f32>(), "{name}");
            assert_eq!(v.to_vec::<f32>(), full_v.to_vec::<f32>(), "{name}");
        }
    }
}

#[test]
fn prompts_of_different_lengths_batched_equal_each_alone() {
    for name in ["gpt2", "llama", "mistral"] {
        let e = Expected::load(name);
        let prompts = prompts(&e);
        let mut engine = Engine::new(
            load(name),
            EngineConfig {
                slots: 3,
                capacity: 48,
            },
        )
        .unwrap();
        let together = generate(&mut engine, &prompts, &greedy(12)).unwrap();
        for (p, expected) in prompts.iter().zip(&together) {
            let alone = generate(&mut engine, std::slice::from_ref(p), &greedy(12)).unwrap();
            assert_eq!(&alone[0], expected, "{name}");
        }
        assert_eq!(engine.free_slots(), 3);
    }
}

#[test]
fn more_prompts_than_slots_wait_for_a_free_slot() {
    let e = Expected::load("gpt2");
    let prompts = prompts(&e);
    let mut one_slot = Engine::new(
        load("gpt2"),
        EngineConfig {
            slots: 1,
            capacity: 48,
        },
    )
    .unwrap();
    let mut three = Engine::new(
        load("gpt2"),
        EngineConfig {
            slots: 3,
            capacity: 48,
        },
    )
    .unwrap();
    assert_eq!(
        generate(&mut one_slot, &prompts, &greedy(8)).unwrap(),
        generate(&mut three, &prompts, &greedy(8)).unwrap()
    );
}

#[test]
fn generation_stops_at_a_stop_token_or_a_full_cache() {
    let e = Expected::load("gpt2");
    let prompt = e.ids("greedy_prompt");
    let expected = e.ids("greedy_tokens");
    let mut engine = Engine::new(
        load("gpt2"),
        EngineConfig {
            slots: 1,
            capacity: 64,
        },
    )
    .unwrap();
    let options = GenerateOptions {
        stop_tokens: vec![expected[5]],
        ..greedy(32)
    };
    let out = generate(&mut engine, std::slice::from_ref(&prompt), &options).unwrap();
    let first_stop = expected.iter().position(|&t| t == expected[5]).unwrap();
    assert_eq!(out[0], expected[..=first_stop]);
    // A cache of 12 positions holds the prompt and 12 - len new tokens' inputs: the last token
    // drawn is never written, so 12 - len + 1 tokens come out.
    let mut small = Engine::new(
        load("gpt2"),
        EngineConfig {
            slots: 1,
            capacity: 12,
        },
    )
    .unwrap();
    let out = generate(&mut small, std::slice::from_ref(&prompt), &greedy(32)).unwrap();
    assert_eq!(out[0], expected[..12 - prompt.len() + 1]);
}

#[test]
fn sampling_is_reproducible_by_seed_and_independent_of_the_batch() {
    let e = Expected::load("llama");
    let prompts = prompts(&e);
    let sampling = SamplingParams {
        temperature: 1.0,
        top_k: 0,
        top_p: 1.0,
        seed: 7,
    };
    let options = GenerateOptions {
        max_new_tokens: 16,
        sampling,
        stop_tokens: vec![],
    };
    let mut engine = Engine::new(
        load("llama"),
        EngineConfig {
            slots: 3,
            capacity: 48,
        },
    )
    .unwrap();
    let together = generate(&mut engine, &prompts, &options).unwrap();
    assert_eq!(generate(&mut engine, &prompts, &options).unwrap(), together);
    // Prompt i draws with seed 7 + i, alone or batched.
    let alone = generate(
        &mut engine,
        &prompts[1..2],
        &GenerateOptions {
            sampling: SamplingParams {
                seed: 8,
                ..sampling
            },
            ..options.clone()
        },
    )
    .unwrap();
    assert_eq!(alone[0], together[1]);
    let other_seed = generate(
        &mut engine,
        &prompts,
        &GenerateOptions {
            sampling: SamplingParams {
                seed: 99,
                ..sampling
            },
            ..options.clone()
        },
    )
    .unwrap();
    assert_ne!(other_seed, together);
    // Top-k of 1, and a nucleus smaller than any token's probability, are greedy.
    let greedy_out = generate(&mut engine, &prompts, &greedy(16)).unwrap();
    for warp in [
        SamplingParams {
            top_k: 1,
            ..sampling
        },
        SamplingParams {
            top_p: 1e-6,
            ..sampling
        },
    ] {
        assert_eq!(
            generate(
                &mut engine,
                &prompts,
                &GenerateOptions {
                    sampling: warp,
                    ..options.clone()
                }
            )
            .unwrap(),
            greedy_out
        );
    }
}

/// Draws `n` tokens from one row of logits with `n` keys (as `n` one-row calls would).
fn draws(logits: &[f32], temperature: f32, top_k: i32, top_p: f32, n: usize) -> Vec<usize> {
    let v = logits.len();
    let rows = Array::from_vec(logits.repeat(n), &[n, v]);
    let keys = Array::from_vec(
        (0..n as u32).flat_map(|i| [0, i]).collect::<Vec<u32>>(),
        &[n, 2],
    );
    let step = Array::from_vec(vec![3i32; n], &[n]);
    let t = Array::from_vec(vec![temperature; n], &[n]);
    let k = Array::from_vec(vec![top_k; n], &[n]);
    let p = Array::from_vec(vec![top_p; n], &[n]);
    let f = jit(
        |(rows, keys, step, t, k, p): (Array, Array, Array, Array, Array, Array)| {
            sample(&rows, &keys, &step, &t, &k, &p)
        },
    );
    let out: Array = f.call((rows, keys, step, t, k, p));
    out.to_vec::<i32>()
        .into_iter()
        .map(|t| t as usize)
        .collect()
}

#[test]
fn sampling_warps_as_transformers_does() {
    // Probabilities 0.4, 0.3, 0.2, 0.1 (and zeros).
    let probs = [0.4f32, 0.3, 0.2, 0.1];
    let logits: Vec<f32> = probs.iter().map(|p| p.ln()).collect();
    let n = 4000;
    let freq = |draws: &[usize]| {
        let mut f = [0f32; 4];
        for &d in draws {
            f[d] += 1.0 / draws.len() as f32;
        }
        f
    };
    // Plain sampling follows the softmax (4000 draws: a standard error under 0.008).
    let plain = freq(&draws(&logits, 1.0, 0, 1.0, n));
    for (f, p) in plain.iter().zip(probs) {
        assert!((f - p).abs() < 0.03, "{plain:?}");
    }
    // Top-k 2 renormalises over the two most likely: 4/7 and 3/7.
    let top2 = freq(&draws(&logits, 1.0, 2, 1.0, n));
    assert_eq!(top2[2] + top2[3], 0.0, "{top2:?}");
    assert!((top2[0] - 4.0 / 7.0).abs() < 0.03, "{top2:?}");
    // Top-p 0.65: 0.4 + 0.3 reaches it, so the nucleus is the first two tokens.
    let nucleus = freq(&draws(&logits, 1.0, 0, 0.65, n));
    assert_eq!(nucleus[2] + nucleus[3], 0.0, "{nucleus:?}");
    // Temperature 0.5 squares the odds: 16 : 9 : 4 : 1 over 30.
    let cold = freq(&draws(&logits, 0.5, 0, 1.0, n));
    for (f, w) in cold.iter().zip([16.0f32, 9.0, 4.0, 1.0]) {
        assert!((f - w / 30.0).abs() < 0.03, "{cold:?}");
    }
    // Temperature 0 is the argmax.
    assert!(draws(&logits, 0.0, 0, 1.0, 8).iter().all(|&d| d == 0));
}

#[test]
fn bad_requests_are_errors() {
    let model = load("gpt2");
    let max = model.max_positions();
    assert!(matches!(
        Engine::new(model.clone(), EngineConfig { slots: 1, capacity: max + 1 }),
        Err(Error::Invalid(m)) if m.contains("exceeds")
    ));
    let mut engine = Engine::new(
        model,
        EngineConfig {
            slots: 1,
            capacity: 16,
        },
    )
    .unwrap();
    let g = SamplingParams::greedy();
    assert!(matches!(
        engine.insert(&[], g),
        Err(Error::PromptLength {
            len: 0,
            capacity: 16
        })
    ));
    assert!(matches!(
        engine.insert(&[1; 16], g),
        Err(Error::PromptLength { len: 16, .. })
    ));
    assert!(matches!(
        engine.insert(&[1, 99_999], g),
        Err(Error::TokenId { id: 99_999, .. })
    ));
    for bad in [
        SamplingParams {
            temperature: -1.0,
            ..g
        },
        SamplingParams {
            temperature: f32::NAN,
            ..g
        },
        SamplingParams { top_p: 0.0, ..g },
        SamplingParams { top_p: 1.5, ..g },
    ] {
        assert!(
            matches!(engine.insert(&[1, 2], bad), Err(Error::Invalid(_))),
            "{bad:?}"
        );
    }
    let (slot, _) = engine.insert(&[1, 2], g).unwrap();
    assert_eq!(engine.position(slot), 2);
    assert!(matches!(
        engine.insert(&[1, 2], g),
        Err(Error::NoFreeSlot { slots: 1 })
    ));
    engine.release(slot);
    engine.release(SlotId(7)); // out of range: nothing to free
    assert_eq!(engine.free_slots(), 1);
    assert_eq!(engine.step().unwrap(), vec![]);
}
