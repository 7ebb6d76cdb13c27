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
//! Sharded arrays are saved shard by shard, and restored onto the layout of the template's
//! leaves, whatever the layout they were saved from ([`save`], [`load`]): the file is the
//! same safetensors file either way.
//!
//! A training run keeps its checkpoints with a [`CheckpointManager`] (Orbax's): one folder per
//! step, written atomically, saved in the background, old steps deleted by a retention policy.
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

use crate::{tree_paths, try_tree_unflatten, Array, DType, HostArray, Sharding, Tree, C128, C64};
use half::{bf16, f16};
use jaxrs_runtime::fs_safety::{AtomicFile, PathError, WithPath};
use safetensors::tensor::{Dtype, Metadata as Header, TensorInfo, TensorView};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

mod manager;
pub use manager::{
    BestFn, BestMode, CheckpointManager, CheckpointManagerOptions, SaveArgs, StepMetadata,
    MAX_STEP_METADATA_BYTES,
};

/// The largest safetensors header [`load`] reads: 16 MiB, room for about 100,000 tensors
/// (the largest published models have a few thousand per file). Checked against the
/// header's length prefix before anything is allocated, so a hostile file costs nothing to
/// refuse.
pub const MAX_HEADER_BYTES: usize = 16 << 20;

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
    /// Copying an array from its device failed.
    Device(crate::Error),
    /// A [`CheckpointManager`] has no complete checkpoint of this step.
    StepNotFound {
        /// The step asked for.
        step: u64,
        /// The manager's folder.
        dir: PathBuf,
    },
    /// A [`CheckpointManager`] already has a checkpoint of this step (or is writing one).
    StepExists {
        /// The step being saved.
        step: u64,
        /// The manager's folder.
        dir: PathBuf,
    },
    /// A save that went on in the background failed: reported by the manager's next call
    /// ([`CheckpointManager::wait_until_finished`], the next save, or closing it). The step
    /// is not listed, unless its files were complete and what failed was retention's
    /// deletion of older steps.
    AsyncSave {
        /// The step whose save failed.
        step: u64,
        /// Why.
        error: Box<CheckpointError>,
    },
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Io(e) => write!(f, "checkpoint: {e}"),
            CheckpointError::Format(m) => write!(f, "checkpoint: {m}"),
            CheckpointError::Mismatch(m) => {
                write!(f, "checkpoint does not match the template: {m}")
            }
            CheckpointError::Device(e) => write!(f, "checkpoint: copying to the host: {e}"),
            CheckpointError::StepNotFound { step, dir } => {
                write!(
                    f,
                    "checkpoint: no complete step {step} in {}",
                    dir.display()
                )
            }
            CheckpointError::StepExists { step, dir } => write!(
                f,
                "checkpoint: step {step} is already saved (or being saved) in {}",
                dir.display()
            ),
            CheckpointError::AsyncSave { step, error } => {
                write!(f, "the background save of step {step} failed: {error}")
            }
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckpointError::Io(e) => Some(e),
            CheckpointError::Device(e) => Some(e),
            CheckpointError::AsyncSave { error, .. } => Some(error.as_ref()),
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

/// The safetensors dtype of a jaxrs one. safetensors has complex64 but no complex128: a
/// complex128 leaf is refused rather than narrowed.
fn safetensors_dtype(dtype: DType) -> Result<Dtype, CheckpointError> {
    Ok(match dtype {
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
        DType::C64 => Dtype::C64,
        DType::C128 => {
            return Err(CheckpointError::Format(
                "safetensors has no complex128 dtype: store the leaf as complex64, or its real \
                 and imaginary parts (jnp::real, jnp::imag) as two float64 leaves"
                    .into(),
            ))
        }
    })
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
        DType::C64 => le(x.to_vec::<C64>(), |z| {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&z.re.to_le_bytes());
            b[4..].copy_from_slice(&z.im.to_le_bytes());
            b
        }),
        // Refused by safetensors_dtype before the bytes are needed.
        DType::C128 => le(x.to_vec::<C128>(), |z| {
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&z.re.to_le_bytes());
            b[8..].copy_from_slice(&z.im.to_le_bytes());
            b
        }),
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
    let tensors = tensors_of(tree)?;
    let bytes: Vec<Vec<u8>> = tensors.iter().map(|t| leaf_bytes(&t.leaf)).collect();
    let views = tensors
        .iter()
        .zip(&bytes)
        .map(|(t, data)| {
            let view = TensorView::new(t.dtype, t.leaf.shape().to_vec(), data);
            Ok((t.name.as_str(), view.map_err(format_error)?))
        })
        .collect::<Result<Vec<_>, CheckpointError>>()?;
    safetensors::tensor::serialize(views, Some(metadata.to_header())).map_err(format_error)
}

