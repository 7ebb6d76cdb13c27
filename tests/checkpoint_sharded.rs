//! Checkpoints of sharded arrays on 8 CPU devices: `checkpoint::save` writes each distinct
//! shard where it lies in the file (the file equals the one `to_bytes` makes of the gathered
//! tree), `checkpoint::load` restores onto the template's layout whatever the layout saved
//! (2x4, 8x1, one device, replicated, and back), and the host memory either takes stays
//! near one shard, measured by this binary's allocator.

use jaxrs::checkpoint::{self, Metadata};
use jaxrs::prelude::*;
use jaxrs::{Mesh, NamedSharding, PartitionSpec, P};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;

/// The system allocator, counting the bytes this thread holds and the most it held, so a
/// test measures its own allocations whatever the other tests' threads do.
struct CountingAllocator;

thread_local! {
    static HELD: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counters are const-initialised
// thread-locals, which allocate nothing.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let _ = HELD.try_with(|h| {
                let now = h.get() + layout.size();
                h.set(now);
                let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
            });
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        let _ = HELD.try_with(|h| h.set(h.get().saturating_sub(layout.size())));
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// The most bytes this thread's allocations rose above their level at the start of `f`.
fn peak_host_bytes<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let start = HELD.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let r = f();
    (r, PEAK.with(Cell::get) - start)
}

fn devices() -> Vec<jaxrs::Device> {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    jaxrs::devices()
}

fn mesh(shape: &[usize], names: &[&str]) -> Mesh {
    devices();
    jaxrs::make_mesh(shape, names).unwrap()
}

fn on(mesh: &Mesh, spec: PartitionSpec, x: &Array) -> Array {
    jaxrs::device_put(x, NamedSharding::new(mesh.clone(), spec).unwrap())
}

fn temp_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "jaxrs-sharded-{name}-{}.safetensors",
        std::process::id()
    ))
}

#[derive(Tree, Clone)]
struct State {
    w: Array,
    b: Array,
    z: Array,
    step: Array,
}

fn values() -> State {
    State {
        w: Array::arange(0.0, 128.0, 1.0, DType::F32).reshape([16, 8]),
        b: Array::arange(-4.0, 4.0, 1.0, DType::F32).astype(DType::BF16),
        z: Array::from_vec(
            (0..32)
                .map(|i| jaxrs::C64::new(i as f32, -(i as f32)))
                .collect(),
            &[4, 8],
        ),
        step: Array::scalar(7i32),
    }
}

/// `values()` laid out over `mesh` as the specs say (the step stays on one device).
fn laid_out(state: &State, mesh: &Mesh, w: PartitionSpec, z: PartitionSpec) -> State {
    State {
        w: on(mesh, w, &state.w),
        b: on(mesh, P![], &state.b),
        z: on(mesh, z, &state.z),
        step: state.step.clone(),
    }
}

fn assert_same_values(a: &State, b: &State) {
    assert_eq!(a.w.to_vec::<f32>(), b.w.to_vec::<f32>());
    assert_eq!(a.b.to_vec::<half::bf16>(), b.b.to_vec::<half::bf16>());
    assert_eq!(a.z.to_vec::<jaxrs::C64>(), b.z.to_vec::<jaxrs::C64>());
    assert_eq!(a.step.item::<i32>(), b.step.item::<i32>());
}

