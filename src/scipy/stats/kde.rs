//! `jax.scipy.stats.gaussian_kde`: a Gaussian kernel density estimate, as JAX 0.10.2 writes
//! it (the same covariance, Cholesky whitening and reductions, so values and derivatives are
//! JAX's to rounding, and `resample` draws JAX's samples for the same key, to the last bits).

use super::{arg, common_inexact};
use crate::numpy as jnp;
use crate::random;
use crate::scipy::linalg::{cho_factor, cho_solve, cholesky, ChoFactor};
use crate::scipy::special::{logsumexp, ndtr, LogsumexpOptions};
use crate::{Array, IntoArg, Tree};
use std::cell::RefCell;
use std::collections::HashMap;
use std::f64::consts::PI;
use std::fmt;
use std::rc::Rc;

type Resampler = Box<dyn Fn((GaussianKde, Array)) -> Array>;

thread_local! {
    /// [`GaussianKde::resample`] compiled once per batch shape, as JAX jits it with `shape`
    /// static.
    static RESAMPLE: RefCell<HashMap<Vec<usize>, Rc<crate::Jitted<Resampler>>>> =
        RefCell::new(HashMap::new());
}

/// How [`gaussian_kde_with`] picks the bandwidth factor (JAX's `bw_method`): the kernel's
/// covariance is the data's weighted covariance times the factor squared.
///
/// JAX takes a string, a scalar or a callable in one argument; Rust spells each as a variant,
/// and `"scott"`, `"silverman"`, an `f64` and an `&Array` convert with `.into()` (another
/// string panics as JAX raises).
#[derive(Clone, Copy, Default)]
pub enum BwMethod<'a> {
    /// Scott's rule (JAX's default, `bw_method=None` or `"scott"`): `neff^(-1/(d+4))`.
    #[default]
    Scott,
    /// Silverman's rule (`"silverman"`): `(neff (d+2) / 4)^(-1/(d+4))`.
    Silverman,
    /// A Python scalar factor: weakly typed, so an `f32` dataset keeps `f32` covariances.
    Scalar(f64),
    /// A zero-dimensional array factor (JAX accepts a 0-d array as a scalar): a traced one is
    /// differentiated through.
    Factor(&'a Array),
    /// A function of the estimator returning the factor (JAX's callable `bw_method`). JAX
    /// calls it on the half-built estimator, whose `covariance` and `inv_cov` are not set
    /// yet; jaxrs has no unset fields, so here they hold the data's covariance and its
    /// inverse (the factor 1). `neff`, `dataset` and `weights` are the final ones, as JAX's.
    Callable(&'a dyn Fn(&GaussianKde) -> Array),
}

impl fmt::Debug for BwMethod<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BwMethod::Scott => f.write_str("Scott"),
            BwMethod::Silverman => f.write_str("Silverman"),
            BwMethod::Scalar(s) => f.debug_tuple("Scalar").field(s).finish(),
            BwMethod::Factor(a) => f.debug_tuple("Factor").field(a).finish(),
            BwMethod::Callable(_) => f.write_str("Callable(..)"),
        }
    }
}

impl From<&str> for BwMethod<'_> {
    /// `"scott"` or `"silverman"`; any other string panics with JAX's `ValueError` message.
    #[track_caller]
    fn from(name: &str) -> Self {
        match name {
            "scott" => BwMethod::Scott,
            "silverman" => BwMethod::Silverman,
            other => panic!(
                "gaussian_kde: `bw_method` should be 'scott', 'silverman', a scalar, or a \
                 callable; got {other:?} at {}",
                std::panic::Location::caller()
            ),
        }
    }
}

impl From<f64> for BwMethod<'_> {
    fn from(factor: f64) -> Self {
        BwMethod::Scalar(factor)
    }
}

impl<'a> From<&'a Array> for BwMethod<'a> {
    fn from(factor: &'a Array) -> Self {
        BwMethod::Factor(factor)
    }
}

