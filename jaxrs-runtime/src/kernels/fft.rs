//! The discrete Fourier transform on the host, backed by `rustfft` (and `realfft` for the real
//! transforms): the kernel behind [`crate::prims::fft::Fft`] on the CPU plugin.
//!
//! `stablehlo.fft` runs XLA's own CPU FFT, which on the plugin's XLA took 1.2-1.8x JAX's time
//! for 2^20 points (README, "Complex numbers and FFT"); rustfft's AVX kernels take less than
//! half of either (benches/fft.rs). The target is `jaxrs_fft`, with the string attributes
//! `fft_type` (`FFT`, `IFFT`, `RFFT`, `IRFFT`, as `stablehlo.fft` names them) and
//! `fft_length` (the transformed lengths, comma-separated, outermost first):
//!
//! | `fft_type` | operand | result |
//! |---|---|---|
//! | `FFT`, `IFFT` | complex `[.., n1, .., nk]` | the same shape and dtype |
//! | `RFFT` | real `[.., n1, .., nk]` | complex `[.., n1, .., nk / 2 + 1]` |
//! | `IRFFT` | complex `[.., n1, .., nk / 2 + 1]` | real `[.., n1, .., nk]` |
//!
//! As `stablehlo.fft`, the inverse transforms divide by the product of the lengths, and IRFFT
//! ignores the imaginary parts of the frequencies that must be real (zero, and `nk / 2` for an
//! even `nk`).

use super::linalg::{attr, elems, elems_mut};
use crate::dtype::DType;
use crate::pjrt::ffi::{HostArg, HostRet};
use num_complex::Complex;
use num_traits::NumAssign;
use rayon::prelude::*;
use realfft::{RealFftPlanner, RealToComplex};
use rustfft::{Fft, FftDirection, FftNum, FftPlanner};
use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::LocalKey;

type KernelResult = Result<(), String>;

/// How many elements a thread takes at least when the rows of a transform are shared out:
/// below this, splitting costs more than it saves.
const MIN_ELEMS_PER_TASK: usize = 1 << 14;

/// How many bytes of each row a group of columns takes when the columns of an axis that is
/// not the innermost are transformed (`transform_columns`): one cache line, 8 complex64 or 4
/// complex128 columns. A 1024x1024 `fft2` measured (2-core AMD EPYC, median of 200 calls):
/// complex64 2.05 ms with 8 columns, 2.3-2.5 with 4, 3.4-3.6 with 16, 3.8 with 32;
/// complex128 4.4-4.6 ms with 4, 4.5-4.7 with 16, 4.8-5.6 with 8, 5.6-6.0 with 2. The rows
/// of such a block lie a power of two apart, so wider groups evict each other from the cache.
const COLUMN_GROUP_BYTES: usize = 64;

/// The most a thread keeps of each of its buffers between calls (a 2^24-point complex128
/// transform's).
const KEPT_BYTES: usize = 256 << 20;

/// This thread's buffers of one kind, kept between calls: memory the allocator maps afresh
/// costs a page fault per 4 KiB on first touch, and a fresh 16 MiB scratch buffer for each
/// 2^20-point complex128 transform doubled its time on the bench machine (`perf stat`:
/// ~4000 more page faults a call).
type Kept<E> = LocalKey<RefCell<Vec<E>>>;

/// Runs `f` on `len` elements of this thread's `kept` buffer (grown as needed; a fresh one if
/// it is in use further up this thread's stack). The contents are whatever the last user left.
fn with_kept<E: Copy + Default, R>(
    kept: &'static Kept<E>,
    len: usize,
    f: impl FnOnce(&mut [E]) -> R,
) -> R {
    kept.with(|cell| {
        let Ok(mut buffer) = cell.try_borrow_mut() else {
            return f(&mut vec![E::default(); len]);
        };
        if buffer.len() < len {
            buffer.resize(len, E::default());
        }
        let out = f(&mut buffer[..len]);
        if buffer.len() * size_of::<E>() > KEPT_BYTES {
            *buffer = Vec::new();
        }
        out
    })
}

/// The element types rustfft computes in, with their planners (cached: plans for a length are
/// made once per process and shared by every later call) and their kept buffers.
trait Real: FftNum + NumAssign + Default {
    fn planner() -> &'static Mutex<FftPlanner<Self>>;
    fn real_planner() -> &'static Mutex<RealFftPlanner<Self>>;
    /// The transforms' scratch.
    fn scratch() -> &'static Kept<Complex<Self>>;
    /// Whole arrays: the inverse real transform's spectrum.
    fn arrays() -> &'static Kept<Complex<Self>>;
    /// A group of columns gathered into rows.
    fn column_group() -> &'static Kept<Complex<Self>>;
    /// A row of the forward real transform's input, which realfft uses as scratch.
    fn real_rows() -> &'static Kept<Self>;
}

