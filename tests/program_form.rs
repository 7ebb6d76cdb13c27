//! The programs jaxrs hands XLA have the forms XLA optimises as well as JAX's: literals from
//! AD rules stay constants of the program (not extra inputs XLA cannot fold), and a binary
//! op's VJP computes only the partials of the inputs that need a cotangent.

use jaxrs::prelude::*;

fn main_signature(text: &str) -> &str {
    text.lines()
        .find(|l| l.contains("func.func public @main"))
        .expect("a main function")
}

#[test]
fn the_count_of_a_mean_stays_a_constant_through_ad() {
    let x = Array::from_vec(vec![1.0f32; 12], &[3, 4]);
    let text = stablehlo(
        |x: Array| value_and_grad(|x: Array| x.relu().mean(None, false))(x),
        &x,
    );
    // One input: x. The 12 of the mean is a constant, not a second argument.
    assert_eq!(main_signature(&text).matches("%arg").count(), 1, "{text}");
    assert!(text.contains("dense<1.2e1>"), "{text}");
}

#[test]
fn a_division_by_a_constant_computes_only_the_numerator_partial() {
    let x = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
    let y = Array::from_vec(vec![4.0f32, 5.0, 6.0], &[3]);
    let text = stablehlo(
        |x: Array| grad(|x: Array| (&x / &y).sum(None, false))(x),
        &x,
    );
    // The forward x / y and the partial for x (1 / y); the partial for y, -(x / y) / y, is
    // not wanted, so neither its divide nor its negation is there.
    assert_eq!(text.matches("stablehlo.divide").count(), 2, "{text}");
    assert!(!text.contains("stablehlo.negate"), "{text}");
}

#[test]
fn a_bf16_product_runs_as_an_f32_dot_rounded_once_on_cpu() {
    // XLA's CPU backend runs bf16 x bf16 -> f32 dots on YNNPACK's bf16 kernels, and upcasts
    // every other bf16 dot's operands on each call; jaxrs lowers a bf16 product to that form,
    // accumulating in f32 as jaxlib's XLA does, and rounds once.
    let to_bf16 = |v: Vec<f32>, shape: &[usize]| Array::from_vec(v, shape).astype(DType::BF16);
    let a = to_bf16((0..6).map(|i| 1.0 + i as f32 / 128.0).collect(), &[2, 3]);
    let b = to_bf16((0..6).map(|i| 1.0 - i as f32 / 256.0).collect(), &[3, 2]);
    let text = stablehlo(
        |(a, b): (Array, Array)| a.matmul(&b),
        &(a.clone(), b.clone()),
    );
    let dot = text
        .lines()
        .find(|l| l.contains("stablehlo.dot_general"))
        .expect("a dot");
    assert!(
        dot.contains("(tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xf32>"),
        "{text}"
    );
    let product = jit(|(a, b): (Array, Array)| a.matmul(&b)).call((a.clone(), b.clone()));
    assert_eq!(product.dtype(), DType::BF16);
    let want = a
        .astype(DType::F32)
        .matmul(&b.astype(DType::F32))
        .astype(DType::BF16);
    assert_eq!(
        product.astype(DType::F32).to_vec::<f32>(),
        want.astype(DType::F32).to_vec::<f32>()
    );
}

#[test]
fn a_one_row_bf16_product_runs_as_a_two_row_one_on_cpu() {
    // YNNPACK takes no dot with one row, and XLA's own code upcasts a bf16 kernel to f32 on each
    // call: a decode step's [1, k] x [k, n] is lowered as two copies of the row, then sliced.
    let x = Array::from_vec((0..64).map(|i| (i as f32 / 32.0) - 1.0).collect(), &[1, 64])
        .astype(DType::BF16);
    let w = bf16_weight([64, 16]);
    let text = stablehlo(
        |(x, w): (Array, Array)| x.matmul(&w),
        &(x.clone(), w.clone()),
    );
    let dot = text
        .lines()
        .find(|l| l.contains("stablehlo.dot_general"))
        .expect("a dot");
    assert!(
        dot.contains("(tensor<2x64xbf16>, tensor<64x16xbf16>) -> tensor<2x16xf32>"),
        "{text}"
    );
    assert!(text.contains("stablehlo.slice"), "{text}");
    let got = jit(|(x, w): (Array, Array)| x.matmul(&w)).call((x.clone(), w.clone()));
    assert_eq!((got.shape(), got.dtype()), (&[1usize, 16][..], DType::BF16));
    let want = x
        .astype(DType::F32)
        .matmul(&w.astype(DType::F32))
        .to_vec::<f32>();
    let got = got.astype(DType::F32).to_vec::<f32>();
    assert_within_bf16_rounding(&got, &want);
}

