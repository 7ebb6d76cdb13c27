//! The continuous samplers that are closed-form transforms of uniform and normal draws
//! (`jax.random.exponential`, `gumbel`, `laplace`, `logistic`, `cauchy`, `lognormal`,
//! `pareto`, `rayleigh`, `wald`, `weibull_min`, `maxwell`, `double_sided_maxwell`,
//! `triangular`), written op for op as JAX 0.10.2 writes them so that XLA compiles the same
//! arithmetic and the draws are JAX's bit for bit.

use super::{
    finfo, float_dtype, normal, param, sample_shape, sampler, split_n, uniform, uniform_range,
};
use crate::core::array::Array;
use crate::core::ir::Literal;
use crate::dtype::DType;
use crate::ops::{where_, IntoArg};

/// `1 / x` in `x`'s float dtype, weak when `x` is (JAX's `1.0 / x` on a traced parameter; an
/// integer parameter counts as float32).
pub(super) fn reciprocal(x: &Array) -> Array {
    let x = inexact(x);
    Array::from_literal(Literal::from_f64(1.0, x.dtype(), x.is_weak())).div(&x)
}

/// `x` as a float: integers become float32, as `promote_dtypes_inexact` without x64.
pub(super) fn inexact(x: &Array) -> Array {
    if x.dtype().is_inexact() {
        x.clone()
    } else {
        x.astype(DType::F32)
    }
}

/// Exponential floats of rate 1 (`jax.random.exponential`): `-log1p(-u)`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let e = random::exponential(&random::key(0), &[1000], DType::F32);
/// assert!(e.to_vec::<f32>().iter().all(|&x| x >= 0.0));
/// ```
#[track_caller]
pub fn exponential(key: &Array, shape: &[usize], dtype: DType) -> Array {
    float_dtype("exponential", dtype);
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?}");
    sampler("exponential", statics, key, vec![], move |key, _| {
        exponential_traced(key, &shape, dtype)
    })
}

pub(super) fn exponential_traced(key: &Array, shape: &[usize], dtype: DType) -> Array {
    -(-uniform(key, shape, dtype)).log1p()
}

/// How many random bits a Gumbel draw spends (`mode` of `jax.random.gumbel`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GumbelMode {
    /// One uniform draw per sample (JAX's default, `"low"`): in float32 the tail below
    /// probabilities of about 1e-7 is cut off.
    #[default]
    Low,
    /// Two uniform draws per sample (`"high"`), pushing that limit to about 1e-14.
    High,
}

/// Standard Gumbel floats (`jax.random.gumbel(key, shape, dtype, mode)`): `-log(-log(u))`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random::{self, GumbelMode};
///
/// let g = random::gumbel(&random::key(0), &[3], DType::F32, GumbelMode::Low);
/// assert_eq!(g.shape(), &[3]);
/// ```
#[track_caller]
pub fn gumbel(key: &Array, shape: &[usize], dtype: DType, mode: GumbelMode) -> Array {
    float_dtype("gumbel", dtype);
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?} {mode:?}");
    sampler("gumbel", statics, key, vec![], move |key, _| {
        gumbel_traced(key, &shape, dtype, mode)
    })
}

pub(super) fn gumbel_traced(key: &Array, shape: &[usize], dtype: DType, mode: GumbelMode) -> Array {
    let info = finfo(dtype);
    match mode {
        GumbelMode::Low => {
            let u = uniform_range(key, shape, dtype, info.tiny, 1.0);
            -(-u.log()).log()
        }
        GumbelMode::High => {
            let two: Vec<usize> = std::iter::once(2).chain(shape.iter().copied()).collect();
            let u = uniform(key, &two, dtype);
            let row = |i: usize| u.slice_axis(0, i, i + 1).reshape(shape.to_vec());
            let (high, low) = (row(0), row(1));
            let filled = high
                .add(low.mul((-(info.nmant as f64)).exp2()))
                .add(info.tiny);
            let x = where_(high.ge(0.5), &high, &filled);
            -(-(-x).log1p()).log()
        }
    }
}

/// Standard Laplace floats (`jax.random.laplace`): `sign(u) * log1p(-|u|)` for `u` uniform in
/// `(-1, 1)`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let l = random::laplace(&random::key(0), &[2, 2], DType::F32);
/// assert_eq!(l.shape(), &[2, 2]);
/// ```
#[track_caller]
pub fn laplace(key: &Array, shape: &[usize], dtype: DType) -> Array {
    float_dtype("laplace", dtype);
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?}");
    sampler("laplace", statics, key, vec![], move |key, _| {
        let lo = -1.0 + finfo(dtype).epsneg;
        let u = uniform_range(key, &shape, dtype, lo, 1.0);
        u.sign().mul((-u.abs()).log1p())
    })
}

