//! Contractions and control: `dot`, `dot_general` (with `preferred_element_type`),
//! `batch_matmul`, `associative_scan`, `map`, `optimization_barrier`, `stop_gradient`, and lax's names for the loops,
//! branches and collectives jaxrs has at its root (`lax::scan` is
//! [`crate::scan`], `lax::psum` is [`crate::psum`], ...).

use crate::{vmap, Array, DType, DotDims, Tree};

pub use jaxrs_runtime::optimization_barrier;
pub use jaxrs_runtime::{pbroadcast, pcast, pshuffle, pswapaxes};
pub use jaxrs_runtime::{rng_bit_generator, RandomAlgorithm};

pub use crate::{
    all_gather, all_to_all, axis_index, axis_size, cond, fori_loop, pmax, pmean, pmin, ppermute,
    psum, psum_scatter, scan, stop_gradient, switch, while_loop,
};

/// The precision of a contraction on accelerators (`lax.Precision`). XLA's CPU code computes
/// every float contraction at full precision, so jaxrs accepts the value and needs nothing
/// else from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    #[default]
    Default,
    High,
    Highest,
}

/// A general contraction (`lax.dot_general`): `dimension_numbers` is
/// `((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))` (or a [`DotDims`]); the result's
/// axes are the batch axes, then `lhs`'s free axes, then `rhs`'s. As JAX's, the operands are
/// not promoted: of two dtypes the wider is the result's (f32 x int8 -> f32, the form of a
/// weight-only int8 layer), and `preferred_element_type` is the dtype the products are
/// accumulated and returned in, given to XLA as the dot's own result type (bf16 x bf16 ->
/// f32 and int8 x int8 -> int32 run on XLA's bf16 and int8 kernels, with no widened copy of
/// the operands). `precision` is accepted for JAX's signature.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::ones(&[2, 3, 4], DType::F32);
/// let y = Array::ones(&[2, 4, 5], DType::F32);
/// let z = lax::dot_general(&x, &y, (([2], [1]), ([0], [0])), None, Some(DType::F64));
/// assert_eq!((z.shape(), z.dtype()), (&[2usize, 3, 5][..], DType::F64));
/// ```
#[track_caller]
pub fn dot_general(
    lhs: &Array,
    rhs: &Array,
    dimension_numbers: impl Into<DotDims>,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Array {
    let _ = precision;
    lhs.dot_general_preferred(rhs, &dimension_numbers.into(), preferred_element_type)
}

/// [`dot_general`] with its result typed `out_sharding` over explicit mesh axes (JAX's
/// `lax.dot_general(..., out_sharding=...)`): how a product whose contracting dimensions are
/// sharded on both sides is to lie, which its operands leave ambiguous. See
/// [`with_out_sharding`](crate::with_out_sharding).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
/// use jaxrs::{AxisType, P};
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?
///     .with_axis_types(&[AxisType::Explicit; 2])?;
/// let _mesh = jaxrs::set_mesh(&mesh);
/// let x = jaxrs::reshard(&Array::ones(&[4, 8], DType::F32), P![None, "mp"]);
/// let w = jaxrs::reshard(&Array::ones(&[8, 2], DType::F32), P!["mp"]);
/// let f = jit(|(x, w): (Array, Array)| {
///     lax::dot_general_sharded(&x, &w, (([1], [0]), ([], [])), None, None, P!["dp"])
/// });
/// let y: Array = f.call((x, w));
/// assert_eq!(jaxrs::typeof_(&y).to_string(), "f32[4@dp,2]");
/// assert_eq!(y.to_vec::<f32>(), vec![8.0; 8]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[track_caller]
pub fn dot_general_sharded(
    lhs: &Array,
    rhs: &Array,
    dimension_numbers: impl Into<DotDims>,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
    out_sharding: impl Into<crate::Shardings>,
) -> Array {
    let dims = dimension_numbers.into();
    crate::with_out_sharding(out_sharding, || {
        dot_general(lhs, rhs, dims, precision, preferred_element_type)
    })
}

/// Vector and matrix products (`lax.dot`): `lhs`'s last axis contracted with `rhs`'s first.
#[track_caller]
pub fn dot(
    lhs: &Array,
    rhs: &Array,
    precision: Option<Precision>,
    preferred_element_type: Option<DType>,
) -> Array {
    assert!(
        lhs.rank() >= 1 && rhs.rank() >= 1,
        "lax.dot: operands need at least one axis, got shapes {:?} and {:?}",
        lhs.shape(),
        rhs.shape()
    );
    let dims = DotDims {
        lhs_contract: vec![lhs.rank() - 1],
        rhs_contract: vec![0],
        ..Default::default()
    };
    dot_general(lhs, rhs, dims, precision, preferred_element_type)
}

/// Batched matrix products (`lax.batch_matmul`): `lhs[..., m, k]` and `rhs[..., k, n]` with
/// the same leading (batch) axes give `[..., m, n]`.
#[track_caller]
pub fn batch_matmul(lhs: &Array, rhs: &Array, precision: Option<Precision>) -> Array {
    let n = lhs.rank();
    assert!(
        n >= 2 && rhs.rank() == n && lhs.shape()[..n - 2] == rhs.shape()[..n - 2],
        "lax.batch_matmul: operands need the same rank (at least 2) and batch axes, got shapes {:?} and {:?}",
        lhs.shape(),
        rhs.shape()
    );
    let batch: Vec<usize> = (0..n - 2).collect();
    let dims = DotDims {
        lhs_contract: vec![n - 1],
        rhs_contract: vec![n - 2],
        lhs_batch: batch.clone(),
        rhs_batch: batch,
    };
    dot_general(lhs, rhs, dims, precision, None)
}

/// `x[start:limit:stride]` along `axis`.
fn slice_in_dim(x: &Array, axis: usize, start: usize, limit: usize, stride: usize) -> Array {
    let mut lo = vec![0; x.rank()];
    let mut hi = x.shape().to_vec();
    let mut st = vec![1; x.rank()];
    lo[axis] = start;
    hi[axis] = limit.max(start);
    st[axis] = stride;
    x.slice(&lo, &hi, &st)
}

/// `a0 b0 a1 b1 ...` along `axis` (`a` as long as `b` or one longer), by interior padding
/// and a sum, as JAX's `_interleave`.
fn interleave(a: &Array, b: &Array, axis: usize) -> Array {
    let (na, nb) = (a.shape()[axis], b.shape()[axis]);
    let zeros = vec![0i64; a.rank()];
    let mut interior = zeros.clone();
    interior[axis] = 1;
    let (mut a_hi, mut b_lo, mut b_hi) = (zeros.clone(), zeros.clone(), zeros.clone());
    a_hi[axis] = i64::from(na == nb);
    b_lo[axis] = 1;
    b_hi[axis] = i64::from(na > nb);
    let zero = Array::zeros(&[], a.dtype());
    let pa = a.pad(&zeros, &a_hi, &interior, &zero);
    let pb = b.pad(&b_lo, &b_hi, &interior, &zero);
    if a.dtype() == DType::Bool {
        pa.logical_or(&pb)
    } else {
        pa + pb
    }
}

/// The inclusive scan of `elems` along `axis` under an associative `f`
/// (`lax.associative_scan`), in O(log n) rounds of `f` over halves, as JAX's; `f` combines
/// two trees of arrays of the same structure elementwise along the scanned axis (it sees
/// slices of any length). `reverse` scans from the end.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]);
/// let y = lax::associative_scan(|a: Array, b: Array| a + b, x, None, None);
/// assert_eq!(y.to_vec::<f32>(), vec![1.0, 3.0, 6.0, 10.0]);
/// ```
#[track_caller]
pub fn associative_scan<T: Tree>(
    f: impl Fn(T, T) -> T,
    elems: T,
    reverse: Option<bool>,
    axis: Option<i64>,
) -> T {
    let (leaves, def) = elems.flatten();
    assert!(
        !leaves.is_empty(),
        "lax.associative_scan: elems has no arrays"
    );
    let rank = leaves[0].rank() as i64;
    let axis = axis.unwrap_or(0);
    let ax = if axis < 0 { axis + rank } else { axis };
    assert!(
        (0..rank).contains(&ax),
        "lax.associative_scan: axis {axis} is out of range for shape {:?}",
        leaves[0].shape()
    );
    let ax = ax as usize;
    let n = leaves[0].shape()[ax];
    for l in &leaves {
        assert!(
            l.rank() as i64 == rank && l.shape()[ax] == n,
            "lax.associative_scan: every array needs {n} elements along axis {axis}, got shapes {:?} and {:?}",
            leaves[0].shape(),
            l.shape()
        );
    }
    let combine = |a: Vec<Array>, b: Vec<Array>| -> Vec<Array> {
        let out = f(
            crate::tree_unflatten(&def, a),
            crate::tree_unflatten(&def, b),
        );
        out.flatten().0
    };
    let reverse = reverse.unwrap_or(false);
    let flip = |xs: Vec<Array>| -> Vec<Array> { xs.iter().map(|x| x.flip([ax])).collect() };
    let leaves = if reverse { flip(leaves) } else { leaves };
    let scanned = scan_rec(&combine, leaves, ax);
    let scanned = if reverse { flip(scanned) } else { scanned };
    crate::tree_unflatten(&def, scanned)
}

fn scan_rec(
    combine: &dyn Fn(Vec<Array>, Vec<Array>) -> Vec<Array>,
    elems: Vec<Array>,
    ax: usize,
) -> Vec<Array> {
    let n = elems[0].shape()[ax];
    if n < 2 {
        return elems;
    }
    let each = |xs: &[Array], start: usize, limit: usize, stride: usize| -> Vec<Array> {
        xs.iter()
            .map(|x| slice_in_dim(x, ax, start, limit, stride))
            .collect()
    };
    // Pairs (0, 1), (2, 3), ... combined, scanned recursively: the odd prefixes.
    let reduced = combine(each(&elems, 0, n - 1, 2), each(&elems, 1, n, 2));
    let odd = scan_rec(combine, reduced, ax);
    let even = if n.is_multiple_of(2) {
        let m = odd[0].shape()[ax];
        combine(each(&odd, 0, m - 1, 1), each(&elems, 2, n, 2))
    } else {
        combine(odd.clone(), each(&elems, 2, n, 2))
    };
    let even: Vec<Array> = elems
        .iter()
        .zip(even)
        .map(|(e, r)| Array::concatenate(&[slice_in_dim(e, ax, 0, 1, 1), r], ax as i64))
        .collect();
    even.iter()
        .zip(&odd)
        .map(|(e, o)| interleave(e, o, ax))
        .collect()
}

/// `f` mapped over the leading axis of `xs` (`lax.map`): a [`scan`](fn@crate::scan) without a carry, so one
/// example at a time; `batch_size` maps `vmap(f)` over batches of that many examples (the
/// remainder, if any, as one more `vmap`).
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
/// let ys = lax::map(|x: Array| x.sum(None, false), xs, Some(2));
/// assert_eq!(ys.to_vec::<f32>(), vec![3.0, 7.0, 11.0]);
/// ```
#[track_caller]
pub fn map<X: Tree, Y: Tree>(f: impl Fn(X) -> Y, xs: X, batch_size: Option<usize>) -> Y {
    let Some(bs) = batch_size else {
        return scan(|(), x: X| ((), f(x)), (), xs).1;
    };
    assert!(bs > 0, "lax.map: batch_size must be positive");
    let (leaves, def) = xs.flatten();
    assert!(!leaves.is_empty(), "lax.map: xs has no arrays");
    let n = leaves[0].shape()[0];
    let (nb, rest) = (n / bs, n % bs);
    let batched: Vec<Array> = leaves
        .iter()
        .map(|x| {
            let mut shape = vec![nb, bs];
            shape.extend_from_slice(&x.shape()[1..]);
            x.slice_axis(0, 0, nb * bs).reshape(shape)
        })
        .collect();
    let g = vmap(&f, 0i64, 0i64);
    let ys = scan(
        |(), x: X| ((), g(x)),
        (),
        crate::tree_unflatten::<X>(&def, batched),
    )
    .1;
    let (ys, ydef) = ys.flatten();
    let flat: Vec<Array> = ys
        .iter()
        .map(|y| {
            let mut shape = vec![nb * bs];
            shape.extend_from_slice(&y.shape()[2..]);
            y.reshape(shape)
        })
        .collect();
    if rest == 0 {
        return crate::tree_unflatten(&ydef, flat);
    }
    let tail: Vec<Array> = leaves.iter().map(|x| x.slice_axis(0, nb * bs, n)).collect();
    let tail_ys = g(crate::tree_unflatten::<X>(&def, tail)).flatten().0;
    let joined = flat
        .into_iter()
        .zip(tail_ys)
        .map(|(a, b)| Array::concatenate(&[a, b], 0))
        .collect();
    crate::tree_unflatten(&ydef, joined)
}

/// A branch of [`platform_dependent`]: the platform's name and the function run there.
pub type PlatformBranch<'a, A, R> = (&'a str, &'a dyn Fn(A) -> R);

/// `lax.platform_dependent(*args, default, **per_platform)`: the branch of `per_platform`
/// named for the platform jaxrs runs on (`"cpu"`, `"cuda"`, `"rocm"`, as its devices'
/// `platform()` says), else `default`; called on `args`.
///
/// One process runs on one platform, so the branch is chosen when the function is traced
/// (JAX chooses when it lowers, and lowers every branch only when it exports for several
/// platforms at once). With no branch for the platform and no `default`, it stops with a
/// message naming the platform, where JAX's lowering fails.
///
/// ```
/// use jaxrs::lax;
/// use jaxrs::prelude::*;
///
/// let x = Array::from_vec(vec![0.0f32, 1.0], &[2]);
/// let sin = |x: Array| x.sin();
/// let cos = |x: Array| x.cos();
/// let y = lax::platform_dependent(x, Some(&cos), &[("cpu", &sin)]);
/// assert_eq!(y.to_vec::<f32>()[0], 0.0); // on the CPU plugin
/// ```
#[track_caller]
pub fn platform_dependent<A, R>(
    args: A,
    default: Option<&dyn Fn(A) -> R>,
    per_platform: &[PlatformBranch<'_, A, R>],
) -> R {
    let devices = crate::local_devices();
    let platform = devices.first().map_or("cpu", |d| d.platform());
    match per_platform.iter().find(|(name, _)| *name == platform) {
        Some((_, branch)) => branch(args),
        None => match default {
            Some(f) => f(args),
            None => {
                let named: Vec<&str> = per_platform.iter().map(|(n, _)| *n).collect();
                panic!(
                    "lax.platform_dependent: no branch for platform {platform:?} (branches: \
                     {named:?}) and no default at {}",
                    std::panic::Location::caller()
                )
            }
        },
    }
}
