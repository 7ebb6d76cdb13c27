//! Trains a small convolutional net on 5,000 MNIST digits (`../shared/data/mnist_5k.csv.gz`,
//! 4,500 for training and 500 held out), built from `jaxrs::nn`: conv 3x3x32, ReLU, 2x2 max
//! pool, conv 3x3x64, ReLU, 2x2 max pool, dense 128, ReLU, dense 10. One jitted training step
//! (`value_and_grad` of the cross-entropy, then Adam) with the parameters and the optimizer
//! state donated, batches shuffled by a PRNG key and uploaded one step ahead, held-out
//! accuracy each epoch.
//!
//! Run: `cargo run --release --example mnist_cnn [-- --epochs N --steps N --resume --out DIR
//! --dtype f32|bf16 PATH_TO_mnist_5k.csv.gz]` (or set `JAXRS_DATA_DIR` to the folder holding
//! the data sets). The loss curve goes to `OUT/loss.png`; each epoch's state is saved in the
//! background to `OUT/checkpoints/<step>` (a `jaxrs::checkpoint::CheckpointManager` keeping the
//! last 3), and `--resume` continues from the latest; OUT defaults to `target/train/mnist_cnn`.

#[path = "common/harness.rs"]
pub mod harness;
#[path = "common/mnist.rs"]
mod mnist;

use harness::{train_classifier, Args, Report, TrainState};
use jaxrs::data::ImageSet;
use jaxrs::nn::{self, max_pool, Conv2d, Linear};
use jaxrs::optim::{self, GradientTransformation};
use jaxrs::prelude::*;
use jaxrs::{random, Padding};

const SIDE: usize = 28;
const CONV1: usize = 32;
const CONV2: usize = 64;
const HIDDEN: usize = 128;
const CLASSES: usize = 10;
const BATCH: usize = 50;
/// Passes over the training set of a default run.
pub const EPOCHS: usize = 5;
const LEARNING_RATE: f64 = 1e-3;
/// The learning rate decays (cosine) to this fraction of [`LEARNING_RATE`] over a default
/// run's steps, and stays there after: the last epochs settle instead of jittering.
const FINAL_RATE_FRACTION: f64 = 0.1;
/// Evaluation runs over slices of this many images, so one compiled program serves the
/// held-out set and the training set alike and the activations stay small.
const EVAL_BATCH: usize = 500;

#[derive(Tree, Clone)]
struct Cnn {
    conv1: Conv2d,
    conv2: Conv2d,
    hidden: Linear,
    out: Linear,
}

impl Cnn {
    /// flax's default initialisers (LeCun-normal kernels, zero biases).
    fn init(key: &Array, dtype: DType) -> Cnn {
        let [k1, k2, k3, k4] = random::split_n::<4>(key);
        // Two 2x2 poolings take 28x28 to 7x7.
        let flat = (SIDE / 4) * (SIDE / 4) * CONV2;
        Cnn {
            conv1: Conv2d::init(&k1, 3, 3, 1, CONV1, dtype),
            conv2: Conv2d::init(&k2, 3, 3, CONV1, CONV2, dtype),
            hidden: Linear::init(&k3, flat, HIDDEN, dtype),
            out: Linear::init(&k4, HIDDEN, CLASSES, dtype),
        }
    }

    /// The logits of a batch of flattened images `[batch, 784]`, as f32 whatever the
    /// parameters' dtype.
    fn logits(&self, x: &Array) -> Array {
        let batch = x.shape()[0];
        let pool = |y: Array| max_pool(&y, &[2, 2], &[2, 2], Padding::Valid);
        let y = x.reshape([batch, SIDE, SIDE, 1]);
        let y = pool(self.conv1.apply(&y).relu());
        let y = pool(self.conv2.apply(&y).relu());
        let y = y.reshape([batch, y.size() / batch]);
        self.out
            .apply(&self.hidden.apply(&y).relu())
            .astype(DType::F32)
    }
}

/// The mean softmax cross-entropy of the net on a batch.
fn loss(params: &Cnn, x: &Array, labels: &Array) -> Array {
    nn::softmax_cross_entropy_with_integer_labels(&params.logits(x), labels).mean(None, false)
}

type OptState = optim::State<optim::Adam, Cnn>;

fn optimizer() -> optim::Adam {
    let decay_steps = (EPOCHS * mnist::TRAIN / BATCH) as i32;
    let rate = optim::cosine_decay_schedule(LEARNING_RATE, decay_steps, FINAL_RATE_FRACTION, 1.0);
    optim::adam(rate, 0.9, 0.999, 1e-8)
}

/// One Adam step: the loss and its gradient in one forward and one backward pass, then the
/// update. The parameters and the optimizer's state are donated, so XLA updates them in place.
#[jit(donate = (params, opt_state))]
fn train_step(
    params: Cnn,
    opt_state: OptState,
    x: &Array,
    labels: &Array,
) -> (Cnn, OptState, Array) {
    let (value, grads) = value_and_grad(|p: Cnn| loss(&p, x, labels))(params.clone());
    let (updates, opt_state) = optimizer().update(grads, opt_state, Some(&params));
    (optim::apply_updates(&params, &updates), opt_state, value)
}

/// The number of correct predictions in a batch (a sum, so slices add up exactly).
#[jit]
fn correct(params: &Cnn, x: &Array, labels: &Array) -> Array {
    nn::accuracy(&params.logits(x), labels) * x.shape()[0] as f32
}

/// The net's accuracy on a whole set, evaluated `EVAL_BATCH` images at a time (both sets
/// are multiples of it, so one program serves all slices), as a host scalar.
fn accuracy_on(params: &Cnn, set: &ImageSet, dtype: DType) -> f32 {
    let rows: Vec<usize> = (0..set.len()).collect();
    let total = rows
        .chunks(EVAL_BATCH)
        .map(|slice| {
            let (x, y) = set.gather(slice);
            correct(params, &x.astype(dtype), &y)
        })
        .fold(Array::zeros(&[], DType::F32), |total, n| total + n);
    total.item::<f32>() / set.len() as f32
}

/// Trains as `args` says and saves the checkpoint; returns what the run measured.
pub fn run(args: &Args) -> Report {
    let path = args.data_path(jaxrs::data::MNIST_5K);
    let (train, test) = mnist::load_announced(&path, "");
    let [init_key, data_key] = random::split_n::<2>(&random::key(0));
    let params = Cnn::init(&init_key, args.dtype);
    let fresh = TrainState {
        opt_state: optimizer().init(&params),
        params,
        step: 0,
    };
    let report = train_classifier(
        args,
        (&train, &test),
        BATCH,
        fresh,
        &data_key,
        train_step,
        |params, set| accuracy_on(params, set, args.dtype),
    );
    println!(
        "train_step compiled {} time(s), the evaluation {} time(s)",
        train_step::jit_site().cache_misses(),
        correct::jit_site().cache_misses()
    );
    report
}

#[allow(dead_code)] // The integration test includes this file and calls `run`.
fn main() {
    let args = Args::parse("mnist_cnn", EPOCHS);
    let profile = args.start_profile();
    let report = run(&args);
    drop(profile);
    report.print();
}
