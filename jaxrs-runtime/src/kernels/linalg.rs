//! Dense linear algebra on the host, backed by `faer`: the kernels behind the Cholesky,
//! triangular-solve, LU, QR, symmetric-eigen, SVD and general-eigen primitives (`prims::decompositions`).
//!
//! Every operand is a batch of row-major matrices (leading dims are the batch). The
//! factorisations copy each matrix into a column-major faer matrix, the layout faer's
//! algorithms are fast on, and write their results back tile by tile ([`col_major`],
//! [`store_row_major`]), as XLA transposes around jaxlib's column-major LAPACK calls; the
//! other kernels view the operands in place with faer's strided views. The layouts and
//! conventions are LAPACK's as jaxlib returns them:
//!
//! | target | operands | results |
//! |---|---|---|
//! | `jaxrs_cholesky` | `a [.., n, n]` (lower triangle read) | `l` lower, zeros above |
//! | `jaxrs_triangular_solve` | `a [.., n, n]`, `b [.., m, k]` | `x` |
//! | `jaxrs_lu` | `a [.., m, n]` | `lu` (L unit-lower below the diagonal, U on and above), `pivots: i32 [.., min(m,n)]`, `permutation: i32 [.., m]` |
//! | `jaxrs_qr` | `a [.., m, n]` | `q [.., m, m or k]`, `r [.., m or k, n]` |
//! | `jaxrs_eigh` | `a [.., n, n]` (lower triangle read; of `(a + aᴴ) / 2` with `symmetrize_input`) | `v [.., n, n]` (columns), `w [.., n]` ascending |
//! | `jaxrs_svd` | `a [.., m, n]` | `s [.., k]` descending, then `u`, `vt` when `compute_uv` |
//! | `jaxrs_eig` | `a [.., n, n]` | `w [.., n]` complex, then `v [.., n, n]` complex (columns) when `compute_vectors` |
//! | `jaxrs_hessenberg` | `a [.., n, n]` | `h [.., n, n]` (zeros below the subdiagonal), `q [.., n, n]` with `a = q h qᴴ` |
//! | `jaxrs_schur` | `a [.., n, n]` | `t [.., n, n]` (real: quasi-triangular; complex: triangular), `z [.., n, n]` with `a = z t zᴴ` |
//! | `jaxrs_sqrtm_triu` | `t [.., n, n]` upper triangular | `u [.., n, n]` with `u u = t` |
//! | `jaxrs_sylvester_triu` | `r [.., m, m]` upper and `s [.., n, n]` lower triangular, `f [.., m, n]` | `y` with `r y + y s = f` |
//! | `jaxrs_parlett` | `f [.., n, n]` (its diagonal read), `t [.., n, n]` upper triangular | `f` completed above the diagonal, `minden [..]` real |
//!
//! Every kernel takes real and complex matrices (Hermitian for Cholesky and `eigh`, whose
//! eigenvalues, like SVD's singular values, are real).
//!
//! A factorisation that fails (a matrix that is not positive definite, an eigen or SVD
//! iteration that does not converge) leaves that matrix's results NaN, as jaxlib's kernels do.

use super::schur::{self, Elem, Square};
use crate::dtype::{DType, C128, C64};
use crate::pjrt::ffi::{HostArg, HostRet};
use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::{AsMatMut, AsMatRef};
use faer::traits::math_utils::{conj, nan, real, zero};
use faer::traits::ComplexField;
use faer::{Conj, Mat, MatMut, MatRef, Par, Spec};
use num_complex::ComplexFloat;
use num_traits::{Float, Zero};
use rayon::prelude::*;
use std::cell::RefCell;
use std::mem::MaybeUninit;

type KernelResult = Result<(), String>;

/// The value of string attribute `name`.
pub(super) fn attr<'a>(attrs: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// Is boolean attribute `name` set (`"true"`)?
fn flag(attrs: &[(&str, &str)], name: &str) -> bool {
    attr(attrs, name) == Some("true")
}

/// A buffer's dims as (batch count, rows, cols): the last two dims are the matrix's.
fn matrix_dims(dims: &[i64]) -> Result<(usize, usize, usize), String> {
    if dims.len() < 2 {
        return Err(format!("expected a batch of matrices, got dims {dims:?}"));
    }
    let d: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
    let (m, n) = (d[d.len() - 2], d[d.len() - 1]);
    Ok((d[..d.len() - 2].iter().product(), m, n))
}

/// Reinterprets element bytes as `T`s, checking length and alignment (XLA aligns buffers).
pub(super) fn elems<T: Copy>(bytes: &[u8]) -> Result<&[T], String> {
    let size = size_of::<T>();
    if !bytes.len().is_multiple_of(size)
        || !(bytes.as_ptr() as usize).is_multiple_of(align_of::<T>())
    {
        return Err("a buffer is misaligned for its dtype".into());
    }
    // SAFETY: length and alignment checked; f32/f64/i32 have no invalid bit patterns.
    Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), bytes.len() / size) })
}

pub(super) fn elems_mut<T: Copy>(bytes: &mut [u8]) -> Result<&mut [T], String> {
    let size = size_of::<T>();
    if !bytes.len().is_multiple_of(size)
        || !(bytes.as_ptr() as usize).is_multiple_of(align_of::<T>())
    {
        return Err("a buffer is misaligned for its dtype".into());
    }
    // SAFETY: as in `elems`, and the bytes are borrowed mutably.
    Ok(unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), bytes.len() / size) })
}

/// Matrix `index` of a batch of row-major `rows x cols` matrices, as a faer view.
fn view<T>(data: &[T], index: usize, rows: usize, cols: usize) -> MatRef<'_, T> {
    let block = &data[index * rows * cols..(index + 1) * rows * cols];
    // SAFETY: `block` holds exactly rows*cols elements laid out row-major.
    unsafe { MatRef::from_raw_parts(block.as_ptr(), rows, cols, cols as isize, 1) }
}

