//! Trains a small causal transformer language model on the characters of tiny Shakespeare
//! (`../shared/data/tinyshakespeare.txt`, its last 10% held out): token and learned position
//! embeddings, pre-norm blocks of causal multi-head self-attention and a gelu MLP (each block
//! rematerialised with `#[remat]`), a final LayerNorm, and logits from the token embedding's
//! `attend` (tied weights). One jitted step (loss, gradient, global-norm clipping, AdamW on a
//! warmup-cosine schedule) with the parameters and the optimizer state donated; batches of
//! random windows built one step ahead on a background thread; the held-out loss on fixed
//! windows, by a jitted function, after each evaluation interval.
//!
//! `--dtype bf16` trains in mixed precision: the parameters (and the optimizer's moments) stay
//! float32, the step casts them to bfloat16 for the matrix products and the activations, and
//! the logits back to float32 for the loss, so the gradient reaches the float32 parameters
//! through the casts.
//!
//! Run: `cargo run --release --example transformer_lm [-- --epochs N --steps N --resume --out
//! DIR --dtype f32|bf16 PATH_TO_tinyshakespeare.txt]`. An "epoch" is
//! [`Config::steps_per_epoch`] steps of random windows, after which the held-out loss is
//! printed and the state saved in the background to `OUT/checkpoints/<step>` (a
//! `jaxrs::checkpoint::CheckpointManager` keeping the last 3; `--resume` continues from the
//! latest step). The loss curve goes to `OUT/loss.png`; OUT defaults to
//! `target/train/transformer_lm`.
//!
//! `--mesh dp=2,mp=4` trains sharded over a 2 x 4 mesh of 8 CPU devices instead
//! ([`run_sharded`]): FSDP over `"dp"` (every kernel and embedding split along d_model, Adam's
//! moments with them), tensor parallelism over `"mp"` (heads and MLP hidden units), the batch
//! over `"dp"`, the activations constrained with `with_sharding_constraint`, and the MLP a
//! `shard_map` collective matmul. The same steps run on one device beside it, and both loss
//! curves and their largest difference are printed (float32, no dropout, no checkpoint).

#[path = "common/harness.rs"]
pub mod harness;

use harness::{
    load_checkpoint, open_checkpoints, save_checkpoint, write_outputs_to, Args, Progress,
    TrainState,
};
use jaxrs::data::{self, Corpus};
use jaxrs::nn::{self, Embedding, LayerNorm, Linear, MultiHeadAttention};
use jaxrs::optim::{self, GradientTransformation, Mask};
use jaxrs::prelude::*;
use jaxrs::random;
use jaxrs::{
    all_gather, psum, shard_map, DotDims, Jitted, Mesh, NamedSharding, PartitionSpec, Shardings,
    TreeDef, P,
};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// The trainer's name: its default output folder is `target/train/NAME`.
pub const NAME: &str = "transformer_lm";
/// Evaluation intervals ("epochs") of a default run.
pub const EPOCHS: usize = 3;

/// The model's sizes and the optimisation's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// The width of the residual stream.
    pub d_model: usize,
    /// Attention heads per block (`d_model / heads` features each).
    pub heads: usize,
    /// Transformer blocks.
    pub layers: usize,
    /// Tokens per training window (and the number of learned positions).
    pub context: usize,
    /// Windows per step.
    pub batch: usize,
    /// The MLP's hidden width, as a multiple of `d_model`.
    pub mlp_ratio: usize,
    /// The learning rate at the end of the warm-up; the cosine decay ends at a tenth of it.
    pub peak_lr: f32,
    /// Steps of linear warm-up from 0 to `peak_lr`.
    pub warmup_steps: usize,
    /// AdamW's decoupled weight decay, on the kernels and the embeddings.
    pub weight_decay: f32,
    /// The gradient's global norm is clipped to this.
    pub clip_norm: f32,
    /// The dropout rate after attention and after the MLP (0: none).
    pub dropout: f32,
    /// Steps between two evaluations of the held-out loss.
    pub steps_per_epoch: usize,
    /// Fixed held-out windows the held-out loss is the mean over.
    pub eval_windows: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            d_model: 128,
            heads: 4,
            layers: 2,
            context: 64,
            batch: 32,
            mlp_ratio: 4,
            peak_lr: 3e-3,
            warmup_steps: 50,
            weight_decay: 0.1,
            clip_norm: 1.0,
            dropout: 0.0,
            steps_per_epoch: 200,
            eval_windows: 256,
        }
    }
}

/// One pre-norm transformer block.
#[derive(Tree, Clone)]
pub struct Block {
    pub ln_attention: LayerNorm,
    pub attention: MultiHeadAttention,
    pub ln_mlp: LayerNorm,
    pub mlp_in: Linear,
    pub mlp_out: Linear,
}

