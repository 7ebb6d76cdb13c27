//! Finding the PJRT plugin, and provisioning the CPU one on first use.
//!
//! In order: `JAXRS_PJRT_PLUGIN` (a path to any plugin `.so`, used as given: the user chose
//! it); the cache folder (`JAXRS_CACHE_DIR`, else `$XDG_CACHE_HOME/jaxrs`, else
//! `~/.cache/jaxrs`); else the CPU plugin is downloaded once from a PEP 691 index
//! (`JAXRS_INDEX_URL`, PyPI's `https://pypi.org/simple` by default;
//! `lammps-jax-pjrt-cpu==0.11.2`, the wheel's SHA-256 pinned, so a mirror or plain `http` can
//! change nothing), extracted with its licence files into a temporary folder of the cache, and
//! renamed into place. `JAXRS_OFFLINE=1` forbids the download.
//!
//! What is trusted and what is checked:
//!
//! - The cache folders (`<cache>`, `<cache>/pjrt` and the plugin's folder) are created 0700
//!   and must be owned by this process's user and writable by nobody else; otherwise jaxrs
//!   refuses to load or install a plugin there, saying which folder and why.
//! - The installed `.so` must be a regular file (not a symlink). Its SHA-256, size, mtime and
//!   ctime are recorded beside it at install ([`RECORD_FILE`]); whenever the file's size,
//!   mtime or ctime differ from the record it is hashed again, before it is loaded, and must
//!   match the record or the pinned [`PLUGIN_SHA256`]. The usual start-up costs one `stat` and
//!   a small read; a plugin placed by hand (no record yet) is hashed once.
//! - Every network phase is bounded: connecting, and each read or write, give up after
//!   `JAXRS_DOWNLOAD_TIMEOUT` seconds without progress (15 by default, pip's figure).
//! - One process downloads; the others wait on a lock file (`<cache>/pjrt/.lock`, opened
//!   without truncating or following a symlink) that holds the downloader's pid and whose mtime
//!   is its heartbeat. A waiter gives up, naming that pid, when the holder shows no progress
//!   for twice the download timeout (plus 5 s); a holder that died has released the lock
//!   (the kernel drops a dead process's `flock`), so it is simply taken over. When the holder
//!   fails, the processes that waited for it fail at once with its reason instead of trying
//!   again one after another.
//! - Temporary folders of downloads that were killed are removed by the next download.

use crate::error::Error;
use crate::error::Result;
use crate::fs_safety::{self, LockFile, WithPath};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, IsTerminal, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The pinned CPU plugin package.
pub const PACKAGE: &str = "lammps-jax-pjrt-cpu";
pub const VERSION: &str = "0.11.2";
pub const WHEEL: &str = "lammps_jax_pjrt_cpu-0.11.2-py3-none-manylinux_2_27_x86_64.whl";
pub const WHEEL_SHA256: &str = "1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1";
/// The plugin inside the wheel.
pub const WHEEL_PLUGIN: &str = "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so";
/// The SHA-256 of [`WHEEL_PLUGIN`] in the pinned wheel: a plugin placed in the cache by hand
/// must have it.
pub const PLUGIN_SHA256: &str = "ad1309ac822b1b24d51b7f9947c7c9fa9ef5d67f390584cbc3d1fa2428fed9c2";
/// The plugin's file name in the cache.
pub const PLUGIN_FILE: &str = "pjrt_c_api_cpu_plugin.so";
/// Beside the plugin: its SHA-256 and the size, mtime and ctime it had when last verified.
pub const RECORD_FILE: &str = "pjrt_c_api_cpu_plugin.so.verified";
/// Licence files kept beside the plugin (from the wheel's `.dist-info`).
pub const LICENCE_FILES: [&str; 2] = ["LICENSE", "THIRD_PARTY_NOTICES"];
/// The index jaxrs asks for the wheel unless `JAXRS_INDEX_URL` says otherwise.
pub const DEFAULT_INDEX_URL: &str = "https://pypi.org/simple";
/// How long a network phase may go without progress unless `JAXRS_DOWNLOAD_TIMEOUT` says
/// otherwise (pip's default).
pub const DEFAULT_DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(15);
/// Written by a download that failed, read by the processes that waited for it.
const FAILURE_FILE: &str = ".last-failure";

/// The environment that decides where the plugin comes from.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `JAXRS_PJRT_PLUGIN`.
    pub plugin: Option<OsString>,
    /// The cache folder (`JAXRS_CACHE_DIR` or the user's cache dir + `/jaxrs`).
    pub cache_dir: Option<PathBuf>,
    /// `JAXRS_OFFLINE` set (to anything but `0`/`false`/empty).
    pub offline: bool,
    /// `JAXRS_INDEX_URL`: a PEP 691 simple index (default [`DEFAULT_INDEX_URL`]).
    pub index_url: Option<OsString>,
    /// `JAXRS_DOWNLOAD_TIMEOUT`, as set: seconds (default [`DEFAULT_DOWNLOAD_TIMEOUT`]).
    /// Checked only when a download is needed.
    pub download_timeout: Option<OsString>,
}