fn view_mut<T>(data: &mut [T], index: usize, rows: usize, cols: usize) -> MatMut<'_, T> {
    let block = &mut data[index * rows * cols..(index + 1) * rows * cols];
    // SAFETY: `block` holds exactly rows*cols elements laid out row-major, borrowed mutably.
    unsafe { MatMut::from_raw_parts_mut(block.as_mut_ptr(), rows, cols, cols as isize, 1) }
}

/// Rows (columns) per tile of the layout-changing copies below: each column takes its
/// contiguous pieces from 32 rows at a time (32 rows of a 1024-wide f64 matrix, 256 KiB, stay
/// in cache), and each row its contiguous pieces from 32 columns.
const TILE: usize = 32;

/// Copies matrix `index` of a batch of row-major matrices of `out`'s shape into `out`
/// (column-major: the layout faer's factorisations run fastest on) tile by tile. faer's own
/// copy between the layouts (`to_owned`, `copy_from`) walks the row-major side a whole row
/// apart per element: 13 ms for a 1024x1024 f64 matrix on the 2-core bench machine, against
/// 1.5 ms in tiles, more than a Cholesky factorisation of it takes.
fn fill_col_major<T: Copy>(data: &[T], index: usize, mut out: MatMut<'_, T>) {
    let (rows, cols) = (out.nrows(), out.ncols());
    let block = &data[index * rows * cols..(index + 1) * rows * cols];
    for r0 in (0..rows).step_by(TILE) {
        let r1 = (r0 + TILE).min(rows);
        let src = &block[r0 * cols..r1 * cols];
        for c in 0..cols {
            let col = &mut column_mut(out.as_mut(), c)[r0..r1];
            for (dst, row) in col.iter_mut().zip(src.chunks_exact(cols)) {
                *dst = row[c];
            }
        }
    }
}

/// Matrix `index` of a batch of row-major matrices, copied into the column-major `out` with
/// its lower triangle replaced by that of its Hermitian part, `(a + aᴴ) / 2` (what
/// `lax.linalg.eigh`'s `symmetrize_input` hands LAPACK; the strict upper triangle is left
/// as copied, unread). Row `c` of the input is column `c` of `aᴴ` (conjugated), so both
/// sides are read contiguously; `(x + y) · 0.5` rounds as XLA's fused symmetrization does.
fn fill_col_major_hermitian_part<T: ComplexField + Copy>(
    data: &[T],
    index: usize,
    mut out: MatMut<'_, T>,
) {
    fill_col_major(data, index, out.as_mut());
    let n = out.nrows();
    let block = &data[index * n * n..(index + 1) * n * n];
    let half: T::Real = faer::traits::math_utils::from_f64::<T::Real>(0.5);
    for c in 0..n {
        let row = &block[c * n..(c + 1) * n];
        let col = column_mut(out.as_mut(), c);
        for r in c..n {
            let sum = faer::traits::math_utils::add(&col[r], &conj(&row[r]));
            col[r] = faer::traits::math_utils::mul_pow2(&sum, &half);
        }
    }
}

/// Matrix `index` of a batch of row-major matrices, as a new column-major matrix.
fn col_major<T: ComplexField + Copy>(data: &[T], index: usize, rows: usize, cols: usize) -> Mat<T> {
    let mut out = Mat::<T>::zeros(rows, cols);
    fill_col_major(data, index, out.as_mut());
    out
}

/// Writes a column-major `src` into matrix `index` of a batch of row-major matrices of its
/// shape, 32 columns at a time: each row takes its 32 contiguous elements from them.
/// Writing down the columns instead lands each element a whole row from the last, and the
/// 32 rows of a 1024-wide f32 tile (4 KiB apart) share one cache set: 3.3 ms for a
/// 1024x1024 f32 matrix against 1.1 ms this way.
fn store_row_major<T: Copy>(src: MatRef<'_, T>, data: &mut [T], index: usize) {
    let (rows, cols) = (src.nrows(), src.ncols());
    let block = &mut data[index * rows * cols..(index + 1) * rows * cols];
    if cols == 0 {
        return;
    }
    for c0 in (0..cols).step_by(TILE) {
        let c1 = (c0 + TILE).min(cols);
        let tile: Vec<&[T]> = (c0..c1).map(|c| column(src, c)).collect();
        for (r, row) in block.chunks_exact_mut(cols).enumerate() {
            for (dst, col) in row[c0..c1].iter_mut().zip(&tile) {
                *dst = col[r];
            }
        }
    }
}

thread_local! {
    /// This thread's kernel workspace, kept between calls (up to [`KEPT_WORKSPACE`] bytes):
    /// memory the allocator maps afresh costs a page fault per 4 KiB on first touch, and a
    /// 1024x1024 f64 `eigh` needs ~48 MiB of copies and faer scratch: ~9000 faults a call
    /// (`perf stat`), a tenth of the kernel's time on the bench machine.
    static WORKSPACE: RefCell<Vec<MaybeUninit<u8>>> = const { RefCell::new(Vec::new()) };
}

/// The most workspace a thread keeps between calls (a 2048x2048 f64 `eigh` or SVD fits).
const KEPT_WORKSPACE: usize = 256 << 20;

/// Runs `f` on a stack of at least `req` from this thread's workspace.
fn with_workspace<R>(req: StackReq, f: impl FnOnce(&mut MemStack) -> R) -> R {
    WORKSPACE.with(|cell| {
        let Ok(mut buffer) = cell.try_borrow_mut() else {
            // A kernel inside a kernel (not done today): a buffer of its own.
            return f(MemStack::new(&mut MemBuffer::new(req)));
        };
        let need = req.unaligned_bytes_required();
        if buffer.len() < need {
            *buffer = Vec::new();
            buffer.resize(need, MaybeUninit::uninit());
        }
        let out = f(MemStack::new(&mut buffer[..need]));
        if buffer.len() > KEPT_WORKSPACE {
            *buffer = Vec::new();
        }
        out
    })
}

/// A `rows x cols` column-major matrix from `stack`, holding matrix `index` of a batch of
/// row-major matrices.
macro_rules! col_major_in {
    ($t:ty, $data:expr, $index:expr, $rows:expr, $cols:expr, $stack:expr) => {{
        // SAFETY: `fill_col_major` writes every element before anything reads it.
        let (mut tmp, stack) = unsafe { temp_mat_uninit::<$t, _, _>($rows, $cols, $stack) };
        fill_col_major($data, $index, tmp.as_mat_mut());
        (tmp, stack)
    }};
}

