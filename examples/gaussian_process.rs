//! Exact Gaussian-process regression, its hyperparameters fitted by Adam on the marginal
//! likelihood: the negative log marginal likelihood of an RBF kernel plus noise goes through
//! `cholesky` and `solve_triangular`, `value_and_grad` differentiates it through both (with
//! JAX's rules for the two), and the fitted process predicts a held-out grid with its
//! uncertainty (`cho_solve` for the mean, one more triangular solve for the variance).
//!
//! The data are generated with `jaxrs::random`, which is bit for bit `jax.random`: 64 noisy
//! samples of `sin(2x) + 0.3 cos(5x)` at uniform points of [-3, 3]. Its JAX twin,
//! `examples/jax/gaussian_process.py`, does the same in JAX 0.10.2 and prints the same
//! figures; `tests/gaussian_process.rs` checks every step's loss and the final figures
//! against the twin's (committed in `tests/golden/gaussian_process.json`).
//!
//! Run: `cargo run --release --example gaussian_process`.

use jaxrs::numpy as jnp;
use jaxrs::optim::{self, GradientTransformation};
use jaxrs::prelude::*;
use jaxrs::random;
use jaxrs::scipy::linalg as sla;

pub const N_TRAIN: usize = 64;
pub const N_TEST: usize = 200;
pub const STEPS: usize = 300;
const LEARNING_RATE: f64 = 0.05;
/// Added to the kernel's diagonal, as GP codes do, so that the factor exists for any noise.
const JITTER: f64 = 1e-6;

/// The kernel's hyperparameters, as logs so that Adam moves them freely.
#[derive(Tree, Clone)]
pub struct Hyper {
    pub log_amplitude: Array,
    pub log_length_scale: Array,
    pub log_noise: Array,
}

impl Hyper {
    /// amplitude 1, length scale 1, noise 0.5.
    pub fn init() -> Hyper {
        Hyper {
            log_amplitude: Array::scalar(0.0f64),
            log_length_scale: Array::scalar(0.0f64),
            log_noise: Array::scalar(0.5f64.ln()),
        }
    }
}

/// The function the data sample.
fn truth(x: &Array) -> Array {
    jnp::sin(&(x * 2.0)) + jnp::cos(&(x * 5.0)) * 0.3
}

/// Training inputs and targets, a test grid and the noiseless truth on it.
pub fn data() -> (Array, Array, Array, Array) {
    let [kx, kn] = random::split_n::<2>(&random::key(0));
    let x = random::uniform_range(&kx, &[N_TRAIN], DType::F64, -3.0, 3.0);
    let y = truth(&x) + random::normal(&kn, &[N_TRAIN], DType::F64) * 0.1;
    let x_test = jnp::linspace(-3.0, 3.0, N_TEST, true, Some(DType::F64));
    let f_test = truth(&x_test);
    (x, y, x_test, f_test)
}

/// The RBF kernel `amplitude² exp(-(a_i - b_j)² / (2 length_scale²))` between two sets of
/// points.
fn rbf(h: &Hyper, a: &Array, b: &Array) -> Array {
    let d = a.expand_dims(1) - b.expand_dims(0);
    let ls = jnp::exp(&h.log_length_scale);
    let amp2 = jnp::exp(&(&h.log_amplitude * 2.0));
    amp2 * jnp::exp(&(-(&d * &d) / (ls.powi(2) * 2.0)))
}

/// The lower Cholesky factor of the training points' covariance, noise included.
fn factor(h: &Hyper, x: &Array) -> Array {
    let noise2 = jnp::exp(&(&h.log_noise * 2.0));
    let eye = jnp::eye(x.shape()[0], None, 0, Some(DType::F64));
    sla::cholesky(&(rbf(h, x, x) + eye * (noise2 + JITTER)), true)
}

/// The negative log marginal likelihood `yᵀ K⁻¹ y / 2 + log |L| + n log(2π) / 2`.
pub fn nll(h: &Hyper, x: &Array, y: &Array) -> Array {
    let l = factor(h, x);
    let alpha = sla::solve_triangular(&l, y, 0, true, false);
    let n = x.shape()[0] as f64;
    (&alpha * &alpha).sum(None, false) * 0.5
        + jnp::log(&jnp::linalg::diagonal(&l, 0)).sum(None, false)
        + 0.5 * n * (2.0 * std::f64::consts::PI).ln()
}