/// A leaf to store: its tensor name (its path in the tree), the leaf and its safetensors
/// dtype.
pub(crate) struct Tensor {
    pub(crate) name: String,
    pub(crate) leaf: Array,
    pub(crate) dtype: Dtype,
}

impl Tensor {
    pub(crate) fn spec(&self) -> TensorSpec {
        TensorSpec {
            name: self.name.clone(),
            dtype: self.dtype,
            shape: self.leaf.shape().to_vec(),
        }
    }
}

/// The tree's leaves as tensors, refusing two leaves of one path and dtypes safetensors
/// lacks.
pub(crate) fn tensors_of<T: Tree>(tree: &T) -> Result<Vec<Tensor>, CheckpointError> {
    let (leaves, _) = tree.flatten();
    let names = tree_paths(tree);
    let mut seen = HashSet::new();
    if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
        return Err(CheckpointError::Format(format!(
            "two leaves have the path `{dup}` (map keys with dots?)"
        )));
    }
    names
        .into_iter()
        .zip(leaves)
        .map(|(name, leaf)| {
            let dtype = safetensors_dtype(leaf.dtype())?;
            Ok(Tensor { name, leaf, dtype })
        })
        .collect()
}

/// The safetensors header of `tensors` (laid out in the order the `safetensors` crate lays
/// them out: by descending dtype, then by name, so a file written piece by piece is the file
/// [`to_bytes`] makes), as the bytes that start the file, and each tensor's data offset from
/// the start of the file, in `tensors`' order.
fn file_layout(
    tensors: &[TensorSpec],
    metadata: &Metadata,
) -> Result<(Vec<u8>, Vec<u64>), CheckpointError> {
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&tensors[a], &tensors[b]);
        b.dtype.cmp(&a.dtype).then(a.name.cmp(&b.name))
    });
    let mut offset = 0usize;
    let mut offsets = vec![0usize; tensors.len()];
    let mut infos = Vec::with_capacity(tensors.len());
    for i in order {
        let t = &tensors[i];
        let len = t.shape.iter().product::<usize>() * t.dtype.bitsize() / 8;
        offsets[i] = offset;
        infos.push((
            t.name.clone(),
            TensorInfo {
                dtype: t.dtype,
                shape: t.shape.clone(),
                data_offsets: (offset, offset + len),
            },
        ));
        offset += len;
    }
    let header = Header::new(Some(metadata.to_header()), infos).map_err(format_error)?;
    let mut json = serde_json::to_string(&header)
        .map_err(format_error)?
        .into_bytes();
    // safetensors pads the header with spaces to a multiple of 8 bytes.
    json.resize(json.len().next_multiple_of(8), b' ');
    if json.len() > MAX_HEADER_BYTES {
        return Err(CheckpointError::Format(format!(
            "the header would take {} bytes, more than the {MAX_HEADER_BYTES} a checkpoint \
             header may have",
            json.len()
        )));
    }
    let data_start = (8 + json.len()) as u64;
    let mut start = (json.len() as u64).to_le_bytes().to_vec();
    start.extend(json);
    Ok((
        start,
        offsets.into_iter().map(|o| data_start + o as u64).collect(),
    ))
}