/// Column `c` of a column-major matrix, as a slice.
fn column<T>(m: MatRef<'_, T>, c: usize) -> &[T] {
    m.col(c)
        .try_as_col_major()
        .expect("a column-major matrix")
        .as_slice()
}

fn column_mut<T>(m: MatMut<'_, T>, c: usize) -> &mut [T] {
    m.col_mut(c)
        .try_as_col_major_mut()
        .expect("a column-major matrix")
        .as_slice_mut()
}

/// The LAPACK pivot sequence (row `i` swapped with row `pivots[i]`, in order) that puts row
/// `perm[i]` of the input at row `i` for every `i < steps`; at each step the row that belongs
/// at `i` is found where the earlier swaps left it, so the sequence is the only one there is.
fn pivots_of_permutation(perm: &[usize], steps: usize) -> Vec<i32> {
    let mut row_at: Vec<usize> = (0..perm.len()).collect();
    let mut position_of: Vec<usize> = (0..perm.len()).collect();
    (0..steps)
        .map(|i| {
            let j = position_of[perm[i]];
            row_at.swap(i, j);
            position_of[row_at[i]] = i;
            position_of[row_at[j]] = j;
            j as i32
        })
        .collect()
}

/// The size below which faer's symmetric-eigen and SVD divide and conquer hands a block to
/// the QR iteration (faer's default: 128). At 64 a 256x256 f32 `eigh` takes 3.5 ms of CPU
/// instead of 4.9 and its SVD 6.7 instead of 9.4; f64 and 1024x1024 are within 1% either
/// way (thresholds 16 to 128 measured, faer 0.24 alone, on the bench machine).
const LEAF: usize = 64;

/// The kernels run each matrix on the calling thread (faer's `Par::Seq`): XLA's CPU runtime
/// calls them from its own thread pool, and faer's rayon parallelism on top measured slower
/// on the 2-core bench machine (a 256x256 f64 Cholesky: 0.39 ms sequential, 1.19 ms with
/// rayon; 1024x1024: 20.2 vs 22.9 ms). For `eigh` and the SVD `Par::rayon(2)` gains 5-6% on
/// a 1024x1024 f64 matrix on a quiet machine (eigh 180 vs 191 ms, SVD 471 vs 494, faer
/// alone) but loses on f32 (eigh 128 vs 111 ms, SVD 326 vs 282) and at 256x256 (f64 SVD
/// 15.5 vs 10.7 ms), and the bench machine's two cores are shared with other builds.
pub fn use_sequential_faer() {
    faer::set_global_parallelism(Par::Seq);
}

/// The solve of each matrix of a batch, for every element type (real and complex): `x` with
/// `op(a) x = b` or `x op(a) = b`.
fn triangular_solve_of<T: ComplexField + Copy>(
    attrs: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    let left = flag(attrs, "left_side");
    let lower = flag(attrs, "lower");
    let transpose = flag(attrs, "transpose_a");
    let unit = flag(attrs, "unit_diagonal");
    let (batch, n, _) = matrix_dims(args[0].dims)?;
    let (_, m, k) = matrix_dims(args[1].dims)?;
    let a = elems::<T>(args[0].bytes)?;
    let b = elems::<T>(args[1].bytes)?;
    let x = elems_mut::<T>(rets[0].bytes)?;
    x.copy_from_slice(b);
    for i in 0..batch {
        // `x op(a) = b` is `op(a)ᵀ xᵀ = bᵀ`: solve on the left with views.
        let mut tri = view(a, i, n, n);
        // Transposed when exactly one of `transpose_a` and the right side holds.
        let flipped = transpose == left;
        if flipped {
            tri = tri.transpose();
        }
        let tri_is_lower = lower != flipped;
        let mut rhs = view_mut(x, i, m, k);
        if !left {
            rhs = rhs.transpose_mut();
        }
        let par = Par::Seq;
        use faer::linalg::triangular_solve as ts;
        match (tri_is_lower, unit) {
            (true, false) => ts::solve_lower_triangular_in_place(tri, rhs, par),
            (true, true) => ts::solve_unit_lower_triangular_in_place(tri, rhs, par),
            (false, false) => ts::solve_upper_triangular_in_place(tri, rhs, par),
            (false, true) => ts::solve_unit_upper_triangular_in_place(tri, rhs, par),
        }
    }
    Ok(())
}

/// The partial-pivoting LU of each matrix of a batch, for every element type.
fn lu_of<T: ComplexField + Copy>(args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    let (batch, m, n) = matrix_dims(args[0].dims)?;
    let steps = m.min(n);
    let a = elems::<T>(args[0].bytes)?;
    let [lu_ret, piv_ret, perm_ret] = rets else {
        return Err("lu: three results expected".into());
    };
    let lu = elems_mut::<T>(lu_ret.bytes)?;
    let pivots = elems_mut::<i32>(piv_ret.bytes)?;
    let permutation = elems_mut::<i32>(perm_ret.bytes)?;
    let mut perm = vec![0usize; m];
    let mut perm_inv = vec![0usize; m];
    use faer::linalg::lu::partial_pivoting::factor as plu;
    let req = temp_mat_scratch::<T>(m, n).and(plu::lu_in_place_scratch::<usize, T>(
        m,
        n,
        Par::Seq,
        Default::default(),
    ));
    with_workspace(req, |stack| {
        for i in 0..batch {
            // faer factors in place into LAPACK's packed form: L (unit diagonal implied)
            // below the diagonal, U on and above it.
            let (mut factors, stack) = col_major_in!(T, a, i, m, n, &mut *stack);
            let mut factors = factors.as_mat_mut();
            plu::lu_in_place(
                factors.as_mut(),
                &mut perm,
                &mut perm_inv,
                Par::Seq,
                stack,
                Default::default(),
            );
            store_row_major(factors.as_ref(), lu, i);
            for (dst, &p) in permutation[i * m..(i + 1) * m].iter_mut().zip(&perm) {
                *dst = p as i32;
            }
            pivots[i * steps..(i + 1) * steps]
                .copy_from_slice(&pivots_of_permutation(&perm, steps));
        }
    });
    Ok(())
}

