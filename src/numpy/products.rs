//! Products, polynomials and convolutions: `dot`, `vdot`, `inner`, `outer`, `matmul`,
//! `matvec`, `vecmat`, `vecdot`, `tensordot`, `kron`, `trace`, `einsum`, `cross`,
//! `convolve`, `correlate`, the `poly*` family and `roots`; and the functional helpers
//! (`apply_along_axis`, `apply_over_axes`, `vectorize`, `fromfunction`, `piecewise`).
//!
//! The contractions are `dot_general`s, as JAX's are, so they differentiate and batch as it
//! does. `preferred_element_type` (the accumulation dtype) converts the operands before the
//! contraction: for a wider type, XLA's CPU code widens them anyway, so the values are JAX's.

use crate::{conv_general_dilated, vmap, where_, Array, DType, DotDims, Padding};

/// The promoted dtype of several arrays (JAX's `result_type`).
fn result_type(xs: &[&Array]) -> DType {
    let mut it = xs.iter();
    let first = it.next().expect("at least one operand");
    let (mut dt, mut weak) = (first.dtype(), first.is_weak());
    for x in it {
        (dt, weak) = DType::promote(dt, weak, x.dtype(), x.is_weak());
    }
    dt
}

/// `xs` converted to their common dtype, or to `preferred` where given.
fn promoted(xs: &[&Array], preferred: Option<DType>) -> Vec<Array> {
    let dt = preferred.unwrap_or_else(|| result_type(xs));
    xs.iter().map(|x| cast(x, dt)).collect()
}

fn cast(x: &Array, dt: DType) -> Array {
    if x.dtype() == dt {
        (*x).clone()
    } else {
        x.astype(dt)
    }
}

/// JAX's `promote_dtypes_inexact`: the common dtype, then, if that is not a float or complex
/// dtype, JAX's `to_inexact_dtype` (64-bit ints become float64, other ints and bool float32).
fn inexact(xs: &[&Array]) -> Vec<Array> {
    let dt = match result_type(xs) {
        dt if dt.is_inexact() => dt,
        DType::I64 => DType::F64,
        _ => DType::F32,
    };
    xs.iter().map(|x| cast(x, dt)).collect()
}

fn ravel(x: &Array) -> Array {
    x.reshape([x.size()])
}

/// `x` with axis `axis` moved to the end.
fn axis_to_end(x: &Array, axis: i64) -> Array {
    let r = x.rank() as i64;
    let a = if axis < 0 { axis + r } else { axis };
    assert!(
        (0..r).contains(&a),
        "axis {axis} is out of range for an array of rank {r}"
    );
    let perm: Vec<usize> = (0..x.rank())
        .filter(|&d| d != a as usize)
        .chain([a as usize])
        .collect();
    x.transpose(perm)
}

/// numpy's broadcast of two shapes.
fn broadcast_shapes(a: &[usize], b: &[usize], op: &str) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let y = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            match (x, y) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => panic!("{op}: shapes {a:?} and {b:?} cannot be broadcast together"),
            }
        })
        .collect()
}

/// The element `i` of axis 0 of `x`, that axis dropped.
fn row(x: &Array, i: usize) -> Array {
    x.slice_axis(0, i, i + 1).squeeze([0])
}

/// The dot product (`jnp.dot`): a product with a scalar, the inner product of two vectors,
/// else the contraction of `a`'s last axis with `b`'s second to last (its only one when `b`
/// is a vector). `preferred_element_type` is the accumulation and result dtype.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// let v = Array::from_vec(vec![1.0f32, 1.0], &[2]);
/// assert_eq!(jnp::dot(&a, &v, None).to_vec::<f32>(), vec![3.0, 7.0]);
/// ```
#[track_caller]
pub fn dot(a: &Array, b: &Array, preferred_element_type: Option<DType>) -> Array {
    let ab = promoted(&[a, b], preferred_element_type);
    let (a, b) = (&ab[0], &ab[1]);
    if a.rank() == 0 || b.rank() == 0 {
        return a * b;
    }
    let rc = if b.rank() == 1 { 0 } else { b.rank() - 2 };
    a.dot_general(
        b,
        &DotDims {
            lhs_contract: vec![a.rank() - 1],
            rhs_contract: vec![rc],
            ..Default::default()
        },
    )
}

/// The dot product of `a` and `b` flattened, `a` conjugated first (`jnp.vdot`).
#[track_caller]
pub fn vdot(a: &Array, b: &Array, preferred_element_type: Option<DType>) -> Array {
    dot(&ravel(&a.conj()), &ravel(b), preferred_element_type)
}

/// The contraction of the last axes of `a` and `b` (`jnp.inner`); a product with a scalar.
#[track_caller]
pub fn inner(a: &Array, b: &Array, preferred_element_type: Option<DType>) -> Array {
    let ab = promoted(&[a, b], preferred_element_type);
    let (a, b) = (&ab[0], &ab[1]);
    if a.rank() == 0 || b.rank() == 0 {
        return a * b;
    }
    a.dot_general(
        b,
        &DotDims {
            lhs_contract: vec![a.rank() - 1],
            rhs_contract: vec![b.rank() - 1],
            ..Default::default()
        },
    )
}

/// The outer product of `a` and `b` flattened (`jnp.outer`): `out[i, j] = a[i] * b[j]`.
#[track_caller]
pub fn outer(a: &Array, b: &Array) -> Array {
    let (a, b) = (ravel(a), ravel(b));
    a.reshape([a.size(), 1]) * b.reshape([1, b.size()])
}

/// The matrix product with numpy's rules (`jnp.matmul`, `a @ b`); see [`Array::matmul`].
#[track_caller]
pub fn matmul(a: &Array, b: &Array, preferred_element_type: Option<DType>) -> Array {
    let ab = promoted(&[a, b], preferred_element_type);
    ab[0].matmul(&ab[1])
}

/// [`matmul`] with its result typed `out_sharding` over explicit mesh axes (JAX's
/// `jnp.matmul(..., out_sharding=...)`); see [`crate::lax::dot_general_sharded`].
#[track_caller]
pub fn matmul_sharded(
    a: &Array,
    b: &Array,
    preferred_element_type: Option<DType>,
    out_sharding: impl Into<crate::Shardings>,
) -> Array {
    crate::with_out_sharding(out_sharding, || matmul(a, b, preferred_element_type))
}

