//! What the trainers share: a small argument parser ([`Args`]), a progress bar with the loss
//! and the throughput after warm-up ([`Progress`], which also keeps the loss curve and writes
//! it as a PNG), checkpoints of (params, opt_state) in a `jaxrs::checkpoint::CheckpointManager`
//! folder, one per step, restored with `--resume` from the latest ([`save_checkpoint`],
//! [`load_checkpoint`]), and the
//! [`Report`] a trainer's `run` returns to its `main` and its integration test.
//!
//! Only scalar metrics (the loss) are read back from the device, and only every
//! [`Progress::READ_EVERY`] steps, so the host does not wait on each step.
//!
//! Use: `#[path = "common/harness.rs"] mod harness;` in an example.
// Each example includes this file and uses part of it.
#![allow(dead_code)]

use indicatif::{ProgressBar, ProgressStyle};
use jaxrs::checkpoint::{CheckpointManager, CheckpointManagerOptions, SaveArgs};
use jaxrs::prelude::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The command line every trainer accepts.
#[derive(Clone, Debug)]
pub struct Args {
    /// `--epochs N`: passes over the training set.
    pub epochs: usize,
    /// `--steps N`: stop after N steps in all (for quick runs), whatever `epochs` says.
    pub steps: Option<usize>,
    /// `--resume`: start from the checkpoint in `out` instead of a fresh initialisation.
    pub resume: bool,
    /// `--out DIR`: where the checkpoint and the loss curve go; default `target/train/NAME`.
    pub out: PathBuf,
    /// `--dtype NAME` (`f32`, `bf16`, `f16`, `f64`, or a full name like `float32`): the
    /// parameters' dtype; default f32.
    pub dtype: DType,
    /// `--data PATH` (or a lone positional argument): the data file; default the trainer's
    /// file in `jaxrs::data::data_dir()`.
    pub data: Option<PathBuf>,
    /// `--profile DIR`: record a `jaxrs::profiler` trace of the run into DIR (a Perfetto /
    /// Chrome trace JSON file, and the per-function summary on standard error).
    pub profile: Option<PathBuf>,
}

impl Args {
    /// Parses the process's arguments for trainer `name`; prints the usage and exits on
    /// `--help` or a mistake.
    pub fn parse(name: &str, default_epochs: usize) -> Args {
        match Args::parse_from(name, default_epochs, std::env::args().skip(1)) {
            Ok(args) => args,
            Err(message) => {
                let usage = Args::usage(name, default_epochs);
                if message.is_empty() {
                    println!("{usage}");
                    std::process::exit(0);
                }
                eprintln!("{name}: {message}\n{usage}");
                std::process::exit(2);
            }
        }
    }

    /// Parses `args` (without the program name). `Err("")` means `--help` was asked for.
    pub fn parse_from(
        name: &str,
        default_epochs: usize,
        args: impl IntoIterator<Item = String>,
    ) -> Result<Args, String> {
        let mut parsed = Args {
            epochs: default_epochs,
            steps: None,
            resume: false,
            out: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target/train")).join(name),
            dtype: DType::F32,
            data: None,
            profile: None,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => {
                    (flag.to_string(), Some(value.to_string()))
                }
                _ => (arg.clone(), None),
            };
            let mut value = |flag: &str| {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            let count = |flag: &str, v: String| {
                v.parse::<usize>()
                    .map_err(|_| format!("{flag} takes a count, not {v:?}"))
            };
            match flag.as_str() {
                "-h" | "--help" => return Err(String::new()),
                "--epochs" => parsed.epochs = count("--epochs", value("--epochs")?)?,
                "--steps" => parsed.steps = Some(count("--steps", value("--steps")?)?),
                "--resume" => parsed.resume = true,
                "--out" => parsed.out = value("--out")?.into(),
                "--data" => parsed.data = Some(value("--data")?.into()),
                "--profile" => parsed.profile = Some(value("--profile")?.into()),
                "--dtype" => {
                    let v = value("--dtype")?;
                    parsed.dtype =
                        parse_dtype(&v).ok_or_else(|| format!("--dtype: unknown dtype {v:?}"))?;
                }
                _ if !arg.starts_with('-') && parsed.data.is_none() => {
                    parsed.data = Some(arg.into())
                }
                _ => return Err(format!("unknown argument {arg:?}")),
            }
        }
        Ok(parsed)
    }

