//! Trains a two-layer MLP on 5,000 MNIST digits (`../shared/data/mnist_5k.csv.gz`): one jitted
//! training step (`value_and_grad` of the loss, then SGD) with the parameters donated, test
//! accuracy each epoch.
//!
//! Run: `cargo run --release --example train_mnist [-- PATH_TO_mnist_5k.csv.gz]`
//! (or set `JAXRS_DATA_DIR` to the folder holding the data sets).

#[path = "common/mnist.rs"]
mod mnist;

use jaxrs::prelude::*;
use mnist::{Rng, PIXELS};
use std::time::Instant;

const HIDDEN: usize = 128;
const CLASSES: usize = 10;
const BATCH: usize = 100;
const EPOCHS: usize = 10;
const LEARNING_RATE: f32 = 0.1;

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
    let logits = hidden.matmul(&params.w2) + &params.b2;
    let targets = Array::one_hot(labels, CLASSES, DType::F32);
    -(targets * logits.log_softmax(-1))
        .sum(-1, false)
        .mean(None, false)
}

/// One SGD step: the loss and its gradient in one forward and one backward pass, then the
/// update. The parameters are donated, so XLA updates them in place.
#[jit(donate = params)]
fn train_step(params: Mlp, x: &Array, labels: &Array, lr: f32) -> (Mlp, Array) {
    let (value, grads) = value_and_grad(|p: Mlp| loss(&p, x, labels))(params.clone());
    (tree_map2(&params, &grads, |p, g| p - g * lr), value)
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

fn main() {
    let path = mnist::data_path();
    let (train, test) = mnist::load(&path);
    let n = train.len() + test.len();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut train_rows: Vec<usize> = (0..train.len()).collect();
    println!(
        "MNIST: {n} digits from {} ({} train, {} test)",
        path.display(),
        train.len(),
        test.len()
    );
    let (test_x, test_y) = test.arrays();

    let mut params = Mlp {
        w1: Array::from_vec(
            rng.normal(PIXELS * HIDDEN, (2.0f32 / PIXELS as f32).sqrt()),
            &[PIXELS, HIDDEN],
        ),
        b1: Array::zeros(&[HIDDEN], DType::F32),
        w2: Array::from_vec(
            rng.normal(HIDDEN * CLASSES, (1.0f32 / HIDDEN as f32).sqrt()),
            &[HIDDEN, CLASSES],
        ),
        b2: Array::zeros(&[CLASSES], DType::F32),
    };
    let batches = train_rows.len() / BATCH;
    let start = Instant::now();
    for epoch in 1..=EPOCHS {
        rng.shuffle(&mut train_rows);
        let mut total = 0.0;
        for batch in train_rows.chunks_exact(BATCH) {
            let (x, y) = train.gather(batch);
            let (p, loss) = train_step(params, &x, &y, LEARNING_RATE);
            params = p;
            total += loss.item::<f32>();
        }
        let acc = accuracy(&params, &test_x, &test_y).item::<f32>();
        println!(
            "epoch {epoch}: train loss {:.4}, test accuracy {:.1}%",
            total / batches as f32,
            acc * 100.0
        );
    }
    println!(
        "{EPOCHS} epochs in {:.2?}; train_step compiled {} time(s)",
        start.elapsed(),
        train_step::jit_site().cache_misses()
    );
}