/// Matrix times vector over broadcast batch axes (`jnp.matvec`): `x1[..., m, n]`,
/// `x2[..., n]` give `[..., m]`.
#[track_caller]
pub fn matvec(x1: &Array, x2: &Array) -> Array {
    assert!(
        x1.rank() >= 2 && x2.rank() >= 1,
        "matvec: needs a matrix and a vector, got shapes {:?} and {:?}",
        x1.shape(),
        x2.shape()
    );
    x1.matmul(&x2.expand_dims(-1)).squeeze([-1])
}

/// Vector times matrix over broadcast batch axes (`jnp.vecmat`): `x1[..., n]`,
/// `x2[..., n, m]` give `[..., m]`.
#[track_caller]
pub fn vecmat(x1: &Array, x2: &Array) -> Array {
    assert!(
        x1.rank() >= 1 && x2.rank() >= 2,
        "vecmat: needs a vector and a matrix, got shapes {:?} and {:?}",
        x1.shape(),
        x2.shape()
    );
    x1.expand_dims(-2).matmul(x2).squeeze([-2])
}

/// The dot product of vectors along `axis` (default -1) of each operand, over broadcast
/// batch axes (`jnp.vecdot`).
#[track_caller]
pub fn vecdot(
    x1: &Array,
    x2: &Array,
    axis: Option<i64>,
    preferred_element_type: Option<DType>,
) -> Array {
    let axis = axis.unwrap_or(-1);
    let ab = promoted(&[x1, x2], preferred_element_type);
    let (a, b) = (axis_to_end(&ab[0], axis), axis_to_end(&ab[1], axis));
    let (n, m) = (a.shape()[a.rank() - 1], b.shape()[b.rank() - 1]);
    assert!(
        n == m,
        "vecdot: axis {axis} has size {n} in one operand and {m} in the other (shapes {:?} and {:?})",
        x1.shape(),
        x2.shape()
    );
    let mut batch = broadcast_shapes(
        &a.shape()[..a.rank() - 1],
        &b.shape()[..b.rank() - 1],
        "vecdot",
    );
    let nb = batch.len();
    batch.push(n);
    let (a, b) = (a.broadcast_to(&batch), b.broadcast_to(&batch));
    let bd: Vec<usize> = (0..nb).collect();
    a.dot_general(
        &b,
        &DotDims {
            lhs_contract: vec![nb],
            rhs_contract: vec![nb],
            lhs_batch: bd.clone(),
            rhs_batch: bd,
        },
    )
}

/// Which axes [`tensordot`] contracts: the last `n` of `a` with the first `n` of `b`
/// (`axes=n`), or the listed axes pairwise (`axes=([..], [..])`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensordotAxes {
    Count(usize),
    Pairs(Vec<i64>, Vec<i64>),
}

impl From<usize> for TensordotAxes {
    fn from(n: usize) -> Self {
        TensordotAxes::Count(n)
    }
}

impl From<i32> for TensordotAxes {
    fn from(n: i32) -> Self {
        TensordotAxes::Count(usize::try_from(n).expect("tensordot: axes must be non-negative"))
    }
}

impl From<(i64, i64)> for TensordotAxes {
    fn from((a, b): (i64, i64)) -> Self {
        TensordotAxes::Pairs(vec![a], vec![b])
    }
}

impl From<(&[i64], &[i64])> for TensordotAxes {
    fn from((a, b): (&[i64], &[i64])) -> Self {
        TensordotAxes::Pairs(a.to_vec(), b.to_vec())
    }
}

impl<const N: usize> From<([i64; N], [i64; N])> for TensordotAxes {
    fn from((a, b): ([i64; N], [i64; N])) -> Self {
        TensordotAxes::Pairs(a.to_vec(), b.to_vec())
    }
}

/// Sums products over the axes `axes` names (`jnp.tensordot`): the result's axes are `a`'s
/// free axes, then `b`'s.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::ones(&[2, 3, 4], DType::F32);
/// let b = Array::ones(&[3, 4, 5], DType::F32);
/// assert_eq!(jnp::tensordot(&a, &b, 2, None).shape(), &[2, 5]);
/// assert_eq!(jnp::tensordot(&a, &b, ([1, 2], [0, 1]), None).shape(), &[2, 5]);
/// ```
#[track_caller]
pub fn tensordot(
    a: &Array,
    b: &Array,
    axes: impl Into<TensordotAxes>,
    preferred_element_type: Option<DType>,
) -> Array {
    let ab = promoted(&[a, b], preferred_element_type);
    let (a, b) = (&ab[0], &ab[1]);
    let norm = |x: &Array, d: i64| -> usize {
        let r = x.rank() as i64;
        let n = if d < 0 { d + r } else { d };
        assert!(
            (0..r).contains(&n),
            "tensordot: axis {d} is out of range for shape {:?}",
            x.shape()
        );
        n as usize
    };
    let (lc, rc): (Vec<usize>, Vec<usize>) = match axes.into() {
        TensordotAxes::Count(n) => {
            assert!(
                n <= a.rank() && n <= b.rank(),
                "tensordot: axes={n} but the shapes are {:?} and {:?}",
                a.shape(),
                b.shape()
            );
            ((a.rank() - n..a.rank()).collect(), (0..n).collect())
        }
        TensordotAxes::Pairs(l, r) => {
            assert!(
                l.len() == r.len(),
                "tensordot: {} axes of a but {} of b",
                l.len(),
                r.len()
            );
            (
                l.iter().map(|&d| norm(a, d)).collect(),
                r.iter().map(|&d| norm(b, d)).collect(),
            )
        }
    };
    a.dot_general(
        b,
        &DotDims {
            lhs_contract: lc,
            rhs_contract: rc,
            ..Default::default()
        },
    )
}