impl Env {
    /// Reads the process environment.
    pub fn from_process() -> Env {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let cache_dir = var("JAXRS_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| var("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("jaxrs")))
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache").join("jaxrs")));
        let offline = var("JAXRS_OFFLINE").is_some_and(|v| v != "0" && v != "false");
        Env {
            plugin: var("JAXRS_PJRT_PLUGIN"),
            cache_dir,
            offline,
            index_url: var("JAXRS_INDEX_URL"),
            download_timeout: var("JAXRS_DOWNLOAD_TIMEOUT"),
        }
    }

    /// The download timeout: `JAXRS_DOWNLOAD_TIMEOUT` seconds (fractions allowed, more than
    /// zero), else the default. A value that is not one is an error naming it.
    fn timeout(&self) -> Result<Duration> {
        let Some(raw) = &self.download_timeout else {
            return Ok(DEFAULT_DOWNLOAD_TIMEOUT);
        };
        raw.to_str()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                Error::Provision(format!(
                    "JAXRS_DOWNLOAD_TIMEOUT={} is not a number of seconds: set it to e.g. 60, \
                     or unset it for the default of {} s",
                    raw.to_string_lossy(),
                    DEFAULT_DOWNLOAD_TIMEOUT.as_secs()
                ))
            })
    }

    /// The URL of the package's page in the index.
    fn package_url(&self) -> Result<String> {
        let base = match &self.index_url {
            None => DEFAULT_INDEX_URL.to_string(),
            Some(raw) => raw.to_str().map(str::to_string).ok_or_else(|| {
                Error::Provision(format!(
                    "JAXRS_INDEX_URL={} is not UTF-8",
                    raw.to_string_lossy()
                ))
            })?,
        };
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(Error::Provision(format!(
                "JAXRS_INDEX_URL={base} is not an http(s) URL of a simple index (like \
                 {DEFAULT_INDEX_URL})"
            )));
        }
        Ok(format!("{}/{PACKAGE}/", base.trim_end_matches('/')))
    }
}

/// The path of the PJRT plugin to load, provisioning the CPU plugin if needed.
pub fn plugin_path() -> Result<PathBuf> {
    resolve(&Env::from_process())
}

/// Where the CPU plugin lives inside a cache folder.
pub fn cached_plugin_dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join("pjrt").join(format!("{PACKAGE}-{VERSION}"))
}

/// [`plugin_path`] for an explicit environment.
pub fn resolve(env: &Env) -> Result<PathBuf> {
    if let Some(p) = &env.plugin {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(Error::PluginNotFound(format!(
                "JAXRS_PJRT_PLUGIN is set to {}, but there is no file there; point it at a PJRT \
                 plugin .so, or unset it to use the CPU plugin",
                p.display()
            )))
        };
    }
    let cache = env.cache_dir.as_deref().ok_or_else(|| {
        Error::PluginNotFound(
            "no cache folder: set JAXRS_CACHE_DIR (or HOME), or set JAXRS_PJRT_PLUGIN to a \
             PJRT plugin .so"
                .into(),
        )
    })?;
    let dir = cached_plugin_dir(cache);
    let plugin = dir.join(PLUGIN_FILE);
    let pjrt = cache.join("pjrt");
    if fs::symlink_metadata(&plugin).is_ok() {
        return verified(cache, &dir);
    }
    if env.offline {
        return Err(not_found(
            &dir,
            "JAXRS_OFFLINE is set, so it is not downloaded",
        ));
    }
    let timeout = env.timeout()?;
    let url = env.package_url()?;
    fs_safety::create_private_folder(&pjrt).map_err(io::Error::from)?;
    trusted(cache)?;
    trusted(&pjrt)?;
    let waited_since = SystemTime::now();
    let (lock, waited) = acquire(&pjrt.join(".lock"), timeout)?;
    // Another process may have provisioned it while we waited for the lock.
    if fs::symlink_metadata(&plugin).is_ok() {
        return verified(cache, &dir);
    }
    if waited {
        if let Some(why) = recent_failure(&pjrt, waited_since) {
            return Err(not_found(
                &dir,
                &format!("the process that downloaded it while this one waited failed: {why}"),
            ));
        }
    }
    remove_stale_temporaries(&pjrt);
    let beat = || lock.heartbeat();
    let wheel = match fetch_wheel(&url, timeout, &beat) {
        Ok(w) => w,
        Err(Fetch::Network(why)) => {
            let _ = fs_safety::write_atomic(&pjrt.join(FAILURE_FILE), why.as_bytes());
            return Err(not_found(&dir, &why));
        }
        Err(Fetch::Other(e)) => return Err(e),
    };
    match install(wheel.reader, WHEEL_SHA256, wheel.size, &dir, &beat) {
        Ok(()) => {}
        Err(Error::Provision(why)) if why.starts_with(INTERRUPTED) => {
            let why = format!("{why}{}", timeout_hint(timeout));
            let _ = fs_safety::write_atomic(&pjrt.join(FAILURE_FILE), why.as_bytes());
            return Err(not_found(&dir, &why));
        }
        Err(e) => return Err(e),
    }
    let _ = fs::remove_file(pjrt.join(FAILURE_FILE));
    drop(lock);
    verified(cache, &dir)
}

