//! Trains a two-layer MLP on 5,000 MNIST digits (`../shared/data/mnist_5k.csv.gz`, 4,500 for
//! training and 500 held out): one jitted training step (`value_and_grad` of the loss, then
//! Adam) with the parameters and the optimizer state donated, batches shuffled by a PRNG key
//! and uploaded one step ahead, held-out accuracy each epoch.
//!
//! Run: `cargo run --release --example train_mnist [-- --epochs N --steps N --resume --out DIR
//! --dtype f32|bf16 PATH_TO_mnist_5k.csv.gz]` (or set `JAXRS_DATA_DIR` to the folder holding
//! the data sets). The loss curve goes to `OUT/loss.png` and the final state to
//! `OUT/checkpoint` (`--resume` continues from it); OUT defaults to `target/train/train_mnist`.

#[path = "common/harness.rs"]
mod harness;
#[path = "common/mnist.rs"]
mod mnist;

use harness::{load_checkpoint, plot_losses, save_checkpoint, Args, Progress, TrainState};
use jaxrs::data::Remainder;
use jaxrs::optim::{self, GradientTransformation};
use jaxrs::prelude::*;
use jaxrs::random;
use mnist::PIXELS;

const HIDDEN: usize = 128;
const CLASSES: usize = 10;
const BATCH: usize = 100;
const EPOCHS: usize = 10;
const LEARNING_RATE: f32 = 1e-3;

#[derive(Tree, Clone)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
}

/// The mean softmax cross-entropy of the MLP on a batch.
fn loss(params: &Mlp, x: &Array, labels: &Array) -> Array {
    let hidden = (x.matmul(&params.w1) + &params.b1).relu();
    let logits = (hidden.matmul(&params.w2) + &params.b2).astype(DType::F32);
    let targets = Array::one_hot(labels, CLASSES, DType::F32);
    -(targets * logits.log_softmax(-1))
        .sum(-1, false)
        .mean(None, false)
}

type OptState = optim::State<optim::Adam, Mlp>;

fn optimizer() -> optim::Adam {
    optim::adam(LEARNING_RATE, 0.9, 0.999, 1e-8)
}

/// One Adam step: the loss and its gradient in one forward and one backward pass, then the
/// update. The parameters and the optimizer's state are donated, so XLA updates them in place.
#[jit(donate = (params, opt_state))]
fn train_step(
    params: Mlp,
    opt_state: OptState,
    x: &Array,
    labels: &Array,
) -> (Mlp, OptState, Array) {
    let (value, grads) = value_and_grad(|p: Mlp| loss(&p, x, labels))(params.clone());
    let (updates, opt_state) = optimizer().update(grads, opt_state, Some(&params));
    (optim::apply_updates(&params, &updates), opt_state, value)
}

#[jit]
fn accuracy(params: &Mlp, x: &Array, labels: &Array) -> Array {
    let hidden = (x.matmul(&params.w1) + &params.b1).relu();
    let logits = hidden.matmul(&params.w2) + &params.b2;
    logits
        .argmax(-1, false)
        .eq(labels)
        .astype(DType::F32)
        .mean(None, false)
}

/// He-initialised weights (the ReLU layer) and LeCun ones (the logits), zero biases.
fn init(key: &Array, dtype: DType) -> Mlp {
    let [k1, k2] = random::split_n::<2>(key);
    Mlp {
        w1: random::normal(&k1, &[PIXELS, HIDDEN], dtype) * (2.0f32 / PIXELS as f32).sqrt(),
        b1: Array::zeros(&[HIDDEN], dtype),
        w2: random::normal(&k2, &[HIDDEN, CLASSES], dtype) * (1.0f32 / HIDDEN as f32).sqrt(),
        b2: Array::zeros(&[CLASSES], dtype),
    }
}

fn main() {
    let args = Args::parse("train_mnist", EPOCHS);
    let path = args.data_path(jaxrs::data::MNIST_5K);
    let (train, test) = mnist::load(&path);
    println!(
        "MNIST: {} digits from {} ({} train, {} held out)",
        train.len() + test.len(),
        path.display(),
        train.len(),
        test.len()
    );
    let (train_x, train_y) = train.arrays();
    let (test_x, test_y) = test.arrays();
    let (train_x, test_x) = (train_x.astype(args.dtype), test_x.astype(args.dtype));

    let [init_key, data_key] = random::split_n::<2>(&random::key(0));
    let params = init(&init_key, args.dtype);
    let fresh = TrainState {
        opt_state: optimizer().init(&params),
        params,
        step: 0,
    };
    let state = load_checkpoint(&args, fresh);
    let (mut params, mut opt_state) = (state.params, state.opt_state);
    let steps_per_epoch = train.len() / BATCH;
    let total = args.total_steps(steps_per_epoch);
    let mut progress = Progress::new(total, BATCH).with_warmup(2);
    // Epochs count on from the checkpoint's, so a resumed run sees new orders.
    let mut epoch = state.step as usize / steps_per_epoch;
    while progress.steps() < total {
        epoch += 1;
        // Each epoch's order is `permutation(fold_in(data_key, epoch))`; the batches are
        // uploaded one step ahead on a background thread.
        let batches = train.epoch(&data_key, epoch as u32, BATCH, Remainder::Drop);
        for batch in batches.take(total - progress.steps()) {
            let x = batch.x.astype(args.dtype);
            let (next, next_state, loss) = train_step(params, opt_state, &x, &batch.y);
            (params, opt_state) = (next, next_state);
            progress.step(&loss);
        }
        let acc = accuracy(&params, &test_x, &test_y).item::<f32>();
        progress.println(format!(
            "epoch {epoch}: held-out accuracy {:.1}%",
            acc * 100.0
        ));
    }
    let summary = progress.finish();
    let train_acc = accuracy(&params, &train_x, &train_y).item::<f32>();
    let test_acc = accuracy(&params, &test_x, &test_y).item::<f32>();
    println!(
        "train accuracy {:.1}%, held-out accuracy {:.1}%; train_step compiled {} time(s)",
        train_acc * 100.0,
        test_acc * 100.0,
        train_step::jit_site().cache_misses()
    );
    if let Err(e) = plot_losses(&args.out.join("loss.png"), &summary.losses) {
        eprintln!("loss curve not written: {e}");
    }
    let state = TrainState {
        params,
        opt_state,
        step: state.step + summary.steps as u64,
    };
    save_checkpoint(&args, &state).unwrap_or_else(|e| panic!("checkpoint: {e}"));
}