/// The Kronecker product (`jnp.kron`): blocks `a[i, j] * b`, the operands' ranks made
/// equal by leading axes of size 1.
#[track_caller]
pub fn kron(a: &Array, b: &Array) -> Array {
    let n = a.rank().max(b.rank());
    let lead = |x: &Array| -> Vec<usize> {
        let mut s = vec![1; n - x.rank()];
        s.extend_from_slice(x.shape());
        s
    };
    let (sa, sb) = (lead(a), lead(b));
    // a as [a0, 1, a1, 1, ...] times b as [1, b0, 1, b1, ...], then pairs merged.
    let ia: Vec<usize> = sa.iter().flat_map(|&d| [d, 1]).collect();
    let ib: Vec<usize> = sb.iter().flat_map(|&d| [1, d]).collect();
    let out: Vec<usize> = sa.iter().zip(&sb).map(|(x, y)| x * y).collect();
    (a.reshape(ia) * b.reshape(ib)).reshape(out)
}

/// The options of [`trace`]: JAX's keywords `offset=0, axis1=0, axis2=1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceOptions {
    pub offset: i64,
    pub axis1: i64,
    pub axis2: i64,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            offset: 0,
            axis1: 0,
            axis2: 1,
        }
    }
}

/// The sum along a diagonal of the (`axis1`, `axis2`) planes (`jnp.trace`); `offset` > 0 is
/// above the main diagonal. The result keeps the other axes, in order.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// assert_eq!(jnp::trace(&a, Default::default()).item::<f32>(), 5.0);
/// ```
#[track_caller]
pub fn trace(a: &Array, options: TraceOptions) -> Array {
    let r = a.rank() as i64;
    let norm = |d: i64| if d < 0 { d + r } else { d };
    let (i, j) = (norm(options.axis1), norm(options.axis2));
    assert!(
        r >= 2 && (0..r).contains(&i) && (0..r).contains(&j) && i != j,
        "trace: axes {} and {} are not two axes of shape {:?}",
        options.axis1,
        options.axis2,
        a.shape()
    );
    let perm: Vec<usize> = (0..a.rank())
        .filter(|&d| d as i64 != i && d as i64 != j)
        .chain([i as usize, j as usize])
        .collect();
    let x = a.transpose(perm);
    let (n, m) = (x.shape()[x.rank() - 2], x.shape()[x.rank() - 1]);
    let rows = Array::iota(DType::I64, &[n, m], 0);
    let cols = Array::iota(DType::I64, &[n, m], 1);
    let mask = (cols - rows).eq(options.offset);
    let zero = Array::zeros(&[], x.dtype());
    where_(&mask, &x, &zero).sum([-2i64, -1], false)
}

/// Einstein summation (`jnp.einsum`) over any number of operands: `...` for the unnamed
/// axes, repeated labels for diagonals and traces, the implicit output when `->` is absent;
/// see [`crate::einsum`]. JAX's `optimize` is not needed: the operands are contracted left
/// to right. `preferred_element_type` is the accumulation and result dtype.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::ones(&[2, 3], DType::F32);
/// let b = Array::ones(&[3, 4], DType::F32);
/// let c = Array::ones(&[4], DType::F32);
/// assert_eq!(jnp::einsum("ij,jk,k->i", &[&a, &b, &c], None).to_vec::<f32>(), vec![12.0, 12.0]);
/// ```
#[track_caller]
pub fn einsum(
    subscripts: &str,
    operands: &[&Array],
    preferred_element_type: Option<DType>,
) -> Array {
    if operands.is_empty() {
        return crate::einsum(subscripts, operands);
    }
    let xs = promoted(operands, preferred_element_type);
    let refs: Vec<&Array> = xs.iter().collect();
    crate::einsum(subscripts, &refs)
}

/// [`einsum`] with its result typed `out_sharding` over explicit mesh axes (JAX's
/// `jnp.einsum(..., out_sharding=...)`); see [`crate::lax::dot_general_sharded`].
#[track_caller]
pub fn einsum_sharded(
    subscripts: &str,
    operands: &[&Array],
    preferred_element_type: Option<DType>,
    out_sharding: impl Into<crate::Shardings>,
) -> Array {
    crate::with_out_sharding(out_sharding, || {
        einsum(subscripts, operands, preferred_element_type)
    })
}

/// The options of [`cross`]: JAX's keywords `axisa=-1, axisb=-1, axisc=-1, axis=None`
/// (`axis`, when given, is all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrossOptions {
    pub axisa: i64,
    pub axisb: i64,
    pub axisc: i64,
    pub axis: Option<i64>,
}

impl Default for CrossOptions {
    fn default() -> Self {
        CrossOptions {
            axisa: -1,
            axisb: -1,
            axisc: -1,
            axis: None,
        }
    }
}

/// The cross product of 2- or 3-vectors along the given axes, over broadcast batch axes
/// (`jnp.cross`). Two 2-vectors give the z component alone, as numpy's.
#[track_caller]
pub fn cross(a: &Array, b: &Array, options: CrossOptions) -> Array {
    let (axisa, axisb, axisc) = match options.axis {
        Some(ax) => (ax, ax, ax),
        None => (options.axisa, options.axisb, options.axisc),
    };
    let (a, b) = (axis_to_end(a, axisa), axis_to_end(b, axisb));
    let (na, nb) = (a.shape()[a.rank() - 1], b.shape()[b.rank() - 1]);
    assert!(
        matches!(na, 2 | 3) && matches!(nb, 2 | 3),
        "cross: the vectors must have 2 or 3 components, got {na} and {nb}"
    );
    let comp = |x: &Array, k: usize| x.slice_axis(-1, k, k + 1).squeeze([-1]);
    if na == 2 && nb == 2 {
        return comp(&a, 0) * comp(&b, 1) - comp(&a, 1) * comp(&b, 0);
    }
    let parts = |x: &Array, n: usize| -> [Array; 3] {
        let z = if n == 3 {
            comp(x, 2)
        } else {
            Array::zeros_like(&comp(x, 0))
        };
        [comp(x, 0), comp(x, 1), z]
    };
    let [a0, a1, a2] = parts(&a, na);
    let [b0, b1, b2] = parts(&b, nb);
    let c = Array::stack(
        &[
            &a1 * &b2 - &a2 * &b1,
            &a2 * &b0 - &a0 * &b2,
            &a0 * &b1 - &a1 * &b0,
        ],
        0,
    );
    // Axis 0 (the components) to `axisc`.
    let r = c.rank() as i64;
    let at = if axisc < 0 { axisc + r } else { axisc };
    assert!(
        (0..r).contains(&at),
        "cross: axisc {axisc} is out of range for a result of rank {r}"
    );
    let mut perm: Vec<usize> = (1..c.rank()).collect();
    perm.insert(at as usize, 0);
    c.transpose(perm)
}

