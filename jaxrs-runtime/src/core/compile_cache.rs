//! The persistent compile cache: compiled programs kept on disk across processes, so that a
//! second run of the same program loads it (about a millisecond) instead of compiling it.
//!
//! An entry's file name is its key: the SHA-256 of the StableHLO text, the encoded compile
//! options (device assignment included), the plugin's identity (path, size, mtime, API
//! version) and the client's devices. The file holds a header (magic, format version, key,
//! payload length, SHA-256 of the payload) then the plugin's serialization; an entry whose
//! header does not match is recompiled and overwritten, so a corrupt or foreign file is never
//! handed to the plugin. Every I/O failure is logged and the program compiled as if the cache
//! were off.

use crate::core::client::client;
use crate::error::Result;
use crate::pjrt::provision::Env;
use crate::pjrt::{CompileOptions, LoadedExecutable};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

const MAGIC: &[u8; 8] = b"JAXRSXC\0";
const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 8 + 32;
const DEFAULT_MAX_BYTES: u64 = 1 << 30;
const SUFFIX: &str = "jxc";

static HITS: AtomicU64 = AtomicU64::new(0);
static MISSES: AtomicU64 = AtomicU64::new(0);

/// How often this process found a compiled program in the persistent compile cache (`hits`)
/// or compiled it and stored it there (`misses`). Programs compiled while the cache is off
/// count as neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileCacheStats {
    pub hits: u64,
    pub misses: u64,
}

/// The persistent compile cache's counters for this process.
///
/// The cache lives in `JAXRS_COMPILE_CACHE_DIR`, else `compile/` in jaxrs's cache folder
/// (`JAXRS_CACHE_DIR`, `$XDG_CACHE_HOME/jaxrs` or `~/.cache/jaxrs`); `JAXRS_COMPILE_CACHE=0` turns it off and
/// `JAXRS_COMPILE_CACHE_MAX_BYTES` caps its size (1 GiB by default; the least recently used
/// entries go first).
///
/// ```
/// use jaxrs::prelude::*;
/// let before = jaxrs::compile_cache_stats();
/// let f = jit(|x: Array| &x + 1.0);
/// let _: Array = f.call(Array::from_slice(&[1.0f32, 2.0], &[2]));
/// let after = jaxrs::compile_cache_stats();
/// assert!(after.hits + after.misses >= before.hits + before.misses);
/// ```
pub fn compile_cache_stats() -> CompileCacheStats {
    CompileCacheStats {
        hits: HITS.load(Ordering::Relaxed),
        misses: MISSES.load(Ordering::Relaxed),
    }
}

/// What the persistent cache did for one compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// Loaded from disk.
    Hit,
    /// Compiled (and stored, unless writing failed).
    Miss,
    /// Compiled with the cache switched off.
    Off,
}

/// Compiles `text` with `options` on the process's client, through the persistent cache.
/// `site` names the function being compiled in the log lines (`jit `step``, `eager add`).
pub(crate) fn compile(
    site: &dyn std::fmt::Display,
    text: &str,
    options: &CompileOptions,
) -> Result<(LoadedExecutable, Lookup)> {
    let Some(dir) = cache_dir() else {
        return Ok((client().compile(text, options)?, Lookup::Off));
    };
    let key = key(text, options);
    let path = dir.join(format!("{}.{SUFFIX}", hex(&key)));
    if let Some(exe) = load(&path, &key) {
        HITS.fetch_add(1, Ordering::Relaxed);
        log::debug!("compile cache hit for {site}: {}", path.display());
        return Ok((exe, Lookup::Hit));
    }
    let exe = client().compile(text, options)?;
    MISSES.fetch_add(1, Ordering::Relaxed);
    log::debug!("compile cache miss for {site}: {}", path.display());
    match exe.serialize() {
        Ok(payload) => {
            if let Err(e) = store(&dir, &path, &key, &payload) {
                log::warn!("compile cache: cannot write {}: {e}", path.display());
            } else {
                evict(&dir, &path, max_bytes());
            }
        }
        Err(e) => log::debug!("compile cache: cannot serialize: {e}"),
    }
    Ok((exe, Lookup::Miss))
}

