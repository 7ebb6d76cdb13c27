//! The Hessenberg reduction and the Schur decomposition of one square matrix, for the
//! `jaxrs_hessenberg` and `jaxrs_schur` kernels (`kernels::linalg`).
//!
//! - The Hessenberg reduction is LAPACK's unblocked `gehd2` (and `unghr` for Q): a
//!   Householder reflector per column, `β = -sign(Re α) ‖x‖`, so `H` and `Q` are the ones
//!   jaxlib's `gehrd` gives (the reduction is unique given that convention: `Q`'s first
//!   column is `e₀`).
//! - The Schur decomposition reduces to Hessenberg form, then runs the textbook QR
//!   iteration on it (Golub and Van Loan, *Matrix Computations*, 4th ed., §7.5), deflating
//!   from the bottom and accumulating the Schur vectors: Francis's implicit double shifts
//!   for real matrices, each 2x2 block that splits off brought to standard form (upper
//!   triangular for real eigenvalues, else equal diagonal entries and `b c < 0`, the form
//!   LAPACK's `gees` returns); single Wilkinson shifts with plane rotations for complex ones.
//!   LAPACK's `hseqr` switches to a multishift iteration with aggressive early deflation
//!   above 75 rows, which this iteration does not have (it is slower there, not less
//!   accurate). The form is not unique: the eigenvalues' order along the diagonal and the
//!   signs (phases) of Z's columns are this iteration's and may differ from LAPACK's, so the
//!   tests compare invariants (`Z T Zᴴ`, `Zᴴ Z`, the structure, `tr Tᵏ`).

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
        real_schur_iteration(h, z)
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
        real_schur_iteration(h, z)
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
        complex_schur_iteration(h, z)
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
        complex_schur_iteration(h, z)
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

/// `v` as a real scalar.
fn real<R: Float>(v: f64) -> R {
    R::from(v).expect("a small constant")
}

/// How many QR sweeps one eigenvalue (or 2x2 block) may take to split off before the
/// iteration gives up: 30 per row of the matrix, at least 300.
fn sweep_budget(n: usize) -> usize {
    30 * n.max(10)
}

/// Whether the subdiagonal entry `h[k][k-1]` (of size `sub`) is negligible beside its two
/// diagonal neighbours (of sizes `diag`), the classical deflation test; `small` keeps the
/// test meaningful where both neighbours are zero or subnormal.
fn negligible<R: Float>(sub: R, diag: R, fallback: R, small: R) -> bool {
    let scale = if diag == R::zero() { fallback } else { diag };
    sub <= small.max(R::epsilon() * scale)
}

/// The bottom of the active window ending at row `hi`: the highest row `lo ≤ hi` whose
/// subdiagonal entry `h[lo][lo-1]` is negligible (set to zero here), or 0.
fn active_window_start<T: Elem>(h: &mut Square<T>, hi: usize, small: T::Real) -> usize {
    let size = |v: T| Float::abs(v.re()) + Float::abs(v.im());
    let window_scale = (0..=hi).fold(T::Real::zero(), |m, i| m.max(size(h[(i, i)])));
    for k in (1..=hi).rev() {
        let diag = size(h[(k - 1, k - 1)]) + size(h[(k, k)]);
        if negligible(size(h[(k, k - 1)]), diag, window_scale, small) {
            h[(k, k - 1)] = T::zero();
            return k;
        }
    }
    0
}

/// Rows `p`, `p+1` of `h` (columns `cols`) ← `Gᴴ` times them, for the plane rotation
/// `G = [[c, -s̄], [s, c]]` (`c` real).
fn rotate_rows<T: Elem>(h: &mut Square<T>, p: usize, c: T, s: T, cols: std::ops::Range<usize>) {
    for col in cols {
        let (x, y) = (h[(p, col)], h[(p + 1, col)]);
        h[(p, col)] = c * x + s.conj() * y;
        h[(p + 1, col)] = c * y - s * x;
    }
}