/// `convolve` and `correlate`: one `conv_general_dilated` over a batch and a feature of 1.
#[track_caller]
fn conv1d(
    op: &str,
    a: &Array,
    v: &Array,
    mode: &str,
    preferred_element_type: Option<DType>,
) -> Array {
    assert!(
        a.rank() == 1 && v.rank() == 1,
        "{op}: only 1-D inputs, got shapes {:?} and {:?}",
        a.shape(),
        v.shape()
    );
    assert!(
        a.size() > 0 && v.size() > 0,
        "{op}: inputs cannot be empty, got shapes {:?} and {:?}",
        a.shape(),
        v.shape()
    );
    let xy = match preferred_element_type {
        None => inexact(&[a, v]),
        Some(dt) => promoted(&[a, v], Some(dt)),
    };
    let (mut x, mut y) = (xy[0].clone(), xy[1].clone());
    let mut reverse = false;
    if x.size() < y.size() {
        std::mem::swap(&mut x, &mut y);
        reverse = op == "correlate";
    }
    if op == "convolve" {
        y = y.flip([0]);
    }
    let m = y.size() as i64;
    let padding = match mode {
        "valid" => (0, 0),
        "same" => (m / 2, m - m / 2 - 1),
        "full" => (m - 1, m - 1),
        other => panic!("{op}: mode must be one of 'full', 'same', 'valid', got {other:?}"),
    };
    let n = x.size();
    let out = conv_general_dilated(
        &x.reshape([1, 1, n]),
        &y.reshape([1, 1, y.size()]),
        &[1],
        Padding::Explicit(vec![padding]),
        &[],
        &[],
        None,
        1,
    );
    let out = ravel(&out);
    if reverse {
        out.flip([0])
    } else {
        out
    }
}

/// The discrete convolution of two 1-D arrays (`jnp.convolve`); `mode` is `"full"` (the
/// default), `"same"` or `"valid"`. Ints convolve as floats (JAX's `promote_dtypes_inexact`)
/// unless `preferred_element_type` says otherwise.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let v = Array::from_vec(vec![0.0f32, 1.0, 0.5], &[3]);
/// assert_eq!(jnp::convolve(&a, &v, None, None).to_vec::<f32>(), vec![0.0, 1.0, 2.5, 4.0, 1.5]);
/// ```
#[track_caller]
pub fn convolve(
    a: &Array,
    v: &Array,
    mode: Option<&str>,
    preferred_element_type: Option<DType>,
) -> Array {
    conv1d(
        "convolve",
        a,
        v,
        mode.unwrap_or("full"),
        preferred_element_type,
    )
}

/// The cross-correlation of two 1-D arrays (`jnp.correlate`); `mode` is `"valid"` (the
/// default), `"same"` or `"full"`.
#[track_caller]
pub fn correlate(
    a: &Array,
    v: &Array,
    mode: Option<&str>,
    preferred_element_type: Option<DType>,
) -> Array {
    conv1d(
        "correlate",
        a,
        v,
        mode.unwrap_or("valid"),
        preferred_element_type,
    )
}

/// The polynomial with coefficients `p` (highest power first) at `x` (`jnp.polyval`), by
/// Horner's rule; a 2-D `p` holds one polynomial per column.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let p = Array::from_vec(vec![1.0f32, 0.0, -1.0], &[3]); // x^2 - 1
/// let x = Array::from_vec(vec![0.0f32, 2.0], &[2]);
/// assert_eq!(jnp::polyval(&p, &x).to_vec::<f32>(), vec![-1.0, 3.0]);
/// ```
#[track_caller]
pub fn polyval(p: &Array, x: &Array) -> Array {
    let px = promoted(&[p, x], None);
    let (p, x) = (&px[0], &px[1]);
    assert!(p.rank() >= 1, "polyval: p must have at least one axis");
    let shape = broadcast_shapes(&p.shape()[1..], x.shape(), "polyval");
    let mut y = Array::zeros(&shape, x.dtype());
    for i in 0..p.shape()[0] {
        y = y * x + row(p, i);
    }
    y
}

/// The sum of two polynomials (`jnp.polyadd`): the shorter aligned at the end.
#[track_caller]
pub fn polyadd(a1: &Array, a2: &Array) -> Array {
    let ab = promoted(&[a1, a2], None);
    let (a, b) = if ab[1].shape()[0] <= ab[0].shape()[0] {
        (&ab[0], &ab[1])
    } else {
        (&ab[1], &ab[0])
    };
    let mut low = vec![0i64; b.rank()];
    low[0] = (a.shape()[0] - b.shape()[0]) as i64;
    a + b.pad(&low, &vec![0; b.rank()], &[], 0.0)
}

/// The difference of two polynomials (`jnp.polysub`).
#[track_caller]
pub fn polysub(a1: &Array, a2: &Array) -> Array {
    let ab = promoted(&[a1, a2], None);
    polyadd(&ab[0], &-&ab[1])
}

/// The product of two polynomials (`jnp.polymul`): their full convolution, in a float
/// dtype. `trim_leading_zeros` (default `false`) first drops leading zero coefficients, as
/// numpy's; it reads the values, so it needs concrete arrays.
#[track_caller]
pub fn polymul(a1: &Array, a2: &Array, trim_leading_zeros: Option<bool>) -> Array {
    let ab = inexact(&[a1, a2]);
    let (mut a, mut b) = (ab[0].clone(), ab[1].clone());
    if trim_leading_zeros.unwrap_or(false) && (a.size() > 1 || b.size() > 1) {
        (a, b) = (trim_front(&a), trim_front(&b));
    }
    if a.size() == 0 {
        a = Array::zeros(&[1], b.dtype());
    }
    if b.size() == 0 {
        b = Array::zeros(&[1], a.dtype());
    }
    convolve(&a, &b, Some("full"), None)
}

