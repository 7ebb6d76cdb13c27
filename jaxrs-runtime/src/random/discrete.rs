//! Bits, signs, counts and selections: `jax.random.bits`, `bernoulli` with an array of
//! probabilities, `rademacher`, `geometric`, `choice`, `permutation` of an array and
//! `categorical` with `shape` and `replace`, as JAX 0.10.2 draws them.

use super::continuous::{gumbel_traced, inexact, GumbelMode};
use super::{
    bits32, check_key, compiled, float_dtype, hash_counters, param, rademacher_traced,
    randint_traced, sample_shape, sampler, shuffle, shuffled_iota, uniform,
};
use crate::aval::{broadcast_shapes, normalize_axis};
use crate::core::array::Array;
use crate::core::ir::Literal;
use crate::core::trace::Operand;
use crate::dtype::DType;
use crate::interpreters::batching::moveaxis;
use crate::ops::{where_, IntoArg};

/// Random bits as unsigned integers (`jax.random.bits(key, shape, dtype)`); `dtype` is uint8,
/// uint16, uint32 or uint64 (64 bits from both words of the hash, as JAX's partitionable
/// threefry).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let b = random::bits(&random::key(0), &[2], DType::U32);
/// assert_eq!(b.dtype(), DType::U32);
/// ```
#[track_caller]
pub fn bits(key: &Array, shape: &[usize], dtype: DType) -> Array {
    if !matches!(dtype, DType::U8 | DType::U16 | DType::U32 | DType::U64) {
        panic!(
            "jaxrs::random::bits: dtype must be an unsigned integer dtype, got {}",
            dtype.name()
        );
    }
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?}");
    sampler("bits", statics, key, vec![], move |key, _| match dtype {
        DType::U64 => {
            let (hi, lo) = hash_counters("bits", key, &shape);
            let lit = Operand::Lit(Literal::int(32, DType::U64));
            hi.astype(DType::U64)
                .left_shift(lit)
                .bitwise_or(lo.astype(DType::U64))
        }
        DType::U32 => bits32("bits", key, &shape),
        narrow => bits32("bits", key, &shape).astype(narrow),
    })
}

/// `true` with probability `p`, elementwise over an array of probabilities
/// (`jax.random.bernoulli(key, p, shape)` with an array `p`): a uniform draw in `p`'s float
/// dtype below `p`. `shape` defaults (`None`) to `p`'s.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let p = Array::from_vec(vec![0.0f32, 1.0, 0.5], &[3]);
/// let b = random::bernoulli_array(&random::key(0), &p, None).to_vec::<bool>();
/// assert_eq!((b[0], b[1]), (false, true));
/// ```
#[track_caller]
pub fn bernoulli_array(key: &Array, p: &Array, shape: Option<&[usize]>) -> Array {
    let dtype = p.dtype();
    if !dtype.is_inexact() || dtype.is_complex() {
        panic!(
            "jaxrs::random::bernoulli_array: the probabilities must have a float dtype, got {}",
            dtype.name()
        );
    }
    let shape = sample_shape("bernoulli", shape, &[p]);
    let statics = format!("{shape:?}");
    sampler(
        "bernoulli_array",
        statics,
        key,
        vec![p.clone()],
        move |key, p| uniform(key, &shape, dtype).lt(&p[0]),
    )
}

/// Random signs, -1 or 1 with equal probability, as `dtype` (`jax.random.rademacher`).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let s = random::rademacher(&random::key(0), &[100], DType::I32).to_vec::<i32>();
/// assert!(s.iter().all(|&v| v == 1 || v == -1));
/// ```
#[track_caller]
pub fn rademacher(key: &Array, shape: &[usize], dtype: DType) -> Array {
    let shape = shape.to_vec();
    let statics = format!("{shape:?} {dtype:?}");
    sampler("rademacher", statics, key, vec![], move |key, _| {
        rademacher_traced(key, &shape, dtype)
    })
}