/// Columns `p`, `p+1` of `m` (rows `rows`) ← them times `G` (see [`rotate_rows`]).
fn rotate_columns<T: Elem>(m: &mut Square<T>, p: usize, c: T, s: T, rows: std::ops::Range<usize>) {
    for row in rows {
        let (x, y) = (m[(row, p)], m[(row, p + 1)]);
        m[(row, p)] = c * x + s * y;
        m[(row, p + 1)] = c * y - s.conj() * x;
    }
}

/// The similarity `H ← Gᴴ H G` on rows and columns `p`, `p+1` of the whole matrix (`h` is
/// quasi-triangular outside the active window), and `Z ← Z G`.
fn rotate_similarity<T: Elem>(h: &mut Square<T>, z: &mut Square<T>, p: usize, c: T, s: T) {
    let n = h.n;
    rotate_rows(h, p, c, s, p.saturating_sub(1)..n);
    rotate_columns(h, p, c, s, 0..(p + 3).min(n));
    rotate_columns(z, p, c, s, 0..n);
}

/// The rotation `(c, s)` with `Gᴴ [x, y] = [r, 0]`: `c = |x| / ‖(x, y)‖` real,
/// `s = c y / x`; `(0, 1)` when `x` is zero.
fn rotation_zeroing<T: Elem>(x: T, y: T) -> (T, T) {
    let norm = Float::hypot(x.abs(), y.abs());
    if norm == T::Real::zero() {
        return (T::one(), T::zero());
    }
    if x.abs() == T::Real::zero() {
        return (T::zero(), T::one());
    }
    let c = x.abs() / norm;
    (T::of_real(c), T::of_real(c) * y / x)
}

/// Brings the 2x2 diagonal block at rows `p`, `p+1` of a real quasi-triangular `h` to the
/// standard form of a real Schur decomposition: upper triangular when its eigenvalues are
/// real, else equal diagonal entries and off-diagonal entries of opposite signs.
fn standardize_block<R: Float + Elem<Real = R>>(h: &mut Square<R>, z: &mut Square<R>, p: usize) {
    let (a, b, c, d) = (h[(p, p)], h[(p, p + 1)], h[(p + 1, p)], h[(p + 1, p + 1)]);
    if c == R::zero() {
        return;
    }
    let half_gap = (a - d) / real(2.0);
    let discriminant = half_gap * half_gap + b * c;
    if discriminant >= R::zero() {
        // Real eigenvalues: rotate the eigenvector (λ₁ - d, c) of λ₁ = d + w onto e₀, where
        // w = half_gap ± √disc takes the sign that avoids cancellation.
        let root = Float::sqrt(discriminant);
        let w = if half_gap >= R::zero() {
            half_gap + root
        } else {
            half_gap - root
        };
        let norm = Float::hypot(w, c);
        rotate_similarity(h, z, p, w / norm, c / norm);
        h[(p, p)] = d + w;
        h[(p + 1, p + 1)] = d - b * c / w;
        h[(p + 1, p)] = R::zero();
        return;
    }
    // Complex eigenvalues: the rotation by θ makes the diagonal entries equal when
    // cos 2θ (a - d) + sin 2θ (b + c) = 0; take the smaller of the two angles.
    let (gap, sum) = (a - d, b + c);
    let radius = Float::hypot(gap, sum);
    if radius == R::zero() {
        return;
    }
    let cos_2t = Float::abs(sum) / radius;
    let sin_2t = if sum >= R::zero() { -gap } else { gap } / radius;
    let cos_t = Float::sqrt((R::one() + cos_2t) / real(2.0));
    let sin_t = sin_2t / (real::<R>(2.0) * cos_t);
    rotate_similarity(h, z, p, cos_t, sin_t);
    let mean = (h[(p, p)] + h[(p + 1, p + 1)]) / real(2.0);
    h[(p, p)] = mean;
    h[(p + 1, p + 1)] = mean;
    if h[(p, p + 1)] * h[(p + 1, p)] >= R::zero() {
        // Rounding made the pair real after all: triangularize it.
        standardize_block(h, z, p);
    }
}

