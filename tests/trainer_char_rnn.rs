//! The `char_rnn` example's trainer on a shortened schedule: a tiny GRU learns, samples
//! characters of the vocabulary, and `--resume` continues from the saved step.

// The example's `main` and the harness's parts it does not use are dead code here.
#[allow(dead_code)]
#[path = "../examples/char_rnn.rs"]
mod char_rnn;

use char_rnn::{run, Config};

fn tiny() -> Config {
    Config {
        embed: 16,
        hidden: 64,
        seq_len: 32,
        batch: 16,
        learning_rate: 1e-2,
        eval_batch: 256,
        sample_len: 40,
        ..Config::default()
    }
}

#[test]
fn a_tiny_char_rnn_learns_samples_and_resumes() {
    let out = std::env::temp_dir().join(format!(
        "jaxrs-trainer-char-rnn-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let args = |extra: &[&str]| {
        let mut argv = vec!["--steps".to_string(), "60".into(), "--out".into()];
        argv.push(out.display().to_string());
        argv.extend(extra.iter().map(|s| s.to_string()));
        char_rnn::Args::parse_from("char_rnn", 1, argv).unwrap()
    };
    let config = tiny();

    let first = run(&args(&[]), &config);
    let uniform = (first.vocab_size as f32).ln();
    assert!(
        (first.first_loss - uniform).abs() < 0.5,
        "the first step's loss {} should be near ln(vocab) = {uniform}",
        first.first_loss
    );
    assert!(
        first.last_loss < 0.8 * first.first_loss,
        "loss {} -> {}: not learning",
        first.first_loss,
        first.last_loss
    );
    assert!(
        first.held_out_loss < 0.8 * first.first_loss,
        "held-out loss {} vs first {}",
        first.held_out_loss,
        first.first_loss
    );
    assert_eq!((first.start_step, first.end_step), (0, 60));
    assert_eq!(first.sample.chars().count(), config.sample_len);
    let text = std::fs::read_to_string(jaxrs::data::data_dir().join(jaxrs::data::TINY_SHAKESPEARE))
        .unwrap();
    let vocab = jaxrs::data::Vocab::new(&text);
    assert!(
        first.sample.chars().all(|c| vocab.token(c).is_some()),
        "{:?}",
        first.sample
    );
    assert!(out.join("loss.png").is_file());

    let resumed = run(&args(&["--resume"]), &config);
    assert_eq!((resumed.start_step, resumed.end_step), (60, 120));
    assert!(
        resumed.first_loss < 0.85 * first.first_loss,
        "the resumed run starts from the trained parameters: its first loss {} should be \
         well below the fresh one's {}",
        resumed.first_loss,
        first.first_loss
    );
    let _ = std::fs::remove_dir_all(&out);
}