/// The number of trials up to the first success, each succeeding with probability `p`
/// (`jax.random.geometric(key, p, shape, dtype)`): `floor(log(u) / log1p(-p)) + 1`, as
/// `dtype` (an integer dtype); `shape` defaults to `p`'s.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let g = random::geometric(&random::key(0), 0.3, Some(&[50]), DType::I32).to_vec::<i32>();
/// assert!(g.iter().all(|&v| v >= 1));
/// ```
#[track_caller]
pub fn geometric<'a>(
    key: &Array,
    p: impl IntoArg<'a>,
    shape: Option<&[usize]>,
    dtype: DType,
) -> Array {
    if !dtype.is_int() {
        panic!(
            "jaxrs::random::geometric: dtype must be an integer dtype, got {}",
            dtype.name()
        );
    }
    let p = param(p, DType::F32);
    let shape = sample_shape("geometric", shape, &[&p]);
    let statics = format!("{shape:?} {dtype:?}");
    sampler("geometric", statics, key, vec![p], move |key, p| {
        let p = inexact(&p[0]);
        let u = uniform(key, &shape, p.dtype());
        let u = where_(u.eq(0), 1, &u);
        let log_one_minus_p = (-&p).log1p().broadcast_to(&shape);
        u.log().div(&log_one_minus_p).floor().add(1).astype(dtype)
    })
}

/// What [`choice`] draws from: a count `n` (the integers `0..n`) or the slices of an array
/// along an axis.
pub trait Population {
    /// The array, or `None` for a count.
    #[doc(hidden)]
    fn as_population(&self) -> (usize, Option<Array>);
}

impl Population for usize {
    fn as_population(&self) -> (usize, Option<Array>) {
        (*self, None)
    }
}

impl Population for i32 {
    fn as_population(&self) -> (usize, Option<Array>) {
        (usize::try_from(*self).unwrap_or(0), None)
    }
}

impl Population for i64 {
    fn as_population(&self) -> (usize, Option<Array>) {
        (usize::try_from(*self).unwrap_or(0), None)
    }
}

impl Population for &Array {
    fn as_population(&self) -> (usize, Option<Array>) {
        (0, Some((*self).clone()))
    }
}

impl Population for Array {
    fn as_population(&self) -> (usize, Option<Array>) {
        (0, Some(self.clone()))
    }
}