/// Where entries live, or `None` when the cache is off. Read on every compile (the cost is
/// nothing next to a compile), so a process may redirect or disable it at any time.
fn cache_dir() -> Option<PathBuf> {
    if std::env::var_os("JAXRS_COMPILE_CACHE").is_some_and(|v| v == "0") {
        return None;
    }
    if let Some(dir) = std::env::var_os("JAXRS_COMPILE_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // The plugin's cache folder (`JAXRS_CACHE_DIR`, else the user's cache dir + `/jaxrs`).
    Some(Env::from_process().cache_dir?.join("compile"))
}

fn max_bytes() -> u64 {
    std::env::var("JAXRS_COMPILE_CACHE_MAX_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_MAX_BYTES)
}

fn key(text: &str, options: &CompileOptions) -> [u8; 32] {
    let client = client();
    let mut h = Sha256::new();
    // Each part is length-prefixed, so no two different inputs hash the same bytes.
    let mut part = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    part(&FORMAT_VERSION.to_le_bytes());
    part(text.as_bytes());
    part(&options.encode());
    let api = client.api();
    part(api.path().as_os_str().as_encoded_bytes());
    // A rebuilt plugin at the same path must not read old entries.
    let (size, mtime) = api.file_stamp();
    part(&size.to_le_bytes());
    part(&mtime.to_le_bytes());
    let (major, minor) = api.version();
    part(&major.to_le_bytes());
    part(&minor.to_le_bytes());
    part(client.platform_name().as_bytes());
    // Options without a device assignment compile for the client's default devices.
    for d in client.devices() {
        part(&d.id().to_le_bytes());
        part(d.kind().as_bytes());
    }
    h.finalize().into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The program stored at `path` under `key`, or `None` when absent, corrupt or unloadable.
fn load(path: &Path, key: &[u8; 32]) -> Option<LoadedExecutable> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            log::warn!("compile cache: cannot read {}: {e}", path.display());
            return None;
        }
    };
    let Some(payload) = payload(&bytes, key) else {
        log::warn!(
            "compile cache: {} is corrupt or foreign; recompiling",
            path.display()
        );
        return None;
    };
    match client().deserialize_and_load(payload) {
        Ok(exe) => {
            // Touch, so eviction (oldest mtime first) spares recently used entries.
            if let Err(e) = fs::File::options()
                .write(true)
                .open(path)
                .and_then(|f| f.set_modified(SystemTime::now()))
            {
                log::debug!("compile cache: cannot touch {}: {e}", path.display());
            }
            Some(exe)
        }
        Err(e) => {
            log::warn!("compile cache: cannot load {}: {e}", path.display());
            None
        }
    }
}

/// The payload of an entry whose header matches `key` and whose payload is intact.
fn payload<'a>(bytes: &'a [u8], key: &[u8; 32]) -> Option<&'a [u8]> {
    let (header, payload) = bytes.split_at_checked(HEADER_LEN)?;
    let (magic, rest) = header.split_at(8);
    let (version, rest) = rest.split_at(4);
    let (stored_key, rest) = rest.split_at(32);
    let (len, digest) = rest.split_at(8);
    let ok = magic == MAGIC
        && version == FORMAT_VERSION.to_le_bytes()
        && stored_key == key
        && len == (payload.len() as u64).to_le_bytes()
        && digest == Sha256::digest(payload).as_slice();
    ok.then_some(payload)
}

/// Writes the entry to a temporary file in the same folder, then renames it into place, so a
/// reader never sees half an entry.
fn store(dir: &Path, path: &Path, key: &[u8; 32], payload: &[u8]) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.{:?}.tmp",
        hex(key),
        std::process::id(),
        std::thread::current().id()
    ));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(MAGIC)?;
        f.write_all(&FORMAT_VERSION.to_le_bytes())?;
        f.write_all(key)?;
        f.write_all(&(payload.len() as u64).to_le_bytes())?;
        f.write_all(&Sha256::digest(payload))?;
        f.write_all(payload)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    let result = write();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// A temporary file this old is left by a process killed while writing it: a live write
/// takes well under a second, even for a large program.
const STALE_TMP: Duration = Duration::from_secs(10 * 60);

/// Removes the least recently used entries (oldest mtime) until the folder holds at most
/// `max` bytes; the entry just written (`keep`) stays even if it alone is over the cap. Also
/// removes the temporary files of writes that never finished (see [`STALE_TMP`]).
fn evict(dir: &Path, keep: &Path, max: u64) {
    let Ok(read) = fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = read
        .filter_map(|e| {
            let e = e.ok()?;
            let path = e.path();
            let m = e.metadata().ok()?;
            let modified = m.modified().ok()?;
            if is_temporary(&e.file_name()) {
                if now
                    .duration_since(modified)
                    .is_ok_and(|age| age > STALE_TMP)
                {
                    match fs::remove_file(&path) {
                        Ok(()) => log::debug!(
                            "compile cache: removed the unfinished write {}",
                            path.display()
                        ),
                        Err(e) => {
                            log::debug!("compile cache: cannot remove {}: {e}", path.display())
                        }
                    }
                }
                return None;
            }
            if path.extension().is_none_or(|x| x != SUFFIX) {
                return None;
            }
            Some((modified, m.len(), path))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    if total <= max {
        return;
    }
    entries.sort();
    for (_, len, path) in entries {
        if total <= max {
            break;
        }
        if path == keep {
            continue;
        }
        match fs::remove_file(&path) {
            Ok(()) => {
                total -= len;
                log::debug!("compile cache: evicted {}", path.display());
            }
            Err(e) => log::debug!("compile cache: cannot evict {}: {e}", path.display()),
        }
    }
}

/// Is this the name [`store`] gives an entry while writing it (`.<key>.<pid>.<thread>.tmp`)?
fn is_temporary(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .is_some_and(|n| n.starts_with('.') && n.ends_with(".tmp"))
}