/// `x` (1-D, concrete) without its leading zeros.
#[track_caller]
fn trim_front(x: &Array) -> Array {
    let v = x.to_f64_vec();
    let first = v.iter().position(|&e| e != 0.0).unwrap_or(v.len());
    x.slice_axis(0, first, v.len())
}

/// The coefficients of the `m`-th derivative (default 1) of the polynomial `p`
/// (`jnp.polyder`), in a float dtype.
#[track_caller]
pub fn polyder(p: &Array, m: Option<usize>) -> Array {
    let m = m.unwrap_or(1);
    let p = inexact(&[p]).remove(0);
    if m == 0 {
        return p;
    }
    let n = p.shape()[0];
    if m >= n {
        return p.slice_axis(0, 0, 0);
    }
    // d^m/dx^m x^t = t (t-1) ... (t-m+1) x^(t-m); coefficient k has power n-1-k.
    let coeff: Vec<f64> = (0..n - m)
        .map(|k| (0..m).map(|j| (n - 1 - k - j) as f64).product())
        .collect();
    let coeff = Array::from_f64s(&coeff, &[n - m], p.dtype());
    p.slice_axis(0, 0, n - m) * coeff
}

/// The coefficients of the `m`-th antiderivative (default 1) of `p` (`jnp.polyint`); `k`
/// holds the integration constants (a scalar, or one per integration; default 0).
#[track_caller]
pub fn polyint(p: &Array, m: Option<usize>, k: Option<&Array>) -> Array {
    let m = m.unwrap_or(1);
    let zero = Array::scalar(0i32);
    let k = k.unwrap_or(&zero);
    let pk = inexact(&[p, k]);
    let (p, k) = (&pk[0], &pk[1]);
    let k = if k.rank() == 0 {
        k.reshape([1])
    } else {
        k.clone()
    };
    assert!(
        k.rank() == 1 && (k.size() == 1 || k.size() == m),
        "polyint: k must be a scalar or a rank-1 array of length 1 or m={m}, got shape {:?}",
        k.shape()
    );
    if m == 0 {
        return p.clone();
    }
    let k = if k.size() == 1 {
        k.broadcast_to(&[m])
    } else {
        k
    };
    let n = p.shape()[0];
    // Coefficient i of the result divides by prod_j max(1, t - j) for t = n + m - 1 - i.
    let coeff: Vec<f64> = (0..n + m)
        .map(|i| {
            let t = (n + m - 1 - i) as i64;
            (0..m as i64).map(|j| (t - j).max(1) as f64).product()
        })
        .collect();
    let coeff = Array::from_f64s(&coeff, &[n + m], p.dtype());
    Array::concatenate(&[p.clone(), k], 0) / coeff
}

/// The quotient and remainder of polynomial division (`jnp.polydiv`), in a float dtype; the
/// remainder keeps `u`'s length (leading zeros), unless `trim_leading_zeros` (default
/// `false`, concrete arrays only) drops them.
#[track_caller]
pub fn polydiv(u: &Array, v: &Array, trim_leading_zeros: Option<bool>) -> (Array, Array) {
    let uv = inexact(&[u, v]);
    let (mut u, v) = (uv[0].clone(), uv[1].clone());
    assert!(
        u.rank() == 1 && v.rank() == 1 && v.size() > 0,
        "polydiv: needs two 1-D arrays, the divisor non-empty, got shapes {:?} and {:?}",
        u.shape(),
        v.shape()
    );
    let (m, n) = (u.size() as i64 - 1, v.size() as i64 - 1);
    let scale = Array::ones(&[], v.dtype()) / row(&v, 0);
    let mut q = Vec::new();
    for k in 0..(m - n + 1).max(0) {
        let d = &scale * row(&u, k as usize);
        let update = (-(&d * &v)).pad(&[k], &[m - n - k], &[], 0.0);
        u = u + update;
        q.push(d);
    }
    let q = if q.is_empty() {
        Array::zeros(&[1], u.dtype())
    } else {
        Array::stack(&q, 0)
    };
    if trim_leading_zeros.unwrap_or(false) {
        let tol = match u.dtype() {
            DType::F64 => f64::EPSILON,
            DType::F32 => f32::EPSILON as f64,
            DType::F16 => 9.765_625e-4,
            _ => 7.812_5e-3,
        }
        .sqrt();
        let vals = u.to_f64_vec();
        let first = vals
            .iter()
            .position(|e| e.abs() > tol)
            .unwrap_or(vals.len());
        u = u.slice_axis(0, first, vals.len());
    }
    (q, u)
}

/// The coefficients of the monic polynomial with the given roots (`jnp.poly`), in an inexact
/// dtype. A non-empty square matrix stands for its eigenvalues, so its polynomial (the
/// characteristic one) is complex, as JAX's.
#[track_caller]
pub fn poly(seq_of_zeros: &Array) -> Array {
    let r = inexact(&[seq_of_zeros]).remove(0);
    let r = match r.shape() {
        [] => r.reshape([1]),
        &[n, m] if n == m && n != 0 => crate::numpy::linalg::eigvals(&r),
        _ => r,
    };
    assert!(
        r.rank() == 1,
        "poly: input must be 1-D or a non-empty square 2-D array, got shape {:?}",
        r.shape()
    );
    let dt = r.dtype();
    if r.size() == 0 {
        return Array::ones(&[], dt);
    }
    let mut a = Array::ones(&[1], dt);
    for k in 0..r.size() {
        let factor = Array::stack(&[Array::ones(&[], dt), -row(&r, k)], 0);
        a = convolve(&a, &factor, Some("full"), None);
    }
    a
}

