//! Prompt lengths are bucketed: a new length in a bucket already compiled compiles nothing,
//! and the decode step compiles once whatever the lengths. Alone in its test binary, so the
//! jit sites' counters see only this test's calls.

mod common;

use common::golden_dir;
use jaxrs_models::generate::{prompt_buckets, Engine, EngineConfig, SamplingParams};
use jaxrs_models::Transformer;

#[test]
fn prompt_lengths_share_a_program_per_bucket() {
    assert_eq!(prompt_buckets(100), vec![16, 32, 64, 100]);
    assert_eq!(prompt_buckets(16), vec![16]);
    assert_eq!(prompt_buckets(8), vec![8]);
    let model = Transformer::from_pretrained(golden_dir("gpt2"), None).unwrap();
    let mut engine = Engine::new(
        model,
        EngineConfig {
            slots: 2,
            capacity: 64,
        },
    )
    .unwrap();
    assert_eq!(engine.buckets(), &[16, 32, 64]);
    let mut run = |len: usize| {
        let prompt: Vec<u32> = (0..len as u32).map(|i| (i * 7) % 200).collect();
        let (slot, _) = engine.insert(&prompt, SamplingParams::greedy()).unwrap();
        engine.step().unwrap();
        engine.release(slot);
        Engine::compiles()
    };
    assert_eq!(run(3), (1, 1));
    // 3, 9 and 16 tokens are all padded to 16: no new program.
    assert_eq!(run(9), (1, 1));
    assert_eq!(run(16), (1, 1));
    // 17 is the next bucket's, and so is 30.
    assert_eq!(run(17), (2, 1));
    assert_eq!(run(30), (2, 1));
    assert_eq!(run(40), (3, 1));
}
