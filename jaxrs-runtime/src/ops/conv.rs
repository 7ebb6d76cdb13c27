//! Convolution and pooling in the style of `jax.lax`: `conv_general_dilated`,
//! `reduce_window_max`/`reduce_window_sum`, and flax's `max_pool`/`avg_pool` on top.

use super::linalg::promoted;
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::trace::{bind1, op_error, Operand};
use crate::prims::conv::{dilate_dim, ConvGeneralDilated, ConvSpecs};
use crate::prims::{ReduceOp, ReduceWindow};
use std::panic::Location;

/// How a convolution or a window reduction pads its input, as JAX's `padding` argument:
/// `Valid` (none), `Same` (the output has `ceil(input / stride)` elements, the extra padding
/// at the end when odd), `SameLower` (the extra at the start), or explicit `(low, high)`
/// pairs, one per spatial dim (negative values crop).
///
/// ```
/// use jaxrs::Padding;
///
/// let explicit: Padding = [(1, 1), (0, 2)].into();
/// assert_eq!(explicit, Padding::Explicit(vec![(1, 1), (0, 2)]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Padding {
    Valid,
    Same,
    SameLower,
    Explicit(Vec<(i64, i64)>),
}

impl From<Vec<(i64, i64)>> for Padding {
    fn from(p: Vec<(i64, i64)>) -> Padding {
        Padding::Explicit(p)
    }
}

impl From<&[(i64, i64)]> for Padding {
    fn from(p: &[(i64, i64)]) -> Padding {
        Padding::Explicit(p.to_vec())
    }
}

impl<const N: usize> From<[(i64, i64); N]> for Padding {
    fn from(p: [(i64, i64); N]) -> Padding {
        Padding::Explicit(p.to_vec())
    }
}

impl Padding {
    /// The explicit pairs for inputs of `in_shape` under windows of (dilated) `window` at
    /// `strides` (JAX's `padtype_to_pads`).
    fn pairs(&self, in_shape: &[usize], window: &[usize], strides: &[usize]) -> Vec<(i64, i64)> {
        let same = |lower: bool| -> Vec<(i64, i64)> {
            (0..in_shape.len())
                .map(|i| {
                    let out = in_shape[i].div_ceil(strides[i]) as i64;
                    let total = ((out - 1) * strides[i] as i64 + window[i] as i64
                        - in_shape[i] as i64)
                        .max(0);
                    let (small, big) = (total / 2, total - total / 2);
                    if lower {
                        (big, small)
                    } else {
                        (small, big)
                    }
                })
                .collect()
        };
        match self {
            Padding::Valid => vec![(0, 0); in_shape.len()],
            Padding::Same => same(false),
            Padding::SameLower => same(true),
            Padding::Explicit(p) => p.clone(),
        }
    }
}

/// Parses lax's dimension-number strings (`("NHWC", "HWIO", "NHWC")`) into where each role
/// lies (JAX's `conv_general_permutations`).
fn parse_specs(
    specs: (&str, &str, &str),
    rank: usize,
    avals: &[Aval],
    loc: &Location<'_>,
) -> ConvSpecs {
    let fail = |msg: String| -> ! { op_error("conv_general_dilated", &msg, avals, loc) };
    let (lhs, rhs, out) = specs;
    let chars: Vec<Vec<char>> = [lhs, rhs, out]
        .iter()
        .map(|s| s.chars().collect())
        .collect();
    let pairs = [('N', 'C'), ('O', 'I'), ('N', 'C')];
    for (s, (a, b)) in chars.iter().zip(pairs) {
        let text: String = s.iter().collect();
        if s.len() != rank {
            fail(format!(
                "dimension numbers {specs:?}: \"{text}\" has {} letters for operands of rank {rank}",
                s.len()
            ));
        }
        let distinct = s.iter().collect::<std::collections::HashSet<_>>().len() == s.len();
        if !distinct || !s.contains(&a) || !s.contains(&b) {
            fail(format!(
                "dimension numbers {specs:?}: \"{text}\" must hold '{a}' and '{b}' once each and no repeated letter"
            ));
        }
    }
    let spatial = |s: &[char], (a, b): (char, char)| -> Vec<char> {
        s.iter().copied().filter(|&c| c != a && c != b).collect()
    };
    let rhs_spatial = spatial(&chars[1], pairs[1]);
    let mut sorted_rhs = rhs_spatial.clone();
    sorted_rhs.sort_unstable();
    for (s, pair) in [(&chars[0], pairs[0]), (&chars[2], pairs[2])] {
        let mut sp = spatial(s, pair);
        sp.sort_unstable();
        if sp != sorted_rhs {
            fail(format!(
                "dimension numbers {specs:?} must name the same spatial dims in all three"
            ));
        }
    }
    let perm = |s: &[char], (a, b): (char, char)| -> Vec<usize> {
        let pos = |c: char| s.iter().position(|&x| x == c).expect("checked above");
        let mut p = vec![pos(a), pos(b)];
        p.extend(rhs_spatial.iter().map(|&c| pos(c)));
        p
    };
    ConvSpecs {
        lhs: perm(&chars[0], pairs[0]),
        rhs: perm(&chars[1], pairs[1]),
        out: perm(&chars[2], pairs[2]),
    }
}

