//! What the MNIST examples share: the data file and its split.
// Each example includes this file and uses part of it.
#![allow(dead_code)]

use jaxrs::data::ImageSet;
use std::path::{Path, PathBuf};

/// Pixels per image.
pub const PIXELS: usize = 784;
/// Training images; the other 500 of the 5,000 are held out.
pub const TRAIN: usize = 4500;

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

/// [`load`], then says what was read: `MNIST: 5000 digits from PATH (4500 train, 500 held
/// out)`, followed by `detail` where given.
pub fn load_announced(path: &Path, detail: &str) -> (ImageSet, ImageSet) {
    let (train, test) = load(path);
    println!(
        "MNIST: {} digits from {} ({} train, {} held out){detail}",
        train.len() + test.len(),
        path.display(),
        train.len(),
        test.len()
    );
    (train, test)
}