#[test]
fn a_few_bf16_rows_times_an_out_in_weight_put_the_weight_on_the_left_on_cpu() {
    // YNNPACK packs a dot's right operand on every call; `x @ w^T` with w `[n, k]` is lowered
    // as `(w @ x^T)^T` so that only the rows are packed (one row doubled: no one-column dots),
    // rounded to bf16 before the transpose so that XLA does not fold it back. Where the CPU
    // has AVX512-BF16 and no AMX, up to 8 rows go to the host kernel `jaxrs_bf16_rows`
    // instead, which reads the weight as it lies.
    let w = bf16_weight([96, 64]);
    let dims = jaxrs::DotDims {
        lhs_contract: vec![2],
        rhs_contract: vec![1],
        ..jaxrs::DotDims::default()
    };
    for rows in [1usize, 3, 8, 9] {
        let x = Array::from_vec(
            (0..rows * 64).map(|i| (i as f32 / 50.0) - 1.0).collect(),
            &[rows, 1, 64],
        )
        .astype(DType::BF16);
        let f = |(x, w): (Array, Array)| x.dot_general(&w, &dims);
        let text = stablehlo(f, &(x.clone(), w.clone()));
        let call = text.lines().find(|l| l.contains("\"jaxrs_bf16_rows\""));
        assert_eq!(
            call.is_some(),
            rows <= 8 && bf16_without_amx(),
            "{rows} rows:\n{text}"
        );
        if let Some(call) = call {
            assert!(
                call.contains(&format!(
                    "(tensor<{rows}x1x64xbf16>, tensor<96x64xbf16>) -> tensor<{rows}x1x96xf32>"
                )),
                "{text}"
            );
        } else {
            let dot = text
                .lines()
                .find(|l| l.contains("stablehlo.dot_general"))
                .unwrap_or_else(|| panic!("a dot:\n{text}"));
            let cols = rows.max(2);
            assert!(
                dot.contains(&format!(
                    "(tensor<96x64xbf16>, tensor<{cols}x64xbf16>) -> tensor<96x{cols}xf32>"
                )),
                "{text}"
            );
            assert!(text.contains("stablehlo.transpose"), "{text}");
        }
        let got = jit(f).call((x.clone(), w.clone()));
        assert_eq!(
            (got.shape(), got.dtype()),
            (&[rows, 1, 96][..], DType::BF16)
        );
        let want = x
            .astype(DType::F32)
            .dot_general(&w.astype(DType::F32), &dims)
            .to_vec::<f32>();
        let got = got.astype(DType::F32).to_vec::<f32>();
        assert_within_bf16_rounding(&got, &want);
    }
}

#[test]
fn a_batched_bf16_product_stays_bf16_from_16_rows_on_cpu() {
    // Attention's batched products at a prefill (16 rows and more per batch) run on YNNPACK's
    // bf16 kernels as bf16 x bf16 -> f32; with fewer rows (a decode step) the operands are
    // widened to f32 first.
    let dims = jaxrs::DotDims {
        lhs_contract: vec![2],
        rhs_contract: vec![1],
        lhs_batch: vec![0],
        rhs_batch: vec![0],
    };
    for (rows, operands) in [(16usize, "bf16"), (8, "f32")] {
        let q = Array::from_vec(
            (0..3 * rows * 32)
                .map(|i| ((i * 5 % 29) as f32 / 29.0) - 0.5)
                .collect(),
            &[3, rows, 32],
        )
        .astype(DType::BF16);
        let k = Array::from_vec(
            (0..3 * 32 * 24)
                .map(|i| ((i * 11 % 37) as f32 / 37.0) - 0.5)
                .collect(),
            &[3, 32, 24],
        )
        .astype(DType::BF16);
        let f = |(q, k): (Array, Array)| q.dot_general(&k, &dims);
        let text = stablehlo(f, &(q.clone(), k.clone()));
        let dot = text
            .lines()
            .find(|l| l.contains("stablehlo.dot_general"))
            .expect("a dot");
        assert!(
            dot.contains(&format!(
                "(tensor<3x{rows}x32x{operands}>, tensor<3x32x24x{operands}>) -> \
                 tensor<3x{rows}x24xf32>"
            )),
            "{text}"
        );
        let got = jit(f).call((q.clone(), k.clone()));
        assert_eq!(
            (got.shape(), got.dtype()),
            (&[3, rows, 24][..], DType::BF16)
        );
        let want = q
            .astype(DType::F32)
            .dot_general(&k.astype(DType::F32), &dims)
            .to_vec::<f32>();
        assert_within_bf16_rounding(&got.astype(DType::F32).to_vec::<f32>(), &want);
    }
}

