//! A dense layer's matmul at LLM shapes in f32, bf16 and int8, beside JAX's, in the same run:
//! activations `[m, 768]` times a kernel `[768, 3072]` (GPT-2 small's MLP), m = 1, 8, 32
//! (decode steps) and 512 (a prefill), each a jitted call awaited, the operands already on
//! the device in the row's dtype.
//!
//! - `f32`: `x.matmul(w)`.
//! - `bf16`: the same in bf16: lowered as XLA's bf16 x bf16 -> f32 dot (YNNPACK's bf16
//!   kernels), rounded once; a one-row product as a two-row one (YNNPACK takes no one-row dot).
//! - `bf16_viaf32`: the form jaxrs lowered bf16 dots to before (the operands upcast to f32 in
//!   the program), for the record.
//! - `int8`: `Dense::apply` of a `quantize_int8` layer: rows quantized on the fly, an
//!   int8 x int8 -> int32 product (YNNPACK's int8 kernels), both scales applied.
//! - `int8_wo`: weight-only int8 as JAX users write it, `x @ w_q.astype(f32) * scale`.
//!
//! JAX's rows (benches/peer/matmul_dtypes_jax.py) are its programs for the same math: `bf16` is
//! `x @ w` in bf16 (jaxlib's XLA upcasts it), `int8` the weight-only form, and `bf16_pf32` /
//! `int8_dyn` the forms jaxrs lowers to, written in JAX.
//!
//! Run: `cargo bench --bench matmul_dtypes` (`JAXRS_BENCH_PYTHON` names a Python with
//! jax==0.10.2, default `python3`; without it the JAX column is empty). A filter argument picks
//! rows by name. Prints µs per call (best of rounds) and each row's ratio to f32 at the same m.
//!
//! Measured (2-core VM with AMX-BF16, AMX-INT8 and AVX512-BF16, shared with other builds, so
//! best-of figures that move by up to 2x between runs; the CPU plugin of jaxlib 0.11.2 beside
//! jaxlib 0.10.2), time as a fraction of f32's at the same m, jaxrs | JAX:
//!
//! ```text
//! m      bf16          int8 (jaxrs: dynamic rows; JAX: weight-only)   bf16_viaf32   int8_wo
//! 1      0.51 | 3.48   0.33 | 1.33                                    1.70          2.42
//! 8      0.43 | 2.22   0.22 | 2.74                                    2.03          2.20
//! 32     0.15 | 2.29   0.08 | 1.95                                    0.75          1.45
//! 512    0.46 | 1.19   0.14 | 1.64                                    1.24          1.18
//! ```
//!
//! jaxrs's f32 rows are 0.6-1.1x JAX's; its bf16 rows 0.08-0.36x and int8 rows 0.04-0.15x
//! JAX's same-named rows (JAX's bf16 and weight-only int8 programs upcast the kernel each
//! call).

//! The streamed table (no JAX column) reads its weights from memory, as a decode step does:
//! `[m, 768]` (m = 1, 8, 128) times 24 different weights of `[768, 3072]` per call, stored
//! `[in, out]` (`kn`) or `[out, in]` (`nk`, `Dense`'s layout; in bf16 with up to 32 rows
//! lowered with the weight on the left, so that YNNPACK packs the rows instead of the
//! weight). One run, ms per call
//! (the machine was busy: absolute figures are about 2x a quiet run's, the ratios hold):
//!
//! ```text
//!                       kn       nk   nk/kn
//! float32  m=1       14.37    13.41   0.93
//! float32  m=8       28.97    24.81   0.86
//! bfloat16 m=1       16.98    10.02   0.59
//! bfloat16 m=8       19.99    10.71   0.54
//! int8     m=1       12.39     8.08   0.65
//! int8     m=8       12.82     6.45   0.50
//! ```
//!
//! At 128 rows (a prefill's) the two layouts are level in f32 and bf16 (nk/kn 0.96-1.10 and
//! 0.85-1.06 over two runs, the machine busy) and `[out, in]` stays ahead in int8 (0.77-0.88);
//! f32 then runs at about 120 GFLOP/s on the 2 cores, as torch's `x @ w.T` does (118 ms for
//! the 24 products in the same session).
//!
//! On an AMD EPYC with AVX512-BF16 and no AMX (2 cores, idle), YNNPACK's bf16 products of 1
//! and 8 rows took longer than f32's (ms, `nk` column): bf16 9.45 and 10.36 against f32 6.85
//! and 17.06 at m = 1 and 8, the weight-on-the-left form included. There the runtime sends up
//! to 8 rows to its own kernel (`jaxrs_bf16_rows`, `jaxrs-runtime/src/kernels/bf16_rows.rs`),
//! which reads the weight once as it lies; the same command then gave:
//!
//! ```text
//!                       kn       nk   nk/kn
//! float32  m=1        7.69     7.65   1.00
//! float32  m=8       13.39    17.19   1.28
//! bfloat16 m=1        7.60     4.53   0.60    (nk: the kernel; 1.7x f32)
//! bfloat16 m=8        9.62     7.70   0.80    (nk: the kernel; 2.2x f32)
//! bfloat16 m=128     54.60    53.98   0.99
//! ```

