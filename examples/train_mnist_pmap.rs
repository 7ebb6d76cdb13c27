//! Trains the MNIST MLP of `train_mnist` data-parallel over 8 CPU devices, as the seed's §5
//! does with `jax.pmap`: each global batch of 128 digits is split 8 ways (16 per device),
//! every device computes the loss and gradients of its slice, `pmean` averages them across
//! the devices, and every device applies the same SGD update to its replica of the
//! parameters. The parameters stay split over the devices (donated to each next step); only
//! the scalar loss comes back to the host.
//!
//! Beside it, the same steps run on one device over the whole global batches; the example
//! prints the largest difference between the two runs' losses and fails if they disagree
//! beyond float tolerance (the sums run in a different order, nothing more).
//!
//! Run: `cargo run --release --example train_mnist_pmap [-- PATH_TO_mnist_5k.csv.gz]`
//! (or set `JAXRS_DATA_DIR` to the folder holding the data sets).

#[path = "common/mnist.rs"]
mod mnist;

use jaxrs::data::Remainder;
use jaxrs::prelude::*;
use jaxrs::random;
use mnist::PIXELS;
use std::time::{Duration, Instant};

const DEVICES: usize = 8;
const LOCAL_BATCH: usize = 16;
const HIDDEN: usize = 128;
const CLASSES: usize = 10;
const EPOCHS: usize = 5;
const LEARNING_RATE: f32 = 0.1;
/// How far the two runs' losses may drift apart (relative): summation order only.
const TOLERANCE: f32 = 1e-4;

#[derive(Tree, Clone)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
}

fn logits(params: &Mlp, x: &Array) -> Array {
    let hidden = (x.matmul(&params.w1) + &params.b1).relu();
    hidden.matmul(&params.w2) + &params.b2
}

/// The mean softmax cross-entropy of the MLP on a batch.
fn loss(params: &Mlp, x: &Array, labels: &Array) -> Array {
    let targets = Array::one_hot(labels, CLASSES, DType::F32);
    -(targets * logits(params, x).log_softmax(-1))
        .sum(-1, false)
        .mean(None, false)
}

/// One device's step on its slice; `pmean` over `"devices"` makes it the global step. The
/// loss comes back once (`out_axes = None`: every device holds the same value).
#[pmap(axis_name = "devices", in_axes = (0, 0, 0, None), out_axes = (0, None), donate = params)]
fn parallel_step(params: Mlp, x: &Array, labels: &Array, lr: f32) -> (Mlp, Array) {
    let (value, grads) = value_and_grad(|p: Mlp| loss(&p, x, labels))(params.clone());
    let grads = pmean(&grads, "devices");
    (
        tree_map2(&params, &grads, |p, g| p - g * lr),
        pmean(&value, "devices"),
    )
}

/// The same step on one device over the whole global batch.
#[jit(donate = params)]
fn single_step(params: Mlp, x: &Array, labels: &Array, lr: f32) -> (Mlp, Array) {
    let (value, grads) = value_and_grad(|p: Mlp| loss(&p, x, labels))(params.clone());
    (tree_map2(&params, &grads, |p, g| p - g * lr), value)
}

#[jit]
fn accuracy(params: &Mlp, x: &Array, labels: &Array) -> Array {
    logits(params, x)
        .argmax(-1, false)
        .eq(labels)
        .astype(DType::F32)
        .mean(None, false)
}

/// Device 0's replica of the parameters (all replicas are equal).
fn first_replica(params: &Mlp) -> Mlp {
    tree_map(params, |p| {
        p.addressable_shards()[0].data.reshape(&p.shape()[1..])
    })
}

fn main() -> jaxrs::Result<()> {
    jaxrs::set_cpu_device_count(DEVICES)?;
    let path = mnist::data_path();
    let global_batch = DEVICES * LOCAL_BATCH;
    let (train, test) = mnist::load_announced(
        &path,
        &format!("; global batch {global_batch} split over {DEVICES} CPU devices"),
    );
    let [init_key, data_key] = random::split_n::<2>(&random::key(0));
    let (test_x, test_y) = test.arrays();

    // He-initialised weights (the ReLU layer) and LeCun ones (the logits), zero biases.
    let [k1, k2] = random::split_n::<2>(&init_key);
    let init = Mlp {
        w1: random::normal(&k1, &[PIXELS, HIDDEN], DType::F32) * (2.0f32 / PIXELS as f32).sqrt(),
        b1: Array::zeros(&[HIDDEN], DType::F32),
        w2: random::normal(&k2, &[HIDDEN, CLASSES], DType::F32) * (1.0f32 / HIDDEN as f32).sqrt(),
        b2: Array::zeros(&[CLASSES], DType::F32),
    };
    // One replica per device, stacked along a new leading axis; the first step splits it.
    let mut params = tree_map(&init, |p| {
        let mut shape = vec![DEVICES];
        shape.extend_from_slice(p.shape());
        p.broadcast_to(&shape)
    });
    let mut single = init;
    let (mut parallel_time, mut single_time) = (Duration::ZERO, Duration::ZERO);
    let mut worst = 0.0f32;
    for epoch in 1..=EPOCHS {
        let (mut total, mut steps) = (0.0, 0);
        // Each epoch's order is `permutation(fold_in(data_key, epoch))`; the batches are
        // uploaded one step ahead on a background thread.
        for batch in train.epoch(&data_key, epoch as u32, global_batch, Remainder::Drop) {
            let (x, y) = (batch.x, batch.y);
            let (xs, ys) = (
                x.reshape([DEVICES, LOCAL_BATCH, PIXELS]),
                y.reshape([DEVICES, LOCAL_BATCH]),
            );
            let t = Instant::now();
            let (p, parallel_loss) = parallel_step(params, &xs, &ys, LEARNING_RATE);
            params = p;
            let parallel_loss = parallel_loss.item::<f32>();
            parallel_time += t.elapsed();

            let t = Instant::now();
            let (s, single_loss) = single_step(single, &x, &y, LEARNING_RATE);
            single = s;
            let single_loss = single_loss.item::<f32>();
            single_time += t.elapsed();

            worst = worst.max((parallel_loss - single_loss).abs() / single_loss.abs().max(1e-6));
            total += parallel_loss;
            steps += 1;
        }
        let acc = accuracy(&first_replica(&params), &test_x, &test_y).item::<f32>();
        println!(
            "epoch {epoch}: train loss {:.4}, test accuracy {:.1}%",
            total / steps as f32,
            acc * 100.0
        );
    }
    let shards = params.w1.addressable_shards();
    println!(
        "w1 is {:?}, split over {} devices ({:?} each); parallel_step compiled {} time(s)",
        params.w1.shape(),
        shards.len(),
        shards[0].data.shape(),
        parallel_step::pmap_site().cache_misses()
    );
    println!(
        "time in steps: {parallel_time:.2?} on {DEVICES} devices, {single_time:.2?} on one \
         (this machine's cores are shared by the {DEVICES} CPU devices)"
    );
    println!(
        "losses of the {DEVICES}-device run and the single-device run on the same global \
         batches: largest relative difference {worst:.2e} (tolerance {TOLERANCE:.0e})"
    );
    assert!(
        worst <= TOLERANCE,
        "the data-parallel run drifted from the single-device run"
    );
    println!("they agree to float tolerance");
    Ok(())
}