/// The installed plugin's path, once its folders are trusted and the file is what was
/// installed.
fn verified(cache: &Path, dir: &Path) -> Result<PathBuf> {
    trusted(cache)?;
    trusted(&cache.join("pjrt"))?;
    trusted(dir)?;
    let plugin = dir.join(PLUGIN_FILE);
    verify_plugin(&plugin, &dir.join(RECORD_FILE))?;
    Ok(plugin)
}

fn trusted(folder: &Path) -> Result<()> {
    fs_safety::check_private_folder(folder).map_err(|e| Error::PluginLoad {
        path: folder.display().to_string(),
        reason: format!(
            "{e}. Whoever can write this folder chooses the code jaxrs loads; fix it, or \
                 set JAXRS_CACHE_DIR to a folder of your own"
        ),
    })
}

/// A file's size, mtime and ctime (nanoseconds): what changes when anyone writes it, renames
/// another file over it, or even sets its mtime back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
            Stamp {
                size: meta.len(),
                mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
                ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            }
        }
        #[cfg(not(unix))]
        Stamp {
            size: meta.len(),
            mtime_ns: 0,
            ctime_ns: 0,
        }
    }
}

/// What [`RECORD_FILE`] holds.
struct Record {
    sha256: String,
    stamp: Stamp,
}

impl Record {
    fn encode(&self) -> String {
        format!(
            "sha256 {}\nsize {}\nmtime_ns {}\nctime_ns {}\n",
            self.sha256, self.stamp.size, self.stamp.mtime_ns, self.stamp.ctime_ns
        )
    }

    /// The record at `path`, or `None` if absent or unreadable (then the plugin is hashed).
    fn read(path: &Path) -> Option<Record> {
        let file = fs_safety::open_regular(path).ok()?;
        let mut text = String::new();
        file.take(1024).read_to_string(&mut text).ok()?;
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
                .map(str::to_string)
        };
        let sha256 = field("sha256")?;
        let stamp = Stamp {
            size: field("size")?.parse().ok()?,
            mtime_ns: field("mtime_ns")?.parse().ok()?,
            ctime_ns: field("ctime_ns")?.parse().ok()?,
        };
        (sha256.len() == 64).then_some(Record { sha256, stamp })
    }
}

