//! What the MNIST examples share: the data file, its reader, a seeded generator and batching.
// Each example includes this file and uses part of it.
#![allow(dead_code)]

use jaxrs::prelude::*;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

/// Pixels per image.
pub const PIXELS: usize = 784;

/// A small deterministic generator (xorshift64), so runs are reproducible.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Normal samples by Box-Muller.
    pub fn normal(&mut self, n: usize, scale: f32) -> Vec<f32> {
        (0..n)
            .map(|_| {
                let (u, v) = (self.uniform(), self.uniform());
                ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32 * scale
            })
            .collect()
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, (self.next_u64() % (i as u64 + 1)) as usize);
        }
    }
}

/// The digits: pixels scaled to [0, 1] (row-major `[n, 784]`) and labels.
pub struct Digits {
    pub pixels: Vec<f32>,
    pub labels: Vec<i32>,
}

impl Digits {
    /// The rows `order`, and their labels, as arrays.
    pub fn gather(&self, order: &[usize]) -> (Array, Array) {
        let mut x = Vec::with_capacity(order.len() * PIXELS);
        for &i in order {
            x.extend_from_slice(&self.pixels[i * PIXELS..(i + 1) * PIXELS]);
        }
        let y: Vec<i32> = order.iter().map(|&i| self.labels[i]).collect();
        (
            Array::from_vec(x, &[order.len(), PIXELS]),
            Array::from_vec(y, &[order.len()]),
        )
    }
}

/// The data file: the first command-line argument, else `mnist_5k.csv.gz` in
/// `JAXRS_DATA_DIR`, else in `../shared/data`.
pub fn data_path() -> PathBuf {
    if let Some(p) = std::env::args().nth(1) {
        return p.into();
    }
    let dir = std::env::var("JAXRS_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data")));
    dir.join("mnist_5k.csv.gz")
}

/// Reads the gzip CSV (784 pixels then the label on each line).
pub fn load(path: &PathBuf) -> Digits {
    let file =
        std::fs::File::open(path).unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    let (mut pixels, mut labels) = (Vec::new(), Vec::new());
    for line in BufReader::new(flate2::read::GzDecoder::new(file)).lines() {
        let line = line.expect("gzip CSV");
        let values: Vec<f32> = line
            .split(',')
            .map(|v| v.trim().parse().expect("number"))
            .collect();
        assert_eq!(values.len(), PIXELS + 1, "expected 784 pixels and a label");
        pixels.extend(values[..PIXELS].iter().map(|p| p / 255.0));
        labels.push(values[PIXELS] as i32);
    }
    Digits { pixels, labels }
}

/// The file is sorted by label: a seeded shuffle, then a tenth held out for testing. Returns
/// the test rows and the training rows.
pub fn split(n: usize, rng: &mut Rng) -> (Vec<usize>, Vec<usize>) {
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let train = order.split_off(n / 10);
    (order, train)
}