    /// The usage line `--help` prints.
    pub fn usage(name: &str, default_epochs: usize) -> String {
        format!(
            "usage: cargo run --release --example {name} -- [--epochs N (default {default_epochs})] \
             [--steps N] [--resume] [--out DIR (default target/train/{name})] \
             [--dtype f32|bf16|f16|f64] [--profile DIR] [--data PATH | PATH]"
        )
    }

    /// Starts the `--profile` trace, if asked for: it is written when the guard drops.
    pub fn start_profile(&self) -> Option<jaxrs::profiler::TraceGuard> {
        let dir = self.profile.as_ref()?;
        match jaxrs::profiler::trace(dir) {
            Ok(guard) => Some(guard),
            Err(e) => {
                eprintln!("--profile {}: {e}", dir.display());
                std::process::exit(1);
            }
        }
    }

    /// The data file: `--data` if given, else `file_name` in `jaxrs::data::data_dir()`.
    pub fn data_path(&self, file_name: &str) -> PathBuf {
        self.data
            .clone()
            .unwrap_or_else(|| jaxrs::data::data_dir().join(file_name))
    }

    /// The number of steps to run given the steps per epoch: `--steps` if given, else
    /// `epochs * steps_per_epoch`.
    pub fn total_steps(&self, steps_per_epoch: usize) -> usize {
        self.steps.unwrap_or(self.epochs * steps_per_epoch)
    }
}

fn parse_dtype(name: &str) -> Option<DType> {
    match name {
        "f32" => Some(DType::F32),
        "f64" => Some(DType::F64),
        "f16" => Some(DType::F16),
        "bf16" => Some(DType::BF16),
        _ => DType::from_name(name),
    }
}

/// The training run's progress: a bar with the loss and samples/sec, the loss curve, and the
/// compile time (the warm-up steps, which include tracing and compiling, are timed apart and
/// left out of the throughput).
pub struct Progress {
    bar: ProgressBar,
    samples_per_step: usize,
    warmup: usize,
    steps: usize,
    started: Instant,
    warm: Option<(Instant, Duration)>,
    unread: Vec<(usize, Array)>,
    losses: Vec<(usize, f32)>,
}

/// What a finished run measured.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Steps run.
    pub steps: usize,
    /// Wall time of the warm-up steps (tracing, compiling, first runs).
    pub compile_time: Duration,
    /// Wall time of the steps after warm-up.
    pub run_time: Duration,
    /// Training examples per second after warm-up.
    pub samples_per_sec: f64,
    /// The loss of every step, `(step, loss)`, steps counted from 1.
    pub losses: Vec<(usize, f32)>,
}

impl Progress {
    /// Losses are read back from the device in bunches of this many steps.
    pub const READ_EVERY: usize = 10;

    /// A bar for `total_steps` steps of `samples_per_step` examples; the first step is the
    /// warm-up.
    pub fn new(total_steps: usize, samples_per_step: usize) -> Progress {
        let bar = ProgressBar::new(total_steps as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30.cyan/blue}] {pos}/{len} steps  {msg}",
            )
            .expect("progress template")
            .progress_chars("=> "),
        );
        Progress {
            bar,
            samples_per_step,
            warmup: 1,
            steps: 0,
            started: Instant::now(),
            warm: None,
            unread: Vec::new(),
            losses: Vec::new(),
        }
    }

    /// Times the first `steps` steps as warm-up instead of one (a trainer whose evaluation
    /// compiles in its first epoch, or with several step functions, needs more).
    pub fn with_warmup(mut self, steps: usize) -> Progress {
        self.warmup = steps.max(1);
        self
    }

    /// The steps recorded so far.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Records one step's loss (a scalar still on the device). It is read back with the
    /// others of its bunch, at the end of the warm-up, and at [`Progress::finish`].
    pub fn step(&mut self, loss: &Array) {
        self.steps += 1;
        self.unread.push((self.steps, loss.clone()));
        if self.steps == self.warmup {
            self.read_losses();
            // The warm-up's last loss is on the host: its step has finished.
            self.warm = Some((Instant::now(), self.started.elapsed()));
        } else if self.steps.is_multiple_of(Self::READ_EVERY) {
            self.read_losses();
        }
        self.bar.set_position(self.steps as u64);
    }

    /// Prints a line above the bar (an epoch's accuracy, say).
    pub fn println(&self, line: impl AsRef<str>) {
        // A hidden bar (output not a terminal) prints nothing, lines included.
        if self.bar.is_hidden() {
            println!("{}", line.as_ref());
        } else {
            self.bar.println(line.as_ref());
        }
    }

    fn read_losses(&mut self) {
        for (step, loss) in self.unread.drain(..) {
            self.losses.push((step, loss.item::<f32>()));
        }
        let Some(&(_, last)) = self.losses.last() else {
            return;
        };
        let mut message = format!("loss {last:.4}");
        if let Some((warm_start, _)) = self.warm {
            let rate = ((self.steps - self.warmup) * self.samples_per_step) as f64
                / warm_start.elapsed().as_secs_f64();
            message += &format!("  {rate:.0} samples/s");
        }
        self.bar.set_message(message);
    }

    /// Reads the last losses, closes the bar and prints the compile time and throughput.
    pub fn finish(mut self) -> Summary {
        self.read_losses();
        let now = Instant::now();
        let (run_time, compile_time) = match self.warm {
            Some((warm_start, compile)) => (now - warm_start, compile),
            None => (Duration::ZERO, self.started.elapsed()),
        };
        let timed = self.steps.saturating_sub(self.warmup);
        let samples_per_sec = if timed == 0 {
            0.0
        } else {
            (timed * self.samples_per_step) as f64 / run_time.as_secs_f64()
        };
        self.bar.finish();
        println!(
            "{} steps: warm-up (compile) {:.2?} for {} step(s), then {timed} steps in {run_time:.2?}, \
             {samples_per_sec:.0} samples/s",
            self.steps,
            compile_time,
            self.warmup.min(self.steps),
        );
        Summary {
            steps: self.steps,
            compile_time,
            run_time,
            samples_per_sec,
            losses: self.losses,
        }
    }
}

