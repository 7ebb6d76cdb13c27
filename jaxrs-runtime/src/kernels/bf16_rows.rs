//! `jaxrs_bf16_rows`: a few bfloat16 rows times a bfloat16 weight kept `[out, in]` (PyTorch's
//! layout, `jaxrs_models::Dense`'s), with float32 results: a decode step's products.
//!
//! XLA's CPU backend runs bf16 products only through YNNPACK, which packs the weight into its
//! own tiles on every call (weights are arguments, not constants). Where the CPU has AMX that
//! is fast; on a CPU with AVX512-BF16 and no AMX (AMD Zen 4) packing plus YNNPACK's bf16
//! kernel took longer than the float32 product of twice the bytes: 24 weights `[3072, 768]`
//! streamed from memory at one row, 7.8-9.5 ms in bf16 against 6.9 ms in f32 (the streamed
//! table of `benches/matmul_dtypes.rs`), so bf16 decode ran slower than f32. A row of such a
//! weight is contiguous along the contraction, as each activation row is, so each output is
//! a dot product of two contiguous bf16 vectors: `VDPBF16PS` multiplies 32 pairs and adds
//! them into 16 f32 lanes, and the weight is read once, straight from memory, by both
//! threads. It runs where [`runs_here`] says (AVX512-BF16 without AMX-BF16); elsewhere the
//! lowering keeps YNNPACK's forms.
//!
//! Numbers: each product of two bf16 values is exact in f32 and the sums are f32, as in
//! YNNPACK's bf16 x bf16 -> f32 product; the order of the sums differs (16 lanes, then a
//! tree), and `VDPBF16PS` treats subnormal inputs as zero (as XLA's CPU programs run anyway,
//! with denormals flushed).

use super::linalg::{elems, elems_mut};
use crate::dtype::DType;
use crate::pjrt::ffi::{HostArg, HostRet};
use rayon::prelude::*;
use std::cell::RefCell;

type KernelResult = Result<(), String>;

/// The most activation rows the lowering sends here; more go to YNNPACK, whose packing then
/// pays for itself.
pub const MAX_ROWS: usize = 8;

/// Output columns (weight rows) per task shared among the threads: 64 rows of a 768-wide
/// bf16 weight are 96 KiB, a few tasks per thread for a 3072-row weight.
const COLUMNS_PER_TASK: usize = 64;