/// The contiguous runs, in elements, that the block `index` of a row-major array of `shape`
/// occupies: `(offset in the array, offset in the block, length)`, in the block's order.
fn runs(shape: &[usize], index: &[Range<usize>]) -> Vec<(usize, usize, usize)> {
    let block: Vec<usize> = index.iter().map(|r| r.len()).collect();
    if block.contains(&0) {
        return Vec::new();
    }
    // Trailing dimensions the block covers whole join the run, and so does the first
    // dimension before them.
    let mut first = shape.len();
    while first > 0 && block[first - 1] == shape[first - 1] {
        first -= 1;
    }
    let first = first.saturating_sub(1);
    let run: usize = block[first..].iter().product();
    let outer = &block[..first];
    let strides: Vec<usize> = (0..shape.len())
        .map(|d| shape[d + 1..].iter().product())
        .collect();
    let count: usize = outer.iter().product();
    (0..count)
        .map(|n| {
            let mut rest = n;
            let mut offset = 0;
            for d in (0..first).rev() {
                offset += (index[d].start + rest % outer[d]) * strides[d];
                rest /= outer[d];
            }
            for (d, r) in index.iter().enumerate().skip(first) {
                offset += r.start * strides[d];
            }
            (offset, n * run, run)
        })
        .collect()
}

/// Writes the tree to a safetensors file at `path`, with `metadata` in its header.
///
/// The file is the one [`to_bytes`] makes, written piece by piece: each leaf's distinct
/// shards ([`Array::addressable_shards`], replicas once) are copied to the host one at a time
/// and written where their elements lie, so an array sharded over devices is never gathered
/// into one host buffer (the host holds one shard at a time). [`load`] restores it onto any
/// layout, and any safetensors reader reads it.
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
    let tensors = tensors_of(tree)?;
    let specs: Vec<TensorSpec> = tensors.iter().map(Tensor::spec).collect();
    write_file(path.as_ref(), &specs, metadata, |i, write| {
        // Each distinct piece once (replicas skipped), copied to the host one at a time: the
        // array is never gathered.
        for shard in tensors[i].leaf.addressable_shards() {
            if shard.replica_id == 0 {
                let host = shard.data.try_to_host().map_err(CheckpointError::Device)?;
                write(&shard.index, &host)?;
            }
        }
        Ok(())
    })
}

/// The name, dtype and shape of a tensor to write: what the file's header says of it.
#[derive(Clone)]
pub(crate) struct TensorSpec {
    pub(crate) name: String,
    pub(crate) dtype: Dtype,
    pub(crate) shape: Vec<usize>,
}

/// Writes a safetensors file of `tensors` at `path`, with `metadata` in its header, piece by
/// piece: `pieces(i, write)` calls `write(index, host)` for each distinct piece of tensor `i`
/// (its range along each dimension and its elements), in any order, each piece once. The
/// file is the one [`to_bytes`] makes of the whole arrays.
pub(crate) fn write_file(
    path: &Path,
    tensors: &[TensorSpec],
    metadata: &Metadata,
    mut pieces: impl FnMut(usize, &mut Piece<'_>) -> Result<(), CheckpointError>,
) -> Result<(), CheckpointError> {
    let (start, offsets) = file_layout(tensors, metadata)?;
    let io = |e: PathError| CheckpointError::Io(e.into());
    // A temp file beside the target, fsynced and renamed over it: a save killed at any
    // moment leaves the previous checkpoint whole.
    let mut out = AtomicFile::create(path).map_err(io)?;
    out.write_all(&start)?;
    let temp = out.temp_path().to_path_buf();
    let mut file = out.as_file();
    for (i, (tensor, &base)) in tensors.iter().zip(&offsets).enumerate() {
        let element = tensor.dtype.bitsize() / 8;
        let shape = &tensor.shape;
        pieces(i, &mut |index: &[Range<usize>], host: &HostArray| {
            let bytes = safetensors_bytes(host);
            for (at, from, len) in runs(shape, index) {
                file.seek(SeekFrom::Start(base + (at * element) as u64))
                    .and_then(|_| file.write_all(&bytes[from * element..(from + len) * element]))
                    .at("write", &temp)
                    .map_err(io)?;
            }
            Ok(())
        })?;
    }
    out.commit().map_err(io)?;
    Ok(())
}

/// What [`write_file`] hands its `pieces` callback: writes one piece of the tensor (its range
/// along each dimension, its elements) where its elements lie in the file.
pub(crate) type Piece<'a> =
    dyn FnMut(&[Range<usize>], &HostArray) -> Result<(), CheckpointError> + 'a;

/// A host copy's elements as safetensors stores them: little-endian already, except that a
/// device's bool may be any nonzero byte, and a file's is 0 or 1.
fn safetensors_bytes(host: &HostArray) -> std::borrow::Cow<'_, [u8]> {
    if host.dtype() == DType::Bool {
        std::borrow::Cow::Owned(host.as_bytes().iter().map(|&b| u8::from(b != 0)).collect())
    } else {
        std::borrow::Cow::Borrowed(host.as_bytes())
    }
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
    let prefix = bytes
        .get(..8)
        .ok_or_else(|| truncated(bytes.len() as u64))?;
    let header_len = header_length(prefix.try_into().unwrap(), bytes.len() as u64)?;
    let header = parse_header(&bytes[8..8 + header_len], bytes.len() as u64)?;
    let data = &bytes[8 + header_len..];
    assemble(&header, template, |info, start, piece| {
        let from = info.data_offsets.0 + start;
        piece.copy_from_slice(&data[from..from + piece.len()]);
        Ok(())
    })
}

