//! The spherical harmonics `sph_harm_y`, on the normalized associated Legendre functions of
//! JAX 0.10.2's `_gen_associated_legendre`: the diagonal `P_m^m` and the first off-diagonal
//! `P_{m+1}^m` in closed form, the rest by the three-term recurrence in the degree, over the
//! whole `(order, degree, point)` table as JAX computes it.

use super::real_only;
use crate::numpy::{inexact, roll};
use crate::{lax, s, where_, Array, DType, IndexMode};

/// The coefficients of `P_l^m = d0 x P_{l-1}^m - d1 P_{l-2}^m` (normalized), as JAX's
/// `_gen_recurrence_mask`: `[i, m, l]` holds those of the entries with `l - m = i`, zero
/// elsewhere, so that step `i` of the recurrence fills one diagonal of the table.
fn recurrence_masks(l_max: usize, dtype: DType) -> (Array, Array) {
    let size = l_max + 1;
    let idx = Array::arange(0.0, size as f64, 1.0, dtype);
    let m_mat = idx.reshape([size, 1]).broadcast_to(&[size, size]);
    let l_mat = idx.reshape([1, size]).broadcast_to(&[size, size]);
    let c0 = &l_mat * &l_mat;
    let c1 = &m_mat * &m_mat;
    let c2 = &l_mat * 2.0;
    let c3 = &(&l_mat - 1.0) * &(&l_mat - 1.0);
    let d0 = (&(&(&c0 * 4.0) - 1.0) / &(&c0 - &c1)).sqrt();
    let d1 = (&(&(&c2 + 1.0) * &(&c3 - &c1)) / &(&(&c2 - 3.0) * &(&c0 - &c1))).sqrt();
    let zeros = Array::zeros(&[size, size], dtype);
    let d0_mask = where_(l_mat.gt(&m_mat), &d0, &zeros);
    let d1_mask = where_(l_mat.ge(&(&m_mat + 2.0)), &d1, &zeros);
    let ints = Array::arange(0.0, size as f64, 1.0, DType::I32);
    let (i, j, k) = (
        ints.reshape([size, 1, 1]),
        ints.reshape([1, size, 1]),
        ints.reshape([1, 1, size]),
    );
    let plane = (&(&i + &j) - &k).eq(0).astype(dtype);
    (
        &d0_mask.reshape([1, size, size]) * &plane,
        &d1_mask.reshape([1, size, size]) * &plane,
    )
}

/// The normalized associated Legendre functions `N_l^m P_l^m(x)` for `0 <= m, l <= l_max` at
/// the points `x` (a vector), shape `(l_max + 1, l_max + 1, len(x))`, order first: JAX's
/// `_gen_associated_legendre(l_max, x, is_normalized=True)`.
fn normalized_legendre(l_max: usize, x: &Array) -> Array {
    let dtype = x.dtype();
    let (size, points) = (l_max + 1, x.shape()[0]);
    // `0.5 / jnp.sqrt(np.pi)`: a float64 constant, rounded to the dtype where it is used.
    let initial = 0.5 / std::f64::consts::PI.sqrt();
    let mut p = Array::zeros(&[size, size, points], dtype)
        .at(s![0, 0])
        .set(initial);
    if l_max == 0 {
        return p;
    }

    let a_idx = Array::arange(1.0, size as f64, 1.0, dtype);
    let b_idx = Array::arange(0.0, l_max as f64, 1.0, dtype);
    let half_over_a: Array = Array::full(&[l_max], 0.5, dtype) / &a_idx;
    let f_a = (-&(&half_over_a + 1.0).sqrt()).cumprod(0);
    let f_b = (&(&b_idx * 2.0) + 3.0).sqrt();

    // The diagonal: P_m^m from sin θ = sqrt(1 - x²) to the power m.
    let sin_squared: Array = 1.0 - &(x * x);
    let y = sin_squared.sqrt().broadcast_to(&[l_max, points]).cumprod(0);
    let p_diag = &(&f_a.reshape([l_max, 1]) * &y) * initial;
    let diag = Array::arange(1.0, size as f64, 1.0, DType::I32);
    p = p.at(s![&diag, &diag]).set(&p_diag);

    // The first off-diagonal: P_{m+1}^m from P_m^m.
    let below = Array::arange(0.0, l_max as f64, 1.0, DType::I32);
    let p_offdiag =
        &(&f_b.reshape([l_max, 1]) * &x.reshape([1, points])) * &p.index(s![&below, &below]);
    p = p.at(s![&below, &(&below + 1)]).set(&p_offdiag);

    if l_max > 1 {
        let (d0, d1) = recurrence_masks(l_max, dtype);
        let x3 = x.reshape([1, 1, points]);
        p = crate::fori_loop(
            2,
            size as i32,
            |i, p: Array| {
                let coeff_0 = d0.index(i).reshape([size, size, 1]);
                let coeff_1 = d1.index(i).reshape([size, size, 1]);
                let h = &(&coeff_0 * &(&roll(&p, 1, 1) * &x3)) - &(&coeff_1 * &roll(&p, 2, 1));
                &p + &h
            },
            p,
        );
    }
    p
}

