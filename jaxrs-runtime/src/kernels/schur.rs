//! The Hessenberg reduction and the Schur decomposition of one square matrix, for the
//! `jaxrs_hessenberg` and `jaxrs_schur` kernels (`kernels::linalg`).
//!
//! - The Hessenberg reduction is LAPACK's unblocked `gehd2` (and `unghr` for Q): a
//!   Householder reflector per column, `β = -sign(Re α) ‖x‖`, so `H` and `Q` are the ones
//!   jaxlib's `gehrd` gives (the reduction is unique given that convention: `Q`'s first
//!   column is `e₀`).
//! - The Schur decomposition reduces to Hessenberg form, then runs the small-bulge QR
//!   iteration on it, accumulating the Schur vectors: LAPACK's `lahqr` as faer 0.24 writes it
//!   (real: Francis double shifts, 2x2 blocks standardised as `lanv2` does, so a complex pair
//!   sits in a block `[[a, b], [c, a]]` with `b c < 0`; complex: single shifts with Givens
//!   rotations). faer's QR iteration is private to it, so it is ported here: derived from
//!   faer 0.24 (MIT License, copyright the faer authors), which derives it from LAPACK
//!   (modified BSD License, copyright the University of Tennessee and its co-authors). LAPACK's `hseqr` also runs `lahqr` below 75 rows; above, it switches to the
//!   multishift iteration with aggressive early deflation, which this port does not have
//!   (it is slower there, not less accurate). The form is not unique: the eigenvalues'
//!   order along the diagonal and the signs (phases) of Z's columns are this iteration's
//!   and may differ from LAPACK's.

use num_complex::{Complex, ComplexFloat};
use num_traits::{Float, One, Zero};
use std::ops::{AddAssign, MulAssign, SubAssign};

/// The element types the kernels take: `f32`, `f64` and their complex numbers.
pub trait Elem: ComplexFloat + AddAssign + SubAssign + MulAssign + Send + Sync + 'static {
    /// `r` as an element.
    fn of_real(r: Self::Real) -> Self;
    /// NaN (in both parts of a complex number): a failed factorisation's value.
    fn nan() -> Self;
    /// Runs the QR iteration on the Hessenberg matrix `h`, applying each transformation to
    /// `z`'s columns too; false when it does not converge.
    fn schur_iteration(h: &mut Square<Self>, z: &mut Square<Self>) -> bool;
}

impl Elem for f32 {
    fn of_real(r: f32) -> f32 {
        r
    }
    fn nan() -> f32 {
        f32::NAN
    }
    fn schur_iteration(h: &mut Square<f32>, z: &mut Square<f32>) -> bool {
        real_lahqr(h, z)
    }
}

impl Elem for f64 {
    fn of_real(r: f64) -> f64 {
        r
    }
    fn nan() -> f64 {
        f64::NAN
    }
    fn schur_iteration(h: &mut Square<f64>, z: &mut Square<f64>) -> bool {
        real_lahqr(h, z)
    }
}

impl Elem for Complex<f32> {
    fn of_real(r: f32) -> Self {
        Complex::new(r, 0.0)
    }
    fn nan() -> Self {
        Complex::new(f32::NAN, f32::NAN)
    }
    fn schur_iteration(h: &mut Square<Self>, z: &mut Square<Self>) -> bool {
        complex_lahqr(h, z)
    }
}

impl Elem for Complex<f64> {
    fn of_real(r: f64) -> Self {
        Complex::new(r, 0.0)
    }
    fn nan() -> Self {
        Complex::new(f64::NAN, f64::NAN)
    }
    fn schur_iteration(h: &mut Square<Self>, z: &mut Square<Self>) -> bool {
        complex_lahqr(h, z)
    }
}

/// A dense `n x n` matrix, row-major.
#[derive(Clone, Debug)]
pub struct Square<T> {
    pub n: usize,
    pub data: Vec<T>,
}

impl<T: Copy + Zero + One> Square<T> {
    pub fn identity(n: usize) -> Self {
        let mut data = vec![T::zero(); n * n];
        for i in 0..n {
            data[i * n + i] = T::one();
        }
        Square { n, data }
    }
}