/// The whole model; `tokens` also gives the logits (`attend`).
#[derive(Tree, Clone)]
pub struct Model {
    pub tokens: Embedding,
    /// Learned position embeddings, `[context, d_model]`.
    pub positions: Array,
    pub blocks: Vec<Block>,
    pub ln_final: LayerNorm,
}

impl Model {
    /// A fresh model for `vocab` tokens, with float `dtype` parameters.
    pub fn init(key: &Array, config: &Config, vocab: usize, dtype: DType) -> Model {
        let keys = random::split(key, 2 + 3 * config.layers);
        let key = |i: usize| keys.slice(&[i, 0], &[i + 1, 2], &[1, 1]).reshape([2]);
        let d = config.d_model;
        let hidden = config.mlp_ratio * d;
        Model {
            tokens: Embedding::init(&key(0), vocab, d, dtype),
            positions: nn::init::normal(0.02).init(&key(1), &[config.context, d], dtype),
            blocks: (0..config.layers)
                .map(|l| Block {
                    ln_attention: LayerNorm::new(d, dtype),
                    attention: MultiHeadAttention::init(&key(2 + 3 * l), d, config.heads, dtype),
                    ln_mlp: LayerNorm::new(d, dtype),
                    mlp_in: Linear::init(&key(3 + 3 * l), d, hidden, dtype),
                    mlp_out: Linear::init(&key(4 + 3 * l), hidden, d, dtype),
                })
                .collect(),
            ln_final: LayerNorm::new(d, dtype),
        }
    }
}

/// One block: `x + attention(norm(x))`, then `x + mlp(norm(x))`. Rematerialised: under `grad`
/// its activations are recomputed in the backward pass from `x` instead of being kept, so a
/// step's memory grows with the blocks' inputs only. The dropout masks are drawn from `key`,
/// so the recomputation draws the same ones.
#[remat(static = rate)]
fn block(p: &Block, x: &Array, mask: &Array, key: &Array, rate: f32) -> Array {
    let [k_attention, k_mlp] = random::split_n::<2>(key);
    let deterministic = rate == 0.0;
    let normed = p.ln_attention.apply(x);
    let attended = p.attention.apply(&normed, &normed, Some(mask));
    let x = x + nn::dropout(&k_attention, &attended, rate as f64, deterministic);
    let hidden = p.mlp_in.apply(&p.ln_mlp.apply(&x)).gelu();
    let out = p.mlp_out.apply(&hidden);
    &x + nn::dropout(&k_mlp, &out, rate as f64, deterministic)
}

/// The logits `[batch, length, vocab]` for `inputs` `[batch, length]`, in the parameters'
/// dtype; dropout with `(key, rate)`.
fn logits(model: &Model, inputs: &Array, dropout: Option<(&Array, f32)>) -> Array {
    let length = inputs.shape()[1];
    let d = model.positions.shape()[1];
    let positions = model.positions.slice(&[0, 0], &[length, d], &[1, 1]);
    let mut x = model.tokens.apply(inputs) + positions;
    // [1, 1, length, length]: one mask for every window and head.
    let mask = nn::make_causal_mask(&Array::zeros(&[1, length], DType::I32));
    let (key, rate) = match dropout {
        Some((key, rate)) => (key.clone(), rate),
        None => (Array::zeros(&[2], DType::U32), 0.0),
    };
    for (i, p) in model.blocks.iter().enumerate() {
        x = block(p, &x, &mask, &random::fold_in(&key, i as u32), rate);
    }
    model.tokens.attend(&model.ln_final.apply(&x))
}

/// The mean next-token cross-entropy of the float32 `master` parameters computed in
/// `compute` precision: the parameters are cast inside, so the gradient flows back through
/// the cast to float32, and the logits are cast to float32 for the loss.
fn loss(
    master: &Model,
    inputs: &Array,
    targets: &Array,
    compute: DType,
    dropout: Option<(&Array, f32)>,
) -> Array {
    let params = tree_map(master, |p| p.astype(compute));
    let logits = logits(&params, inputs, dropout).astype(DType::F32);
    nn::softmax_cross_entropy_with_integer_labels(&logits, targets).mean(None, false)
}

/// The settings the jitted step is compiled for (a static argument: each new value compiles
/// anew). Floats compare by their bits.
#[derive(Clone, Copy, Debug)]
pub struct StepConfig {
    pub compute: DType,
    pub dropout: f32,
    pub peak_lr: f32,
    pub warmup_steps: i32,
    pub decay_steps: i32,
    pub weight_decay: f32,
    pub clip_norm: f32,
}

