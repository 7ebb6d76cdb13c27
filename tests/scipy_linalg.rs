//! `jax.scipy.linalg`'s special matrices, `expm` and `polar`, and `jnp.linalg`'s `tensorinv` and
//! `tensorsolve`, against JAX 0.10.2 (`tests/golden/scipy_linalg.json`, written by
//! `tests/golden/gen_scipy_linalg.py`): values eagerly and under `jit`, JVP and VJP,
//! `check_grads`, and `vmap` (`tests/common/cases.rs`); and the refusals where JAX raises.

mod common;

use common::cases::{a, check_file};
use common::golden::In;
use jaxrs::numpy as jnp;
use jaxrs::prelude::*;
use jaxrs::scipy::linalg as sl;
use serde_json::Value;

fn apply(op: &str, params: &Value, x: &[In]) -> Vec<Array> {
    let x0 = || a(x, 0);
    let n = || params["n"].as_u64().unwrap() as usize;
    let n_of = |key: &str| params[key].as_u64().unwrap() as usize;
    let kind = || params["kind"].as_str();
    let scale = || params["scale"].as_str();
    let side = || params["side"].as_str().unwrap();
    match op {
        "circulant" => vec![sl::circulant(x0())],
        "hankel" => vec![sl::hankel(x0(), Some(a(x, 1)))],
        "hankel/no_r" => vec![sl::hankel(x0(), None)],
        "toeplitz" => vec![sl::toeplitz(x0(), Some(a(x, 1)))],
        "eigh_tridiagonal" => vec![sl::eigh_tridiagonal(x0(), a(x, 1), true, Default::default()).0],
        "eigh_tridiagonal/select" => {
            let range = sl::EigSelect::Indices(n_of("lo"), n_of("hi"));
            vec![sl::eigh_tridiagonal(x0(), a(x, 1), true, range).0]
        }
        "eigh_tridiagonal/vectors_abs" => {
            let (_, v) = sl::eigh_tridiagonal(x0(), a(x, 1), false, Default::default());
            vec![jnp::abs(&v.expect("eigenvectors"))]
        }
        "qr_multiply" => {
            let conj = params["conjugate"].as_bool().unwrap();
            let (product, r) =
                sl::qr_multiply(x0(), a(x, 1), params["mode"].as_str().unwrap(), conj);
            vec![product, r]
        }
        "expm_frechet" => {
            let (e, l) = sl::expm_frechet(x0(), a(x, 1));
            vec![e, l]
        }
        "toeplitz/no_r" => vec![sl::toeplitz(x0(), None)],
        "fiedler" => vec![sl::fiedler(x0())],
        "companion" => vec![sl::companion(x0())],
        "leslie" => vec![sl::leslie(x0(), a(x, 1))],
        "fiedler_companion" => vec![sl::fiedler_companion(x0())],
        "convolution_matrix" => vec![sl::convolution_matrix(
            x0(),
            n(),
            params["mode"].as_str().unwrap(),
        )],
        "polar" | "polar/qdwh" => {
            let (u, p) = sl::polar(x0(), side());
            vec![u, p]
        }
        "tensorinv" => vec![jnp::linalg::tensorinv(
            x0(),
            params["ind"].as_u64().unwrap() as usize,
        )],
        "tensorsolve" => vec![jnp::linalg::tensorsolve(x0(), a(x, 1), None)],
        "tensorsolve/axes" => vec![jnp::linalg::tensorsolve(x0(), a(x, 1), Some(&[0]))],
        "expm" => vec![sl::expm(x0(), false, 16)],
        "expm/upper" => vec![sl::expm(x0(), true, 16)],
        "expm/max_squarings" => vec![sl::expm(x0(), false, 2)],
        "hilbert" => vec![sl::hilbert(n())],
        "invhilbert" => vec![sl::invhilbert(n())],
        "helmert" => vec![sl::helmert(n(), false)],
        "helmert/full" => vec![sl::helmert(n(), true)],
        "pascal" => vec![sl::pascal(n(), kind())],
        "invpascal" => vec![sl::invpascal(n(), kind())],
        "dft" => vec![sl::dft(n(), scale(), None)],
        "dft/c64" => vec![sl::dft(n(), None, Some(DType::C64))],
        "hadamard" => vec![sl::hadamard(n(), None)],
        "hadamard/f32" => vec![sl::hadamard(n(), Some(DType::F32))],
        other => panic!("no jaxrs function for {other}"),
    }
}

#[test]
fn special_matrices_polar_and_tensor_solves_match_jax() {
    let n = check_file("scipy_linalg", apply);
    assert_eq!(n, 145);
}

fn panic_message(f: impl FnOnce() -> Array) -> String {
    common::panic_message(std::panic::AssertUnwindSafe(|| {
        f();
    }))
}

/// Where JAX raises a ValueError, jaxrs stops with a message naming the function and the
/// shapes or values.
#[test]
fn bad_arguments_are_refused_as_jax_refuses_them() {
    let v = |n: usize| Array::ones(&[n], DType::F64);
    assert!(panic_message(|| sl::companion(&v(1)))
        .contains("companion: the length of the last axis must be at least 2"));
    assert!(panic_message(|| sl::leslie(&v(3), &v(3))).contains("s must be one shorter than f"));
    assert!(panic_message(|| sl::hadamard(6, None)).contains("positive power of 2; got 6"));
    assert!(panic_message(|| sl::pascal(3, Some("diagonal"))).contains("kind must be one of"));
    assert!(panic_message(|| sl::dft(3, None, Some(DType::F64))).contains("complex floating-point"));
    assert!(
        panic_message(|| sl::convolution_matrix(&v(3), 2, "circular"))
            .contains("mode must be one of")
    );
    assert!(
        panic_message(|| jnp::linalg::tensorinv(&Array::ones(&[2, 3], DType::F64), 1))
            .contains("equal products")
    );
    let a = Array::ones(&[2, 3, 4], DType::F64);
    assert!(panic_message(|| jnp::linalg::tensorsolve(&a, &v(2), None)).contains("tensorsolve"));
    assert!(
        panic_message(|| sl::polar(&Array::eye(2, DType::F64), "up").0).contains("side must be")
    );
}