/// Applies the reflector `P = I - τ v vᵀ`, `v = [1, v₁, v₂]` (or `[1, v₁]` when `v2` is
/// `None`), at rows and columns `k..` as the similarity `H ← P H P`, `Z ← Z P`: to the rows
/// from column `first_col`, to the columns down to row `last_row`.
#[allow(clippy::too_many_arguments)]
fn reflect_similarity<R: Float + Elem<Real = R>>(
    h: &mut Square<R>,
    z: &mut Square<R>,
    k: usize,
    tau: R,
    v1: R,
    v2: Option<R>,
    first_col: usize,
    last_row: usize,
) {
    let n = h.n;
    let size = if v2.is_some() { 3 } else { 2 };
    // `x ← (I - τ v vᵀ) x` for the `size` entries of `x` (the third zero when absent).
    let reflected = |x: [R; 3]| {
        let v2 = v2.unwrap_or(R::zero());
        let s = tau * (x[0] + v1 * x[1] + v2 * x[2]);
        [x[0] - s, x[1] - s * v1, x[2] - s * v2]
    };
    for col in first_col..n {
        let x = [0, 1, 2].map(|i| if i < size { h[(k + i, col)] } else { R::zero() });
        for (i, y) in reflected(x).into_iter().take(size).enumerate() {
            h[(k + i, col)] = y;
        }
    }
    for (m, rows) in [(&mut *h, last_row + 1), (&mut *z, n)] {
        for row in 0..rows {
            let x = [0, 1, 2].map(|i| if i < size { m[(row, k + i)] } else { R::zero() });
            for (i, y) in reflected(x).into_iter().take(size).enumerate() {
                m[(row, k + i)] = y;
            }
        }
    }
}

/// One implicit double-shift QR sweep (Francis's) over the window `lo..=hi` (at least 3
/// rows): the shifts are the roots of `λ² - sum λ + product`; the bulge their first column
/// makes is chased down the subdiagonal with 3-row reflectors, then a 2-row one.
fn francis_sweep<R: Float + Elem<Real = R>>(
    h: &mut Square<R>,
    z: &mut Square<R>,
    lo: usize,
    hi: usize,
    sum: R,
    product: R,
) {
    let (h00, h01, h10, h11, h21) = (
        h[(lo, lo)],
        h[(lo, lo + 1)],
        h[(lo + 1, lo)],
        h[(lo + 1, lo + 1)],
        h[(lo + 2, lo + 1)],
    );
    // The first column of (H - μ₁ I)(H - μ₂ I).
    let mut x = h00 * h00 + h01 * h10 - sum * h00 + product;
    let mut y = h10 * (h00 + h11 - sum);
    let mut w = h10 * h21;
    for k in lo..hi - 1 {
        let mut tail = [y, w];
        let (beta, tau) = real_householder(x, &mut tail);
        if tau != R::zero() {
            let first_col = if k > lo { k - 1 } else { lo };
            reflect_similarity(
                h,
                z,
                k,
                tau,
                tail[0],
                Some(tail[1]),
                first_col,
                (k + 3).min(hi),
            );
        }
        if k > lo {
            h[(k, k - 1)] = beta;
            h[(k + 1, k - 1)] = R::zero();
            h[(k + 2, k - 1)] = R::zero();
        }
        x = h[(k + 1, k)];
        y = h[(k + 2, k)];
        if k + 3 <= hi {
            w = h[(k + 3, k)];
        }
    }
    let mut tail = [y];
    let (beta, tau) = real_householder(x, &mut tail);
    if tau != R::zero() {
        reflect_similarity(h, z, hi - 1, tau, tail[0], None, hi - 2, hi);
    }
    h[(hi - 1, hi - 2)] = beta;
    h[(hi, hi - 2)] = R::zero();
}