#[path = "common/peer.rs"]
mod peer;

use jaxrs::prelude::*;
use jaxrs_models::dense::Dense;

/// One timed call of a row.
type Call<'a> = Box<dyn Fn() -> Array + 'a>;

const K: usize = 768;
const N: usize = 3072;
const MS: [usize; 4] = [1, 8, 32, 512];

/// A deterministic uniform [-1, 1) vector.
fn uniform(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn time_us(f: &dyn Fn() -> Array, m: usize) -> f64 {
    f().block_until_ready();
    let calls = if m >= 512 { 3 } else { 10 };
    peer::best_us(20, calls, || {
        f().block_until_ready();
    })
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let w = Array::from_vec(
        uniform(K * N, 1)
            .iter()
            .map(|v| v * 0.05)
            .collect::<Vec<_>>(),
        &[K, N],
    );
    // Dense keeps its weight as [out, in].
    let dense = Dense::new(w.transpose([1, 0]), None);
    let q = dense.quantize_int8();
    let (wq, scale) = (q.weight.transpose([1, 0]), q.scale.clone().expect("int8"));
    let w16 = w.astype(DType::BF16);
    let mut rows: Vec<(String, f64)> = Vec::new();
    for m in MS {
        let x = Array::from_vec(uniform(m * K, 2 + m as u64), &[m, K]);
        let x16 = x.astype(DType::BF16);
        let f32_ = jit(|(x, w): (Array, Array)| x.matmul(&w));
        let via = jit(|(x, w): (Array, Array)| {
            x.astype(DType::F32)
                .matmul(&w.astype(DType::F32))
                .astype(DType::BF16)
        });
        let int8 = jit(|(d, x): (Dense, Array)| d.apply(&x));
        let wo = jit(|(x, w, s): (Array, Array, Array)| x.matmul(&w.astype(DType::F32)) * s);
        let cases: Vec<(&str, Call)> = vec![
            ("f32", Box::new(|| f32_.call((x.clone(), w.clone())))),
            ("bf16", Box::new(|| f32_.call((x16.clone(), w16.clone())))),
            (
                "bf16_viaf32",
                Box::new(|| via.call((x16.clone(), w16.clone()))),
            ),
            ("int8", Box::new(|| int8.call((q.clone(), x.clone())))),
            (
                "int8_wo",
                Box::new(|| wo.call((x.clone(), wq.clone(), scale.clone()))),
            ),
        ];
        for (kind, f) in &cases {
            let row = format!("{kind}_{m}");
            if filter.as_ref().is_some_and(|f| !row.contains(f.as_str())) {
                continue;
            }
            rows.push((row, time_us(f.as_ref(), m)));
        }
    }
    streamed(filter.as_deref());
    let jax = peer::jax_figures("matmul_dtypes_jax.py", &[]);
    println!(
        "\n{:<16} {:>10} {:>10} {:>9} {:>12} {:>14}",
        "row", "jaxrs us", "JAX us", "jaxrs/JAX", "jaxrs/f32", "JAX row/f32"
    );
    for (row, us) in &rows {
        let m = row.rsplit('_').next().unwrap_or("");
        let base = peer::figure(&rows, &format!("f32_{m}"));
        let jbase = peer::figure(&jax, &format!("f32_{m}"));
        let j = peer::figure(&jax, row);
        let cell = |v: Option<f64>, w: &str| {
            v.map_or(format!("{:>w$}", "-", w = w.len()), |v| {
                format!("{v:>w$.2}", w = w.len())
            })
        };
        println!(
            "{row:<16} {us:>10.1} {} {} {} {}",
            cell(j, "      JAX us"),
            cell(j.map(|j| us / j), "jaxrs/JAX"),
            cell(base.map(|b| us / b), "   jaxrs/f32"),
            cell(j.zip(jbase).map(|(j, b)| j / b), "  JAX row/f32"),
        );
    }
    // JAX's rows in forms jaxrs has no row of its own for.
    for name in MS
        .iter()
        .flat_map(|m| [format!("bf16_pf32_{m}"), format!("int8_dyn_{m}")])
    {
        if let Some(j) = peer::figure(&jax, &name) {
            println!("JAX {name:<12} {j:>10.1} us");
        }
    }
}

/// Weights per streamed call: a GPT-2-small decode step's MLP products, 96 MiB in bf16, more
/// than this machine's caches, so every call reads its weights from memory (and YNNPACK packs
/// each one again).
const STREAMED: usize = 24;

/// `[m, 768]` times each of 24 different `[768, 3072]` weights, summed, in one jitted call,
/// with the weight stored `[in, out]` (`kn`, Flax's kernel) or `[out, in]` (`nk`, PyTorch's
/// and [`Dense`]'s); ms per call. int8 rows are the int8 x int8 -> int32 product alone.
fn streamed(filter: Option<&str>) {
    let mut lines = Vec::new();
    for dtype in [DType::F32, DType::BF16, DType::I8] {
        // int8 values span the type's range; float values are small, as trained weights are.
        let amplitude = if dtype == DType::I8 { 127.0f32 } else { 0.05 };
        let kn: Vec<Array> = (0..STREAMED)
            .map(|l| {
                let v: Vec<f32> = uniform(K * N, 100 + l as u64)
                    .iter()
                    .map(|v| v * amplitude)
                    .collect();
                Array::from_vec(v, &[K, N]).astype(dtype)
            })
            .collect();
        let nk: Vec<Array> = kn.iter().map(|w| w.transpose([1, 0])).collect();
        let acc_dtype = if dtype == DType::I8 {
            DType::I32
        } else {
            dtype
        };
        let preferred = (dtype == DType::I8).then_some(DType::I32);
        for m in [1usize, 8, 128] {
            let x = Array::from_vec(
                uniform(m * K, 7).iter().map(|v| v * amplitude).collect(),
                &[m, K],
            )
            .astype(dtype);
            let mut us = [0f64; 2];
            for (contract, weights) in [&kn, &nk].into_iter().enumerate() {
                let row = format!("{}_{}_{m}", dtype.name(), ["kn", "nk"][contract]);
                if filter.is_some_and(|f| !format!("streamed_{row}").contains(f)) {
                    continue;
                }
                let f = jit(move |(x, ws): (Array, Vec<Array>)| {
                    let dims = jaxrs::DotDims {
                        lhs_contract: vec![1],
                        rhs_contract: vec![contract],
                        ..jaxrs::DotDims::default()
                    };
                    ws.iter().fold(Array::zeros(&[m, N], acc_dtype), |acc, w| {
                        acc + x.dot_general_preferred(w, &dims, preferred)
                    })
                });
                let call = || {
                    f.call((x.clone(), weights.clone())).block_until_ready();
                };
                call();
                us[contract] = peer::best_us(5, 3, call);
            }
            if us.iter().all(|&u| u > 0.0) {
                lines.push(format!(
                    "streamed {:<8} m={m:<2} {:>9.2} {:>9.2} {:>9.2}",
                    dtype.name(),
                    us[0] / 1e3,
                    us[1] / 1e3,
                    us[1] / us[0]
                ));
            }
        }
    }
    if !lines.is_empty() {
        println!(
            "\n{STREAMED} weights [768, 3072] per call, ms:\n{:<23} {:>9} {:>9} {:>9}",
            "", "kn", "nk", "nk/kn"
        );
        lines.iter().for_each(|l| println!("{l}"));
    }
}
