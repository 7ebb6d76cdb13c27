//! Convolutions and window reductions as `jax.lax` names them: `conv_general_dilated` with
//! JAX's full argument list, its conveniences (`conv`, `conv_with_general_padding`,
//! `conv_transpose`, `conv_general_dilated_patches`, `conv_general_dilated_local`), the
//! dimension-number types and helpers, the shape tuples, and the generic `reduce_window`.
//!
//! All the array functions are composites over one convolution (or window reduction), so
//! they are differentiable to any order, batchable and jit-able through it.

use super::Precision;
use crate::numpy as jnp;
use crate::{Array, DType, DotDims, IntoArg};

pub use jaxrs_runtime::{
    conv_dimension_numbers, conv_general_permutations, ConvDimensionNumbers,
    ConvGeneralDilatedDimensionNumbers, Monoid, Padding,
};

/// `x` converted to `dtype` when asked and not already of it.
fn cast(x: &Array, dtype: Option<DType>) -> Array {
    match dtype {
        Some(dt) if x.dtype() != dt => x.astype(dt),
        _ => x.clone(),
    }
}

/// JAX's `core.dilate_dim`.
fn dilate_dim(d: usize, dilation: usize) -> usize {
    if d == 0 {
        0
    } else {
        1 + dilation * (d - 1)
    }
}

/// JAX's `core.stride_dim`: `max(0, (d - window) // stride + 1)`.
fn stride_dim(d: i64, window: usize, stride: usize) -> usize {
    let q = (d - window as i64).div_euclid(stride as i64) + 1;
    q.max(0) as usize
}

/// The padding string of a non-explicit [`Padding`].
fn padding_name(p: &Padding) -> Option<&'static str> {
    match p {
        Padding::Same => Some("SAME"),
        Padding::SameLower => Some("SAME_LOWER"),
        Padding::Valid => Some("VALID"),
        Padding::Explicit(_) => None,
    }
}

/// `padding` as explicit pairs for inputs of `in_shape`, windows of `window` at `strides`
/// (JAX's `padtype_to_pads` for the strings).
fn explicit_pads(
    padding: &Padding,
    in_shape: &[usize],
    window: &[usize],
    strides: &[usize],
) -> Vec<(i64, i64)> {
    match padding {
        Padding::Explicit(p) => p.clone(),
        other => super::padtype_to_pads(
            in_shape,
            window,
            strides,
            padding_name(other).expect("a string padding"),
        ),
    }
}

/// `lhs` convolved with `rhs` (`jax.lax.conv_general_dilated`), with JAX's whole argument
/// list: `window_strides`, `padding` ([`Padding`], `"SAME"`/`"SAME_LOWER"`/`"VALID"` or
/// explicit `(low, high)` pairs), `lhs_dilation` and `rhs_dilation` (empty: all 1, JAX's
/// `None`), `dimension_numbers` (`None`, a layout triple such as `("NHWC", "HWIO", "NHWC")`
/// or [`ConvDimensionNumbers`]), `feature_group_count`, `batch_group_count`, `precision` and
/// `preferred_element_type`. A string `padding` with `lhs_dilation` > 1 panics, as JAX
/// refuses it (use [`conv_transpose`]). The operands are converted to `preferred_element_type` first
/// (the accumulation and result dtype; on CPU that is what XLA does), and `precision` is
/// accepted for JAX's signature, as in [`dot_general`](super::dot_general).
///
/// `jaxrs::conv_general_dilated` (at the crate root) is the same convolution without the
/// last three arguments.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::arange(0.0, 16.0, 1.0, DType::F32).reshape([1, 1, 4, 4]); // NCHW
/// let w = Array::ones(&[1, 1, 2, 2], DType::F32); // OIHW
/// let y = lax::conv_general_dilated(&x, &w, &[2, 2], "VALID", &[], &[], None, 1, 1, None, None);
/// assert_eq!(y.to_vec::<f32>(), vec![10.0, 18.0, 42.0, 50.0]);
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
    dimension_numbers: impl Into<ConvGeneralDilatedDimensionNumbers>,
    feature_group_count: usize,
    batch_group_count: usize,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Array {
    let _ = precision;
    let padding = padding.into();
    if !matches!(padding, Padding::Explicit(_)) && lhs_dilation.iter().any(|&d| d != 1) {
        panic!(
            "lax.conv_general_dilated: String padding is not implemented for transposed convolution using this op. Please either exactly specify the required padding or use conv_transpose. (lhs {:?}, rhs {:?}, lhs_dilation {lhs_dilation:?})",
            lhs.shape(),
            rhs.shape()
        );
    }
    jaxrs_runtime::conv_general_dilated_grouped(
        &cast(lhs, preferred_element_type),
        &cast(rhs, preferred_element_type),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        feature_group_count,
        batch_group_count,
    )
}

