//! The persistent compile cache: compiled programs kept on disk across processes, so that a
//! second run of the same program loads it (about a millisecond) instead of compiling it.
//!
//! An entry's file name is its key, the SHA-256 of everything that changes the compiled
//! program:
//!
//! - the StableHLO text and the encoded compile options (device assignment, replicas,
//!   partitions);
//! - the plugin's identity: its path, size and mtime, its PJRT API version and platform name;
//! - the client's devices (their ids and kinds, hence their count);
//! - `XLA_FLAGS` as this process started with it (XLA reads it once, at the plugin's first
//!   use), so a flag that changes code generation never meets code compiled without it;
//! - the host CPU (architecture and `/proc/cpuinfo`'s feature flags), since XLA compiles for
//!   the machine it runs on and a cache folder may be shared between machines;
//! - jaxrs's version and the entry format's version.
//!
//! The file holds a header (magic, format version, key, payload length, SHA-256 of the
//! payload) then the plugin's serialization; an entry whose header does not match is
//! recompiled and overwritten. The checksum protects against corruption (a torn disk, a
//! truncated copy), not against an attacker: anyone who can write the folder can write an
//! entry with a valid header. So the folder is trusted, as JAX trusts its cache folder, and
//! jaxrs checks what makes that trust reasonable:
//!
//! - the folder is created with mode 0700 and entries with 0600;
//! - a folder not owned by this process's user, or writable by its group or by others, is not
//!   used: the cache is off for it for the rest of the process, logged once at `error`;
//! - entries are opened without following symlinks and only if they are regular files (a FIFO
//!   or a symlink is a miss, never a wait); their size is bounded before anything is
//!   allocated;
//! - entries are written under unpredictable temporary names (`O_CREAT|O_EXCL`, through
//!   [`AtomicFile`]) and renamed into place;
//! - eviction only deletes files that have both an entry's name and an entry's header.
//!
//! `JAXRS_COMPILE_CACHE_MAX_BYTES` must be a whole number of bytes: anything else is an
//! [`Error`] at the compile that reads it, naming the variable and its value, because a cap
//! the user asked for and did not get fills their disk silently. The cap is enforced the first
//! time a process uses a folder and after every write. Every I/O failure is logged and the
//! program compiled as if the cache were off.

use crate::core::client::client;
use crate::error::{Error, Result};
use crate::fs_safety::{self, AtomicFile};
use crate::pjrt::provision::Env;
use crate::pjrt::{CompileOptions, LoadedExecutable};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

const MAGIC: &[u8; 8] = b"JAXRSXC\0";
const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 8 + 32;
const DEFAULT_MAX_BYTES: u64 = 1 << 30;
/// No entry is read past this size, whatever its header says (the largest programs
/// serialize to tens of megabytes).
const MAX_ENTRY_BYTES: u64 = 1 << 32;
const MAX_BYTES_VAR: &str = "JAXRS_COMPILE_CACHE_MAX_BYTES";
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
/// entries go first). A folder owned by another user or writable by others is not used (the
/// cache is then off, and these counters stay still).
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
    let (exe, lookup, _) = compile_inner(site, text, options, false)?;
    Ok((exe, lookup))
}

/// [`compile`], also returning the plugin's serialization of the program: the bytes it was
/// loaded from on a hit. XLA's CPU plugin serializes an executable it deserialized without
/// the kernels' code (another process then fails with "Function ... not found"), so the
/// bytes of a loaded program are never asked of the plugin again.
pub(crate) fn compile_serialized(
    site: &dyn std::fmt::Display,
    text: &str,
    options: &CompileOptions,
) -> Result<(LoadedExecutable, Lookup, Result<Vec<u8>>)> {
    let (exe, lookup, bytes) = compile_inner(site, text, options, true)?;
    let bytes = bytes.expect("asked for");
    Ok((exe, lookup, bytes))
}

/// A compiled or loaded program, how the cache answered, and its serialization if asked for.
type Outcome = (LoadedExecutable, Lookup, Option<Result<Vec<u8>>>);

