//! Trees saved and loaded as [safetensors](https://huggingface.co/docs/safetensors) files.
//!
//! Each leaf is one tensor, named by its path in the tree ([`tree_paths`]: `layers.0.w`,
//! `opt.1.mu.b`), stored in its own dtype (`bf16`, `u32` PRNG keys and `i32` step counts
//! included) and read back bit for bit. The file's metadata holds the training step and any
//! strings of yours. Loading fills a template tree of the structure you expect (the freshly
//! initialised parameters, say), and any difference — a tensor missing or extra, another
//! shape or dtype — is an error naming the first one. Files written by Python's
//! `safetensors.numpy.save_file` or `safetensors.torch.save_file` load the same way.
//!
//! A tree's static fields (Rust scalars, `bool`s, `String`s: see [`Tree`]) are not tensors:
//! they are not saved, and loading takes them from the template, as it takes the structure.
//!
//! ```
//! use jaxrs::checkpoint::{self, Metadata};
//! use jaxrs::prelude::*;
//!
//! #[derive(Tree, Clone)]
//! struct Params { w: Array, b: Array }
//!
//! let params = Params {
//!     w: Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]),
//!     b: Array::from_vec(vec![0.5f32, -0.5], &[2]).astype(DType::BF16),
//! };
//! let path = std::env::temp_dir().join(format!("jaxrs-doc-{}.safetensors", std::process::id()));
//! let meta = Metadata::at_step(1000).with("model", "linear");
//! checkpoint::save(&path, &params, &meta).unwrap();
//!
//! let template = Params { w: Array::zeros(&[2, 2], DType::F32), b: Array::zeros(&[2], DType::BF16) };
//! let (restored, meta) = checkpoint::load(&path, &template).unwrap();
//! assert_eq!(restored.w.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 4.0]);
//! assert_eq!(restored.b.dtype(), DType::BF16);
//! assert_eq!((meta.step, meta.strings["model"].as_str()), (Some(1000), "linear"));
//! # std::fs::remove_file(&path).unwrap();
//! ```

use crate::{tree_paths, try_tree_unflatten, Array, DType, Tree};
use half::{bf16, f16};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::Path;

/// The metadata key that holds [`Metadata::step`].
const STEP_KEY: &str = "step";

/// What a checkpoint says besides its tensors: the training step and free-form strings (the
/// safetensors header's `__metadata__`, the step under the key `"step"`).
///
/// ```
/// use jaxrs::checkpoint::Metadata;
///
/// let meta = Metadata::at_step(5).with("dataset", "mnist");
/// assert_eq!(meta.step, Some(5));
/// assert_eq!(meta.strings["dataset"], "mnist");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata {
    /// The training step, if recorded.
    pub step: Option<u64>,
    /// Any other strings, by key.
    pub strings: BTreeMap<String, String>,
}

impl Metadata {
    /// Metadata recording `step`.
    pub fn at_step(step: u64) -> Metadata {
        Metadata {
            step: Some(step),
            strings: BTreeMap::new(),
        }
    }

    /// This metadata with `key` set to `value`.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Metadata {
        self.strings.insert(key.into(), value.into());
        self
    }

    fn to_header(&self) -> HashMap<String, String> {
        let mut header: HashMap<String, String> = self
            .strings
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(step) = self.step {
            header.insert(STEP_KEY.to_string(), step.to_string());
        }
        header
    }

    fn from_header(header: Option<&HashMap<String, String>>) -> Metadata {
        let mut meta = Metadata::default();
        for (k, v) in header.into_iter().flatten() {
            match (k.as_str(), v.parse::<u64>()) {
                (STEP_KEY, Ok(step)) => meta.step = Some(step),
                _ => {
                    meta.strings.insert(k.clone(), v.clone());
                }
            }
        }
        meta
    }
}

