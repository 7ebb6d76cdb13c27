//! The MLP trainer `examples/train_mnist.rs` on a short schedule: its loss falls, it beats
//! chance on held-out digits, and `--resume` carries on from the step it saved.

#[path = "../examples/train_mnist.rs"]
mod train_mnist;

use train_mnist::harness::Args;

fn args(out: &std::path::Path, extra: &[&str]) -> Args {
    let mut argv = vec!["--out".to_string(), out.display().to_string()];
    argv.extend(extra.iter().map(|s| s.to_string()));
    Args::parse_from("train_mnist", train_mnist::EPOCHS, argv).expect("arguments")
}

#[test]
fn trains_then_resumes() {
    let out = std::env::temp_dir().join(format!("jaxrs-trainer-mnist-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);

    let first = train_mnist::run(&args(&out, &["--steps", "60"]));
    assert_eq!((first.start_step, first.end_step), (0, 60));
    assert!(
        first.final_loss < 0.5 * first.first_loss,
        "the loss did not fall: {first:?}"
    );
    // Chance is 10%.
    assert!(first.test_accuracy > 0.8, "held-out accuracy: {first:?}");
    assert!(out.join("loss.png").exists());

    let resumed = train_mnist::run(&args(&out, &["--steps", "20", "--resume"]));
    assert_eq!((resumed.start_step, resumed.end_step), (60, 80));
    // A fresh start would begin near ln(10) = 2.3 again.
    assert!(
        resumed.first_loss < 0.5 * first.first_loss,
        "the resumed run did not start from the trained parameters: {resumed:?}"
    );
    assert!(
        resumed.test_accuracy > 0.8,
        "held-out accuracy: {resumed:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
}