/// A convolution in lax's default layout (`jax.lax.conv`): `lhs` is `NCHW...`, `rhs` is
/// `OIHW...`, no dilation; `padding` is `"SAME"`/`"VALID"` (or any [`Padding`]).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::ones(&[1, 2, 5, 5], DType::F32);
/// let w = Array::ones(&[3, 2, 3, 3], DType::F32);
/// assert_eq!(lax::conv(&x, &w, &[1, 1], "SAME", None, None).shape(), &[1, 3, 5, 5]);
/// ```
#[track_caller]
pub fn conv(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[usize],
    padding: impl Into<Padding>,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Array {
    conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        &[],
        &[],
        None,
        1,
        1,
        precision,
        preferred_element_type,
    )
}

/// A convolution in lax's default layout with padding and dilations
/// (`jax.lax.conv_with_general_padding`); empty dilations are JAX's `None`.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::ones(&[1, 1, 4], DType::F32);
/// let w = Array::ones(&[1, 1, 2], DType::F32);
/// let y = lax::conv_with_general_padding(&x, &w, &[1], [(1, 1)], &[], &[2], None, None);
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 2.0, 2.0, 1.0]);
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn conv_with_general_padding(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[usize],
    padding: impl Into<Padding>,
    lhs_dilation: &[usize],
    rhs_dilation: &[usize],
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Array {
    conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        None,
        1,
        1,
        precision,
        preferred_element_type,
    )
}

/// JAX's `_conv_transpose_padding`: the `(before, after)` padding of one dim of a
/// transposed convolution with kernel size `k` and stride `s`, for the forward convolution's
/// `"SAME"`/`"VALID"` or `(low, high)` padding.
#[track_caller]
fn conv_transpose_padding(k: usize, s: usize, padding: PadMode) -> (i64, i64) {
    let (k, s) = (k as i64, s as i64);
    let (pad_a, pad_len) = match padding {
        PadMode::Same => {
            let pad_len = k + s - 2;
            let pad_a = if s > k - 1 {
                k - 1
            } else {
                (pad_len + 1).div_euclid(2)
            };
            (pad_a, pad_len)
        }
        PadMode::Valid => (k - 1, k + s - 2 + (k - s).max(0)),
        PadMode::Pair(lo, hi) => (k - lo - 1, (k - lo - 1) + (k - hi - 1)),
    };
    (pad_a, pad_len - pad_a)
}

#[derive(Clone, Copy)]
enum PadMode {
    Same,
    Valid,
    Pair(i64, i64),
}

/// One [`PadMode`] per spatial dim of `padding`, for a transposed convolution.
#[track_caller]
fn transpose_modes(name: &str, padding: &Padding, n: usize) -> Vec<PadMode> {
    match padding {
        Padding::Same => vec![PadMode::Same; n],
        Padding::Valid => vec![PadMode::Valid; n],
        Padding::SameLower => panic!("{name}: Invalid padding mode: SAME_LOWER"),
        Padding::Explicit(p) => {
            if p.len() != n {
                panic!("{name}: padding {p:?} needs one (low, high) pair per spatial dim ({n})");
            }
            p.iter().map(|&(lo, hi)| PadMode::Pair(lo, hi)).collect()
        }
    }
}