/// The roots of the polynomial with coefficients `p` (1-D, highest power first) as the
/// eigenvalues of its companion matrix (`jnp.roots`), always complex (even for real roots,
/// as JAX's). With `strip_zeros` (JAX's default, `true`) leading zero coefficients are
/// dropped first, as numpy does: that reads `p`'s values, so it needs a concrete array
/// (under `jit`, `vmap` or a derivative jaxrs panics, where JAX differentiates it too). With
/// `false` it traces: the roots the leading zeros remove come last, as NaN.
///
/// The roots come in the eigenvalue kernel's order, which need not be LAPACK's (JAX's):
/// compare them as a set, or through [`sort_complex`](crate::numpy::sort_complex).
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let p = Array::from_vec(vec![0.0f64, 1.0, -3.0, 2.0], &[4]); // (x - 1)(x - 2)
/// let r = jnp::sort_complex(&jnp::roots(&p, true)).to_vec::<jaxrs::C128>();
/// assert_eq!(r.len(), 2);
/// assert!((r[0].re - 1.0).abs() < 1e-12 && (r[1].re - 2.0).abs() < 1e-12);
/// ```
#[track_caller]
pub fn roots(p: &Array, strip_zeros: bool) -> Array {
    let p = crate::numpy::math::inexact(p);
    let p = if p.rank() == 0 { p.reshape([1]) } else { p };
    assert!(
        p.rank() == 1,
        "roots: the coefficients must be a rank-1 array, got shape {:?} at {}",
        p.shape(),
        std::panic::Location::caller()
    );
    let complex = p.dtype().to_complex();
    let n = p.size();
    if n < 2 {
        return Array::zeros(&[0], complex);
    }
    let is_zero = p.eq(0.0);
    if strip_zeros {
        let zeros = is_zero.astype(DType::I32).to_vec::<i32>();
        let leading = zeros.iter().take_while(|&&z| z == 1).count();
        return roots_no_zeros(&p.slice_axis(0, leading, n));
    }
    let all_zero = is_zero.reduce_and(None);
    let first_nonzero = is_zero
        .astype(DType::I32)
        .argmin(0, false)
        .astype(DType::I64);
    let leading = where_(&all_zero, n as i64, &first_nonzero);
    roots_with_zeros(&p, &leading)
}

/// The eigenvalues of the companion matrix of `p` (its first coefficient nonzero): JAX's
/// `_roots_no_zeros`.
fn roots_no_zeros(p: &Array) -> Array {
    let n = p.size();
    if n < 2 {
        return Array::zeros(&[0], p.dtype().to_complex());
    }
    let first_row = -(p.slice_axis(0, 1, n) / row(p, 0));
    let subdiagonal = crate::numpy::diag(&Array::ones(&[n - 2], p.dtype()), -1);
    let companion = Array::concatenate(
        &[
            first_row.reshape([1, n - 1]),
            subdiagonal.slice_axis(0, 1, n - 1),
        ],
        0,
    );
    crate::numpy::linalg::eigvals(&companion)
}

/// JAX's `_roots_with_zeros`: the `leading` (traced) zero coefficients rolled to the end, the
/// zero roots they make sorted last and set to NaN.
fn roots_with_zeros(p: &Array, leading: &Array) -> Array {
    let n = p.size();
    // An all-zero `p` would be a singular companion matrix; its roots are all NaN anyway.
    let p = where_(leading.eq(n as i64), 1.0, p);
    // `jnp.roll(p, -leading)` with a traced shift: a window into `p` twice over.
    let shift = crate::numpy::remainder(&-leading.astype(DType::I32), n as i32);
    let start = n as i32 - &shift;
    let doubled = Array::concatenate(&[p.clone(), p.clone()], 0);
    let rolled = crate::lax::dynamic_slice(&doubled, &[start], &[n]);
    let roots = roots_no_zeros(&rolled);
    let (_, roots) = crate::lax::sort_key_val(&roots.eq(0.0), &roots, 0, true);
    let count = roots.size();
    let kept = Array::iota(DType::I64, &[count], 0).lt(&(count as i64 - leading));
    let nan = crate::complex(f64::NAN, f64::NAN).astype(roots.dtype());
    where_(&kept, &roots, &nan)
}

/// The options of [`polyfit`], [`polyfit_full`] and [`polyfit_cov`] beyond the data and the
/// degree (`jnp.polyfit`'s keywords).
#[derive(Debug, Clone, Copy, Default)]
pub struct PolyfitOptions<'a> {
    /// Singular values below `rcond` times the largest are dropped; default
    /// `len(x) * eps` of `x`'s dtype.
    pub rcond: Option<f64>,
    /// Weights of the points (1-D, one per point), multiplying the residuals: `1 / σ` for
    /// Gaussian noise of standard deviation `σ`.
    pub w: Option<&'a Array>,
}

/// What [`polyfit_full`] returns (`jnp.polyfit(.., full=True)`).
#[derive(Debug, Clone)]
pub struct PolyfitFull {
    /// The coefficients, highest power first (`[deg + 1]`, or `[deg + 1, k]` for `k` columns
    /// of `y`).
    pub coefficients: Array,
    /// The sum of squared (weighted) residuals per column of `y`.
    pub residuals: Array,
    /// The rank of the scaled Vandermonde matrix.
    pub rank: Array,
    /// Its singular values.
    pub singular_values: Array,
    /// The `rcond` used, as a float64 scalar.
    pub rcond: Array,
}

/// How [`polyfit_cov`] scales the covariance of the coefficients (`cov=True` or
/// `cov="unscaled"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolyfitCov {
    /// By the residuals' variance, `residuals / (len(x) - deg - 1)` (JAX's `cov=True`; needs
    /// more points than coefficients).
    Scaled,
    /// Not at all: the weights are taken as `1 / σ` of known noise (`cov="unscaled"`).
    Unscaled,
}

