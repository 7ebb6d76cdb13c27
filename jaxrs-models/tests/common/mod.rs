//! Where the committed goldens are, and reading them.

#![allow(dead_code)]

use std::path::PathBuf;

/// The folder of a golden model written by `tests/golden/gen_hf.py`.
pub fn golden_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/hf")
        .join(name)
}

/// The tensors of a golden's `expected.safetensors`.
pub struct Expected {
    bytes: Vec<u8>,
}

impl Expected {
    pub fn load(name: &str) -> Expected {
        let path = golden_dir(name).join("expected.safetensors");
        Expected {
            bytes: std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        }
    }

    fn raw(&self, name: &str) -> (Vec<usize>, Vec<u8>) {
        let st = safetensors::SafeTensors::deserialize(&self.bytes).unwrap();
        let t = st.tensor(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        (t.shape().to_vec(), t.data().to_vec())
    }

    pub fn f32s(&self, name: &str) -> (Vec<usize>, Vec<f32>) {
        let (shape, data) = self.raw(name);
        (
            shape,
            data.chunks(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect(),
        )
    }

    pub fn ids(&self, name: &str) -> Vec<u32> {
        let (_, data) = self.raw(name);
        data.chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()) as u32)
            .collect()
    }
}

/// The largest of `|a - b| / (1 + |b|)`.
pub fn worst_relative(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / (1.0 + y.abs()))
        .fold(0.0, f32::max)
}