/// The default layouts of `conv_transpose` (TensorFlow's), by rank.
#[track_caller]
fn transpose_default_dn(rank: usize) -> ConvGeneralDilatedDimensionNumbers {
    let (l, r) = match rank {
        2 => ("NC", "IO"),
        3 => ("NHC", "HIO"),
        4 => ("NHWC", "HWIO"),
        5 => ("NHWDC", "HWDIO"),
        _ => panic!("lax.conv_transpose: No 4+ dimensional dimension_number defaults."),
    };
    (l, r, l).into()
}

/// A transposed ("fractionally strided") convolution (`jax.lax.conv_transpose`): `lhs`
/// dilated by `strides` and convolved with `rhs` at unit stride, so that the output has
/// about `strides` times the input's spatial size.
///
/// - `padding`: `"SAME"`/`"VALID"` are the padding of the corresponding forward
///   convolution; explicit pairs are the transposed convolution's own padding, unless
///   `use_consistent_padding`, where they too are the forward convolution's (PyTorch's
///   behaviour).
/// - `dimension_numbers`: `None` is TensorFlow's layout for the rank (`("NHWC", "HWIO",
///   "NHWC")` for 2-D), unlike the other convolutions.
/// - `transpose_kernel`: flip the kernel's spatial dims and swap its input and output
///   feature dims, which makes this the gradient of a forward convolution with the same
///   kernel (as Keras's `Conv2DTranspose`).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::ones(&[1, 3, 3, 2], DType::F32); // NHWC
/// let w = Array::ones(&[3, 3, 2, 4], DType::F32); // HWIO
/// let y = lax::conv_transpose(&x, &w, &[2, 2], "SAME", &[], None, false, None, None, false);
/// assert_eq!(y.shape(), &[1, 6, 6, 4]);
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose(
    lhs: &Array,
    rhs: &Array,
    strides: &[usize],
    padding: impl Into<Padding>,
    rhs_dilation: &[usize],
    dimension_numbers: impl Into<ConvGeneralDilatedDimensionNumbers>,
    transpose_kernel: bool,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
    use_consistent_padding: bool,
) -> Array {
    let rank = lhs.rank();
    if rank != rhs.rank() || rank < 2 {
        panic!(
            "lax.conv_transpose: lhs and rhs need one rank of at least 2, got shapes {:?} and {:?}",
            lhs.shape(),
            rhs.shape()
        );
    }
    let n = rank - 2;
    let mut dn = dimension_numbers.into();
    if dn == ConvGeneralDilatedDimensionNumbers::Default {
        dn = transpose_default_dn(rank);
    }
    let dn = conv_dimension_numbers(lhs.shape(), rhs.shape(), dn);
    if strides.len() != n {
        panic!(
            "lax.conv_transpose: strides {strides:?} needs one entry per spatial dim ({n}) of lhs {:?}",
            lhs.shape()
        );
    }
    let rhs_dilation: Vec<usize> = if rhs_dilation.is_empty() {
        vec![1; n]
    } else {
        rhs_dilation.to_vec()
    };
    let padding = padding.into();
    let pads: Padding = if use_consistent_padding
        || matches!(padding, Padding::Same | Padding::Valid)
    {
        let modes = transpose_modes("lax.conv_transpose", &padding, n);
        let pairs: Vec<(i64, i64)> = dn.rhs_spec[2..]
            .iter()
            .zip(&rhs_dilation)
            .zip(strides)
            .zip(modes)
            .map(|(((&d, &r), &s), m)| conv_transpose_padding(dilate_dim(rhs.shape()[d], r), s, m))
            .collect();
        Padding::Explicit(pairs)
    } else {
        padding
    };
    let rhs = if transpose_kernel {
        rhs.flip(dn.rhs_spec[2..].to_vec())
            .swap_axes(dn.rhs_spec[0] as i64, dn.rhs_spec[1] as i64)
    } else {
        rhs.clone()
    };
    conv_general_dilated(
        lhs,
        &rhs,
        &vec![1; n],
        pads,
        strides,
        &rhs_dilation,
        dn,
        1,
        1,
        precision,
        preferred_element_type,
    )
}

