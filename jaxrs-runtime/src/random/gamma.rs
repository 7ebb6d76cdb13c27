//! The samplers built on rejection loops: `jax.random.gamma` and `loggamma` (Marsaglia and
//! Tsang's method, one `while_loop` per element, vmapped over the elements as JAX lowers its
//! `random_gamma` primitive), the Gamma family built on them (`beta`, `dirichlet`,
//! `chisquare`, `f`, `t`, `generalized_normal`, `ball`), and `poisson` (Knuth's and
//! Hörmann's loops), `binomial` (inversion and BTRS) and `multinomial` (a `scan` of
//! binomials). Every loop, split and constant is JAX 0.10.2's, so the draws are JAX's.

use super::continuous::{exponential_traced, inexact, reciprocal};
use super::{
    float_dtype, normal, param, rademacher_traced, sample_shape, sampler, split, split_n, uniform,
};
use crate::core::array::Array;
use crate::dtype::DType;
use crate::ops::{where_, IntoArg};
use crate::transforms::loops::{scan, while_loop};
use crate::transforms::vmap::vmap;

/// The `i`-th of the keys `split` made (`u32[n, 2]`).
fn row(keys: &Array, i: usize) -> Array {
    keys.slice_axis(0, i, i + 1).reshape([2])
}

/// A float scalar of `dtype` (JAX's `lax._const(alpha, v)`).
fn lit(v: f64, dtype: DType) -> Array {
    Array::full(&[], v, dtype)
}

/// One Gamma(alpha, 1) draw for a scalar key and `alpha` (`_gamma_one`): Marsaglia and
/// Tsang's squeeze-and-reject loop on `alpha + 1` below 1, with the boost `u^(1/alpha)`.
fn gamma_one(key: &Array, alpha: &Array, log_space: bool) -> Array {
    let dtype = alpha.dtype();
    let (zero, one, minus_one) = (lit(0.0, dtype), lit(1.0, dtype), lit(-1.0, dtype));
    let boost_mask = alpha.ge(&one);
    let alpha_orig = alpha.clone();
    let alpha = where_(&boost_mask, alpha, alpha.add(&one));
    let d = alpha.sub(lit(1.0 / 3.0, dtype));
    let c = lit(1.0 / 3.0, dtype).div(d.sqrt());

    let (d_cond, one_cond) = (d.clone(), one.clone());
    let rejected = move |s: &(Array, Array, Array, Array)| {
        let (_, x, v, u) = s;
        let squeeze = u.ge(one_cond.sub(lit(0.0331, dtype).mul(x.mul(x))));
        let log_test = u.log().ge(x
            .mul(lit(0.5, dtype))
            .add(d_cond.mul(one_cond.sub(v).add(v.log()))));
        squeeze.bitwise_and(log_test)
    };
    let (zero_b, one_b, c_b) = (zero.clone(), one.clone(), c.clone());
    let propose = move |s: (Array, Array, Array, Array)| {
        let keys = split(&s.0, 3);
        let (key, x_key, u_key) = (row(&keys, 0), row(&keys, 1), row(&keys, 2));
        // A normal draw `x` with `v = 1 + c x` positive.
        let (one_i, c_i) = (one_b.clone(), c_b.clone());
        let (_, x, v) = while_loop(
            |s: &(Array, Array, Array)| s.2.le(0.0),
            move |s: (Array, Array, Array)| {
                let [key, subkey] = split_n::<2>(&s.0);
                let x = normal(&subkey, &[], dtype);
                let v = one_i.add(x.mul(&c_i));
                (key, x, v)
            },
            (x_key, zero_b.clone(), minus_one.clone()),
        );
        let big_x = x.mul(&x);
        let big_v = v.mul(&v).mul(&v);
        let u = uniform(&u_key, &[], dtype);
        (key, big_x, big_v, u)
    };
    let [key, subkey] = split_n::<2>(key);
    let init = (key, zero.clone(), one.clone(), lit(2.0, dtype));
    let (_, _, v, _) = while_loop(rejected, propose, init);
    if log_space {
        let log_samples = -exponential_traced(&subkey, &[], dtype);
        let no_boost = boost_mask.bitwise_or(log_samples.eq(0.0));
        let log_boost = where_(&no_boost, &zero, log_samples.mul(one.div(&alpha_orig)));
        d.log().add(v.log()).add(log_boost)
    } else {
        let samples = Array::full(&[], 1.0, dtype).sub(uniform(&subkey, &[], dtype));
        let boost = where_(&boost_mask, &one, samples.pow(one.div(&alpha_orig)));
        d.mul(&v).mul(boost)
    }
}

