//! The persistent compile cache: a program compiled once is loaded from disk by later sites and
//! later processes, and each site counts its hits and misses; corrupt and foreign entries are
//! recompiled; processes compiling the same program at once leave one valid entry;
//! `JAXRS_COMPILE_CACHE=0` neither reads nor writes; the size cap evicts the least recently used
//! entries, and the temporary files of writes that never finished go too.
//!
//! And the places where the cache meets a hostile or careless file system (issue 19): folders
//! that others can write or that another user owns are not used; files are private; nothing
//! planted at a temporary name, and no FIFO or symlink at an entry's name, is followed or waited
//! on; `XLA_FLAGS` is in the key; eviction deletes only jaxrs's files; a bad size cap is an error
//! naming it; the cap holds from start-up.
//!
//! The cache's settings are environment variables read at each compile, and its counters are
//! process-wide, so the tests here take turns.

use jaxrs::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

static SERIAL: Mutex<()> = Mutex::new(());

/// Takes this file's turn and points the cache at a fresh folder named after the test.
fn fresh_cache(name: &str) -> (MutexGuard<'static, ()>, PathBuf) {
    let guard = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let dir =
        std::env::temp_dir().join(format!("jaxrs-compile-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("JAXRS_COMPILE_CACHE_DIR", &dir);
    std::env::remove_var("JAXRS_COMPILE_CACHE");
    std::env::remove_var("JAXRS_COMPILE_CACHE_MAX_BYTES");
    (guard, dir)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = read.map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

fn total_bytes(dir: &Path) -> u64 {
    entries(dir)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

/// A new jit site, with the same program text each time (same source location).
fn times_three_plus_one_site() -> jaxrs::Jitted<impl Fn(Array) -> Array> {
    jit(|x: Array| &x * 3.0 + 1.0)
}

fn times_three_plus_one(x: &[f32]) -> Vec<f32> {
    let y: Array = times_three_plus_one_site().call(Array::from_slice(x, &[x.len()]));
    y.to_vec::<f32>()
}

fn program(k: usize) -> Vec<f32> {
    let x = Array::from_slice(&[1.0f32, 2.0], &[2]);
    let y: Array = match k {
        0 => jit(|x: Array| &x - 7.0).call(x),
        1 => jit(|x: Array| &x * 5.0).call(x),
        2 => jit(|x: Array| &x + 11.0).call(x),
        _ => jit(|x: Array| x.sin()).call(x),
    };
    y.to_vec::<f32>()
}

const CHILD: &str = "JAXRS_COMPILE_CACHE_TEST_CHILD";

#[test]
fn a_later_site_and_a_later_process_load_the_program_from_disk() {
    if std::env::var_os(CHILD).is_some() {
        // The child: the parent's entry is on disk; nothing is compiled.
        let before = jaxrs::compile_cache_stats();
        let f = times_three_plus_one_site();
        let y: Array = f.call(Array::from_slice(&[1.0f32, 2.0], &[2]));
        assert_eq!(y.to_vec::<f32>(), vec![4.0, 7.0]);
        let after = jaxrs::compile_cache_stats();
        assert_eq!(
            (after.hits - before.hits, after.misses - before.misses),
            (1, 0)
        );
        let site = f.site();
        assert_eq!(
            (site.compile_cache_hits(), site.compile_cache_misses()),
            (1, 0)
        );
        return;
    }
    let (_turn, dir) = fresh_cache("later");
    let before = jaxrs::compile_cache_stats();
    assert_eq!(times_three_plus_one(&[1.0, 2.0]), vec![4.0, 7.0]);
    let mid = jaxrs::compile_cache_stats();
    assert_eq!((mid.hits - before.hits, mid.misses - before.misses), (0, 1));
    assert_eq!(entries(&dir).len(), 1);
    assert_eq!(times_three_plus_one(&[0.0, -1.0]), vec![1.0, -2.0]);
    let after = jaxrs::compile_cache_stats();
    assert_eq!((after.hits - mid.hits, after.misses - mid.misses), (1, 0));

    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_later_site_and_a_later_process_load_the_program_from_disk",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("JAXRS_COMPILE_CACHE_DIR", &dir)
        .status()
        .unwrap();
    assert!(status.success(), "the child process failed: {status}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupt_entry_is_recompiled_and_overwritten() {
    let (_turn, dir) = fresh_cache("corrupt");
    assert_eq!(program(0), vec![-6.0, -5.0]);
    let files = entries(&dir);
    assert_eq!(files.len(), 1);
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&files[0], &bytes).unwrap();

    assert_eq!(counted(|| program(0)), (vec![-6.0, -5.0], (0, 1)));

    // A truncated entry is caught too, and the rewritten one loads.
    std::fs::write(&files[0], &bytes[..10]).unwrap();
    assert_eq!(program(0), vec![-6.0, -5.0]);
    assert_eq!(counted(|| program(0)), (vec![-6.0, -5.0], (1, 0)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_foreign_entry_is_recompiled_and_overwritten() {
    let (_turn, dir) = fresh_cache("foreign");
    assert_eq!(program(0), vec![-6.0, -5.0]);
    let first = entries(&dir);
    assert_eq!(program(1), vec![5.0, 10.0]);
    let second: Vec<PathBuf> = entries(&dir)
        .into_iter()
        .filter(|p| !first.contains(p))
        .collect();
    assert_eq!((first.len(), second.len()), (1, 1));
    // An intact entry of another program under program 1's name: its header names another key.
    std::fs::copy(&first[0], &second[0]).unwrap();

    assert_eq!(counted(|| program(1)), (vec![5.0, 10.0], (0, 1)));
    // `program` jits a new closure each call: the second compile finds the rewritten entry.
    assert_eq!(counted(|| program(1)), (vec![5.0, 10.0], (1, 0)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn switched_off_the_cache_neither_writes_nor_reads() {
    let (_turn, dir) = fresh_cache("off");
    std::env::set_var("JAXRS_COMPILE_CACHE", "0");
    let before = jaxrs::compile_cache_stats();
    let f = jit(|x: Array| &x * 5.0);
    let y: Array = f.call(Array::from_slice(&[1.0f32, 2.0], &[2]));
    assert_eq!(y.to_vec::<f32>(), vec![5.0, 10.0]);
    assert_eq!(jaxrs::compile_cache_stats(), before);
    assert_eq!(
        (
            f.site().compile_cache_hits(),
            f.site().compile_cache_misses()
        ),
        (0, 0)
    );
    assert!(entries(&dir).is_empty());

    // An entry on disk is not read while the cache is off.
    std::env::remove_var("JAXRS_COMPILE_CACHE");
    assert_eq!(program(1), vec![5.0, 10.0]);
    assert_eq!(entries(&dir).len(), 1);
    std::env::set_var("JAXRS_COMPILE_CACHE", "0");
    let before = jaxrs::compile_cache_stats();
    assert_eq!(program(1), vec![5.0, 10.0]);
    std::env::remove_var("JAXRS_COMPILE_CACHE");
    assert_eq!(jaxrs::compile_cache_stats(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[jit]
fn halve_then_add(x: &Array, y: &Array) -> Array {
    x * 0.5 + y
}

#[test]
fn each_site_counts_its_own_hits_and_misses() {
    let (_turn, dir) = fresh_cache("per-site");
    let site = halve_then_add::jit_site();
    let (hits, misses) = (site.compile_cache_hits(), site.compile_cache_misses());
    let x = Array::from_slice(&[2.0f32, 4.0], &[2]);
    assert_eq!(halve_then_add(&x, &x).to_vec::<f32>(), vec![3.0, 6.0]);
    let x3 = Array::from_slice(&[2.0f32, 4.0, 6.0], &[3]);
    assert_eq!(
        halve_then_add(&x3, &x3).to_vec::<f32>(),
        vec![3.0, 6.0, 9.0]
    );
    // Two new shapes, two programs compiled and stored; the jit site's own cache answers the
    // repeated call without asking the disk.
    halve_then_add(&x, &x);
    assert_eq!(
        (
            site.compile_cache_hits() - hits,
            site.compile_cache_misses() - misses
        ),
        (0, 2)
    );

    // Closure sites: the second finds the first's program on disk.
    let first = times_three_plus_one_site();
    let _: Array = first.call(Array::from_slice(&[1.0f32], &[1]));
    let second = times_three_plus_one_site();
    let _: Array = second.call(Array::from_slice(&[1.0f32], &[1]));
    assert_eq!(
        (
            first.site().compile_cache_hits(),
            first.site().compile_cache_misses()
        ),
        (0, 1)
    );
    assert_eq!(
        (
            second.site().compile_cache_hits(),
            second.site().compile_cache_misses()
        ),
        (1, 0)
    );

    // pmap sites count the same way.
    let n = jaxrs::local_device_count();
    let doubled = || pmap(|x: Array| &x * 2.0 - 1.0);
    let (a, b) = (doubled(), doubled());
    let _: Array = a.call(Array::ones(&[n, 2], DType::F32));
    let _: Array = b.call(Array::ones(&[n, 2], DType::F32));
    assert_eq!(
        (
            a.site().compile_cache_hits(),
            a.site().compile_cache_misses()
        ),
        (0, 1)
    );
    assert_eq!(
        (
            b.site().compile_cache_hits(),
            b.site().compile_cache_misses()
        ),
        (1, 0)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unfinished_writes_are_removed_once_stale() {
    let (_turn, dir) = fresh_cache("stale");
    std::fs::create_dir_all(&dir).unwrap();
    // What a process killed mid-write leaves (`.<key>.jxc.<random>.tmp`, or older jaxrs's
    // `.<key>.<pid>.<thread>.tmp`), an hour ago: the start of an entry's header. And one that
    // a live process may still be writing.
    let stale = dir.join(format!(".{}.jxc.Xq3bT9.tmp", "ab".repeat(32)));
    let stale_old_name = dir.join(format!(".{}.4242.ThreadId(1).tmp", "ef".repeat(32)));
    let live = dir.join(format!(".{}.jxc.Pz8kR2.tmp", "cd".repeat(32)));
    for f in [&stale, &stale_old_name, &live] {
        std::fs::write(f, b"JAXRSXC\0\x01\0\0\0half an entry").unwrap();
    }
    for f in [&stale, &stale_old_name] {
        set_age(f, 3600);
    }
    assert_eq!(program(2), vec![12.0, 13.0]);
    assert!(!stale.exists());
    assert!(!stale_old_name.exists());
    assert!(live.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sets a file's mtime `secs` seconds into the past.
fn set_age(path: &Path, secs: u64) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

const WRITER: &str = "JAXRS_COMPILE_CACHE_TEST_WRITER";

/// The program the concurrent writers compile: new to their cache folder.
fn thirteen_x_minus_two(x: &[f32]) -> (Vec<f32>, u64, u64) {
    let f = jit(|x: Array| &x * 13.0 - 2.0);
    let y: Array = f.call(Array::from_slice(x, &[x.len()]));
    let site = f.site();
    (
        y.to_vec::<f32>(),
        site.compile_cache_hits(),
        site.compile_cache_misses(),
    )
}

fn wait_for(what: &str, deadline: Instant, done: impl Fn() -> bool) {
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn processes_compiling_one_program_at_once_leave_one_valid_entry() {
    const WRITERS: usize = 4;
    if let Some(sync) = std::env::var_os(WRITER) {
        // A child: start the plugin, say so, and compile when the parent says go, so that
        // all the children compile and write at the same moment.
        let sync = PathBuf::from(sync);
        jaxrs::devices();
        std::fs::write(sync.join(format!("ready-{}", std::process::id())), b"").unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        wait_for("the parent's go", deadline, || sync.join("go").exists());
        let (y, hits, misses) = thirteen_x_minus_two(&[1.0, 2.0]);
        assert_eq!(y, vec![11.0, 24.0]);
        assert_eq!(hits + misses, 1);
        return;
    }
    let (_turn, dir) = fresh_cache("writers");
    let sync = std::env::temp_dir().join(format!(
        "jaxrs-compile-cache-{}-writers-sync",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&sync);
    std::fs::create_dir_all(&sync).unwrap();
    let children: Vec<_> = (0..WRITERS)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "processes_compiling_one_program_at_once_leave_one_valid_entry",
                    "--test-threads=1",
                ])
                .env(CHILD, "1")
                .env(WRITER, &sync)
                .env("JAXRS_COMPILE_CACHE_DIR", &dir)
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    wait_for("the children to start", deadline, || {
        std::fs::read_dir(&sync).map_or(0, |d| d.count()) >= WRITERS
    });
    std::fs::write(sync.join("go"), b"").unwrap();
    for mut child in children {
        let status = child.wait().unwrap();
        assert!(status.success(), "a writer failed: {status}");
    }
    let left = entries(&dir);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].extension().is_some_and(|e| e == "jxc"), "{left:?}");
    // The entry is valid: this process loads it instead of compiling.
    let before = jaxrs::compile_cache_stats();
    assert_eq!(thirteen_x_minus_two(&[0.0, 1.0]), (vec![-2.0, 11.0], 1, 0));
    let after = jaxrs::compile_cache_stats();
    assert_eq!(
        (after.hits - before.hits, after.misses - before.misses),
        (1, 0)
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&sync);
}

#[test]
fn eviction_keeps_the_folder_under_the_cap() {
    let (_turn, dir) = fresh_cache("evict");
    program(2);
    let one = total_bytes(&dir);
    assert!(one > 0);
    let cap = one * 3 / 2;
    std::env::set_var("JAXRS_COMPILE_CACHE_MAX_BYTES", cap.to_string());
    program(3);
    program(1);
    std::env::remove_var("JAXRS_COMPILE_CACHE_MAX_BYTES");
    let left = entries(&dir);
    assert!(total_bytes(&dir) <= cap.max(one * 2), "{left:?}");
    assert!(left.len() < 3, "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The entry files in `dir`, by name.
fn entry_files(dir: &Path) -> Vec<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jxc"))
        .collect()
}

/// The entry the next compile adds to `dir`.
/// What `f` returns, with the persistent cache's (hits, misses) during it.
fn counted<T>(f: impl FnOnce() -> T) -> (T, (u64, u64)) {
    let before = jaxrs::compile_cache_stats();
    let value = f();
    let after = jaxrs::compile_cache_stats();
    (
        value,
        (after.hits - before.hits, after.misses - before.misses),
    )
}

fn new_entry(dir: &Path, compile: impl FnOnce()) -> PathBuf {
    let before = entry_files(dir);
    compile();
    let added: Vec<PathBuf> = entry_files(dir)
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(added.len(), 1, "{added:?}");
    added[0].clone()
}

/// An entry of program 0 (`x - 7`) under program 1's (`x * 5`) name, with a valid header: what
/// anyone who can write the folder can make (the key and the checksum are no secret).
fn forged_entry(dir: &Path) -> (String, Vec<u8>) {
    let minus_seven = new_entry(dir, || assert_eq!(program(0), vec![-6.0, -5.0]));
    let times_five = new_entry(dir, || assert_eq!(program(1), vec![5.0, 10.0]));
    let mut forged = std::fs::read(&minus_seven).unwrap();
    let theirs = std::fs::read(&times_five).unwrap();
    // The header: magic (8), version (4), key (32), length (8), payload SHA-256 (32).
    forged[12..44].copy_from_slice(&theirs[12..44]);
    let name = times_five
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    (name, forged)
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn the_folder_is_created_0700_and_entries_0600() {
    let (_turn, root) = fresh_cache("private");
    let dir = root.join("a").join("b");
    std::env::set_var("JAXRS_COMPILE_CACHE_DIR", &dir);
    let entry = new_entry(&dir, || assert_eq!(program(3).len(), 2));
    assert_eq!(mode(&root), 0o700);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&entry), 0o600);
    let _ = std::fs::remove_dir_all(&root);
}

/// The forged entry is loaded from a trusted folder (the folder is trusted, as JAX's is), and
/// ignored in `untrusted`, which is made unsafe by `spoil` before the first compile there.
fn a_forged_entry_is_not_used_in(name: &str, spoil: impl FnOnce(&Path)) {
    let (_turn, trusted) = fresh_cache(&format!("{name}-trusted"));
    let (entry_name, forged) = forged_entry(&trusted);
    std::fs::write(trusted.join(&entry_name), &forged).unwrap();
    assert_eq!(
        program(1),
        vec![-6.0, -5.0],
        "the forged entry, where trusted"
    );

    let untrusted =
        trusted.with_file_name(format!("jaxrs-compile-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&untrusted);
    std::fs::create_dir_all(&untrusted).unwrap();
    std::fs::write(untrusted.join(&entry_name), &forged).unwrap();
    spoil(&untrusted);
    std::env::set_var("JAXRS_COMPILE_CACHE_DIR", &untrusted);
    let before = jaxrs::compile_cache_stats();
    assert_eq!(program(1), vec![5.0, 10.0]);
    assert_eq!(program(2), vec![12.0, 13.0]);
    // The cache is off there: nothing read, nothing written.
    assert_eq!(jaxrs::compile_cache_stats(), before);
    assert_eq!(entries(&untrusted), vec![untrusted.join(&entry_name)]);
    let _ = std::fs::remove_dir_all(&trusted);
    let _ = std::fs::remove_dir_all(&untrusted);
}

#[test]
fn a_folder_writable_by_others_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    a_forged_entry_is_not_used_in("world-writable", |dir| {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    });
    a_forged_entry_is_not_used_in("group-writable", |dir| {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o770)).unwrap();
    });
}

#[test]
fn a_folder_owned_by_another_user_is_not_used() {
    a_forged_entry_is_not_used_in("foreign-owner", |dir| {
        std::os::unix::fs::chown(dir, Some(65534), Some(65534)).unwrap();
    });
}

#[test]
fn a_symlink_planted_at_the_temporary_name_is_not_followed() {
    let (_turn, dir) = fresh_cache("planted-tmp");
    let first = new_entry(&dir, || assert_eq!(program(2), vec![12.0, 13.0]));
    let key = first.file_stem().unwrap().to_str().unwrap().to_string();
    let victim_dir = dir.with_extension("victim");
    let _ = std::fs::remove_dir_all(&victim_dir);
    std::fs::create_dir_all(&victim_dir).unwrap();
    let victim = victim_dir.join("precious.txt");
    std::fs::write(&victim, b"precious").unwrap();
    // Older jaxrs wrote to `.<key>.<pid>.<thread>.tmp`, a name anyone could guess.
    let fresh = dir.with_extension("second");
    let _ = std::fs::remove_dir_all(&fresh);
    std::fs::create_dir_all(&fresh).unwrap();
    let guessed = fresh.join(format!(
        ".{key}.{}.{:?}.tmp",
        std::process::id(),
        std::thread::current().id()
    ));
    std::os::unix::fs::symlink(&victim, &guessed).unwrap();
    std::env::set_var("JAXRS_COMPILE_CACHE_DIR", &fresh);
    assert_eq!(program(2), vec![12.0, 13.0]);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    let entry = fresh.join(first.file_name().unwrap());
    assert!(std::fs::symlink_metadata(&entry).unwrap().is_file());
    let before = jaxrs::compile_cache_stats();
    assert_eq!(program(2), vec![12.0, 13.0]);
    assert_eq!(jaxrs::compile_cache_stats().hits, before.hits + 1);
    for d in [&dir, &victim_dir, &fresh] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Runs `program(k)` on another thread; `None` if it is still running after `secs`.
fn within(secs: u64, k: usize) -> Option<Vec<f32>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(program(k));
    });
    rx.recv_timeout(Duration::from_secs(secs)).ok()
}

#[test]
fn an_entry_replaced_by_a_fifo_is_a_miss_and_does_not_block() {
    let (_turn, dir) = fresh_cache("fifo");
    let entry = new_entry(&dir, || assert_eq!(program(3).len(), 2));
    std::fs::remove_file(&entry).unwrap();
    let status = Command::new("mkfifo").arg(&entry).status().unwrap();
    assert!(status.success());
    let before = jaxrs::compile_cache_stats();
    let got = within(120, 3);
    if got.is_none() {
        // Release the reader stuck on the FIFO before failing, so the other tests can run.
        let _ = std::fs::OpenOptions::new().write(true).open(&entry);
    }
    assert_eq!(
        got.map(|v| v.len()),
        Some(2),
        "the jit call blocked on a FIFO"
    );
    let after = jaxrs::compile_cache_stats();
    assert_eq!(
        (after.hits - before.hits, after.misses - before.misses),
        (0, 1)
    );
    // The FIFO was replaced by a real entry.
    assert!(std::fs::symlink_metadata(&entry).unwrap().is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_entry_that_is_a_symlink_is_a_miss() {
    let (_turn, dir) = fresh_cache("symlink-entry");
    let entry = new_entry(&dir, || assert_eq!(program(0), vec![-6.0, -5.0]));
    let elsewhere = dir.with_extension("elsewhere");
    let _ = std::fs::remove_file(&elsewhere);
    std::fs::rename(&entry, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &entry).unwrap();
    assert_eq!(counted(|| program(0)), (vec![-6.0, -5.0], (0, 1)));
    assert!(std::fs::symlink_metadata(&entry).unwrap().is_file());
    let _ = std::fs::remove_file(&elsewhere);
    let _ = std::fs::remove_dir_all(&dir);
}

const XLA_CHILD: &str = "JAXRS_COMPILE_CACHE_TEST_XLA_FLAGS";

#[test]
fn xla_flags_are_part_of_the_key() {
    if std::env::var_os(XLA_CHILD).is_some() {
        // The parent compiled this program without the flag: with it, that entry is not ours.
        assert_eq!(counted(|| program(1)), (vec![5.0, 10.0], (0, 1)));
        return;
    }
    let (_turn, dir) = fresh_cache("xla-flags");
    assert_eq!(program(1), vec![5.0, 10.0]);
    assert_eq!(entry_files(&dir).len(), 1);
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "xla_flags_are_part_of_the_key",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env(XLA_CHILD, "1")
        .env(
            "XLA_FLAGS",
            "--xla_cpu_enable_concurrency_optimized_scheduler=false",
        )
        .env("JAXRS_COMPILE_CACHE_DIR", &dir)
        .status()
        .unwrap();
    assert!(status.success(), "the child process failed: {status}");
    assert_eq!(entry_files(&dir).len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn eviction_deletes_only_jaxrs_entries() {
    let (_turn, dir) = fresh_cache("evict-foreign");
    let old_entry = new_entry(&dir, || assert_eq!(program(0), vec![-6.0, -5.0]));
    // Someone else's files, old and large: none of them is jaxrs's to delete.
    let foreign = [
        dir.join("notes.jxc"),
        dir.join(format!("{}.jxc", "0".repeat(64))),
        dir.join(".notes.tmp"),
        dir.join(format!(".{}.jxc.abcdef.tmp", "1".repeat(64))),
        dir.join("data.bin"),
    ];
    for f in &foreign {
        std::fs::write(f, vec![b'x'; 100_000]).unwrap();
        set_age(f, 7200);
    }
    set_age(&old_entry, 3600);
    std::env::set_var("JAXRS_COMPILE_CACHE_MAX_BYTES", "1");
    let newest = new_entry(&dir, || assert_eq!(program(2), vec![12.0, 13.0]));
    std::env::remove_var("JAXRS_COMPILE_CACHE_MAX_BYTES");
    for f in &foreign {
        assert!(f.exists(), "{} was deleted", f.display());
    }
    assert!(!old_entry.exists(), "jaxrs's own old entry is evicted");
    assert!(newest.exists(), "the entry just written stays");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_invalid_size_cap_is_an_error_naming_the_variable() {
    let (_turn, dir) = fresh_cache("bad-cap");
    std::env::set_var("JAXRS_COMPILE_CACHE_MAX_BYTES", "abc");
    let got = try_run(|| program(0));
    std::env::remove_var("JAXRS_COMPILE_CACHE_MAX_BYTES");
    let e = got.expect_err("an invalid cap must not silently become 1 GiB");
    let msg = e.to_string();
    assert!(msg.contains("JAXRS_COMPILE_CACHE_MAX_BYTES=abc"), "{msg}");
    // Fixed, the same program compiles and is cached.
    assert_eq!(program(0), vec![-6.0, -5.0]);
    assert_eq!(entry_files(&dir).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

const CAP_CHILD: &str = "JAXRS_COMPILE_CACHE_TEST_CAP";

#[test]
fn the_size_cap_is_enforced_at_start_up() {
    if std::env::var_os(CAP_CHILD).is_some() {
        // A hit only: nothing is written, yet the folder must come under the cap.
        assert_eq!(counted(|| program(1)), (vec![5.0, 10.0], (1, 0)));
        return;
    }
    let (_turn, dir) = fresh_cache("cap-at-start");
    let oldest = new_entry(&dir, || assert_eq!(program(2), vec![12.0, 13.0]));
    let older = new_entry(&dir, || assert_eq!(program(3).len(), 2));
    let newest = new_entry(&dir, || assert_eq!(program(1), vec![5.0, 10.0]));
    set_age(&oldest, 300);
    set_age(&older, 200);
    set_age(&newest, 100);
    let cap = std::fs::metadata(&newest).unwrap().len();
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_size_cap_is_enforced_at_start_up",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env(CAP_CHILD, "1")
        .env("JAXRS_COMPILE_CACHE_DIR", &dir)
        .env("JAXRS_COMPILE_CACHE_MAX_BYTES", cap.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "the child process failed: {status}");
    assert_eq!(entry_files(&dir), vec![newest]);
    let _ = std::fs::remove_dir_all(&dir);
}