/// A general convolution (`jax.lax.conv_general_dilated`): `lhs` (the input) convolved with
/// `rhs` (the kernel), in the cross-correlation convention of deep learning.
///
/// - `window_strides`, `lhs_dilation`, `rhs_dilation`: one entry per spatial dim (an empty
///   slice means all 1). `lhs_dilation` > 1 is a transposed convolution, `rhs_dilation` > 1
///   an atrous one.
/// - `padding`: [`Padding::Same`], [`Padding::Valid`] or explicit `(low, high)` pairs.
/// - `dimension_numbers`: the layouts of input, kernel and output as lax's strings
///   (`N`/`C` batch and features, `O`/`I` the kernel's output and input features, other
///   letters spatial), e.g. `Some(("NHWC", "HWIO", "NHWC"))` as flax uses; `None` is lax's
///   default `("NCHW", "OIHW", "NCHW")` (any number of spatial dims).
/// - `feature_group_count`: grouped convolution (`in_features` for a depthwise one).
///
/// Differentiable in both operands (to any order), batchable, and jit-able.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{conv_general_dilated, Padding};
///
/// // One image 4x4 with one channel (NHWC), a 2x2 kernel summing its window (HWIO).
/// let x = Array::arange(0.0, 16.0, 1.0, DType::F32).reshape([1, 4, 4, 1]);
/// let w = Array::ones(&[2, 2, 1, 1], DType::F32);
/// let y = conv_general_dilated(
///     &x, &w, &[2, 2], Padding::Valid, &[], &[], Some(("NHWC", "HWIO", "NHWC")), 1,
/// );
/// assert_eq!(y.shape(), &[1, 2, 2, 1]);
/// assert_eq!(y.to_vec::<f32>(), vec![10.0, 18.0, 42.0, 50.0]);
///
/// let same = conv_general_dilated(
///     &x, &w, &[1, 1], Padding::Same, &[], &[], Some(("NHWC", "HWIO", "NHWC")), 1,
/// );
/// assert_eq!(same.shape(), &[1, 4, 4, 1]);
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn conv_general_dilated(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[usize],
    padding: impl Into<Padding>,
    lhs_dilation: &[usize],
    rhs_dilation: &[usize],
    dimension_numbers: Option<(&str, &str, &str)>,
    feature_group_count: usize,
) -> Array {
    let loc = Location::caller();
    let (lhs, rhs) = promoted(lhs, rhs);
    let avals = [lhs.aval().clone(), rhs.aval().clone()];
    let fail = |msg: &str| -> ! { op_error("conv_general_dilated", msg, &avals, loc) };
    let rank = lhs.rank();
    if rank != rhs.rank() {
        fail("lhs and rhs must have the same rank");
    }
    if rank < 3 {
        fail("operands need a batch, a feature and at least one spatial dim");
    }
    let n = rank - 2;
    let specs = match dimension_numbers {
        Some(s) => parse_specs(s, rank, &avals, loc),
        None => ConvSpecs {
            lhs: (0..rank).collect(),
            rhs: (0..rank).collect(),
            out: (0..rank).collect(),
        },
    };
    let ones_if_empty = |what: &str, xs: &[usize]| -> Vec<usize> {
        if xs.is_empty() {
            vec![1; n]
        } else if xs.len() != n {
            fail(&format!(
                "{what} has {} entries for {n} spatial dims",
                xs.len()
            ))
        } else {
            xs.to_vec()
        }
    };
    let window_strides = ones_if_empty("window_strides", window_strides);
    let lhs_dilation = ones_if_empty("lhs_dilation", lhs_dilation);
    let rhs_dilation = ones_if_empty("rhs_dilation", rhs_dilation);
    if window_strides.contains(&0) || rhs_dilation.contains(&0) {
        fail("strides and dilations must be positive");
    }
    let in_spatial: Vec<usize> = specs.lhs[2..].iter().map(|&d| lhs.shape()[d]).collect();
    let window: Vec<usize> = specs.rhs[2..]
        .iter()
        .zip(&rhs_dilation)
        .map(|(&d, &r)| dilate_dim(rhs.shape()[d], r))
        .collect();
    let padding = padding.into().pairs(&in_spatial, &window, &window_strides);
    let prim = ConvGeneralDilated {
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        specs,
        feature_group_count,
        batch_group_count: 1,
    };
    bind1(prim, &[Operand::from(&lhs), Operand::from(&rhs)])
}