/// The least-squares polynomial of degree `deg` through the points `(x, y)`
/// (`jnp.polyfit(x, y, deg, rcond, w=w)`): its coefficients, highest power first, one column
/// per column of a 2-D `y`. The Vandermonde matrix's columns are scaled to unit norm before
/// [`lstsq`](crate::numpy::linalg::lstsq), as JAX's. JAX's `full=True` is [`polyfit_full`],
/// its `cov=True` / `"unscaled"` [`polyfit_cov`].
///
/// An integer `x` takes `eps` from the float it computes in, where JAX raises.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![0.0f64, 1.0, 2.0, 3.0], &[4]);
/// let y = &(&x * &x) * 2.0 - 1.0;
/// let c = jnp::polyfit(&x, &y, 2, Default::default()).to_vec::<f64>();
/// assert!((c[0] - 2.0).abs() < 1e-12 && c[1].abs() < 1e-12 && (c[2] + 1.0).abs() < 1e-12);
/// ```
#[track_caller]
pub fn polyfit(x: &Array, y: &Array, deg: usize, opts: PolyfitOptions) -> Array {
    polyfit_parts("polyfit", x, y, deg, opts).full.coefficients
}

/// [`polyfit`] with the least-squares diagnostics (`jnp.polyfit(.., full=True)`).
#[track_caller]
pub fn polyfit_full(x: &Array, y: &Array, deg: usize, opts: PolyfitOptions) -> PolyfitFull {
    polyfit_parts("polyfit", x, y, deg, opts).full
}

/// [`polyfit`] and the covariance of the coefficients (`jnp.polyfit(.., cov=True)`, or
/// `cov="unscaled"`): `[deg + 1, deg + 1]`, or `[deg + 1, deg + 1, k]` for `k` columns of
/// `y` (unscaled, `[deg + 1, deg + 1, 1]` for a 2-D `y` of any width, as JAX's).
#[track_caller]
pub fn polyfit_cov(
    x: &Array,
    y: &Array,
    deg: usize,
    opts: PolyfitOptions,
    cov: PolyfitCov,
) -> (Array, Array) {
    let parts = polyfit_parts("polyfit", x, y, deg, opts);
    let (lhs, scale) = (&parts.scaled_lhs, &parts.scale);
    let base = crate::numpy::linalg::inv(&lhs.transpose([1, 0]).matmul(lhs)) / outer(scale, scale);
    let order = deg + 1;
    let fac = match cov {
        PolyfitCov::Unscaled => Array::ones(&[1], base.dtype()),
        PolyfitCov::Scaled => {
            assert!(
                x.size() > order,
                "polyfit: the number of data points must exceed order to scale the covariance \
                 matrix; got {} points for degree {deg} at {}",
                x.size(),
                std::panic::Location::caller()
            );
            &parts.full.residuals / (x.size() - order) as f64
        }
    };
    let fac = if fac.rank() == 0 {
        fac.reshape([1])
    } else {
        fac
    };
    let cov = if y.rank() == 1 {
        base * fac.reshape([1, fac.size()])
    } else {
        base.expand_dims(-1) * fac.reshape([1, 1, fac.size()])
    };
    (parts.full.coefficients, cov)
}

/// A fit and the pieces [`polyfit_cov`] reuses.
struct PolyfitParts {
    full: PolyfitFull,
    /// The (weighted) Vandermonde matrix with unit-norm columns.
    scaled_lhs: Array,
    /// The norms its columns were divided by.
    scale: Array,
}

#[track_caller]
fn polyfit_parts(op: &str, x: &Array, y: &Array, deg: usize, opts: PolyfitOptions) -> PolyfitParts {
    let at = std::panic::Location::caller();
    assert!(
        x.rank() == 1,
        "{op}: expected 1D vector for x, got shape {:?} at {at}",
        x.shape()
    );
    assert!(
        x.size() > 0,
        "{op}: expected non-empty vector for x at {at}"
    );
    assert!(
        y.rank() == 1 || y.rank() == 2,
        "{op}: expected 1D or 2D array for y, got shape {:?} at {at}",
        y.shape()
    );
    assert!(
        x.shape()[0] == y.shape()[0],
        "{op}: expected x and y to have same length, got shapes {:?} and {:?} at {at}",
        x.shape(),
        y.shape()
    );
    let order = deg + 1;
    let eps = crate::numpy::finfo(crate::numpy::math::inexact(x).dtype().real_dtype()).eps;
    let rcond = opts.rcond.unwrap_or(x.size() as f64 * eps);
    let mut lhs = crate::numpy::vander(x, Some(order), false);
    let mut rhs = y.clone();
    if let Some(w) = opts.w {
        let w = crate::numpy::math::inexact(w);
        assert!(
            w.rank() == 1,
            "{op}: expected a 1-d array for weights, got shape {:?} at {at}",
            w.shape()
        );
        assert!(
            w.shape()[0] == y.shape()[0],
            "{op}: expected w and y to have the same length, got shapes {:?} and {:?} at {at}",
            w.shape(),
            y.shape()
        );
        let column = w.expand_dims(1);
        lhs = lhs * &column;
        rhs = if rhs.rank() == 2 {
            rhs * &column
        } else {
            rhs * &w
        };
    }
    let scale = (&lhs * &lhs).sum(0i64, false).sqrt();
    let lhs = lhs / scale.expand_dims(0);
    let (c, residuals, rank, singular_values) =
        crate::numpy::linalg::lstsq(&lhs, &rhs, Some(rcond));
    let coefficients = if c.rank() > 1 {
        c / scale.expand_dims(1)
    } else {
        c / &scale
    };
    PolyfitParts {
        full: PolyfitFull {
            coefficients,
            residuals,
            rank,
            singular_values,
            rcond: Array::scalar(rcond),
        },
        scaled_lhs: lhs,
        scale,
    }
}

/// `func1d` applied to every 1-D slice of `arr` along `axis` (`jnp.apply_along_axis`), by
/// `vmap` over the other axes. `func1d`'s result axes take `axis`'s place.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
/// let y = jnp::apply_along_axis(|v: &Array| v.sum(None, false), 1, &x);
/// assert_eq!(y.to_vec::<f32>(), vec![6.0, 15.0]);
/// ```
#[track_caller]
pub fn apply_along_axis(func1d: impl Fn(&Array) -> Array, axis: i64, arr: &Array) -> Array {
    let nd = arr.rank() as i64;
    let axis = if axis < 0 { axis + nd } else { axis };
    assert!(
        (0..nd).contains(&axis),
        "apply_along_axis: axis out of range for shape {:?}",
        arr.shape()
    );
    let mut func: Box<dyn Fn(Array) -> Array + '_> = Box::new(move |x: Array| func1d(&x));
    for i in 1..nd - axis {
        func = Box::new(vmap(func, i, -1i64));
    }
    for _ in 0..axis {
        func = Box::new(vmap(func, 0i64, 0i64));
    }
    func(arr.clone())
}

