//! Whole training steps beside their JAX twins: the MNIST MLP, a big MLP, the CNN, the
//! char-RNN (`#[scan]`), the transformer LM (`#[remat]` blocks; f32 and bf16) and the 8-device
//! data-parallel MLP step (`#[pmap]` + `pmean`), each measured by jaxrs here and by JAX 0.10.2 +
//! optax in `benches/peer/train_step_jax.py` (the same math: shapes, dtypes, losses and
//! optimizers; the models are in `benches/common/train_models.rs`), one row at a time, the two
//! sides interleaved.
//!
//! Run: `JAXRS_BENCH_PYTHON=/path/to/python cargo bench --bench train_step` (a Python with
//! `jax==0.10.2` and `optax`; default `python3`). `JAXRS_TRAIN_STEP_ROWS=mnist,cnn` picks rows.
//!
//! Each figure comes from a fresh process (this binary re-executed with
//! `JAXRS_TRAIN_STEP_CHILD=row:mode`; the peer re-executes itself the same way):
//! - **step**: ms per step in steady state, the best of several rounds after a warm-up and of
//!   two processes per side (jaxrs's and JAX's alternating); the parameters, the optimizer
//!   state and the batch already on the device, the parameters and the state donated, and
//!   exactly one scalar (the loss) read back to the host per step. Compile figures are the
//!   best of the two processes too.
//! - **compile**: trace + lower + XLA compile of the step with the persistent cache off. jaxrs:
//!   `jaxrs::stablehlo` of the step (trace + lower) plus the PJRT compile of the jitted
//!   program's StableHLO with jit's compile options; JAX: `jax.jit(step).lower(..)` plus
//!   `.compile()`. For the pmap row (no AOT path on either side used): the first call minus one
//!   steady step.
//! - **first call, cold / warm**: from just before the first call of the step (the client up,
//!   parameters and batch on the device) to its loss on the host, in a fresh process whose
//!   persistent compile cache is an empty folder (cold), then again in a fresh process over the
//!   folder the cold run filled (warm). jaxrs: `JAXRS_COMPILE_CACHE_DIR`; JAX:
//!   `jax_compilation_cache_dir` with `jax_persistent_cache_min_compile_time_secs=0` and
//!   `jax_persistent_cache_min_entry_size_bytes=0`.
//!
//! For finding why a row is behind: `JAXRS_TRAIN_STEP_CHILD=ROW:dump` with
//! `JAXRS_TRAIN_STEP_DUMP=DIR` writes the StableHLO jit compiled (`train_step_jax.py --child
//! ROW dump DIR` writes JAX's and its optimized HLO), and `JAXRS_TRAIN_STEP_PROGRAMS=a.mlir,b.mlir`
//! compiles and times each file through jaxrs's plugin, the files' rounds alternating: both
//! programs on one compiler and one runtime. That includes the pmap row's: jaxrs's
//! cross-replica program and JAX's SPMD one (`sdy.manual_computation` over 8 partitions) each
//! run on 8 CPU devices, their donated state fed back step after step.
//! `benches/peer/run_programs_jax.py a.mlir,b.mlir` runs the same files through jaxlib's own
//! runtime: each side's program on each side's runtime tells the programs from the runtimes.

#[path = "common/peer.rs"]
mod peer;
#[path = "common/train_models.rs"]
mod train_models;

use jaxrs::internals::pjrt::{Buffer, Client, CompileOptions, LoadedExecutable};
use jaxrs::internals::{client, compile_options};
use jaxrs::optim::GradientTransformation;
use jaxrs::prelude::*;
use jaxrs::{random, JitSite, PmapSite};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use train_models::*;

/// A training loop of one model: its state (parameters and optimizer state) and batch on the
/// device, and its jitted (or pmapped) step.
struct Trainer<S, I> {
    state: Option<S>,
    inputs: I,
    step: fn(S, &I) -> (S, Array),
    /// Where the step's compiled programs are kept.
    site: Site,
}