/// What one step of a QR iteration did with its active window.
enum Step {
    /// The bottom rows split off as they are (a 2x2 block brought to standard form).
    Split(usize),
    /// A QR sweep ran over the window.
    Swept,
}

/// The QR iteration's driver, shared by the real and complex forms: the active window ends
/// at `hi` and starts after the lowest negligible subdiagonal entry; a 1x1 window splits
/// off, any other is handed to `step` with the number of the sweep it would be (counted
/// since the last split). False when one eigenvalue takes more than [`sweep_budget`]
/// sweeps.
fn qr_iteration<T: Elem>(
    h: &mut Square<T>,
    z: &mut Square<T>,
    mut step: impl FnMut(&mut Square<T>, &mut Square<T>, usize, usize, usize) -> Step,
) -> bool {
    let n = h.n;
    if n == 0 {
        return true;
    }
    let small = T::Real::min_positive_value() * (real::<T::Real>(n as f64) / T::Real::epsilon());
    let mut hi = n - 1;
    let mut sweeps = 0;
    while hi > 0 {
        let lo = active_window_start(h, hi, small);
        let split = if lo == hi {
            1
        } else {
            match step(h, z, lo, hi, sweeps + 1) {
                Step::Split(rows) => rows,
                Step::Swept => {
                    sweeps += 1;
                    if sweeps > sweep_budget(n) {
                        return false;
                    }
                    continue;
                }
            }
        };
        if hi < split {
            break;
        }
        hi -= split;
        sweeps = 0;
    }
    true
}

/// The real Schur form of the Hessenberg matrix `h` by Francis's double-shift QR iteration
/// (Golub and Van Loan, *Matrix Computations*, 4th ed., §7.5), deflating from the bottom;
/// each 2x2 block that splits off is brought to standard form.
fn real_schur_iteration<R: Float + Elem<Real = R>>(h: &mut Square<R>, z: &mut Square<R>) -> bool {
    qr_iteration(h, z, |h, z, lo, hi, sweep| {
        if lo + 1 == hi {
            standardize_block(h, z, lo);
            return Step::Split(2);
        }
        let (a, b, c, d) = (
            h[(hi - 1, hi - 1)],
            h[(hi - 1, hi)],
            h[(hi, hi - 1)],
            h[(hi, hi)],
        );
        let (sum, product) = if sweep % 10 == 0 {
            // An exceptional pair of shifts, d + 1.75 w and d - 0.25 w, to break a cycle.
            let w = Float::abs(c) + Float::abs(h[(hi - 1, hi - 2)]);
            let (s1, s2) = (d + real::<R>(1.75) * w, d - real::<R>(0.25) * w);
            (s1 + s2, s1 * s2)
        } else {
            // The eigenvalues of the trailing 2x2 block.
            (a + d, a * d - b * c)
        };
        francis_sweep(h, z, lo, hi, sum, product);
        Step::Swept
    })
}

/// The eigenvalue of `[[a, b], [c, d]]` nearer `d` (Wilkinson's shift).
fn wilkinson_shift<R: Float>(
    a: Complex<R>,
    b: Complex<R>,
    c: Complex<R>,
    d: Complex<R>,
) -> Complex<R> {
    let half_gap = (a - d) * real::<R>(0.5);
    let root = (half_gap * half_gap + b * c).sqrt();
    let (up, down) = (half_gap + root, half_gap - root);
    d + if up.norm() <= down.norm() { up } else { down }
}

