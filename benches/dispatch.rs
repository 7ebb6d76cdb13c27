//! Dispatch latency: µs per cached call of a tiny jitted function (`x + 1` on f32[4]),
//! beside the raw PJRT floor (execute + await of the same kind of executable, no jaxrs) and,
//! when Python with JAX 0.10.2 is available, JAX's `f(x).block_until_ready()`. Also the
//! read-back of a ready array: `item()` of an f32 scalar and `to_vec()` of an f32[1000], beside
//! JAX's `float(x)` and `np.asarray(x)`.
//!
//! Start-up: the time from `main` to a usable client (`jaxrs::devices()`), with its breakdown,
//! measured in fresh child processes, beside the floor (`dlopen` of the plugin alone, in its
//! own process) and JAX's `import jax` and `jax.devices()`.
//!
//! Run: `cargo bench --bench dispatch`. Set `JAXRS_BENCH_PYTHON` to a Python that has
//! `jax==0.10.2` (default `python3`) to get the JAX figure in the same run. The ratios are
//! printed at the end (best of several rounds, so noise on a shared machine inflates neither
//! side more than the other).

#[path = "common/peer.rs"]
mod peer;

use criterion::{criterion_group, Criterion};
use jaxrs::internals::pjrt::{default_client, Buffer, CompileOptions, LoadedExecutable};
use jaxrs::{jit, Array, DType};
use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

const MODULE: &str = r#"module @floor {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %one = stablehlo.constant dense<1.0> : tensor<4xf32>
    %y = stablehlo.add %x, %one : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}"#;

struct Floor {
    exe: LoadedExecutable,
    input: Buffer,
}