/// The eigendecomposition of each general (non-symmetric) matrix of a batch, for element type
/// `$t` (real or complex) with real part `$r`: eigenvalues `w [.., n]` and, with
/// `compute_vectors`, right eigenvectors in the columns of `v [.., n, n]`, both complex. Each
/// eigenvector is scaled to unit 2-norm with its largest-magnitude component real and
/// positive (LAPACK's `geev` makes that component real and leaves its sign to the
/// algorithm). The order of the eigenvalues is the kernel's, as LAPACK's is its own.
macro_rules! eig_kernel {
    ($name:ident, $t:ty, $r:ty) => {
        fn $name(
            attrs: &[(&str, &str)],
            args: &[HostArg<'_>],
            rets: &mut [HostRet<'_>],
        ) -> KernelResult {
            type Out = num_complex::Complex<$r>;
            let vectors = flag(attrs, "compute_vectors");
            let (batch, n, _) = matrix_dims(args[0].dims)?;
            let a = elems::<$t>(args[0].bytes)?;
            let (w_ret, v_rets) = rets.split_first_mut().ok_or("eig: no results")?;
            let w = elems_mut::<Out>(w_ret.bytes)?;
            let nan = Out::new(<$r>::NAN, <$r>::NAN);
            if !vectors {
                for i in 0..batch {
                    let values = &mut w[i * n..(i + 1) * n];
                    match view(a, i, n, n).eigenvalues() {
                        Ok(ev) => values.copy_from_slice(&ev),
                        Err(_) => values.fill(nan),
                    }
                }
                return Ok(());
            }
            let [v_ret] = v_rets else {
                return Err("eig: the eigenvectors' result expected".into());
            };
            let v = elems_mut::<Out>(v_ret.bytes)?;
            for i in 0..batch {
                let values = &mut w[i * n..(i + 1) * n];
                let mut out = view_mut(v, i, n, n);
                let Ok(f) = view(a, i, n, n).to_owned().eigen() else {
                    values.fill(nan);
                    out.fill(nan);
                    continue;
                };
                for (dst, src) in values.iter_mut().zip(f.S().column_vector().iter()) {
                    *dst = *src;
                }
                let u = f.U();
                for c in 0..n {
                    let col: Vec<Out> = (0..n).map(|r| u[(r, c)]).collect();
                    let largest = col
                        .iter()
                        .copied()
                        .max_by(|x, y| x.norm().total_cmp(&y.norm()))
                        .unwrap_or(Out::new(1.0, 0.0));
                    let length = col.iter().map(|z| z.norm_sqr()).sum::<$r>().sqrt();
                    let scale = if largest.norm() > 0.0 && length > 0.0 {
                        largest.conj() / (largest.norm() * length)
                    } else {
                        Out::new(1.0, 0.0)
                    };
                    for (r, z) in col.iter().enumerate() {
                        out[(r, c)] = z * scale;
                    }
                }
            }
            Ok(())
        }
    };
}

eig_kernel!(eig_f32, f32, f32);
eig_kernel!(eig_f64, f64, f64);
eig_kernel!(eig_c64, num_complex::Complex<f32>, f32);
eig_kernel!(eig_c128, num_complex::Complex<f64>, f64);

/// The Cholesky factor of each matrix of a batch (Hermitian: its lower triangle read), zeros
/// above the diagonal; NaN in the triangle where a matrix is not positive definite, as
/// jaxlib's (which zeroes the rest).
fn cholesky_of<T: ComplexField + Copy + Send + Sync>(
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    let (_, n, _) = matrix_dims(args[0].dims)?;
    let a = elems::<T>(args[0].bytes)?;
    let l = elems_mut::<T>(rets[0].bytes)?;
    if n == 0 {
        return Ok(());
    }
    // The matrices of a batch are independent: one rayon task each.
    l.par_chunks_mut(n * n).enumerate().for_each(|(i, block)| {
        use faer::linalg::cholesky::llt::factor as llt;
        let req = temp_mat_scratch::<T>(n, n).and(llt::cholesky_in_place_scratch::<T>(
            n,
            Par::Seq,
            Default::default(),
        ));
        with_workspace(req, |stack| {
            let (mut m, stack) = col_major_in!(T, a, i, n, n, stack);
            let mut m = m.as_mat_mut();
            let ok = llt::cholesky_in_place(
                m.as_mut(),
                Default::default(),
                Par::Seq,
                stack,
                Default::default(),
            )
            .is_ok();
            for c in 0..n {
                let col = column_mut(m.as_mut(), c);
                col[..c].fill(zero::<T>());
                if !ok {
                    col[c..].fill(nan::<T>());
                }
            }
            store_row_major(m.as_ref(), block, 0);
        });
    });
    Ok(())
}

/// The QR factorisation of each matrix of a batch: `q [.., m, m or k]`, `r [.., m or k, n]`,
/// with LAPACK's phases ([`QrFactors`]).
fn qr_of<T: QrFactors + ComplexField + Copy>(
    attrs: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    let full = flag(attrs, "full_matrices");
    let (batch, m, n) = matrix_dims(args[0].dims)?;
    let a = elems::<T>(args[0].bytes)?;
    let [q_ret, r_ret] = rets else {
        return Err("qr: two results expected".into());
    };
    let q = elems_mut::<T>(q_ret.bytes)?;
    let r = elems_mut::<T>(r_ret.bytes)?;
    for i in 0..batch {
        T::qr_into(a, i, m, n, full, q, r);
    }
    Ok(())
}

/// Matrix `index` of a batch's `(Q, R)` written into the batches `q` and `r`: full
/// (`m x m`, `m x n`) or economic (`m x k`, `k x n`), R zero below its diagonal, the phases
/// LAPACK's.
trait QrFactors: Sized {
    #[allow(clippy::too_many_arguments)]
    fn qr_into(
        a: &[Self],
        index: usize,
        m: usize,
        n: usize,
        full: bool,
        q: &mut [Self],
        r: &mut [Self],
    );
}

/// faer's QR, in this thread's workspace: its real reflectors are LAPACK's.
fn faer_qr_into<T: ComplexField + Copy>(
    a: &[T],
    index: usize,
    (m, n): (usize, usize),
    full: bool,
    q: &mut [T],
    r: &mut [T],
) {
    use faer::linalg::householder as hh;
    use faer::linalg::qr::no_pivoting::factor as qr;
    let size = m.min(n);
    let k = if full { m } else { size };
    let block = qr::recommended_block_size::<T>(m, n);
    let req = StackReq::all_of(&[
        temp_mat_scratch::<T>(m, n),
        temp_mat_scratch::<T>(block, size),
        temp_mat_scratch::<T>(m, k),
        StackReq::any_of(&[
            qr::qr_in_place_scratch::<T>(m, n, block, Par::Seq, Default::default()),
            hh::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, block, k),
        ]),
    ]);
    with_workspace(req, |stack| {
        let (mut factors, stack) = col_major_in!(T, a, index, m, n, stack);
        let mut factors = factors.as_mat_mut();
        // SAFETY: `qr_in_place` writes every coefficient before they are read.
        let (mut coeff, stack) = unsafe { temp_mat_uninit::<T, _, _>(block, size, stack) };
        let mut coeff = coeff.as_mat_mut();
        // SAFETY: set to the identity's first k columns below, before anything reads it.
        let (mut basis, stack) = unsafe { temp_mat_uninit::<T, _, _>(m, k, stack) };
        let mut basis = basis.as_mat_mut();
        qr::qr_in_place(
            factors.as_mut(),
            coeff.as_mut(),
            Par::Seq,
            &mut *stack,
            Default::default(),
        );
        // Q is the reflectors (below the diagonal) applied to the identity's first k columns.
        for c in 0..k {
            let col = column_mut(basis.as_mut(), c);
            col.fill(zero::<T>());
            col[c] = faer::traits::math_utils::one::<T>();
        }
        hh::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            factors.as_ref().get(.., ..size),
            coeff.as_ref(),
            Conj::No,
            basis.as_mut(),
            Par::Seq,
            stack,
        );
        store_row_major(basis.as_ref(), q, index);
        // R: the factors on and above the diagonal (the reflectors below it are spent),
        // zeros below; full mode's rows past min(m, n) are zeros too.
        for c in 0..n {
            let col = column_mut(factors.as_mut(), c);
            col[(c + 1).min(m)..].fill(zero::<T>());
        }
        store_row_major(factors.as_ref().get(..k, ..), r, index);
    });
}