impl<T> std::ops::Index<(usize, usize)> for Square<T> {
    type Output = T;
    fn index(&self, (r, c): (usize, usize)) -> &T {
        &self.data[r * self.n + c]
    }
}

impl<T> std::ops::IndexMut<(usize, usize)> for Square<T> {
    fn index_mut(&mut self, (r, c): (usize, usize)) -> &mut T {
        &mut self.data[r * self.n + c]
    }
}

/// LAPACK's `larfg`: the reflector `I - τ v vᴴ` (`v = [1, tail..]`) that maps `[α, x]` to
/// `[β, 0..]` with `β = -sign(Re α) ‖[α, x]‖` real. Returns `(β, τ)` and leaves `v`'s tail in
/// `x`; `τ = 0` (the identity) when there is nothing to reduce.
fn householder<T: Elem>(alpha: T, x: &mut [T]) -> (T, T) {
    let xnorm = x.iter().fold(T::Real::zero(), |s, v| s.hypot(v.abs()));
    if xnorm == T::Real::zero() && alpha.im() == T::Real::zero() {
        return (alpha, T::zero());
    }
    let norm = alpha.abs().hypot(xnorm);
    let beta = if alpha.re() >= T::Real::zero() {
        -norm
    } else {
        norm
    };
    let tau = (T::of_real(beta) - alpha) / T::of_real(beta);
    let scale = T::one() / (alpha - T::of_real(beta));
    for v in x.iter_mut() {
        *v *= scale;
    }
    (T::of_real(beta), tau)
}

/// [`householder`] for a real vector.
fn real_householder<R: Float>(alpha: R, x: &mut [R]) -> (R, R) {
    let xnorm = x.iter().fold(R::zero(), |s, v| s.hypot(*v));
    if xnorm == R::zero() {
        return (alpha, R::zero());
    }
    let norm = alpha.hypot(xnorm);
    let beta = if alpha >= R::zero() { -norm } else { norm };
    let scale = R::one() / (alpha - beta);
    for v in x.iter_mut() {
        *v = *v * scale;
    }
    (beta, (beta - alpha) / beta)
}

/// `|Re z| + |Im z|` of a complex number.
fn l1<R: Float>(z: Complex<R>) -> R {
    z.re.abs() + z.im.abs()
}

/// Reduces `a` to upper Hessenberg form in place (LAPACK's `gehd2`), zeros below the first
/// subdiagonal, and returns `Q` with `a = Q H Qᴴ` (LAPACK's `unghr`).
pub fn hessenberg<T: Elem>(a: &mut Square<T>) -> Square<T> {
    let n = a.n;
    let mut reflectors: Vec<(Vec<T>, T)> = Vec::with_capacity(n.saturating_sub(1));
    for i in 0..n.saturating_sub(1) {
        let mut tail: Vec<T> = (i + 2..n).map(|r| a[(r, i)]).collect();
        let (beta, tau) = householder(a[(i + 1, i)], &mut tail);
        a[(i + 1, i)] = beta;
        for r in i + 2..n {
            a[(r, i)] = T::zero();
        }
        let v: Vec<T> = std::iter::once(T::one()).chain(tail).collect();
        // A ← A H on columns i+1.., every row.
        for r in 0..n {
            let mut s = T::zero();
            for (k, vk) in v.iter().enumerate() {
                s += a[(r, i + 1 + k)] * *vk;
            }
            let f = tau * s;
            for (k, vk) in v.iter().enumerate() {
                a[(r, i + 1 + k)] -= f * vk.conj();
            }
        }
        // A ← Hᴴ A on rows i+1.., columns i+1...
        reflect_rows(a, &v, tau.conj(), i + 1, i + 1..n);
        reflectors.push((v, tau));
    }
    let mut q = Square::identity(n);
    for (i, (v, tau)) in reflectors.iter().enumerate().rev() {
        reflect_rows(&mut q, v, *tau, i + 1, i + 1..n);
    }
    q
}