fn compile_inner(
    site: &dyn std::fmt::Display,
    text: &str,
    options: &CompileOptions,
    keep_bytes: bool,
) -> Result<Outcome> {
    let mut span = crate::core::profile::span("compile", "compile", || site.to_string());
    let result = compile_uncounted(site, text, options, keep_bytes);
    if let Ok((_, lookup, _)) = &result {
        span.arg("cache", || {
            match lookup {
                Lookup::Hit => "hit",
                Lookup::Miss => "miss",
                Lookup::Off => "off",
            }
            .to_string()
        });
    }
    result
}

fn compile_uncounted(
    site: &dyn std::fmt::Display,
    text: &str,
    options: &CompileOptions,
    keep_bytes: bool,
) -> Result<Outcome> {
    let options = &*crate::core::lower::with_plugin_workarounds(text, options);
    let fresh = |exe: LoadedExecutable, lookup| {
        let bytes = keep_bytes.then(|| exe.serialize());
        Ok((exe, lookup, bytes))
    };
    if configured_dir().is_none() {
        return fresh(client().compile(text, options)?, Lookup::Off);
    }
    let max = max_bytes()?;
    let Some(dir) = cache_dir(max) else {
        return fresh(client().compile(text, options)?, Lookup::Off);
    };
    let key = key(text, options);
    let path = dir.join(format!("{}.{SUFFIX}", hex(&key)));
    if let Some((exe, payload)) = load(&path, &key) {
        HITS.fetch_add(1, Ordering::Relaxed);
        log::debug!("compile cache hit for {site}: {}", path.display());
        return Ok((exe, Lookup::Hit, keep_bytes.then_some(Ok(payload))));
    }
    let exe = client().compile(text, options)?;
    MISSES.fetch_add(1, Ordering::Relaxed);
    log::debug!("compile cache miss for {site}: {}", path.display());
    let serialized = exe.serialize();
    match &serialized {
        Ok(payload) => {
            if let Err(e) = store(&path, &key, payload) {
                log::warn!("compile cache: cannot write {}: {e}", path.display());
            } else {
                evict(&dir, Some(&path), max);
            }
        }
        Err(e) => log::debug!("compile cache: cannot serialize: {e}"),
    }
    Ok((exe, Lookup::Miss, keep_bytes.then_some(serialized)))
}

/// Where entries live, or `None` when the cache is off. Read on every compile (the cost is
/// nothing next to a compile), so a process may redirect or disable it at any time.
fn configured_dir() -> Option<PathBuf> {
    if std::env::var_os("JAXRS_COMPILE_CACHE").is_some_and(|v| v == "0") {
        return None;
    }
    if let Some(dir) = std::env::var_os("JAXRS_COMPILE_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // The plugin's cache folder (`JAXRS_CACHE_DIR`, else the user's cache dir + `/jaxrs`).
    Some(Env::from_process().cache_dir?.join("compile"))
}

/// What this process decided about each folder it used.
enum Verdict {
    /// Checked and used; the cap was enforced when it was first seen.
    Trusted,
    /// Refused (the reason was logged once): the cache stays off for it.
    Refused,
}

static FOLDERS: Mutex<Vec<(PathBuf, Verdict)>> = Mutex::new(Vec::new());

/// The folder to use now, or `None` when the cache is off or the folder cannot be trusted.
/// The first time a process meets a folder it creates it (0700), checks its owner and mode,
/// and enforces the size cap, so a cap lowered between runs applies before the first write.
fn cache_dir(max: u64) -> Option<PathBuf> {
    let dir = configured_dir()?;
    let mut folders = FOLDERS.lock().unwrap_or_else(|p| p.into_inner());
    match folders.iter().find(|(d, _)| *d == dir).map(|(_, v)| v) {
        Some(Verdict::Refused) => return None,
        Some(Verdict::Trusted) => {
            // A stat per compile: a folder opened up since is refused from then on; one
            // deleted since is made again.
            let checked = fs_safety::check_private_folder(&dir).or_else(|e| {
                if e.source.kind() != std::io::ErrorKind::NotFound {
                    return Err(e);
                }
                fs_safety::create_private_folder(&dir)?;
                fs_safety::check_private_folder(&dir)
            });
            if let Err(e) = checked {
                refuse(&mut folders, dir, &e);
                return None;
            }
            return Some(dir);
        }
        None => {}
    }
    let checked =
        fs_safety::create_private_folder(&dir).and_then(|()| fs_safety::check_private_folder(&dir));
    if let Err(e) = checked {
        refuse(&mut folders, dir, &e);
        return None;
    }
    folders.push((dir.clone(), Verdict::Trusted));
    drop(folders);
    evict(&dir, None, max);
    Some(dir)
}

fn refuse(folders: &mut Vec<(PathBuf, Verdict)>, dir: PathBuf, why: &fs_safety::PathError) {
    log::error!(
        "compile cache off for {}: {why}. Whoever can write the cache folder chooses the code \
         this process runs; fix the folder or point JAXRS_COMPILE_CACHE_DIR elsewhere",
        dir.display()
    );
    folders.retain(|(d, _)| *d != dir);
    folders.push((dir, Verdict::Refused));
}

/// The size cap: `JAXRS_COMPILE_CACHE_MAX_BYTES` (whole bytes), else 1 GiB.
fn max_bytes() -> Result<u64> {
    let Some(raw) = std::env::var_os(MAX_BYTES_VAR) else {
        return Ok(DEFAULT_MAX_BYTES);
    };
    raw.to_str()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .ok_or_else(|| {
            Error::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{MAX_BYTES_VAR}={} is not a size: set it to a whole number of bytes \
                     (e.g. {MAX_BYTES_VAR}=1073741824 for 1 GiB), or unset it for the default \
                     of 1 GiB",
                    raw.to_string_lossy()
                ),
            ))
        })
}

