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
//! - Folders jaxrs keeps things in are created 0700 ([`create_private_folder`]) and trusted
//!   only if owned by this process's user and writable by nobody else
//!   ([`check_private_folder`]): whoever can write a folder can replace what is read from it.
//! - Files read back are opened only if regular, without following a symlink or blocking on a
//!   FIFO ([`open_regular`]).
//! - A lock between processes ([`LockFile`]) is a `flock` on a file opened without truncating
//!   or following a symlink; it names its holder's pid, and the kernel frees a dead holder's.

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

    /// The temp file itself, for writes at chosen offsets (`(&file).seek(..)` then
    /// `write_all`) of a file written out of order, such as a checkpoint assembled from the
    /// shards of its arrays.
    pub fn as_file(&self) -> &File {
        self.temp.as_file()
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

/// Creates `folder` and any missing parents with mode 0700 (before the umask), so that what
/// jaxrs keeps there is nobody else's to read or replace. Folders that already exist keep
/// their mode: [`check_private_folder`] says whether they can be trusted.
pub fn create_private_folder(folder: &Path) -> Result<(), PathError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(folder).at("create the folder", folder)
}

/// The effective user id of this process.
#[cfg(unix)]
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Can `folder` be trusted with files this process will later run or load? It must be a
/// folder (a symlink to one is followed: `~/.cache` is often one), owned by this process's
/// user, and writable by nobody else (no group or other write bit): whoever can write the
/// folder can replace what jaxrs reads from it. The error says which rule failed.
pub fn check_private_folder(folder: &Path) -> Result<(), PathError> {
    let meta = std::fs::metadata(folder).at("inspect the folder", folder)?;
    let refuse = |why: String| PathError {
        action: "trust the folder",
        path: folder.to_path_buf(),
        source: io::Error::new(io::ErrorKind::PermissionDenied, why),
    };
    if !meta.is_dir() {
        return Err(refuse("it is not a folder".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = effective_uid();
        if meta.uid() != me {
            return Err(refuse(format!(
                "it is owned by uid {}, not by this process's user (uid {me})",
                meta.uid()
            )));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(refuse(format!(
                "its mode is {mode:04o}, writable by {}; `chmod go-w` it",
                if mode & 0o002 != 0 {
                    "anyone"
                } else {
                    "its group"
                }
            )));
        }
    }
    Ok(())
}

/// Opens `path` for reading only if it is a regular file, never following a symlink at its
/// last component and never blocking on a FIFO or a device (`O_NOFOLLOW | O_NONBLOCK`, then
/// `fstat`). A symlink is an error of the OS's (`ELOOP`); anything else that is not a regular
/// file is `InvalidInput`. `NotFound` stays `NotFound`.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

/// A lock file shared by processes (`flock`), created without truncating and without
/// following a symlink, mode 0600. The holder writes its pid into it, so that a process that
/// gives up waiting can say who holds it; the kernel releases the lock of a process that
/// dies, so a lock is never left behind by a crash.
pub struct LockFile {
    file: File,
    path: PathBuf,
}

impl LockFile {
    /// Opens (or creates) the lock file at `path`; does not take the lock. A symlink or
    /// anything but a regular file there is refused.
    pub fn open(path: &Path) -> Result<LockFile, PathError> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let file = options.open(path).at("open the lock file", path)?;
        let meta = file.metadata().at("inspect the lock file", path)?;
        if !meta.is_file() {
            return Err(PathError {
                action: "use the lock file",
                path: path.to_path_buf(),
                source: io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"),
            });
        }
        Ok(LockFile {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Takes the lock if nobody holds it, and then writes this process's pid into the file.
    /// `Ok(false)`: another process (or another open of the file) holds it.
    pub fn try_lock(&mut self) -> Result<bool, PathError> {
        match self.file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(false),
            Err(std::fs::TryLockError::Error(e)) => return Err(e).at("lock", &self.path),
        }
        // Only the holder writes, so the truncation never races another writer.
        use std::io::Seek;
        self.file.set_len(0).at("write", &self.path)?;
        self.file.rewind().at("write", &self.path)?;
        writeln!(self.file, "{}", std::process::id()).at("write", &self.path)?;
        Ok(true)
    }

    /// The pid the holder wrote, if the file holds one.
    pub fn holder(&self) -> Option<u32> {
        use std::io::Read;
        let mut text = String::new();
        let mut file = &self.file;
        use std::io::Seek;
        file.rewind().ok()?;
        file.take(32).read_to_string(&mut text).ok()?;
        text.trim().parse().ok()
    }

    /// Marks the holder as alive (the file's mtime), for waiters who judge whether it still
    /// makes progress.
    pub fn heartbeat(&self) {
        let _ = self.file.set_modified(std::time::SystemTime::now());
    }

    /// When the holder last called [`heartbeat`](LockFile::heartbeat) (or took the lock).
    pub fn last_heartbeat(&self) -> Option<std::time::SystemTime> {
        self.file.metadata().ok()?.modified().ok()
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
