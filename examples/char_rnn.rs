//! Trains a character-level GRU language model on tiny Shakespeare
//! (`../shared/data/tinyshakespeare.txt`, its last 10% held out): an embedding, a
//! `nn::GruCell` run over the window with `#[scan]`, a dense layer to the vocabulary's logits,
//! the softmax cross-entropy averaged over positions. One jitted training step (the loss and
//! its gradient, then Adam after clipping the global norm, as a JAX user writes it with optax)
//! with the parameters and the optimizer state donated; each step's windows are drawn by
//! `jaxrs::data::random_windows` from `fold_in(data_key, step)` one step ahead on a background
//! thread. At the end: the held-out loss in nats per character over fixed windows (jitted), and
//! a sample drawn one character at a time by a jitted step of the cell.
//!
//! Run: `cargo run --release --example char_rnn [-- --epochs N --steps N --resume --out DIR
//! --dtype f32|bf16 PATH_TO_tinyshakespeare.txt]` (or set `JAXRS_DATA_DIR` to the folder
//! holding the data sets). An epoch is as many steps as it takes to draw as many characters as
//! the training text has. The loss curve goes to `OUT/loss.png` and the final state to
//! `OUT/checkpoints/<step>` (a `jaxrs::checkpoint::CheckpointManager`; `--resume` continues from
//! the latest step, with the next steps' windows); OUT defaults to `target/train/char_rnn`.

#[path = "common/harness.rs"]
mod harness;

pub use harness::Args;
use harness::{load_checkpoint, write_outputs, Progress, TrainState};
use jaxrs::data::{self, Corpus};
use jaxrs::nn::{self, Embedding, GruCell, Linear};
use jaxrs::optim::{self, GradientTransformation};
use jaxrs::prelude::*;
use jaxrs::random;
use std::time::{Duration, Instant};

/// Passes over the training text's worth of characters in the default run.
pub const EPOCHS: usize = 3;