/// `x[first.., cols] ← (I - τ v vᴴ) x[first.., cols]`.
fn reflect_rows<T: Elem>(
    x: &mut Square<T>,
    v: &[T],
    tau: T,
    first: usize,
    cols: std::ops::Range<usize>,
) {
    for c in cols {
        let mut s = T::zero();
        for (k, vk) in v.iter().enumerate() {
            s += vk.conj() * x[(first + k, c)];
        }
        let f = tau * s;
        for (k, vk) in v.iter().enumerate() {
            x[(first + k, c)] -= f * *vk;
        }
    }
}

/// The Schur decomposition of `a`: `(T, Z)` with `a = Z T Zᴴ`, or `None` when the QR
/// iteration does not converge (or `a` is not finite).
pub fn schur<T: Elem>(a: &Square<T>) -> Option<(Square<T>, Square<T>)> {
    if a.data.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut t = a.clone();
    let mut z = hessenberg(&mut t);
    T::schur_iteration(&mut t, &mut z).then_some((t, z))
}

fn real<R: Float>(v: f64) -> R {
    R::from(v).expect("a small constant")
}

/// The eigenvalues `(re, im)` of the real 2x2 matrix `[[a00, a01], [a10, a11]]`.
fn real_eig22<R: Float>(a00: R, a01: R, a10: R, a11: R) -> ((R, R), (R, R)) {
    let s = a00.abs() + a01.abs() + a10.abs() + a11.abs();
    if s == R::zero() {
        return ((R::zero(), R::zero()), (R::zero(), R::zero()));
    }
    let (a00, a01, a10, a11) = (a00 / s, a01 / s, a10 / s, a11 / s);
    let tr = (a00 + a11) * real(0.5);
    let det = (a00 - tr) * (a00 - tr) + a01 * a10;
    if det >= R::zero() {
        let rtdisc = det.sqrt();
        (
            (s * (tr + rtdisc), R::zero()),
            (s * (tr - rtdisc), R::zero()),
        )
    } else {
        let rtdisc = (-det).sqrt();
        ((s * tr, s * rtdisc), (s * tr, -(s * rtdisc)))
    }
}

/// LAPACK's `lanv2`: the standardised Schur factorisation of a real 2x2 block,
/// `[[a, b], [c, d]] = [[cs, -sn], [sn, cs]] [[aa, bb], [cc, dd]] [[cs, sn], [-sn, cs]]`, where
/// `cc = 0` (real eigenvalues) or `aa = dd` and `bb cc < 0` (a complex pair). Returns the
/// standardised block (row-major) and `(cs, sn)`.
fn real_schur22<R: Float>(mut a: R, mut b: R, mut c: R, mut d: R) -> ([R; 4], (R, R)) {
    let zero = R::zero();
    let one = R::one();
    let half: R = real(0.5);
    let multpl: R = real(4.0);
    let eps = R::epsilon();
    let safmn2 = (R::min_positive_value() / eps).sqrt();
    let safmx2 = one / safmn2;
    let mut cs;
    let mut sn;
    if c == zero {
        cs = one;
        sn = zero;
    } else if b == zero {
        cs = zero;
        sn = one;
        std::mem::swap(&mut d, &mut a);
        b = -c;
        c = zero;
    } else if a == d && (b > zero) != (c > zero) {
        cs = one;
        sn = zero;
    } else {
        let mut temp = a - d;
        let mut p = temp * half;
        let bcmax = b.abs().max(c.abs());
        let mut bcmin = b.abs().min(c.abs());
        if (b > zero) != (c > zero) {
            bcmin = -bcmin;
        }
        let mut scale = p.abs().max(bcmax);
        let mut z = (p / scale) * p + (bcmax / scale) * bcmin;
        if z >= multpl * eps {
            let mut root = scale.sqrt() * z.sqrt();
            if p < zero {
                root = -root;
            }
            z = p + root;
            a = d + z;
            d = d - (bcmax / z) * bcmin;
            let tau = c.hypot(z);
            cs = z / tau;
            sn = c / tau;
            b = b - c;
            c = zero;
        } else {
            let mut sigma = b + c;
            for _ in 0..20 {
                scale = temp.abs().max(sigma.abs());
                if scale >= safmx2 {
                    sigma = sigma * safmn2;
                    temp = temp * safmn2;
                    continue;
                }
                if scale <= safmn2 {
                    sigma = sigma * safmx2;
                    temp = temp * safmx2;
                    continue;
                }
                break;
            }
            p = temp * half;
            let mut tau = sigma.hypot(temp);
            cs = ((one + sigma.abs() / tau) * half).sqrt();
            sn = -p / (tau * cs);
            if sigma < zero {
                sn = -sn;
            }
            let aa = a * cs + b * sn;
            let bb = -a * sn + b * cs;
            let cc = c * cs + d * sn;
            let dd = -c * sn + d * cs;
            a = aa * cs + cc * sn;
            b = bb * cs + dd * sn;
            c = -aa * sn + cc * cs;
            d = -bb * sn + dd * cs;
            temp = (a + d) * half;
            a = temp;
            d = temp;
            if c != zero && b != zero && (b > zero) == (c > zero) {
                let sab = b.abs().sqrt();
                let sac = c.abs().sqrt();
                p = if c > zero { sab * sac } else { -sab * sac };
                tau = one / (b + c).abs().sqrt();
                a = temp + p;
                d = temp - p;
                b = b - c;
                c = zero;
                let cs1 = sab * tau;
                let sn1 = sac * tau;
                temp = cs * cs1 - sn * sn1;
                sn = cs * sn1 + sn * cs1;
                cs = temp;
            }
        }
    }
    ([a, b, c, d], (cs, sn))
}

