//! Checkpoints against a crash, a full or wrong disk, and a hostile file: a save killed at
//! any moment leaves the previous checkpoint loadable, every I/O error names its path, a
//! header's claimed length is bounded before anything is read for it, loading holds one
//! tensor at a time on the host, and no byte string makes the decoder panic.

mod common;

use common::lines_of;
use jaxrs::checkpoint::{self, CheckpointError, Metadata, MAX_HEADER_BYTES};
use jaxrs::prelude::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const CHILD: &str = "JAXRS_CHECKPOINT_CHILD";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jaxrs-ckpt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Elements of the large leaf a save loop writes: 16 MiB of bytes, so that most of a save is
/// spent writing the file (where an in-place save was caught half-written).
const LARGE: usize = 16 << 20;

/// The tree a save loop writes at `step`: the large leaf all `step % 256` and the step as an
/// i32 leaf, so a loaded file can be checked for consistency with its metadata.
fn state_at(step: u32) -> (Array, Array) {
    let large = Array::full(&[LARGE], (step % 256) as f64, DType::U8);
    (large, Array::scalar(step as i32))
}

/// Runs this test binary's `test` as a child with `CHILD=mode`, stdout piped.
fn spawn_child(test: &str, mode: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the child starts")
}

/// Waits (bounded) for a line of the child's containing `marker`.
fn wait_for(lines: &mpsc::Receiver<String>, marker: &str) {
    loop {
        match lines.recv_timeout(Duration::from_secs(120)) {
            Ok(line) if line.contains(marker) => return,
            Ok(_) => {}
            Err(e) => panic!("the child never printed {marker:?}: {e}"),
        }
    }
}

fn save_loop(path: &Path) {
    for step in 1.. {
        println!("saving {step}");
        let start = std::time::Instant::now();
        checkpoint::save(path, &state_at(step), &Metadata::at_step(step as u64)).unwrap();
        println!("saved {step} in {} us", start.elapsed().as_micros());
    }
}

/// Waits (bounded) for the child's line `saved 1 in N us` and returns N.
fn first_save_micros(lines: &mpsc::Receiver<String>) -> u64 {
    loop {
        match lines.recv_timeout(Duration::from_secs(120)) {
            Ok(line) => {
                if let Some(rest) = line.split("saved 1 in ").nth(1) {
                    return rest.trim_end_matches(" us").parse().unwrap();
                }
            }
            Err(e) => panic!("the child never finished its first save: {e}"),
        }
    }
}