impl Floor {
    fn new() -> Floor {
        let client = default_client().expect("PJRT client");
        let exe = client
            .compile(MODULE, &CompileOptions::single_device())
            .expect("compile");
        let bytes: Vec<u8> = [0.0f32, 1.0, 2.0, 3.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let input = client
            .buffer_from_host(&bytes, DType::F32, &[4], &client.devices()[0])
            .expect("upload");
        Floor { exe, input }
    }

    /// One execute, awaiting the result, then freeing it: the least any jit call must do.
    fn call(&self) {
        let out = self
            .exe
            .execute(&[vec![&self.input]], &[])
            .expect("execute");
        out[0][0].block_until_ready().expect("await");
    }
}

fn jaxrs_call(f: &jaxrs::Jitted<impl Fn(Array) -> Array>, x: &Array) {
    let y: Array = f.call(x.clone());
    y.block_until_ready();
}

fn bench(c: &mut Criterion) {
    let floor = Floor::new();
    let f = jit(|x: Array| &x + 1.0);
    let x = Array::from_vec(vec![0.0f32, 1.0, 2.0, 3.0], &[4]);
    jaxrs_call(&f, &x);
    let mut g = c.benchmark_group("dispatch");
    g.bench_function("pjrt_floor_execute_await", |b| b.iter(|| floor.call()));
    g.bench_function("jaxrs_jit_call_block_until_ready", |b| {
        b.iter(|| jaxrs_call(&f, black_box(&x)))
    });
    let (scalar, vector) = ready_read_inputs();
    g.bench_function("jaxrs_item_ready_f32_scalar", |b| {
        b.iter(|| black_box(&scalar).item::<f32>())
    });
    g.bench_function("jaxrs_to_vec_ready_f32_1000", |b| {
        b.iter(|| black_box(&vector).to_vec::<f32>())
    });
    g.finish();
}

/// A ready f32 scalar and a ready f32[1000], both results of a computation (device arrays, not
/// host literals), for the read-back rows.
fn ready_read_inputs() -> (Array, Array) {
    let scalar = jit(|x: Array| &x * 2.0).call(Array::from_vec(vec![1.5f32], &[]));
    let vector = jit(|x: Array| &x * 2.0).call(Array::from_vec(
        (0..1000).map(|i| i as f32).collect::<Vec<_>>(),
        &[1000],
    ));
    scalar.block_until_ready();
    vector.block_until_ready();
    (scalar, vector)
}

fn ratios() {
    let (rounds, calls) = (7, 20_000);
    let floor = Floor::new();
    let f = jit(|x: Array| &x + 1.0);
    let x = Array::from_vec(vec![0.0f32, 1.0, 2.0, 3.0], &[4]);
    jaxrs_call(&f, &x);
    // Interleave so both see the same machine state.
    let mut floor_us = f64::INFINITY;
    let mut jaxrs_us = f64::INFINITY;
    for _ in 0..3 {
        floor_us = floor_us.min(peer::best_us(rounds, calls, || floor.call()));
        jaxrs_us = jaxrs_us.min(peer::best_us(rounds, calls, || jaxrs_call(&f, &x)));
    }
    println!("\ndispatch summary (best of {rounds} rounds x {calls} calls, x + 1 on f32[4]):");
    println!("  raw PJRT execute+await floor: {floor_us:8.2} µs");
    println!(
        "  jaxrs jit call + await:       {jaxrs_us:8.2} µs   ratio to floor: {:.2}x",
        jaxrs_us / floor_us
    );
    // Eager, op by op: each operation is its own cached executable.
    let y = Array::from_vec(vec![1.0f32; 4], &[4]);
    let eager_add = peer::best_us(rounds, calls, || {
        let z = &x + &y;
        z.block_until_ready();
    });
    let eager_mul = peer::best_us(rounds, calls, || {
        let z = &x * 1.0001;
        z.block_until_ready();
    });
    println!("  jaxrs eager x + y:            {eager_add:8.2} µs");
    println!("  jaxrs eager x * 1.0001:       {eager_mul:8.2} µs");
    let (scalar, vector) = ready_read_inputs();
    let item_us = peer::best_us(rounds, calls, || {
        black_box(black_box(&scalar).item::<f32>());
    });
    let to_vec_us = peer::best_us(rounds, calls, || {
        black_box(black_box(&vector).to_vec::<f32>());
    });
    println!("  jaxrs item() of a ready f32 scalar:      {item_us:8.2} µs");
    println!("  jaxrs to_vec() of a ready f32[1000]:     {to_vec_us:8.2} µs");
    let jax = peer::jax_figures("dispatch_jax.py", &[calls.to_string()]);
    let get = |k: &str| peer::figure(&jax, k);
    for (what, ours, key) in [
        (
            "float(x) of a ready f32 scalar",
            item_us,
            "jax_float_ready_scalar_us",
        ),
        (
            "np.asarray(x) of a ready f32[1000]",
            to_vec_us,
            "jax_asarray_ready_f32_1000_us",
        ),
    ] {
        if let (Some(fresh), Some(cached)) = (get(key), get(&format!("{key}_cached"))) {
            println!(
                "  JAX 0.10.2 {what}: {fresh:8.2} µs (first read of each array; jaxrs is \
                 {:.2}x faster), {cached:.2} µs (JAX's cached host copy; {:.2}x)",
                fresh / ours,
                cached / ours
            );
        }
    }
    match get("jax_call_block_until_ready_us") {
        Some(j) => {
            println!(
                "  JAX 0.10.2 f(x).block_until_ready(): {j:8.2} µs   jaxrs is {:.2}x faster",
                j / jaxrs_us
            );
            if let (Some(a), Some(m)) = (get("jax_eager_add_us"), get("jax_eager_mul_scalar_us")) {
                println!("  JAX 0.10.2 eager x + y: {a:8.2} µs, x * 1.0001: {m:8.2} µs");
            }
        }
        None => {
            println!("  JAX: not measured (set JAXRS_BENCH_PYTHON to a Python with jax==0.10.2)")
        }
    }
}

/// Set in a child process of this bench: what it measures (`jaxrs` or `dlopen`).
const STARTUP_CHILD: &str = "JAXRS_BENCH_STARTUP_CHILD";

/// A child: from `main` to a usable client, with the breakdown the runtime recorded, then the
/// first result of a tiny jitted program (its compiled form comes from the persistent compile
/// cache once the first child stored it).
fn startup_child() {
    let start = Instant::now();
    let devices = jaxrs::devices();
    let ready = start.elapsed();
    let y = jit(|x: Array| &x + 1.0).call(Array::scalar(1.0f32));
    assert_eq!(y.item::<f32>(), 2.0);
    let first = start.elapsed();
    assert!(!devices.is_empty());
    let t = jaxrs::internals::pjrt::startup_times().expect("the client was created here");
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!("client_ready_ms: {:.3}", ms(ready));
    println!("resolve_ms: {:.3}", ms(t.resolve));
    println!("dlopen_ms: {:.3}", ms(t.load.dlopen));
    println!("initialize_ms: {:.3}", ms(t.load.initialize));
    println!("client_create_ms: {:.3}", ms(t.client));
    let parts = t.resolve + t.load.dlopen + t.load.initialize + t.client;
    println!("other_ms: {:.3}", ms(t.total.saturating_sub(parts)));
    println!("first_result_ms: {:.3}", ms(first));
}

/// A child: `dlopen` of the plugin and nothing else, the floor of any start-up.
fn dlopen_child() {
    extern "C" {
        fn dlopen(file: *const std::os::raw::c_char, flags: std::os::raw::c_int) -> *mut u8;
    }
    // libloading's flags, as `Api::load` passes them.
    const RTLD_LAZY: std::os::raw::c_int = 1;
    let path = jaxrs::internals::pjrt::provision::plugin_path().expect("the plugin");
    let path = std::ffi::CString::new(path.into_os_string().into_encoded_bytes()).unwrap();
    let start = Instant::now();
    // SAFETY: loading the plugin runs its initializers, as `Api::load` does.
    let handle = unsafe { dlopen(path.as_ptr(), RTLD_LAZY) };
    let took = start.elapsed();
    assert!(!handle.is_null(), "dlopen failed");
    println!("dlopen_alone_ms: {:.3}", took.as_secs_f64() * 1e3);
}

/// The figures a fresh child process of this bench prints in `mode`.
fn child_figures(mode: &str) -> Vec<(String, f64)> {
    let out = Command::new(std::env::current_exe().expect("this bench's path"))
        .env(STARTUP_CHILD, mode)
        .output()
        .expect("start a child process");
    assert!(out.status.success(), "the {mode} child failed: {out:?}");
    peer::parse_figures(&out.stdout)
}

/// Best and median of each figure over the rounds.
fn summarize(rounds: &[Vec<(String, f64)>], name: &str) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = rounds
        .iter()
        .filter_map(|r| peer::figure(r, name))
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some((v[0], v[v.len() / 2]))
}