/// A random sample of `a` (`jax.random.choice(key, a, shape, replace, p, axis)`): of the
/// integers `0..a` for a count, of `a`'s slices along `axis` for an array, with or without
/// replacement, uniformly or with probabilities `p` (one per element of the population).
/// For an array the result's shape is `a`'s with `axis` replaced by `shape`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let draws = random::choice(&random::key(0), 5, &[3], false, None, 0).to_vec::<i32>();
/// assert!(draws[0] != draws[1] && draws[1] != draws[2] && draws[0] != draws[2]);
/// ```
#[track_caller]
pub fn choice(
    key: &Array,
    a: impl Population,
    shape: &[usize],
    replace: bool,
    p: Option<&Array>,
    axis: i64,
) -> Array {
    check_key("choice", key);
    let (count, arr) = a.as_population();
    let axis = match &arr {
        Some(arr) => normalize_axis(axis, arr.rank()).unwrap_or_else(|| {
            panic!(
                "jaxrs::random::choice: axis {axis} is out of bounds for an array of shape {:?}",
                arr.shape()
            )
        }),
        None => 0,
    };
    let n_inputs = arr.as_ref().map_or(count, |a| a.shape()[axis]);
    let n_draws: usize = shape.iter().product();
    let out_shape: Vec<usize> = match &arr {
        None => shape.to_vec(),
        Some(arr) => arr.shape()[..axis]
            .iter()
            .chain(shape)
            .chain(&arr.shape()[axis + 1..])
            .copied()
            .collect(),
    };
    if n_draws == 0 {
        let dtype = arr.as_ref().map_or(DType::I32, |a| a.dtype());
        return Array::zeros(&out_shape, dtype);
    }
    if n_inputs == 0 {
        panic!("jaxrs::random::choice: a must be greater than 0 unless no samples are taken");
    }
    if !replace && n_draws > n_inputs {
        panic!(
            "jaxrs::random::choice: cannot take a larger sample (size {n_draws}) than the \
             population (size {n_inputs}) when replace is false"
        );
    }
    if let Some(p) = p {
        if p.shape() != [n_inputs] {
            panic!(
                "jaxrs::random::choice: p must be a 1-D array with the population's size \
                 {n_inputs}; p has shape {:?}",
                p.shape()
            );
        }
    }
    let shape = shape.to_vec();
    let mut args = vec![key.clone()];
    args.extend(arr.clone());
    args.extend(p.cloned());
    let has_arr = arr.is_some();
    let has_p = p.is_some();
    let signature = format!("choice {n_inputs} {shape:?} {replace} {has_arr} {has_p} {axis}");
    compiled(signature, args, move |a| {
        let key = &a[0];
        let arr = has_arr.then(|| &a[1]);
        let p = has_p.then(|| inexact(&a[1 + has_arr as usize]));
        let indices = match (p, replace) {
            (None, true) => randint_traced(key, &shape, 0, n_inputs as i64, DType::I32),
            (None, false) => {
                let perm = shuffled_iota(key, n_inputs);
                perm.slice_axis(0, 0, n_draws).reshape(shape.clone())
            }
            (Some(p), true) => {
                let cumulative = p.cumsum(0);
                let total = cumulative
                    .slice_axis(0, n_inputs - 1, n_inputs)
                    .reshape(Vec::<usize>::new());
                let u = uniform(key, &shape, cumulative.dtype());
                let r = total.mul(Array::full(&[], 1.0, u.dtype()).sub(&u));
                // `jnp.searchsorted(cumulative, r)` (side "left") on a sorted array: the
                // number of its elements below each draw.
                let below = cumulative.lt(r.expand_dims(-1));
                below.astype(DType::I32).sum(-1, false).astype(DType::I32)
            }
            (Some(p), false) => {
                let g = gumbel_traced(key, &[n_inputs], p.dtype(), GumbelMode::Low).add(p.log());
                g.top_k(n_draws).1.reshape(shape.clone())
            }
        };
        match arr {
            None => indices,
            Some(arr) => arr.take(&indices, axis as i64),
        }
    })
}

/// A random permutation of `x` along `axis` (`jax.random.permutation(key, x, axis,
/// independent)`): the same reordering of every slice, or with `independent` each 1-D slice
/// along `axis` shuffled on its own. For a permutation of `0..n`, see
/// [`permutation`](super::permutation).
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
/// let rows = random::permutation_array(&random::key(0), &x, 0, false);
/// let mut sums: Vec<f32> = rows.sum(1, false).to_vec::<f32>();
/// sums.sort_by(f32::total_cmp);
/// assert_eq!(sums, vec![3.0, 7.0, 11.0]);
/// ```
#[track_caller]
pub fn permutation_array(key: &Array, x: &Array, axis: i64, independent: bool) -> Array {
    check_key("permutation", key);
    let rank = x.rank().max(1);
    let axis = normalize_axis(axis, rank).unwrap_or_else(|| {
        panic!(
            "jaxrs::random::permutation: axis {axis} is out of bounds for an array of shape {:?}",
            x.shape()
        )
    });
    if x.rank() == 0 {
        panic!("jaxrs::random::permutation: x must be at least 1-dimensional (or use permutation(key, n))");
    }
    let signature = format!("permutation_array {axis} {independent}");
    compiled(signature, vec![key.clone(), x.clone()], move |a| {
        let (key, x) = (&a[0], &a[1]);
        if independent || x.rank() == 1 {
            shuffle(key, x, axis)
        } else {
            let order = shuffled_iota(key, x.shape()[axis]);
            x.take(&order, axis as i64)
        }
    })
}