/// The model's sizes and the schedule's knobs (the command line sets the rest: [`Args`]).
#[derive(Clone, Debug)]
pub struct Config {
    /// Width of the character embedding.
    pub embed: usize,
    /// The GRU's hidden size.
    pub hidden: usize,
    /// Characters per training window (the scan's length).
    pub seq_len: usize,
    /// Windows per step.
    pub batch: usize,
    /// Adam's learning rate.
    pub learning_rate: f32,
    /// The global gradient norm is clipped to this.
    pub clip_norm: f32,
    /// Held-out windows evaluated per call of the jitted evaluation.
    pub eval_batch: usize,
    /// The generation starts from this text.
    pub prompt: String,
    /// Characters generated after the prompt.
    pub sample_len: usize,
    /// Logits are divided by this before sampling.
    pub temperature: f32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            embed: 64,
            hidden: 256,
            seq_len: 64,
            batch: 32,
            learning_rate: 3e-3,
            clip_norm: 1.0,
            eval_batch: 256,
            prompt: "ROMEO:\n".into(),
            sample_len: 200,
            temperature: 0.8,
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct Report {
    /// The step the run started from (0, or the checkpoint's with `--resume`).
    pub start_step: u64,
    /// The step it saved at.
    pub end_step: u64,
    /// The vocabulary's size (the loss of a uniform guess is its log).
    pub vocab_size: usize,
    /// The training loss of the run's first step, nats per character.
    pub first_loss: f32,
    /// The training loss of its last step.
    pub last_loss: f32,
    /// The mean loss over the fixed held-out windows, nats per character.
    pub held_out_loss: f32,
    /// `config.sample_len` characters generated after the prompt.
    pub sample: String,
    /// Wall time of the first step (tracing and compiling the training step).
    pub compile_time: Duration,
    /// Training characters per second after it.
    pub chars_per_sec: f64,
}

/// The model: characters to vectors, a GRU over them, its states to the next character's
/// logits.
#[derive(Tree, Clone)]
pub struct CharRnn {
    embed: Embedding,
    cell: GruCell,
    head: Linear,
}

impl CharRnn {
    fn init(key: &Array, vocab: usize, config: &Config, dtype: DType) -> CharRnn {
        let [k1, k2, k3] = random::split_n::<3>(key);
        CharRnn {
            embed: Embedding::init(&k1, vocab, config.embed, dtype),
            cell: GruCell::init(&k2, config.embed, config.hidden, dtype),
            head: Linear::init(&k3, config.hidden, vocab, dtype),
        }
    }
}

/// The GRU over the leading (time) axis of `xs`, from state `h`: the final state and every
/// step's.
#[scan]
fn gru_over_time(h: Array, x: &Array, cell: &GruCell) -> (Array, Array) {
    cell.apply(h, x)
}

/// The mean cross-entropy of the next character over every position of the windows
/// (`inputs` and `targets` i32[batch, time]), from a zero state at each window's start.
fn mean_loss(params: &CharRnn, inputs: &Array, targets: &Array) -> Array {
    // The scan runs over the leading axis: time first.
    let xs = params.embed.apply(&inputs.transpose([1, 0]));
    let h0 = params.cell.init_carry(&[inputs.shape()[0]]);
    let (_, hs) = gru_over_time(h0, &xs, &params.cell);
    let logits = params.head.apply(&hs).astype(DType::F32);
    nn::softmax_cross_entropy_with_integer_labels(&logits, &targets.transpose([1, 0]))
        .mean(None, false)
}

type Opt = optim::Chain<(optim::ClipByGlobalNorm, optim::Adam)>;
type OptState = optim::State<Opt, CharRnn>;

fn optimizer(learning_rate: f32, clip_norm: f32) -> Opt {
    optim::chain((
        optim::clip_by_global_norm(clip_norm as f64),
        optim::adam(learning_rate, 0.9, 0.999, 1e-8),
    ))
}

/// One step: the loss and its gradient, then the clipped Adam update. The parameters and the
/// optimizer's state are donated, so XLA updates them in place.
#[jit(donate = (params, opt_state), static = (learning_rate, clip_norm))]
fn train_step(
    params: CharRnn,
    opt_state: OptState,
    inputs: &Array,
    targets: &Array,
    learning_rate: f32,
    clip_norm: f32,
) -> (CharRnn, OptState, Array) {
    let (value, grads) =
        value_and_grad(|p: CharRnn| mean_loss(&p, inputs, targets))(params.clone());
    let (updates, opt_state) =
        optimizer(learning_rate, clip_norm).update(grads, opt_state, Some(&params));
    (optim::apply_updates(&params, &updates), opt_state, value)
}

#[jit]
fn eval_loss(params: &CharRnn, inputs: &Array, targets: &Array) -> Array {
    mean_loss(params, inputs, targets)
}

/// One character of generation: the state after `token` (i32[1]), and the next character drawn
/// from `softmax(logits / temperature)` with the first half of `key`; the second half is the
/// next call's key.
#[jit(static = temperature)]
fn sample_step(
    params: &CharRnn,
    h: &Array,
    token: &Array,
    key: &Array,
    temperature: f32,
) -> (Array, Array, Array) {
    let x = params.embed.apply(token);
    let (h, _) = params.cell.apply(h.clone(), &x);
    let logits = params.head.apply(&h).astype(DType::F32) / temperature;
    let [draw, next_key] = random::split_n::<2>(key);
    let next = random::categorical(&draw, &logits, -1);
    (h, next, next_key)
}

/// The held-out tail cut into consecutive windows of `seq_len` characters (and their targets),
/// batched by `eval_batch` (the remainder dropped so every batch has one shape, unless there
/// are fewer windows than that: then one batch of all of them).
fn held_out_batches(tokens: &[i32], seq_len: usize, eval_batch: usize) -> Vec<(Array, Array)> {
    let windows = (tokens.len() - 1) / seq_len;
    assert!(windows > 0, "the held-out text is shorter than one window");
    let per_batch = eval_batch.min(windows);
    (0..windows / per_batch)
        .map(|b| {
            let (mut inputs, mut targets) = (Vec::new(), Vec::new());
            for w in b * per_batch..(b + 1) * per_batch {
                let start = w * seq_len;
                inputs.extend_from_slice(&tokens[start..start + seq_len]);
                targets.extend_from_slice(&tokens[start + 1..start + seq_len + 1]);
            }
            let shape = [per_batch, seq_len];
            (
                Array::from_vec(inputs, &shape),
                Array::from_vec(targets, &shape),
            )
        })
        .collect()
}

/// `config.sample_len` characters after `config.prompt`, drawn with `key`; the tokens stay on
/// the device until the end.
fn generate(params: &CharRnn, corpus: &Corpus, config: &Config, key: &Array) -> String {
    let prompt = corpus.vocab.encode(&config.prompt);
    assert!(!prompt.is_empty(), "the prompt needs a character");
    let mut h = params.cell.init_carry(&[1]);
    let mut key = key.clone();
    let mut next = Array::from_vec(vec![prompt[0]], &[1]);
    let mut drawn = Vec::with_capacity(config.sample_len);
    // The prompt's characters are fed as they are; the draw after its last is the first
    // character of the sample.
    for i in 0..prompt.len() - 1 + config.sample_len {
        let token = if i < prompt.len() {
            Array::from_vec(vec![prompt[i]], &[1])
        } else {
            next.clone()
        };
        (h, next, key) = sample_step(params, &h, &token, &key, config.temperature);
        if i + 1 >= prompt.len() {
            drawn.push(next.clone());
        }
    }
    let tokens: Vec<i32> = drawn.iter().map(|t| t.item::<i32>()).collect();
    corpus.vocab.decode(&tokens)
}

/// Trains (or resumes) per `args` and `config`, evaluates, samples, saves the checkpoint and
/// the loss curve, and reports.
pub fn run(args: &Args, config: &Config) -> Report {
    let path = args.data_path(data::TINY_SHAKESPEARE);
    let corpus = data::read_text(&path).unwrap_or_else(|e| panic!("cannot read the text: {e}"));
    println!(
        "{}: {} characters ({} train, {} held out), a vocabulary of {}",
        path.display(),
        corpus.tokens().len(),
        corpus.train().len(),
        corpus.held_out().len(),
        corpus.vocab.len()
    );
    let vocab = corpus.vocab.len();

    let [init_key, data_key, sample_key] = random::split_n::<3>(&random::key(0));
    let params = CharRnn::init(&init_key, vocab, config, args.dtype);
    let opt = optimizer(config.learning_rate, config.clip_norm);
    let fresh = TrainState {
        opt_state: opt.init(&params),
        params,
        step: 0,
    };
    let state = load_checkpoint(args, fresh);
    let start_step = state.step;
    let (mut params, mut opt_state) = (state.params, state.opt_state);

    let chars_per_step = config.batch * config.seq_len;
    let total = args.total_steps(corpus.train().len().div_ceil(chars_per_step));
    // Step `s`'s windows come from `fold_in(data_key, s)`, counted across runs, so a resumed
    // run draws new ones. They are cut and uploaded one step ahead.
    let windows = {
        let (corpus, config) = (corpus.clone(), config.clone());
        (start_step..start_step + total as u64).map(move |step| {
            let key = random::fold_in(&data_key, step as u32);
            data::random_windows(corpus.train(), &key, config.batch, config.seq_len)
        })
    };
    let mut progress = Progress::new(total, chars_per_step);
    for (inputs, targets) in data::prefetch(windows, 1) {
        let (next, next_state, loss) = train_step(
            params,
            opt_state,
            &inputs,
            &targets,
            config.learning_rate,
            config.clip_norm,
        );
        (params, opt_state) = (next, next_state);
        progress.step(&loss);
    }
    let summary = progress.finish();

    let evaluated = Instant::now();
    let batches = held_out_batches(corpus.held_out(), config.seq_len, config.eval_batch);
    let losses: Vec<Array> = batches
        .iter()
        .map(|(inputs, targets)| eval_loss(&params, inputs, targets))
        .collect();
    let held_out_loss = losses.iter().map(|l| l.item::<f32>()).sum::<f32>() / losses.len() as f32;
    println!(
        "held-out loss {held_out_loss:.4} nats/char ({:.3} bits/char) over {} windows of {} \
         characters, in {:.2?}; train_step compiled {} time(s)",
        held_out_loss / std::f32::consts::LN_2,
        batches.len() * batches[0].0.shape()[0],
        config.seq_len,
        evaluated.elapsed(),
        train_step::jit_site().cache_misses()
    );

    let sampled = Instant::now();
    let sample = generate(&params, &corpus, config, &sample_key);
    println!(
        "sample (temperature {}, {:.2?}):\n{}{}\n",
        config.temperature,
        sampled.elapsed(),
        config.prompt,
        sample
    );

    let end_step = write_outputs(args, &summary, params, opt_state, start_step).step;
    let loss_at = |i: Option<&(usize, f32)>| i.map_or(f32::NAN, |&(_, l)| l);
    Report {
        start_step,
        end_step,
        vocab_size: vocab,
        first_loss: loss_at(summary.losses.first()),
        last_loss: loss_at(summary.losses.last()),
        held_out_loss,
        sample,
        compile_time: summary.compile_time,
        chars_per_sec: summary.samples_per_sec,
    }
}

fn main() {
    let args = Args::parse("char_rnn", EPOCHS);
    let started = Instant::now();
    let profile = args.start_profile();
    let report = run(&args, &Config::default());
    drop(profile);
    println!(
        "steps {}..{}: loss {:.4} -> {:.4}, held-out {:.4} nats/char; compile {:.2?}, \
         {:.0} chars/s, {:.1?} in all",
        report.start_step,
        report.end_step,
        report.first_loss,
        report.last_loss,
        report.held_out_loss,
        report.compile_time,
        report.chars_per_sec,
        started.elapsed()
    );
}