/// Why a checkpoint could not be written or read.
///
/// ```
/// use jaxrs::checkpoint::{self, CheckpointError};
/// use jaxrs::prelude::*;
///
/// let err = checkpoint::from_bytes(b"not a checkpoint", &Array::scalar(0.0f32)).unwrap_err();
/// assert!(matches!(err, CheckpointError::Format(_)));
/// ```
#[derive(Debug)]
pub enum CheckpointError {
    /// The file could not be read or written.
    Io(std::io::Error),
    /// The bytes are not a valid safetensors file, or the tree cannot be stored as one.
    Format(String),
    /// The file does not hold the tree the template describes: the first difference.
    Mismatch(String),
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Io(e) => write!(f, "checkpoint: {e}"),
            CheckpointError::Format(m) => write!(f, "checkpoint: {m}"),
            CheckpointError::Mismatch(m) => {
                write!(f, "checkpoint does not match the template: {m}")
            }
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckpointError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for CheckpointError {
    fn from(e: std::io::Error) -> CheckpointError {
        CheckpointError::Io(e)
    }
}

fn format_error(e: impl fmt::Display) -> CheckpointError {
    CheckpointError::Format(e.to_string())
}

fn safetensors_dtype(dtype: DType) -> Dtype {
    match dtype {
        DType::Bool => Dtype::BOOL,
        DType::I8 => Dtype::I8,
        DType::I16 => Dtype::I16,
        DType::I32 => Dtype::I32,
        DType::I64 => Dtype::I64,
        DType::U8 => Dtype::U8,
        DType::U16 => Dtype::U16,
        DType::U32 => Dtype::U32,
        DType::U64 => Dtype::U64,
        DType::BF16 => Dtype::BF16,
        DType::F16 => Dtype::F16,
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
    }
}

/// A leaf's elements as little-endian bytes, as safetensors stores them.
fn leaf_bytes(x: &Array) -> Vec<u8> {
    fn le<T, const N: usize>(v: Vec<T>, bytes: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        v.into_iter().flat_map(bytes).collect()
    }
    match x.dtype() {
        DType::Bool => x.to_vec::<bool>().into_iter().map(u8::from).collect(),
        DType::I8 => le(x.to_vec::<i8>(), i8::to_le_bytes),
        DType::I16 => le(x.to_vec::<i16>(), i16::to_le_bytes),
        DType::I32 => le(x.to_vec::<i32>(), i32::to_le_bytes),
        DType::I64 => le(x.to_vec::<i64>(), i64::to_le_bytes),
        DType::U8 => x.to_vec::<u8>(),
        DType::U16 => le(x.to_vec::<u16>(), u16::to_le_bytes),
        DType::U32 => le(x.to_vec::<u32>(), u32::to_le_bytes),
        DType::U64 => le(x.to_vec::<u64>(), u64::to_le_bytes),
        DType::BF16 => le(x.to_vec::<bf16>(), bf16::to_le_bytes),
        DType::F16 => le(x.to_vec::<f16>(), f16::to_le_bytes),
        DType::F32 => le(x.to_vec::<f32>(), f32::to_le_bytes),
        DType::F64 => le(x.to_vec::<f64>(), f64::to_le_bytes),
    }
}

/// An array of `dtype` and `shape` from little-endian bytes (their length already checked).
fn leaf_from_bytes(data: &[u8], dtype: DType, shape: &[usize]) -> Array {
    fn from<T: crate::Element, const N: usize>(
        data: &[u8],
        shape: &[usize],
        value: impl Fn([u8; N]) -> T,
    ) -> Array {
        let v: Vec<T> = data
            .chunks_exact(N)
            .map(|c| value(c.try_into().unwrap()))
            .collect();
        Array::from_vec(v, shape)
    }
    match dtype {
        DType::Bool => from(data, shape, |[b]: [u8; 1]| b != 0),
        DType::I8 => from(data, shape, i8::from_le_bytes),
        DType::I16 => from(data, shape, i16::from_le_bytes),
        DType::I32 => from(data, shape, i32::from_le_bytes),
        DType::I64 => from(data, shape, i64::from_le_bytes),
        DType::U8 => from(data, shape, u8::from_le_bytes),
        DType::U16 => from(data, shape, u16::from_le_bytes),
        DType::U32 => from(data, shape, u32::from_le_bytes),
        DType::U64 => from(data, shape, u64::from_le_bytes),
        DType::BF16 => from(data, shape, bf16::from_le_bytes),
        DType::F16 => from(data, shape, f16::from_le_bytes),
        DType::F32 => from(data, shape, f32::from_le_bytes),
        DType::F64 => from(data, shape, f64::from_le_bytes),
    }
}

/// The tree as the bytes of a safetensors file, with `metadata` in its header.
///
/// ```
/// use jaxrs::checkpoint::{self, Metadata};
/// use jaxrs::prelude::*;
///
/// let key = Array::from_vec(vec![0u32, 42], &[2]);
/// let bytes = checkpoint::to_bytes(&(key.clone(),), &Metadata::default()).unwrap();
/// let (back, _) = checkpoint::from_bytes(&bytes, &(Array::zeros(&[2], DType::U32),)).unwrap();
/// assert_eq!(back.0.to_vec::<u32>(), vec![0, 42]);
/// ```
pub fn to_bytes<T: Tree>(tree: &T, metadata: &Metadata) -> Result<Vec<u8>, CheckpointError> {
    let (leaves, _) = tree.flatten();
    let names = tree_paths(tree);
    let mut seen = HashSet::new();
    if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(CheckpointError::Format(format!(
            "two leaves have the path `{dup}` (map keys with dots?)"
        )));
    }
    let bytes: Vec<Vec<u8>> = leaves.iter().map(leaf_bytes).collect();
    let views = names
        .iter()
        .zip(&leaves)
        .zip(&bytes)
        .map(|((name, leaf), data)| {
            let view =
                TensorView::new(safetensors_dtype(leaf.dtype()), leaf.shape().to_vec(), data);
            Ok((name.as_str(), view.map_err(format_error)?))
        })
        .collect::<Result<Vec<_>, CheckpointError>>()?;
    safetensors::tensor::serialize(views, Some(metadata.to_header())).map_err(format_error)
}