/// Standard logistic floats (`jax.random.logistic`): `log(u) - log1p(-u)`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// assert_eq!(random::logistic(&random::key(0), &[4], DType::F32).shape(), &[4]);
/// ```
#[track_caller]
pub fn logistic(key: &Array, shape: &[usize], dtype: DType) -> Array {
    float_dtype("logistic", dtype);
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?}");
    sampler("logistic", statics, key, vec![], move |key, _| {
        let x = uniform_range(key, &shape, dtype, finfo(dtype).tiny, 1.0);
        x.log().sub((-&x).log1p())
    })
}

/// Standard Cauchy floats (`jax.random.cauchy`): `tan(pi * (u - 1/2))`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// assert_eq!(random::cauchy(&random::key(0), &[4], DType::F32).shape(), &[4]);
/// ```
#[track_caller]
pub fn cauchy(key: &Array, shape: &[usize], dtype: DType) -> Array {
    float_dtype("cauchy", dtype);
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?}");
    sampler("cauchy", statics, key, vec![], move |key, _| {
        let u = uniform_range(key, &shape, dtype, finfo(dtype).eps, 1.0);
        u.sub(0.5).mul(std::f64::consts::PI).tan()
    })
}

/// Log-normal floats `exp(sigma * z)` (`jax.random.lognormal(key, sigma, shape, dtype)`);
/// `shape` defaults (`None`) to `sigma`'s.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::lognormal(&random::key(0), 0.5, Some(&[100]), DType::F32);
/// assert!(x.to_vec::<f32>().iter().all(|&v| v > 0.0));
/// ```
#[track_caller]
pub fn lognormal<'a>(
    key: &Array,
    sigma: impl IntoArg<'a>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("lognormal", dtype);
    let sigma = param(sigma, dtype);
    let shape = sample_shape("lognormal", shape, &[&sigma]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("lognormal", statics, key, vec![sigma], move |key, p| {
        normal(key, &shape, dtype).mul(p[0].astype(dtype)).exp()
    })
}

/// Pareto floats of shape `b` (`jax.random.pareto`): `exp(e / b)` for `e` exponential.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::pareto(&random::key(0), 3.0, Some(&[100]), DType::F32);
/// assert!(x.to_vec::<f32>().iter().all(|&v| v >= 1.0));
/// ```
#[track_caller]
pub fn pareto<'a>(
    key: &Array,
    b: impl IntoArg<'a>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("pareto", dtype);
    let b = param(b, dtype);
    let shape = sample_shape("pareto", shape, &[&b]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("pareto", statics, key, vec![b], move |key, p| {
        exponential_traced(key, &shape, dtype)
            .div(p[0].astype(dtype))
            .exp()
    })
}

/// Rayleigh floats of `scale` (`jax.random.rayleigh`): `scale * sqrt(-2 log u)`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::rayleigh(&random::key(0), 2.0, Some(&[100]), DType::F32);
/// assert!(x.to_vec::<f32>().iter().all(|&v| v >= 0.0));
/// ```
#[track_caller]
pub fn rayleigh<'a>(
    key: &Array,
    scale: impl IntoArg<'a>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("rayleigh", dtype);
    let scale = param(scale, dtype);
    let shape = sample_shape("rayleigh", shape, &[&scale]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("rayleigh", statics, key, vec![scale], move |key, p| {
        let u = uniform(key, &shape, dtype);
        let scale = p[0].astype(dtype).broadcast_to(&shape);
        scale.mul(u.log().mul(-2.0).sqrt())
    })
}

/// Wald (inverse Gaussian) floats of `mean` (`jax.random.wald`), by Michael, Schucany and
/// Haas's transform of a normal and a uniform draw.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::wald(&random::key(0), 1.0, Some(&[100]), DType::F32);
/// assert!(x.to_vec::<f32>().iter().all(|&v| v > 0.0));
/// ```
#[track_caller]
pub fn wald<'a>(
    key: &Array,
    mean: impl IntoArg<'a>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("wald", dtype);
    let mean = param(mean, dtype);
    let shape = sample_shape("wald", shape, &[&mean]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("wald", statics, key, vec![mean], move |key, p| {
        let [k1, k2] = split_n::<2>(key);
        let mean = p[0].astype(dtype).broadcast_to(&shape);
        let v = normal(&k1, &shape, dtype);
        let z = uniform(&k2, &shape, dtype);
        let y = v.powi(2);
        let y_sq = y.powi(2);
        let mean_sq = mean.powi(2);
        let sqrt_term = mean.mul(4.0).mul(&y).add(mean_sq.mul(&y_sq)).sqrt();
        let x = mean
            .add(mean_sq.mul(&y).div(2.0))
            .sub(mean.div(2.0).mul(&sqrt_term));
        where_(z.le(mean.div(mean.add(&x))), &x, mean_sq.div(&x))
    })
}

