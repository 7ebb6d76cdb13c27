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
    // XLA's CPU plugin runs bf16 dots through slow YNNPACK kernels (6x a jaxlib transformer
    // step); jaxlib's XLA computes them in f32, and so does jaxrs's lowering on CPU.
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
        dot.contains("(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>"),
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
