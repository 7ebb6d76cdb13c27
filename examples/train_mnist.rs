//! Trains a two-layer MLP on 5,000 MNIST digits (`../shared/data/mnist_5k.csv.gz`): one jitted
//! training step (`value_and_grad` of the loss, then SGD) with the parameters donated, test
//! accuracy each epoch.
//!
//! Run: `cargo run --release --example train_mnist [-- PATH_TO_mnist_5k.csv.gz]`
//! (or set `JAXRS_DATA_DIR` to the folder holding the data sets).

use jaxrs::prelude::*;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
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

/// A small deterministic generator (xorshift64), so runs are reproducible.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Normal samples by Box-Muller.
    fn normal(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n)
            .map(|_| {
                let (u, v) = (self.uniform(), self.uniform());
                ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32 * scale
            })
            .collect()
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, (self.next_u64() % (i as u64 + 1)) as usize);
        }
    }
}

/// The rows `order` of a row-major `[n, 784]` pixel table, and their labels, as arrays.
fn gather(pixels: &[f32], labels: &[i32], order: &[usize]) -> (Array, Array) {
    let mut x = Vec::with_capacity(order.len() * 784);
    for &i in order {
        x.extend_from_slice(&pixels[i * 784..(i + 1) * 784]);
    }
    let y: Vec<i32> = order.iter().map(|&i| labels[i]).collect();
    (
        Array::from_vec(x, &[order.len(), 784]),
        Array::from_vec(y, &[order.len()]),
    )
}

fn data_path() -> PathBuf {
    if let Some(p) = std::env::args().nth(1) {
        return p.into();
    }
    let dir = std::env::var("JAXRS_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data")));
    dir.join("mnist_5k.csv.gz")
}

/// Pixels scaled to [0, 1] and labels, from the gzip CSV (784 pixels then the label).
fn load(path: &PathBuf) -> (Vec<f32>, Vec<i32>) {
    let file =
        std::fs::File::open(path).unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    let (mut pixels, mut labels) = (Vec::new(), Vec::new());
    for line in BufReader::new(flate2::read::GzDecoder::new(file)).lines() {
        let line = line.expect("gzip CSV");
        let values: Vec<f32> = line
            .split(',')
            .map(|v| v.trim().parse().expect("number"))
            .collect();
        assert_eq!(values.len(), 785, "expected 784 pixels and a label");
        pixels.extend(values[..784].iter().map(|p| p / 255.0));
        labels.push(values[784] as i32);
    }
    (pixels, labels)
}

fn main() {
    let path = data_path();
    let (pixels, labels) = load(&path);
    let n = labels.len();
    // The file is sorted by label: shuffle once (seeded) before splitting off a test set.
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let n_test = n / 10;
    let (test_rows, train_rows) = order.split_at(n_test);
    let mut train_rows = train_rows.to_vec();
    println!(
        "MNIST: {n} digits from {} ({} train, {n_test} test)",
        path.display(),
        train_rows.len()
    );
    let (test_x, test_y) = gather(&pixels, &labels, test_rows);

    let mut params = Mlp {
        w1: Array::from_vec(
            rng.normal(784 * HIDDEN, (2.0f32 / 784.0).sqrt()),
            &[784, HIDDEN],
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
            let (x, y) = gather(&pixels, &labels, batch);
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