#[test]
fn a_save_killed_at_any_moment_leaves_the_previous_checkpoint_loadable() {
    if let Ok(path) = std::env::var(CHILD) {
        return save_loop(Path::new(&path));
    }
    let dir = temp_dir("killed");
    let path = dir.join("state.safetensors");
    let template = (Array::zeros(&[LARGE], DType::U8), Array::scalar(0i32));
    // Kills spread over the whole of a save (as fractions of the first one's duration):
    // while the tree is serialized, while the file is written, around the rename.
    const KILLS: u64 = 12;
    let mut steps_seen = Vec::new();
    for kill in 0..KILLS {
        checkpoint::save(&path, &state_at(0), &Metadata::at_step(0)).unwrap();
        let mut child = spawn_child(
            "a_save_killed_at_any_moment_leaves_the_previous_checkpoint_loadable",
            path.to_str().unwrap(),
        );
        let lines = lines_of(&mut child);
        let save_micros = first_save_micros(&lines);
        wait_for(&lines, "saving 2");
        let delay = Duration::from_micros(save_micros * (2 * kill + 1) / (2 * KILLS));
        std::thread::sleep(delay);
        child.kill().expect("SIGKILL the saving child");
        child.wait().unwrap();

        let (restored, meta) = checkpoint::load(&path, &template).unwrap_or_else(|e| {
            panic!("killed {delay:?} into a save of {save_micros} us, the checkpoint does not load: {e}")
        });
        let step = meta.step.expect("a step") as u32;
        assert_eq!(
            restored.1.item::<i32>() as u32,
            step,
            "the step leaf agrees with the metadata"
        );
        let large = restored.0.astype(DType::I32);
        assert_eq!(large.min(None, false).item::<i32>() as u32, step % 256);
        assert_eq!(large.max(None, false).item::<i32>() as u32, step % 256);
        steps_seen.push(step);
    }
    // Each kill left a whole file of a completed save (the first or a later one: how far the
    // child got depends on how long the disk takes to sync), never the step-0 one it replaced.
    assert!(steps_seen.iter().all(|&s| s >= 1), "{steps_seen:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_io_error_names_the_path() {
    let dir = temp_dir("paths");
    let tree = Array::ones(&[3], DType::F32);
    let in_missing_folder = dir.join("no-such-folder").join("ckpt.safetensors");
    let err = checkpoint::save(&in_missing_folder, &tree, &Metadata::default()).unwrap_err();
    assert!(matches!(err, CheckpointError::Io(_)));
    assert!(
        err.to_string()
            .contains(&*dir.join("no-such-folder").to_string_lossy()),
        "{err}"
    );

    let missing = dir.join("missing.safetensors");
    let err = checkpoint::load(&missing, &tree).unwrap_err();
    assert!(
        err.to_string().contains(&*missing.to_string_lossy()),
        "{err}"
    );
    let err = checkpoint::load_metadata(&missing).unwrap_err();
    assert!(
        err.to_string().contains(&*missing.to_string_lossy()),
        "{err}"
    );

    let folder = dir.join("a-folder.safetensors");
    std::fs::create_dir(&folder).unwrap();
    let err = checkpoint::load(&folder, &tree).unwrap_err();
    assert!(
        err.to_string().contains(&*folder.to_string_lossy()),
        "{err}"
    );

    let truncated = dir.join("truncated.safetensors");
    let bytes = checkpoint::to_bytes(&tree, &Metadata::default()).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 4]).unwrap();
    let err = checkpoint::load(&truncated, &tree).unwrap_err();
    assert!(matches!(err, CheckpointError::Format(_)));
    assert!(
        err.to_string().contains(&*truncated.to_string_lossy()),
        "{err}"
    );
    assert!(err.to_string().contains("truncated"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A field of `/proc/self/status` in bytes (`VmHWM`: the peak resident memory).
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// In the child: loads `path` into `template` (or fails), and prints the peak's growth.
fn report_load_peak<T: Tree>(path: &Path, template: &T) {
    let before = status_bytes("VmHWM:");
    let outcome = checkpoint::load(path, template)
        .map(|_| ())
        .map_err(|e| e.to_string());
    println!(
        "peak-growth {} outcome {outcome:?}",
        status_bytes("VmHWM:") - before
    );
}

/// Runs `test`'s child part with `mode` and returns its peak growth and outcome line.
fn child_peak(test: &str, mode: &str) -> (u64, String) {
    let mut child = spawn_child(test, mode);
    let lines = lines_of(&mut child);
    let line = loop {
        match lines.recv_timeout(Duration::from_secs(120)) {
            Ok(line) if line.contains("peak-growth ") => break line,
            Ok(_) => {}
            Err(e) => panic!("the child reported no peak: {e}"),
        }
    };
    let _ = child.wait();
    let rest = line.split("peak-growth ").nth(1).unwrap();
    let (peak, outcome) = rest.split_once(" outcome ").unwrap();
    (peak.parse().unwrap(), outcome.to_string())
}

const MIB: u64 = 1 << 20;

#[test]
fn a_hostile_header_length_is_refused_before_anything_is_read_for_it() {
    let test = "a_hostile_header_length_is_refused_before_anything_is_read_for_it";
    if let Ok(path) = std::env::var(CHILD) {
        return report_load_peak(Path::new(&path), &Array::zeros(&[1], DType::F32));
    }
    let dir = temp_dir("hostile");
    // A 63 MB header of one tensor with a shape of millions of dimensions: parsed twice from
    // a file read whole, it cost about 1 GB and 14 s to refuse.
    let path = dir.join("hostile.safetensors");
    let dims = "1,".repeat(31_000_000);
    let json =
        format!("{{\"x\":{{\"dtype\":\"F32\",\"shape\":[{dims}1],\"data_offsets\":[0,4]}}}}");
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(json.as_bytes());
    bytes.extend_from_slice(&[0; 4]);
    std::fs::write(&path, &bytes).unwrap();
    let (peak, outcome) = child_peak(test, path.to_str().unwrap());
    assert!(
        outcome.contains(&format!(
            "more than the {MAX_HEADER_BYTES} a checkpoint header may have"
        )),
        "{outcome}"
    );
    assert!(
        peak < 8 * MIB,
        "refusing the header grew the peak by {peak} bytes"
    );

    // A length prefix that lies (4 GiB claimed in a small file) is refused the same way.
    let liar = dir.join("liar.safetensors");
    let mut lie = (4u64 << 30).to_le_bytes().to_vec();
    lie.extend_from_slice(b"{}");
    std::fs::write(&liar, &lie).unwrap();
    let err = checkpoint::load(&liar, &Array::zeros(&[1], DType::F32)).unwrap_err();
    assert!(err.to_string().contains("more than the"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn loading_holds_one_tensor_at_a_time_on_the_host() {
    let test = "loading_holds_one_tensor_at_a_time_on_the_host";
    let template: Vec<Array> = (0..4)
        .map(|_| Array::zeros(&[16 << 20], DType::F32))
        .collect();
    if let Ok(path) = std::env::var(CHILD) {
        return report_load_peak(Path::new(&path), &template);
    }
    let dir = temp_dir("one-at-a-time");
    let path = dir.join("big.safetensors");
    let tree: Vec<Array> = (0..4)
        .map(|i| Array::full(&[16 << 20], i as f64, DType::F32))
        .collect();
    checkpoint::save(&path, &tree, &Metadata::default()).unwrap();
    drop(tree);
    let (peak, outcome) = child_peak(test, path.to_str().unwrap());
    assert_eq!(outcome, "Ok(())");
    // 256 MiB of arrays plus one 64 MiB tensor in flight; reading the file whole first, as
    // before, held the 256 MiB file beside them too.
    assert!(
        peak < 400 * MIB,
        "loading 256 MiB grew the peak by {} MiB",
        peak / MIB
    );
    assert!(
        peak > 250 * MIB,
        "the arrays were not all made? {} MiB",
        peak / MIB
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A small valid checkpoint of three dtypes, with metadata.
fn sample_bytes() -> Vec<u8> {
    let tree = (
        Array::from_vec(vec![1.0f32, -2.0, 3.5], &[3]),
        Array::from_vec(vec![7i32, 8], &[2, 1]),
        Array::from_vec(vec![true, false], &[2]),
    );
    checkpoint::to_bytes(&tree, &Metadata::at_step(9).with("k", "v")).unwrap()
}

fn sample_template() -> (Array, Array, Array) {
    (
        Array::zeros(&[3], DType::F32),
        Array::zeros(&[2, 1], DType::I32),
        Array::zeros(&[2], DType::Bool),
    )
}

/// Decoding never panics; it returns the tree or an error.
fn decode(bytes: &[u8]) {
    let _ = checkpoint::from_bytes(bytes, &sample_template());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic_the_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        decode(&bytes);
    }

    #[test]
    fn truncated_checkpoints_are_refused(cut in 0usize..200) {
        let bytes = sample_bytes();
        let cut = cut.min(bytes.len() - 1);
        prop_assert!(checkpoint::from_bytes(&bytes[..cut], &sample_template()).is_err());
    }

    #[test]
    fn bit_flipped_checkpoints_decode_or_are_refused(flips in proptest::collection::vec((any::<usize>(), 0u8..8), 1..4)) {
        let mut bytes = sample_bytes();
        let len = bytes.len();
        for (at, bit) in flips {
            bytes[at % len] ^= 1 << bit;
        }
        decode(&bytes);
    }

    #[test]
    fn any_header_length_prefix_is_bounded(claimed in any::<u64>()) {
        let mut bytes = sample_bytes();
        bytes[..8].copy_from_slice(&claimed.to_le_bytes());
        let valid = u64::from_le_bytes(sample_bytes()[..8].try_into().unwrap());
        let outcome = checkpoint::from_bytes(&bytes, &sample_template());
        prop_assert_eq!(outcome.is_ok(), claimed == valid);
    }
}