/// The compile cache of a row's step: a jit site, or the pmap row's pmap site.
#[derive(Clone, Copy)]
enum Site {
    Jit(fn() -> &'static JitSite),
    Pmap(fn() -> &'static PmapSite),
}

/// What the measurements need of a [`Trainer`], whatever its types.
trait Row {
    /// One step, its loss read back to the host.
    fn step(&mut self) -> f32;
    /// Trace and lower the step to StableHLO (not compiled).
    fn lower(&self) -> String;
    /// The StableHLO text jit compiled for the step (`None` for the pmap row).
    fn compiled_text(&self) -> Option<String>;
    /// The StableHLO text compiled for the step, jitted or pmapped.
    fn program_text(&self) -> Option<String>;
}

impl<S: Tree + Clone + 'static, I: Tree + Clone + 'static> Row for Trainer<S, I> {
    fn step(&mut self) -> f32 {
        let state = self
            .state
            .take()
            .expect("the state is back after each step");
        let (state, loss) = (self.step)(state, &self.inputs);
        self.state = Some(state);
        loss.item::<f32>()
    }

    fn lower(&self) -> String {
        let step = self.step;
        let example = (self.state.clone().expect("state"), self.inputs.clone());
        stablehlo(move |(s, i): (S, I)| step(s, &i), &example)
    }

    fn compiled_text(&self) -> Option<String> {
        match self.site {
            Site::Jit(site) => site().last_stablehlo(),
            Site::Pmap(_) => None,
        }
    }

    fn program_text(&self) -> Option<String> {
        match self.site {
            Site::Jit(site) => site().last_stablehlo(),
            Site::Pmap(site) => site().last_stablehlo(),
        }
    }
}

fn boxed<S: Tree + Clone + 'static, I: Tree + Clone + 'static>(
    state: S,
    inputs: I,
    step: fn(S, &I) -> (S, Array),
    site: Site,
) -> Box<dyn Row> {
    Box::new(Trainer {
        state: Some(state),
        inputs,
        step,
        site,
    })
}

fn mlp_row(sizes: &[usize], batch: usize) -> Box<dyn Row> {
    let [kp, kd] = random::split_n::<2>(&random::key(0));
    let params = Mlp::init(&kp, sizes);
    let opt_state = adam().init(&params);
    boxed(
        (params, opt_state),
        image_batch(&kd, batch),
        |(p, o), (x, y)| {
            let (p, o, loss) = mlp_step(p, o, x, y);
            ((p, o), loss)
        },
        Site::Jit(mlp_step::jit_site),
    )
}

fn cnn_row() -> Box<dyn Row> {
    let [kp, kd] = random::split_n::<2>(&random::key(0));
    let params = Cnn::init(&kp);
    let opt_state = cnn_opt_init(&params);
    boxed(
        (params, opt_state),
        image_batch(&kd, CNN_BATCH),
        |(p, o), (x, y)| {
            let (p, o, loss) = cnn_step(p, o, x, y);
            ((p, o), loss)
        },
        Site::Jit(cnn_step::jit_site),
    )
}

fn rnn_row() -> Box<dyn Row> {
    let [kp, kd] = random::split_n::<2>(&random::key(0));
    let params = CharRnn::init(&kp);
    let opt_state = rnn_opt_init(&params);
    boxed(
        (params, opt_state),
        token_batch(&kd, RNN_BATCH, RNN_SEQ),
        |(p, o), (x, y)| {
            let (p, o, loss) = rnn_step(p, o, x, y);
            ((p, o), loss)
        },
        Site::Jit(rnn_step::jit_site),
    )
}

fn transformer_row(compute: DType) -> Box<dyn Row> {
    let [kp, kd] = random::split_n::<2>(&random::key(0));
    let params = Transformer::init(&kp);
    let opt_state = transformer_opt_init(&params);
    type Step = fn(
        (Transformer, TransformerOpt),
        &(Array, Array),
    ) -> ((Transformer, TransformerOpt), Array);
    // A function pointer cannot carry the dtype: one non-capturing closure per dtype.
    let step: Step = match compute {
        DType::BF16 => |(p, o), (x, y)| {
            let (p, o, loss) = transformer_step(p, o, x, y, DType::BF16);
            ((p, o), loss)
        },
        _ => |(p, o), (x, y)| {
            let (p, o, loss) = transformer_step(p, o, x, y, DType::F32);
            ((p, o), loss)
        },
    };
    boxed(
        (params, opt_state),
        token_batch(&kd, TF_BATCH, CONTEXT),
        step,
        Site::Jit(transformer_step::jit_site),
    )
}

/// Each device's rows, already split over the devices (an output of a pmap, as in a loop).
#[pmap(axis_name = "d")]
fn split_over_devices(x: &Array) -> Array {
    x.clone()
}

const DEVICES: usize = 8;
/// Rows per device in the pmap step (800 in all).
const LOCAL_BATCH: usize = 100;

fn pmap_row() -> Box<dyn Row> {
    let [kp, kd] = random::split_n::<2>(&random::key(0));
    let params = Mlp::init(&kp, &[PIXELS, 128, CLASSES]);
    let opt_state = adam().init(&params);
    // One replica of the state per device, stacked along a new leading axis.
    let state = tree_map(&(params, opt_state), |a| {
        let mut shape = vec![DEVICES];
        shape.extend_from_slice(a.shape());
        a.broadcast_to(&shape)
    });
    let (x, y) = image_batch(&kd, DEVICES * LOCAL_BATCH);
    let inputs = (
        split_over_devices(&x.reshape([DEVICES, LOCAL_BATCH, PIXELS])),
        split_over_devices(&y.reshape([DEVICES, LOCAL_BATCH])),
    );
    boxed(
        state,
        inputs,
        |(p, o), (x, y)| {
            let (p, o, loss) = pmap_mlp_step(p, o, x, y);
            ((p, o), loss)
        },
        Site::Pmap(pmap_mlp_step::pmap_site),
    )
}

/// One row of the suite: its name (shared with the peer script), how to build it, how long
/// to measure it.
struct Spec {
    name: &'static str,
    what: &'static str,
    build: fn() -> Box<dyn Row>,
    steps_per_round: usize,
    rounds: usize,
    devices: usize,
}

const ROWS: &[Spec] = &[
    Spec {
        name: "mnist",
        what: "MNIST MLP 784-128-10, B=100, Adam",
        build: || mlp_row(&[PIXELS, 128, CLASSES], 100),
        steps_per_round: 300,
        rounds: 5,
        devices: 1,
    },
    Spec {
        name: "big_mlp",
        what: "MLP 784-1024-1024-10, B=1024, Adam",
        build: || mlp_row(&[PIXELS, 1024, 1024, CLASSES], 1024),
        steps_per_round: 5,
        rounds: 3,
        devices: 1,
    },
    Spec {
        name: "cnn",
        what: "CNN (2 conv + 2 dense), B=50, Adam",
        build: cnn_row,
        steps_per_round: 10,
        rounds: 3,
        devices: 1,
    },
    Spec {
        name: "char_rnn",
        what: "char-RNN GRU-256 scan 64, B=32, clip+Adam",
        build: rnn_row,
        steps_per_round: 5,
        rounds: 3,
        devices: 1,
    },
    Spec {
        name: "transformer_f32",
        what: "transformer 2x128 remat, 32x64 tok, f32",
        build: || transformer_row(DType::F32),
        steps_per_round: 4,
        rounds: 3,
        devices: 1,
    },
    Spec {
        name: "transformer_bf16",
        what: "transformer, bf16 compute",
        build: || transformer_row(DType::BF16),
        steps_per_round: 1,
        rounds: 3,
        devices: 1,
    },
    Spec {
        name: "pmap",
        what: "pmap MLP 8 CPU devices x B=100, pmean",
        build: pmap_row,
        steps_per_round: 20,
        rounds: 3,
        devices: DEVICES,
    },
];

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The child's side: measure `mode` of row `name` and print `name: value` lines.
fn child(name: &str, mode: &str) {
    let spec = ROWS.iter().find(|s| s.name == name).expect("a known row");
    if spec.devices > 1 {
        jaxrs::set_cpu_device_count(spec.devices).expect("CPU devices before the client");
    }
    let mut row = (spec.build)();
    let t = Instant::now();
    let loss = row.step();
    let first_ms = ms_since(t);
    assert!(loss.is_finite(), "{name}: loss {loss}");
    println!("first_call_ms: {first_ms:.3}");
    if mode == "first" {
        return;
    }
    if mode == "dump" {
        // For comparing programs with JAX's: the StableHLO jit compiled, into the folder
        // `JAXRS_TRAIN_STEP_DUMP` names.
        let dir = std::env::var("JAXRS_TRAIN_STEP_DUMP").expect("JAXRS_TRAIN_STEP_DUMP");
        let text = row.program_text().expect("a compiled step");
        std::fs::write(format!("{dir}/{name}.jaxrs.mlir"), text).expect("write the dump");
        return;
    }
    for _ in 0..2 {
        row.step();
    }
    let mut best = f64::INFINITY;
    for _ in 0..spec.rounds {
        let t = Instant::now();
        for _ in 0..spec.steps_per_round {
            row.step();
        }
        best = best.min(ms_since(t) / spec.steps_per_round as f64);
    }
    println!("step_ms: {best:.4}");
    match row.compiled_text() {
        Some(text) => {
            let t = Instant::now();
            let lowered = row.lower();
            let trace_lower_ms = ms_since(t);
            let t = Instant::now();
            client()
                .compile(&text, &compile_options())
                .expect("XLA compiles the step");
            let xla_ms = ms_since(t);
            assert!(!lowered.is_empty());
            println!("trace_lower_ms: {trace_lower_ms:.3}");
            println!("xla_compile_ms: {xla_ms:.3}");
            println!("compile_ms: {:.3}", trace_lower_ms + xla_ms);
        }
        None => println!("compile_ms: {:.3}", first_ms - best),
    }
}

/// Runs this binary as a child measuring `mode` of `row`, with `cache` as the persistent
/// compile cache's folder (`None`: the cache off).
fn run_child(row: &str, mode: &str, cache: Option<&std::path::Path>) -> Figures {
    let exe = std::env::current_exe().expect("the bench binary");
    let mut cmd = Command::new(exe);
    cmd.env("JAXRS_TRAIN_STEP_CHILD", format!("{row}:{mode}"))
        .env_remove("JAXRS_CPU_DEVICES");
    match cache {
        Some(dir) => cmd
            .env_remove("JAXRS_COMPILE_CACHE")
            .env("JAXRS_COMPILE_CACHE_DIR", dir),
        None => cmd.env("JAXRS_COMPILE_CACHE", "0"),
    };
    let out = cmd.output().expect("the child runs");
    if !out.status.success() {
        eprintln!(
            "{row} ({mode}) failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return vec![];
    }
    peer::parse_figures(&out.stdout)
}

/// The steady-state figures (step, compile) of one row, by `ROUNDS` alternations of a jaxrs
/// child and a JAX child, each figure the best of its side's runs: the machine's load drifts
/// over a minute, and alternating lets both sides see the same drift.
fn measure_steady(spec: &Spec) -> (Figures, Figures) {
    const ROUNDS: usize = 2;
    let (mut ours, mut jax) = (Figures::new(), Figures::new());
    let keep_best = |best: &mut Figures, new: Figures| {
        for (k, v) in new {
            match best.iter_mut().find(|(name, _)| *name == k) {
                Some((_, old)) => *old = old.min(v),
                None => best.push((k, v)),
            }
        }
    };
    for _ in 0..ROUNDS {
        let mut mine = run_child(spec.name, "steady", None);
        mine.retain(|(k, _)| k != "first_call_ms");
        keep_best(&mut ours, mine);
        keep_best(
            &mut jax,
            peer::jax_figures("train_step_jax.py", &[spec.name.into(), "steady".into()]),
        );
    }
    (ours, jax)
}

/// jaxrs's first-call figures of one row: cold (an empty persistent cache), then warm.
fn measure_first(spec: &Spec) -> Figures {
    let dir = std::env::temp_dir().join(format!(
        "jaxrs-train-step-{}-{}",
        std::process::id(),
        spec.name
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a cache folder");
    let mut figures = Figures::new();
    for temperature in ["cold", "warm"] {
        if let Some(ms) = peer::figure(&run_child(spec.name, "first", Some(&dir)), "first_call_ms")
        {
            figures.push((format!("first_{temperature}_ms"), ms));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    figures
}

/// One argument of a StableHLO module's `main`: its type, and for an SPMD program which of
/// its dimensions are split over the mesh.
struct Argument {
    dtype: DType,
    shape: Vec<i64>,
    split: Vec<bool>,
    /// Marked donatable (`jax.buffer_donor`) or aliased to a result (`tf.aliasing_output`).
    donor: bool,
}

/// `name = N` from a module's attributes (`mhlo.num_partitions = 8 : i32`), 1 if absent.
fn module_count(text: &str, name: &str) -> usize {
    let header = &text[..text.find('\n').unwrap_or(text.len())];
    header
        .split(&format!("{name} = "))
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .map_or(1, |n| n.parse().expect("a count"))
}

/// The arguments of a StableHLO module's `main`.
fn main_arguments(text: &str) -> Vec<Argument> {
    let start = text.find("@main(").expect("a main function") + "@main(".len();
    let end = start + text[start..].find(") -> ").expect("main's results");
    text[start..end]
        .split("%arg")
        .skip(1)
        .map(|arg| {
            let t = &arg[arg.find("tensor<").expect("a tensor type") + "tensor<".len()..];
            let t = &t[..t.find('>').expect("a tensor type")];
            let mut parts: Vec<&str> = t.split('x').collect();
            let dtype = match parts.pop().expect("an element type") {
                "f32" => DType::F32,
                "bf16" => DType::BF16,
                "i32" => DType::I32,
                "ui32" => DType::U32,
                other => panic!("element type {other}"),
            };
            let shape: Vec<i64> = parts.iter().map(|d| d.parse().expect("a dim")).collect();
            // `#sdy.sharding<@mesh, [{"d"}, {}]>`: a dimension with an axis name is split.
            let split = match arg.split_once("sdy.sharding<@mesh, [") {
                Some((_, dims)) => dims[..dims.find(']').expect("a dimension list")]
                    .split(',')
                    .map(|d| d.contains('"'))
                    .collect(),
                None => vec![false; shape.len()],
            };
            let donor = arg.contains("jax.buffer_donor") || arg.contains("tf.aliasing_output");
            Argument {
                dtype,
                shape,
                split,
                donor,
            }
        })
        .collect()
}

/// Compiles each StableHLO file of `paths` (comma-separated) through this process's plugin
/// with jit's options and runs it on zeros: the same compiler and runtime for jaxrs's program
/// and JAX's (`--child ROW dump` on both sides writes them). A program over several devices
/// (`mhlo.num_replicas`, as jaxrs's pmap; or `mhlo.num_partitions` with Shardy shardings, as
/// JAX's pmap) runs on that many CPU devices. Its donated arguments are fed the matching
/// leading results of the step before, as a training loop does.
fn run_programs(paths: &str, steps: usize) {
    let texts: Vec<(&str, String)> = paths
        .split(',')
        .map(|path| {
            (
                path,
                std::fs::read_to_string(path).expect("a StableHLO file"),
            )
        })
        .collect();
    let devices_needed = texts
        .iter()
        .map(|(_, text)| {
            module_count(text, "mhlo.num_partitions") * module_count(text, "mhlo.num_replicas")
        })
        .max()
        .unwrap_or(1);
    if devices_needed > 1 {
        jaxrs::set_cpu_device_count(devices_needed).expect("CPU devices before the client");
    }
    let client = client();
    let mut programs: Vec<Program> = texts
        .iter()
        .map(|(path, text)| Program::new(&client, path, text))
        .collect();
    for p in &mut programs {
        p.step();
        p.step();
    }
    // Rounds alternate between the programs, so that a change in the machine's load falls on
    // all of them.
    let mut best = vec![f64::INFINITY; programs.len()];
    for _ in 0..3 {
        for (p, best) in programs.iter_mut().zip(&mut best) {
            let t = Instant::now();
            for _ in 0..steps {
                p.step();
            }
            *best = best.min(ms_since(t) / steps as f64);
        }
    }
    for (p, best) in programs.iter().zip(best) {
        println!(
            "{}: compile {:.1} ms, run {best:.3} ms, {} YNN fusions",
            p.path, p.compile_ms, p.ynn_fusions
        );
    }
}

/// A StableHLO file compiled by [`run_programs`], with its arguments on the devices.
struct Program<'a> {
    path: &'a str,
    exe: LoadedExecutable,
    /// `args[d][i]`: argument i on the executable's device d (its shard in an SPMD program).
    args: Vec<Vec<Buffer>>,
    /// The leading arguments that are donated, fed by the leading results of the step before.
    donated: usize,
    compile_ms: f64,
    ynn_fusions: usize,
}

impl<'a> Program<'a> {
    fn new(client: &Arc<Client>, path: &'a str, text: &str) -> Program<'a> {
        let partitions = module_count(text, "mhlo.num_partitions");
        let replicas = module_count(text, "mhlo.num_replicas");
        let devices = &client.devices()[..partitions * replicas];
        let base = compile_options();
        let options = if partitions > 1 {
            CompileOptions {
                num_partitions: partitions as i64,
                use_spmd_partitioning: true,
                use_shardy_partitioner: true,
                device_assignment: Some(vec![devices.iter().map(|d| i64::from(d.id())).collect()]),
                ..base
            }
        } else {
            CompileOptions {
                num_replicas: replicas as i64,
                device_assignment: Some(devices.iter().map(|d| vec![i64::from(d.id())]).collect()),
                ..base
            }
        };
        let t = Instant::now();
        let exe = client.compile(text, &options).expect("XLA compiles it");
        let compile_ms = ms_since(t);
        // XLA's CPU backend hands dots and reductions to YNNPACK in "__ynn_fusion" kernels.
        let optimized = exe
            .optimized_program()
            .map(|(_, bytes)| bytes)
            .unwrap_or_default();
        let ynn_fusions = optimized
            .windows(12)
            .filter(|w| w == b"__ynn_fusion")
            .count();
        if std::env::var_os("JAXRS_TRAIN_STEP_KEEP_OPTIMIZED").is_some() {
            std::fs::write(format!("{path}.optimized.pb"), &optimized).expect("write");
        }
        let arguments = main_arguments(text);
        let args = exe
            .devices()
            .iter()
            .map(|device| {
                arguments
                    .iter()
                    .map(|a| {
                        let shard: Vec<i64> = a
                            .shape
                            .iter()
                            .zip(&a.split)
                            .map(|(&n, &split)| if split { n / partitions as i64 } else { n })
                            .collect();
                        let size = shard.iter().product::<i64>() as usize * a.dtype.size_in_bytes();
                        client
                            .buffer_from_host(&vec![0u8; size], a.dtype, &shard, device)
                            .expect("upload")
                    })
                    .collect()
            })
            .collect();
        Program {
            path,
            exe,
            args,
            donated: arguments.iter().take_while(|a| a.donor).count(),
            compile_ms,
            ynn_fusions,
        }
    }

    /// One step, its last result (the loss) read back from the first device, as the training
    /// loops read one scalar per step.
    fn step(&mut self) {
        let lists: Vec<Vec<&Buffer>> = self.args.iter().map(|l| l.iter().collect()).collect();
        let outs = self.exe.execute(&lists, &[]).expect("run");
        for (d, (list, mut out)) in self.args.iter_mut().zip(outs).enumerate() {
            let loss = out.last().expect("a result");
            if d == 0 {
                let mut bytes = vec![0u8; loss.dtype().size_in_bytes()];
                loss.copy_to_host(&mut bytes).expect("read the loss");
            }
            let kept = list.split_off(self.donated);
            out.truncate(self.donated);
            *list = out;
            list.extend(kept);
        }
    }
}

fn main() {
    if let Ok(paths) = std::env::var("JAXRS_TRAIN_STEP_PROGRAMS") {
        let steps = std::env::var("JAXRS_TRAIN_STEP_PROGRAM_STEPS")
            .map_or(3, |s| s.parse().expect("a number"));
        run_programs(&paths, steps);
        return;
    }
    if let Ok(which) = std::env::var("JAXRS_TRAIN_STEP_CHILD") {
        let (row, mode) = which.split_once(':').expect("row:mode");
        child(row, mode);
        return;
    }
    let chosen = std::env::var("JAXRS_TRAIN_STEP_ROWS").ok();
    let chosen: Option<Vec<&str>> = chosen.as_deref().map(|s| s.split(',').collect());
    let mut table = Vec::new();
    let started = Instant::now();
    for spec in ROWS {
        if chosen.as_ref().is_some_and(|c| !c.contains(&spec.name)) {
            continue;
        }
        let (mut ours, mut jax) = measure_steady(spec);
        ours.extend(measure_first(spec));
        jax.extend(peer::jax_figures(
            "train_step_jax.py",
            &[spec.name.into(), "first".into()],
        ));
        eprintln!(
            "{} done ({:.0} s): jaxrs {ours:?}, JAX {jax:?}",
            spec.name,
            started.elapsed().as_secs_f64()
        );
        table.push((spec, ours, jax));
    }
    print_table(&table);
}

/// Figures by name, as `name: value` lines give them.
type Figures = Vec<(String, f64)>;

fn print_table(table: &[(&Spec, Figures, Figures)]) {
    println!("\ntrain_step summary (ms; ratio = jaxrs time / JAX time, below 1.0: jaxrs faster):");
    println!(
        "| {:<42} | {:<20} | {:>10} | {:>10} | {:>6} |",
        "model", "figure", "jaxrs", "JAX 0.10.2", "ratio"
    );
    println!(
        "|{:-<44}|{:-<22}|{:->12}|{:->12}|{:->8}|",
        "", "", "", "", ""
    );
    let figures = [
        ("step_ms", "step (steady state)"),
        ("compile_ms", "compile"),
        ("first_cold_ms", "first call, cold"),
        ("first_warm_ms", "first call, warm"),
    ];
    for (spec, ours, jax) in table {
        for (key, label) in figures {
            let mine = peer::figure(ours, key);
            let theirs = peer::figure(jax, key);
            let cell = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
            let ratio = match (mine, theirs) {
                (Some(m), Some(j)) => format!("{:.2}x", m / j),
                _ => "-".into(),
            };
            println!(
                "| {:<42} | {:<20} | {:>10} | {:>10} | {:>6} |",
                spec.what,
                label,
                cell(mine),
                cell(theirs),
                ratio
            );
        }
    }
    println!("\ncompile split (ms): trace + lower / XLA compile");
    for (spec, ours, jax) in table {
        let pair = |f: &[(String, f64)]| match (
            peer::figure(f, "trace_lower_ms"),
            peer::figure(f, "xla_compile_ms"),
        ) {
            (Some(a), Some(b)) => format!("{a:8.1} / {b:8.1}"),
            _ => "-".into(),
        };
        println!(
            "  {:<42} jaxrs {}   JAX {}",
            spec.what,
            pair(ours),
            pair(jax)
        );
    }
}
