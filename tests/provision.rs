//! Provisioning the CPU plugin where it meets the network and the file system (issue 19): a
//! stalled index or download times out; processes waiting on a download end when it does, or
//! give up on a silent holder naming its pid; a dead holder's lock is taken over; the lock file
//! is never truncated or followed through a symlink; a planted `.so` is refused before it is
//! loaded; killed downloads' temporary folders go; the plugin's folders are private.
//!
//! Everything runs against loopback servers and temporary cache folders, never the plugin the
//! rest of the suite uses. Each case runs `plugin_path()` in a child process (this test binary
//! again: `child` does nothing unless `JAXRS_PROVISION_CHILD` names a role), with the
//! environment a user would set, and every child and server is bounded in time.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROLE: &str = "JAXRS_PROVISION_CHILD";
const READY: &str = "JAXRS_PROVISION_READY";
const PACKAGE_DIR: &str = "lammps-jax-pjrt-cpu-0.11.2";
const WHEEL: &str = "lammps_jax_pjrt_cpu-0.11.2-py3-none-manylinux_2_27_x86_64.whl";
const WHEEL_SHA256: &str = "1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1";
/// No server or child outlives this.
const LIMIT: Duration = Duration::from_secs(60);

/// The child's side: `resolve` prints what `plugin_path()` gave, `hold` holds the cache's lock
/// as a downloading jaxrs would (until killed, or `LIMIT`), `load` creates the PJRT client.
#[test]
fn child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    match role.as_str() {
        "resolve" => {
            let got = jaxrs::internals::pjrt::provision::plugin_path();
            println!("RESULT: {}", one_line(&format!("{got:?}")));
        }
        "hold" => {
            let cache = PathBuf::from(std::env::var_os("JAXRS_CACHE_DIR").unwrap());
            let pjrt = cache.join("pjrt");
            std::fs::create_dir_all(&pjrt).unwrap();
            let mut lock = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(pjrt.join(".lock"))
                .unwrap();
            lock.lock().unwrap();
            lock.set_len(0).unwrap();
            writeln!(lock, "{}", std::process::id()).unwrap();
            std::fs::write(std::env::var_os(READY).unwrap(), b"").unwrap();
            std::thread::sleep(LIMIT);
        }
        "load" => {
            let got = jaxrs::try_run(jaxrs::devices).map(|d| d.len());
            println!("RESULT: {}", one_line(&format!("{got:?}")));
        }
        other => panic!("unknown role {other}"),
    }
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}

/// A fresh cache folder for one test, inside a folder of its own that also holds the test's
/// logs and files ([`cleanup`] removes both).
fn scratch(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("jaxrs-provision-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let cache = root.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    cache
}

/// Removes a test's folder (the one [`scratch`] made around `cache`), and nothing else.
fn cleanup(cache: &Path) {
    let root = cache.parent().unwrap();
    let name = root.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("jaxrs-provision-"),
        "not a test folder: {root:?}"
    );
    let _ = std::fs::remove_dir_all(root);
}