/// Writes the tree to a safetensors file at `path`, with `metadata` in its header.
///
/// ```
/// use jaxrs::checkpoint::{self, Metadata};
/// use jaxrs::prelude::*;
///
/// let path = std::env::temp_dir().join(format!("jaxrs-save-{}.safetensors", std::process::id()));
/// checkpoint::save(&path, &vec![Array::ones(&[3], DType::F32)], &Metadata::at_step(1)).unwrap();
/// assert_eq!(checkpoint::load_metadata(&path).unwrap().step, Some(1));
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn save<T: Tree>(
    path: impl AsRef<Path>,
    tree: &T,
    metadata: &Metadata,
) -> Result<(), CheckpointError> {
    std::fs::write(path, to_bytes(tree, metadata)?)?;
    Ok(())
}

/// Reads a tree of the structure, shapes and dtypes of `template` from safetensors bytes,
/// with the file's metadata. Every leaf of the template must have a tensor of its path,
/// shape and dtype, and the file no other tensor; the error names the first that does not.
///
/// ```
/// use jaxrs::checkpoint::{self, CheckpointError, Metadata};
/// use jaxrs::prelude::*;
///
/// let bytes = checkpoint::to_bytes(&(Array::ones(&[3], DType::F32),), &Metadata::default()).unwrap();
/// let err = checkpoint::from_bytes(&bytes, &(Array::ones(&[4], DType::F32),)).unwrap_err();
/// assert!(matches!(err, CheckpointError::Mismatch(_)));
/// assert_eq!(
///     err.to_string(),
///     "checkpoint does not match the template: tensor `0` has shape [3] in the checkpoint, [4] in the template"
/// );
/// ```
pub fn from_bytes<T: Tree>(bytes: &[u8], template: &T) -> Result<(T, Metadata), CheckpointError> {
    let (_, header) = SafeTensors::read_metadata(bytes).map_err(format_error)?;
    let file = SafeTensors::deserialize(bytes).map_err(format_error)?;
    let (template_leaves, def) = template.flatten();
    let names = tree_paths(template);
    let mut leaves = Vec::with_capacity(names.len());
    for (name, want) in names.iter().zip(&template_leaves) {
        let view = file.tensor(name).map_err(|_| {
            CheckpointError::Mismatch(format!(
                "tensor `{name}` ({}{:?}) is missing from the checkpoint",
                want.dtype().name(),
                want.shape()
            ))
        })?;
        if view.dtype() != safetensors_dtype(want.dtype()) {
            let found = DType::ALL
                .into_iter()
                .find(|d| safetensors_dtype(*d) == view.dtype())
                .map_or_else(|| view.dtype().to_string(), |d| d.name().to_string());
            return Err(CheckpointError::Mismatch(format!(
                "tensor `{name}` has dtype {found} in the checkpoint, {} in the template",
                want.dtype().name()
            )));
        }
        if view.shape() != want.shape() {
            return Err(CheckpointError::Mismatch(format!(
                "tensor `{name}` has shape {:?} in the checkpoint, {:?} in the template",
                view.shape(),
                want.shape()
            )));
        }
        leaves.push(leaf_from_bytes(view.data(), want.dtype(), want.shape()));
    }
    let wanted: HashSet<&str> = names.iter().map(String::as_str).collect();
    let mut extra: Vec<&str> = file
        .names()
        .into_iter()
        .filter(|n| !wanted.contains(n))
        .collect();
    extra.sort_unstable();
    if let Some(name) = extra.first() {
        return Err(CheckpointError::Mismatch(format!(
            "tensor `{name}` in the checkpoint is not in the template"
        )));
    }
    let tree =
        try_tree_unflatten(&def, leaves).map_err(|e| CheckpointError::Mismatch(e.to_string()))?;
    Ok((tree, Metadata::from_header(header.metadata().as_ref())))
}