/// The first column of `(H - s1)(H - s2)` for the leading 2x2 or 3x3 block `h` (`nr` rows
/// from `(i, i)`), scaled: the start of a double-shift bulge.
fn real_shift_column<R: Float>(
    a: &Square<R>,
    i: usize,
    nr: usize,
    s1: (R, R),
    s2: (R, R),
) -> [R; 3] {
    let h = |r: usize, c: usize| a[(i + r, i + c)];
    if nr == 2 {
        let s = (h(0, 0) - s2.0).abs() + s2.1.abs() + h(1, 0).abs();
        if s == R::zero() {
            return [R::zero(); 3];
        }
        let h10s = h(1, 0) / s;
        [
            h10s * h(0, 1) + (h(0, 0) - s1.0) * ((h(0, 0) - s2.0) / s) - s1.1 * (s2.1 / s),
            h10s * (h(0, 0) + h(1, 1) - s1.0 - s2.0),
            R::zero(),
        ]
    } else {
        let s = (h(0, 0) - s2.0).abs() + s2.1.abs() + h(1, 0).abs() + h(2, 0).abs();
        if s == R::zero() {
            return [R::zero(); 3];
        }
        let h10s = h(1, 0) / s;
        let h20s = h(2, 0) / s;
        [
            (h(0, 0) - s1.0) * ((h(0, 0) - s2.0) / s) - s1.1 * (s2.1 / s)
                + h(0, 1) * h10s
                + h(0, 2) * h20s,
            h10s * (h(0, 0) + h(1, 1) - s1.0 - s2.0) + h(1, 2) * h20s,
            h20s * (h(0, 0) + h(2, 2) - s1.0 - s2.0) + h(2, 1) * h10s,
        ]
    }
}

/// Two entries a plane rotation mixes: `(row, col)` of `x`, then of `y`.
type EntryPair = ((usize, usize), (usize, usize));

/// `x ← c x + s y`, `y ← c y - s x` (LAPACK's `rot`) over the pairs given.
fn plane_rotation<R: Float>(m: &mut Square<R>, pairs: &[EntryPair], cs: R, sn: R) {
    for &(p, q) in pairs {
        let (x, y) = (m[p], m[q]);
        m[p] = cs * x + sn * y;
        m[q] = cs * y - sn * x;
    }
}