/// The complex Schur form of the Hessenberg matrix `h` by the implicit single-shift QR
/// iteration with Wilkinson's shifts (Golub and Van Loan, §7.5), the bulge chased with plane
/// rotations.
fn complex_schur_iteration<R: Float>(h: &mut Square<Complex<R>>, z: &mut Square<Complex<R>>) -> bool
where
    Complex<R>: Elem<Real = R>,
{
    let n = h.n;
    qr_iteration(h, z, |h, z, lo, hi, sweep| {
        let d = h[(hi, hi)];
        let shift = if sweep % 10 == 0 {
            // An exceptional shift to break a cycle.
            d + Complex::from(real::<R>(0.75) * l1(h[(hi, hi - 1)]))
        } else {
            wilkinson_shift(h[(hi - 1, hi - 1)], h[(hi - 1, hi)], h[(hi, hi - 1)], d)
        };
        let mut x = h[(lo, lo)] - shift;
        let mut y = h[(lo + 1, lo)];
        for k in lo..hi {
            let (c, s) = rotation_zeroing(x, y);
            let first_col = if k > lo { k - 1 } else { lo };
            rotate_rows(h, k, c, s, first_col..n);
            rotate_columns(h, k, c, s, 0..(k + 3).min(hi + 1));
            rotate_columns(z, k, c, s, 0..n);
            if k > lo {
                h[(k + 1, k - 1)] = Complex::from(R::zero());
            }
            if k + 1 < hi {
                x = h[(k + 1, k)];
                y = h[(k + 2, k)];
            }
        }
        Step::Swept
    })
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

    /// Matrices where the plain shifts stall or that are already reduced: cyclic
    /// permutations (their shifts are zero, and only the exceptional ones move them), the
    /// zero and identity matrices, a Jordan block, a triangular one and a larger random one.
    #[test]
    fn hard_and_trivial_matrices_reconstruct() {
        let mut cases: Vec<Square<f64>> = Vec::new();
        for n in [2, 3, 4, 7] {
            let mut cycle = Square::identity(n);
            cycle.data.iter_mut().for_each(|v| *v = 0.0);
            for i in 0..n {
                cycle[((i + 1) % n, i)] = 1.0;
            }
            cases.push(cycle);
        }
        cases.push(Square {
            n: 4,
            data: vec![0.0; 16],
        });
        cases.push(Square::identity(5));
        let mut jordan = Square::identity(6);
        for i in 0..5 {
            jordan[(i, i + 1)] = 1.0;
        }
        cases.push(jordan);
        let mut upper = Square {
            n: 5,
            data: sample(5, 3),
        };
        for r in 0..5 {
            for c in 0..r {
                upper[(r, c)] = 0.0;
            }
        }
        cases.push(upper);
        cases.push(Square {
            n: 60,
            data: sample(60, 60),
        });
        for a in &cases {
            let (t, z) = schur(a).expect("converges");
            let [rec, orth, below] = residuals(a, &t, &z, true);
            let tol = 1e-13 * a.n as f64;
            assert!(
                rec < tol && orth < tol && below == 0.0,
                "n={}: {rec} {orth} {below}",
                a.n
            );
        }
        // A 3-cycle's eigenvalues are the cube roots of unity: one 1 and a standard block.
        let (t, _) = schur(&cases[1]).unwrap();
        let diag: Vec<f64> = (0..3).map(|i| t[(i, i)]).collect();
        assert!(diag.iter().any(|d| (d - 1.0).abs() < 1e-14), "{diag:?}");
        assert!(
            diag.iter().filter(|d| (**d + 0.5).abs() < 1e-14).count() == 2,
            "{diag:?}"
        );
    }

    #[test]
    fn float32_schur_reconstructs() {
        for n in [3, 9, 24] {
            let a = Square {
                n,
                data: sample(n, 5 + n as u64).iter().map(|v| *v as f32).collect(),
            };
            let (t, z) = schur(&a).expect("converges");
            let [rec, orth, below] = residuals(&a, &t, &z, true);
            assert!(
                rec < 1e-5 && orth < 1e-5 && below == 0.0,
                "n={n}: {rec} {orth} {below}"
            );
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