/// `XLA_FLAGS` as XLA saw it: XLA parses the variable once per process, at its first use, so
/// later changes of the variable change neither the code nor the key.
fn xla_flags() -> &'static str {
    static FLAGS: OnceLock<String> = OnceLock::new();
    FLAGS.get_or_init(|| {
        let raw = std::env::var("XLA_FLAGS").unwrap_or_default();
        raw.split_whitespace().collect::<Vec<_>>().join(" ")
    })
}

/// The host CPU XLA generates code for: the architecture and the kernel's list of CPU
/// features (the first processor's `flags` line; all cores share it on the machines XLA
/// supports).
fn host_cpu() -> &'static str {
    static CPU: OnceLock<String> = OnceLock::new();
    CPU.get_or_init(|| {
        let features = fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|l| l.starts_with("flags") || l.starts_with("Features"))
                    .map(|l| l.split_once(':').map_or(l, |(_, v)| v).trim().to_string())
            })
            .unwrap_or_default();
        format!("{} {features}", std::env::consts::ARCH)
    })
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
    part(env!("CARGO_PKG_VERSION").as_bytes());
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
    part(xla_flags().as_bytes());
    part(host_cpu().as_bytes());
    // Options without a device assignment compile for the client's default devices.
    let devices = client.devices();
    part(&(devices.len() as u64).to_le_bytes());
    for d in devices {
        part(&d.id().to_le_bytes());
        part(d.kind().as_bytes());
    }
    h.finalize().into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The program stored at `path` under `key`, or `None` when absent, corrupt, not a regular
/// file, or unloadable.
/// The entry at `path` loaded, with its payload (the plugin's serialization).
fn load(path: &Path, key: &[u8; 32]) -> Option<(LoadedExecutable, Vec<u8>)> {
    let file = match fs_safety::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            log::warn!("compile cache: skipping {}: {e}", path.display());
            return None;
        }
    };
    let len = match file.metadata() {
        Ok(m) => m.len(),
        Err(e) => {
            log::warn!("compile cache: cannot inspect {}: {e}", path.display());
            return None;
        }
    };
    let Some(payload) = read_entry(&file, len, key) else {
        log::warn!(
            "compile cache: {} is corrupt or foreign; recompiling",
            path.display()
        );
        return None;
    };
    match client().deserialize_and_load(&payload) {
        Ok(exe) => {
            // Touch, so eviction (oldest mtime first) spares recently used entries.
            if let Err(e) = file.set_modified(SystemTime::now()) {
                log::debug!("compile cache: cannot touch {}: {e}", path.display());
            }
            Some((exe, payload))
        }
        Err(e) => {
            log::warn!("compile cache: cannot load {}: {e}", path.display());
            None
        }
    }
}