/// Checks the installed plugin before anything loads it: a regular file, not writable by
/// others, and, if it changed since it was last verified, with the recorded (or pinned)
/// SHA-256.
fn verify_plugin(plugin: &Path, record_path: &Path) -> Result<()> {
    let refuse = |reason: String| Error::PluginLoad {
        path: plugin.display().to_string(),
        reason,
    };
    let meta = fs::symlink_metadata(plugin).map_err(|e| refuse(e.to_string()))?;
    if !meta.is_file() {
        return Err(refuse(
            "it is not a regular file (a symlink is not followed here); copy the plugin into \
             the cache, or point JAXRS_PJRT_PLUGIN at it"
                .into(),
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != fs_safety::effective_uid() || meta.mode() & 0o022 != 0 {
            return Err(refuse(format!(
                "it is owned by uid {} with mode {:04o}: it must be this user's and writable by \
                 nobody else",
                meta.uid(),
                meta.mode() & 0o7777
            )));
        }
    }
    let stamp = Stamp::of(&meta);
    let record = Record::read(record_path);
    if record.as_ref().is_some_and(|r| r.stamp == stamp) {
        return Ok(());
    }
    let file = fs_safety::open_regular(plugin).map_err(|e| refuse(e.to_string()))?;
    let got = sha256_of(file).map_err(|e| refuse(format!("cannot read it: {e}")))?;
    let recorded = record.as_ref().map(|r| r.sha256.as_str());
    if got != PLUGIN_SHA256 && Some(got.as_str()) != recorded {
        let expected = recorded.unwrap_or(PLUGIN_SHA256);
        return Err(refuse(format!(
            "its SHA-256 is {got}, but {expected} was {}: it was replaced or corrupted, and \
             jaxrs will not load it. Delete {} to have it downloaded again",
            if recorded.is_some() {
                "recorded when it was installed"
            } else {
                "expected (the pinned plugin's)"
            },
            plugin.parent().unwrap_or(plugin).display()
        )));
    }
    // Hashing stat'ed the file after `meta`; a record is only written for the state just
    // verified, so re-stat and record only if nothing moved meanwhile.
    if let Ok(now) = fs::symlink_metadata(plugin) {
        if Stamp::of(&now) == stamp {
            let record = Record { sha256: got, stamp };
            if let Err(e) = fs_safety::write_atomic(record_path, record.encode().as_bytes()) {
                log::debug!("cannot record the plugin's hash: {e}");
            }
        }
    }
    Ok(())
}

fn sha256_of(mut file: File) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(hex(&hasher.finalize()))
}

/// Takes the cache's lock, waiting while its holder makes progress (see the module's doc).
/// Returns the lock and whether it had to wait.
fn acquire(path: &Path, timeout: Duration) -> Result<(LockFile, bool)> {
    let mut lock = LockFile::open(path).map_err(io::Error::from)?;
    if lock.try_lock().map_err(io::Error::from)? {
        return Ok((lock, false));
    }
    // A healthy holder beats at least once per network phase, each bounded by `timeout`.
    let patience = timeout * 2 + Duration::from_secs(5);
    let mut beat = lock.last_heartbeat();
    let mut deadline = Instant::now() + patience;
    let holder = |lock: &LockFile| {
        lock.holder()
            .map_or("another process".to_string(), |p| format!("process {p}"))
    };
    eprintln!(
        "jaxrs: waiting for {} to finish downloading the PJRT CPU plugin (lock {})",
        holder(&lock),
        path.display()
    );
    loop {
        std::thread::sleep(Duration::from_millis(50));
        if lock.try_lock().map_err(io::Error::from)? {
            return Ok((lock, true));
        }
        let now = lock.last_heartbeat();
        if now != beat {
            beat = now;
            deadline = Instant::now() + patience;
        } else if Instant::now() >= deadline {
            return Err(Error::Provision(format!(
                "{} holds {} and has shown no progress for {:.0} s; if it is stuck, end it, \
                 then run again (JAXRS_DOWNLOAD_TIMEOUT={} s sets how long a silent network \
                 is waited for)",
                holder(&lock),
                path.display(),
                patience.as_secs_f64(),
                timeout.as_secs_f64()
            )));
        }
    }
}

/// The reason a download failed since `since`, if one did.
fn recent_failure(pjrt: &Path, since: SystemTime) -> Option<String> {
    let path = pjrt.join(FAILURE_FILE);
    let file = fs_safety::open_regular(&path).ok()?;
    let written = file.metadata().ok()?.modified().ok()?;
    // A second of slack for file systems with coarse timestamps.
    if written + Duration::from_secs(1) < since {
        return None;
    }
    let mut why = String::new();
    file.take(4096).read_to_string(&mut why).ok()?;
    Some(why)
}

/// Removes what killed downloads left: `.tmp-*` folders beside the plugin's. Called with the
/// lock held, so no live download owns one.
fn remove_stale_temporaries(pjrt: &Path) {
    let Ok(read) = fs::read_dir(pjrt) else { return };
    for e in read.flatten() {
        let is_temp = e
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(".tmp-"));
        if is_temp && e.file_type().is_ok_and(|t| t.is_dir()) {
            match fs::remove_dir_all(e.path()) {
                Ok(()) => log::debug!("removed the unfinished download {}", e.path().display()),
                Err(err) => log::debug!("cannot remove {}: {err}", e.path().display()),
            }
        }
    }
}

fn not_found(dir: &Path, why: &str) -> Error {
    Error::PluginNotFound(format!(
        "the CPU plugin is not in the cache and {why}. Either set JAXRS_PJRT_PLUGIN to the \
         path of a PJRT plugin .so, or run `pip download --no-deps {PACKAGE}=={VERSION}` and \
         extract {WHEEL_PLUGIN} from the wheel (a zip) into {}/ so that {}/{PLUGIN_FILE} exists",
        dir.display(),
        dir.display()
    ))
}

fn timeout_hint(timeout: Duration) -> String {
    format!(
        " (no progress for {:.1} s; JAXRS_DOWNLOAD_TIMEOUT sets the limit in seconds)",
        timeout.as_secs_f64()
    )
}

enum Fetch {
    /// The network said no: the user can still supply the plugin by hand.
    Network(String),
    Other(Error),
}