fn truncated(len: u64) -> CheckpointError {
    CheckpointError::Format(format!(
        "{len} bytes are too few for a safetensors file (the 8-byte header length)"
    ))
}

/// The header's length from the file's first 8 bytes, bounded by [`MAX_HEADER_BYTES`] and by
/// the file's length before anything is read or allocated for it.
fn header_length(prefix: [u8; 8], file_len: u64) -> Result<usize, CheckpointError> {
    let len = u64::from_le_bytes(prefix);
    if len > MAX_HEADER_BYTES as u64 {
        return Err(CheckpointError::Format(format!(
            "the header claims {len} bytes, more than the {MAX_HEADER_BYTES} a checkpoint header may have"
        )));
    }
    if len > file_len - 8 {
        return Err(CheckpointError::Format(format!(
            "the header claims {len} bytes, but only {} follow the length (a truncated file?)",
            file_len - 8
        )));
    }
    Ok(len as usize)
}

/// The header parsed once and validated (offsets contiguous, sizes matching dtypes and
/// shapes), and its tensor data checked to end where the file ends.
fn parse_header(json: &[u8], file_len: u64) -> Result<Header, CheckpointError> {
    let header: Header = serde_json::from_slice(json).map_err(|e| {
        CheckpointError::Format(format!("the header is not a valid safetensors header: {e}"))
    })?;
    let expected = 8 + json.len() as u64 + header.data_len() as u64;
    if expected != file_len {
        return Err(CheckpointError::Format(format!(
            "the header describes {expected} bytes but the file has {file_len} (truncated or padded)"
        )));
    }
    Ok(header)
}

