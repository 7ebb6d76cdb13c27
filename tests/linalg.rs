//! The linear algebra against JAX 0.10.2: `lax::linalg`, `jnp::linalg` and `scipy::linalg`
//! (`tests/golden/linalg.json`, written by `tests/golden/gen_linalg.py`): values eagerly and
//! under `jit`, JVP and VJP, `check_grads` and `vmap` (`tests/common/cases.rs`), in f32 and
//! f64, batched, with NaN for a matrix that is not positive definite and 0 / -inf for a
//! singular determinant, as JAX's.

mod common;

use common::cases::{a, check_file, p_bool, p_i64, p_str};
use common::golden::In;
use jaxrs::lax::{self, linalg::TriangularSolveOptions};
use jaxrs::numpy as jnp;
use jaxrs::prelude::*;
use jaxrs::scipy::linalg as sl;
use serde_json::Value;

/// The sign-free form the goldens record of eigen- and singular vectors: their squares.
fn sq(x: &Array) -> Array {
    x * x
}

fn norm_ord(p: &str) -> jnp::linalg::NormOrd {
    match p {
        "nuc" => jnp::linalg::NormOrd::Nuc,
        n => jnp::linalg::NormOrd::P(n.parse().expect("a number")),
    }
}

fn apply(op: &str, params: &Value, x: &[In]) -> Vec<Array> {
    let x0 = a(x, 0);
    match op {
        "lax.cholesky" => vec![lax::linalg::cholesky(x0, true)],
        "lax.triangular_solve" => {
            let opts = TriangularSolveOptions {
                left_side: p_bool(params, "left_side"),
                lower: p_bool(params, "lower"),
                transpose_a: p_bool(params, "transpose_a"),
                unit_diagonal: p_bool(params, "unit_diagonal"),
                conjugate_a: false,
            };
            vec![lax::linalg::triangular_solve(x0, a(x, 1), opts)]
        }
        "lax.lu" => {
            let (lu, piv, perm) = lax::linalg::lu(x0);
            vec![lu, piv, perm]
        }
        "lax.lu/lu" => vec![lax::linalg::lu(x0).0],
        "lax.qr" => {
            let (q, r) = lax::linalg::qr(x0, p_bool(params, "full_matrices"));
            vec![q, r]
        }
        "lax.eigh" => {
            let (v, w) = lax::linalg::eigh(x0, true, true);
            vec![w, sq(&v)]
        }
        "lax.svd" => {
            let (u, s, vt) = lax::linalg::svd(x0, p_bool(params, "full_matrices"));
            vec![s, sq(&u), sq(&vt)]
        }
        "lax.svdvals" => vec![lax::linalg::svdvals(x0)],
        "lax.lu_pivots_to_permutation" => {
            vec![sl::lu_pivots_to_permutation(
                x0,
                p_i64(params, "size") as usize,
            )]
        }
        "jnp.linalg.cholesky" => vec![jnp::linalg::cholesky(x0, p_bool(params, "upper"))],
        "jnp.linalg.solve" => vec![jnp::linalg::solve(x0, a(x, 1))],
        "jnp.linalg.inv" => vec![jnp::linalg::inv(x0)],
        "jnp.linalg.det" => vec![jnp::linalg::det(x0)],
        "jnp.linalg.slogdet" => {
            let (sign, logdet) = jnp::linalg::slogdet(x0);
            vec![sign, logdet]
        }
        "jnp.linalg.pinv" => vec![jnp::linalg::pinv(x0, None)],
        "jnp.linalg.matrix_rank" => vec![jnp::linalg::matrix_rank(x0, None)],
        "jnp.linalg.cond" => vec![jnp::linalg::cond(x0, None)],
        "jnp.linalg.lstsq" => {
            let (sol, resid, rank, s) = jnp::linalg::lstsq(x0, a(x, 1), None);
            vec![sol, resid, rank, s]
        }
        "jnp.linalg.norm" => {
            vec![jnp::linalg::norm(
                x0,
                Some(norm_ord(p_str(params, "ord"))),
                None,
                false,
            )]
        }
        "jnp.linalg.matrix_power" => vec![jnp::linalg::matrix_power(x0, p_i64(params, "n"))],
        "jnp.linalg.eigvalsh" => vec![jnp::linalg::eigvalsh(x0, None)],
        "jnp.linalg.eigh" => {
            let (w, v) = jnp::linalg::eigh(x0, None, true);
            vec![w, sq(&v)]
        }
        "jnp.linalg.svd" => {
            let (u, s, vt) = jnp::linalg::svd(x0, true);
            vec![s, sq(&u), sq(&vt)]
        }
        "jnp.linalg.qr" => {
            let (q, r) = jnp::linalg::qr(x0, "reduced");
            vec![q.expect("reduced mode gives q"), r]
        }
        "jnp.linalg.qr/r" => {
            let (q, r) = jnp::linalg::qr(x0, "r");
            assert!(q.is_none());
            vec![r]
        }
        "scipy.linalg.cholesky" => vec![sl::cholesky(x0, false)],
        "scipy.linalg.cho_solve" => {
            let factor = sl::cho_factor(x0, p_bool(params, "lower"));
            vec![sl::cho_solve(&factor, a(x, 1))]
        }
        "scipy.linalg.lu" => {
            let (p, l, u) = sl::lu(x0);
            vec![p, l, u]
        }
        "scipy.linalg.lu_factor" => {
            let f = sl::lu_factor(x0);
            vec![f.lu, f.piv]
        }
        "scipy.linalg.lu_solve" => {
            let f = sl::lu_factor(x0);
            vec![sl::lu_solve(&f, a(x, 1), p_i64(params, "trans") as u8)]
        }
        "scipy.linalg.solve" => vec![sl::solve(
            x0,
            a(x, 1),
            p_bool(params, "lower"),
            p_str(params, "assume_a"),
        )],
        "scipy.linalg.solve_triangular" => vec![sl::solve_triangular(
            x0,
            a(x, 1),
            p_i64(params, "trans") as u8,
            p_bool(params, "lower"),
            p_bool(params, "unit_diagonal"),
        )],
        "scipy.linalg.eigh" => {
            let (w, v) = sl::eigh(x0, p_bool(params, "lower"));
            vec![w, sq(&v)]
        }
        "scipy.linalg.svd" => {
            let (u, s, vt) = sl::svd(x0, true);
            vec![s, sq(&u), sq(&vt)]
        }
        "scipy.linalg.qr" => {
            let (q, r) = sl::qr(x0, p_str(params, "mode"));
            vec![q.expect("full and economic modes give q"), r]
        }
        "scipy.linalg.qr/r" => {
            let (q, r) = sl::qr(x0, "r");
            assert!(q.is_none());
            vec![r]
        }
        "scipy.linalg.inv" => vec![sl::inv(x0)],
        "scipy.linalg.det" => vec![sl::det(x0)],
        "scipy.linalg.block_diag" => vec![sl::block_diag(&[x0, a(x, 1), a(x, 2)])],
        "scipy.linalg.toeplitz" => vec![sl::toeplitz(x0, Some(a(x, 1)))],
        "scipy.linalg.toeplitz/sym" => vec![sl::toeplitz(x0, None)],
        other => panic!("linalg: no Rust call for {other}"),
    }
}

#[test]
fn linear_algebra_matches_jax() {
    let checked = check_file("linalg", apply);
    assert_eq!(checked, 156);
}