impl StepConfig {
    fn bits(&self) -> (DType, [u32; 4], [i32; 2]) {
        (
            self.compute,
            [
                self.dropout.to_bits(),
                self.peak_lr.to_bits(),
                self.weight_decay.to_bits(),
                self.clip_norm.to_bits(),
            ],
            [self.warmup_steps, self.decay_steps],
        )
    }
}

impl PartialEq for StepConfig {
    fn eq(&self, other: &StepConfig) -> bool {
        self.bits() == other.bits()
    }
}

impl Eq for StepConfig {}

impl Hash for StepConfig {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bits().hash(state);
    }
}

pub type Optimizer = optim::Chain<(optim::ClipByGlobalNorm, optim::AdamW)>;
pub type OptState = optim::State<Optimizer, Model>;

/// Global-norm clipping, then AdamW on a warmup-cosine schedule (to a tenth of the peak at
/// `decay_steps`), decaying the kernels and the embeddings but not the biases and the norms.
pub fn optimizer(c: &StepConfig) -> Optimizer {
    let peak = c.peak_lr as f64;
    let schedule =
        optim::warmup_cosine_decay_schedule(0.0, peak, c.warmup_steps, c.decay_steps, peak / 10.0);
    let decayed =
        |path: &str| path.ends_with("kernel") || path.ends_with("embedding") || path == "positions";
    optim::chain((
        optim::clip_by_global_norm(c.clip_norm as f64),
        optim::adamw(
            schedule,
            0.9,
            0.99,
            1e-8,
            c.weight_decay as f64,
            Mask::paths(decayed),
        ),
    ))
}

/// One training step on a batch of windows. The parameters and the optimizer's state are
/// donated, so XLA updates them in place; `key` draws the step's dropout masks.
#[jit(donate = (params, opt_state), static = config)]
pub fn train_step(
    params: Model,
    opt_state: OptState,
    inputs: &Array,
    targets: &Array,
    key: &Array,
    config: StepConfig,
) -> (Model, OptState, Array) {
    let dropout = (config.dropout > 0.0).then_some((key, config.dropout));
    let (value, grads) =
        value_and_grad(|p: Model| loss(&p, inputs, targets, config.compute, dropout))(
            params.clone(),
        );
    let (updates, opt_state) = optimizer(&config).update(grads, opt_state, Some(&params));
    (optim::apply_updates(&params, &updates), opt_state, value)
}

/// The mean loss over the held-out windows, without dropout.
#[jit(static = compute)]
fn held_out_loss(params: &Model, inputs: &Array, targets: &Array, compute: DType) -> Array {
    loss(params, inputs, targets, compute, None)
}

/// What a run measured.
pub struct Report {
    /// The step the run started from (0, or the checkpoint's with `--resume`).
    pub start_step: u64,
    /// The training loss of each step, `(step, loss)`, counted from 1 in this run.
    pub losses: Vec<(usize, f32)>,
    /// The held-out loss before training and after each evaluation interval, `(step, loss)`
    /// with steps counted as in the checkpoint.
    pub held_out: Vec<(u64, f32)>,
    /// Wall time of the warm-up (the first step, with the tracing and compiling of the step
    /// and of the held-out loss).
    pub compile_time: Duration,
    /// Training tokens per second after the warm-up.
    pub tokens_per_sec: f64,
    /// Wall time of the whole run, reading the text included (not by [`run_on`]).
    pub wall_time: Duration,
    /// The trained parameters.
    pub params: Model,
}

impl Report {
    /// The last held-out loss.
    pub fn final_held_out_loss(&self) -> f32 {
        self.held_out.last().map_or(f32::NAN, |&(_, l)| l)
    }

    /// The mean training loss over the last `n` steps.
    pub fn final_train_loss(&self, n: usize) -> f32 {
        let tail = &self.losses[self.losses.len().saturating_sub(n)..];
        tail.iter().map(|&(_, l)| l).sum::<f32>() / tail.len() as f32
    }
}

/// Reads the text (`--data`, or tiny Shakespeare in the data folder), trains on it as the
/// command line `args` and the model `config` say, saves the loss curve and the checkpoint to
/// `args.out`, and reports.
pub fn run(args: &Args, config: &Config) -> Report {
    let started = Instant::now();
    let corpus = read_corpus(args);
    let mut report = run_on(&corpus, args, config);
    report.wall_time = started.elapsed();
    report
}

/// The text of the run, said where it came from.
pub fn read_corpus(args: &Args) -> Corpus {
    let path = args.data_path(data::TINY_SHAKESPEARE);
    let corpus =
        data::read_text(&path).unwrap_or_else(|e| panic!("{NAME}: cannot read the text: {e}"));
    println!(
        "{}: {} characters, vocabulary {}, {} for training, {} held out",
        path.display(),
        corpus.tokens().len(),
        corpus.vocab.len(),
        corpus.train().len(),
        corpus.held_out().len()
    );
    corpus
}