macro_rules! real_impl {
    ($t:ty) => {
        impl Real for $t {
            fn planner() -> &'static Mutex<FftPlanner<$t>> {
                static PLANNER: OnceLock<Mutex<FftPlanner<$t>>> = OnceLock::new();
                PLANNER.get_or_init(|| Mutex::new(FftPlanner::new()))
            }
            fn real_planner() -> &'static Mutex<RealFftPlanner<$t>> {
                static PLANNER: OnceLock<Mutex<RealFftPlanner<$t>>> = OnceLock::new();
                PLANNER.get_or_init(|| Mutex::new(RealFftPlanner::new()))
            }
            fn scratch() -> &'static Kept<Complex<$t>> {
                thread_local!(static KEPT: RefCell<Vec<Complex<$t>>> = const { RefCell::new(Vec::new()) });
                &KEPT
            }
            fn arrays() -> &'static Kept<Complex<$t>> {
                thread_local!(static KEPT: RefCell<Vec<Complex<$t>>> = const { RefCell::new(Vec::new()) });
                &KEPT
            }
            fn column_group() -> &'static Kept<Complex<$t>> {
                thread_local!(static KEPT: RefCell<Vec<Complex<$t>>> = const { RefCell::new(Vec::new()) });
                &KEPT
            }
            fn real_rows() -> &'static Kept<$t> {
                thread_local!(static KEPT: RefCell<Vec<$t>> = const { RefCell::new(Vec::new()) });
                &KEPT
            }
        }
    };
}
real_impl!(f32);
real_impl!(f64);

/// Transforms `rows` (whole rows of `plan.len()`) in place with this thread's scratch.
fn process<T: Real>(plan: &dyn Fft<T>, rows: &mut [Complex<T>]) {
    with_kept(T::scratch(), plan.get_inplace_scratch_len(), |scratch| {
        plan.process_with_scratch(rows, scratch)
    });
}

fn complex_plan<T: Real>(n: usize, direction: FftDirection) -> Arc<dyn Fft<T>> {
    let mut planner = T::planner().lock().unwrap_or_else(|e| e.into_inner());
    planner.plan_fft(n, direction)
}

/// Which transform, and over which lengths, from the kernel's attributes.
struct Transform {
    kind: Kind,
    lengths: Vec<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fft,
    Ifft,
    Rfft,
    Irfft,
}