/// The keyword arguments of `jax.scipy.stats.gaussian_kde(dataset, bw_method=None,
/// weights=None)` (see [`gaussian_kde_with`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct GaussianKdeOptions<'a> {
    /// The bandwidth rule (default: Scott's).
    pub bw_method: BwMethod<'a>,
    /// One weight per data point (any scale: they are normalised to sum to 1); `None`: equal
    /// weights.
    pub weights: Option<&'a Array>,
}

/// A Gaussian kernel density estimator (`jax.scipy.stats.gaussian_kde`), built by
/// [`gaussian_kde`] or [`gaussian_kde_with`].
///
/// It is a pytree of five arrays, in JAX's order (`neff`, `dataset`, `weights`,
/// `covariance`, `inv_cov`), so `jit`, `grad` and `vmap` take and return it as JAX's do its
/// registered class. JAX's `kde(points)` (`__call__`) is [`GaussianKde::evaluate`] here: Rust
/// has no callable structs.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::stats::{gaussian_kde, gaussian_kde_with, GaussianKdeOptions};
///
/// let data = Array::from_vec(vec![-1.0f64, -0.5, 0.0, 0.2, 1.5], &[5]);
/// let kde = gaussian_kde(&data);
/// let x = Array::from_vec(vec![0.0f64, 3.0], &[2]);
/// let p = kde.evaluate(&x).to_vec::<f64>();
/// assert!(p[0] > p[1]);
/// // The density integrates to 1.
/// let total = kde.integrate_box_1d(f64::NEG_INFINITY, f64::INFINITY).item::<f64>();
/// assert!((total - 1.0).abs() < 1e-12);
///
/// let w = Array::from_vec(vec![1.0f64, 1.0, 1.0, 1.0, 4.0], &[5]);
/// let opts = GaussianKdeOptions { bw_method: "silverman".into(), weights: Some(&w) };
/// let weighted = gaussian_kde_with(&data, opts);
/// assert_eq!(weighted.weights.to_vec::<f64>()[4], 0.5);
/// ```
#[derive(Tree, Clone, Debug)]
pub struct GaussianKde {
    /// The effective number of data points, `1 / sum(weights²)`.
    pub neff: Array,
    /// The data, `[d, n]` (a 1-D dataset is one row).
    pub dataset: Array,
    /// The normalised weights, `[n]`.
    pub weights: Array,
    /// The kernel's covariance, `[d, d]`: the data's times the bandwidth factor squared.
    pub covariance: Array,
    /// Its inverse.
    pub inv_cov: Array,
}

/// `jax.scipy.stats.gaussian_kde(dataset)`: equal weights and Scott's bandwidth.
///
/// `dataset` is `[n]` (one variable) or `[d, n]` (n points of d variables).
///
/// # Panics
///
/// As JAX raises, naming `gaussian_kde`: complex data, a dataset of fewer than two elements,
/// or of more than two dimensions.
#[track_caller]
pub fn gaussian_kde(dataset: &Array) -> GaussianKde {
    gaussian_kde_with(dataset, GaussianKdeOptions::default())
}