/// [`run`] on a text already read (its `wall_time` leaves the reading out).
pub fn run_on(corpus: &Corpus, args: &Args, config: &Config) -> Report {
    let started = Instant::now();
    // The parameters are float32 masters in mixed precision (bf16, f16) and float64 in f64.
    let master = if args.dtype == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let total = args.total_steps(config.steps_per_epoch);
    let step_config = StepConfig {
        compute: args.dtype,
        dropout: config.dropout,
        peak_lr: config.peak_lr,
        warmup_steps: config.warmup_steps as i32,
        // The schedule spans this run's steps; a resumed run past it stays at its end value.
        decay_steps: total.max(config.warmup_steps + 1) as i32,
        weight_decay: config.weight_decay,
        clip_norm: config.clip_norm,
    };

    let [init_key, data_key, dropout_key, eval_key] = random::split_n::<4>(&random::key(0));
    let params = Model::init(&init_key, config, corpus.vocab.len(), master);
    let n_params: usize = params.flatten().0.iter().map(|p| p.size()).sum();
    println!(
        "model: {} blocks, d_model {}, {} heads, context {}, {n_params} parameters; batch {} x {} \
         tokens, {:?} compute",
        config.layers,
        config.d_model,
        config.heads,
        config.context,
        config.batch,
        config.context,
        args.dtype
    );
    let fresh = TrainState {
        opt_state: optimizer(&step_config).init(&params),
        params,
        step: 0,
    };
    let state = load_checkpoint(args, fresh);
    let start_step = state.step;
    let (mut params, mut opt_state) = (state.params, state.opt_state);
    let mut checkpoints = open_checkpoints(args);

    let (eval_inputs, eval_targets) = data::random_windows(
        corpus.held_out(),
        &eval_key,
        config.eval_windows,
        config.context,
    );
    // Step `s`'s windows and dropout masks come from `fold_in(key, s)`, so a resumed run
    // draws new ones; they are built one step ahead on a background thread.
    let tokens: Vec<i32> = corpus.train().to_vec();
    let (batch, context) = (config.batch, config.context);
    let batches = data::prefetch(
        (start_step..).map(move |step| {
            let (inputs, targets) = data::random_windows(
                &tokens,
                &random::fold_in(&data_key, step as u32),
                batch,
                context,
            );
            (inputs, targets, random::fold_in(&dropout_key, step as u32))
        }),
        1,
    );

    let tokens_per_step = config.batch * config.context;
    let mut progress = Progress::new(total, tokens_per_step);
    let mut held_out = Vec::new();
    let mut evaluate = |params: &Model, step: u64, progress: &Progress| {
        let l = held_out_loss(params, &eval_inputs, &eval_targets, args.dtype).item::<f32>();
        progress.println(format!("step {step}: held-out loss {l:.4}"));
        held_out.push((step, l));
    };
    // Before training, inside the warm-up's timing: its compile is part of the warm-up.
    evaluate(&params, start_step, &progress);
    for (inputs, targets, key) in batches.take(total) {
        let (next, next_state, loss) =
            train_step(params, opt_state, &inputs, &targets, &key, step_config);
        (params, opt_state) = (next, next_state);
        progress.step(&loss);
        let steps = progress.steps();
        if steps.is_multiple_of(config.steps_per_epoch) || steps == total {
            evaluate(&params, start_step + steps as u64, &progress);
            // Written in the background while the next steps train.
            save_checkpoint(
                &mut checkpoints,
                start_step + steps as u64,
                &params,
                &opt_state,
            );
        }
    }
    let summary = progress.finish();
    println!(
        "{:.0} tokens/s after warm-up; train_step compiled {} time(s)",
        summary.samples_per_sec,
        train_step::jit_site().cache_misses()
    );
    let state = write_outputs_to(
        &mut checkpoints,
        args,
        &summary,
        params,
        opt_state,
        start_step,
    );
    let report = Report {
        start_step,
        losses: summary.losses,
        held_out,
        compile_time: summary.compile_time,
        tokens_per_sec: summary.samples_per_sec,
        wall_time: started.elapsed(),
        params: state.params,
    };
    println!(
        "held-out loss {:.4} nats/char (unigram level ~3.3); wall time {:.1?}",
        report.final_held_out_loss(),
        report.wall_time
    );
    report
}

// ---------------------------------------------------------------------------------------------
// Sharded training (`--mesh dp=2,mp=4`).

/// The mesh a sharded run trains on: `dp` devices along the data-parallel and FSDP axis
/// `"dp"`, `mp` along the tensor-parallel axis `"mp"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshShape {
    pub dp: usize,
    pub mp: usize,
}