pub fn optimizer() -> optim::Adam {
    optim::adam(LEARNING_RATE, 0.9, 0.999, 1e-8)
}

pub type OptState = optim::State<optim::Adam, Hyper>;

/// One Adam step on the marginal likelihood: the loss before the step, and the new state.
#[jit]
pub fn train_step(h: Hyper, opt_state: OptState, x: &Array, y: &Array) -> (Hyper, OptState, Array) {
    let (loss, grads) = value_and_grad(|h: Hyper| nll(&h, x, y))(h.clone());
    let (updates, opt_state) = optimizer().update(grads, opt_state, Some(&h));
    (optim::apply_updates(&h, &updates), opt_state, loss)
}

/// The posterior mean and standard deviation of the latent function at `x_test`.
#[jit]
pub fn predict(h: Hyper, x: &Array, y: &Array, x_test: &Array) -> (Array, Array) {
    let l = factor(&h, x);
    let k_star = rbf(&h, x, x_test);
    let mean = k_star.swap_axes(0, 1).matmul(&sla::cho_solve(
        &sla::ChoFactor {
            c: l.clone(),
            lower: true,
        },
        y,
    ));
    let v = sla::solve_triangular(&l, &k_star, 0, true, false);
    let amp2 = jnp::exp(&(&h.log_amplitude * 2.0));
    let var = amp2 - (&v * &v).sum(0, false);
    (mean, jnp::sqrt(&jnp::maximum(&var, 0.0)))
}

/// The figures the example prints and its twin prints: every step's loss, then the fitted
/// hyperparameters and the held-out fit.
pub struct Figures {
    pub losses: Vec<f64>,
    pub amplitude: f64,
    pub length_scale: f64,
    pub noise: f64,
    pub final_nll: f64,
    pub test_rmse: f64,
    pub mean_std: f64,
    pub coverage: f64,
}

pub fn fit(steps: usize) -> Figures {
    let (x, y, x_test, f_test) = data();
    let mut h = Hyper::init();
    let mut opt_state = optimizer().init(&h);
    let mut losses = Vec::with_capacity(steps);
    for _ in 0..steps {
        let (next, state, loss) = train_step(h, opt_state, &x, &y);
        losses.push(loss.item::<f64>());
        (h, opt_state) = (next, state);
    }
    let (mean, std) = predict(h.clone(), &x, &y, &x_test);
    let err = &mean - &f_test;
    let inside = jnp::abs(&err).le(&(&std * 2.0)).astype(DType::F64);
    Figures {
        losses,
        amplitude: jnp::exp(&h.log_amplitude).item::<f64>(),
        length_scale: jnp::exp(&h.log_length_scale).item::<f64>(),
        noise: jnp::exp(&h.log_noise).item::<f64>(),
        final_nll: nll(&h, &x, &y).item::<f64>(),
        test_rmse: jnp::sqrt(&(&err * &err).mean(None, false)).item::<f64>(),
        mean_std: std.mean(None, false).item::<f64>(),
        coverage: inside.mean(None, false).item::<f64>(),
    }
}

#[allow(dead_code)]
fn main() {
    let start = std::time::Instant::now();
    let f = fit(STEPS);
    for (step, loss) in f.losses.iter().enumerate() {
        if step % 50 == 0 || step == STEPS - 1 {
            println!("step {step:>3}: negative log marginal likelihood {loss:.6}");
        }
    }
    println!("final nll       {:.6}", f.final_nll);
    println!("amplitude       {:.6}", f.amplitude);
    println!("length scale    {:.6}", f.length_scale);
    println!("noise           {:.6}  (the data's: 0.1)", f.noise);
    println!(
        "test rmse       {:.6}  (posterior mean vs the noiseless function)",
        f.test_rmse
    );
    println!("mean std        {:.6}", f.mean_std);
    println!("2-sigma cover   {:.3}", f.coverage);
    println!("({STEPS} steps in {:.2?})", start.elapsed());
}