fn startup() {
    let rounds = 7;
    let (mut ours, mut floor, mut jax, mut jax_floor) = (vec![], vec![], vec![], vec![]);
    // Interleaved, so every side sees the same machine state.
    for _ in 0..rounds {
        ours.push(child_figures("jaxrs"));
        floor.push(child_figures("dlopen"));
        jax.push(peer::jax_figures("dispatch_jax.py", &["startup".into()]));
        jax_floor.push(peer::jax_figures("dispatch_jax.py", &["dlopen".into()]));
    }
    println!("\nstart-up (fresh processes, best / median of {rounds}, ms):");
    let row = |what: &str, figures: &[Vec<(String, f64)>], name: &str| {
        if let Some((best, median)) = summarize(figures, name) {
            println!("  {what:<52} {best:8.2} / {median:8.2}");
        }
    };
    row(
        "jaxrs: main to usable client (jaxrs::devices())",
        &ours,
        "client_ready_ms",
    );
    row("  finding the plugin file", &ours, "resolve_ms");
    row("  dlopen of the plugin", &ours, "dlopen_ms");
    row(
        "  GetPjrtApi + PJRT_Plugin_Initialize",
        &ours,
        "initialize_ms",
    );
    row("  PJRT_Client_Create + devices", &ours, "client_create_ms");
    row(
        "  the rest (canonical path, log setting, locks)",
        &ours,
        "other_ms",
    );
    row(
        "jaxrs: main to first result (warm compile cache)",
        &ours,
        "first_result_ms",
    );
    row(
        "floor: dlopen of the plugin alone",
        &floor,
        "dlopen_alone_ms",
    );
    if jax.iter().all(Vec::is_empty) {
        println!("  JAX: not measured (set JAXRS_BENCH_PYTHON to a Python with jax==0.10.2)");
        return;
    }
    row("JAX 0.10.2: import jax", &jax, "jax_import_ms");
    row(
        "JAX 0.10.2: jax.devices() after import",
        &jax,
        "jax_devices_ms",
    );
    row(
        "JAX 0.10.2: dlopen of libjax_common.so alone",
        &jax_floor,
        "jax_dlopen_alone_ms",
    );
    if let (Some((create, _)), Some((devices, _))) = (
        summarize(&ours, "client_create_ms"),
        summarize(&jax, "jax_devices_ms"),
    ) {
        println!(
            "  client creation, jaxrs vs jax.devices() (both after their XLA is loaded): \
             jaxrs is {:.2}x faster",
            devices / create
        );
    }
    if let (Some((ready, _)), Some((import, _)), Some((devices, _))) = (
        summarize(&ours, "client_ready_ms"),
        summarize(&jax, "jax_import_ms"),
        summarize(&jax, "jax_devices_ms"),
    ) {
        println!(
            "  to a usable client, jaxrs vs import jax + jax.devices(): jaxrs is {:.1}x faster",
            (import + devices) / ready
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    match std::env::var(STARTUP_CHILD).as_deref() {
        Ok("jaxrs") => return startup_child(),
        Ok("dlopen") => return dlopen_child(),
        _ => {}
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratios();
    startup();
}