#[test]
fn a_sharded_tree_is_saved_as_the_file_of_the_gathered_tree() {
    let m = mesh(&[2, 4], &["dp", "mp"]);
    let state = values();
    let sharded = laid_out(&state, &m, P!["dp", "mp"], P![None, "mp"]);
    let path = temp_file("same-file");
    let meta = Metadata::at_step(3);
    checkpoint::save(&path, &sharded, &meta).unwrap();
    let written = std::fs::read(&path).unwrap();
    // `to_bytes` gathers every leaf into one buffer; `save` never does, and writes the same
    // bytes, so any safetensors reader reads the sharded save.
    assert_eq!(written, checkpoint::to_bytes(&state, &meta).unwrap());
    let (back, read_meta) = checkpoint::load(&path, &state).unwrap();
    assert_same_values(&back, &state);
    assert_eq!(read_meta.step, Some(3));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_checkpoint_restores_onto_any_layout() {
    let grid = mesh(&[2, 4], &["dp", "mp"]);
    let row = mesh(&[8], &["d"]);
    let state = values();
    let path = temp_file("layouts");
    checkpoint::save(
        &path,
        &laid_out(&state, &grid, P!["dp", "mp"], P![None, "mp"]),
        &Metadata::default(),
    )
    .unwrap();

    let zeros = State {
        w: Array::zeros(&[16, 8], DType::F32),
        b: Array::zeros(&[8], DType::BF16),
        z: Array::zeros(&[4, 8], DType::C64),
        step: Array::scalar(0i32),
    };
    let device_3 = jaxrs::devices()[3];
    let templates = [
        // 2x4 to 8x1: rows over all eight devices.
        laid_out(&zeros, &row, P!["d"], P![None, "d"]),
        // To one device (not the default one).
        State {
            w: jaxrs::device_put(&zeros.w, device_3),
            b: jaxrs::device_put(&zeros.b, device_3),
            z: jaxrs::device_put(&zeros.z, device_3),
            step: jaxrs::device_put(&zeros.step, device_3),
        },
        // Back to 2x4 with the axes the other way round, several axes on one dimension.
        laid_out(&zeros, &grid, P![("mp", "dp")], P!["dp", "mp"]),
        // Replicated on every device of the grid.
        laid_out(&zeros, &grid, P![], P![]),
    ];
    for template in &templates {
        let (back, _) = checkpoint::load(&path, template).unwrap();
        assert_same_values(&back, &state);
        for (got, want) in [
            (&back.w, &template.w),
            (&back.b, &template.b),
            (&back.z, &template.z),
            (&back.step, &template.step),
        ] {
            assert_eq!(got.sharding(), want.sharding());
        }
        // Each device holds exactly its piece of the saved values.
        for shard in back.w.addressable_shards() {
            let rows = shard.index[0].clone();
            let cols = shard.index[1].clone();
            let want: Vec<f32> = rows
                .flat_map(|r| cols.clone().map(move |c| (r * 8 + c) as f32))
                .collect();
            assert_eq!(shard.data.to_vec::<f32>(), want);
        }
    }
    // And from 8x1 back to 2x4 through a second file.
    let (rows, _) = checkpoint::load(&path, &templates[0]).unwrap();
    let second = temp_file("layouts-second");
    checkpoint::save(&second, &rows, &Metadata::default()).unwrap();
    let (grid_back, _) = checkpoint::load(&second, &templates[2]).unwrap();
    assert_same_values(&grid_back, &state);
    assert_eq!(grid_back.w.sharding(), templates[2].w.sharding());
    for p in [&path, &second] {
        std::fs::remove_file(p).unwrap();
    }
}

#[test]
fn host_memory_stays_near_one_shard() {
    let grid = mesh(&[2, 4], &["dp", "mp"]);
    // 1 MiB of float32, in eight 128 KiB shards.
    let whole = Array::arange(0.0, (512 * 512) as f64, 1.0, DType::F32).reshape([512, 512]);
    let array_bytes = 512 * 512 * 4;
    let shard_bytes = array_bytes / 8;
    let sharded = on(&grid, P!["dp", "mp"], &whole);
    let path = temp_file("memory");

    let (saved, save_peak) =
        peak_host_bytes(|| checkpoint::save(&path, &sharded, &Metadata::default()));
    saved.unwrap();
    // A shard's elements and their bytes: two shards' worth at most, never the array.
    assert!(
        save_peak <= 2 * shard_bytes + 64 * 1024,
        "save held {save_peak} bytes on the host; one shard is {shard_bytes}"
    );

    // Restore onto another layout: columns over the eight devices.
    let row = mesh(&[8], &["d"]);
    let template = on(&row, P![None, "d"], &Array::zeros(&[512, 512], DType::F32));
    let (loaded, load_peak) = peak_host_bytes(|| checkpoint::load(&path, &template));
    let (back, _) = loaded.unwrap();
    assert!(
        load_peak <= 2 * shard_bytes + 64 * 1024,
        "load held {load_peak} bytes on the host; one shard is {shard_bytes}"
    );
    assert_eq!(back.sharding(), template.sharding());
    assert_eq!(back.to_vec::<f32>(), whole.to_vec::<f32>());

    // The measure sees a gather: `to_bytes` holds the whole array.
    let (_, gather_peak) = peak_host_bytes(|| checkpoint::to_bytes(&sharded, &Metadata::default()));
    eprintln!(
        "host bytes at most: save {save_peak}, load {load_peak}, to_bytes {gather_peak} \
         (shard {shard_bytes}, array {array_bytes})"
    );
    assert!(
        gather_peak >= array_bytes,
        "to_bytes held {gather_peak} bytes, less than the {array_bytes}-byte array"
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_truncated_or_mismatched_file_is_an_error_on_a_sharded_template() {
    let grid = mesh(&[2, 4], &["dp", "mp"]);
    let path = temp_file("hostile");
    let w = on(&grid, P!["dp", "mp"], &Array::ones(&[8, 8], DType::F32));
    checkpoint::save(&path, &(w.clone(),), &Metadata::default()).unwrap();
    let wrong = (on(&grid, P!["dp"], &Array::ones(&[8, 4], DType::F32)),);
    let err = checkpoint::load(&path, &wrong).unwrap_err();
    assert_eq!(
        err.to_string(),
        "checkpoint does not match the template: tensor `0` has shape [8, 8] in the checkpoint, \
         [8, 4] in the template"
    );
    // Cut short: refused from the header's sizes before any shard is read.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
    let err = checkpoint::load(&path, &(w,)).unwrap_err();
    assert!(
        matches!(err, checkpoint::CheckpointError::Format(_)),
        "{err}"
    );
    assert!(err.to_string().contains("truncated or padded"), "{err}");
    std::fs::remove_file(&path).unwrap();
}