impl QrFactors for f32 {
    fn qr_into(a: &[f32], i: usize, m: usize, n: usize, full: bool, q: &mut [f32], r: &mut [f32]) {
        faer_qr_into(a, i, (m, n), full, q, r)
    }
}

impl QrFactors for f64 {
    fn qr_into(a: &[f64], i: usize, m: usize, n: usize, full: bool, q: &mut [f64], r: &mut [f64]) {
        faer_qr_into(a, i, (m, n), full, q, r)
    }
}

impl QrFactors for C64 {
    fn qr_into(a: &[C64], i: usize, m: usize, n: usize, full: bool, q: &mut [C64], r: &mut [C64]) {
        let (fq, fr) = lapack_qr_c64(col_major(a, i, m, n).as_ref(), full);
        store_row_major(fq.as_ref(), q, i);
        store_row_major(fr.as_ref(), r, i);
    }
}

impl QrFactors for C128 {
    fn qr_into(
        a: &[C128],
        i: usize,
        m: usize,
        n: usize,
        full: bool,
        q: &mut [C128],
        r: &mut [C128],
    ) {
        let (fq, fr) = lapack_qr_c128(col_major(a, i, m, n).as_ref(), full);
        store_row_major(fq.as_ref(), q, i);
        store_row_major(fr.as_ref(), r, i);
    }
}

/// The QR factorisation of one complex matrix as LAPACK's `zgeqr2` and `zungqr` compute it,
/// so that the factors' phases are LAPACK's (JAX's): R's diagonal is real, `-sign(Re α)`
/// times the norm of the column each reflector reduces. faer's complex reflectors leave
/// that entry complex, and the phases cannot be recovered from its factors afterwards (its
/// real reflectors already agree with LAPACK's). Unblocked, `O(m n k)`.
macro_rules! lapack_complex_qr {
    ($name:ident, $r:ty) => {
        fn $name(
            a: MatRef<'_, num_complex::Complex<$r>>,
            full: bool,
        ) -> (Mat<num_complex::Complex<$r>>, Mat<num_complex::Complex<$r>>) {
            type C = num_complex::Complex<$r>;
            /// `x[i.., cols] -= τ v (vᴴ x[i.., cols])` for the reflector `v = [1, tail..]`.
            fn reflect(tail: &[C], tau: C, x: &mut Mat<C>, i: usize, cols: std::ops::Range<usize>) {
                for c in cols {
                    let mut dot = x[(i, c)];
                    for (r, v) in tail.iter().enumerate() {
                        dot += v.conj() * x[(i + 1 + r, c)];
                    }
                    let f = tau * dot;
                    x[(i, c)] -= f;
                    for (r, v) in tail.iter().enumerate() {
                        x[(i + 1 + r, c)] -= f * v;
                    }
                }
            }
            let (m, n) = (a.nrows(), a.ncols());
            let k = m.min(n);
            let mut work = a.to_owned();
            let mut taus = vec![C::new(0.0, 0.0); k];
            for i in 0..k {
                let alpha = work[(i, i)];
                let xnorm = (i + 1..m)
                    .map(|r| work[(r, i)].norm_sqr())
                    .sum::<$r>()
                    .sqrt();
                if xnorm == 0.0 && alpha.im == 0.0 {
                    continue;
                }
                let norm = alpha.norm().hypot(xnorm);
                let beta = if alpha.re >= 0.0 { -norm } else { norm };
                taus[i] = C::new((beta - alpha.re) / beta, -alpha.im / beta);
                let scale = C::new(1.0, 0.0) / (alpha - beta);
                for r in i + 1..m {
                    work[(r, i)] *= scale;
                }
                work[(i, i)] = C::new(beta, 0.0);
                // Hᴴ applied to the columns right of i (zgeqr2 applies H(i)ᴴ).
                let tail: Vec<C> = (i + 1..m).map(|r| work[(r, i)]).collect();
                reflect(&tail, taus[i].conj(), &mut work, i, i + 1..n);
            }
            let q_cols = if full { m } else { k };
            let r_rows = if full { m } else { k };
            let r = Mat::from_fn(r_rows, n, |row, c| {
                if row <= c && row < k {
                    work[(row, c)]
                } else {
                    C::new(0.0, 0.0)
                }
            });
            // Q = H_0 H_1 ... H_{k-1} applied to the identity's first q_cols columns.
            let mut q = Mat::from_fn(m, q_cols, |row, c| {
                if row == c {
                    C::new(1.0, 0.0)
                } else {
                    C::new(0.0, 0.0)
                }
            });
            for i in (0..k).rev() {
                let tail: Vec<C> = (i + 1..m).map(|r| work[(r, i)]).collect();
                reflect(&tail, taus[i], &mut q, i, 0..q_cols);
            }
            (q, r)
        }
    };
}

