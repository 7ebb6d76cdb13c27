//! The samplers that factor a matrix: `jax.random.multivariate_normal` (by Cholesky, eigh or
//! SVD of the covariance) and `jax.random.orthogonal` (QR of a normal matrix). Their normal
//! draws are JAX's bit for bit; the factorizations are jaxrs's kernels, not LAPACK's, so the
//! samples equal JAX's to the factorization's rounding (a few ulps), not bit for bit.

use super::{check_key, compiled, float_dtype, normal};
use crate::aval::broadcast_shapes;
use crate::core::array::Array;
use crate::dtype::DType;
use crate::ops::einsum;
use crate::prims::decompositions::{cholesky, eigh, hermitian_part, qr, svd};

/// How [`multivariate_normal`] factors the covariance (`method` of
/// `jax.random.multivariate_normal`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CovFactor {
    /// The Cholesky factor (JAX's default): the fastest, for positive definite covariances.
    #[default]
    Cholesky,
    /// Eigenvectors scaled by the roots of the eigenvalues: for positive semi-definite ones.
    Eigh,
    /// Singular vectors scaled by the roots of the singular values.
    Svd,
}

/// Multivariate normal floats of mean `mean` (`[..., n]`) and covariance `cov`
/// (`[..., n, n]`) (`jax.random.multivariate_normal(key, mean, cov, shape, dtype, method)`):
/// `mean + factor @ z` for standard normal `z`. `shape` (default: the broadcast batch shape
/// of `mean` and `cov`) is the result's shape without its last axis, `n`.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random::{self, CovFactor};
///
/// let mean = Array::from_vec(vec![1.0f32, -1.0], &[2]);
/// let cov = Array::from_vec(vec![2.0f32, 0.5, 0.5, 1.0], &[2, 2]);
/// let x = random::multivariate_normal(&random::key(0), &mean, &cov, Some(&[1000]), DType::F32, CovFactor::Cholesky);
/// assert_eq!(x.shape(), &[1000, 2]);
/// ```
#[track_caller]
pub fn multivariate_normal(
    key: &Array,
    mean: &Array,
    cov: &Array,
    shape: Option<&[usize]>,
    dtype: DType,
    method: CovFactor,
) -> Array {
    check_key("multivariate_normal", key);
    float_dtype("multivariate_normal", dtype);
    if mean.rank() < 1 {
        panic!("jaxrs::random::multivariate_normal: needs mean.ndim >= 1, got a scalar mean");
    }
    if cov.rank() < 2 {
        panic!(
            "jaxrs::random::multivariate_normal: needs cov.ndim >= 2, got shape {:?}",
            cov.shape()
        );
    }
    let n = mean.shape()[mean.rank() - 1];
    if cov.shape()[cov.rank() - 2..] != [n, n] {
        panic!(
            "jaxrs::random::multivariate_normal: needs cov.shape == (..., n, n) for n={n}, but \
             got cov.shape == {:?}",
            cov.shape()
        );
    }
    let mean_batch = &mean.shape()[..mean.rank() - 1];
    let cov_batch = &cov.shape()[..cov.rank() - 2];
    let batch = broadcast_shapes(mean_batch, cov_batch).unwrap_or_else(|| {
        panic!(
            "jaxrs::random::multivariate_normal: the batch shapes {mean_batch:?} of mean and \
             {cov_batch:?} of cov do not broadcast"
        )
    });
    let mut shape = match shape {
        None => batch,
        Some(s) => {
            if broadcast_shapes(s, &batch).as_deref() != Some(s) {
                panic!(
                    "jaxrs::random::multivariate_normal: shape {s:?} is not compatible with the \
                     batch shape {batch:?}"
                );
            }
            s.to_vec()
        }
    };
    shape.push(n);
    let signature = format!("multivariate_normal {shape:?} {dtype:?} {method:?}");
    let args = vec![key.clone(), mean.clone(), cov.clone()];
    compiled(signature, args, move |a| {
        let (mean, cov) = (&a[1], &a[2]);
        let factor = match method {
            CovFactor::Cholesky => cholesky(&hermitian_part(cov)),
            CovFactor::Eigh => {
                let (v, w) = eigh(&hermitian_part(cov));
                v.mul(w.sqrt().expand_dims(-2))
            }
            CovFactor::Svd => {
                let (u, s, _) = svd(cov, true);
                u.mul(s.sqrt().expand_dims(-2))
            }
        };
        let z = normal(&a[0], &shape, dtype);
        mean.add(einsum("...ij,...j->...i", &[&factor, &z]))
    })
}

/// Matrices drawn uniformly from the orthogonal group (`jax.random.orthogonal(key, n, shape,
/// dtype, m)`): the QR of a normal matrix, with the signs of `r`'s diagonal moved into `q`.
/// The result is `shape` followed by `n x m` (`m` defaults to `n`): orthonormal columns when
/// `n >= m`, rows otherwise.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::random;
///
/// let q = random::orthogonal(&random::key(0), 3, &[], DType::F32, None);
/// let qtq = q.t().matmul(&q).to_vec::<f32>();
/// assert!((qtq[0] - 1.0).abs() < 1e-5 && qtq[1].abs() < 1e-5);
/// ```
#[track_caller]
pub fn orthogonal(key: &Array, n: usize, shape: &[usize], dtype: DType, m: Option<usize>) -> Array {
    check_key("orthogonal", key);
    float_dtype("orthogonal", dtype);
    let m = m.unwrap_or(n);
    let shape = shape.to_vec();
    let signature = format!("orthogonal {n} {m} {shape:?} {dtype:?}");
    compiled(signature, vec![key.clone()], move |a| {
        let dims: Vec<usize> = shape.iter().copied().chain([n.max(m), n.min(m)]).collect();
        let z = normal(&a[0], &dims, dtype);
        let (q, r) = qr(&z, false);
        let rank = r.rank();
        let diagonal = einsum("...ii->...i", &[&r]);
        let x = q.mul(diagonal.sign().expand_dims(-2));
        if n < m {
            x.swap_axes(rank as i64 - 2, rank as i64 - 1)
        } else {
            x
        }
    })
}