/// `func(a, axis)` applied for each axis in turn, each result keeping `a`'s rank (an axis
/// the function removed comes back as size 1) (`jnp.apply_over_axes`).
#[track_caller]
pub fn apply_over_axes(func: impl Fn(&Array, i64) -> Array, a: &Array, axes: &[i64]) -> Array {
    let mut a = a.clone();
    for &axis in axes {
        let b = func(&a, axis);
        a = if b.rank() == a.rank() {
            b
        } else if b.rank() + 1 == a.rank() {
            let ax = if axis < 0 {
                axis + a.rank() as i64
            } else {
                axis
            };
            b.expand_dims(ax)
        } else {
            panic!(
                "apply_over_axes: the function must keep the rank or drop one axis, got shape {:?} from {:?}",
                b.shape(),
                a.shape()
            )
        };
    }
    a
}

/// `pyfunc` of scalars, mapped over the broadcast elements of its arguments by `vmap`
/// (`jnp.vectorize` without a signature): every argument is broadcast to one shape and each
/// of its axes is a batch axis. `excluded` lists arguments passed whole, not mapped.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let clamp = jnp::vectorize(|x: &[Array]| where_(&x[0].gt(&x[1]), &x[1], &x[0]), &[]);
/// let x = Array::from_vec(vec![1.0f32, 5.0, 3.0], &[3]);
/// let y = clamp(&[x, Array::scalar(2.0f32)]);
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 2.0, 2.0]);
/// ```
pub fn vectorize<'f>(
    pyfunc: impl Fn(&[Array]) -> Array + 'f,
    excluded: &'f [usize],
) -> impl Fn(&[Array]) -> Array + 'f {
    move |args: &[Array]| {
        let mapped: Vec<usize> = (0..args.len()).filter(|i| !excluded.contains(i)).collect();
        let shape = mapped.iter().fold(Vec::new(), |s, &i| {
            broadcast_shapes(&s, args[i].shape(), "vectorize")
        });
        let mut all: Vec<Array> = args.to_vec();
        for &i in &mapped {
            all[i] = args[i].broadcast_to(&shape);
        }
        let fixed = all.clone();
        let n_mapped = mapped.len();
        let xs: Vec<Array> = mapped.iter().map(|&i| all[i].clone()).collect();
        let pyfunc = &pyfunc;
        let mut func: Box<dyn Fn(Vec<Array>) -> Array + '_> = Box::new(move |xs: Vec<Array>| {
            let mut full = fixed.clone();
            for (&i, x) in mapped.iter().zip(xs) {
                full[i] = x;
            }
            pyfunc(&full)
        });
        for _ in 0..shape.len() {
            func = Box::new(vmap(func, vec![Some(0i64); n_mapped], 0i64));
        }
        func(xs)
    }
}

/// The array whose element at index `(i, j, ...)` is `function([i, j, ...])`
/// (`jnp.fromfunction`): the function is mapped by `vmap` over index arrays of `dtype`.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::prelude::*;
///
/// let x = jnp::fromfunction(|ij: &[Array]| &ij[0] * 10 + &ij[1], &[2, 3], DType::I32);
/// assert_eq!(x.to_vec::<i32>(), vec![0, 1, 2, 10, 11, 12]);
/// ```
#[track_caller]
pub fn fromfunction(function: impl Fn(&[Array]) -> Array, shape: &[usize], dtype: DType) -> Array {
    let n = shape.len();
    let function = &function;
    let mut func: Box<dyn Fn(Vec<Array>) -> Array + '_> =
        Box::new(move |xs: Vec<Array>| function(&xs));
    // Innermost map over the last axis, as JAX's: one index batched at a time.
    for i in (0..n).rev() {
        let axes: Vec<Option<i64>> = (0..n).map(|j| (i == j).then_some(0)).collect();
        func = Box::new(vmap(func, axes, 0i64));
    }
    let indices: Vec<Array> = shape.iter().map(|&s| Array::iota(dtype, &[s], 0)).collect();
    func(indices)
}

/// One piece of [`piecewise`]: a function of the array, or a constant.
pub enum Piece<'a> {
    Fn(&'a dyn Fn(&Array) -> Array),
    Const(f64),
}

/// `funclist[k]` where `condlist[k]` holds, the last true condition winning
/// (`jnp.piecewise`); one more piece than conditions is the value where none holds (else
/// 0). The results take `x`'s dtype.
///
/// ```
/// use jaxrs::numpy as jnp;
/// use jaxrs::numpy::Piece;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![-2.0f32, 0.5, 3.0], &[3]);
/// let neg = |x: &Array| -x;
/// let y = jnp::piecewise(&x, &[&x.lt(0.0)], &[Piece::Fn(&neg), Piece::Const(1.0)]);
/// assert_eq!(y.to_vec::<f32>(), vec![2.0, 1.0, 1.0]);
/// ```
#[track_caller]
pub fn piecewise(x: &Array, condlist: &[&Array], funclist: &[Piece<'_>]) -> Array {
    let (nc, nf) = (condlist.len(), funclist.len());
    assert!(
        nf == nc || nf == nc + 1,
        "piecewise: {nc} conditions need {nc} or {} functions, got {nf}",
        nc + 1
    );
    let dt = x.dtype();
    let value = |p: &Piece<'_>| -> Array {
        match p {
            Piece::Fn(f) => cast(&f(x), dt).broadcast_to(x.shape()),
            Piece::Const(c) => Array::full(x.shape(), *c, dt),
        }
    };
    let mut out = if nf == nc + 1 {
        value(&funclist[nc])
    } else {
        Array::zeros(x.shape(), dt)
    };
    for (c, f) in condlist.iter().zip(funclist) {
        out = where_(*c, value(f), &out);
    }
    out
}
