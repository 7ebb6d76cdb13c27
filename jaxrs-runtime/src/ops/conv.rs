//! Convolution and pooling in the style of `jax.lax`: `conv_general_dilated`,
//! `reduce_window_max`/`reduce_window_sum`, and flax's `max_pool`/`avg_pool` on top.

use super::linalg::promoted;
use crate::core::array::Array;
use crate::core::trace::{bind1, op_error, Operand};
use crate::dtype::DType;
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

impl From<&str> for Padding {
    /// JAX's padding strings, in any case: `"SAME"`, `"SAME_LOWER"` or `"VALID"`.
    #[track_caller]
    fn from(p: &str) -> Padding {
        match p.to_ascii_uppercase().as_str() {
            "SAME" => Padding::Same,
            "SAME_LOWER" => Padding::SameLower,
            "VALID" => Padding::Valid,
            _ => panic!("padding: unknown padding string {p:?} (SAME, SAME_LOWER or VALID)"),
        }
    }
}

impl From<String> for Padding {
    #[track_caller]
    fn from(p: String) -> Padding {
        Padding::from(p.as_str())
    }
}

impl From<&Padding> for Padding {
    fn from(p: &Padding) -> Padding {
        p.clone()
    }
}

/// Where the batch, feature and spatial dims of a convolution's operands and result lie
/// (`lax.ConvDimensionNumbers`, a namedtuple in JAX): `lhs_spec` is `(batch dim, feature dim,
/// spatial dims...)` of the input, `rhs_spec` `(out feature dim, in feature dim, spatial
/// dims...)` of the kernel, `out_spec` `(batch dim, feature dim, spatial dims...)` of the
/// result; the spatial dims of all three are listed in one order.
///
/// ```
/// use jaxrs::lax;
///
/// let dn = lax::conv_dimension_numbers(&[1, 5, 5, 3], &[3, 3, 3, 8], ("NHWC", "HWIO", "NHWC"));
/// assert_eq!(dn, lax::ConvDimensionNumbers::new([0, 3, 1, 2], [3, 2, 0, 1], [0, 3, 1, 2]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConvDimensionNumbers {
    pub lhs_spec: Vec<usize>,
    pub rhs_spec: Vec<usize>,
    pub out_spec: Vec<usize>,
}

impl ConvDimensionNumbers {
    /// The dimension numbers from the three specs (JAX's `ConvDimensionNumbers(lhs_spec,
    /// rhs_spec, out_spec)`).
    pub fn new(
        lhs_spec: impl Into<Vec<usize>>,
        rhs_spec: impl Into<Vec<usize>>,
        out_spec: impl Into<Vec<usize>>,
    ) -> ConvDimensionNumbers {
        ConvDimensionNumbers {
            lhs_spec: lhs_spec.into(),
            rhs_spec: rhs_spec.into(),
            out_spec: out_spec.into(),
        }
    }
}

/// The forms of a convolution's `dimension_numbers` argument
/// (`lax.ConvGeneralDilatedDimensionNumbers`, in JAX the union `None | (str, str, str) |
/// ConvDimensionNumbers`): `Default` is lax's `("NCHW", "OIHW", "NCHW")` for any number of
/// spatial dims, `Strings` a layout triple such as `("NHWC", "HWIO", "NHWC")` (`N`/`C` batch
/// and features, `O`/`I` the kernel's output and input features, other letters spatial),
/// `Numbers` explicit [`ConvDimensionNumbers`].
///
/// Functions taking it take `impl Into<ConvGeneralDilatedDimensionNumbers>`, so `None`,
/// `Some(("NHWC", "HWIO", "NHWC"))`, `("NHWC", "HWIO", "NHWC")` and a `ConvDimensionNumbers`
/// all work where JAX accepts them.
///
/// ```
/// use jaxrs::lax::ConvGeneralDilatedDimensionNumbers as Dn;
///
/// assert_eq!(Dn::from(None), Dn::Default);
/// let s: Dn = ("NWC", "WIO", "NWC").into();
/// assert_eq!(s, Dn::Strings("NWC".into(), "WIO".into(), "NWC".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum ConvGeneralDilatedDimensionNumbers {
    #[default]
    Default,
    Strings(String, String, String),
    Numbers(ConvDimensionNumbers),
}