/// `jax.scipy.stats.gaussian_kde(dataset, bw_method, weights)`.
///
/// # Panics
///
/// As [`gaussian_kde`], and where JAX raises on the options: `weights` not one-dimensional
/// or not of length `n`, a [`BwMethod::Factor`] that is not zero-dimensional.
#[track_caller]
pub fn gaussian_kde_with(dataset: &Array, opts: GaussianKdeOptions) -> GaussianKde {
    let loc = std::panic::Location::caller();
    let dataset = jnp::atleast_2d(dataset);
    if dataset.dtype().is_complex() {
        panic!("gaussian_kde does not support complex data (at {loc})");
    }
    if dataset.size() <= 1 {
        panic!("gaussian_kde: `dataset` input should have multiple elements (at {loc})");
    }
    if dataset.rank() != 2 {
        panic!(
            "gaussian_kde: `dataset` should be [n] or [d, n], got shape {:?} (at {loc})",
            dataset.shape()
        );
    }
    let (d, n) = (dataset.shape()[0], dataset.shape()[1]);
    let (dataset, weights) = match opts.weights {
        Some(w) => {
            let dt = common_inexact(&[&dataset, w]);
            let w = jnp::atleast_1d(w).astype(dt);
            let w = &w / &w.sum(None, false);
            if w.rank() != 1 {
                panic!(
                    "gaussian_kde: `weights` input should be one-dimensional, got shape {:?} \
                     (at {loc})",
                    w.shape()
                );
            }
            if w.shape()[0] != n {
                panic!(
                    "gaussian_kde: `weights` input should be of length n = {n}, got {} \
                     (at {loc})",
                    w.shape()[0]
                );
            }
            (dataset.astype(dt), w)
        }
        None => {
            let dataset = jnp::inexact(&dataset);
            let w = Array::full(&[n], 1.0 / n as f64, dataset.dtype());
            (dataset, w)
        }
    };
    let neff: Array = 1.0 / &weights.powi(2).sum(None, false);

    let data_covariance = weighted_cov(&dataset, &weights);
    let data_inv_cov = jnp::linalg::inv(&data_covariance);
    let exponent = -1.0 / (d as f64 + 4.0);
    // A Python scalar factor is squared in Python, then weakly typed; the others are arrays.
    let factor_sq = match opts.bw_method {
        BwMethod::Scott => jnp::power(&neff, exponent).powi(2),
        BwMethod::Silverman => jnp::power(&(&(&neff * (d as f64 + 2.0)) / 4.0), exponent).powi(2),
        BwMethod::Scalar(f) => arg(f * f),
        BwMethod::Factor(f) => {
            if f.rank() != 0 {
                panic!(
                    "gaussian_kde: `bw_method` should be 'scott', 'silverman', a scalar, or a \
                     callable; got an array of shape {:?} (at {loc})",
                    f.shape()
                );
            }
            f.powi(2)
        }
        BwMethod::Callable(rule) => {
            let half_built = GaussianKde {
                neff: neff.clone(),
                dataset: dataset.clone(),
                weights: weights.clone(),
                covariance: data_covariance.clone(),
                inv_cov: data_inv_cov.clone(),
            };
            rule(&half_built).powi(2)
        }
    };
    GaussianKde {
        covariance: &data_covariance * &factor_sq,
        inv_cov: &data_inv_cov / &factor_sq,
        neff,
        dataset,
        weights,
    }
}

/// `atleast_2d(jnp.cov(x, rowvar=1, bias=False, aweights=w))` for `x` `[d, n]`, as JAX's
/// `cov` computes it with analytic weights: the weighted mean taken out, normalised by
/// `sum(w) - sum(w²) / sum(w)`. (JAX squeezes and `atleast_2d` restores the same `[d, d]`.)
fn weighted_cov(x: &Array, aweights: &Array) -> Array {
    let w = aweights.abs();
    let w_sum = w.sum(None, false);
    let avg = &(x * &w.expand_dims(0)).sum(1, false) / &w_sum;
    let f = &w_sum - &(&(&w * &w).sum(None, false) / &w_sum);
    let centered = x - &avg.expand_dims(1);
    let weighted_t = (&centered * &w.expand_dims(0)).t();
    &centered.matmul(&weighted_t) / &f
}

/// `1 / (sqrt(2π)^d prod(diag(chol)))`, the normaliser of a Gaussian with `chol`'s matrix.
fn gaussian_norm(chol: &ChoFactor, d: usize) -> Array {
    let scale = (2.0 * PI).sqrt().powi(d as i32);
    let det_root = jnp::diagonal(&chol.c, 0, -2, -1).prod(None, false);
    1.0 / &(scale * &det_root)
}

/// `norm * sum(weights * exp(-(t - mean)ᵀ A⁻¹ (t - mean) / 2))` over the columns `t` of
/// `target` (JAX's `_gaussian_kernel_convolve`).
fn kernel_convolve(
    chol: &ChoFactor,
    norm: &Array,
    target: &Array,
    weights: &Array,
    mean: &Array,
) -> Array {
    let diff = target - &mean.expand_dims(1);
    let alpha = cho_solve(chol, &diff);
    let arg = &(&diff * &alpha).sum(0, false) * 0.5;
    norm * &(&(-&arg).exp() * weights).sum(None, false)
}

