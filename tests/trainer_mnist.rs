//! The two MNIST trainers, `examples/train_mnist.rs` (MLP) and `examples/mnist_cnn.rs` (conv
//! net), on short schedules: the loss falls, held-out digits are read far above chance, and
//! `--resume` carries on from the step saved.
//!
//! Each example brings its own copy of the harness (`mod harness` by path), so its `Args` and
//! `Report` are types of their own: the check is a macro, written once for both.

// Both examples load the harness and the MNIST helpers by path, as they do when built alone.
#![allow(clippy::duplicate_mod)]

#[path = "../examples/train_mnist.rs"]
mod train_mnist;

#[path = "../examples/mnist_cnn.rs"]
mod mnist_cnn;

/// Trains `$trainer` for `$steps` steps, then resumes it for `$more`.
macro_rules! trains_then_resumes {
    ($test:ident, $trainer:ident, $steps:literal, $more:literal) => {
        #[test]
        fn $test() {
            let name = stringify!($trainer);
            let args = |out: &std::path::Path, extra: &[&str]| {
                let mut argv = vec!["--out".to_string(), out.display().to_string()];
                argv.extend(extra.iter().map(|s| s.to_string()));
                $trainer::harness::Args::parse_from(name, $trainer::EPOCHS, argv)
                    .expect("arguments")
            };
            let out =
                std::env::temp_dir().join(format!("jaxrs-trainer-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&out);

            let first = $trainer::run(&args(&out, &["--steps", &$steps.to_string()]));
            assert_eq!((first.start_step, first.end_step), (0, $steps));
            assert!(
                first.final_loss < 0.5 * first.first_loss,
                "the loss did not fall: {first:?}"
            );
            // Chance is 10%.
            assert!(first.test_accuracy > 0.8, "held-out accuracy: {first:?}");
            assert!(out.join("loss.png").exists());
            // The manager's folder holds the last step, whole.
            let last = out.join("checkpoints").join($steps.to_string());
            assert!(
                last.join("state.safetensors").is_file(),
                "{}",
                last.display()
            );

            let more = ["--steps", &$more.to_string(), "--resume"];
            let resumed = $trainer::run(&args(&out, &more));
            assert_eq!(
                (resumed.start_step, resumed.end_step),
                ($steps, $steps + $more)
            );
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
    };
}

trains_then_resumes!(the_mlp_trains_then_resumes, train_mnist, 60, 20);
trains_then_resumes!(the_cnn_trains_then_resumes, mnist_cnn, 40, 10);
