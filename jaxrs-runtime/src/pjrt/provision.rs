//! Finding the PJRT plugin, and provisioning the CPU one on first use.
//!
//! In order: `JAXRS_PJRT_PLUGIN` (a path to any plugin `.so`); the cache folder
//! (`JAXRS_CACHE_DIR`, else `$XDG_CACHE_HOME/jaxrs`, else `~/.cache/jaxrs`); else the CPU
//! plugin is downloaded once from PyPI (`lammps-jax-pjrt-cpu==0.11.2`, SHA-256 pinned),
//! extracted with its licence files into a temporary folder of the cache, and renamed into
//! place. A file lock makes concurrent processes download it once. `JAXRS_OFFLINE=1` forbids
//! the download.

use crate::error::Error;
use crate::error::Result;
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, IsTerminal, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The pinned CPU plugin package.
pub const PACKAGE: &str = "lammps-jax-pjrt-cpu";
pub const VERSION: &str = "0.11.2";
pub const WHEEL: &str = "lammps_jax_pjrt_cpu-0.11.2-py3-none-manylinux_2_27_x86_64.whl";
pub const WHEEL_SHA256: &str = "1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1";
/// The plugin inside the wheel.
pub const WHEEL_PLUGIN: &str = "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so";
/// The plugin's file name in the cache.
pub const PLUGIN_FILE: &str = "pjrt_c_api_cpu_plugin.so";
/// Licence files kept beside the plugin (from the wheel's `.dist-info`).
pub const LICENCE_FILES: [&str; 2] = ["LICENSE", "THIRD_PARTY_NOTICES"];
const INDEX_URL: &str = "https://pypi.org/simple/lammps-jax-pjrt-cpu/";

/// The environment that decides where the plugin comes from.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `JAXRS_PJRT_PLUGIN`.
    pub plugin: Option<OsString>,
    /// The cache folder (`JAXRS_CACHE_DIR` or the user's cache dir + `/jaxrs`).
    pub cache_dir: Option<PathBuf>,
    /// `JAXRS_OFFLINE` set (to anything but `0`/`false`/empty).
    pub offline: bool,
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
        }
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
    if plugin.is_file() {
        return Ok(plugin);
    }
    if env.offline {
        return Err(not_found(
            &dir,
            "JAXRS_OFFLINE is set, so it is not downloaded",
        ));
    }
    let pjrt = cache.join("pjrt");
    fs::create_dir_all(&pjrt)?;
    let lock = File::create(pjrt.join(".lock"))?;
    lock.lock()?;
    // Another process may have provisioned it while we waited for the lock.
    if plugin.is_file() {
        return Ok(plugin);
    }
    let wheel = match fetch_wheel() {
        Ok(w) => w,
        Err(Fetch::Network(why)) => return Err(not_found(&dir, &why)),
        Err(Fetch::Other(e)) => return Err(e),
    };
    install_wheel(wheel.reader, WHEEL_SHA256, wheel.size, &dir)?;
    drop(lock);
    Ok(plugin)
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

enum Fetch {
    /// The network said no: the user can still supply the plugin by hand.
    Network(String),
    Other(Error),
}

struct Wheel {
    reader: Box<dyn Read + Send>,
    size: Option<u64>,
}

fn fetch_wheel() -> std::result::Result<Wheel, Fetch> {
    let net = |what: &str, e: ureq::Error| Fetch::Network(format!("{what} failed ({e})"));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(20)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
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
    let mut index = agent
        .get(INDEX_URL)
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .call()
        .map_err(|e| net("asking PyPI for the wheel", e))?;
    let text = index
        .body_mut()
        .read_to_string()
        .map_err(|e| net("reading PyPI's answer", e))?;
    let (url, size) = wheel_url(&text).map_err(|m| Fetch::Other(Error::Provision(m)))?;
    let resp = agent
        .get(&url)
        .call()
        .map_err(|e| net("downloading the wheel", e))?;
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

/// Finds the pinned wheel's URL (and size) in PyPI's JSON simple index (PEP 691).
fn wheel_url(index_json: &str) -> std::result::Result<(String, Option<u64>), String> {
    let v: serde_json::Value = serde_json::from_str(index_json)
        .map_err(|e| format!("PyPI's index for {PACKAGE} is not JSON: {e}"))?;
    let files = v["files"]
        .as_array()
        .ok_or_else(|| format!("PyPI's index for {PACKAGE} lists no files"))?;
    let f = files
        .iter()
        .find(|f| f["filename"] == WHEEL)
        .ok_or_else(|| format!("PyPI no longer lists {WHEEL}"))?;
    if let Some(h) = f["hashes"]["sha256"].as_str() {
        if h != WHEEL_SHA256 {
            return Err(format!(
                "PyPI lists {WHEEL} with SHA-256 {h}, but jaxrs pins {WHEEL_SHA256}"
            ));
        }
    }
    let url = f["url"]
        .as_str()
        .ok_or_else(|| format!("PyPI lists {WHEEL} without a URL"))?;
    // PEP 691 allows URLs relative to the index.
    let url = if url.starts_with("https://") || url.starts_with("http://") {
        url.to_string()
    } else if let Some(rest) = url.strip_prefix('/') {
        format!("https://pypi.org/{rest}")
    } else {
        format!("{INDEX_URL}{url}")
    };
    Ok((url, f["size"].as_u64()))
}

/// Streams a wheel to a temporary file while hashing it, checks the SHA-256 against
/// `expected_sha256`, extracts the plugin and its licence files, and renames the result to
/// `dest` (atomically: `dest` either does not exist or is complete). `size` is only for the
/// progress line. Call with the cache's lock held.
pub fn install_wheel(
    reader: impl Read,
    expected_sha256: &str,
    size: Option<u64>,
    dest: &Path,
) -> Result<()> {
    let parent = dest
        .parent()
        .ok_or_else(|| Error::Provision(format!("{} has no parent folder", dest.display())))?;
    fs::create_dir_all(parent)?;
    // Unique among processes (pid) and among calls of this process (a counter).
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let tmp = parent.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp)?;
    let result = install_into(reader, expected_sha256, size, &tmp, dest);
    let _ = fs::remove_dir_all(&tmp);
    result
}

fn install_into(
    mut reader: impl Read,
    expected_sha256: &str,
    size: Option<u64>,
    tmp: &Path,
    dest: &Path,
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
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                progress.finish(false);
                return Err(Error::Provision(format!("download interrupted: {e}")));
            }
        };
        hasher.update(&buf[..n]);
        wheel.write_all(&buf[..n])?;
        progress.add(n as u64);
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
    fs::create_dir_all(&staged)?;
    {
        let mut entry = zip
            .by_name(WHEEL_PLUGIN)
            .map_err(|_| Error::Provision(format!("the wheel has no {WHEEL_PLUGIN}")))?;
        let out_path = staged.join(PLUGIN_FILE);
        let mut out = File::create(&out_path)?;
        io::copy(&mut entry, &mut out)?;
        out.sync_all()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&out_path, fs::Permissions::from_mode(0o755))?;
        }
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
        };
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
        let (url, size) = wheel_url(&json).unwrap();
        assert_eq!(url, format!("https://files.example/x/{WHEEL}"));
        assert_eq!(size, Some(62711338));
        let wrong = json.replace(WHEEL_SHA256, &"0".repeat(64));
        assert!(wheel_url(&wrong).unwrap_err().contains(WHEEL_SHA256));
    }
}
