//! The sharded transformer step on 8 CPU devices: `examples/transformer_lm.rs`'s `--mesh
//! dp=2,mp=4` step (FSDP over "dp", heads and hidden units over "mp", the MLP a `shard_map`)
//! at the example's default sizes, beside JAX's program of the same model measured in the same
//! run (`benches/peer/sharded_jax.py`, which runs `tests/golden/gen_transformer_sharded.py`'s
//! model with `--xla_force_host_platform_device_count=8`).
//!
//! Run: `cargo bench --bench sharded`. Set `JAXRS_BENCH_PYTHON` to a Python that has
//! `jax==0.10.2` and `optax` (default `python3`) for JAX's figure; the ratio is printed at the
//! end (best of several rounds on both sides, the sides alternating). Both sides: the parameters, Adam's state and one
//! batch laid out on the devices first, the parameters and the state donated, the loss read
//! back to the host after each step.

#[path = "common/peer.rs"]
mod peer;
#[path = "../examples/transformer_lm.rs"]
#[allow(dead_code)]
mod transformer_lm;

use criterion::{criterion_group, Criterion};
use jaxrs::optim::GradientTransformation;
use jaxrs::prelude::*;
use jaxrs::{random, Jitted, NamedSharding, P};
use transformer_lm::{
    optimizer, shard_params, sharded_train_step, Config, MeshShape, Model, OptState, ShardedArgs,
    StepConfig,
};

/// Tiny Shakespeare's characters, the example's vocabulary.
const VOCAB: usize = 65;

/// The example's default run: 3 intervals of 200 steps.
const DECAY_STEPS: i32 = 600;

/// Batch 0 of the test's token sequence, `(7 i + i^2 // 3) mod vocab` in windows starting 11
/// apart (`gen_transformer_sharded.py`'s `batch`).
fn batch(config: &Config) -> (Array, Array) {
    let token = |i: usize| ((7 * i + i * i / 3) % VOCAB) as i32;
    let (b, t) = (config.batch, config.context);
    let window = |shift: usize| {
        let v: Vec<i32> = (0..b)
            .flat_map(|r| (11 * r + shift..11 * r + shift + t).map(token))
            .collect();
        Array::from_vec(v, &[b, t])
    };
    (window(0), window(1))
}

/// The sharded step and its state, the batch on the devices.
struct Trainer<F> {
    step: Jitted<F>,
    state: Option<(Model, OptState)>,
    inputs: Array,
    targets: Array,
}

impl<F: Fn(ShardedArgs) -> (Model, OptState, Array)> Trainer<F> {
    /// One step, its loss read back to the host. The batch is passed as clones kept alive
    /// here, so only the parameters and the state are donated.
    fn step(&mut self) -> f32 {
        let (params, state) = self.state.take().expect("the state");
        let (params, state, loss) =
            self.step
                .call((params, state, self.inputs.clone(), self.targets.clone()));
        self.state = Some((params, state));
        loss.item::<f32>()
    }
}

fn trainer() -> Trainer<impl Fn(ShardedArgs) -> (Model, OptState, Array)> {
    let config = Config::default();
    let step_config = StepConfig {
        compute: DType::F32,
        dropout: 0.0,
        peak_lr: config.peak_lr,
        warmup_steps: config.warmup_steps as i32,
        decay_steps: DECAY_STEPS,
        weight_decay: config.weight_decay,
        clip_norm: config.clip_norm,
    };
    let mesh = MeshShape { dp: 2, mp: 4 }.mesh();
    let params = Model::init(&random::key(0), &config, VOCAB, DType::F32);
    let opt_state = optimizer(&step_config).init(&params);
    let step = sharded_train_step(&mesh, (&params, &opt_state), step_config);
    let rows = NamedSharding::new(mesh.clone(), P!["dp", None]).expect("the batch's sharding");
    let (inputs, targets) = batch(&config);
    let mut t = Trainer {
        step,
        state: Some((
            shard_params(&params, &mesh),
            shard_params(&opt_state, &mesh),
        )),
        inputs: jaxrs::device_put(&inputs, rows.clone()),
        targets: jaxrs::device_put(&targets, rows),
    };
    for _ in 0..3 {
        t.step(); // compile and warm up
    }
    t
}

fn bench(c: &mut Criterion) {
    let mut t = trainer();
    let mut g = c.benchmark_group("sharded");
    g.sample_size(10);
    g.bench_function("jaxrs_transformer_step_2x4", |b| b.iter(|| t.step()));
    g.finish();
}

/// The best of `ALTERNATIONS` alternations of jaxrs's rounds and a run of JAX's peer: on a
/// shared machine the load changes from minute to minute, so each side gets several chances
/// at a quiet one.
fn ratios() {
    const ALTERNATIONS: usize = 3;
    let (rounds, steps) = (5, 20);
    let mut t = trainer();
    let (mut ours_ms, mut jax_ms) = (f64::INFINITY, None::<f64>);
    for _ in 0..ALTERNATIONS {
        let ms = peer::best_us(rounds, steps, || {
            t.step();
        }) / 1e3;
        ours_ms = ours_ms.min(ms);
        let jax = peer::jax_figures("sharded_jax.py", &[steps.to_string()]);
        if let Some(j) = peer::figure(&jax, "jax_sharded_step_ms") {
            jax_ms = Some(jax_ms.map_or(j, |b: f64| b.min(j)));
        }
    }
    println!(
        "\nsharded summary (8 CPU devices, 2 x 4 mesh, best of {ALTERNATIONS} x {rounds} rounds \
         x {steps} steps on each side, the sides alternating):"
    );
    let what = "transformer step, d_model 128, batch 32 x 64";
    match jax_ms {
        Some(j) => println!(
            "  {what}: jaxrs {ours_ms:8.2} ms, JAX 0.10.2 {j:8.2} ms, speed-up over JAX {:.2}x",
            j / ours_ms
        ),
        None => println!(
            "  {what}: jaxrs {ours_ms:8.2} ms (JAX not measured: set JAXRS_BENCH_PYTHON to a \
             Python with jax==0.10.2 and optax)"
        ),
    }
}

criterion_group!(benches, bench);

fn main() {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratios();
}