#[track_caller]
fn reduce_window(
    name: &str,
    op: ReduceOp,
    x: &Array,
    window_dimensions: &[usize],
    window_strides: &[usize],
    padding: Padding,
) -> Array {
    let loc = Location::caller();
    let r = x.rank();
    let fail = |msg: String| -> ! { op_error(name, &msg, &[x.aval().clone()], loc) };
    if window_dimensions.len() != r {
        fail(format!(
            "window_dimensions {window_dimensions:?} needs one entry per dim ({r})"
        ));
    }
    let window_strides = if window_strides.is_empty() {
        vec![1; r]
    } else if window_strides.len() != r {
        fail(format!(
            "window_strides {window_strides:?} needs one entry per dim ({r})"
        ))
    } else {
        window_strides.to_vec()
    };
    if window_strides.contains(&0) {
        fail("strides must be positive".into());
    }
    let padding = padding.pairs(x.shape(), window_dimensions, &window_strides);
    let prim = ReduceWindow {
        op,
        window_dimensions: window_dimensions.to_vec(),
        window_strides,
        padding,
        base_dilation: vec![1; r],
        window_dilation: vec![1; r],
    };
    bind1(prim, &[Operand::from(x)])
}

/// The largest element of every window (`lax.reduce_window` with `lax.max`): one window
/// size and stride per dim of `x` (empty strides: all 1), padding with `-inf`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{reduce_window_max, Padding};
///
/// let x = Array::from_vec(vec![1.0f32, 5.0, 2.0, 4.0, 3.0, 0.0], &[6]);
/// let y = reduce_window_max(&x, &[2], &[2], Padding::Valid);
/// assert_eq!(y.to_vec::<f32>(), vec![5.0, 4.0, 3.0]);
/// ```
#[track_caller]
pub fn reduce_window_max(
    x: &Array,
    window_dimensions: &[usize],
    window_strides: &[usize],
    padding: impl Into<Padding>,
) -> Array {
    reduce_window(
        "reduce_window_max",
        ReduceOp::Max,
        x,
        window_dimensions,
        window_strides,
        padding.into(),
    )
}

/// The sum of every window (`lax.reduce_window` with `lax.add`): one window size and stride
/// per dim of `x` (empty strides: all 1), padding with zeros.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{reduce_window_sum, Padding};
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]);
/// let y = reduce_window_sum(&x, &[2], &[1], Padding::Same);
/// assert_eq!(y.to_vec::<f32>(), vec![3.0, 5.0, 7.0, 4.0]);
/// ```
#[track_caller]
pub fn reduce_window_sum(
    x: &Array,
    window_dimensions: &[usize],
    window_strides: &[usize],
    padding: impl Into<Padding>,
) -> Array {
    reduce_window(
        "reduce_window_sum",
        ReduceOp::Sum,
        x,
        window_dimensions,
        window_strides,
        padding.into(),
    )
}