/// The header of an entry stored under `key` in a file of `file_len` bytes: the payload's
/// length and SHA-256, or `None` if the header is not jaxrs's, names another key, or claims a
/// payload that is not exactly the rest of the file (or is over [`MAX_ENTRY_BYTES`]).
fn decode_header(header: &[u8], key: &[u8; 32], file_len: u64) -> Option<(u64, [u8; 32])> {
    let header: &[u8; HEADER_LEN] = header.try_into().ok()?;
    let (magic, rest) = header.split_at(8);
    let (version, rest) = rest.split_at(4);
    let (stored_key, rest) = rest.split_at(32);
    let (len, digest) = rest.split_at(8);
    let len = u64::from_le_bytes(len.try_into().ok()?);
    let ok = magic == MAGIC
        && version == FORMAT_VERSION.to_le_bytes()
        && stored_key == key
        && len <= MAX_ENTRY_BYTES
        && file_len.checked_sub(HEADER_LEN as u64) == Some(len);
    ok.then(|| (len, digest.try_into().expect("32 bytes")))
}

/// Reads an entry of `file_len` bytes (its size when opened) and returns its payload if the
/// header matches `key` and the payload is intact. Nothing larger than the header's length,
/// itself checked against `file_len` and [`MAX_ENTRY_BYTES`], is allocated; a reader with
/// fewer bytes than promised gives `None`.
fn read_entry(mut reader: impl Read, file_len: u64, key: &[u8; 32]) -> Option<Vec<u8>> {
    let mut header = [0u8; HEADER_LEN];
    reader.read_exact(&mut header).ok()?;
    let (len, digest) = decode_header(&header, key, file_len)?;
    let mut payload = Vec::new();
    payload.try_reserve_exact(usize::try_from(len).ok()?).ok()?;
    reader.take(len).read_to_end(&mut payload).ok()?;
    let whole = payload.len() as u64 == len && Sha256::digest(&payload).as_slice() == digest;
    whole.then_some(payload)
}

/// An entry's bytes: header, then payload.
fn encode_entry(key: &[u8; 32], payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&Sha256::digest(payload));
    bytes.extend_from_slice(payload);
    bytes
}

/// Writes the entry under an unpredictable temporary name in the same folder, then renames
/// it into place, so a reader never sees half an entry and nothing planted at a temporary
/// name is followed.
fn store(path: &Path, key: &[u8; 32], payload: &[u8]) -> std::io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(&encode_entry(key, payload))?;
    file.commit()?;
    Ok(())
}

/// A temporary file this old is left by a process killed while writing it: a live write
/// takes well under a second, even for a large program.
const STALE_TMP: Duration = Duration::from_secs(10 * 60);