fn spawn(role: &str, cache: &Path, envs: &[(&str, OsString)], log: &Path) -> Child {
    let out = std::fs::File::create(log).unwrap();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env("JAXRS_CACHE_DIR", cache)
        .env_remove("JAXRS_PJRT_PLUGIN")
        .env_remove("JAXRS_OFFLINE")
        .env_remove("JAXRS_INDEX_URL")
        .env_remove("JAXRS_DOWNLOAD_TIMEOUT")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// What a child printed, once it ended, and how long it ran; killed (and `None`) past `limit`.
fn finish(mut child: Child, log: &Path, started: Instant, limit: Duration) -> Finished {
    let deadline = started + limit;
    let ended = loop {
        if child.try_wait().unwrap().is_some() {
            break true;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = std::fs::read_to_string(log).unwrap_or_default();
    let result = output
        .lines()
        .find_map(|l| l.split_once("RESULT: ").map(|(_, r)| r))
        .map(str::to_string);
    Finished {
        ended,
        took: started.elapsed(),
        result,
        output,
    }
}

struct Finished {
    ended: bool,
    took: Duration,
    result: Option<String>,
    output: String,
}

impl Finished {
    /// The error the child's `plugin_path()` returned.
    fn error(&self) -> &str {
        assert!(
            self.ended,
            "the child was still running after {:?}:\n{}",
            self.took, self.output
        );
        let r = self.result.as_deref().unwrap_or_else(|| {
            panic!("the child printed no result:\n{}", self.output);
        });
        assert!(r.starts_with("Err("), "expected an error, got {r}");
        r
    }
}

fn resolve_in_child(cache: &Path, envs: &[(&str, OsString)], limit: Duration) -> Finished {
    let log = cache.with_extension("log");
    let started = Instant::now();
    let child = spawn("resolve", cache, envs, &log);
    finish(child, &log, started, limit)
}

/// Resolves in a child against the index at `index_url` with `JAXRS_DOWNLOAD_TIMEOUT=timeout`,
/// waiting 30 s at most.
fn resolve_against(cache: &Path, index_url: String, timeout: &str) -> Finished {
    let envs = env(&[
        ("JAXRS_INDEX_URL", index_url),
        ("JAXRS_DOWNLOAD_TIMEOUT", timeout.to_string()),
    ]);
    resolve_in_child(cache, &envs, Duration::from_secs(30))
}

fn env(pairs: &[(&'static str, String)]) -> Vec<(&'static str, OsString)> {
    pairs.iter().map(|(k, v)| (*k, OsString::from(v))).collect()
}

/// A loopback URL where nothing listens: connecting fails at once.
fn closed_index() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}/simple")
}

/// What the loopback index does.
#[derive(Clone, Copy)]
enum Behaviour {
    /// The index page sends its headers and the first bytes of its body, then nothing.
    StallIndex,
    /// The index page lists the pinned wheel on this server; the wheel sends its headers and
    /// 64 KiB, then nothing.
    StallWheel,
}

/// A loopback HTTP server in a thread; it and its connections end when dropped (or at
/// `LIMIT`).
struct Server {
    url: String,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(behaviour: Behaviour) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let deadline = Instant::now() + LIMIT;
    std::thread::spawn(move || {
        while !stopped.load(Ordering::Relaxed) && Instant::now() < deadline {
            match listener.accept() {
                Ok((stream, _)) => {
                    let stopped = stopped.clone();
                    std::thread::spawn(move || answer(stream, behaviour, port, &stopped, deadline));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    Server {
        url: format!("http://127.0.0.1:{port}/simple"),
        stop,
    }
}

fn answer(
    mut stream: TcpStream,
    behaviour: Behaviour,
    port: u16,
    stop: &AtomicBool,
    deadline: Instant,
) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 << 10 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let send = |stream: &mut TcpStream, status: &str, kind: &str, len: usize, body: &[u8]| {
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len}\r\n\
             Connection: close\r\n\r\n"
        );
        let _ = stream.write_all(body);
        let _ = stream.flush();
    };
    // One request per connection, so a client never reuses one this server has closed.
    let json = "application/vnd.pypi.simple.v1+json";
    match behaviour {
        Behaviour::StallIndex => send(&mut stream, "200 OK", json, 10_000, b"{\"files\": ["),
        Behaviour::StallWheel if path.starts_with("/files/") => send(
            &mut stream,
            "200 OK",
            "application/octet-stream",
            62_711_338,
            &vec![0u8; 64 << 10],
        ),
        Behaviour::StallWheel => {
            let page = format!(
                r#"{{"meta":{{"api-version":"1.1"}},"name":"lammps-jax-pjrt-cpu","files":[
                {{"filename":"{WHEEL}","url":"http://127.0.0.1:{port}/files/{WHEEL}",
                "hashes":{{"sha256":"{WHEEL_SHA256}"}},"size":62711338}}]}}"#
            );
            send(&mut stream, "200 OK", json, page.len(), page.as_bytes());
            return;
        }
    }
    // Stall: keep the connection open and silent.
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn temporaries(pjrt: &Path) -> Vec<String> {
    std::fs::read_dir(pjrt)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(".tmp-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_stalled_index_times_out() {
    let server = serve(Behaviour::StallIndex);
    let cache = scratch("stalled-index");
    let got = resolve_against(&cache, server.url.clone(), "1");
    let e = got.error();
    assert!(e.contains("JAXRS_DOWNLOAD_TIMEOUT"), "{e}");
    assert!(got.took < Duration::from_secs(20), "took {:?}", got.took);
    cleanup(&cache);
}

#[test]
fn a_stalled_wheel_download_times_out_and_leaves_no_temporary_folder() {
    let server = serve(Behaviour::StallWheel);
    let cache = scratch("stalled-wheel");
    let got = resolve_against(&cache, server.url.clone(), "1");
    let e = got.error();
    assert!(e.contains("download interrupted"), "{e}");
    assert!(e.contains("JAXRS_DOWNLOAD_TIMEOUT"), "{e}");
    assert!(got.took < Duration::from_secs(20), "took {:?}", got.took);
    assert_eq!(temporaries(&cache.join("pjrt")), Vec::<String>::new());
    cleanup(&cache);
}

#[test]
fn processes_behind_a_stalled_download_fail_together() {
    let server = serve(Behaviour::StallWheel);
    let cache = scratch("stalled-together");
    let envs = env(&[
        ("JAXRS_INDEX_URL", server.url.clone()),
        ("JAXRS_DOWNLOAD_TIMEOUT", "3".into()),
    ]);
    let started = Instant::now();
    let children: Vec<(Child, PathBuf)> = (0..3)
        .map(|i| {
            let log = cache.with_extension(format!("{i}.log"));
            (spawn("resolve", &cache, &envs, &log), log)
        })
        .collect();
    let mut waited = 0;
    for (child, log) in children {
        let got = finish(child, &log, started, Duration::from_secs(40));
        let e = got.error();
        assert!(e.contains("JAXRS_DOWNLOAD_TIMEOUT"), "{e}");
        assert!(got.took < Duration::from_secs(20), "took {:?}", got.took);
        waited += usize::from(e.contains("while this one waited failed"));
    }
    // One process downloaded and timed out; the two that waited for it ended with its reason,
    // instead of each trying again in turn.
    assert_eq!(waited, 2);
    cleanup(&cache);
}

/// Starts a child that holds the cache's lock, once it holds it.
fn holder(cache: &Path) -> Child {
    let ready = cache.with_extension("ready");
    let _ = std::fs::remove_file(&ready);
    let child = spawn(
        "hold",
        cache,
        &[(READY, ready.clone().into_os_string())],
        &cache.with_extension("holder.log"),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready.exists() {
        assert!(Instant::now() < deadline, "the holder did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

#[test]
fn a_held_lock_is_given_up_naming_its_holder() {
    let cache = scratch("held-lock");
    let mut held = holder(&cache);
    let got = resolve_against(&cache, closed_index(), "1");
    let _ = held.kill();
    let _ = held.wait();
    let e = got.error();
    assert!(e.contains(&format!("process {}", held.id())), "{e}");
    assert!(e.contains(".lock"), "{e}");
    assert!(got.took < Duration::from_secs(20), "took {:?}", got.took);
    cleanup(&cache);
}

#[test]
fn a_lock_left_by_a_killed_process_is_taken_over() {
    let cache = scratch("dead-holder");
    let mut held = holder(&cache);
    held.kill().unwrap();
    held.wait().unwrap();
    let got = resolve_against(&cache, closed_index(), "1");
    // It got past the lock and asked the (closed) index itself.
    let e = got.error();
    assert!(e.contains("asking the index"), "{e}");
    assert!(got.took < Duration::from_secs(20), "took {:?}", got.took);
    cleanup(&cache);
}

#[test]
fn the_lock_file_is_not_truncated_through_a_symlink() {
    let cache = scratch("lock-symlink");
    let pjrt = cache.join("pjrt");
    std::fs::create_dir_all(&pjrt).unwrap();
    let victim = cache.with_extension("victim");
    std::fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink(&victim, pjrt.join(".lock")).unwrap();
    let got = resolve_against(&cache, closed_index(), "1");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    let e = got.error();
    assert!(e.contains(".lock"), "{e}");
    cleanup(&cache);
}

#[test]
fn a_planted_plugin_is_refused_before_it_is_loaded() {
    let cache = scratch("planted");
    let dir = cache.join("pjrt").join(PACKAGE_DIR);
    std::fs::create_dir_all(&dir).unwrap();
    // A shared library whose constructor leaves a mark: it runs the moment it is loaded.
    let source = cache.with_extension("c");
    std::fs::write(
        &source,
        "#include <stdio.h>\n#include <stdlib.h>\n\
         __attribute__((constructor)) static void planted(void) {\n\
           FILE *f = fopen(getenv(\"JAXRS_PLANTED_MARK\"), \"w\"); if (f) fclose(f);\n}\n",
    )
    .unwrap();
    let so = dir.join("pjrt_c_api_cpu_plugin.so");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&source)
        .status()
        .expect("a C compiler (cc) to build the planted library");
    assert!(status.success());
    let mark = cache.with_extension("mark");
    let _ = std::fs::remove_file(&mark);
    let log = cache.with_extension("log");
    let started = Instant::now();
    let child = spawn(
        "load",
        &cache,
        &[("JAXRS_PLANTED_MARK", mark.clone().into_os_string())],
        &log,
    );
    let got = finish(child, &log, started, Duration::from_secs(30));
    assert!(got.ended, "{}", got.output);
    assert!(!mark.exists(), "the planted library was loaded");
    assert!(got.output.contains("SHA-256"), "{}", got.output);
    cleanup(&cache);
}

#[test]
fn stale_temporary_folders_are_removed() {
    let cache = scratch("stale-tmp");
    let pjrt = cache.join("pjrt");
    // What a download killed mid-way leaves.
    let left = pjrt.join(".tmp-4242-0");
    std::fs::create_dir_all(&left).unwrap();
    std::fs::write(left.join("wheel.zip"), vec![0u8; 1 << 16]).unwrap();
    let got = resolve_against(&cache, closed_index(), "1");
    got.error();
    assert_eq!(temporaries(&pjrt), Vec::<String>::new());
    cleanup(&cache);
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn the_plugin_folders_are_created_private_and_an_open_one_is_refused() {
    let root = scratch("private");
    let cache = root.join("fresh");
    let got = resolve_against(&cache, closed_index(), "1");
    got.error();
    assert_eq!(mode(&cache), 0o700);
    assert_eq!(mode(&cache.join("pjrt")), 0o700);

    // A plugin folder anyone can write: whoever can chooses the code; refused, named.
    use std::os::unix::fs::PermissionsExt;
    let open = root.join("open");
    let dir = open.join("pjrt").join(PACKAGE_DIR);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pjrt_c_api_cpu_plugin.so"), b"\x7fELF").unwrap();
    std::fs::set_permissions(open.join("pjrt"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let got = resolve_in_child(
        &open,
        &[("JAXRS_OFFLINE", "1".into())],
        Duration::from_secs(30),
    );
    let e = got.error();
    assert!(e.contains("writable by anyone"), "{e}");
    assert!(e.contains(&open.join("pjrt").display().to_string()), "{e}");
    cleanup(&root);
}

#[test]
fn an_invalid_download_timeout_is_an_error_naming_it() {
    let cache = scratch("bad-timeout");
    let got = resolve_against(&cache, closed_index(), "soon");
    let e = got.error();
    assert!(e.contains("JAXRS_DOWNLOAD_TIMEOUT=soon"), "{e}");
    cleanup(&cache);
}
