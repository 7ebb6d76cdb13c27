//! Reading a model folder as `transformers`' `save_pretrained` writes it: `config.json`, and
//! the weights in `model.safetensors` or in shards listed by `model.safetensors.index.json`.
//!
//! Files are untrusted. Each is bounded in size before it is read; the safetensors crate checks
//! every header offset against the file; each tensor's shape is checked against the config
//! before an array is made of it; and tensors nobody asked for are reported, so a checkpoint of
//! another architecture is an error naming a tensor rather than a model that runs wrong.

use crate::error::{Error, Result};
use jaxrs::{Array, DType};
use safetensors::{Dtype as StDtype, SafeTensors};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The largest JSON file (config, index) read: published configs are a few kilobytes.
pub const MAX_JSON_BYTES: u64 = 16 << 20;
/// The largest safetensors shard read (shards are published at 2-10 GB).
pub const MAX_SHARD_BYTES: u64 = 64 << 30;

/// Reads a whole file after checking its size against `limit`.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > limit {
        return Err(Error::TooLarge {
            path: path.to_path_buf(),
            size,
            limit,
        });
    }
    std::fs::read(path).map_err(io)
}

/// Reads a JSON file of at most [`MAX_JSON_BYTES`].
pub(crate) fn read_json_text(path: &Path) -> Result<String> {
    let bytes = read_bounded(path, MAX_JSON_BYTES)?;
    String::from_utf8(bytes).map_err(|_| Error::Format {
        path: path.to_path_buf(),
        message: "not UTF-8".into(),
    })
}

/// The tensors of a checkpoint, by name, read from one or several safetensors files.
///
/// [`TensorStore::take`] hands each tensor out once, as an [`Array`] of the requested dtype;
/// [`TensorStore::finish`] then names any tensor left over.
pub struct TensorStore {
    /// Each shard's bytes (kept whole: safetensors views borrow them).
    shards: Vec<(PathBuf, Vec<u8>)>,
    /// Tensor name -> the index of its shard.
    index: BTreeMap<String, usize>,
    taken: BTreeSet<String>,
}