impl From<(&str, &str, &str)> for ConvGeneralDilatedDimensionNumbers {
    fn from((l, r, o): (&str, &str, &str)) -> Self {
        ConvGeneralDilatedDimensionNumbers::Strings(l.into(), r.into(), o.into())
    }
}

impl From<(String, String, String)> for ConvGeneralDilatedDimensionNumbers {
    fn from((l, r, o): (String, String, String)) -> Self {
        ConvGeneralDilatedDimensionNumbers::Strings(l, r, o)
    }
}

impl From<Option<(&str, &str, &str)>> for ConvGeneralDilatedDimensionNumbers {
    fn from(d: Option<(&str, &str, &str)>) -> Self {
        d.map_or(ConvGeneralDilatedDimensionNumbers::Default, Into::into)
    }
}

impl From<ConvDimensionNumbers> for ConvGeneralDilatedDimensionNumbers {
    fn from(d: ConvDimensionNumbers) -> Self {
        ConvGeneralDilatedDimensionNumbers::Numbers(d)
    }
}

impl From<&ConvDimensionNumbers> for ConvGeneralDilatedDimensionNumbers {
    fn from(d: &ConvDimensionNumbers) -> Self {
        ConvGeneralDilatedDimensionNumbers::Numbers(d.clone())
    }
}

impl From<&ConvGeneralDilatedDimensionNumbers> for ConvGeneralDilatedDimensionNumbers {
    fn from(d: &ConvGeneralDilatedDimensionNumbers) -> Self {
        d.clone()
    }
}

/// Where each role lies in the lhs, rhs and output (JAX's `(lhs_perm, rhs_perm, out_perm)`).
type Perms = (Vec<usize>, Vec<usize>, Vec<usize>);

/// JAX's `conv_general_permutations`, as a `Result` with JAX's messages.
fn permutations(specs: (&str, &str, &str)) -> Result<Perms, String> {
    let (lhs, rhs, out) = specs;
    let chars: Vec<Vec<char>> = [lhs, rhs, out]
        .iter()
        .map(|s| s.chars().collect())
        .collect();
    let pairs = [('N', 'C'), ('O', 'I'), ('N', 'C')];
    for (i, (s, (a, b))) in chars.iter().zip(pairs).enumerate() {
        let text: String = s.iter().collect();
        let count = |c: char| s.iter().filter(|&&x| x == c).count();
        if count(a) != 1 || count(b) != 1 {
            return Err(format!(
                "convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' exactly once, got {text}"
            ));
        }
        let distinct = s.iter().collect::<std::collections::HashSet<_>>().len() == s.len();
        if !distinct {
            return Err(format!(
                "convolution dimension_numbers[{i}] cannot have duplicate characters, got {text}"
            ));
        }
    }
    let spatial = |s: &[char], (a, b): (char, char)| -> std::collections::BTreeSet<char> {
        s.iter().copied().filter(|&c| c != a && c != b).collect()
    };
    let rhs_set = spatial(&chars[1], pairs[1]);
    if spatial(&chars[0], pairs[0]) != rhs_set || spatial(&chars[2], pairs[2]) != rhs_set {
        return Err(format!(
            "convolution dimension_numbers elements must each have the same set of spatial characters, got {specs:?}"
        ));
    }
    let rhs_spatial: Vec<char> = chars[1]
        .iter()
        .copied()
        .filter(|&c| c != 'O' && c != 'I')
        .collect();
    let perm = |s: &[char], (a, b): (char, char)| -> Vec<usize> {
        let pos = |c: char| s.iter().position(|&x| x == c).expect("checked above");
        let mut p = vec![pos(a), pos(b)];
        p.extend(rhs_spatial.iter().map(|&c| pos(c)));
        p
    };
    Ok((
        perm(&chars[0], pairs[0]),
        perm(&chars[1], pairs[1]),
        perm(&chars[2], pairs[2]),
    ))
}