impl MeshShape {
    /// Parses `dp=2,mp=4` (either order; an axis left out is 1).
    pub fn parse(text: &str) -> Result<MeshShape, String> {
        let mut shape = MeshShape { dp: 1, mp: 1 };
        for part in text.split(',') {
            let (name, size) = part
                .split_once('=')
                .ok_or_else(|| format!("--mesh: {part:?} is not AXIS=SIZE (e.g. dp=2,mp=4)"))?;
            let size: usize = size
                .trim()
                .parse()
                .ok()
                .filter(|&s| s > 0)
                .ok_or_else(|| format!("--mesh: {size:?} is not a positive size"))?;
            match name.trim() {
                "dp" => shape.dp = size,
                "mp" => shape.mp = size,
                other => return Err(format!("--mesh: unknown axis {other:?} (the axes: dp, mp)")),
            }
        }
        Ok(shape)
    }

    /// The devices the mesh needs.
    pub fn devices(&self) -> usize {
        self.dp * self.mp
    }

    /// The `("dp", "mp")` mesh over the first [`MeshShape::devices`] devices, in
    /// `jax.make_mesh`'s order.
    pub fn mesh(&self) -> Mesh {
        jaxrs::make_mesh(&[self.dp, self.mp], &["dp", "mp"])
            .unwrap_or_else(|e| panic!("{NAME}: the {self:?} mesh: {e}"))
    }
}

/// How a parameter (or one of Adam's moments, which lie as their parameter) is split over the
/// mesh, from the last two parts of its tree path. FSDP: every kernel, the embedding table
/// and the position table are split over `"dp"` along `d_model`. Tensor parallelism: the
/// attention's heads and the MLP's hidden units over `"mp"`. The norms' and the output
/// biases' few values, and the optimizer's step counts, are replicated.
pub fn param_spec(path: &str) -> PartitionSpec {
    let mut parts = path.rsplit('.');
    let name = parts.next().unwrap_or("");
    let parent = parts.next().unwrap_or("");
    match (parent, name) {
        (_, "embedding" | "positions") => P![None, "dp"],
        (_, "query_kernel" | "key_kernel" | "value_kernel") => P!["dp", "mp", None],
        (_, "query_bias" | "key_bias" | "value_bias") => P!["mp", None],
        (_, "out_kernel") => P!["mp", None, "dp"],
        ("mlp_in", "kernel") => P!["dp", "mp"],
        ("mlp_in", "bias") => P!["mp"],
        ("mlp_out", "kernel") => P!["mp", "dp"],
        _ => P![],
    }
}

/// The shardings of every leaf of `tree` (the parameters, or the optimizer's state holding
/// their moments) by [`param_spec`] of its path, as `jit`'s `in_shardings` takes them: one
/// entry per child, down to the leaves.
pub fn param_shardings<T: Tree>(tree: &T) -> Shardings {
    fn walk(def: &TreeDef, path: &str) -> Shardings {
        let join = |name: &str| {
            if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}.{name}")
            }
        };
        match def {
            TreeDef::Leaf | TreeDef::Scalar(_) => Shardings::Spec(param_spec(path)),
            TreeDef::None | TreeDef::Static(_) => Shardings::Unspecified,
            TreeDef::Some(t) => Shardings::PerChild(vec![walk(t, path)]),
            TreeDef::Tuple(c) | TreeDef::List(c) | TreeDef::FixedArray(c) => Shardings::PerChild(
                c.iter()
                    .enumerate()
                    .map(|(i, d)| walk(d, &join(&i.to_string())))
                    .collect(),
            ),
            TreeDef::Map(c) => {
                Shardings::PerChild(c.iter().map(|(k, d)| walk(d, &join(k))).collect())
            }
            TreeDef::Struct { fields, .. } => {
                Shardings::PerChild(fields.iter().map(|(k, d)| walk(d, &join(k))).collect())
            }
        }
    }
    walk(&tree.structure(), "")
}

/// `tree` laid out on `mesh` as [`param_spec`] says, leaf by leaf (each device gets its
/// pieces; nothing is gathered).
pub fn shard_params<T: Tree>(tree: &T, mesh: &Mesh) -> T {
    let (leaves, def) = tree.flatten();
    let placed = leaves
        .iter()
        .zip(jaxrs::tree_paths(tree))
        .map(|(leaf, path)| {
            let spec = if leaf.rank() == 0 {
                P![]
            } else {
                param_spec(&path)
            };
            let sharding = NamedSharding::new(mesh.clone(), spec)
                .unwrap_or_else(|e| panic!("{NAME}: {path} {:?}: {e}", leaf.shape()));
            jaxrs::device_put(leaf, sharding)
        })
        .collect();
    jaxrs::tree_unflatten(&def, placed)
}