/// The patches a convolution with a kernel of `filter_shape` sees
/// (`jax.lax.conv_general_dilated_patches`): the result is laid out as the convolution's
/// output, its feature dim holding each patch flattened, input channel major
/// (`c` then the spatial dims in the order of `dimension_numbers`' kernel string), so it has
/// `prod(filter_shape) * channels` features. Computed as one grouped convolution with an
/// identity kernel, as JAX does.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::arange(0.0, 4.0, 1.0, DType::F32).reshape([1, 1, 4]); // NCW
/// let p = lax::conv_general_dilated_patches(&x, &[2], &[1], "VALID", &[], &[], None, None, None);
/// assert_eq!(p.shape(), &[1, 2, 3]);
/// assert_eq!(p.to_vec::<f32>(), vec![0.0, 1.0, 2.0, 1.0, 2.0, 3.0]);
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn conv_general_dilated_patches(
    lhs: &Array,
    filter_shape: &[usize],
    window_strides: &[usize],
    padding: impl Into<Padding>,
    lhs_dilation: &[usize],
    rhs_dilation: &[usize],
    dimension_numbers: impl Into<ConvGeneralDilatedDimensionNumbers>,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Array {
    let mut kernel_shape = vec![1, 1];
    kernel_shape.extend_from_slice(filter_shape);
    let dn = conv_dimension_numbers(lhs.shape(), &kernel_shape, dimension_numbers);
    let spatial_size: usize = filter_shape.iter().product();
    let n_channels = lhs.shape()[dn.lhs_spec[1]];
    let eye = Array::eye(spatial_size, lhs.dtype());
    let rhs = super::broadcast_in_dim(&eye, &[n_channels, spatial_size, spatial_size], &[1, 2]);
    let mut shape = vec![n_channels * spatial_size, 1];
    shape.extend_from_slice(filter_shape);
    let rhs = rhs.reshape(shape);
    let rhs = jnp::moveaxis(
        &rhs,
        [0i64, 1],
        [dn.rhs_spec[0] as i64, dn.rhs_spec[1] as i64],
    );
    conv_general_dilated(
        lhs,
        &rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dn,
        n_channels,
        1,
        precision,
        preferred_element_type,
    )
}

/// An unshared convolution, a separate kernel at each output position
/// (`jax.lax.conv_general_dilated_local`, a locally connected layer): `rhs` has the kernel
/// layout of `dimension_numbers` with `I` of size `prod(filter_shape) * in_channels` and
/// spatial dims the output's. Computed as [`conv_general_dilated_patches`] then one
/// [`dot_general`](super::dot_general) batched over the output positions, as JAX does.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::arange(0.0, 4.0, 1.0, DType::F32).reshape([1, 1, 4]); // NCW
/// // One output channel, 2-wide windows at 3 positions, each with its own weights.
/// let w = Array::from_vec(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], &[1, 2, 3]); // OIW
/// let y = lax::conv_general_dilated_local(&x, &w, &[1], "VALID", &[2], &[], &[], None, None);
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 2.0, 3.0]); // JAX gives [[[1, 2, 3]]]
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn conv_general_dilated_local(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[usize],
    padding: impl Into<Padding>,
    filter_shape: &[usize],
    lhs_dilation: &[usize],
    rhs_dilation: &[usize],
    dimension_numbers: impl Into<ConvGeneralDilatedDimensionNumbers>,
    precision: Option<Precision>,
) -> Array {
    let dimension_numbers = dimension_numbers.into();
    let patches = conv_general_dilated_patches(
        lhs,
        filter_shape,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        &dimension_numbers,
        precision,
        None,
    );
    let mut kernel_shape = vec![1, 1];
    kernel_shape.extend_from_slice(filter_shape);
    let dn = conv_dimension_numbers(lhs.shape(), &kernel_shape, dimension_numbers);
    let out_spatial = &dn.out_spec[2..];
    let rhs_spatial = &dn.rhs_spec[2..];
    let mut order: Vec<usize> = (0..out_spatial.len()).collect();
    order.sort_by_key(|&k| out_spatial[k]);
    let rhs_batch: Vec<usize> = order.iter().map(|&k| rhs_spatial[k]).collect();
    let mut lhs_batch = out_spatial.to_vec();
    lhs_batch.sort_unstable();
    let dims = DotDims {
        lhs_contract: vec![dn.out_spec[1]],
        rhs_contract: vec![dn.rhs_spec[1]],
        lhs_batch,
        rhs_batch,
    };
    let out = super::dot_general(&patches, rhs, dims, precision, None);
    jnp::moveaxis(
        &out,
        [-2i64, -1],
        [dn.out_spec[0] as i64, dn.out_spec[1] as i64],
    )
}