/// Where each role lies for lax's layout strings (`lax.conv_general_permutations`): the
/// `(lhs_perm, rhs_perm, out_perm)` of [`ConvDimensionNumbers`], the spatial dims listed in
/// the order their letters take in the kernel's string.
///
/// ```
/// use jaxrs::lax;
///
/// let (l, r, o) = lax::conv_general_permutations(("NHWC", "HWIO", "NHWC"));
/// assert_eq!((l, r, o), (vec![0, 3, 1, 2], vec![3, 2, 0, 1], vec![0, 3, 1, 2]));
/// ```
#[track_caller]
pub fn conv_general_permutations(
    dimension_numbers: (&str, &str, &str),
) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    permutations(dimension_numbers).unwrap_or_else(|e| panic!("lax.conv_general_permutations: {e}"))
}

fn dimension_numbers_of(
    lhs_shape: &[usize],
    rhs_shape: &[usize],
    dimension_numbers: &ConvGeneralDilatedDimensionNumbers,
) -> Result<ConvDimensionNumbers, String> {
    use ConvGeneralDilatedDimensionNumbers as D;
    if let D::Numbers(d) = dimension_numbers {
        return Ok(d.clone());
    }
    if lhs_shape.len() != rhs_shape.len() {
        return Err(format!(
            "convolution requires lhs and rhs ndim to be equal, got {} and {}",
            lhs_shape.len(),
            rhs_shape.len()
        ));
    }
    match dimension_numbers {
        D::Default => {
            let iota: Vec<usize> = (0..lhs_shape.len()).collect();
            Ok(ConvDimensionNumbers::new(iota.clone(), iota.clone(), iota))
        }
        D::Strings(l, r, o) => {
            for (i, s) in [l, r, o].iter().enumerate() {
                if s.chars().count() != lhs_shape.len() {
                    return Err(format!(
                        "convolution dimension_numbers[{i}] must have len equal to the ndim of lhs and rhs, got {} for lhs and rhs shapes {lhs_shape:?} and {rhs_shape:?}",
                        s.chars().count()
                    ));
                }
            }
            let (lhs_spec, rhs_spec, out_spec) = permutations((l, r, o))?;
            Ok(ConvDimensionNumbers {
                lhs_spec,
                rhs_spec,
                out_spec,
            })
        }
        D::Numbers(_) => unreachable!(),
    }
}

/// `dimension_numbers` in the canonical form lax's convolutions use
/// (`lax.conv_dimension_numbers`): `None` (or [`ConvGeneralDilatedDimensionNumbers::Default`])
/// gives `0..rank` for all three, a string triple its [`conv_general_permutations`], and
/// [`ConvDimensionNumbers`] come back as they are.
///
/// ```
/// use jaxrs::lax;
///
/// let dn = lax::conv_dimension_numbers(&[2, 3, 9], &[4, 3, 2], None);
/// assert_eq!(dn.lhs_spec, vec![0, 1, 2]);
/// ```
#[track_caller]
pub fn conv_dimension_numbers(
    lhs_shape: &[usize],
    rhs_shape: &[usize],
    dimension_numbers: impl Into<ConvGeneralDilatedDimensionNumbers>,
) -> ConvDimensionNumbers {
    dimension_numbers_of(lhs_shape, rhs_shape, &dimension_numbers.into())
        .unwrap_or_else(|e| panic!("lax.conv_dimension_numbers: {e}"))
}