/// What a trainer's `run` hands back: its `main` prints it, its integration test checks it.
#[derive(Clone, Debug)]
pub struct Report {
    /// The loss of this run's first step.
    pub first_loss: f32,
    /// The mean loss of this run's last [`Progress::READ_EVERY`] steps (one step's loss is
    /// noisy).
    pub final_loss: f32,
    /// Accuracy on the training set at the end.
    pub train_accuracy: f32,
    /// Accuracy on the held-out set at the end.
    pub test_accuracy: f32,
    /// The step the run started from: 0, or the checkpoint's with `--resume`.
    pub start_step: u64,
    /// The step saved in the checkpoint at the end.
    pub end_step: u64,
    /// Wall time of the whole run, loading the data and saving the checkpoint included.
    pub wall_time: Duration,
    /// The progress bar's measurements.
    pub summary: Summary,
}

impl Report {
    /// The report of a run that started at `start_step` and measured `summary`.
    pub fn new(
        summary: Summary,
        start_step: u64,
        (train_accuracy, test_accuracy): (f32, f32),
        started: Instant,
    ) -> Report {
        let losses: Vec<f32> = summary.losses.iter().map(|&(_, l)| l).collect();
        let tail = &losses[losses.len().saturating_sub(Progress::READ_EVERY)..];
        Report {
            first_loss: losses.first().copied().unwrap_or(f32::NAN),
            final_loss: tail.iter().sum::<f32>() / tail.len() as f32,
            train_accuracy,
            test_accuracy,
            start_step,
            end_step: start_step + summary.steps as u64,
            wall_time: started.elapsed(),
            summary,
        }
    }

    /// Prints the figures a trainer's `main` ends with.
    pub fn print(&self) {
        println!(
            "steps {}..{}: loss {:.4} -> {:.4}; train accuracy {:.1}%, held-out accuracy {:.1}%; \
             {:.0} samples/s after a {:.2?} warm-up (compile); wall time {:.2?}",
            self.start_step,
            self.end_step,
            self.first_loss,
            self.final_loss,
            self.train_accuracy * 100.0,
            self.test_accuracy * 100.0,
            self.summary.samples_per_sec,
            self.summary.compile_time,
            self.wall_time,
        );
    }
}