#[test]
fn batched_bf16_products_of_every_form_run_on_cpu() {
    // Attention's forms (the lhs contracted on its last dim, the rhs `[.., k, n]` or `[.., n,
    // k]` after its batch dims) of 16 rows or more stay bf16 for YNNPACK; every other form is
    // widened to f32 (XLA's own dot code, which some layouts of them reach, has no bf16
    // kernel). Each runs with the widened product's values.
    let dims = |lc: &[usize], rc: &[usize], lb: &[usize], rb: &[usize]| jaxrs::DotDims {
        lhs_contract: lc.to_vec(),
        rhs_contract: rc.to_vec(),
        lhs_batch: lb.to_vec(),
        rhs_batch: rb.to_vec(),
    };
    let operand = |shape: &[usize], seed: usize| {
        let n: usize = shape.iter().product();
        Array::from_vec(
            (0..n)
                .map(|i| ((i * 7 + seed) % 23) as f32 / 23.0 - 0.5)
                .collect(),
            shape,
        )
        .astype(DType::BF16)
    };
    type Form<'a> = (&'a str, &'a [usize], &'a [usize], jaxrs::DotDims, bool);
    let forms: [Form; 9] = [
        (
            "[k, n] rhs",
            &[3, 16, 4],
            &[3, 4, 8],
            dims(&[2], &[1], &[0], &[0]),
            true,
        ),
        (
            "[n, k] rhs",
            &[3, 16, 4],
            &[3, 8, 4],
            dims(&[2], &[2], &[0], &[0]),
            true,
        ),
        (
            "contraction of 1",
            &[3, 16, 1],
            &[3, 1, 8],
            dims(&[2], &[1], &[0], &[0]),
            true,
        ),
        (
            "two batch dims",
            &[2, 3, 16, 4],
            &[2, 3, 4, 8],
            dims(&[3], &[2], &[0, 1], &[0, 1]),
            true,
        ),
        (
            "two columns",
            &[2, 100, 7],
            &[2, 7, 2],
            dims(&[2], &[1], &[0], &[0]),
            true,
        ),
        (
            "no contraction",
            &[3, 16],
            &[3, 8],
            dims(&[], &[], &[0], &[0]),
            false,
        ),
        (
            "two contractions",
            &[3, 16, 4, 5],
            &[3, 4, 5, 8],
            dims(&[2, 3], &[1, 2], &[0], &[0]),
            false,
        ),
        (
            "batch dims last",
            &[16, 4, 3],
            &[4, 8, 3],
            dims(&[1], &[0], &[2], &[2]),
            false,
        ),
        // A VJP's product, as the bf16 transformer trainer's step has it.
        (
            "lhs [k, m]",
            &[16, 2, 32, 32],
            &[16, 2, 32, 16],
            dims(&[2], &[2], &[0, 1], &[0, 1]),
            false,
        ),
    ];
    for (form, l, r, dims, stays_bf16) in forms {
        let (a, b) = (operand(l, 1), operand(r, 2));
        let text = stablehlo(
            |(a, b): (Array, Array)| a.dot_general(&b, &dims),
            &(a.clone(), b.clone()),
        );
        assert_eq!(
            !text.contains("\"stablehlo.convert\"(%arg"),
            stays_bf16,
            "{form}\n{text}"
        );
        let got =
            jit(|(a, b): (Array, Array)| a.dot_general(&b, &dims)).call((a.clone(), b.clone()));
        let want = a
            .astype(DType::F32)
            .dot_general(&b.astype(DType::F32), &dims)
            .to_vec::<f32>();
        assert_within_bf16_rounding(&got.astype(DType::F32).to_vec::<f32>(), &want);
    }
}

/// A deterministic bf16 weight with values in [-0.5, 0.5).
/// Whether this CPU has AVX512-BF16 and no AMX-BF16 (CPUID leaf 7, EDX bit 22): where the
/// runtime sends a few bf16 rows to its own kernel.
fn bf16_without_amx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let amx_bf16 = std::arch::x86_64::__cpuid_count(7, 0).edx & (1 << 22) != 0;
        std::arch::is_x86_feature_detected!("avx512bf16") && !amx_bf16
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

fn bf16_weight(shape: [usize; 2]) -> Array {
    Array::from_vec(
        (0..shape[0] * shape[1])
            .map(|i| ((i * 7 % 31) as f32 / 31.0) - 0.5)
            .collect(),
        &shape,
    )
    .astype(DType::BF16)
}

/// f32 sums in another order, rounded once to bf16 (8 bits of mantissa).
fn assert_within_bf16_rounding(got: &[f32], want: &[f32]) {
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= w.abs() / 128.0 + 1e-3,
            "{got:?} vs {want:?}"
        );
    }
}