/// A general convolution (`jax.lax.conv_general_dilated`): `lhs` (the input) convolved with
/// `rhs` (the kernel), in the cross-correlation convention of deep learning.
///
/// - `window_strides`, `lhs_dilation`, `rhs_dilation`: one entry per spatial dim (an empty
///   slice means all 1). `lhs_dilation` > 1 is a transposed convolution, `rhs_dilation` > 1
///   an atrous one.
/// - `padding`: [`Padding::Same`], [`Padding::Valid`], explicit `(low, high)` pairs, or
///   JAX's strings (`"SAME"`, `"SAME_LOWER"`, `"VALID"`). With `lhs_dilation` > 1 a string
///   pads as for the undilated input (JAX refuses that; `jaxrs::lax::conv_general_dilated`
///   does too).
/// - `dimension_numbers`: the layouts of input, kernel and output
///   ([`ConvGeneralDilatedDimensionNumbers`]): lax's strings (`N`/`C` batch and features,
///   `O`/`I` the kernel's output and input features, other letters spatial), e.g.
///   `Some(("NHWC", "HWIO", "NHWC"))` as flax uses, or [`ConvDimensionNumbers`]; `None` is
///   lax's default `("NCHW", "OIHW", "NCHW")` (any number of spatial dims).
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
    dimension_numbers: impl Into<ConvGeneralDilatedDimensionNumbers>,
    feature_group_count: usize,
) -> Array {
    conv_general_dilated_grouped(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        feature_group_count,
        1,
    )
}

/// [`conv_general_dilated`] with `batch_group_count` as well (JAX's keyword of
/// `lax.conv_general_dilated`, which `jaxrs::lax::conv_general_dilated` takes): the batch dim
/// of `lhs` is split into that many groups, each convolved with its share of the kernel's
/// output features (the form the kernel gradient of a grouped convolution takes).
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn conv_general_dilated_grouped(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[usize],
    padding: impl Into<Padding>,
    lhs_dilation: &[usize],
    rhs_dilation: &[usize],
    dimension_numbers: impl Into<ConvGeneralDilatedDimensionNumbers>,
    feature_group_count: usize,
    batch_group_count: usize,
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
    let dn = dimension_numbers_of(lhs.shape(), rhs.shape(), &dimension_numbers.into())
        .unwrap_or_else(|e| fail(&e));
    for (what, spec) in [
        ("lhs_spec", &dn.lhs_spec),
        ("rhs_spec", &dn.rhs_spec),
        ("out_spec", &dn.out_spec),
    ] {
        let mut sorted = spec.clone();
        sorted.sort_unstable();
        if sorted != (0..rank).collect::<Vec<_>>() {
            fail(&format!(
                "dimension numbers: {what} {spec:?} is not a permutation of the {rank} dims"
            ));
        }
    }
    let specs = ConvSpecs {
        lhs: dn.lhs_spec,
        rhs: dn.rhs_spec,
        out: dn.out_spec,
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
    if window_strides.contains(&0) || rhs_dilation.contains(&0) || lhs_dilation.contains(&0) {
        fail("strides and dilations must be positive");
    }
    if feature_group_count == 0 || batch_group_count == 0 {
        fail("feature_group_count and batch_group_count must be positive");
    }
    let padding = padding.into();
    let in_spatial: Vec<usize> = specs.lhs[2..].iter().map(|&d| lhs.shape()[d]).collect();
    let window: Vec<usize> = specs.rhs[2..]
        .iter()
        .zip(&rhs_dilation)
        .map(|(&d, &r)| dilate_dim(rhs.shape()[d], r))
        .collect();
    let padding = padding.pairs(&in_spatial, &window, &window_strides);
    if padding.len() != n {
        fail(&format!(
            "padding {padding:?} needs one (low, high) pair per spatial dim ({n})"
        ));
    }
    let prim = ConvGeneralDilated {
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        specs,
        feature_group_count,
        batch_group_count,
    };
    bind1(prim, &[Operand::from(&lhs), Operand::from(&rhs)])
}

/// The monoids `lax.reduce_window` recognises in its `computation` argument (`lax.add`,
/// `lax.mul`, `lax.max`, `lax.min`, and the bitwise `lax.bitwise_and`/`bitwise_or`/
/// `bitwise_xor`), which jaxrs takes in place of a Python function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Monoid {
    Add,
    Mul,
    Max,
    Min,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
}

impl Monoid {
    fn op(self) -> ReduceOp {
        match self {
            Monoid::Add => ReduceOp::Sum,
            Monoid::Mul => ReduceOp::Prod,
            Monoid::Max => ReduceOp::Max,
            Monoid::Min => ReduceOp::Min,
            Monoid::BitwiseAnd => ReduceOp::And,
            Monoid::BitwiseOr => ReduceOp::Or,
            Monoid::BitwiseXor => ReduceOp::Xor,
        }
    }