impl GaussianKde {
    /// The number of variables, `d` (JAX's `d` property).
    pub fn d(&self) -> usize {
        self.dataset.shape()[0]
    }

    /// The number of data points, `n` (JAX's `n` property).
    pub fn n(&self) -> usize {
        self.dataset.shape()[1]
    }

    /// The density at `points` (`kde.evaluate(points)`, also JAX's `kde(points)`): `points`
    /// is `[d, m]`, `[m]` when `d` is 1, or `[d]` for a single point; the result is `[m]`.
    /// Computed in the dtype all of `points`, the data, the weights and `inv_cov` promote to.
    ///
    /// # Panics
    ///
    /// On complex points, or points of another dimension than the data's.
    #[track_caller]
    pub fn evaluate(&self, points: &Array) -> Array {
        let points = self.reshape_points("evaluate", points);
        self.kernel_eval(false, &points)
    }

    /// The density at `points` (`kde.pdf`), as [`GaussianKde::evaluate`].
    #[track_caller]
    pub fn pdf(&self, points: &Array) -> Array {
        self.evaluate(points)
    }

    /// The log density at `points` (`kde.logpdf`), by a `logsumexp` over the data points,
    /// accurate where the density underflows.
    #[track_caller]
    pub fn logpdf(&self, points: &Array) -> Array {
        let points = self.reshape_points("logpdf", points);
        self.kernel_eval(true, &points)
    }

    /// The integral of the density times the Gaussian `N(mean, cov)`
    /// (`kde.integrate_gaussian(mean, cov)`): `mean` is `[d]` (or squeezes to it), `cov` is
    /// `[d, d]` (a scalar when `d` is 1).
    ///
    /// # Panics
    ///
    /// When `mean` or `cov` is not of the data's dimension.
    #[track_caller]
    pub fn integrate_gaussian(&self, mean: &Array, cov: &Array) -> Array {
        let loc = std::panic::Location::caller();
        let d = self.d();
        let mean = jnp::atleast_1d(&jnp::squeeze(mean, None));
        let cov = jnp::atleast_2d(cov);
        if mean.shape() != [d] {
            panic!(
                "gaussian_kde.integrate_gaussian: mean does not have dimension {d} (shape {:?}, \
                 at {loc})",
                mean.shape()
            );
        }
        if cov.shape() != [d, d] {
            panic!(
                "gaussian_kde.integrate_gaussian: covariance does not have dimension {d} \
                 (shape {:?}, at {loc})",
                cov.shape()
            );
        }
        let chol = cho_factor(&(&self.covariance + &cov), false);
        let norm = gaussian_norm(&chol, d);
        kernel_convolve(&chol, &norm, &self.dataset, &self.weights, &mean)
    }