impl TensorStore {
    /// Opens the weights of a model folder: `model.safetensors`, or the shards that
    /// `model.safetensors.index.json` lists.
    pub fn open_dir(dir: &Path) -> Result<TensorStore> {
        let single = dir.join("model.safetensors");
        let index_path = dir.join("model.safetensors.index.json");
        let files = if single.exists() {
            vec![single]
        } else if index_path.exists() {
            shard_files(dir, &index_path)?
        } else {
            return Err(Error::Io {
                path: single,
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "neither model.safetensors nor model.safetensors.index.json is in the folder",
                ),
            });
        };
        TensorStore::open_files(&files)
    }

    /// Opens safetensors files; a tensor name in two of them is an error.
    pub fn open_files(files: &[PathBuf]) -> Result<TensorStore> {
        let mut shards = Vec::with_capacity(files.len());
        let mut index = BTreeMap::new();
        for (i, path) in files.iter().enumerate() {
            let bytes = read_bounded(path, MAX_SHARD_BYTES)?;
            let names = {
                let st = SafeTensors::deserialize(&bytes).map_err(|e| Error::Format {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                st.names()
                    .into_iter()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            };
            for name in names {
                if index.insert(name.clone(), i).is_some() {
                    return Err(Error::Tensor {
                        name,
                        message: format!("appears twice (again in {})", path.display()),
                    });
                }
            }
            shards.push((path.clone(), bytes));
        }
        Ok(TensorStore {
            shards,
            index,
            taken: BTreeSet::new(),
        })
    }

    /// Whether the checkpoint holds `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// The names of every tensor, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.index.keys().map(String::as_str)
    }

    /// The tensor `name`, checked to have `shape`, as an array of `dtype`.
    pub fn take(&mut self, name: &str, shape: &[usize], dtype: DType) -> Result<Array> {
        let err = |message: String| Error::Tensor {
            name: name.to_string(),
            message,
        };
        let &shard = self
            .index
            .get(name)
            .ok_or_else(|| err("missing from the checkpoint".into()))?;
        let (path, bytes) = &self.shards[shard];
        let st = SafeTensors::deserialize(bytes).map_err(|e| Error::Format {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let view = st.tensor(name).map_err(|e| err(e.to_string()))?;
        if view.shape() != shape {
            return Err(err(format!(
                "has shape {:?}, the config needs {shape:?}",
                view.shape()
            )));
        }
        let stored = match view.dtype() {
            StDtype::F32 => DType::F32,
            StDtype::F16 => DType::F16,
            StDtype::BF16 => DType::BF16,
            StDtype::F64 => DType::F64,
            other => {
                return Err(err(format!(
                    "has dtype {other:?}; floating-point weights are expected"
                )))
            }
        };
        let array = Array::from_le_bytes(view.data(), shape, stored);
        self.taken.insert(name.to_string());
        Ok(if stored == dtype {
            array
        } else {
            array.astype(dtype)
        })
    }

    /// The dtype `name` is stored in, if present and a float.
    pub fn stored_dtype(&self, name: &str) -> Option<DType> {
        let &shard = self.index.get(name)?;
        let st = SafeTensors::deserialize(&self.shards[shard].1).ok()?;
        match st.tensor(name).ok()?.dtype() {
            StDtype::F32 => Some(DType::F32),
            StDtype::F16 => Some(DType::F16),
            StDtype::BF16 => Some(DType::BF16),
            StDtype::F64 => Some(DType::F64),
            _ => None,
        }
    }

    /// Marks `name` as read without making an array of it (buffers a model recomputes, such
    /// as GPT-2's causal-mask `attn.bias`).
    pub fn skip(&mut self, name: &str) {
        if self.index.contains_key(name) {
            self.taken.insert(name.to_string());
        }
    }

    /// An error naming the first tensor nobody took: the checkpoint holds weights the model
    /// does not have.
    pub fn finish(self) -> Result<()> {
        match self.index.keys().find(|n| !self.taken.contains(*n)) {
            None => Ok(()),
            Some(name) => Err(Error::Tensor {
                name: name.clone(),
                message: "is in the checkpoint but not in the model (another architecture?)".into(),
            }),
        }
    }
}

/// The shard files an index lists, each checked to be a plain file name inside `dir`.
fn shard_files(dir: &Path, index_path: &Path) -> Result<Vec<PathBuf>> {
    let text = read_json_text(index_path)?;
    let format = |message: String| Error::Format {
        path: index_path.to_path_buf(),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format(e.to_string()))?;
    let map = value
        .get("weight_map")
        .and_then(|m| m.as_object())
        .ok_or_else(|| format("no `weight_map` object".into()))?;
    let mut files = BTreeSet::new();
    for (tensor, file) in map {
        let file = file
            .as_str()
            .ok_or_else(|| format(format!("`weight_map.{tensor}` is not a file name")))?;
        // A name with a separator or `..` would reach outside the model folder.
        let plain = Path::new(file)
            .file_name()
            .is_some_and(|f| f == std::ffi::OsStr::new(file));
        if !plain || file == ".." || file == "." {
            return Err(format(format!(
                "`weight_map.{tensor}` = {file:?} is not a file name in the folder"
            )));
        }
        files.insert(file.to_string());
    }
    if files.is_empty() {
        return Err(format("`weight_map` lists no shards".into()));
    }
    Ok(files.into_iter().map(|f| dir.join(f)).collect())
}

/// The dtype a checkpoint's float tensors are in, from `torch_dtype` or else the tensors.
pub(crate) fn checkpoint_dtype(
    torch_dtype: Option<&str>,
    store: &TensorStore,
    probe: &str,
) -> DType {
    match torch_dtype {
        Some("float32") => DType::F32,
        Some("float16") => DType::F16,
        Some("bfloat16") => DType::BF16,
        _ => store.stored_dtype(probe).unwrap_or(DType::F32),
    }
}
