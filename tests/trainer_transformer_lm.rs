//! The `transformer_lm` example, shortened: a tiny model trains (its loss falls well below the
//! first step's) in float32 and in bf16 mixed precision (whose parameters stay float32), and
//! `--resume` continues from the saved step.

#[path = "../examples/transformer_lm.rs"]
#[allow(dead_code)]
mod transformer_lm;

use jaxrs::data::Corpus;
use jaxrs::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use transformer_lm::harness::Args;
use transformer_lm::{read_corpus, run_on, Config, Report, EPOCHS, NAME};

/// A model small enough to compile and run a few dozen steps in seconds in a debug build.
fn tiny() -> Config {
    Config {
        d_model: 32,
        heads: 2,
        layers: 2,
        context: 32,
        batch: 16,
        peak_lr: 1e-2,
        warmup_steps: 5,
        steps_per_epoch: 20,
        eval_windows: 32,
        ..Config::default()
    }
}

/// A fresh output folder for one test.
fn out_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jaxrs-{NAME}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn args(out: &Path, extra: &[&str]) -> Args {
    let mut argv = vec!["--out".to_string(), out.display().to_string()];
    argv.extend(extra.iter().map(|s| s.to_string()));
    Args::parse_from(NAME, EPOCHS, argv).expect("arguments")
}

fn first_loss(report: &Report) -> f32 {
    report.losses[0].1
}

/// Trains on tiny Shakespeare, read once for all the runs (reading it takes seconds in a
/// debug build).
fn run(args: &Args, config: &Config) -> Report {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    let corpus = CORPUS.get_or_init(|| read_corpus(args));
    run_on(corpus, args, config)
}

#[test]
fn trains_in_f32_and_resumes_from_the_saved_step() {
    let out = out_dir("f32");
    let report = run(&args(&out, &["--steps", "60"]), &tiny());
    assert_eq!((report.start_step, report.losses.len()), (0, 60));
    let (first, last) = (first_loss(&report), report.final_train_loss(10));
    assert!(
        last < first - 1.0,
        "the loss fell from {first} to only {last}"
    );
    let (held_first, held_last) = (report.held_out[0].1, report.final_held_out_loss());
    assert!(
        held_last < held_first - 1.0,
        "the held-out loss fell from {held_first} to only {held_last}"
    );
    assert!(out.join("loss.png").is_file());

    let resumed = run(&args(&out, &["--steps", "10", "--resume"]), &tiny());
    assert_eq!(resumed.start_step, 60);
    // It starts where the first run ended (its held-out loss before any new step is the
    // first run's last), not from a fresh model.
    let (step, held_resumed) = resumed.held_out[0];
    assert_eq!(step, 60);
    assert!(
        (held_resumed - held_last).abs() < 1e-4,
        "the resumed model's held-out loss is {held_resumed}, the saved one's {held_last}"
    );
    assert!(
        first_loss(&resumed) < first - 1.0,
        "the resumed run started at loss {}",
        first_loss(&resumed)
    );
    // The resumed run saved its last step, beside the first run's.
    let checkpoints =
        jaxrs::checkpoint::CheckpointManager::new(out.join("checkpoints"), Default::default())
            .expect("the run's checkpoint folder");
    assert_eq!(checkpoints.latest_step(), Some(70));
    assert_eq!(
        checkpoints.metadata(70).expect("step 70's metadata").step,
        70
    );
    assert!(checkpoints.all_steps().contains(&60));
    drop(checkpoints);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn trains_in_bf16_with_float32_parameters() {
    let out = out_dir("bf16");
    let config = Config {
        dropout: 0.1,
        ..tiny()
    };
    let report = run(&args(&out, &["--steps", "40", "--dtype", "bf16"]), &config);
    let (first, last) = (first_loss(&report), report.final_train_loss(10));
    assert!(
        last < first - 1.0,
        "the bf16 loss fell from {first} to only {last}"
    );
    let (leaves, _) = report.params.flatten();
    assert!(leaves.iter().all(|p| p.dtype() == DType::F32));
    assert!(report.final_held_out_loss() < report.held_out[0].1 - 1.0);
    let _ = std::fs::remove_dir_all(&out);
}