/// The template's tree from a parsed header. Each leaf is laid out as its template leaf is
/// (one device, replicas, or shards over a mesh), and each device's piece is read on its own
/// with `read(info, start, piece)` (fill `piece` with the tensor's bytes from byte `start`),
/// so restoring onto a sharded template holds one shard on the host at a time.
fn assemble<T: Tree>(
    header: &Header,
    template: &T,
    mut read: impl FnMut(&TensorInfo, usize, &mut [u8]) -> Result<(), CheckpointError>,
) -> Result<(T, Metadata), CheckpointError> {
    let (template_leaves, def) = template.flatten();
    let names = tree_paths(template);
    let mut leaves = Vec::with_capacity(names.len());
    for (name, want) in names.iter().zip(&template_leaves) {
        let info = header.info(name).ok_or_else(|| {
            CheckpointError::Mismatch(format!(
                "tensor `{name}` ({}{:?}) is missing from the checkpoint",
                want.dtype().name(),
                want.shape()
            ))
        })?;
        if info.dtype != safetensors_dtype(want.dtype())? {
            let found = DType::ALL
                .into_iter()
                .find(|d| safetensors_dtype(*d).is_ok_and(|s| s == info.dtype))
                .map_or_else(|| info.dtype.to_string(), |d| d.name().to_string());
            return Err(CheckpointError::Mismatch(format!(
                "tensor `{name}` has dtype {found} in the checkpoint, {} in the template",
                want.dtype().name()
            )));
        }
        if info.shape != want.shape() {
            return Err(CheckpointError::Mismatch(format!(
                "tensor `{name}` has shape {:?} in the checkpoint, {:?} in the template",
                info.shape,
                want.shape()
            )));
        }
        leaves.push(restore_leaf(info, want, &mut read)?);
    }
    let wanted: HashSet<&str> = names.iter().map(String::as_str).collect();
    let mut extra: Vec<String> = header
        .offset_keys()
        .into_iter()
        .filter(|n| !wanted.contains(n.as_str()))
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

/// The tensor `info` as an array laid out as `want` is, each device's piece read by itself.
fn restore_leaf(
    info: &TensorInfo,
    want: &Array,
    read: &mut impl FnMut(&TensorInfo, usize, &mut [u8]) -> Result<(), CheckpointError>,
) -> Result<Array, CheckpointError> {
    let (shape, dtype) = (want.shape(), want.dtype());
    let element = dtype.size_in_bytes();
    let sharding = want
        .sharding()
        .cloned()
        .unwrap_or_else(|| Sharding::SingleDevice(crate::local_devices()[0]));
    let mut failure = None;
    let restored = crate::make_array_from_callback(shape, sharding, |index| {
        let dims: Vec<usize> = index.iter().map(|r| r.len()).collect();
        let mut piece = vec![0u8; dims.iter().product::<usize>() * element];
        if failure.is_none() {
            for (at, from, len) in runs(shape, index) {
                let bytes = &mut piece[from * element..(from + len) * element];
                if let Err(e) = read(info, at * element, bytes) {
                    failure = Some(e);
                    break;
                }
            }
        }
        Array::from_le_bytes(&piece, &dims, dtype)
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(restored),
    }
}

/// An open checkpoint file with its header read and parsed, and where its data starts.
struct OpenFile {
    file: File,
    header: Header,
    data_start: u64,
}

impl OpenFile {
    fn open(path: &Path) -> Result<OpenFile, CheckpointError> {
        let io = |e: PathError| CheckpointError::Io(e.into());
        let mut file = File::open(path).at("open", path).map_err(io)?;
        let file_len = file
            .metadata()
            .at("read the size of", path)
            .map_err(io)?
            .len();
        let in_file = |e: CheckpointError| match e {
            CheckpointError::Format(m) => {
                CheckpointError::Format(format!("{}: {m}", path.display()))
            }
            other => other,
        };
        let mut prefix = [0u8; 8];
        if file_len < 8 {
            return Err(in_file(truncated(file_len)));
        }
        file.read_exact(&mut prefix).at("read", path).map_err(io)?;
        let header_len = header_length(prefix, file_len).map_err(in_file)?;
        let mut json = vec![0u8; header_len];
        file.read_exact(&mut json).at("read", path).map_err(io)?;
        let header = parse_header(&json, file_len).map_err(in_file)?;
        Ok(OpenFile {
            file,
            header,
            data_start: 8 + header_len as u64,
        })
    }
}

/// Reads a tree of the structure, shapes and dtypes of `template` from the safetensors file
/// at `path`, with the file's metadata; see [`from_bytes`] for what must match.
///
/// Each leaf comes back laid out as the template's leaf is: on its device, replicated, or
/// sharded over a mesh (Orbax's restore with target shardings). A checkpoint saved from one
/// layout restores onto any other (a 2x4 mesh, 8x1, one device), and each device's piece is
/// read from the file by itself, so the host holds one shard at a time.
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
    let path = path.as_ref();
    let OpenFile {
        mut file,
        header,
        data_start,
    } = OpenFile::open(path)?;
    assemble(&header, template, |info, start, piece| {
        let at = data_start + (info.data_offsets.0 + start) as u64;
        file.seek(SeekFrom::Start(at))
            .and_then(|_| file.read_exact(piece))
            .at("read", path)
            .map_err(|e| CheckpointError::Io(e.into()))
    })
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
    let header = OpenFile::open(path.as_ref())?.header;
    Ok(Metadata::from_header(header.metadata().as_ref()))
}