/// Reads a tree of the structure, shapes and dtypes of `template` from the safetensors file
/// at `path`, with the file's metadata; see [`from_bytes`] for what must match.
///
/// ```
/// use jaxrs::checkpoint::{self, Metadata};
/// use jaxrs::prelude::*;
///
/// let path = std::env::temp_dir().join(format!("jaxrs-load-{}.safetensors", std::process::id()));
/// let steps = Array::scalar(7i32);
/// checkpoint::save(&path, &steps, &Metadata::default()).unwrap();
/// let (back, meta) = checkpoint::load(&path, &Array::scalar(0i32)).unwrap();
/// assert_eq!((back.item::<i32>(), meta.step), (7, None));
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn load<T: Tree>(
    path: impl AsRef<Path>,
    template: &T,
) -> Result<(T, Metadata), CheckpointError> {
    from_bytes(&std::fs::read(path)?, template)
}

/// The metadata of the safetensors file at `path`, without reading its tensors' data into
/// arrays.
///
/// ```
/// use jaxrs::checkpoint::{self, Metadata};
/// use jaxrs::prelude::*;
///
/// let path = std::env::temp_dir().join(format!("jaxrs-meta-{}.safetensors", std::process::id()));
/// checkpoint::save(&path, &Array::scalar(1.0f32), &Metadata::at_step(3).with("run", "a")).unwrap();
/// let meta = checkpoint::load_metadata(&path).unwrap();
/// assert_eq!((meta.step, meta.strings["run"].as_str()), (Some(3), "a"));
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn load_metadata(path: impl AsRef<Path>) -> Result<Metadata, CheckpointError> {
    let bytes = std::fs::read(path)?;
    let (_, header) = SafeTensors::read_metadata(&bytes).map_err(format_error)?;
    Ok(Metadata::from_header(header.metadata().as_ref()))
}
