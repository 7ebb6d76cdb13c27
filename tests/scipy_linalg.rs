//! `jax.scipy.linalg`'s special matrices, `expm`, `polar` and the Schur-based functions
//! (`hessenberg`, `schur`, `rsf2csf`, `sqrtm`, `solve_sylvester`, `funm`), and `jnp.linalg`'s
//! `tensorinv` and `tensorsolve`, against JAX 0.10.2 (`tests/golden/scipy_linalg.json`, written by
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
        "hessenberg" => {
            let (h, q) = sl::hessenberg(x0(), true);
            vec![h, q.expect("calc_q")]
        }
        "hessenberg/h_only" => vec![sl::hessenberg(x0(), false).0],
        "schur/invariants" => schur_invariants(x0(), params["output"].as_str().unwrap()),
        "rsf2csf" => {
            let (t, z) = sl::rsf2csf(x0(), a(x, 1));
            vec![t, z]
        }
        "sqrtm" => vec![sl::sqrtm(x0(), 1)],
        "funm" | "funm/err" => {
            let func = match params["func"].as_str().unwrap() {
                "exp" => |v: &Array| v.exp(),
                "sin" => |v: &Array| v.sin(),
                _ => |v: &Array| v * v,
            };
            let (f, err) = sl::funm(x0(), func, op == "funm");
            std::iter::once(f).chain(err).collect()
        }
        "solve_sylvester" => {
            let method = match params["method"].as_str().unwrap() {
                "schur" => sl::SylvesterMethod::Schur,
                _ => sl::SylvesterMethod::Eigen,
            };
            let tol = params["tol"].as_f64().unwrap();
            vec![sl::solve_sylvester(x0(), a(x, 1), a(x, 2), method, tol)]
        }
        other => panic!("no jaxrs function for {other}"),
    }
}

/// Invariants of a Schur decomposition, which is not unique (see gen_scipy_linalg.py): `Z T Zᴴ`,
/// `Zᴴ Z`, `T` below its (block) diagonal, and the power sums `tr(Tᵏ)`, `k = 1..n`.
fn schur_invariants(a: &Array, output: &str) -> Vec<Array> {
    let (t, z) = sl::schur(a, output);
    let zh = z.swap_axes(-1, -2).conj();
    let n = a.shape()[a.rank() - 1];
    let block = output == "real" && !a.dtype().is_complex();
    let below = jnp::tril(&t, if block { -2 } else { -1 });
    let mut power = jnp::eye(n, None, 0, Some(t.dtype())).broadcast_to(t.shape());
    let sums: Vec<Array> = (0..n)
        .map(|_| {
            power = power.matmul(&t);
            jnp::linalg::diagonal(&power, 0).sum(-1i64, false)
        })
        .collect();
    vec![
        z.matmul(&t).matmul(&zh),
        zh.matmul(&z),
        below,
        Array::stack(&sums, -1),
    ]
}

#[test]
fn special_matrices_polar_and_tensor_solves_match_jax() {
    let n = check_file("scipy_linalg", apply);
    assert_eq!(n, 234);
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
    let square = Array::eye(3, DType::F64);
    let wide = Array::ones(&[2, 3], DType::F64);
    assert!(panic_message(|| sl::schur(&square, "quasi").0).contains("'real' or 'complex'"));
    assert!(panic_message(|| sl::schur(&wide, "real").0).contains("square"));
    assert!(panic_message(|| sl::hessenberg(&wide, false).0).contains("hessenberg"));
    assert!(panic_message(|| sl::sqrtm(&square, 2)).contains("not implemented"));
    assert!(
        panic_message(|| sl::rsf2csf(&square, &Array::eye(2, DType::F64)).0)
            .contains("the same size")
    );
    let schur = sl::SylvesterMethod::Schur;
    assert!(
        panic_message(|| sl::solve_sylvester(&square, &square, &wide, schur, 1e-8))
            .contains("incompatible shapes")
    );
}

/// As in JAX, the Schur decomposition (and so sqrtm) has no derivative; rsf2csf has one.
#[test]
fn schur_refuses_derivatives_and_rsf2csf_differentiates() {
    let a = Array::from_vec(vec![1.0f64, 2.0, -3.0, 0.5], &[2, 2]);
    let msg = common::panic_message(|| {
        grad(|m: Array| sl::schur(&m, "real").0.sum(None, false))(a.clone());
    });
    assert!(
        msg.contains("schur: no reverse-mode differentiation rule"),
        "{msg}"
    );
    let msg = common::panic_message(|| {
        grad(|m: Array| sl::sqrtm(&m, 1).real().sum(None, false))(a.clone());
    });
    assert!(
        msg.contains("no reverse-mode differentiation rule"),
        "{msg}"
    );
    let (t, z) = sl::schur(&a, "real");
    let g = grad(move |t: Array| sl::rsf2csf(&t, &z).0.real().sum(None, false))(t);
    assert!(g.to_vec::<f64>().iter().all(|v| v.is_finite()));
}