/// Is the subdiagonal entry `(i, i-1)` negligible (the Ahues-Tisseur test LAPACK uses)?
/// `abs1` is the modulus the test measures with.
fn negligible<T: Copy + std::ops::Sub<Output = T>, R: Float>(
    a: &Square<T>,
    i: usize,
    n: usize,
    (ulp, small): (R, R),
    abs1: impl Fn(T) -> R,
) -> bool {
    let sub = abs1(a[(i, i - 1)]);
    if sub < small {
        return true;
    }
    let mut tst = abs1(a[(i - 1, i - 1)]) + abs1(a[(i, i)]);
    if tst == R::zero() {
        if i >= 2 {
            tst = tst + abs1(a[(i - 1, i - 2)]);
        }
        if i + 1 < n {
            tst = tst + abs1(a[(i + 1, i)]);
        }
    }
    if sub > ulp * tst {
        return false;
    }
    let up = abs1(a[(i - 1, i)]);
    let ab = sub.max(up);
    let ba = sub.min(up);
    let diff = abs1(a[(i, i)] - a[(i - 1, i - 1)]);
    let aa = abs1(a[(i, i)]).max(diff);
    let bb = abs1(a[(i, i)]).min(diff);
    let s = aa + ab;
    ba * (ab / s) <= (ulp * (bb * (aa / s))).max(small)
}