/// Flax's pooling layout: windows over the dims before the last (features), none over the
/// leading batch dims. Returns the full window dims, strides and padding.
#[track_caller]
fn pool_config(
    name: &str,
    x: &Array,
    window_shape: &[usize],
    strides: &[usize],
    padding: Padding,
) -> (Vec<usize>, Vec<usize>, Padding) {
    let loc = Location::caller();
    let k = window_shape.len();
    if x.rank() < k + 1 {
        op_error(
            name,
            &format!(
                "a window of {k} dims needs an input of rank at least {}",
                k + 1
            ),
            &[x.aval().clone()],
            loc,
        );
    }
    if !strides.is_empty() && strides.len() != k {
        op_error(
            name,
            &format!("strides {strides:?} needs one entry per window dim ({k})"),
            &[x.aval().clone()],
            loc,
        );
    }
    let batch = x.rank() - k - 1;
    let mut dims = vec![1; batch];
    dims.extend_from_slice(window_shape);
    dims.push(1);
    let mut full_strides = vec![1; batch];
    if strides.is_empty() {
        full_strides.extend(std::iter::repeat_n(1, k));
    } else {
        full_strides.extend_from_slice(strides);
    }
    full_strides.push(1);
    let padding = match padding {
        Padding::Explicit(p) => {
            if p.len() != k {
                op_error(
                    name,
                    &format!("padding {p:?} needs one pair per window dim ({k})"),
                    &[x.aval().clone()],
                    loc,
                );
            }
            let mut full = vec![(0, 0); batch];
            full.extend(p);
            full.push((0, 0));
            Padding::Explicit(full)
        }
        other => other,
    };
    (dims, full_strides, padding)
}

/// Max pooling as flax's `nn.max_pool`: `x` is `[batch..., spatial..., features]`, the
/// window (`window_shape`, `strides`; empty strides: all 1) slides over the spatial dims.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{max_pool, Padding};
///
/// let x = Array::arange(0.0, 16.0, 1.0, DType::F32).reshape([1, 4, 4, 1]); // NHWC
/// let y = max_pool(&x, &[2, 2], &[2, 2], Padding::Valid);
/// assert_eq!(y.shape(), &[1, 2, 2, 1]);
/// assert_eq!(y.to_vec::<f32>(), vec![5.0, 7.0, 13.0, 15.0]);
/// ```
#[track_caller]
pub fn max_pool(
    x: &Array,
    window_shape: &[usize],
    strides: &[usize],
    padding: impl Into<Padding>,
) -> Array {
    let (dims, strides, padding) =
        pool_config("max_pool", x, window_shape, strides, padding.into());
    reduce_window("max_pool", ReduceOp::Max, x, &dims, &strides, padding)
}

/// Average pooling as flax's `nn.avg_pool` (with `count_include_pad=True`): the window sum
/// divided by the window size, padded elements counting as zeros. Layout as [`max_pool`].
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::{avg_pool, Padding};
///
/// let x = Array::arange(0.0, 16.0, 1.0, DType::F32).reshape([1, 4, 4, 1]); // NHWC
/// let y = avg_pool(&x, &[2, 2], &[2, 2], Padding::Valid);
/// assert_eq!(y.to_vec::<f32>(), vec![2.5, 4.5, 10.5, 12.5]);
/// ```
#[track_caller]
pub fn avg_pool(
    x: &Array,
    window_shape: &[usize],
    strides: &[usize],
    padding: impl Into<Padding>,
) -> Array {
    let (dims, strides, padding) =
        pool_config("avg_pool", x, window_shape, strides, padding.into());
    let sum = reduce_window("avg_pool", ReduceOp::Sum, x, &dims, &strides, padding);
    let size: usize = window_shape.iter().product();
    sum / size as f64
}