    /// The probability mass between `low` and `high` of a one-dimensional estimate
    /// (`kde.integrate_box_1d(low, high)`): scalars, arrays or Rust numbers (weakly typed).
    ///
    /// # Panics
    ///
    /// When the data has more than one variable, or a limit is not a scalar.
    #[track_caller]
    pub fn integrate_box_1d<'a>(&self, low: impl IntoArg<'a>, high: impl IntoArg<'a>) -> Array {
        let loc = std::panic::Location::caller();
        if self.d() != 1 {
            panic!(
                "gaussian_kde.integrate_box_1d: integrate_box_1d() only handles 1D pdfs, this \
                 one has d = {} (at {loc})",
                self.d()
            );
        }
        let (low, high) = (arg(low), arg(high));
        if low.rank() != 0 || high.rank() != 0 {
            panic!(
                "gaussian_kde.integrate_box_1d: the limits of integration in integrate_box_1d \
                 must be scalars, got shapes {:?} and {:?} (at {loc})",
                low.shape(),
                high.shape()
            );
        }
        let sigma = jnp::squeeze(&self.covariance.sqrt(), None);
        let low = jnp::squeeze(&(&(&low - &self.dataset) / &sigma), None);
        let high = jnp::squeeze(&(&(&high - &self.dataset) / &sigma), None);
        (&self.weights * &(&ndtr(&high) - &ndtr(&low))).sum(None, false)
    }

    /// The integral of the product of two estimates (`kde.integrate_kde(other)`), as JAX
    /// computes it: one Gaussian convolution over the larger dataset for each point of the
    /// smaller, under `vmap`.
    ///
    /// # Panics
    ///
    /// When the two have different dimensions.
    #[track_caller]
    pub fn integrate_kde(&self, other: &GaussianKde) -> Array {
        let loc = std::panic::Location::caller();
        if other.d() != self.d() {
            panic!(
                "gaussian_kde.integrate_kde: KDEs are not the same dimensionality ({} and {}, \
                 at {loc})",
                self.d(),
                other.d()
            );
        }
        let chol = cho_factor(&(&self.covariance + &other.covariance), false);
        let norm = gaussian_norm(&chol, self.d());
        let (sm, lg) = if self.n() < other.n() {
            (self, other)
        } else {
            (other, self)
        };
        let result = crate::vmap(
            |mean: Array| kernel_convolve(&chol, &norm, &lg.dataset, &lg.weights, &mean),
            1,
            0,
        )(sm.dataset.clone());
        (&result * &sm.weights).sum(None, false)
    }

    /// Draws from the estimate (`kde.resample(key, shape)`): `[d] + shape`. As JAX's, and
    /// jitted as JAX's is (once per `shape`): the key split in two, data points chosen by
    /// `random::choice` with the weights as probabilities, plus multivariate normal noise of
    /// the kernel's covariance in the data's dtype. The chosen points are JAX's for the same
    /// key and the noise JAX's to the last bits: bit for bit for a one-dimensional float32
    /// estimate; otherwise a few ulps apart where the Cholesky factor is jaxrs's kernel (not
    /// LAPACK's) or XLA fuses a multiply and an add differently (jaxrs's XLA is not jaxlib's).
    ///
    /// JAX transposes the `shape + [d]` noise with `.T`, which reverses every axis: for a
    /// `shape` of two or more axes the noise's batch axes come out reversed against the
    /// points', so JAX raises unless they broadcast (a square `shape` works, its noise
    /// transposed). jaxrs does the same, and panics where JAX raises.
    #[track_caller]
    pub fn resample(&self, key: &Array, shape: &[usize]) -> Array {
        let jitted = RESAMPLE.with(|cache| {
            cache
                .borrow_mut()
                .entry(shape.to_vec())
                .or_insert_with(|| {
                    let shape = shape.to_vec();
                    let draw: Resampler =
                        Box::new(move |(kde, key)| kde.resample_traced(&key, &shape));
                    Rc::new(crate::jit(draw))
                })
                .clone()
        });
        jitted.call((self.clone(), key.clone()))
    }

    /// The body of [`GaussianKde::resample`]. JAX's `multivariate_normal` is written out (its
    /// zero mean is a constant of the program, which XLA folds away, and then contracts the
    /// noise's product and the chosen point's sum into one rounding, as it does JAX's);
    /// `random::multivariate_normal` would hold the mean as an operand.
    fn resample_traced(&self, key: &Array, shape: &[usize]) -> Array {
        let [ind_key, eps_key] = random::split_n::<2>(key);
        let ind = random::choice(&ind_key, self.n(), shape, true, Some(&self.weights), 0);
        let mean = Array::zeros(&[self.d()], self.covariance.dtype());
        let factor = jnp::linalg::cholesky(&self.covariance, false);
        let mut eps_shape = shape.to_vec();
        eps_shape.push(self.d());
        let z = random::normal(&eps_key, &eps_shape, self.dataset.dtype());
        let eps = &mean + &jnp::einsum("...ij,...j->...i", &[&factor, &z], None);
        &self.dataset.take(&ind, 1) + &eps.t()
    }

    /// Not supported, as in JAX (`kde.set_bandwidth(bw_method)` raises
    /// `NotImplementedError`): an estimator's arrays are fixed; build another with
    /// [`gaussian_kde_with`] instead.
    ///
    /// # Panics
    ///
    /// Always, with JAX's message.
    #[track_caller]
    pub fn set_bandwidth(&self, bw_method: BwMethod) -> ! {
        let _ = bw_method;
        panic!(
            "gaussian_kde.set_bandwidth: dynamically changing the bandwidth method is not \
             supported (at {})",
            std::panic::Location::caller()
        )
    }

    /// Not supported, as in JAX (`kde.integrate_box(low_bounds, high_bounds, maxpts)` raises
    /// `NotImplementedError`): only [`GaussianKde::integrate_box_1d`] is.
    ///
    /// # Panics
    ///
    /// Always, with JAX's message.
    #[track_caller]
    pub fn integrate_box(
        &self,
        low_bounds: &Array,
        high_bounds: &Array,
        maxpts: Option<usize>,
    ) -> ! {
        let _ = (low_bounds, high_bounds, maxpts);
        panic!(
            "gaussian_kde.integrate_box: only 1D box integrations are supported; use \
             `integrate_box_1d` (at {})",
            std::panic::Location::caller()
        )
    }

    /// JAX's `_reshape_points`: `points` as `[d, m]`.
    #[track_caller]
    fn reshape_points(&self, op: &str, points: &Array) -> Array {
        let loc = std::panic::Location::caller();
        if points.dtype().is_complex() {
            panic!(
                "gaussian_kde.{op}: gaussian_kde does not support complex coordinates (at {loc})"
            );
        }
        let points = jnp::atleast_2d(points);
        if points.rank() != 2 {
            panic!(
                "gaussian_kde.{op}: points should be [d, m], got shape {:?} (at {loc})",
                points.shape()
            );
        }
        let (d, m) = (points.shape()[0], points.shape()[1]);
        if d == self.d() {
            return points;
        }
        if d == 1 && m == self.d() {
            return points.reshape([self.d(), 1]);
        }
        panic!(
            "gaussian_kde.{op}: points have dimension {d}, dataset has dimension {} (at {loc})",
            self.d()
        )
    }

    /// JAX's `_gaussian_kernel_eval` at `xi` (`[d, m]`): the data and the points whitened by
    /// the Cholesky factor of `inv_cov`, then for each point a weighted sum (or `logsumexp`)
    /// of the unit Gaussian kernel over the data. JAX maps a per-pair kernel with `vmap`;
    /// here the `[m, n]` pairs are formed at once, the same arithmetic.
    fn kernel_eval(&self, in_log: bool, xi: &Array) -> Array {
        let dt = common_inexact(&[&self.dataset, &self.weights, xi, &self.inv_cov]);
        let points = self.dataset.t().astype(dt);
        let values = self.weights.astype(dt);
        let xi = xi.t().astype(dt);
        let precision = self.inv_cov.astype(dt);
        let d = points.shape()[1];
        // Only the lower triangle of `inv_cov` is read, as jax.scipy.linalg.cholesky reads it.
        let whitening = cholesky(&precision, true);
        let points = points.matmul(&whitening);
        let xi = xi.matmul(&whitening);
        let log_norm = &jnp::diagonal(&whitening, 0, -2, -1).log().sum(None, false)
            - 0.5 * d as f64 * (2.0 * PI).ln();
        let diff = &points.expand_dims(0) - &xi.expand_dims(1);
        let arg = &log_norm - &(&diff.powi(2).sum(-1, false) * 0.5);
        if in_log {
            let terms = &values.log().expand_dims(0) + &arg;
            logsumexp(&terms, 1, LogsumexpOptions::default())
        } else {
            (&values.expand_dims(0) * &arg.exp()).sum(1, false)
        }
    }
}