/// The output shape of a convolution of operands in lax's canonical layout (`NC...`,
/// `OI...`) (`jax.lax.conv_shape_tuple`): `pads` is `"SAME"`/`"VALID"` or explicit pairs
/// (the kernel taken undilated, as JAX does).
///
/// ```
/// use jaxrs::lax;
///
/// assert_eq!(lax::conv_shape_tuple(&[2, 3, 9, 8], &[4, 3, 3, 2], &[2, 1], "SAME", 1), vec![2, 4, 5, 8]);
/// ```
#[track_caller]
pub fn conv_shape_tuple(
    lhs_shape: &[usize],
    rhs_shape: &[usize],
    strides: &[usize],
    pads: impl Into<Padding>,
    batch_group_count: usize,
) -> Vec<usize> {
    if lhs_shape.len() < 2
        || rhs_shape.len() != lhs_shape.len()
        || strides.len() != lhs_shape.len() - 2
    {
        panic!(
            "lax.conv_shape_tuple: shapes {lhs_shape:?} and {rhs_shape:?} need one rank and strides {strides:?} one entry per spatial dim"
        );
    }
    let n = lhs_shape.len() - 2;
    let pads = explicit_pads(&pads.into(), &lhs_shape[2..], &rhs_shape[2..], strides);
    if pads.len() != n {
        panic!(
            "lax.conv_shape_tuple: Wrong number of explicit pads for convolution: expected {n}, got {}.",
            pads.len()
        );
    }
    let padded: Vec<i64> = (0..n)
        .map(|i| lhs_shape[2 + i] as i64 + pads[i].0 + pads[i].1)
        .collect();
    if padded.iter().any(|&d| d < 0) {
        panic!(
            "lax.conv_shape_tuple: Negative padding is larger than the size of the corresponding dimension: got padding={pads:?} for lhs_shape[2:]={:?}",
            &lhs_shape[2..]
        );
    }
    let batch = if batch_group_count > 1 {
        assert!(
            lhs_shape[0].is_multiple_of(batch_group_count),
            "lax.conv_shape_tuple: batch_group_count {batch_group_count} must divide the batch {}",
            lhs_shape[0]
        );
        lhs_shape[0] / batch_group_count
    } else {
        lhs_shape[0]
    };
    let mut out = vec![batch, rhs_shape[0]];
    out.extend((0..n).map(|i| stride_dim(padded[i], rhs_shape[2 + i], strides[i])));
    out
}

fn take(shape: &[usize], perm: &[usize]) -> Vec<usize> {
    perm.iter().map(|&i| shape[i]).collect()
}

/// `canonical` (in `out_perm`'s order) laid out as the output: `result[out_perm[i]] =
/// canonical[i]` (JAX's `np.take(out_trans, np.argsort(out_perm))`).
fn untake(canonical: &[usize], out_perm: &[usize]) -> Vec<usize> {
    let mut out = vec![0; canonical.len()];
    for (i, &d) in out_perm.iter().enumerate() {
        out[d] = canonical[i];
    }
    out
}