/// Gamma draws for `a` of the sample's shape and dtype (`random_gamma_p`): the draws of
/// [`gamma_draws`], differentiable in `a` by JAX's implicit reparameterization (the
/// derivative of a sample in `a` at fixed uniform noise, `random_gamma_grad`), so that
/// `grad` of a loss through `gamma`, `beta`, `dirichlet`, `chisquare`, `f` or `t` draws is
/// JAX's.
fn gamma_traced(key: &Array, a: &Array, log_space: bool) -> Array {
    // The key is an argument, not a capture: the rule runs in the backward pass too, where a
    // value captured from the forward trace would be a leaked tracer. Its tangent (an
    // integer's) is zero.
    crate::transforms::grad::custom_jvp(
        "random_gamma",
        move |(key, a): (Array, Array)| gamma_draws(&key, &a, log_space),
        move |(key, a): (Array, Array), (_, da): (Array, Array)| {
            let sample = gamma_draws(&key, &a, log_space);
            let slope = gamma_sample_derivative(&sample, &a, log_space);
            (sample, da.mul(slope))
        },
    )
    .call((key.clone(), a.clone()))
}

/// `_gamma_grad`: the derivative of a Gamma(a) sample in `a`; for log-space samples, of the
/// log (a sample that underflowed to 0 counts as the smallest normal float).
fn gamma_sample_derivative(sample: &Array, a: &Array, log_space: bool) -> Array {
    if log_space {
        let samples = sample.exp();
        let tiny = Array::full(
            samples.shape(),
            super::finfo(samples.dtype()).tiny,
            samples.dtype(),
        );
        let samples = where_(samples.eq(0.0), &tiny, &samples);
        crate::higher_order::special::random_gamma_grad(a, &samples).div(&samples)
    } else {
        crate::higher_order::special::random_gamma_grad(a, sample)
    }
}

/// The draws themselves: one key per element, split from `key`, and `gamma_one` vmapped over
/// the elements.
fn gamma_draws(key: &Array, a: &Array, log_space: bool) -> Array {
    let count = a.size();
    if count == 0 {
        return a.clone();
    }
    let keys = split(key, count);
    let alphas = a.reshape([count]);
    let one = vmap(
        move |(k, alpha): (Array, Array)| gamma_one(&k, &alpha, log_space),
        0,
        0,
    );
    one((keys, alphas)).reshape(a.shape().to_vec())
}

/// `a` converted to `dtype` and spread to `shape` (JAX's `_gamma` before the primitive).
fn spread(a: &Array, shape: &[usize], dtype: DType) -> Array {
    a.astype(dtype).broadcast_to(shape)
}

/// Gamma(a, 1) floats (`jax.random.gamma(key, a, shape, dtype)`), drawn by JAX's rejection
/// loop; `shape` defaults (`None`) to `a`'s.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let g = random::gamma(&random::key(0), 2.0, Some(&[100]), DType::F32);
/// assert!(g.to_vec::<f32>().iter().all(|&x| x > 0.0));
/// ```
#[track_caller]
pub fn gamma<'a>(key: &Array, a: impl IntoArg<'a>, shape: Option<&[usize]>, dtype: DType) -> Array {
    gamma_sampler("gamma", key, a, shape, dtype, false)
}

/// The log of Gamma(a, 1) draws (`jax.random.loggamma`), accurate for small `a` where the
/// draws themselves underflow to 0.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let lg = random::loggamma(&random::key(0), 0.01, Some(&[10]), DType::F32);
/// assert!(lg.to_vec::<f32>().iter().all(|x| x.is_finite()));
/// ```
#[track_caller]
pub fn loggamma<'a>(
    key: &Array,
    a: impl IntoArg<'a>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    gamma_sampler("loggamma", key, a, shape, dtype, true)
}

