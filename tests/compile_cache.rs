//! The persistent compile cache: a program compiled once is loaded from disk by later sites and
//! later processes, and each site counts its hits and misses; corrupt and foreign entries are
//! recompiled; processes compiling the same program at once leave one valid entry;
//! `JAXRS_COMPILE_CACHE=0` neither reads nor writes; the size cap evicts the least recently used
//! entries, and the temporary files of writes that never finished go too.
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

    let before = jaxrs::compile_cache_stats();
    assert_eq!(program(0), vec![-6.0, -5.0]);
    let after = jaxrs::compile_cache_stats();
    assert_eq!(
        (after.hits - before.hits, after.misses - before.misses),
        (0, 1)
    );

    // A truncated entry is caught too, and the rewritten one loads.
    std::fs::write(&files[0], &bytes[..10]).unwrap();
    assert_eq!(program(0), vec![-6.0, -5.0]);
    let before = jaxrs::compile_cache_stats();
    assert_eq!(program(0), vec![-6.0, -5.0]);
    let after = jaxrs::compile_cache_stats();
    assert_eq!(
        (after.hits - before.hits, after.misses - before.misses),
        (1, 0)
    );
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

    let before = jaxrs::compile_cache_stats();
    assert_eq!(program(1), vec![5.0, 10.0]);
    let after = jaxrs::compile_cache_stats();
    assert_eq!(
        (after.hits - before.hits, after.misses - before.misses),
        (0, 1)
    );
    assert_eq!(program(1), vec![5.0, 10.0]);
    let again = jaxrs::compile_cache_stats();
    assert_eq!(
        (again.hits - after.hits, again.misses - after.misses),
        (1, 0)
    );
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
    // What a process killed mid-write leaves (`.<key>.<pid>.<thread>.tmp`), an hour ago, and
    // one that may still be written by a live process.
    let stale = dir.join(format!(".{}.4242.ThreadId(1).tmp", "ab".repeat(32)));
    let live = dir.join(format!(".{}.4243.ThreadId(2).tmp", "cd".repeat(32)));
    std::fs::write(&stale, b"half an entry").unwrap();
    std::fs::write(&live, b"half an entry").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    assert_eq!(program(2), vec![12.0, 13.0]);
    assert!(!stale.exists());
    assert!(live.exists());
    let _ = std::fs::remove_dir_all(&dir);
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