/// The output shape of a convolution with layout strings (`jax.lax.conv_general_shape_tuple`):
/// [`conv_shape_tuple`] of the operands permuted by [`conv_general_permutations`], laid out
/// as the output string says.
///
/// ```
/// use jaxrs::lax;
///
/// let s = lax::conv_general_shape_tuple(&[2, 9, 8, 3], &[3, 2, 3, 4], &[2, 1], "SAME", ("NHWC", "HWIO", "NHWC"));
/// assert_eq!(s, vec![2, 5, 8, 4]);
/// ```
#[track_caller]
pub fn conv_general_shape_tuple(
    lhs_shape: &[usize],
    rhs_shape: &[usize],
    window_strides: &[usize],
    padding: impl Into<Padding>,
    dimension_numbers: (&str, &str, &str),
) -> Vec<usize> {
    let (lp, rp, op) = conv_general_permutations(dimension_numbers);
    let out = conv_shape_tuple(
        &take(lhs_shape, &lp),
        &take(rhs_shape, &rp),
        window_strides,
        padding,
        1,
    );
    untake(&out, &op)
}

/// The output shape of [`conv_transpose`] (`jax.lax.conv_transpose_shape_tuple`): per
/// spatial dim `(in - 1) * stride - kernel + 2` plus the padding's total, where
/// `"SAME"`/`"VALID"` are read as `conv_transpose` reads them and explicit pairs are summed
/// as they are (the kernel taken undilated, as JAX does).
///
/// ```
/// use jaxrs::lax;
///
/// let s = lax::conv_transpose_shape_tuple(&[1, 3, 3, 2], &[3, 3, 2, 4], &[2, 2], "SAME", ("NHWC", "HWIO", "NHWC"));
/// assert_eq!(s, vec![1, 6, 6, 4]);
/// ```
#[track_caller]
pub fn conv_transpose_shape_tuple(
    lhs_shape: &[usize],
    rhs_shape: &[usize],
    window_strides: &[usize],
    padding: impl Into<Padding>,
    dimension_numbers: (&str, &str, &str),
) -> Vec<usize> {
    let (lp, rp, op) = conv_general_permutations(dimension_numbers);
    let (lt, rt) = (take(lhs_shape, &lp), take(rhs_shape, &rp));
    let n = lt.len() - 2;
    if window_strides.len() != n {
        panic!(
            "lax.conv_transpose_shape_tuple: window_strides {window_strides:?} needs one entry per spatial dim ({n})"
        );
    }
    let padding = padding.into();
    let totals: Vec<i64> = match &padding {
        Padding::Explicit(p) => {
            if p.len() != n {
                panic!(
                    "lax.conv_transpose_shape_tuple: padding {p:?} needs one pair per spatial dim ({n})"
                );
            }
            p.iter().map(|&(lo, hi)| lo + hi).collect()
        }
        other => {
            let modes = transpose_modes("lax.conv_transpose_shape_tuple", other, n);
            (0..n)
                .map(|i| {
                    let (a, b) = conv_transpose_padding(rt[2 + i], window_strides[i], modes[i]);
                    a + b
                })
                .collect()
        }
    };
    let mut out = vec![lt[0], rt[0]];
    for i in 0..n {
        let d =
            (lt[2 + i] as i64 - 1) * window_strides[i] as i64 - rt[2 + i] as i64 + 2 + totals[i];
        if d < 0 {
            panic!(
                "lax.conv_transpose_shape_tuple: spatial dim {i} comes out negative ({d}) for shapes {lhs_shape:?} and {rhs_shape:?}"
            );
        }
        out.push(d as usize);
    }
    untake(&out, &op)
}

/// `xs`, or all 1 when empty (JAX's `None`), checked to have `n` entries.
#[track_caller]
fn ones_if_empty(name: &str, what: &str, xs: &[usize], n: usize) -> Vec<usize> {
    if xs.is_empty() {
        vec![1; n]
    } else if xs.len() != n {
        panic!("{name}: {what} {xs:?} needs one entry per dim ({n})");
    } else {
        xs.to_vec()
    }
}