struct Wheel {
    reader: Box<dyn Read + Send>,
    size: Option<u64>,
}

fn fetch_wheel(
    package_url: &str,
    timeout: Duration,
    beat: &dyn Fn(),
) -> std::result::Result<Wheel, Fetch> {
    let net = |what: &str, e: ureq::Error| {
        let hint = if matches!(e, ureq::Error::Timeout(_)) {
            timeout_hint(timeout)
        } else {
            String::new()
        };
        Fetch::Network(format!("{what} failed ({e}){hint}"))
    };
    // Per phase and per read, like pip's socket timeout: a slow download that keeps moving
    // is never cut, a silent one is.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_resolve(Some(timeout))
        .timeout_connect(Some(timeout))
        .timeout_per_read(Some(timeout))
        .timeout_per_write(Some(timeout))
        .user_agent(concat!("jaxrs/", env!("CARGO_PKG_VERSION")))
        // The system's trust store (which honours SSL_CERT_FILE), so a proxy with its own CA
        // works as it does for pip and curl.
        .tls_config(
            ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::PlatformVerifier)
                .build(),
        )
        .build()
        .into();
    beat();
    let mut index = agent
        .get(package_url)
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .call()
        .map_err(|e| net("asking the index for the wheel", e))?;
    let text = index
        .body_mut()
        .with_config()
        .limit(16 << 20)
        .read_to_string()
        .map_err(|e| net("reading the index's answer", e))?;
    beat();
    let (url, size) =
        wheel_url(&text, package_url).map_err(|m| Fetch::Other(Error::Provision(m)))?;
    let resp = agent
        .get(&url)
        .call()
        .map_err(|e| net("downloading the wheel", e))?;
    beat();
    let size = size.or_else(|| {
        resp.headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
    });
    Ok(Wheel {
        reader: Box::new(resp.into_body().into_reader()),
        size,
    })
}

/// Finds the pinned wheel's URL (and size) in a PEP 691 JSON simple index served at
/// `page_url`.
fn wheel_url(
    index_json: &str,
    page_url: &str,
) -> std::result::Result<(String, Option<u64>), String> {
    let v: serde_json::Value = serde_json::from_str(index_json)
        .map_err(|e| format!("the index's page for {PACKAGE} is not JSON: {e}"))?;
    let files = v["files"]
        .as_array()
        .ok_or_else(|| format!("the index's page for {PACKAGE} lists no files"))?;
    let f = files
        .iter()
        .find(|f| f["filename"] == WHEEL)
        .ok_or_else(|| format!("the index no longer lists {WHEEL}"))?;
    if let Some(h) = f["hashes"]["sha256"].as_str() {
        if h != WHEEL_SHA256 {
            return Err(format!(
                "the index lists {WHEEL} with SHA-256 {h}, but jaxrs pins {WHEEL_SHA256}"
            ));
        }
    }
    let url = f["url"]
        .as_str()
        .ok_or_else(|| format!("the index lists {WHEEL} without a URL"))?;
    Ok((join_url(page_url, url), f["size"].as_u64()))
}

/// `url` as found on the page at `page` (PEP 691 allows relative URLs).
fn join_url(page: &str, url: &str) -> String {
    if url.starts_with("https://") || url.starts_with("http://") {
        return url.to_string();
    }
    let (scheme, rest) = page.split_once("://").unwrap_or(("https", page));
    let origin = rest.split('/').next().unwrap_or("");
    if let Some(net_path) = url.strip_prefix("//") {
        format!("{scheme}://{net_path}")
    } else if let Some(abs) = url.strip_prefix('/') {
        format!("{scheme}://{origin}/{abs}")
    } else {
        let folder = &page[..page.rfind('/').map_or(page.len(), |i| i + 1)];
        format!("{folder}{url}")
    }
}

/// Streams a wheel to a temporary file while hashing it, checks the SHA-256 against
/// `expected_sha256`, extracts the plugin and its licence files, records the plugin's hash
/// ([`RECORD_FILE`]), and renames the result to `dest` (atomically: `dest` either does not
/// exist or is complete). `size` is only for the progress line. Call with the cache's lock
/// held.
pub fn install_wheel(
    reader: impl Read,
    expected_sha256: &str,
    size: Option<u64>,
    dest: &Path,
) -> Result<()> {
    install(reader, expected_sha256, size, dest, &|| {})
}

/// The prefix of the error a failed read of the download gives.
const INTERRUPTED: &str = "download interrupted";