/// Draws `losses` (`(step, loss)`) as a line on a white 800x480 PNG at `path` (the bitmap
/// backend has no fonts here, so there is no text: the y range is printed instead). The grey
/// lines are at the quarters of the loss range.
pub fn plot_losses(path: &Path, losses: &[(usize, f32)]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;

    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let finite = losses.iter().filter(|(_, l)| l.is_finite());
    let (low, high) = finite.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &(_, l)| {
        (lo.min(l), hi.max(l))
    });
    if !low.is_finite() {
        return Err("no finite loss to plot".into());
    }
    let high = if high > low { high } else { low + 1.0 };
    let last = losses.last().map_or(1, |&(s, _)| s.max(1));
    const SIZE: (u32, u32) = (800, 480);
    let mut rgb = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(20)
            .build_cartesian_2d(0f32..last as f32, low..high)?;
        for quarter in 0..=4 {
            let y = low + (high - low) * quarter as f32 / 4.0;
            chart.draw_series(LineSeries::new(
                [(0.0, y), (last as f32, y)],
                RGBColor(220, 220, 220),
            ))?;
        }
        chart.draw_series(LineSeries::new(
            losses
                .iter()
                .filter(|(_, l)| l.is_finite())
                .map(|&(s, l)| (s as f32, l)),
            BLUE.stroke_width(2),
        ))?;
        root.present()?;
    }
    write_png(path, &rgb, SIZE)?;
    println!(
        "loss curve: {} (steps 1..{last}, loss from {low:.4} (bottom) to {high:.4} (top))",
        path.display()
    );
    Ok(())
}

/// Writes `rgb` (8-bit RGB, rows top to bottom, as plotters' bitmap backend draws it) as a
/// PNG: plotters' own PNG writer would pull in the whole `image` crate.
fn write_png(
    path: &Path,
    rgb: &[u8],
    (width, height): (u32, u32),
) -> Result<(), png::EncodingError> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()
}

/// What the harness saves and loads: the parameters, the optimiser's state and the step.
#[derive(Clone)]
pub struct TrainState<P, O> {
    pub params: P,
    pub opt_state: O,
    pub step: u64,
}

/// The checkpoint folder of a run: `OUT/checkpoints`, a
/// [`CheckpointManager`](jaxrs::checkpoint::CheckpointManager)'s: one folder per saved step,
/// each holding the tree `(params, opt_state)`, the step in its name.
pub fn checkpoint_dir(args: &Args) -> PathBuf {
    args.out.join("checkpoints")
}

/// How many steps a trainer keeps in `OUT/checkpoints`: the latest few.
pub const CHECKPOINTS_KEPT: usize = 3;

/// Opens the run's checkpoint folder (asynchronous saves, the last [`CHECKPOINTS_KEPT`]
/// steps kept); exits with the reason if it cannot.
pub fn open_checkpoints(args: &Args) -> CheckpointManager {
    let options = CheckpointManagerOptions {
        max_to_keep: Some(CHECKPOINTS_KEPT),
        ..Default::default()
    };
    CheckpointManager::new(checkpoint_dir(args), options).unwrap_or_else(|e| {
        eprintln!("cannot open the checkpoint folder: {e}");
        std::process::exit(1);
    })
}

/// Starts saving the run's state as step `step` in the background (a step already saved is
/// skipped); the call returns once the arrays are copied to the host. Panics with the reason
/// if this save or the one before it failed.
pub fn save_checkpoint<P: Tree, O: Tree>(
    manager: &mut CheckpointManager,
    step: u64,
    params: &P,
    opt_state: &O,
) {
    // The tree `(params, opt_state)`, its leaves shared with the caller's (not copied).
    let state = (
        jaxrs::tree::map(params, Array::clone),
        jaxrs::tree::map(opt_state, Array::clone),
    );
    manager
        .save(step, &state, SaveArgs::default())
        .unwrap_or_else(|e| panic!("checkpoint: {e}"));
}

/// What a run leaves when it ends: its loss curve (`OUT/loss.png`; one that cannot be drawn is
/// reported, not fatal) and a checkpoint of its state at the step reached, in `manager`, written
/// before this returns; returns that state.
pub fn write_outputs_to<P: Tree, O: Tree>(
    manager: &mut CheckpointManager,
    args: &Args,
    summary: &Summary,
    params: P,
    opt_state: O,
    start_step: u64,
) -> TrainState<P, O> {
    if let Err(e) = plot_losses(&args.out.join("loss.png"), &summary.losses) {
        eprintln!("loss curve not written: {e}");
    }
    let state = TrainState {
        params,
        opt_state,
        step: start_step + summary.steps as u64,
    };
    save_checkpoint(manager, state.step, &state.params, &state.opt_state);
    manager
        .wait_until_finished()
        .unwrap_or_else(|e| panic!("checkpoint: {e}"));
    println!(
        "checkpoint (step {}): {}",
        state.step,
        manager.directory().join(state.step.to_string()).display()
    );
    state
}

/// [`write_outputs_to`] the run's checkpoint folder.
pub fn write_outputs<P: Tree, O: Tree>(
    args: &Args,
    summary: &Summary,
    params: P,
    opt_state: O,
    start_step: u64,
) -> TrainState<P, O> {
    let mut manager = open_checkpoints(args);
    write_outputs_to(&mut manager, args, summary, params, opt_state, start_step)
}

