//! What the MNIST examples share: the data file, its split, and a seeded generator.
// Each example includes this file and uses part of it.
#![allow(dead_code)]

use jaxrs::data::ImageSet;
use std::path::{Path, PathBuf};

/// Pixels per image.
pub const PIXELS: usize = 784;
/// Training images; the other 500 of the 5,000 are held out.
pub const TRAIN: usize = 4500;

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

/// The data file: the first command-line argument, else `mnist_5k.csv.gz` in
/// `JAXRS_DATA_DIR`, else in `../shared/data`.
pub fn data_path() -> PathBuf {
    if let Some(p) = std::env::args().nth(1) {
        return p.into();
    }
    jaxrs::data::data_dir().join(jaxrs::data::MNIST_5K)
}

/// Reads the digits with `jaxrs::data::read_mnist` and splits them as `ImageSet::split` does
/// (the file is sorted by label; every tenth row is held out, 50 of each digit): returns the
/// training set and the held-out set.
pub fn load(path: &Path) -> (ImageSet, ImageSet) {
    let digits = jaxrs::data::read_mnist(path).unwrap_or_else(|e| panic!("{e}"));
    digits.split(TRAIN)
}