/// The output shape of a window reduction (`jax.lax.reduce_window_shape_tuple`): explicit
/// `padding` pairs; empty strides and dilations are JAX's `None` (all 1).
///
/// ```
/// use jaxrs::lax;
///
/// let s = lax::reduce_window_shape_tuple(&[4, 6], &[2, 3], &[2, 1], &[(0, 0), (1, 1)], &[], &[]);
/// assert_eq!(s, vec![2, 6]);
/// ```
#[track_caller]
pub fn reduce_window_shape_tuple(
    operand_shape: &[usize],
    window_dimensions: &[usize],
    window_strides: &[usize],
    padding: &[(i64, i64)],
    base_dilation: &[usize],
    window_dilation: &[usize],
) -> Vec<usize> {
    let name = "lax.reduce_window_shape_tuple";
    let r = operand_shape.len();
    if window_dimensions.len() != r || window_strides.len() != r || padding.len() != r {
        panic!(
            "{name}: window_dimensions {window_dimensions:?}, window_strides {window_strides:?} and padding {padding:?} need one entry per dim of {operand_shape:?}"
        );
    }
    let base = ones_if_empty(name, "base_dilation", base_dilation, r);
    let wdil = ones_if_empty(name, "window_dilation", window_dilation, r);
    (0..r)
        .map(|i| {
            let padded = dilate_dim(operand_shape[i], base[i]) as i64 + padding[i].0 + padding[i].1;
            stride_dim(
                padded,
                dilate_dim(window_dimensions[i], wdil[i]),
                window_strides[i],
            )
        })
        .collect()
}

/// A reduction over sliding windows (`jax.lax.reduce_window`): every window of
/// `window_dimensions` (placed every `window_strides` elements of `operand` dilated by
/// `base_dilation`, the window itself dilated by `window_dilation`) folded with
/// `computation` starting from `init_value`, the padding and the dilation holes contributing
/// nothing (so `init_value` enters each window once, as XLA computes `ReduceWindow`). Empty strides and dilations are JAX's `None` (all
/// 1); `padding` is `"SAME"`/`"SAME_LOWER"`/`"VALID"` (JAX's default) or explicit pairs.
///
/// JAX takes any Python function as `computation`; jaxrs takes the monoids JAX recognises
/// ([`Monoid`]: `lax.add`, `lax.mul`, `lax.max`, `lax.min` and the bitwise ones). When
/// `init_value` is a concrete scalar equal to the monoid's identity this is one
/// `reduce_window_{sum,max,min,...}`, as in JAX; otherwise that reduction's result combined
/// with `init_value`.
/// Differentiable in `operand` for add, mul, max and min (JAX differentiates mul, and any
/// non-identity `init_value`, in forward mode only; jaxrs in both).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::arange(0.0, 10.0, 1.0, DType::F32);
/// let y = lax::reduce_window(&x, 1.0f32, lax::Monoid::Mul, &[2], &[], "VALID", &[], &[]);
/// assert_eq!(y.to_vec::<f32>(), vec![0.0, 2.0, 6.0, 12.0, 20.0, 30.0, 42.0, 56.0, 72.0]);
/// ```
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn reduce_window<'a>(
    operand: &Array,
    init_value: impl IntoArg<'a>,
    computation: Monoid,
    window_dimensions: &[usize],
    window_strides: &[usize],
    padding: impl Into<Padding>,
    base_dilation: &[usize],
    window_dilation: &[usize],
) -> Array {
    let name = "lax.reduce_window";
    let init = init_value.into_arg().to_array().into_owned();
    if init.rank() != 0 {
        panic!(
            "{name}: init_value must be a scalar, got shape {:?} for operand {:?}",
            init.shape(),
            operand.shape()
        );
    }
    // JAX's monoid fast path asks for a concrete init value equal to the identity.
    let is_identity = init.is_concrete()
        && init.to_f64_vec()[0] == Monoid::identity(computation, operand.dtype());
    let init = if init.is_weak() {
        init.astype(operand.dtype())
    } else if init.dtype() != operand.dtype() {
        panic!(
            "{name}: init_value's dtype {:?} differs from the operand's {:?}",
            init.dtype(),
            operand.dtype()
        );
    } else {
        init
    };
    let padding = padding.into();
    let r = operand.rank();
    if window_dimensions.len() != r {
        panic!(
            "{name}: window_dimensions {window_dimensions:?} needs one entry per dim of {:?}",
            operand.shape()
        );
    }
    let folded = jaxrs_runtime::reduce_window_monoid(
        operand,
        computation,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    );
    if is_identity {
        return folded;
    }
    computation.apply(&init, &folded)
}