/// Whether products here go to this kernel: an x86-64 CPU with AVX512-BF16 and without
/// AMX-BF16 (whose YNNPACK kernels were measured faster, on an Intel Xeon).
pub fn runs_here() -> bool {
    static HERE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HERE.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> bool {
    // CPUID leaf 7, sub-leaf 0, EDX bit 22: AMX-BF16.
    let amx_bf16 = std::arch::x86_64::__cpuid_count(7, 0).edx & (1 << 22) != 0;
    std::arch::is_x86_feature_detected!("avx512bf16")
        && std::arch::is_x86_feature_detected!("avx512f")
        && !amx_bf16
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> bool {
    false
}

/// The kernel: operands `x` `[.., k]` and `w` `[n, k]` (bf16), result `[.., n]` (f32), `x`'s
/// leading dims flattened into at most [`MAX_ROWS`] rows.
pub fn bf16_rows(
    _: &[(&str, &str)],
    args: &[HostArg<'_>],
    rets: &mut [HostRet<'_>],
) -> KernelResult {
    let ([x, w], [y]) = (args, rets) else {
        return Err("expected two operands and one result".into());
    };
    if x.dtype != DType::BF16 || w.dtype != DType::BF16 || y.dtype != DType::F32 {
        return Err("expected bf16 operands and an f32 result".into());
    }
    let (Some(&k), [n, wk]) = (x.dims.last(), w.dims) else {
        return Err(format!(
            "operands {:?} and {:?} are not [.., k] and [n, k]",
            x.dims, w.dims
        ));
    };
    let (k, n) = (k as usize, *n as usize);
    let rows: usize = x.dims[..x.dims.len() - 1]
        .iter()
        .map(|&d| d as usize)
        .product();
    let y_rows: usize = y.dims[..y.dims.len().saturating_sub(1)]
        .iter()
        .map(|&d| d as usize)
        .product();
    if *wk as usize != k || y.dims.last().map(|&d| d as usize) != Some(n) || y_rows != rows {
        return Err(format!(
            "dims {:?} x {:?} -> {:?} do not fit [.., k] x [n, k] -> [.., n]",
            x.dims, w.dims, y.dims
        ));
    }
    if rows > MAX_ROWS {
        return Err(format!("{rows} rows, more than {MAX_ROWS}"));
    }
    let (x, w, y) = (
        elems::<u16>(x.bytes)?,
        elems::<u16>(w.bytes)?,
        elems_mut::<f32>(y.bytes)?,
    );
    if !runs_here() {
        return Err("this CPU has no AVX512-BF16".into());
    }
    rows_times_weight(x, rows, w, n, k, y);
    Ok(())
}

/// `y[r, j] = sum_i x[r, i] w[j, i]` for `rows` rows (`y` row-major `[rows, n]`), the
/// weight's rows shared among the threads.
fn rows_times_weight(x: &[u16], rows: usize, w: &[u16], n: usize, k: usize, y: &mut [f32]) {
    if rows == 0 || n == 0 {
        return;
    }
    let dot = dot_rows_for(rows);
    let columns = |out: &mut [f32], first: usize| {
        for (c, sums) in out.chunks_mut(rows).enumerate() {
            let j = first + c;
            // SAFETY: `runs_here` checked the CPU; `x` holds `rows * k` elements (checked
            // against its dims by the caller) and `sums` `rows`.
            unsafe { dot(x, &w[j * k..(j + 1) * k], sums) };
        }
    };
    if rows == 1 {
        y.par_chunks_mut(COLUMNS_PER_TASK)
            .enumerate()
            .for_each(|(task, out)| columns(out, task * COLUMNS_PER_TASK));
        return;
    }
    // Each task computes its columns of every row column-major (`[n, rows]`, so that the
    // tasks' outputs are contiguous), in a buffer kept between calls (a fresh one would be
    // mapped and zeroed by the kernel at every call of an output head's size), then
    // transposed into `y`.
    let mut by_column = |buffer: &mut Vec<f32>| {
        buffer.resize(n * rows, 0.0);
        buffer
            .par_chunks_mut(COLUMNS_PER_TASK * rows)
            .enumerate()
            .for_each(|(task, out)| columns(out, task * COLUMNS_PER_TASK));
        for r in 0..rows {
            for j in 0..n {
                y[r * n + j] = buffer[j * rows + r];
            }
        }
    };
    thread_local!(static BY_COLUMN: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) });
    // The kept buffer is in use further up this thread's stack when a thread waiting for its
    // tasks runs another call of the kernel (a rayon worker that called jaxrs): that call
    // takes a fresh one.
    BY_COLUMN.with(|kept| match kept.try_borrow_mut() {
        Ok(mut kept) => by_column(&mut kept),
        Err(_) => by_column(&mut Vec::new()),
    });
}

/// `sums[r] = x[r, :] . w_row` for the `ROWS` rows of `x`, each `k = w_row.len()` long
/// (`ROWS` a constant, so that the accumulators stay in registers).
///
/// # Safety
/// The CPU must have AVX512F and AVX512-BF16; `x` holds `ROWS * k` elements and `sums` `ROWS`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn dot_rows<const ROWS: usize>(x: &[u16], w_row: &[u16], sums: &mut [f32]) {
    use std::arch::x86_64::*;
    const LANES: usize = 32;
    let k = w_row.len();
    assert!(x.len() >= ROWS * k && sums.len() >= ROWS);
    // The masked lanes of `s` from `at`: a bf16 vector (bf16 values are u16 bit patterns).
    let load = |s: &[u16], at: usize, mask: __mmask32| -> __m512bh {
        debug_assert!(at + (32 - mask.leading_zeros() as usize) <= s.len());
        // SAFETY: the caller's slices cover every masked lane from `at`.
        unsafe { std::mem::transmute(_mm512_maskz_loadu_epi16(mask, s.as_ptr().add(at).cast())) }
    };
    // Two accumulators per row, taking alternate blocks of 32, so that a row's sums are two
    // chains of dependent adds rather than one.
    let mut even = [_mm512_setzero_ps(); ROWS];
    let mut odd = [_mm512_setzero_ps(); ROWS];
    let full = k / LANES;
    for pair in 0..full / 2 {
        let at = 2 * pair * LANES;
        let (w0, w1) = (load(w_row, at, u32::MAX), load(w_row, at + LANES, u32::MAX));
        for r in 0..ROWS {
            even[r] = _mm512_dpbf16_ps(even[r], w0, load(x, r * k + at, u32::MAX));
            odd[r] = _mm512_dpbf16_ps(odd[r], w1, load(x, r * k + at + LANES, u32::MAX));
        }
    }
    // A last whole block, then the partial one.
    let rest = [
        (full % 2 == 1).then(|| ((full - 1) * LANES, u32::MAX)),
        (!k.is_multiple_of(LANES)).then(|| (full * LANES, (1u32 << (k % LANES)) - 1)),
    ];
    for (at, mask) in rest.into_iter().flatten() {
        let w = load(w_row, at, mask);
        for (r, acc) in even.iter_mut().enumerate() {
            *acc = _mm512_dpbf16_ps(*acc, w, load(x, r * k + at, mask));
        }
    }
    for ((sum, e), o) in sums.iter_mut().zip(even).zip(odd) {
        *sum = _mm512_reduce_add_ps(_mm512_add_ps(e, o));
    }
}

/// [`dot_rows`] for `rows` rows (at most [`MAX_ROWS`]).
#[cfg(target_arch = "x86_64")]
fn dot_rows_for(rows: usize) -> unsafe fn(&[u16], &[u16], &mut [f32]) {
    match rows {
        1 => dot_rows::<1>,
        2 => dot_rows::<2>,
        3 => dot_rows::<3>,
        4 => dot_rows::<4>,
        5 => dot_rows::<5>,
        6 => dot_rows::<6>,
        7 => dot_rows::<7>,
        8 => dot_rows::<8>,
        _ => unreachable!("at most MAX_ROWS rows"),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn dot_rows_for(_: usize) -> unsafe fn(&[u16], &[u16], &mut [f32]) {
    unreachable!("runs_here is false off x86-64")
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    /// The products in f64 of the bf16 values (exact), to compare the kernel's f32 sums with.
    fn reference(x: &[u16], rows: usize, w: &[u16], n: usize, k: usize) -> Vec<f64> {
        let f = |b: u16| bf16::from_bits(b).to_f64();
        let mut y = vec![0.0; rows * n];
        for r in 0..rows {
            for j in 0..n {
                y[r * n + j] = (0..k).map(|i| f(x[r * k + i]) * f(w[j * k + i])).sum();
            }
        }
        y
    }

    fn values(len: usize, seed: u32) -> Vec<u16> {
        (0..len)
            .map(|i| {
                let v =
                    (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) % 2001) as f32;
                bf16::from_f32((v - 1000.0) / 500.0).to_bits()
            })
            .collect()
    }

    #[test]
    fn rows_times_weight_equals_the_exact_products_to_f32_rounding() {
        if !runs_here() {
            eprintln!(
                "skipped: this CPU has no AVX512-BF16 (or has AMX), so the kernel never runs"
            );
            return;
        }
        // Contractions with and without a partial last block of 32, one row and several, a
        // weight of fewer rows than a task and of several tasks with a partial last one.
        for (rows, n, k) in [
            (1, 3, 32),
            (1, 130, 768),
            (2, 65, 33),
            (8, 200, 100),
            (5, 1, 7),
        ] {
            let (x, w) = (values(rows * k, 1), values(n * k, 7));
            let mut y = vec![f32::NAN; rows * n];
            rows_times_weight(&x, rows, &w, n, k, &mut y);
            let want = reference(&x, rows, &w, n, k);
            let scale: f64 = want.iter().map(|v| v.abs()).fold(1.0, f64::max);
            for (i, (&got, want)) in y.iter().zip(&want).enumerate() {
                assert!(
                    (got as f64 - want).abs() <= 1e-6 * scale * (k as f64).sqrt(),
                    "rows {rows} n {n} k {k}: y[{i}] = {got}, exact {want}"
                );
            }
        }
    }
}