/// `x[..., f] @ kernel[f, ...] + bias`.
fn dense(x: &Array, kernel: &Array, bias: &Array) -> Array {
    x.dot_general(
        kernel,
        &DotDims {
            lhs_contract: vec![x.rank() - 1],
            rhs_contract: vec![0],
            ..DotDims::default()
        },
    ) + bias
}

/// The MLP written per device with `shard_map`, a collective matmul: each device holds its
/// FSDP pieces of the two kernels (split over `"dp"` along `d_model`, over `"mp"` along the
/// hidden units) and its batch rows; it all-gathers the kernels over `"dp"`, computes its
/// slice of the hidden units, and the partial products of the output projection are summed
/// over `"mp"`. The gradient runs the same way back: the all-gathers become reduce-scatters
/// of the kernels' gradients over `"dp"`, and the input's cotangent is summed over `"mp"`.
fn mlp_sharded(mlp_in: &Linear, mlp_out: &Linear, x: &Array, mesh: &Mesh) -> Array {
    let bias = |l: &Linear| l.bias.clone().expect("the MLP's layers have biases");
    shard_map(
        |(x, w_in, b_in, w_out, b_out): (Array, Array, Array, Array, Array)| {
            let w_in = all_gather(&w_in, "dp", 0, true);
            let w_out = all_gather(&w_out, "dp", 1, true);
            let hidden = dense(&x, &w_in, &b_in).gelu();
            let partial = hidden.dot_general(
                &w_out,
                &DotDims {
                    lhs_contract: vec![hidden.rank() - 1],
                    rhs_contract: vec![0],
                    ..DotDims::default()
                },
            );
            psum(&partial, "mp") + b_out
        },
    )
    .mesh(mesh)
    .in_specs((
        P!["dp", None, None],
        P!["dp", "mp"],
        P!["mp"],
        P!["mp", "dp"],
        P![],
    ))
    .out_specs(P!["dp", None, None])
    .call((
        x.clone(),
        mlp_in.kernel.clone(),
        bias(mlp_in),
        mlp_out.kernel.clone(),
        bias(mlp_out),
    ))
}

/// [`logits`] as the sharded step computes it (float32, no dropout): the residual stream is
/// constrained to its batch rows over `"dp"`, the queries, keys, values and attention outputs
/// to their heads over `"mp"` as well, and the MLP is [`mlp_sharded`].
fn sharded_logits(model: &Model, inputs: &Array, mesh: &Mesh) -> Array {
    let on = |spec: PartitionSpec| NamedSharding::new(mesh.clone(), spec).expect("a valid spec");
    let stream = |x: &Array| jaxrs::with_sharding_constraint(x, on(P!["dp", None, None]));
    let heads = |x: &Array| jaxrs::with_sharding_constraint(x, on(P!["dp", None, "mp", None]));
    let length = inputs.shape()[1];
    let d = model.positions.shape()[1];
    let positions = model.positions.slice(&[0, 0], &[length, d], &[1, 1]);
    let mut x = stream(&(model.tokens.apply(inputs) + positions));
    let mask = nn::make_causal_mask(&Array::zeros(&[1, length], DType::I32));
    for p in &model.blocks {
        let a = &p.attention;
        let normed = p.ln_attention.apply(&x);
        let q = heads(&dense(&normed, &a.query_kernel, &a.query_bias));
        let k = heads(&dense(&normed, &a.key_kernel, &a.key_bias));
        let v = heads(&dense(&normed, &a.value_kernel, &a.value_bias));
        let attended = heads(&nn::dot_product_attention(&q, &k, &v, Some(&mask)));
        let out = attended.dot_general(
            &a.out_kernel,
            &DotDims {
                lhs_contract: vec![2, 3],
                rhs_contract: vec![0, 1],
                ..DotDims::default()
            },
        ) + &a.out_bias;
        x = stream(&(&x + out));
        let out = mlp_sharded(&p.mlp_in, &p.mlp_out, &p.ln_mlp.apply(&x), mesh);
        x = stream(&(&x + out));
    }
    model.tokens.attend(&model.ln_final.apply(&x))
}

/// The sharded step's loss: the mean next-token cross-entropy of [`sharded_logits`].
fn sharded_loss(model: &Model, inputs: &Array, targets: &Array, mesh: &Mesh) -> Array {
    nn::softmax_cross_entropy_with_integer_labels(&sharded_logits(model, inputs, mesh), targets)
        .mean(None, false)
}

/// The arguments of a sharded step: the parameters, the optimizer's state, the inputs and the
/// targets.
pub type ShardedArgs = (Model, OptState, Array, Array);