    /// The identity of the monoid for `dtype` (lax's `_get_max_identity` and friends), as
    /// f64: `0` for add, or and xor, `1` for mul, `-inf`/`inf` (or the integer bounds) for
    /// max/min, every bit set for and.
    pub fn identity(self, dtype: DType) -> f64 {
        self.op().identity(dtype)
    }

    /// The monoid applied to two arrays (`lax.add(x, y)` and so on).
    #[track_caller]
    pub fn apply(self, x: &Array, y: &Array) -> Array {
        match self {
            Monoid::Add => x.add(y),
            Monoid::Mul => x.mul(y),
            Monoid::Max => x.maximum(y),
            Monoid::Min => x.minimum(y),
            Monoid::BitwiseAnd => x.bitwise_and(y),
            Monoid::BitwiseOr => x.bitwise_or(y),
            Monoid::BitwiseXor => x.bitwise_xor(y),
        }
    }
}

/// The window reduction with every parameter of `lax.reduce_window`, padding with the
/// monoid's identity: one window size, stride, dilation of the operand (`base_dilation`) and
/// of the window (`window_dilation`) per dim, empty meaning all 1. `jaxrs::lax::reduce_window`
/// builds the general form (any init value) on it.
#[track_caller]
pub fn reduce_window_monoid(
    x: &Array,
    computation: Monoid,
    window_dimensions: &[usize],
    window_strides: &[usize],
    padding: impl Into<Padding>,
    base_dilation: &[usize],
    window_dilation: &[usize],
) -> Array {
    reduce_window_full(
        "reduce_window",
        computation.op(),
        x,
        window_dimensions,
        window_strides,
        padding.into(),
        base_dilation,
        window_dilation,
    )
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
    reduce_window_full(
        name,
        op,
        x,
        window_dimensions,
        window_strides,
        padding,
        &[],
        &[],
    )
}

#[track_caller]
#[allow(clippy::too_many_arguments)]
fn reduce_window_full(
    name: &str,
    op: ReduceOp,
    x: &Array,
    window_dimensions: &[usize],
    window_strides: &[usize],
    padding: Padding,
    base_dilation: &[usize],
    window_dilation: &[usize],
) -> Array {
    let loc = Location::caller();
    let r = x.rank();
    let fail = |msg: String| -> ! { op_error(name, &msg, &[x.aval().clone()], loc) };
    if window_dimensions.len() != r {
        fail(format!(
            "window_dimensions {window_dimensions:?} needs one entry per dim ({r})"
        ));
    }
    let ones_if_empty = |what: &str, xs: &[usize]| -> Vec<usize> {
        if xs.is_empty() {
            vec![1; r]
        } else if xs.len() != r {
            fail(format!("{what} {xs:?} needs one entry per dim ({r})"))
        } else {
            xs.to_vec()
        }
    };
    let window_strides = ones_if_empty("window_strides", window_strides);
    let base_dilation = ones_if_empty("base_dilation", base_dilation);
    let window_dilation = ones_if_empty("window_dilation", window_dilation);
    if window_strides.contains(&0) || base_dilation.contains(&0) || window_dilation.contains(&0) {
        fail("strides and dilations must be positive".into());
    }
    // JAX's `padtype_to_pads` sees the operand undilated and the window dilated.
    let dilated_window: Vec<usize> = window_dimensions
        .iter()
        .zip(&window_dilation)
        .map(|(&w, &d)| dilate_dim(w, d))
        .collect();
    let padding = padding.pairs(x.shape(), &dilated_window, &window_strides);
    if padding.len() != r {
        fail(format!(
            "padding {padding:?} needs one (low, high) pair per dim ({r})"
        ));
    }
    let prim = ReduceWindow {
        op,
        window_dimensions: window_dimensions.to_vec(),
        window_strides,
        padding,
        base_dilation,
        window_dilation,
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