impl Transform {
    fn from_attrs(attrs: &[(&str, &str)]) -> Result<Self, String> {
        let kind = match attr(attrs, "fft_type") {
            Some("FFT") => Kind::Fft,
            Some("IFFT") => Kind::Ifft,
            Some("RFFT") => Kind::Rfft,
            Some("IRFFT") => Kind::Irfft,
            other => return Err(format!("unknown fft_type {other:?}")),
        };
        let lengths = attr(attrs, "fft_length")
            .ok_or("no fft_length attribute")?
            .split(',')
            .map(|s| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|e| format!("fft_length: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if !(1..=3).contains(&lengths.len()) {
            return Err(format!(
                "fft_length must name 1 to 3 lengths, got {lengths:?}"
            ));
        }
        Ok(Transform { kind, lengths })
    }

    /// `1 / prod(lengths)` for the inverse transforms, 1 for the forward ones.
    fn scale<T: Real>(&self) -> T {
        match self.kind {
            Kind::Fft | Kind::Rfft => T::one(),
            Kind::Ifft | Kind::Irfft => {
                T::one() / T::from_usize(self.lengths.iter().product()).unwrap_or_else(T::one)
            }
        }
    }
}

/// The kernel `jaxrs_fft` (see the module doc).
pub fn fft(attrs: &[(&str, &str)], args: &[HostArg<'_>], rets: &mut [HostRet<'_>]) -> KernelResult {
    let t = Transform::from_attrs(attrs)?;
    let ([x], [y]) = (args, rets) else {
        return Err("expected one operand and one result".into());
    };
    let (x_dims, y_dims) = (usizes(x.dims), usizes(y.dims));
    let k = t.lengths.len();
    if x_dims.len() < k || y_dims.len() != x_dims.len() {
        return Err(format!(
            "dims {x_dims:?} -> {y_dims:?} do not fit fft_length {:?}",
            t.lengths
        ));
    }
    if y_dims.contains(&0) {
        return Ok(());
    }
    let real = match y.dtype {
        DType::C64 | DType::F32 => DType::F32,
        DType::C128 | DType::F64 => DType::F64,
        d => return Err(format!("unsupported result dtype {}", d.name())),
    };
    if real == DType::F32 {
        run::<f32>(&t, x.bytes, &x_dims, y.bytes, &y_dims)
    } else {
        run::<f64>(&t, x.bytes, &x_dims, y.bytes, &y_dims)
    }
}

fn usizes(dims: &[i64]) -> Vec<usize> {
    dims.iter().map(|&d| d.max(0) as usize).collect()
}

fn run<T: Real>(
    t: &Transform,
    x: &[u8],
    x_dims: &[usize],
    y: &mut [u8],
    y_dims: &[usize],
) -> KernelResult {
    let k = t.lengths.len();
    let outer_axes = x_dims.len() - k;
    let (last_in, last_out) = (x_dims[x_dims.len() - 1], y_dims[y_dims.len() - 1]);
    let n = t.lengths[k - 1];
    match t.kind {
        Kind::Fft | Kind::Ifft => {
            let direction = if t.kind == Kind::Fft {
                FftDirection::Forward
            } else {
                FftDirection::Inverse
            };
            let out = elems_mut::<Complex<T>>(y)?;
            innermost_from(elems::<Complex<T>>(x)?, out, n, direction);
            for axis in outer_axes..y_dims.len() - 1 {
                along_axis(out, y_dims, axis, direction);
            }
            scale(out, t.scale::<T>());
        }
        Kind::Rfft => {
            if last_out != n / 2 + 1 || last_in != n {
                return Err(format!("RFFT of length {n}: dims {x_dims:?} -> {y_dims:?}"));
            }
            let out = elems_mut::<Complex<T>>(y)?;
            real_to_complex(elems::<T>(x)?, out, n)?;
            for axis in outer_axes..y_dims.len() - 1 {
                along_axis(out, y_dims, axis, FftDirection::Forward);
            }
        }
        Kind::Irfft => {
            if last_in != n / 2 + 1 || last_out != n {
                return Err(format!(
                    "IRFFT of length {n}: dims {x_dims:?} -> {y_dims:?}"
                ));
            }
            // The outer axes are inverted first, on a copy: the operand is read-only, and the
            // complex-to-real step uses its input as scratch.
            let x = elems::<Complex<T>>(x)?;
            let out = elems_mut::<T>(y)?;
            with_kept(T::arrays(), x.len(), |spectrum| {
                spectrum.copy_from_slice(x);
                for axis in outer_axes..x_dims.len() - 1 {
                    along_axis(spectrum, x_dims, axis, FftDirection::Inverse);
                }
                complex_to_real(spectrum, out, n)
            })?;
            scale(out, t.scale::<T>());
        }
    }
    Ok(())
}

fn scale<E: Copy + Send + std::ops::MulAssign<T>, T: Real>(data: &mut [E], factor: T) {
    if factor != T::one() {
        data.par_chunks_mut(MIN_ELEMS_PER_TASK)
            .for_each(|chunk| chunk.iter_mut().for_each(|v| *v *= factor));
    }
}

/// Transforms `data` (row-major, of `dims`) along `axis` in place, unnormalised.
fn along_axis<T: Real>(
    data: &mut [Complex<T>],
    dims: &[usize],
    axis: usize,
    direction: FftDirection,
) {
    let n = dims[axis];
    if n <= 1 {
        return;
    }
    let plan = complex_plan::<T>(n, direction);
    let stride: usize = dims[axis + 1..].iter().product();
    if stride == 1 {
        transform_rows(data, &*plan, true);
        return;
    }
    // Each block of `n * stride` elements holds `stride` columns of `n`. A large block is
    // shared out among the threads; small ones are, a few blocks per thread.
    let block = n * stride;
    if block >= MIN_ELEMS_PER_TASK {
        for b in data.chunks_mut(block) {
            transform_columns(b, n, stride, &*plan, true);
        }
    } else {
        let blocks_per_task = MIN_ELEMS_PER_TASK.div_ceil(block);
        data.par_chunks_mut(blocks_per_task * block)
            .for_each(|blocks| {
                for b in blocks.chunks_mut(block) {
                    transform_columns(b, n, stride, &*plan, false);
                }
            });
    }
}

/// Transforms the rows of `n` of `src` into `out`, copying each thread's share just before
/// transforming it (while it is in cache) rather than all of `src` first.
fn innermost_from<T: Real>(
    src: &[Complex<T>],
    out: &mut [Complex<T>],
    n: usize,
    direction: FftDirection,
) {
    if n <= 1 {
        out.copy_from_slice(src);
        return;
    }
    let plan = complex_plan::<T>(n, direction);
    let rows_per_task = MIN_ELEMS_PER_TASK.div_ceil(n).max(1);
    src.par_chunks(rows_per_task * n)
        .zip(out.par_chunks_mut(rows_per_task * n))
        .for_each(|(src, rows)| {
            rows.copy_from_slice(src);
            process(&*plan, rows);
        });
}

/// Transforms the contiguous rows of `data` (each `plan.len()` long) in place, sharing them
/// out among the threads when `parallel`.
fn transform_rows<T: Real>(data: &mut [Complex<T>], plan: &dyn Fft<T>, parallel: bool) {
    let n = plan.len();
    let rows_per_task = MIN_ELEMS_PER_TASK.div_ceil(n).max(1);
    data.par_chunks_mut(rows_per_task * n)
        .with_min_len(if parallel { 1 } else { usize::MAX })
        .for_each(|rows| process(plan, rows));
}

/// The start of a row-major block whose columns tasks transform in place, each task its own
/// columns: the block's elements are interleaved among the tasks, so no safe split of the
/// slice gives each its share.
#[derive(Clone, Copy)]
struct SharedColumns<T>(*mut Complex<T>);

// SAFETY: the tasks that share the pointer write disjoint columns of one block that
// outlives them (see `transform_columns`).
unsafe impl<T: Send> Send for SharedColumns<T> {}
unsafe impl<T: Send> Sync for SharedColumns<T> {}

impl<T> SharedColumns<T> {
    /// The element at `offset` from the block's start (dereferenced only inside it).
    fn at(self, offset: usize) -> *mut Complex<T> {
        self.0.wrapping_add(offset)
    }
}

/// Transforms the `stride` columns of `n` elements of the row-major `block` in place, a group
/// of columns at a time (one cache line of each row, [`COLUMN_GROUP_BYTES`]): each group is
/// gathered into rows, transformed while in cache, and written back to its columns. The
/// groups are shared out among the threads when `parallel`. Before, every column was copied
/// into a whole transposed array and back (twice the memory traffic, and the copy back a
/// separate pass): a 1024x1024 complex64 `fft2` took 4.8-5.0 ms, now about 2.
fn transform_columns<T: Real>(
    block: &mut [Complex<T>],
    n: usize,
    stride: usize,
    plan: &dyn Fft<T>,
    parallel: bool,
) {
    assert_eq!(block.len(), n * stride, "a block of {n} rows of {stride}");
    let shared = SharedColumns(block.as_mut_ptr());
    let group_width = (COLUMN_GROUP_BYTES / size_of::<Complex<T>>()).max(1);
    let group = move |g: usize| {
        let c0 = g * group_width;
        let width = group_width.min(stride - c0);
        with_kept(T::column_group(), width * n, |rows| {
            for r in 0..n {
                // SAFETY: row `r`'s columns `c0..c0 + width` lie inside the block and belong
                // to this group alone; `block`'s borrow outlives every group.
                let part = unsafe {
                    std::slice::from_raw_parts(shared.at(r * stride + c0).cast_const(), width)
                };
                for (c, v) in part.iter().enumerate() {
                    rows[c * n + r] = *v;
                }
            }
            process(plan, rows);
            for r in 0..n {
                // SAFETY: as above.
                let part =
                    unsafe { std::slice::from_raw_parts_mut(shared.at(r * stride + c0), width) };
                for (c, v) in part.iter_mut().enumerate() {
                    *v = rows[c * n + r];
                }
            }
        });
    };
    let groups = stride.div_ceil(group_width);
    if parallel {
        (0..groups).into_par_iter().for_each(group);
    } else {
        (0..groups).for_each(group);
    }
}

/// The RFFT of each row of `n` reals in `x` into the rows of `n / 2 + 1` frequencies of `y`.
fn real_to_complex<T: Real>(x: &[T], y: &mut [Complex<T>], n: usize) -> KernelResult {
    let plan: Arc<dyn RealToComplex<T>> = {
        let mut planner = T::real_planner().lock().unwrap_or_else(|e| e.into_inner());
        planner.plan_fft_forward(n)
    };
    let m = n / 2 + 1;
    let rows_per_task = MIN_ELEMS_PER_TASK.div_ceil(n).max(1);
    x.par_chunks(rows_per_task * n)
        .zip(y.par_chunks_mut(rows_per_task * m))
        .try_for_each(|(xs, ys)| {
            with_kept(T::real_rows(), n, |input| {
                with_kept(T::scratch(), plan.get_scratch_len(), |scratch| {
                    for (row, out) in xs.chunks(n).zip(ys.chunks_mut(m)) {
                        input.copy_from_slice(row);
                        plan.process_with_scratch(input, out, scratch)
                            .map_err(|e| format!("RFFT: {e}"))?;
                    }
                    Ok(())
                })
            })
        })
}

/// The unnormalised inverse RFFT of each row of `n / 2 + 1` frequencies of `x` (used as
/// scratch) into the rows of `n` reals of `y`.
fn complex_to_real<T: Real>(x: &mut [Complex<T>], y: &mut [T], n: usize) -> KernelResult {
    let plan = {
        let mut planner = T::real_planner().lock().unwrap_or_else(|e| e.into_inner());
        planner.plan_fft_inverse(n)
    };
    let m = n / 2 + 1;
    let rows_per_task = MIN_ELEMS_PER_TASK.div_ceil(n).max(1);
    x.par_chunks_mut(rows_per_task * m)
        .zip(y.par_chunks_mut(rows_per_task * n))
        .try_for_each(|(xs, ys)| {
            with_kept(T::scratch(), plan.get_scratch_len(), |scratch| {
                for (row, out) in xs.chunks_mut(m).zip(ys.chunks_mut(n)) {
                    // The imaginary parts of the real frequencies are ignored, as by XLA's IRFFT.
                    row[0].im = T::zero();
                    if n.is_multiple_of(2) {
                        row[m - 1].im = T::zero();
                    }
                    plan.process_with_scratch(row, out, scratch)
                        .map_err(|e| format!("IRFFT: {e}"))?;
                }
                Ok(())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DFT by its definition, in f64.
    fn naive(x: &[Complex<f64>], inverse: bool) -> Vec<Complex<f64>> {
        let n = x.len();
        let sign = if inverse { 1.0 } else { -1.0 };
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .map(|(j, &v)| {
                        let angle = sign * 2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64;
                        v * Complex::new(angle.cos(), angle.sin())
                    })
                    .sum()
            })
            .collect()
    }

    fn signal(n: usize) -> Vec<Complex<f64>> {
        (0..n)
            .map(|i| Complex::new((i as f64 * 0.7).sin(), (i as f64 * 0.3).cos() - 0.2))
            .collect()
    }

    fn close(a: &[Complex<f64>], b: &[Complex<f64>]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).norm() < 1e-9, "{x} vs {y}");
        }
    }