lapack_complex_qr!(lapack_qr_c64, f32);
lapack_complex_qr!(lapack_qr_c128, f64);

/// The eigendecomposition of each symmetric (Hermitian) matrix of a batch, its lower
/// triangle read (of its Hermitian part when `symmetrize`): eigenvectors in `v`'s columns,
/// real eigenvalues `w` ascending.
fn eigh_of<T: ComplexField + Copy>(
    symmetrize: bool,
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult
where
    T::Real: Copy,
{
    let (batch, n, _) = matrix_dims(args[0].dims)?;
    let a = elems::<T>(args[0].bytes)?;
    let [v_ret, w_ret] = rets else {
        return Err("eigh: two results expected".into());
    };
    let v = elems_mut::<T>(v_ret.bytes)?;
    let w = elems_mut::<T::Real>(w_ret.bytes)?;
    if n == 0 {
        return Ok(());
    }
    use faer::linalg::evd;
    let par = Par::Seq;
    let mut params: Spec<evd::SelfAdjointEvdParams, T> = Default::default();
    params.recursion_threshold = LEAF;
    let req = StackReq::all_of(&[
        temp_mat_scratch::<T>(n, n).array(2),
        evd::self_adjoint_evd_scratch::<T>(n, evd::ComputeEigenvectors::Yes, par, params),
    ]);
    let mut diag = Diag::<T>::zeros(n);
    with_workspace(req, |stack| {
        for i in 0..batch {
            let values = &mut w[i * n..(i + 1) * n];
            let (matrix, stack) = if symmetrize {
                // SAFETY: `fill_col_major_hermitian_part` writes every element first.
                let (mut tmp, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, &mut *stack) };
                fill_col_major_hermitian_part(a, i, tmp.as_mat_mut());
                (tmp, stack)
            } else {
                col_major_in!(T, a, i, n, n, &mut *stack)
            };
            // SAFETY: faer writes every element of the eigenvectors before they are read.
            let (mut vectors, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
            let mut vectors = vectors.as_mat_mut();
            let found = evd::self_adjoint_evd(
                matrix.as_mat_ref(),
                diag.as_mut(),
                Some(vectors.as_mut()),
                par,
                stack,
                params,
            );
            if found.is_ok() {
                store_row_major(vectors.as_ref(), v, i);
                for (dst, src) in values.iter_mut().zip(diag.column_vector().iter()) {
                    *dst = real(src);
                }
            } else {
                view_mut(v, i, n, n).fill(nan::<T>());
                values.fill(nan::<T::Real>());
            }
        }
    });
    Ok(())
}

/// The SVD of each matrix of a batch: real singular values `s [.., k]` descending, then (with
/// `compute_uv`) `u` and `vh = Vᴴ`, reduced or full.
fn svd_of<T: ComplexField + Copy>(
    attrs: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult
where
    T::Real: Copy,
{
    let full = flag(attrs, "full_matrices");
    let compute_uv = flag(attrs, "compute_uv");
    let (batch, m, n) = matrix_dims(args[0].dims)?;
    let k = m.min(n);
    let a = elems::<T>(args[0].bytes)?;
    let (s_ret, uv_rets) = rets.split_first_mut().ok_or("svd: no results")?;
    let s = elems_mut::<T::Real>(s_ret.bytes)?;
    if !compute_uv {
        for i in 0..batch {
            let values = &mut s[i * k..(i + 1) * k];
            match col_major(a, i, m, n).singular_values() {
                Ok(sv) => values.copy_from_slice(&sv),
                Err(_) => values.fill(nan::<T::Real>()),
            }
        }
        return Ok(());
    }
    let [u_ret, vt_ret] = uv_rets else {
        return Err("svd: u and vt results expected".into());
    };
    let (ku, kv) = if full { (m, n) } else { (k, k) };
    let u = elems_mut::<T>(u_ret.bytes)?;
    let vt = elems_mut::<T>(vt_ret.bytes)?;
    use faer::linalg::svd as fsvd;
    let par = Par::Seq;
    let mut params: Spec<fsvd::SvdParams, T> = Default::default();
    params.recursion_threshold = LEAF;
    let shape = if full {
        fsvd::ComputeSvdVectors::Full
    } else {
        fsvd::ComputeSvdVectors::Thin
    };
    let req = StackReq::all_of(&[
        temp_mat_scratch::<T>(m, n),
        temp_mat_scratch::<T>(m, ku),
        temp_mat_scratch::<T>(n, kv),
        fsvd::svd_scratch::<T>(m, n, shape, shape, par, params),
    ]);
    let mut diag = Diag::<T>::zeros(k);
    with_workspace(req, |stack| {
        for i in 0..batch {
            let values = &mut s[i * k..(i + 1) * k];
            let (matrix, stack) = col_major_in!(T, a, i, m, n, &mut *stack);
            // SAFETY: faer writes every element of U and V before they are read.
            let (mut u_mat, stack) = unsafe { temp_mat_uninit::<T, _, _>(m, ku, stack) };
            let (mut v_mat, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, kv, stack) };
            let (mut u_mat, mut v_mat) = (u_mat.as_mat_mut(), v_mat.as_mat_mut());
            let found = fsvd::svd(
                matrix.as_mat_ref(),
                diag.as_mut(),
                Some(u_mat.as_mut()),
                Some(v_mat.as_mut()),
                par,
                stack,
                params,
            );
            if found.is_ok() {
                store_row_major(u_mat.as_ref(), u, i);
                // Row r of `vt` is column r of V, conjugated: contiguous on both sides.
                let vt_block = &mut vt[i * kv * n..(i + 1) * kv * n];
                for (r, row) in vt_block.chunks_exact_mut(n.max(1)).enumerate() {
                    for (dst, src) in row.iter_mut().zip(column(v_mat.as_ref(), r)) {
                        *dst = conj(src);
                    }
                }
                for (dst, src) in values.iter_mut().zip(diag.column_vector().iter()) {
                    *dst = real(src);
                }
            } else {
                values.fill(nan::<T::Real>());
                view_mut(u, i, m, ku).fill(nan::<T>());
                view_mut(vt, i, kv, n).fill(nan::<T>());
            }
        }
    });
    Ok(())
}

/// Matrix `index` of a batch of row-major `n x n` matrices, copied.
fn square<T: Copy>(data: &[T], index: usize, n: usize) -> Square<T> {
    Square {
        n,
        data: data[index * n * n..(index + 1) * n * n].to_vec(),
    }
}

/// The Hessenberg form `h` and the unitary `q` (`a = q h qᴴ`) of each matrix of a batch, as
/// LAPACK's `gehrd` and `unghr` give them ([`schur::hessenberg`]).
fn hessenberg_of<T: Elem>(args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    let (batch, n, _) = matrix_dims(args[0].dims)?;
    let a = elems::<T>(args[0].bytes)?;
    let [h_ret, q_ret] = rets else {
        return Err("hessenberg: two results expected".into());
    };
    let h = elems_mut::<T>(h_ret.bytes)?;
    let q = elems_mut::<T>(q_ret.bytes)?;
    let block = n * n;
    for i in 0..batch {
        let mut form = square(a, i, n);
        let unitary = schur::hessenberg(&mut form);
        h[i * block..(i + 1) * block].copy_from_slice(&form.data);
        q[i * block..(i + 1) * block].copy_from_slice(&unitary.data);
    }
    Ok(())
}

/// The Schur form `t` and vectors `z` (`a = z t zᴴ`) of each matrix of a batch
/// ([`schur::schur`]); NaN where the QR iteration fails, as jaxlib's.
fn schur_of<T: Elem>(args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    let (batch, n, _) = matrix_dims(args[0].dims)?;
    let a = elems::<T>(args[0].bytes)?;
    let [t_ret, z_ret] = rets else {
        return Err("schur: two results expected".into());
    };
    let t = elems_mut::<T>(t_ret.bytes)?;
    let z = elems_mut::<T>(z_ret.bytes)?;
    let block = n * n;
    for i in 0..batch {
        let (t_out, z_out) = (
            &mut t[i * block..(i + 1) * block],
            &mut z[i * block..(i + 1) * block],
        );
        match schur::schur(&square(a, i, n)) {
            Some((form, vectors)) => {
                t_out.copy_from_slice(&form.data);
                z_out.copy_from_slice(&vectors.data);
            }
            None => {
                t_out.fill(T::nan());
                z_out.fill(T::nan());
            }
        }
    }
    Ok(())
}

/// The square root `u` of each upper-triangular `t` of a batch, column by column as JAX's
/// `_sqrtm_triu` (Björck and Hammarling): `u_ii = √t_ii`, and above the diagonal
/// `u_ij = (t_ij - Σ_{i<k<j} u_ik u_kj) / (u_ii + u_jj)`, or 0 where the numerator's two
/// terms are equal.
fn sqrtm_triu_of<T: Elem>(args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    let (batch, n, _) = matrix_dims(args[0].dims)?;
    let t = elems::<T>(args[0].bytes)?;
    let u = elems_mut::<T>(rets[0].bytes)?;
    for b in 0..batch {
        let t = square(t, b, n);
        let mut out = Square {
            n,
            data: vec![T::zero(); n * n],
        };
        let diag: Vec<T> = (0..n).map(|i| t[(i, i)].sqrt()).collect();
        for (i, d) in diag.iter().enumerate() {
            out[(i, i)] = *d;
        }
        for j in 0..n {
            for i in (0..j).rev() {
                let mut s = T::zero();
                for k in i + 1..j {
                    s += out[(i, k)] * out[(k, j)];
                }
                out[(i, j)] = if t[(i, j)] == s {
                    T::zero()
                } else {
                    (t[(i, j)] - s) / (diag[i] + diag[j])
                };
            }
        }
        u[b * n * n..(b + 1) * n * n].copy_from_slice(&out.data);
    }
    Ok(())
}

/// The solution `y` of `r y + y s = f` for upper-triangular `r` and lower-triangular `s`,
/// element by element from the bottom-right corner as JAX's
/// `_solve_sylvester_triangular_scan` (Bartels and Stewart's back substitution; JAX's
/// docstring writes `sᵀ` for the upper-triangular factor it transposes into `s`).
fn sylvester_triu_of<T: Elem>(args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    let (batch, m, _) = matrix_dims(args[0].dims)?;
    let (_, n, _) = matrix_dims(args[1].dims)?;
    let (r, s, f) = (
        elems::<T>(args[0].bytes)?,
        elems::<T>(args[1].bytes)?,
        elems::<T>(args[2].bytes)?,
    );
    let y = elems_mut::<T>(rets[0].bytes)?;
    for b in 0..batch {
        let (r, s) = (square(r, b, m), square(s, b, n));
        let f = &f[b * m * n..(b + 1) * m * n];
        let y = &mut y[b * m * n..(b + 1) * m * n];
        y.fill(T::zero());
        for idx in (0..m * n).rev() {
            let (i, j) = (idx / n, idx % n);
            let mut row_term = T::zero();
            for k in i + 1..m {
                row_term += r[(i, k)] * y[k * n + j];
            }
            let mut col_term = T::zero();
            for k in j + 1..n {
                col_term += y[i * n + k] * s[(k, j)];
            }
            y[idx] = (f[idx] - (row_term + col_term)) / (r[(i, i)] + s[(j, j)]);
        }
    }
    Ok(())
}

/// Parlett's recurrence (Golub and Van Loan's algorithm 11.1.1, as JAX's `funm` runs it):
/// completes `f(T)` above the diagonal from its diagonal `f` and the upper-triangular `t`,
/// superdiagonal by superdiagonal, and returns the smallest `|t_jj - t_ii|` met (from
/// `|t_00|`), which JAX's error estimate uses. A zero denominator leaves the numerator
/// undivided, as JAX's.
fn parlett_of<T: Elem>(args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    let (batch, n, _) = matrix_dims(args[0].dims)?;
    let (f_in, t) = (elems::<T>(args[0].bytes)?, elems::<T>(args[1].bytes)?);
    let [f_ret, minden_ret] = rets else {
        return Err("parlett: two results expected".into());
    };
    let f_out = elems_mut::<T>(f_ret.bytes)?;
    let minden = elems_mut::<T::Real>(minden_ret.bytes)?;
    for b in 0..batch {
        let t = square(t, b, n);
        let mut f = square(f_in, b, n);
        let mut smallest = if n > 0 {
            t[(0, 0)].abs()
        } else {
            T::Real::zero()
        };
        for p in 1..n {
            for i in 1..=n - p {
                let j = i + p;
                let mut s = t[(i - 1, j - 1)] * (f[(j - 1, j - 1)] - f[(i - 1, i - 1)]);
                let mut val = T::zero();
                for k in i..j - 1 {
                    val += t[(i - 1, k)] * f[(k, j - 1)];
                }
                let mut other = T::zero();
                for k in i..j - 1 {
                    other += f[(i - 1, k)] * t[(k, j - 1)];
                }
                s += val - other;
                let den = t[(j - 1, j - 1)] - t[(i - 1, i - 1)];
                if den != T::zero() {
                    s = s / den;
                }
                f[(i - 1, j - 1)] = s;
                smallest = smallest.min(den.abs());
            }
        }
        f_out[b * n * n..(b + 1) * n * n].copy_from_slice(&f.data);
        minden[b] = smallest;
    }
    Ok(())
}

/// Runs the instance of a generic kernel for the first operand's dtype.
macro_rules! by_dtype {
    ($args:expr, $kernel:ident ($($arg:expr),*)) => {
        match $args[0].dtype {
            DType::F32 => $kernel::<f32>($($arg),*),
            DType::F64 => $kernel::<f64>($($arg),*),
            DType::C64 => $kernel::<C64>($($arg),*),
            DType::C128 => $kernel::<C128>($($arg),*),
            other => Err(format!("{} has no kernel for {other:?}", stringify!($kernel))),
        }
    };
}

/// `jaxrs_cholesky` (see the module docs).
pub fn cholesky(
    _: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    by_dtype!(args, cholesky_of(args, rets))
}

/// `jaxrs_triangular_solve`: attributes `left_side`, `lower`, `transpose_a`, `unit_diagonal`.
pub fn triangular_solve(
    attrs: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    by_dtype!(args, triangular_solve_of(attrs, args, rets))
}

/// `jaxrs_lu` (see the module docs).
pub fn lu(_: &[(&str, &str)], args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    by_dtype!(args, lu_of(args, rets))
}

/// `jaxrs_eig`: attribute `compute_vectors` (see [`eig_kernel`]).
pub fn eig(attrs: &[(&str, &str)], args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    match args[0].dtype {
        DType::F32 => eig_f32(attrs, args, rets),
        DType::F64 => eig_f64(attrs, args, rets),
        DType::C64 => eig_c64(attrs, args, rets),
        DType::C128 => eig_c128(attrs, args, rets),
        other => Err(format!("eig has no kernel for {other:?}")),
    }
}

/// `jaxrs_hessenberg` (see the module docs).
pub fn hessenberg(
    _: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    by_dtype!(args, hessenberg_of(args, rets))
}

/// `jaxrs_schur` (see the module docs).
pub fn schur(_: &[(&str, &str)], args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    by_dtype!(args, schur_of(args, rets))
}

/// `jaxrs_sqrtm_triu` (see [`sqrtm_triu_of`]).
pub fn sqrtm_triu(
    _: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    by_dtype!(args, sqrtm_triu_of(args, rets))
}

/// `jaxrs_sylvester_triu` (see [`sylvester_triu_of`]).
pub fn sylvester_triu(
    _: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    by_dtype!(args, sylvester_triu_of(args, rets))
}

/// `jaxrs_parlett` (see [`parlett_of`]).
pub fn parlett(_: &[(&str, &str)], args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    by_dtype!(args, parlett_of(args, rets))
}

/// `jaxrs_qr`: attribute `full_matrices`.
pub fn qr(attrs: &[(&str, &str)], args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    by_dtype!(args, qr_of(attrs, args, rets))
}

/// `jaxrs_eigh` (see the module docs).
pub fn eigh(
    attrs: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    let symmetrize = flag(attrs, "symmetrize_input");
    by_dtype!(args, eigh_of(symmetrize, args, rets))
}

/// `jaxrs_svd`: attributes `full_matrices`, `compute_uv`.
pub fn svd(attrs: &[(&str, &str)], args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    by_dtype!(args, svd_of(attrs, args, rets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pivots_reproduce_the_permutation() {
        let perm = [2usize, 0, 3, 1];
        let pivots = pivots_of_permutation(&perm, 4);
        let mut rows: Vec<usize> = (0..4).collect();
        for (i, &p) in pivots.iter().enumerate() {
            rows.swap(i, p as usize);
        }
        assert_eq!(rows, perm);
    }
}