/// Options of [`categorical_with`], as `jax.random.categorical`'s keywords.
#[derive(Clone, Debug)]
pub struct CategoricalOptions<'a> {
    /// The axis of the categories (JAX's default: -1).
    pub axis: i64,
    /// The result's shape: `logits`'s shape without `axis`, optionally after leading
    /// dimensions of independent draws. `None` is that shape without leading dimensions.
    pub shape: Option<&'a [usize]>,
    /// Whether a category may be drawn more than once along the leading dimensions.
    pub replace: bool,
}

impl Default for CategoricalOptions<'_> {
    fn default() -> Self {
        CategoricalOptions {
            axis: -1,
            shape: None,
            replace: true,
        }
    }
}

/// Categories drawn with probabilities `softmax(logits)` along `options.axis`, with JAX's
/// `shape` and `replace` (`jax.random.categorical(key, logits, axis, shape, replace)`):
/// the leading dimensions of `shape` beyond the batch shape are independent draws, or, with
/// `replace: false`, draws without replacement (the Gumbel top-k trick). As int32.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random::{self, CategoricalOptions};
///
/// let logits = Array::zeros(&[4], DType::F32);
/// let opts = CategoricalOptions { shape: Some(&[4]), replace: false, ..Default::default() };
/// let mut c = random::categorical_with(&random::key(0), &logits, opts).to_vec::<i32>();
/// c.sort();
/// assert_eq!(c, vec![0, 1, 2, 3]);
/// ```
#[track_caller]
pub fn categorical_with(key: &Array, logits: &Array, options: CategoricalOptions) -> Array {
    check_key("categorical", key);
    let dtype = logits.dtype();
    float_dtype("categorical", dtype);
    let rank = logits.rank();
    let axis = normalize_axis(options.axis, rank).unwrap_or_else(|| {
        panic!(
            "jaxrs::random::categorical: axis {} is out of bounds for logits of shape {:?}",
            options.axis,
            logits.shape()
        )
    });
    let mut batch_shape = logits.shape().to_vec();
    let categories = batch_shape.remove(axis);
    let shape = match options.shape {
        None => batch_shape.clone(),
        Some(shape) => {
            if broadcast_shapes(shape, &batch_shape).as_deref() != Some(shape) {
                panic!(
                    "jaxrs::random::categorical: shape {shape:?} is not compatible with the \
                     logits' batch shape {batch_shape:?}"
                );
            }
            shape.to_vec()
        }
    };
    let prefix: Vec<usize> = shape[..shape.len() - batch_shape.len()].to_vec();
    let replace = options.replace;
    let draws: usize = prefix.iter().product();
    if !replace && draws > categories {
        panic!(
            "jaxrs::random::categorical: the number of samples without replacement ({draws}) \
             cannot exceed the number of categories ({categories})"
        );
    }
    let signature = format!("categorical_with {axis} {shape:?} {replace}");
    compiled(signature, vec![key.clone(), logits.clone()], move |a| {
        let (key, logits) = (&a[0], &a[1]);
        if replace {
            let mut logits_shape = shape[prefix.len()..].to_vec();
            logits_shape.insert(axis, categories);
            let full: Vec<usize> = prefix.iter().chain(&logits_shape).copied().collect();
            let mut expanded = logits.clone();
            for _ in 0..prefix.len() {
                expanded = expanded.expand_dims(0);
            }
            let noise = gumbel_traced(key, &full, dtype, GumbelMode::Low);
            noise
                .add(&expanded)
                .argmax((prefix.len() + axis) as i64, false)
        } else {
            let noisy = logits.add(gumbel_traced(key, logits.shape(), dtype, GumbelMode::Low));
            let last = moveaxis(&noisy, axis, rank - 1);
            let (_, indices) = last.top_k(draws);
            // The draws' axis (last) first, then the batch, reshaped to `shape`.
            let k_first = moveaxis(&indices, rank - 1, 0);
            k_first.reshape(shape.clone())
        }
    })
}