/// Weibull floats (`jax.random.weibull_min(key, scale, concentration, shape, dtype)`):
/// `(-log1p(-u))^(1 / concentration) * scale`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::weibull_min(&random::key(0), 1.0, 1.5, &[100], DType::F32);
/// assert!(x.to_vec::<f32>().iter().all(|&v| v >= 0.0));
/// ```
#[track_caller]
pub fn weibull_min<'a, 'b>(
    key: &Array,
    scale: impl IntoArg<'a>,
    concentration: impl IntoArg<'b>,
    shape: &[usize],
    dtype: DType,
) -> Array {
    float_dtype("weibull_min", dtype);
    let (scale, concentration) = (param(scale, dtype), param(concentration, dtype));
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?}");
    let params = vec![scale, concentration];
    sampler("weibull_min", statics, key, params, move |key, p| {
        let u = uniform(key, &shape, dtype);
        (-(-u).log1p()).pow(reciprocal(&p[1])).mul(&p[0])
    })
}

/// Maxwell floats (`jax.random.maxwell`): the norm of three standard normal draws.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// assert_eq!(random::maxwell(&random::key(0), &[5], DType::F32).shape(), &[5]);
/// ```
#[track_caller]
pub fn maxwell(key: &Array, shape: &[usize], dtype: DType) -> Array {
    float_dtype("maxwell", dtype);
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?}");
    sampler("maxwell", statics, key, vec![], move |key, _| {
        maxwell_traced(key, &shape, dtype)
    })
}

fn maxwell_traced(key: &Array, shape: &[usize], dtype: DType) -> Array {
    let three: Vec<usize> = shape.iter().copied().chain(std::iter::once(3)).collect();
    let z = normal(key, &three, dtype);
    z.mul(&z).sum(-1, false).sqrt()
}

/// Double-sided Maxwell floats (`jax.random.double_sided_maxwell(key, loc, scale, shape,
/// dtype)`): a Maxwell draw with a random sign, scaled and shifted. As in JAX, the result's
/// shape is `shape` (the parameters' broadcast shape when `shape` is empty) followed by the
/// parameters' broadcast shape.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::double_sided_maxwell(&random::key(0), 0.0, 1.0, &[4], DType::F32);
/// assert_eq!(x.shape(), &[4]);
/// ```
#[track_caller]
pub fn double_sided_maxwell<'a, 'b>(
    key: &Array,
    loc: impl IntoArg<'a>,
    scale: impl IntoArg<'b>,
    shape: &[usize],
    dtype: DType,
) -> Array {
    float_dtype("double_sided_maxwell", dtype);
    let (loc, scale) = (param(loc, dtype), param(scale, dtype));
    let params_shape = sample_shape("double_sided_maxwell", None, &[&loc, &scale]);
    let mut shape = if shape.is_empty() {
        params_shape.clone()
    } else {
        shape.to_vec()
    };
    shape.extend(&params_shape);
    let statics = format!("{shape:?} {dtype:?}");
    let params = vec![loc, scale];
    sampler(
        "double_sided_maxwell",
        statics,
        key,
        params,
        move |key, p| {
            let [maxwell_key, sign_key] = split_n::<2>(key);
            let m = maxwell_traced(&maxwell_key, &shape, dtype);
            let sign = super::rademacher_traced(&sign_key, &shape, dtype);
            sign.mul(&m).mul(&p[1]).add(&p[0])
        },
    )
}

/// Triangular floats on `[left, right]` with peak at `mode` (`jax.random.triangular`), by
/// inverting the CDF; `shape` defaults to the parameters' broadcast shape.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::triangular(&random::key(0), 0.0, 0.3, 1.0, Some(&[100]), DType::F32);
/// assert!(x.to_vec::<f32>().iter().all(|&v| (0.0..=1.0).contains(&v)));
/// ```
#[track_caller]
pub fn triangular<'a, 'b, 'c>(
    key: &Array,
    left: impl IntoArg<'a>,
    mode: impl IntoArg<'b>,
    right: impl IntoArg<'c>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("triangular", dtype);
    let (left, mode, right) = (param(left, dtype), param(mode, dtype), param(right, dtype));
    let shape = sample_shape("triangular", shape, &[&left, &mode, &right]);
    let statics = format!("{shape:?} {dtype:?}");
    let params = vec![left, mode, right];
    sampler("triangular", statics, key, params, move |key, p| {
        let at = |x: &Array| x.astype(dtype).broadcast_to(&shape);
        let (left, mode, right) = (at(&p[0]), at(&p[1]), at(&p[2]));
        let fc = mode.sub(&left).div(right.sub(&left));
        let u = uniform(key, &shape, dtype);
        let out1 = left.add(u.mul(right.sub(&left)).mul(mode.sub(&left)).sqrt());
        let out2 = right.sub(
            Array::full(&[], 1.0, dtype)
                .sub(&u)
                .mul(right.sub(&left))
                .mul(right.sub(&mode))
                .sqrt(),
        );
        where_(u.lt(&fc), &out1, &out2)
    })
}