/// Removes the least recently used entries (oldest mtime) until the folder holds at most
/// `max` bytes; the entry just written (`keep`) stays even if it alone is over the cap. Also
/// removes the temporary files of writes that never finished (see [`STALE_TMP`]). Only files
/// with an entry's name (or a temporary one's) that are regular files and start with an
/// entry's header are ever deleted: the folder may hold other things.
fn evict(dir: &Path, keep: Option<&Path>, max: u64) {
    let Ok(read) = fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = read
        .filter_map(|e| {
            let e = e.ok()?;
            // The entry's own type: a symlink is never followed, so never counted or deleted.
            if !e.file_type().ok()?.is_file() {
                return None;
            }
            let name = e.file_name();
            let path = e.path();
            let m = e.metadata().ok()?;
            let modified = m.modified().ok()?;
            if is_temporary(&name) {
                let stale = now
                    .duration_since(modified)
                    .is_ok_and(|age| age > STALE_TMP);
                if stale && starts_like_an_entry(&path, true) {
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
            is_entry_name(&name).then_some((modified, m.len(), path))
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
        if Some(path.as_path()) == keep || !starts_like_an_entry(&path, false) {
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

/// `<64 hex digits>.jxc`: the name [`compile`] gives an entry.
fn is_entry_name(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| {
        n.strip_suffix(".jxc")
            .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
    })
}

/// `.<64 hex digits>.<anything>.tmp`: the name of an entry being written (an
/// [`AtomicFile`]'s `.<key>.jxc.<random>.tmp`, or older jaxrs's `.<key>.<pid>.<thread>.tmp`).
fn is_temporary(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| {
        n.strip_prefix('.')
            .and_then(|n| n.strip_suffix(".tmp"))
            .and_then(|n| n.split_once('.'))
            .is_some_and(|(h, _)| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
    })
}

/// Does the file start with jaxrs's magic? An unfinished write (`partial`) may hold only a
/// prefix of it, or nothing yet.
fn starts_like_an_entry(path: &Path, partial: bool) -> bool {
    let Ok(file) = fs_safety::open_regular(path) else {
        return false;
    };
    let mut start = Vec::with_capacity(MAGIC.len());
    if file
        .take(MAGIC.len() as u64)
        .read_to_end(&mut start)
        .is_err()
    {
        return false;
    }
    if partial {
        MAGIC.starts_with(&start)
    } else {
        start == MAGIC
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEY: [u8; 32] = [7; 32];

    fn decode(bytes: &[u8]) -> Option<Vec<u8>> {
        read_entry(bytes, bytes.len() as u64, &KEY)
    }

    #[test]
    fn an_entry_round_trips() {
        let entry = encode_entry(&KEY, b"serialized program");
        assert_eq!(decode(&entry).as_deref(), Some(&b"serialized program"[..]));
        assert_eq!(read_entry(&entry[..], entry.len() as u64, &[8; 32]), None);
    }

    #[test]
    fn a_header_claiming_more_than_the_file_allocates_nothing() {
        let mut entry = encode_entry(&KEY, b"abc");
        entry[44..52].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(decode_header(&entry[..HEADER_LEN], &KEY, u64::MAX), None);
        // A file that claims to be huge (its size changed under us) is refused by the cap.
        let len = MAX_ENTRY_BYTES + 1;
        entry[44..52].copy_from_slice(&len.to_le_bytes());
        assert_eq!(
            decode_header(&entry[..HEADER_LEN], &KEY, len + HEADER_LEN as u64),
            None
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Random bytes are never an entry, and decoding them neither panics nor allocates
        /// past the bytes present.
        #[test]
        fn random_bytes_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(decode(&bytes), None);
        }

        /// Whatever length the file system reports, the header's length must agree with it
        /// and the payload allocation is the header's checked length, never more.
        #[test]
        fn a_lying_file_length_is_refused(
            payload in proptest::collection::vec(any::<u8>(), 0..200),
            claimed in any::<u64>(),
        ) {
            let entry = encode_entry(&KEY, &payload);
            let got = read_entry(&entry[..], claimed, &KEY);
            if claimed == entry.len() as u64 {
                prop_assert_eq!(got.as_deref(), Some(&payload[..]));
            } else {
                prop_assert_eq!(got, None);
            }
            if let Some((len, _)) = decode_header(&entry[..HEADER_LEN], &KEY, claimed) {
                prop_assert!(len <= MAX_ENTRY_BYTES && len + HEADER_LEN as u64 == claimed);
            }
        }

        /// Every truncation of a valid entry is refused.
        #[test]
        fn a_truncated_entry_is_refused(
            payload in proptest::collection::vec(any::<u8>(), 0..200),
            cut in any::<prop::sample::Index>(),
        ) {
            let entry = encode_entry(&KEY, &payload);
            let cut = cut.index(entry.len());
            prop_assert_eq!(decode(&entry[..cut]), None);
            // Truncated while the stat said the full size: the reader runs dry.
            prop_assert_eq!(read_entry(&entry[..cut], entry.len() as u64, &KEY), None);
        }

        /// Every single bit flip, in the header or the payload, is caught.
        #[test]
        fn a_bit_flipped_entry_is_refused(
            payload in proptest::collection::vec(any::<u8>(), 0..200),
            at in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let mut entry = encode_entry(&KEY, &payload);
            let at = at.index(entry.len());
            entry[at] ^= 1 << bit;
            prop_assert_eq!(decode(&entry), None);
        }

        /// The decoded payload's buffer is exactly its length: no growth past the bound.
        #[test]
        fn a_valid_entry_allocates_its_length(
            payload in proptest::collection::vec(any::<u8>(), 0..2000),
        ) {
            let entry = encode_entry(&KEY, &payload);
            let got = decode(&entry).expect("a valid entry");
            prop_assert_eq!(got.capacity(), payload.len());
            prop_assert_eq!(got, payload);
        }
    }
}