/// The training step of [`train_step`] (float32, no dropout) as one SPMD program over `mesh`:
/// the parameters and both of Adam's moments lie as [`param_shardings`] says (FSDP over
/// `"dp"`, tensor parallelism over `"mp"`), the batch's rows over `"dp"`; the activations are
/// constrained with `with_sharding_constraint` and the MLP is a `shard_map`
/// ([`mlp_sharded`]). XLA inserts the other collectives: the all-gathers of the FSDP pieces
/// the attention and the embeddings use, the reductions of their gradients, and the
/// tensor-parallel all-reduces. Its arguments are donated (the parameters and the state are
/// updated in place); `template` gives the trees' structure.
pub fn sharded_train_step(
    mesh: &Mesh,
    template: (&Model, &OptState),
    config: StepConfig,
) -> Jitted<impl Fn(ShardedArgs) -> (Model, OptState, Array)> {
    assert!(
        config.compute == DType::F32 && config.dropout == 0.0,
        "{NAME}: the sharded step trains in float32 without dropout, not {config:?}"
    );
    let (params, state) = (param_shardings(template.0), param_shardings(template.1));
    let batch = P!["dp", None];
    let m = mesh.clone();
    jit(move |(params, opt_state, inputs, targets): ShardedArgs| {
        let (value, grads) =
            value_and_grad(|p: Model| sharded_loss(&p, &inputs, &targets, &m))(params.clone());
        let (updates, opt_state) = optimizer(&config).update(grads, opt_state, Some(&params));
        (optim::apply_updates(&params, &updates), opt_state, value)
    })
    .donate_argument()
    .in_shardings((params.clone(), state.clone(), batch.clone(), batch))
    .out_shardings((params, state, P![]))
    .mesh(mesh)
}

/// What a sharded run measured, beside the same steps on one device.
pub struct ShardedReport {
    /// The sharded step's loss at each step.
    pub sharded: Vec<f32>,
    /// The single-device step's ([`train_step`]'s) loss at each step, from the same initial
    /// parameters and batches.
    pub single: Vec<f32>,
    /// The largest `|sharded - single|` over the steps.
    pub max_difference: f32,
    /// Tokens per second of each after its first step (sharded, single).
    pub tokens_per_sec: (f64, f64),
    /// The trained parameters of the sharded run, laid out on the mesh.
    pub params: Model,
}

