//! Files that survive a crash and folders that nobody else controls.
//!
//! Every place where jaxrs writes something it will read back later (checkpoints, the
//! persistent compile cache, the provisioned plugin) goes through this module, so the
//! guarantees are stated once:
//!
//! - [`AtomicFile`] writes a new file beside the target under an unpredictable name
//!   (`O_CREAT|O_EXCL`, mode 0600, through [`tempfile`]), and [`AtomicFile::commit`] fsyncs it,
//!   renames it over the target and fsyncs the folder. A process killed at any moment leaves
//!   either the old file or the new one, never a mixture; a planted symlink at the target is
//!   replaced, not followed.
//! - Every error names the path it is about ([`PathError`]), because "permission denied"
//!   alone does not tell a user which of their folders to fix.

use std::fmt;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// An I/O error with the path it happened on, shown as `<action> <path>: <reason>`.
#[derive(Debug)]
pub struct PathError {
    /// What was being done (`"write"`, `"rename onto"`, ...).
    pub action: &'static str,
    /// The file or folder.
    pub path: PathBuf,
    /// The operating system's reason.
    pub source: io::Error,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "cannot {} {}: {}",
            self.action,
            self.path.display(),
            self.source
        )
    }
}

impl std::error::Error for PathError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl From<PathError> for io::Error {
    /// Keeps the kind (`NotFound`, `PermissionDenied`, ...) and puts the path in the message.
    fn from(error: PathError) -> io::Error {
        io::Error::new(error.source.kind(), error.to_string())
    }
}

/// Attaches a path to an I/O result: `fs::read(p).at("read", p)?`.
pub trait WithPath<T> {
    /// The error, if any, as a [`PathError`] naming `path`.
    fn at(self, action: &'static str, path: &Path) -> Result<T, PathError>;
}

impl<T> WithPath<T> for io::Result<T> {
    fn at(self, action: &'static str, path: &Path) -> Result<T, PathError> {
        self.map_err(|source| PathError {
            action,
            path: path.to_path_buf(),
            source,
        })
    }
}

/// A file being written beside its final name; it appears there only on
/// [`commit`](AtomicFile::commit), and is deleted if dropped uncommitted.
///
/// ```
/// use jaxrs_runtime::fs_safety::AtomicFile;
/// use std::io::Write;
///
/// let dir = std::env::temp_dir().join(format!("jaxrs-atomic-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let target = dir.join("state.bin");
/// let mut file = AtomicFile::create(&target).unwrap();
/// file.write_all(b"new contents").unwrap();
/// file.commit().unwrap();
/// assert_eq!(std::fs::read(&target).unwrap(), b"new contents");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct AtomicFile {
    temp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl AtomicFile {
    /// Starts writing `target`: a new temp file `.<name>.<random>.tmp` in the same folder
    /// (the same file system, so the rename is atomic), mode 0600.
    pub fn create(target: &Path) -> Result<AtomicFile, PathError> {
        let folder = parent_folder(target);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(folder)
            .at("create a temp file in", folder)?;
        Ok(AtomicFile {
            temp,
            target: target.to_path_buf(),
        })
    }

    /// The temp file's path (for messages and tests).
    pub fn temp_path(&self) -> &Path {
        self.temp.path()
    }

    /// Makes the written bytes durable and puts them at the target: fsync the file, rename it
    /// over the target, fsync the folder so the rename itself survives a power cut.
    pub fn commit(self) -> Result<(), PathError> {
        let AtomicFile { mut temp, target } = self;
        temp.flush().at("write", temp.path())?;
        temp.as_file().sync_all().at("sync", temp.path())?;
        temp.persist(&target).map_err(|e| PathError {
            action: "rename onto",
            path: target.clone(),
            source: e.error,
        })?;
        sync_folder(parent_folder(&target))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.temp.write(bytes)
    }
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let path = self.temp.path().to_path_buf();
        self.temp
            .write_all(bytes)
            .at("write", &path)
            .map_err(io::Error::from)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.temp.flush()
    }
}

/// Writes `bytes` to `target` atomically ([`AtomicFile`] in one call).
pub fn write_atomic(target: &Path, bytes: &[u8]) -> Result<(), PathError> {
    let mut file = AtomicFile::create(target)?;
    let temp_path = file.temp_path().to_path_buf();
    file.temp.write_all(bytes).at("write", &temp_path)?;
    file.commit()
}

/// fsyncs a folder, so that entries created or renamed in it are durable.
pub fn sync_folder(folder: &Path) -> Result<(), PathError> {
    File::open(folder)
        .and_then(|f| f.sync_all())
        .at("sync the folder", folder)
}

/// The folder a file lives in (`.` for a bare file name).
fn parent_folder(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}
