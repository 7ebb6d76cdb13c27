//! Trains a two-layer MLP (`jaxrs::nn::Linear` layers) on 5,000 MNIST digits
//! (`../shared/data/mnist_5k.csv.gz`, 4,500 for training and 500 held out): one jitted
//! training step (`value_and_grad` of the loss, then Adam) with the parameters and the
//! optimizer state donated, batches shuffled by a PRNG key and uploaded one step ahead,
//! held-out accuracy each epoch.
//!
//! Run: `cargo run --release --example train_mnist [-- --epochs N --steps N --resume --out DIR
//! --dtype f32|bf16 PATH_TO_mnist_5k.csv.gz]` (or set `JAXRS_DATA_DIR` to the folder holding
//! the data sets). The loss curve goes to `OUT/loss.png`; each epoch's state is saved in the
//! background to `OUT/checkpoints/<step>` (a `jaxrs::checkpoint::CheckpointManager` keeping the
//! last 3), and `--resume` continues from the latest; OUT defaults to `target/train/train_mnist`.

#[path = "common/harness.rs"]
pub mod harness;
#[path = "common/mnist.rs"]
mod mnist;

use harness::{train_classifier, Args, Report, TrainState};
use jaxrs::data::ImageSet;
use jaxrs::nn::{self, init, Linear};
use jaxrs::optim::{self, GradientTransformation};
use jaxrs::prelude::*;
use jaxrs::random;
use mnist::PIXELS;

const HIDDEN: usize = 128;
const CLASSES: usize = 10;
const BATCH: usize = 100;
/// Passes over the training set of a default run.
pub const EPOCHS: usize = 10;
const LEARNING_RATE: f32 = 1e-3;

#[derive(Tree, Clone)]
pub struct Mlp {
    hidden: Linear,
    out: Linear,
}

impl Mlp {
    /// A He-initialised hidden layer (it feeds a ReLU) and flax's default (LeCun) for the
    /// logits, zero biases.
    pub fn init(key: &Array, dtype: DType) -> Mlp {
        let [k1, k2] = random::split_n::<2>(key);
        Mlp {
            hidden: Linear::init_with(&k1, PIXELS, HIDDEN, dtype, &init::he_normal(), true),
            out: Linear::init(&k2, HIDDEN, CLASSES, dtype),
        }
    }

    /// The logits of a batch of flattened images, as f32 whatever the parameters' dtype.
    fn logits(&self, x: &Array) -> Array {
        self.out
            .apply(&self.hidden.apply(x).relu())
            .astype(DType::F32)
    }
}

/// The mean softmax cross-entropy of the MLP on a batch.
fn loss(params: &Mlp, x: &Array, labels: &Array) -> Array {
    nn::softmax_cross_entropy_with_integer_labels(&params.logits(x), labels).mean(None, false)
}

pub type OptState = optim::State<optim::Adam, Mlp>;

pub fn optimizer() -> optim::Adam {
    optim::adam(LEARNING_RATE, 0.9, 0.999, 1e-8)
}

/// One Adam step: the loss and its gradient in one forward and one backward pass, then the
/// update. The parameters and the optimizer's state are donated, so XLA updates them in place.
#[jit(donate = (params, opt_state))]
pub fn train_step(
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
    nn::accuracy(&params.logits(x), labels)
}

/// The MLP's accuracy on a whole set, as a host scalar.
fn accuracy_on(params: &Mlp, set: &ImageSet, dtype: DType) -> f32 {
    let (x, y) = set.arrays();
    accuracy(params, &x.astype(dtype), &y).item::<f32>()
}

/// Trains as `args` says and saves the checkpoint; returns what the run measured.
pub fn run(args: &Args) -> Report {
    let path = args.data_path(jaxrs::data::MNIST_5K);
    let (train, test) = mnist::load_announced(&path, "");
    let [init_key, data_key] = random::split_n::<2>(&random::key(0));
    let params = Mlp::init(&init_key, args.dtype);
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
        "train_step compiled {} time(s)",
        train_step::jit_site().cache_misses()
    );
    report
}

#[allow(dead_code)] // The integration test includes this file and calls `run`.
fn main() {
    let args = Args::parse("train_mnist", EPOCHS);
    let profile = args.start_profile();
    let report = run(&args);
    drop(profile);
    report.print();
}