    #[test]
    fn columns_transform_as_the_definition() {
        // Within one group of columns, across several (the last one partial), a middle axis
        // of a batch, blocks small enough to be shared out several per thread, and one block
        // large enough that its groups are shared out among the threads.
        for (dims, axis) in [
            (vec![5, 3], 0),
            (vec![37, 20], 0),
            (vec![2, 33, 17], 1),
            (vec![3, 40, 150], 1),
            (vec![64, 301], 0),
        ] {
            let x = signal(dims.iter().product());
            let mut y = x.clone();
            along_axis(&mut y, &dims, axis, FftDirection::Forward);
            let n = dims[axis];
            let stride: usize = dims[axis + 1..].iter().product();
            for (xs, ys) in x.chunks(n * stride).zip(y.chunks(n * stride)) {
                for c in 0..stride {
                    let column: Vec<_> = (0..n).map(|i| xs[i * stride + c]).collect();
                    let got: Vec<_> = (0..n).map(|i| ys[i * stride + c]).collect();
                    close(&got, &naive(&column, false));
                }
            }
        }
    }

    #[test]
    fn real_round_trip_ignores_the_real_frequencies_imaginary_parts() {
        for n in [6usize, 7] {
            let x: Vec<f64> = (0..2 * n).map(|i| (i as f64 * 1.3).sin()).collect();
            let m = n / 2 + 1;
            let mut spectrum = vec![Complex::default(); 2 * m];
            real_to_complex(&x, &mut spectrum, n).unwrap();
            close(&spectrum[..m], &naive(&signal_of(&x[..n]), false)[..m]);
            spectrum[0].im = 5.0;
            if n.is_multiple_of(2) {
                spectrum[m - 1].im = -3.0;
            }
            let mut back = vec![0.0; 2 * n];
            complex_to_real(&mut spectrum, &mut back, n).unwrap();
            for (a, b) in back.iter().zip(&x) {
                assert!((a / n as f64 - b).abs() < 1e-12, "{a} vs {b}");
            }
        }
    }

    fn signal_of(x: &[f64]) -> Vec<Complex<f64>> {
        x.iter().map(|&v| Complex::new(v, 0.0)).collect()
    }
}