/// The double-shift QR iteration on the real Hessenberg matrix `a` (faer's `lahqr`, after
/// LAPACK's `dlahqr`), the full Schur form and the vectors in `z`.
fn real_lahqr<R: Float>(a: &mut Square<R>, z: &mut Square<R>) -> bool {
    let n = a.n;
    let eps = R::epsilon();
    let small = R::min_positive_value() / eps;
    let (dat1, dat2): (R, R) = (real(0.75), real(-0.4375));
    if n <= 1 {
        return true;
    }
    let itmax = 30 * n.max(10);
    let mut k_defl = 0usize;
    let mut istop = n;
    let mut istart = 0usize;
    for iter in 0..=itmax {
        if iter == itmax {
            return false;
        }
        if istart + 1 >= istop {
            break;
        }
        if let Some(i) = (istart + 1..istop)
            .rev()
            .find(|&i| negligible(a, i, n, (eps, small), |x: R| x.abs()))
        {
            a[(i, i - 1)] = R::zero();
            istart = i;
        }
        if istart + 1 == istop {
            // A 1x1 block converged.
            k_defl = 0;
            istop = istart;
            istart = 0;
            continue;
        }
        if istart + 2 == istop {
            // A 2x2 block converged: standardise it.
            let (i0, i1) = (istart, istart + 1);
            let (block, (cs, sn)) =
                real_schur22(a[(i0, i0)], a[(i0, i1)], a[(i1, i0)], a[(i1, i1)]);
            a[(i0, i0)] = block[0];
            a[(i0, i1)] = block[1];
            a[(i1, i0)] = block[2];
            a[(i1, i1)] = block[3];
            let rows: Vec<_> = (i0 + 2..n).map(|c| ((i0, c), (i1, c))).collect();
            plane_rotation(a, &rows, cs, sn);
            let cols: Vec<_> = (0..i0).map(|r| ((r, i0), (r, i1))).collect();
            plane_rotation(a, &cols, cs, sn);
            let zcols: Vec<_> = (0..n).map(|r| ((r, i0), (r, i1))).collect();
            plane_rotation(z, &zcols, cs, sn);
            k_defl = 0;
            istop = istart;
            istart = 0;
            continue;
        }
        k_defl += 1;
        let (a00, a01, a10, a11) = if k_defl.is_multiple_of(10) {
            // An exceptional shift, to break a cycle.
            let mut s = a[(istop - 1, istop - 2)].abs();
            if istop > 2 {
                s = s + a[(istop - 2, istop - 3)].abs();
            }
            let a00 = dat1 * s + a[(istop - 1, istop - 1)];
            (a00, dat2 * s, s, a00)
        } else {
            (
                a[(istop - 2, istop - 2)],
                a[(istop - 2, istop - 1)],
                a[(istop - 1, istop - 2)],
                a[(istop - 1, istop - 1)],
            )
        };
        let (mut s1, mut s2) = real_eig22(a00, a01, a10, a11);
        if s1.1 == R::zero() && s2.1 == R::zero() {
            // Two real shifts: use the one nearer the corner twice.
            let corner = a[(istop - 1, istop - 1)];
            if (s1.0 - corner).abs() <= (s2.0 - corner).abs() {
                s2 = s1;
            } else {
                s1 = s2;
            }
        }
        // Where to start the sweep: a small subdiagonal product lets it start lower.
        let mut istart2 = istart;
        if istart + 3 < istop {
            for i in (istart + 1..istop - 2).rev() {
                let x = real_shift_column(a, i, 3, s1, s2);
                let mut tail = [x[1], x[2]];
                let (_, t1) = real_householder(x[0], &mut tail);
                let refsum = t1 * a[(i, i - 1)] + tail[0] * a[(i + 1, i - 1)];
                if (a[(i + 1, i - 1)] - refsum * tail[0]).abs() + (refsum * tail[1]).abs()
                    <= eps * (a[(i, i - 1)].abs() + a[(i, i + 1)].abs() + a[(i + 1, i + 2)].abs())
                {
                    istart2 = i;
                    break;
                }
            }
        }
        for i in istart2..istop - 1 {
            let nr = 3.min(istop - i);
            let (t1, v);
            if i == istart2 {
                let x = real_shift_column(a, i, nr, s1, s2);
                let mut tail = [x[1], x[2]];
                let (beta, tau) = real_householder(x[0], &mut tail[..nr - 1]);
                v = [beta, tail[0], tail[1]];
                t1 = tau;
                if i > istart {
                    a[(i, i - 1)] = a[(i, i - 1)] * (R::one() - t1);
                }
            } else {
                let mut tail = [
                    a[(i + 1, i - 1)],
                    if nr == 3 {
                        a[(i + 2, i - 1)]
                    } else {
                        R::zero()
                    },
                ];
                let (beta, tau) = real_householder(a[(i, i - 1)], &mut tail[..nr - 1]);
                v = [beta, tail[0], tail[1]];
                t1 = tau;
                a[(i, i - 1)] = beta;
                a[(i + 1, i - 1)] = R::zero();
                if nr == 3 {
                    a[(i + 2, i - 1)] = R::zero();
                }
            }
            let v2 = v[1];
            let t2 = t1 * v2;
            if nr == 3 {
                let v3 = v[2];
                let t3 = t1 * v3;
                for j in i..n {
                    let sum = a[(i, j)] + v2 * a[(i + 1, j)] + v3 * a[(i + 2, j)];
                    a[(i, j)] = a[(i, j)] - sum * t1;
                    a[(i + 1, j)] = a[(i + 1, j)] - sum * t2;
                    a[(i + 2, j)] = a[(i + 2, j)] - sum * t3;
                }
                for j in 0..(i + 4).min(istop) {
                    let sum = a[(j, i)] + v2 * a[(j, i + 1)] + v3 * a[(j, i + 2)];
                    a[(j, i)] = a[(j, i)] - sum * t1;
                    a[(j, i + 1)] = a[(j, i + 1)] - sum * t2;
                    a[(j, i + 2)] = a[(j, i + 2)] - sum * t3;
                }
                for j in 0..n {
                    let sum = z[(j, i)] + v2 * z[(j, i + 1)] + v3 * z[(j, i + 2)];
                    z[(j, i)] = z[(j, i)] - sum * t1;
                    z[(j, i + 1)] = z[(j, i + 1)] - sum * t2;
                    z[(j, i + 2)] = z[(j, i + 2)] - sum * t3;
                }
            } else {
                for j in i..n {
                    let sum = a[(i, j)] + v2 * a[(i + 1, j)];
                    a[(i, j)] = a[(i, j)] - sum * t1;
                    a[(i + 1, j)] = a[(i + 1, j)] - sum * t2;
                }
                for j in 0..(i + 3).min(istop) {
                    let sum = a[(j, i)] + v2 * a[(j, i + 1)];
                    a[(j, i)] = a[(j, i)] - sum * t1;
                    a[(j, i + 1)] = a[(j, i + 1)] - sum * t2;
                }
                for j in 0..n {
                    let sum = z[(j, i)] + v2 * z[(j, i + 1)];
                    z[(j, i)] = z[(j, i)] - sum * t1;
                    z[(j, i + 1)] = z[(j, i + 1)] - sum * t2;
                }
            }
        }
    }
    true
}