/// Trains on `corpus` with the sharded step on `shape`'s mesh and, from the same initial
/// parameters and on the same batches, with [`train_step`] on one device; prints both loss
/// curves and their largest difference, and reports. Needs `shape.devices()` devices
/// (`jaxrs::set_cpu_device_count` before the first array operation). Float32, no dropout; no
/// checkpoint is read or written.
pub fn run_sharded(
    corpus: &Corpus,
    args: &Args,
    config: &Config,
    shape: MeshShape,
) -> ShardedReport {
    assert!(
        args.dtype == DType::F32 && config.dropout == 0.0 && !args.resume,
        "{NAME}: --mesh trains from scratch in float32 without dropout"
    );
    let mesh = shape.mesh();
    let total = args.total_steps(config.steps_per_epoch);
    let step_config = StepConfig {
        compute: DType::F32,
        dropout: 0.0,
        peak_lr: config.peak_lr,
        warmup_steps: config.warmup_steps as i32,
        decay_steps: total.max(config.warmup_steps + 1) as i32,
        weight_decay: config.weight_decay,
        clip_norm: config.clip_norm,
    };
    // The same parameters and batches as an unsharded run of `run_on`.
    let [init_key, data_key, dropout_key, _] = random::split_n::<4>(&random::key(0));
    let params = Model::init(&init_key, config, corpus.vocab.len(), DType::F32);
    let opt_state = optimizer(&step_config).init(&params);
    let step = sharded_train_step(&mesh, (&params, &opt_state), step_config);
    let (mut sharded, mut sharded_state) = (
        shard_params(&params, &mesh),
        shard_params(&opt_state, &mesh),
    );
    let (mut single, mut single_state) = (params, opt_state);
    let n_params: usize = single.flatten().0.iter().map(|p| p.size()).sum();
    println!(
        "model: {} blocks, d_model {}, {} heads, context {}, {n_params} parameters; batch {} x {} \
         tokens; mesh dp={} x mp={} ({} devices)",
        config.layers,
        config.d_model,
        config.heads,
        config.context,
        config.batch,
        config.context,
        shape.dp,
        shape.mp,
        shape.devices()
    );
    let (leaves, paths) = (jaxrs::tree_leaves(&sharded), jaxrs::tree_paths(&sharded));
    for (leaf, path) in leaves.iter().zip(&paths).take(6) {
        println!(
            "  {path}: {:?} as {}, {:?} per device",
            leaf.shape(),
            param_spec(path),
            leaf.addressable_shards()[0].data.shape()
        );
    }
    let rows = NamedSharding::new(mesh.clone(), P!["dp", None]).expect("the batch's sharding");
    let every = (total / 20).max(1);
    let (mut losses, mut times) = ((Vec::new(), Vec::new()), (Duration::ZERO, Duration::ZERO));
    for s in 0..total {
        let (inputs, targets) = data::random_windows(
            corpus.train(),
            &random::fold_in(&data_key, s as u32),
            config.batch,
            config.context,
        );
        let started = Instant::now();
        let args = (
            sharded,
            sharded_state,
            jaxrs::device_put(&inputs, rows.clone()),
            jaxrs::device_put(&targets, rows.clone()),
        );
        let (next, next_state, loss) = step.call(args);
        (sharded, sharded_state) = (next, next_state);
        let sharded_loss = loss.item::<f32>();
        let sharded_time = started.elapsed();
        let started = Instant::now();
        let key = random::fold_in(&dropout_key, s as u32);
        let (next, next_state, loss) =
            train_step(single, single_state, &inputs, &targets, &key, step_config);
        (single, single_state) = (next, next_state);
        let single_loss = loss.item::<f32>();
        if s > 0 {
            times.0 += sharded_time;
            times.1 += started.elapsed();
        }
        losses.0.push(sharded_loss);
        losses.1.push(single_loss);
        if s % every == 0 || s + 1 == total {
            println!(
                "step {:4}: loss sharded {sharded_loss:.6}, one device {single_loss:.6}, \
                 difference {:.1e}",
                s + 1,
                (sharded_loss - single_loss).abs()
            );
        }
    }
    let max_difference = losses
        .0
        .iter()
        .zip(&losses.1)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    let tokens = ((total.max(2) - 1) * config.batch * config.context) as f64;
    let tokens_per_sec = (
        tokens / times.0.as_secs_f64().max(1e-9),
        tokens / times.1.as_secs_f64().max(1e-9),
    );
    println!(
        "sharded step: compiled {} time(s), {:.0} tokens/s after its first step; one device: \
         {:.0} tokens/s",
        step.site().cache_misses(),
        tokens_per_sec.0,
        tokens_per_sec.1
    );
    // Float32 sums taken in another order (per device, then across devices) round otherwise,
    // and Adam's normalised updates carry those roundings into the parameters: the curves
    // agree to a few float32 roundings of the loss (3.3e-6 over 200 steps of the default
    // config), not bit for bit.
    let scale = losses.1.iter().fold(1f32, |m, l| m.max(l.abs()));
    if max_difference <= 1e-5 * scale {
        println!(
            "the sharded losses equal the single-device run's to {max_difference:.1e} (largest \
             difference over {total} steps)"
        );
    } else {
        println!(
            "the sharded losses differ from the single-device run's by up to \
             {max_difference:.1e} over {total} steps"
        );
    }
    ShardedReport {
        sharded: losses.0,
        single: losses.1,
        max_difference,
        tokens_per_sec,
        params: sharded,
    }
}

fn main() {
    // `--mesh dp=2,mp=4` is this trainer's own flag; the harness parses the rest.
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    let mut mesh = None;
    if let Some(i) = argv
        .iter()
        .position(|a| a == "--mesh" || a.starts_with("--mesh="))
    {
        let flag = argv.remove(i);
        let value = match flag.split_once('=') {
            Some((_, v)) => v.to_string(),
            None if i < argv.len() => argv.remove(i),
            None => exit_with("--mesh needs a value, e.g. --mesh dp=2,mp=4"),
        };
        mesh = Some(MeshShape::parse(&value).unwrap_or_else(|e| exit_with(&e)));
    }
    let args = match Args::parse_from(NAME, EPOCHS, argv) {
        Ok(args) => args,
        Err(e) if e.is_empty() => {
            println!("{} [--mesh dp=N,mp=M]", Args::usage(NAME, EPOCHS));
            return;
        }
        Err(e) => exit_with(&e),
    };
    let _profile = args.start_profile();
    match mesh {
        None => {
            run(&args, &Config::default());
        }
        Some(shape) => {
            jaxrs::set_cpu_device_count(shape.devices())
                .unwrap_or_else(|e| exit_with(&format!("{} CPU devices: {e}", shape.devices())));
            let corpus = read_corpus(&args);
            run_sharded(&corpus, &args, &Config::default(), shape);
        }
    }
}

fn exit_with(message: &str) -> ! {
    eprintln!(
        "{NAME}: {message}\n{} [--mesh dp=N,mp=M]",
        Args::usage(NAME, EPOCHS)
    );
    std::process::exit(2)
}