fn install(
    reader: impl Read,
    expected_sha256: &str,
    size: Option<u64>,
    dest: &Path,
    beat: &dyn Fn(),
) -> Result<()> {
    let parent = dest
        .parent()
        .ok_or_else(|| Error::Provision(format!("{} has no parent folder", dest.display())))?;
    fs_safety::create_private_folder(parent).map_err(io::Error::from)?;
    // An unpredictable name, created 0700: nobody can plant files in it beforehand.
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempdir_in(parent)
        .at("create a temporary folder in", parent)
        .map_err(io::Error::from)?;
    install_into(reader, expected_sha256, size, tmp.path(), dest, beat)
}

/// Copies `from` to `to` while hashing what is copied, calling `beat` as it goes.
fn copy_hashing(from: &mut impl Read, to: &mut File, beat: &dyn Fn()) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut last = Instant::now();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        to.write_all(&buf[..n])?;
        if last.elapsed() > Duration::from_millis(500) {
            beat();
            last = Instant::now();
        }
    }
    Ok(hex(&hasher.finalize()))
}

fn install_into(
    mut reader: impl Read,
    expected_sha256: &str,
    size: Option<u64>,
    tmp: &Path,
    dest: &Path,
    beat: &dyn Fn(),
) -> Result<()> {
    let wheel_path = tmp.join("wheel.zip");
    let mut wheel = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&wheel_path)?;
    let mut hasher = Sha256::new();
    let mut progress = Progress::new(size);
    let mut buf = vec![0u8; 1 << 16];
    let mut last_beat = Instant::now();
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                progress.finish(false);
                return Err(Error::Provision(format!("{INTERRUPTED}: {e}")));
            }
        };
        hasher.update(&buf[..n]);
        wheel.write_all(&buf[..n])?;
        progress.add(n as u64);
        if last_beat.elapsed() > Duration::from_millis(500) {
            beat();
            last_beat = Instant::now();
        }
    }
    progress.finish(true);
    let got = hex(&hasher.finalize());
    if !got.eq_ignore_ascii_case(expected_sha256) {
        return Err(Error::Provision(format!(
            "the downloaded wheel's SHA-256 is {got}, expected {expected_sha256}: refusing to \
             use it"
        )));
    }
    wheel.flush()?;
    wheel.rewind()?;
    eprintln!(
        "jaxrs: verified SHA-256; extracting the plugin into {}",
        dest.display()
    );
    let bad =
        |e: zip::result::ZipError| Error::Provision(format!("the wheel is not a valid zip: {e}"));
    let mut zip = zip::ZipArchive::new(wheel).map_err(bad)?;
    let staged = tmp.join("plugin");
    fs_safety::create_private_folder(&staged).map_err(io::Error::from)?;
    {
        let mut entry = zip
            .by_name(WHEEL_PLUGIN)
            .map_err(|_| Error::Provision(format!("the wheel has no {WHEEL_PLUGIN}")))?;
        let out_path = staged.join(PLUGIN_FILE);
        let mut out = File::create(&out_path)?;
        let sha256 = copy_hashing(&mut entry, &mut out, beat)?;
        out.sync_all()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&out_path, fs::Permissions::from_mode(0o755))?;
        }
        // Stamped after the last change of its mode, which moves its ctime.
        let record = Record {
            sha256,
            stamp: Stamp::of(&fs::symlink_metadata(&out_path)?),
        };
        fs_safety::write_atomic(&staged.join(RECORD_FILE), record.encode().as_bytes())
            .map_err(io::Error::from)?;
    }
    for name in LICENCE_FILES {
        let member = zip
            .file_names()
            .filter_map(|n| n.ok())
            .find(|n| {
                let top = n.split('/').next().unwrap_or("");
                top.ends_with(".dist-info") && n.rsplit('/').next() == Some(name)
            })
            .map(|n| n.into_owned());
        let Some(member) = member else {
            return Err(Error::Provision(format!(
                "the wheel's .dist-info has no {name}"
            )));
        };
        let mut entry = zip.by_name(&member).map_err(bad)?;
        let mut out = File::create(staged.join(name))?;
        io::copy(&mut entry, &mut out)?;
    }
    // A leftover folder without the plugin (from an interrupted run) is replaced.
    if dest.exists() {
        fs::remove_dir_all(dest)?;
    }
    fs::rename(&staged, dest)?;
    fs_safety::sync_folder(dest.parent().unwrap_or(dest)).map_err(io::Error::from)?;
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A progress line on stderr: redrawn in place on a terminal, one line per 10% otherwise.
struct Progress {
    total: Option<u64>,
    done: u64,
    shown: u64,
    tty: bool,
    start: Instant,
}

impl Progress {
    fn new(total: Option<u64>) -> Progress {
        let tty = io::stderr().is_terminal();
        let size = total.map_or(String::new(), |t| format!(" ({:.1} MB)", t as f64 / 1e6));
        eprint!("jaxrs: downloading PJRT CPU plugin{size} ...");
        if !tty {
            eprintln!();
        }
        Progress {
            total,
            done: 0,
            shown: 0,
            tty,
            start: Instant::now(),
        }
    }