#[track_caller]
fn gamma_sampler<'a>(
    op: &str,
    key: &Array,
    a: impl IntoArg<'a>,
    shape: Option<&[usize]>,
    dtype: DType,
    log_space: bool,
) -> Array {
    float_dtype(op, dtype);
    let a = param(a, dtype);
    let shape = sample_shape(op, shape, &[&a]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler(op, statics, key, vec![a], move |key, p| {
        gamma_traced(key, &spread(&p[0], &shape, dtype), log_space)
    })
}

/// Beta(a, b) floats (`jax.random.beta`): two log-Gamma draws, normalised in log space.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::beta(&random::key(0), 2.0, 3.0, Some(&[100]), DType::F32);
/// assert!(x.to_vec::<f32>().iter().all(|&v| (0.0..=1.0).contains(&v)));
/// ```
#[track_caller]
pub fn beta<'a, 'b>(
    key: &Array,
    a: impl IntoArg<'a>,
    b: impl IntoArg<'b>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("beta", dtype);
    let (a, b) = (param(a, dtype), param(b, dtype));
    let shape = sample_shape("beta", shape, &[&a, &b]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("beta", statics, key, vec![a, b], move |key, p| {
        let [key_a, key_b] = split_n::<2>(key);
        let log_a = gamma_traced(&key_a, &spread(&p[0], &shape, dtype), true);
        let log_b = gamma_traced(&key_b, &spread(&p[1], &shape, dtype), true);
        let log_max = log_a.maximum(&log_b);
        let scaled_a = log_a.sub(&log_max).exp();
        let scaled_b = log_b.sub(&log_max).exp();
        scaled_a.div(scaled_a.add(&scaled_b))
    })
}

/// Dirichlet floats of concentrations `alpha` along its last axis (`jax.random.dirichlet`):
/// the softmax of log-Gamma draws. The result's shape is `shape` (default: `alpha`'s batch
/// shape) followed by the number of categories.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let alpha = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let x = random::dirichlet(&random::key(0), &alpha, Some(&[5]), DType::F32);
/// let sums = x.sum(-1, false).to_vec::<f32>();
/// assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-5));
/// ```
#[track_caller]
pub fn dirichlet(key: &Array, alpha: &Array, shape: Option<&[usize]>, dtype: DType) -> Array {
    float_dtype("dirichlet", dtype);
    if alpha.rank() == 0 {
        panic!("jaxrs::random::dirichlet: needs alpha.ndim >= 1, got a scalar alpha");
    }
    let batch = &alpha.shape()[..alpha.rank() - 1];
    let categories = alpha.shape()[alpha.rank() - 1];
    let batch_alpha = Array::zeros(batch, DType::F32);
    let mut shape = sample_shape("dirichlet", shape, &[&batch_alpha]);
    shape.push(categories);
    let statics = format!("{shape:?} {dtype:?}");
    sampler(
        "dirichlet",
        statics,
        key,
        vec![alpha.clone()],
        move |key, p| gamma_traced(key, &spread(&p[0], &shape, dtype), true).softmax(-1),
    )
}

/// Chi-squared floats of `df` degrees of freedom (`jax.random.chisquare`): twice a Gamma(df/2)
/// draw, through its log.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::chisquare(&random::key(0), 3.0, Some(&[100]), DType::F32);
/// assert!(x.to_vec::<f32>().iter().all(|&v| v >= 0.0));
/// ```
#[track_caller]
pub fn chisquare<'a>(
    key: &Array,
    df: impl IntoArg<'a>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("chisquare", dtype);
    let df = param(df, dtype);
    let shape = sample_shape("chisquare", shape, &[&df]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("chisquare", statics, key, vec![df], move |key, p| {
        chisquare_traced(key, &p[0], &shape, dtype)
    })
}

fn chisquare_traced(key: &Array, df: &Array, shape: &[usize], dtype: DType) -> Array {
    let half_df = df.astype(dtype).div(2.0);
    let log_g = gamma_traced(key, &spread(&half_df, shape, dtype), true);
    log_g.exp().mul(2.0)
}

/// F-distributed floats (`jax.random.f(key, dfnum, dfden, shape, dtype)`): the ratio of two
/// scaled chi-squared draws.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::f(&random::key(0), 4.0, 6.0, Some(&[100]), DType::F32);
/// assert!(x.to_vec::<f32>().iter().all(|&v| v >= 0.0));
/// ```
#[track_caller]
pub fn f<'a, 'b>(
    key: &Array,
    dfnum: impl IntoArg<'a>,
    dfden: impl IntoArg<'b>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("f", dtype);
    let (dfnum, dfden) = (param(dfnum, dtype), param(dfden, dtype));
    let shape = sample_shape("f", shape, &[&dfnum, &dfden]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("f", statics, key, vec![dfnum, dfden], move |key, p| {
        let (dfnum, dfden) = (p[0].astype(dtype), p[1].astype(dtype));
        let [key_dfd, key_dfn] = split_n::<2>(key);
        let chi2_dfn = chisquare_traced(&key_dfn, &dfnum, &shape, dtype);
        let chi2_dfd = chisquare_traced(&key_dfd, &dfden, &shape, dtype);
        chi2_dfn.div(&dfnum).div(chi2_dfd.div(&dfden))
    })
}

/// Student's t floats of `df` degrees of freedom (`jax.random.t`): a normal draw over the root
/// of a Gamma(df/2) draw scaled by df/2.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// assert_eq!(random::t(&random::key(0), 3.0, Some(&[7]), DType::F32).shape(), &[7]);
/// ```
#[track_caller]
pub fn t<'a>(key: &Array, df: impl IntoArg<'a>, shape: Option<&[usize]>, dtype: DType) -> Array {
    float_dtype("t", dtype);
    let df = param(df, dtype);
    let shape = sample_shape("t", shape, &[&df]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("t", statics, key, vec![df], move |key, p| {
        let df = p[0].astype(dtype);
        let [key_n, key_g] = split_n::<2>(key);
        let n = normal(&key_n, &shape, dtype);
        let half_df = df.div(2.0);
        let g = gamma_traced(&key_g, &spread(&half_df, &shape, dtype), false);
        n.mul(half_df.div(&g).sqrt())
    })
}

/// Generalized normal floats of exponent `p` (`jax.random.generalized_normal`), density
/// proportional to `exp(-|x|^p)`: a random sign times a Gamma(1/p) draw to the power `1/p`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// assert_eq!(random::generalized_normal(&random::key(0), 1.5, &[6], DType::F32).shape(), &[6]);
/// ```
#[track_caller]
pub fn generalized_normal(key: &Array, p: f64, shape: &[usize], dtype: DType) -> Array {
    float_dtype("generalized_normal", dtype);
    let p = param(p, dtype);
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?}");
    sampler(
        "generalized_normal",
        statics,
        key,
        vec![p],
        move |key, p| generalized_normal_traced(key, &p[0], &shape, dtype),
    )
}

fn generalized_normal_traced(key: &Array, p: &Array, shape: &[usize], dtype: DType) -> Array {
    let keys = split(key, 2);
    let inv_p = reciprocal(p);
    let g = gamma_traced(&row(&keys, 0), &spread(&inv_p, shape, dtype), false);
    let r = rademacher_traced(&row(&keys, 1), shape, dtype);
    r.mul(g.pow(&inv_p))
}

/// Points uniform in the unit `p`-norm ball of dimension `d` (`jax.random.ball(key, d, p,
/// shape, dtype)`); the result's shape is `shape` followed by `d`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = random::ball(&random::key(0), 3, 2.0, &[50], DType::F32);
/// let r2 = x.mul(&x).sum(-1, false).to_vec::<f32>();
/// assert!(r2.iter().all(|&v| v <= 1.0));
/// ```
#[track_caller]
pub fn ball(key: &Array, d: usize, p: f64, shape: &[usize], dtype: DType) -> Array {
    float_dtype("ball", dtype);
    let p = param(p, dtype);
    let shape = shape.to_vec();
    let statics = format!("{d} {shape:?} {dtype:?}");
    sampler("ball", statics, key, vec![p], move |key, params| {
        let p = &params[0];
        let [k1, k2] = split_n::<2>(key);
        let full: Vec<usize> = shape.iter().copied().chain(std::iter::once(d)).collect();
        let g = generalized_normal_traced(&k1, p, &full, dtype);
        let e = exponential_traced(&k2, &shape, dtype);
        let radius = g.abs().pow(p).sum(-1, false).add(&e).pow(reciprocal(p));
        g.div(radius.expand_dims(-1))
    })
}

/// The largest value of an integer dtype, as the iteration bound JAX gives its loops
/// (`iinfo(dtype).max`), capped at what the int32 counter can count to.
fn max_iters(dtype: DType) -> i64 {
    let max = match dtype {
        DType::I8 => i8::MAX as i64,
        DType::I16 => i16::MAX as i64,
        DType::U8 => u8::MAX as i64,
        DType::U16 => u16::MAX as i64,
        _ => i32::MAX as i64,
    };
    max.min(i32::MAX as i64)
}

/// Poisson counts of rate `lam` (`jax.random.poisson(key, lam, shape, dtype)`): Knuth's
/// product of uniforms below rate 10, Hörmann's transformed rejection above, each a
/// `while_loop` over the whole sample; `dtype` is an integer dtype, `lam` is computed in
/// float32 as in JAX.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let k = random::poisson(&random::key(0), 3.0, Some(&[100]), DType::I32).to_vec::<i32>();
/// assert!(k.iter().all(|&v| v >= 0));
/// ```
#[track_caller]
pub fn poisson<'a>(
    key: &Array,
    lam: impl IntoArg<'a>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    if !dtype.is_int() {
        panic!(
            "jaxrs::random::poisson: dtype must be an integer dtype, got {}",
            dtype.name()
        );
    }
    let lam = param(lam, DType::F32);
    let shape = sample_shape("poisson", shape, &[&lam]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("poisson", statics, key, vec![lam], move |key, p| {
        let lam = p[0].broadcast_to(&shape).astype(DType::F32);
        let use_knuth = lam.isnan().bitwise_or(lam.lt(10.0));
        let zeros = Array::zeros(&shape, DType::F32);
        let lam_knuth = where_(&use_knuth, &lam, &zeros);
        let lam_rejection = where_(&use_knuth, zeros.add(100000.0), &lam);
        let bound = max_iters(dtype);
        let knuth = poisson_knuth(key, &lam_knuth, &shape, dtype, bound);
        let rejection = poisson_rejection(key, &lam_rejection, &shape, dtype, bound);
        let result = where_(&use_knuth, &knuth, &rejection);
        where_(lam.eq(0.0), Array::zeros(&shape, dtype), &result)
    })
}

type Counted = (Array, Array, Array, Array);

fn poisson_knuth(key: &Array, lam: &Array, shape: &[usize], dtype: DType, bound: i64) -> Array {
    let (lam_c, lam_b) = (lam.clone(), lam.clone());
    let shape_b = shape.to_vec();
    let init: Counted = (
        Array::scalar(0i32),
        Array::zeros(shape, dtype),
        key.clone(),
        Array::zeros(shape, DType::F32),
    );
    let (_, k, _, _) = while_loop(
        move |s: &Counted| {
            let going = s.3.gt(-&lam_c).reduce_or(None);
            going.bitwise_and(s.0.lt(bound as i32))
        },
        move |(i, k, rng, log_prod): Counted| {
            let [rng, subkey] = split_n::<2>(&rng);
            let k = where_(log_prod.gt(-&lam_b), k.add(1), &k);
            let u = uniform(&subkey, &shape_b, DType::F32);
            (i.add(1), k, rng, log_prod.add(u.log()))
        },
        init,
    );
    k.sub(1).astype(dtype)
}

fn poisson_rejection(key: &Array, lam: &Array, shape: &[usize], dtype: DType, bound: i64) -> Array {
    let log_lam = lam.log();
    let b = lam.sqrt().mul(2.53).add(0.931);
    let a = b.mul(0.02483).add(-0.059);
    let inv_alpha = lit(1.1328, DType::F32).div(b.sub(3.4)).add(1.1239);
    let v_r = lit(0.9277, DType::F32).sub(lit(3.6224, DType::F32).div(b.sub(2.0)));
    let lam_b = lam.clone();
    let shape_b = shape.to_vec();
    let init: Counted = (
        Array::scalar(0i32),
        Array::full(shape, -1.0, DType::F32),
        Array::full(shape, 0.0, DType::Bool),
        key.clone(),
    );
    let (_, k, _, _) = while_loop(
        move |s: &Counted| {
            let pending = s.2.logical_not().reduce_or(None);
            pending.bitwise_and(s.0.lt(bound as i32))
        },
        move |(i, k_out, accepted, key): Counted| {
            let keys = split(&key, 3);
            let (key, k0, k1) = (row(&keys, 0), row(&keys, 1), row(&keys, 2));
            let u = uniform(&k0, &shape_b, DType::F32).sub(0.5);
            let v = uniform(&k1, &shape_b, DType::F32);
            let u_shifted = lit(0.5, DType::F32).sub(u.abs());
            let k = a
                .mul(2.0)
                .div(&u_shifted)
                .add(&b)
                .mul(&u)
                .add(&lam_b)
                .add(0.43)
                .floor();
            let s = v
                .mul(&inv_alpha)
                .div(a.div(u_shifted.mul(&u_shifted)).add(&b))
                .log();
            let t = (-&lam_b).add(k.mul(&log_lam)).sub(k.add(1.0).lgamma());
            let accept1 = u_shifted.ge(0.07).bitwise_and(v.le(&v_r));
            let reject = k
                .lt(0.0)
                .bitwise_or(u_shifted.lt(0.013).bitwise_and(v.gt(&u_shifted)));
            let accept2 = s.le(&t);
            let accept = accept1.bitwise_or(reject.logical_not().bitwise_and(accept2));
            let k_out = where_(&accept, &k, &k_out);
            (i.add(1), k_out, accepted.bitwise_or(&accept), key)
        },
        init,
    );
    k.astype(dtype)
}

/// Binomial counts of `n` trials of probability `p`, as floats of `dtype`
/// (`jax.random.binomial(key, n, p, shape, dtype)`): geometric inversion for small means,
/// the BTRS transformed rejection of Hörmann for large ones; NaN for invalid parameters and
/// inf for infinite `n`, as JAX's.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let k = random::binomial(&random::key(0), 10.0, 0.3, Some(&[100]), DType::F32);
/// assert!(k.to_vec::<f32>().iter().all(|&v| (0.0..=10.0).contains(&v)));
/// ```
#[track_caller]
pub fn binomial<'a, 'b>(
    key: &Array,
    n: impl IntoArg<'a>,
    p: impl IntoArg<'b>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("binomial", dtype);
    let (n, p) = (param(n, dtype), param(p, dtype));
    let shape = sample_shape("binomial", shape, &[&n, &p]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("binomial", statics, key, vec![n, p], move |key, a| {
        binomial_traced(key, &a[0], &a[1], &shape, dtype)
    })
}

fn binomial_traced(
    key: &Array,
    count: &Array,
    prob: &Array,
    shape: &[usize],
    dtype: DType,
) -> Array {
    let prob = inexact(prob);
    let pdt = prob.dtype();
    let count = count.astype(pdt).broadcast_to(shape);
    let prob = prob.broadcast_to(shape);
    let full = |v: f64| Array::full(shape, v, pdt);
    let p_lt_half = prob.lt(0.5);
    let q = where_(&p_lt_half, &prob, Array::full(&[], 1.0, pdt).sub(&prob));
    let count_nan_or_neg = count.isnan().bitwise_or(count.lt(0.0));
    let count_inf = count.isinf();
    let q_is_nan = q.isnan();
    let q_l_0 = q.lt(0.0);
    let q = where_(q_is_nan.bitwise_or(&q_l_0), full(0.01), &q);
    let use_inversion = count_nan_or_neg.bitwise_or(count.mul(&q).le(10.0));
    let count = count.floor();
    let count_inv = where_(&use_inversion, &count, full(0.0));
    let count_btrs = where_(&use_inversion, full(10000.0), &count);
    let q_btrs = where_(&use_inversion, full(0.5), &q);
    let inversion = binomial_inversion(key, &count_inv, &q, shape, dtype);
    let btrs = binomial_btrs(key, &count_btrs, &q_btrs, shape, dtype);
    let samples = where_(&use_inversion, &inversion, &btrs);
    let invalid = q_l_0.bitwise_or(&q_is_nan).bitwise_or(&count_nan_or_neg);
    let samples = where_(&invalid, Array::full(shape, f64::NAN, dtype), &samples);
    let infinite = count_inf.bitwise_and(invalid.logical_not());
    let samples = where_(
        &infinite,
        Array::full(shape, f64::INFINITY, dtype),
        &samples,
    );
    let keep = p_lt_half
        .bitwise_or(&count_nan_or_neg)
        .bitwise_or(&q_is_nan)
        .bitwise_or(&count_inf);
    where_(&keep, &samples, count.astype(dtype).sub(&samples))
}

type Geometric = (Array, Array, Array);

fn binomial_inversion(
    key: &Array,
    count: &Array,
    prob: &Array,
    shape: &[usize],
    dtype: DType,
) -> Array {
    let log1minusprob = (-prob).log1p();
    let (count_c, count_b) = (count.clone(), count.clone());
    let shape_b = shape.to_vec();
    let pdt = prob.dtype();
    let init: Geometric = (
        Array::zeros(shape, pdt),
        Array::zeros(shape, pdt),
        key.clone(),
    );
    // JAX's loop also stops after `finfo(dtype).max` iterations, which no loop reaches.
    let (num_geom, _, _) = while_loop(
        move |s: &Geometric| s.1.le(&count_c).reduce_or(None),
        move |(num_geom, geom_sum, key): Geometric| {
            let [subkey, key] = split_n::<2>(&key);
            let num_geom = where_(geom_sum.le(&count_b), num_geom.add(1.0), &num_geom);
            let u = uniform(&subkey, &shape_b, pdt);
            let geom = u.log().div(&log1minusprob).ceil();
            (num_geom, geom_sum.add(&geom), key)
        },
        init,
    );
    num_geom.sub(1.0).astype(dtype)
}

/// `_stirling_approx_tail`: the tail of Stirling's series of `log(k!)`, tabulated below 10.
fn stirling_tail(k: &Array) -> Array {
    const TAIL: [f64; 10] = [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.010411265261972,
        0.00925546218271273,
        0.00833056343336287,
    ];
    let dt = k.dtype();
    let table = Array::from_vec(TAIL.to_vec(), &[10]).astype(dt);
    let use_tail = k.le(9.0);
    let k = k.clip(0.0, 9.0);
    let kp1 = k.add(1.0);
    let kp1sq = kp1.mul(&kp1);
    let inner = lit(1.0 / 360.0, dt).sub(lit(1.0 / 1260.0, dt).div(&kp1sq));
    let approx = lit(1.0 / 12.0, dt).sub(inner.div(&kp1sq)).div(&kp1);
    let index = k.floor().astype(DType::I32);
    where_(&use_tail, table.take(&index, 0), &approx)
}

type Btrs = (Array, Array, Array);

fn binomial_btrs(key: &Array, count: &Array, prob: &Array, shape: &[usize], dtype: DType) -> Array {
    let pdt = prob.dtype();
    let one_minus = Array::full(&[], 1.0, pdt).sub(prob);
    let stddev = count.mul(prob).mul(&one_minus).sqrt();
    let b = stddev.mul(2.53).add(1.15);
    let a = b.mul(0.0248).add(-0.0873).add(prob.mul(0.01));
    let c = count.mul(prob).add(0.5);
    let v_r = lit(0.92, pdt).sub(lit(4.2, pdt).div(&b));
    let r = prob.div(&one_minus);
    let alpha = lit(5.1, pdt).div(&b).add(2.83).mul(&stddev);
    let m = count.add(1.0).mul(prob).floor();
    let (count_b, shape_b) = (count.clone(), shape.to_vec());
    let init: Btrs = (
        Array::full(shape, -1.0, pdt),
        Array::full(shape, 0.0, DType::Bool),
        key.clone(),
    );
    let (k, _, _) = while_loop(
        |s: &Btrs| s.1.logical_not().reduce_or(None),
        move |(k_out, accepted, key): Btrs| {
            let keys = split(&key, 3);
            let (key, k0, k1) = (row(&keys, 0), row(&keys, 1), row(&keys, 2));
            let u = uniform(&k0, &shape_b, pdt);
            let v = uniform(&k1, &shape_b, pdt);
            let u = u.sub(0.5);
            let us = lit(0.5, pdt).sub(u.abs());
            let accept1 = us.ge(0.07).bitwise_and(v.le(&v_r));
            let k = a.mul(2.0).div(&us).add(&b).mul(&u).add(&c).floor();
            let reject = k.lt(0.0).bitwise_or(k.gt(&count_b));
            let v = v.mul(&alpha).div(a.div(us.mul(&us)).add(&b)).log();
            let n = &count_b;
            let ub = m
                .add(0.5)
                .mul(m.add(1.0).div(r.mul(n.sub(&m).add(1.0))).log())
                .add(
                    n.add(1.0)
                        .mul(n.sub(&m).add(1.0).div(n.sub(&k).add(1.0)).log()),
                )
                .add(
                    k.add(0.5)
                        .mul(r.mul(n.sub(&k).add(1.0)).div(k.add(1.0)).log()),
                )
                .add(stirling_tail(&m))
                .add(stirling_tail(&n.sub(&m)))
                .sub(stirling_tail(&k))
                .sub(stirling_tail(&n.sub(&k)));
            let accept2 = v.le(&ub);
            let accept = accept1.bitwise_or(reject.logical_not().bitwise_and(accept2));
            let k_out = where_(&accept, &k, &k_out);
            (k_out, accepted.bitwise_or(&accept), key)
        },
        init,
    );
    k.astype(dtype)
}

/// Multinomial counts of `n` trials over the categories of `p`'s last axis, as floats of
/// `dtype` (`jax.random.multinomial(key, n, p, shape, dtype)`): a `scan` of conditional
/// binomials over the categories. `shape` defaults to `p`'s.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let p = Array::from_vec(vec![0.2f32, 0.3, 0.5], &[3]);
/// let counts = random::multinomial(&random::key(0), 10.0, &p, None, DType::F32);
/// assert_eq!(counts.sum(None, false).item::<f32>(), 10.0);
/// ```
#[track_caller]
pub fn multinomial<'a>(
    key: &Array,
    n: impl IntoArg<'a>,
    p: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    float_dtype("multinomial", dtype);
    let n = param(n, dtype);
    if p.rank() == 0 {
        panic!("jaxrs::random::multinomial: p must have at least one axis (the categories)");
    }
    let shape = shape.map_or_else(|| p.shape().to_vec(), |s| s.to_vec());
    if shape.is_empty() {
        panic!("jaxrs::random::multinomial: shape must have at least one axis (the categories)");
    }
    let statics = format!("{shape:?} {dtype:?}");
    sampler(
        "multinomial",
        statics,
        key,
        vec![n, p.clone()],
        move |key, a| {
            // `promote_dtypes_inexact(n, p)`: both in their common float dtype.
            let (common, _) = crate::dtype::lattice_result_type(&[
                (inexact(&a[0]).dtype(), a[0].is_weak()),
                (inexact(&a[1]).dtype(), a[1].is_weak()),
            ]);
            let n = a[0].astype(common).broadcast_to(&shape[..shape.len() - 1]);
            let p = a[1].astype(common).broadcast_to(&shape);
            let p = crate::interpreters::batching::moveaxis(&p, shape.len() - 1, 0);
            let remaining = p.flip([0usize]).cumsum(0).flip([0usize]);
            let ratios = p.div(where_(remaining.eq(0.0), 1.0, &remaining));
            let keys = split(key, ratios.shape()[0]);
            let (_, counts) = scan(
                |remainder: Array, (ratio, k): (Array, Array)| {
                    let rshape = crate::aval::broadcast_shapes(remainder.shape(), ratio.shape())
                        .expect("the scan's slices broadcast");
                    let clipped = ratio.clip(0.0, 1.0);
                    let count =
                        binomial_traced(&k, &remainder, &clipped, &rshape, remainder.dtype());
                    (remainder.sub(&count), count)
                },
                n,
                (ratios, keys),
            );
            crate::interpreters::batching::moveaxis(&counts, 0, shape.len() - 1).astype(dtype)
        },
    )
}