/// The eigenvalues of the complex 2x2 matrix `[[a00, a01], [a10, a11]]`.
fn complex_eig22<R: Float>(
    a00: Complex<R>,
    a01: Complex<R>,
    a10: Complex<R>,
    a11: Complex<R>,
) -> (Complex<R>, Complex<R>) {
    let s = l1(a00) + l1(a01) + l1(a10) + l1(a11);
    if s == R::zero() {
        return (Complex::zero(), Complex::zero());
    }
    let (a00, a01, a10, a11) = (a00 / s, a01 / s, a10 / s, a11 / s);
    let tr = (a00 + a11) * real::<R>(0.5);
    let det = (a00 - tr) * (a00 - tr) + a01 * a10;
    let rtdisc = det.sqrt();
    ((tr + rtdisc) * s, (tr - rtdisc) * s)
}

/// The complex Givens rotation `G = [[c, s], [-s̄, c]]` (c real) with `G [f, g] = [r, 0]`.
fn givens<R: Float>(f: Complex<R>, g: Complex<R>) -> (R, Complex<R>, Complex<R>) {
    if g == Complex::zero() {
        return (R::one(), Complex::zero(), f);
    }
    if f == Complex::zero() {
        let ng = g.norm();
        return (R::zero(), g.conj() / ng, Complex::new(ng, R::zero()));
    }
    let nf = f.norm();
    let norm = nf.hypot(g.norm());
    let phase = f / nf;
    (nf / norm, phase * g.conj() / norm, phase * norm)
}