/// With `--resume`, the latest step saved in `OUT/checkpoints`, read into the structure,
/// shapes and dtypes of `fresh` (exits with the reason if there is none or it does not fit);
/// without, `fresh`.
pub fn load_checkpoint<P: Tree, O: Tree>(args: &Args, fresh: TrainState<P, O>) -> TrainState<P, O> {
    if !args.resume {
        return fresh;
    }
    let manager = open_checkpoints(args);
    let dir = manager.directory().display().to_string();
    let Some(step) = manager.latest_step() else {
        // Runs before the checkpoint manager left one file pair in `OUT/checkpoint`.
        let old = args.out.join("checkpoint");
        let hint = if old.join("params.safetensors").is_file() {
            format!(
                "; {} holds a checkpoint of the old layout (`jaxrs::checkpoint::load` reads it)",
                old.display()
            )
        } else {
            " (run without --resume first)".to_string()
        };
        eprintln!("--resume: no checkpoint in {dir}{hint}");
        std::process::exit(1);
    };
    match manager.restore(step, &(fresh.params, fresh.opt_state)) {
        Ok((params, opt_state)) => {
            println!("resumed from {dir} at step {step}");
            TrainState {
                params,
                opt_state,
                step,
            }
        }
        Err(e) => {
            eprintln!("--resume: cannot restore step {step} from {dir}: {e}");
            std::process::exit(1);
        }
    }
}

/// The training loop of an image classifier (the MNIST trainers): starts from `fresh` (or the
/// checkpoint with `--resume`), runs `step(params, opt_state, x, labels) -> (params,
/// opt_state, loss)` over shuffled epochs of `batch` images (each epoch's order is
/// `permutation(fold_in(data_key, epoch))`; batches are uploaded one step ahead), prints the
/// held-out accuracy before the first step (so the evaluation compiles within the warm-up)
/// and after each epoch, then draws the loss curve, saves the checkpoint and reports.
/// `accuracy_on(params, set)` is the accuracy on a whole set, read back as a host scalar.
pub fn train_classifier<P: Tree, O: Tree>(
    args: &Args,
    (train, test): (&jaxrs::data::ImageSet, &jaxrs::data::ImageSet),
    batch: usize,
    fresh: TrainState<P, O>,
    data_key: &Array,
    mut step: impl FnMut(P, O, &Array, &Array) -> (P, O, Array),
    accuracy_on: impl Fn(&P, &jaxrs::data::ImageSet) -> f32,
) -> Report {
    let started = Instant::now();
    let state = load_checkpoint(args, fresh);
    let start_step = state.step;
    let (mut params, mut opt_state) = (state.params, state.opt_state);
    let mut checkpoints = open_checkpoints(args);
    let steps_per_epoch = train.len() / batch;
    let total = args.total_steps(steps_per_epoch);
    let mut progress = Progress::new(total, batch);
    let acc = accuracy_on(&params, test);
    progress.println(format!(
        "step {start_step}: held-out accuracy {:.1}%",
        acc * 100.0
    ));
    // Epochs count on from the checkpoint's, so a resumed run sees new orders.
    let mut epoch = start_step as usize / steps_per_epoch;
    while progress.steps() < total {
        epoch += 1;
        let batches = train.epoch(data_key, epoch as u32, batch, jaxrs::data::Remainder::Drop);
        for b in batches.take(total - progress.steps()) {
            let _step = jaxrs::profiler::StepTraceAnnotation::new(
                "train",
                start_step + progress.steps() as u64,
            );
            let x = b.x.astype(args.dtype);
            let (next, next_state, loss) = step(params, opt_state, &x, &b.y);
            (params, opt_state) = (next, next_state);
            progress.step(&loss);
        }
        let acc = accuracy_on(&params, test);
        progress.println(format!(
            "epoch {epoch}: held-out accuracy {:.1}%",
            acc * 100.0
        ));
        // Each epoch's state, written in the background while the next epoch trains.
        let step = start_step + progress.steps() as u64;
        save_checkpoint(&mut checkpoints, step, &params, &opt_state);
    }
    let summary = progress.finish();
    let accuracies = (accuracy_on(&params, train), accuracy_on(&params, test));
    write_outputs_to(
        &mut checkpoints,
        args,
        &summary,
        params,
        opt_state,
        start_step,
    );
    Report::new(summary, start_step, accuracies, started)
}