    fn add(&mut self, n: u64) {
        self.done += n;
        let Some(total) = self.total.filter(|t| *t > 0) else {
            return;
        };
        let pct = (self.done * 100 / total).min(100);
        let step = if self.tty { 1 } else { 10 };
        if pct >= self.shown + step {
            self.shown = pct - pct % step;
            if self.tty {
                eprint!(
                    "\rjaxrs: downloading PJRT CPU plugin ({:.1} MB) ... {pct}%",
                    total as f64 / 1e6
                );
            } else {
                eprintln!("jaxrs: downloading PJRT CPU plugin ... {pct}%");
            }
        }
    }

    fn finish(&mut self, ok: bool) {
        let secs = self.start.elapsed().as_secs_f64();
        let mb = self.done as f64 / 1e6;
        if self.tty {
            eprintln!();
        }
        if ok {
            eprintln!("jaxrs: downloaded {mb:.1} MB in {secs:.1} s");
        } else {
            eprintln!("jaxrs: download failed after {mb:.1} MB");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("jaxrs-provision-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn small_wheel() -> Vec<u8> {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let deflated = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        w.start_file(WHEEL_PLUGIN, deflated).unwrap();
        w.write_all(&b"\x7fELF not really a plugin ".repeat(100))
            .unwrap();
        w.start_file("lammps_jax_pjrt_cpu/__init__.py", stored)
            .unwrap();
        w.write_all(b"").unwrap();
        w.start_file(
            "lammps_jax_pjrt_cpu-0.11.2.dist-info/licenses/LICENSE",
            stored,
        )
        .unwrap();
        w.write_all(b"Apache-2.0").unwrap();
        w.start_file(
            "lammps_jax_pjrt_cpu-0.11.2.dist-info/licenses/THIRD_PARTY_NOTICES",
            deflated,
        )
        .unwrap();
        w.write_all(b"notices").unwrap();
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn right_hash_installs_plugin_and_licences() {
        let wheel = small_wheel();
        let hash = hex(&Sha256::digest(&wheel));
        let cache = scratch("ok");
        let dest = cached_plugin_dir(&cache);
        install_wheel(Cursor::new(&wheel), &hash, Some(wheel.len() as u64), &dest).unwrap();
        let so = fs::read(dest.join(PLUGIN_FILE)).unwrap();
        assert_eq!(so, b"\x7fELF not really a plugin ".repeat(100));
        assert_eq!(fs::read(dest.join("LICENSE")).unwrap(), b"Apache-2.0");
        assert_eq!(
            fs::read(dest.join("THIRD_PARTY_NOTICES")).unwrap(),
            b"notices"
        );
        // Nothing else is left in the cache's pjrt folder (the temporary folder is gone).
        let names: Vec<_> = fs::read_dir(dest.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [dest.file_name().unwrap()]);
        // Now the resolver finds it, offline.
        let env = Env {
            plugin: None,
            cache_dir: Some(cache.clone()),
            offline: true,
            ..Env::default()
        };
        assert_eq!(resolve(&env).unwrap(), dest.join(PLUGIN_FILE));
        fs::remove_dir_all(cache).unwrap();
    }

    /// A small wheel installed into a scratch cache: the cache, the plugin's folder, and an
    /// offline `Env` that resolves from there.
    fn installed_small_plugin(name: &str) -> (PathBuf, PathBuf, Env) {
        let wheel = small_wheel();
        let hash = hex(&Sha256::digest(&wheel));
        let cache = scratch(name);
        let dest = cached_plugin_dir(&cache);
        install_wheel(Cursor::new(&wheel), &hash, None, &dest).unwrap();
        let env = Env {
            cache_dir: Some(cache.clone()),
            offline: true,
            ..Env::default()
        };
        (cache, dest, env)
    }

    #[test]
    fn a_replaced_plugin_is_hashed_again_and_refused() {
        let (cache, dest, env) = installed_small_plugin("replaced");
        let so = dest.join(PLUGIN_FILE);
        assert_eq!(resolve(&env).unwrap(), so);
        // Same size, and the old mtime put back: only the ctime tells, and it is enough.
        let old = fs::metadata(&so).unwrap().modified().unwrap();
        let mut bytes = fs::read(&so).unwrap();
        bytes[10] ^= 1;
        fs::write(&so, &bytes).unwrap();
        File::options()
            .write(true)
            .open(&so)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let e = resolve(&env).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::PluginLoad { .. }), "{e:?}");
        assert!(msg.contains("recorded when it was installed"), "{msg}");
        assert!(msg.contains(&hex(&Sha256::digest(&bytes))), "{msg}");
        // Put back, it is accepted again (and re-recorded).
        bytes[10] ^= 1;
        fs::write(&so, &bytes).unwrap();
        assert_eq!(resolve(&env).unwrap(), so);
        fs::remove_dir_all(cache).unwrap();
    }

    #[test]
    fn an_unchanged_plugin_is_not_hashed_again() {
        let (cache, dest, env) = installed_small_plugin("unchanged");
        // A record whose hash is wrong but whose stamp matches: only a re-hash would notice,
        // so its acceptance shows that start-up reads the stamp, not the 200 MB file.
        let record_path = dest.join(RECORD_FILE);
        let text = fs::read_to_string(&record_path).unwrap();
        let wrong = text.replace(
            text.lines().next().unwrap(),
            &format!("sha256 {}", "0".repeat(64)),
        );
        fs::write(&record_path, wrong).unwrap();
        assert_eq!(resolve(&env).unwrap(), dest.join(PLUGIN_FILE));
        fs::remove_dir_all(cache).unwrap();
    }

    #[test]
    fn wrong_hash_is_refused_and_leaves_nothing() {
        let wheel = small_wheel();
        let cache = scratch("bad");
        let dest = cached_plugin_dir(&cache);
        let e = install_wheel(Cursor::new(&wheel), WHEEL_SHA256, None, &dest).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Provision(_)), "{e:?}");
        assert!(msg.contains(WHEEL_SHA256), "{msg}");
        assert!(msg.contains(&hex(&Sha256::digest(&wheel))), "{msg}");
        assert!(!dest.exists());
        assert_eq!(fs::read_dir(dest.parent().unwrap()).unwrap().count(), 0);
        fs::remove_dir_all(cache).unwrap();
    }

    #[test]
    fn offline_without_plugin_says_how_to_supply_one() {
        let cache = scratch("offline");
        let env = Env {
            plugin: None,
            cache_dir: Some(cache.clone()),
            offline: true,
            ..Env::default()
        };
        let e = resolve(&env).unwrap_err();
        let Error::PluginNotFound(msg) = &e else {
            panic!("{e:?}")
        };
        assert!(msg.contains("JAXRS_PJRT_PLUGIN"), "{msg}");
        assert!(
            msg.contains("pip download --no-deps lammps-jax-pjrt-cpu==0.11.2"),
            "{msg}"
        );
        assert!(
            msg.contains(&cached_plugin_dir(&cache).display().to_string()),
            "{msg}"
        );
        fs::remove_dir_all(cache).unwrap();
    }

    #[test]
    fn explicit_plugin_path_must_exist() {
        let env = Env {
            plugin: Some("/nonexistent/libfoo.so".into()),
            cache_dir: None,
            offline: true,
            ..Env::default()
        };
        let e = resolve(&env).unwrap_err();
        assert!(matches!(&e, Error::PluginNotFound(m) if m.contains("/nonexistent/libfoo.so")));
        let dir = scratch("explicit");
        let so = dir.join("x.so");
        fs::write(&so, b"").unwrap();
        let env = Env {
            plugin: Some(so.clone().into()),
            ..env
        };
        assert_eq!(resolve(&env).unwrap(), so);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn finds_the_wheel_in_pypi_json() {
        let json = format!(
            r#"{{"meta":{{"api-version":"1.1"}},"name":"lammps-jax-pjrt-cpu","files":[
            {{"filename":"{WHEEL}","url":"https://files.example/x/{WHEEL}",
              "hashes":{{"sha256":"{WHEEL_SHA256}"}},"size":62711338}}]}}"#
        );
        let page = "https://pypi.org/simple/lammps-jax-pjrt-cpu/";
        let (url, size) = wheel_url(&json, page).unwrap();
        assert_eq!(url, format!("https://files.example/x/{WHEEL}"));
        assert_eq!(size, Some(62711338));
        let wrong = json.replace(WHEEL_SHA256, &"0".repeat(64));
        assert!(wheel_url(&wrong, page).unwrap_err().contains(WHEEL_SHA256));
    }

    #[test]
    fn relative_urls_are_joined_to_the_index_page() {
        let page = "http://127.0.0.1:8080/simple/lammps-jax-pjrt-cpu/";
        assert_eq!(
            join_url(page, "/files/w.whl"),
            "http://127.0.0.1:8080/files/w.whl"
        );
        assert_eq!(join_url(page, "w.whl"), format!("{page}w.whl"));
        assert_eq!(
            join_url(page, "//cdn.example/w.whl"),
            "http://cdn.example/w.whl"
        );
        assert_eq!(
            join_url(page, "https://x.example/w.whl"),
            "https://x.example/w.whl"
        );
    }
}