/// The spherical harmonics `Y_n^m(θ, φ) = N_n^m P_n^m(cos θ) e^{i m φ}`, orthonormal on the
/// sphere (`jax.scipy.special.sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None)`): degree
/// `n >= 0` and order `|m| <= n` integer vectors, colatitude `theta` a vector (or a 0-d array,
/// taken as a vector of one) and longitude `phi`, broadcasting against `m`; the result is
/// complex128 whatever the angles' float width, as JAX's (with 64-bit types on) is: its
/// `(-1.0) ** abs(m)` is a float64. As in JAX, entry `k`
/// reads the table at `(|m[k]|, n[k], point k)`, so `theta` has one point per entry of `n`,
/// and negative orders are `(-1)^m` times the conjugate of the positive one. Values outside
/// `n >= 0`, `|m| <= n` are undefined, as JAX says.
///
/// `n_max` is JAX's extra argument, the largest degree: `None` takes `max(n)`, which needs a
/// concrete `n` (under `jit` or `vmap` pass it); a smaller `n_max` clips the degrees to it.
/// JAX's `diff_n` is not supported there (it raises), and has no parameter here. Derivatives
/// in `theta` and `phi` are those of the recurrence, as JAX traces it.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::scipy::special::sph_harm_y;
///
/// // Y_1^{-1} = sqrt(3 / (8π)) sin θ e^{-iφ}.
/// let n = Array::from_vec(vec![1i32], &[1]);
/// let m = Array::from_vec(vec![-1i32], &[1]);
/// let (theta, phi) = (0.7f64, 0.3f64);
/// let y = sph_harm_y(&n, &m, &Array::from_vec(vec![theta], &[1]), &Array::scalar(phi), None);
/// assert_eq!(y.dtype(), DType::C128);
/// let (re, im) = (y.real().to_vec::<f64>()[0], y.imag().to_vec::<f64>()[0]);
/// let r = (3.0 / (8.0 * std::f64::consts::PI)).sqrt() * theta.sin();
/// assert!((re - r * phi.cos()).abs() < 1e-14 && (im + r * phi.sin()).abs() < 1e-14);
/// ```
#[track_caller]
pub fn sph_harm_y(
    n: &Array,
    m: &Array,
    theta: &Array,
    phi: &Array,
    n_max: impl Into<Option<usize>>,
) -> Array {
    for (name, v) in [("n", n), ("m", m)] {
        assert!(
            v.dtype().is_int() || v.dtype().is_unsigned(),
            "sph_harm_y: {name} must be of an integer dtype, not {}, as JAX indexes with it",
            v.dtype().name()
        );
    }
    assert!(
        n.rank() >= 1,
        "sph_harm_y: n must be a vector, as JAX takes len(n)"
    );
    let n_max = match n_max.into() {
        Some(n_max) => n_max,
        None => {
            assert!(
                n.is_concrete(),
                "sph_harm_y: n_max must be given to use sph_harm_y within transformations, \
                 as in JAX (max(n) is not known while n is traced)"
            );
            let max = n.astype(DType::I64).to_vec::<i64>().into_iter().max();
            let max = max.expect("sph_harm_y: n is empty, so it has no maximum (as in JAX)");
            usize::try_from(max).expect("sph_harm_y: the degrees n must be non-negative")
        }
    };
    let theta = inexact(theta);
    real_only("sph_harm_y", &theta);
    let theta = if theta.rank() == 0 {
        theta.reshape([1])
    } else {
        theta
    };
    assert!(
        theta.rank() == 1,
        "sph_harm_y: theta must be a vector (one point per degree), got shape {:?}",
        theta.shape()
    );

    let legendre = normalized_legendre(n_max, &theta.cos());
    let m_abs = m.abs();
    let points = Array::arange(0.0, n.shape()[0] as f64, 1.0, DType::I32);
    let value = legendre
        .at(s![&m_abs, n, &points])
        .mode(IndexMode::Clip)
        .get();

    let angle = inexact(&(&m_abs * phi));
    let vandermonde = lax::complex(&angle.cos(), &angle.sin());
    let harmonics = lax::complex(
        &(&value * &vandermonde.real()),
        &(&value * &vandermonde.imag()),
    );
    // JAX's `(-1.0) ** abs(m)` is `lax.pow` of a float64 -1 and an integer: exactly ±1, and
    // float64, so the product, and with it every entry, is complex128.
    let ones = Array::ones(m_abs.shape(), DType::F64);
    let sign = where_(m_abs.bitwise_and(1).eq(1), &-&ones, &ones);
    where_(m.lt(0), &(&sign * &harmonics.conj()), &harmonics)
}