/// The single-shift QR iteration on the complex Hessenberg matrix `a` (faer's `lahqr`,
/// after LAPACK's `zlahqr`, with Givens rotations), the full Schur form and the vectors in
/// `z`.
fn complex_lahqr<R: Float>(a: &mut Square<Complex<R>>, z: &mut Square<Complex<R>>) -> bool {
    let n = a.n;
    let eps = R::epsilon();
    let small = R::min_positive_value() / eps;
    let (dat1, dat2): (R, R) = (real(0.75), real(-0.4375));
    if n <= 1 {
        return true;
    }
    let bits = 8 * size_of::<Complex<R>>();
    let itmax = 30.max(bits / 2) * n.max(10) * n;
    let mut k_defl = 0usize;
    let mut istop = n;
    let mut istart = 0usize;
    for iter in 0..itmax {
        if iter + 1 == itmax {
            return false;
        }
        if istart + 1 >= istop {
            break;
        }
        if let Some(i) = (istart + 1..istop)
            .rev()
            .find(|&i| negligible(a, i, n, (eps, small), l1))
        {
            a[(i, i - 1)] = Complex::zero();
            istart = i;
        }
        if istart + 1 >= istop {
            k_defl = 0;
            istop = istart;
            istart = 0;
            continue;
        }
        k_defl += 1;
        let (a00, a01, a10, a11) = if k_defl.is_multiple_of(10) {
            let mut s = a[(istop - 1, istop - 2)].norm();
            if istop > 2 {
                s = s + a[(istop - 2, istop - 3)].norm();
            }
            let a00 = Complex::new(dat1 * s, R::zero()) + a[(istop - 1, istop - 1)];
            let s = Complex::new(s, R::zero());
            (a00, s, s * dat2, a00)
        } else {
            (
                a[(istop - 2, istop - 2)],
                a[(istop - 2, istop - 1)],
                a[(istop - 1, istop - 2)],
                a[(istop - 1, istop - 1)],
            )
        };
        let (mut s1, s2) = complex_eig22(a00, a01, a10, a11);
        let corner = a[(istop - 1, istop - 1)];
        if l1(s1 - corner) > l1(s2 - corner) {
            s1 = s2;
        }
        let mut istart2 = istart;
        if istart + 2 < istop {
            for i in (istart + 1..istop - 1).rev() {
                let (_, sn, _) = givens(a[(i, i)] - s1, a[(i + 1, i)]);
                if l1(sn.conj() * a[(i, i - 1)]) <= eps * (l1(a[(i, i - 1)]) + l1(a[(i, i + 1)])) {
                    istart2 = i;
                    break;
                }
            }
        }
        for i in istart2..istop - 1 {
            let (c, s) = if i == istart2 {
                let (c, s, _) = givens(a[(i, i)] - s1, a[(i + 1, i)]);
                if i > istart {
                    a[(i, i - 1)] = a[(i, i - 1)] * c;
                }
                (c, s)
            } else {
                let (c, s, r) = givens(a[(i, i - 1)], a[(i + 1, i - 1)]);
                a[(i, i - 1)] = r;
                a[(i + 1, i - 1)] = Complex::zero();
                (c, s)
            };
            // A ← G A on rows i, i+1; then A ← A Gᴴ and Z ← Z Gᴴ on columns i, i+1.
            for j in i..n {
                let (x, y) = (a[(i, j)], a[(i + 1, j)]);
                a[(i, j)] = x * c + s * y;
                a[(i + 1, j)] = y * c - s.conj() * x;
            }
            for j in 0..(i + 3).min(istop) {
                let (x, y) = (a[(j, i)], a[(j, i + 1)]);
                a[(j, i)] = x * c + y * s.conj();
                a[(j, i + 1)] = y * c - x * s;
            }
            for j in 0..n {
                let (x, y) = (z[(j, i)], z[(j, i + 1)]);
                z[(j, i)] = x * c + y * s.conj();
                z[(j, i + 1)] = y * c - x * s;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `max |Z T Zᴴ - A|`, `max |Zᴴ Z - I|` and `max |T below its (block) diagonal|`.
    fn residuals<T: Elem>(a: &Square<T>, t: &Square<T>, z: &Square<T>, quasi: bool) -> [f64; 3]
    where
        T::Real: Into<f64>,
    {
        let n = a.n;
        let (mut rec, mut orth, mut below) = (0f64, 0f64, 0f64);
        for r in 0..n {
            for c in 0..n {
                let mut s = T::zero();
                let mut g = T::zero();
                for k in 0..n {
                    for l in 0..n {
                        s += z[(r, k)] * t[(k, l)] * z[(c, l)].conj();
                    }
                    g += z[(k, r)].conj() * z[(k, c)];
                }
                rec = rec.max((s - a[(r, c)]).abs().into());
                let id = if r == c { T::one() } else { T::zero() };
                orth = orth.max((g - id).abs().into());
                if r > c + 1 || (r == c + 1 && !quasi) {
                    below = below.max(t[(r, c)].abs().into());
                }
            }
        }
        [rec, orth, below]
    }

    fn sample(n: usize, seed: u64) -> Vec<f64> {
        let mut x = seed;
        (0..n * n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn real_schur_reconstructs_with_standard_blocks() {
        for n in [1, 2, 3, 5, 8, 20] {
            let a = Square {
                n,
                data: sample(n, n as u64),
            };
            let (t, z) = schur(&a).expect("converges");
            let [rec, orth, below] = residuals(&a, &t, &z, true);
            assert!(
                rec < 1e-12 && orth < 1e-12 && below == 0.0,
                "n={n}: {rec} {orth} {below}"
            );
            // 2x2 blocks: equal diagonals, never two blocks in a row.
            for i in 0..n.saturating_sub(1) {
                if t[(i + 1, i)] != 0.0 {
                    assert_eq!(t[(i, i)], t[(i + 1, i + 1)]);
                    assert!(t[(i, i + 1)] * t[(i + 1, i)] < 0.0);
                    assert!(i + 2 >= n || t[(i + 2, i + 1)] == 0.0);
                }
            }
        }
    }

    #[test]
    fn complex_schur_and_hessenberg_reconstruct() {
        for n in [1, 2, 4, 7, 16] {
            let re = sample(n, 7 + n as u64);
            let im = sample(n, 99 + n as u64);
            let data = re
                .iter()
                .zip(&im)
                .map(|(r, i)| Complex::new(*r, *i))
                .collect();
            let a = Square { n, data };
            let (t, z) = schur(&a).expect("converges");
            let [rec, orth, below] = residuals(&a, &t, &z, false);
            assert!(
                rec < 1e-12 && orth < 1e-12 && below == 0.0,
                "n={n}: {rec} {orth} {below}"
            );
            let mut h = a.clone();
            let q = hessenberg(&mut h);
            let [rec, orth, below] = residuals(&a, &h, &q, true);
            assert!(
                rec < 1e-12 && orth < 1e-12 && below == 0.0,
                "n={n}: {rec} {orth} {below}"
            );
        }
    }
}
