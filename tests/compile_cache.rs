//! The persistent compile cache: a program compiled once is loaded from disk by later sites and
//! later processes; corrupt entries are recompiled; `JAXRS_COMPILE_CACHE=0` writes nothing; the
//! size cap evicts the least recently used entries.
//!
//! The cache's settings are environment variables read at each compile, and its counters are
//! process-wide, so the tests here take turns.

use jaxrs::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};

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

/// A new jit site each call, with the same program text each time (same source location).
fn times_three_plus_one(x: &[f32]) -> Vec<f32> {
    let f = jit(|x: Array| &x * 3.0 + 1.0);
    let y: Array = f.call(Array::from_slice(x, &[x.len()]));
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
        assert_eq!(times_three_plus_one(&[1.0, 2.0]), vec![4.0, 7.0]);
        let after = jaxrs::compile_cache_stats();
        assert_eq!(
            (after.hits - before.hits, after.misses - before.misses),
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
fn switched_off_the_cache_writes_nothing() {
    let (_turn, dir) = fresh_cache("off");
    std::env::set_var("JAXRS_COMPILE_CACHE", "0");
    let before = jaxrs::compile_cache_stats();
    assert_eq!(program(1), vec![5.0, 10.0]);
    std::env::remove_var("JAXRS_COMPILE_CACHE");
    assert_eq!(jaxrs::compile_cache_stats(), before);
    assert!(entries(&dir).is_empty());
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
