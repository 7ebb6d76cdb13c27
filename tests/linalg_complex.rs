//! Complex linear algebra (`solve`, `inv`, `det`, `slogdet`, LU, triangular and LU solves,
//! `expm`, Cholesky, `eigh`, SVD, QR, `pinv`, `polar`)
//! and the general eigendecomposition (`jnp.linalg.eig`, `eigvals`, real and complex), against
//! JAX 0.10.2 (`tests/golden/linalg_complex.json` and `linalg_eig.json`, written by
//! `tests/golden/gen_linalg_complex.py`): values eagerly and under `jit`, JVP and VJP, and
//! `vmap`; `eig`'s eigenvectors paired with JAX's by eigenvalue and compared up to phase; and
//! the refusals where JAX raises.

mod common;

use common::cases::{a, check_file, load_cases};
use common::golden::{array, f64_parts, In};
use jaxrs::numpy as jnp;
use jaxrs::prelude::*;
use jaxrs::scipy::linalg as sl;
use serde_json::Value;

fn sorted_parts(w: &Array) -> Vec<Array> {
    vec![
        jnp::sort(&w.real(), -1, Default::default()),
        jnp::sort(&w.imag(), -1, Default::default()),
    ]
}

fn apply(op: &str, params: &Value, x: &[In]) -> Vec<Array> {
    let trans = || params["trans"].as_u64().unwrap() as u8;
    match op {
        "solve" => vec![jnp::linalg::solve(a(x, 0), a(x, 1))],
        "inv" => vec![jnp::linalg::inv(a(x, 0))],
        "det" => vec![jnp::linalg::det(a(x, 0))],
        "slogdet" => {
            let (sign, logdet) = jnp::linalg::slogdet(a(x, 0));
            vec![sign, logdet]
        }
        "lu" => vec![jaxrs::lax::linalg::lu(a(x, 0)).0],
        "solve_triangular" => vec![sl::solve_triangular(a(x, 0), a(x, 1), trans(), true, false)],
        "lu_solve" => vec![sl::lu_solve(&sl::lu_factor(a(x, 0)), a(x, 1), trans())],
        "eigvals" => sorted_parts(&jnp::linalg::eigvals(a(x, 0))),
        "expm" => vec![sl::expm(a(x, 0), false, 16)],
        "cholesky" => vec![jnp::linalg::cholesky(a(x, 0), false)],
        "cholesky/upper" => vec![jnp::linalg::cholesky(a(x, 0), true)],
        "scipy.cholesky" => vec![sl::cholesky(a(x, 0), false)],
        "eigvalsh" => vec![jnp::linalg::eigvalsh(a(x, 0), None)],
        "eigh/projectors" => {
            let (w, v) = jnp::linalg::eigh(a(x, 0), None, true);
            let vt = v.swap_axes(-1, -2);
            vec![w, vt.expand_dims(-1) * vt.conj().expand_dims(-2)]
        }
        "svdvals" => vec![jnp::linalg::svdvals(a(x, 0))],
        "svd/products" => {
            let (u, s, vh) = jnp::linalg::svd(a(x, 0), false);
            let scaled = &u * &s.astype(u.dtype()).expand_dims(-2);
            let uh = u.swap_axes(-1, -2).conj();
            let v = vh.swap_axes(-1, -2).conj();
            vec![s, scaled.matmul(&vh), u.matmul(&uh), v.matmul(&vh)]
        }
        "pinv" => vec![jnp::linalg::pinv(a(x, 0), None)],
        "qr/product" => {
            let (q, r) = jnp::linalg::qr(a(x, 0), "reduced");
            let q = q.expect("reduced mode has q");
            let qh = q.swap_axes(-1, -2).conj();
            vec![q.matmul(&r), qh.matmul(&q), jnp::abs(&r)]
        }
        "qr" => {
            let (q, r) = jnp::linalg::qr(a(x, 0), "reduced");
            vec![q.expect("reduced mode has q"), r]
        }
        "polar" => vec![sl::polar(a(x, 0), "right").0],
        other => panic!("no such op {other}"),
    }
}

#[test]
fn complex_solves_and_eigenvalues_match_jax() {
    assert_eq!(check_file("linalg_complex", apply), 88);
}

/// A batch of `[.., rows, cols]` complex values as (re, im) pairs per matrix.
fn complex_matrices(x: &Array) -> Vec<Vec<(f64, f64)>> {
    let parts = f64_parts(x);
    let (rows, cols) = (x.shape()[x.rank() - 2], x.shape()[x.rank() - 1]);
    parts
        .chunks(2)
        .map(|p| (p[0], p[1]))
        .collect::<Vec<_>>()
        .chunks(rows * cols)
        .map(<[_]>::to_vec)
        .collect()
}

#[test]
fn eig_matches_jax_up_to_order_and_phase() {
    let cases = load_cases("linalg_eig");
    assert_eq!(cases.len(), 12);
    for case in &cases {
        let x = a(&case.inputs, 0);
        let tol = if matches!(x.dtype(), DType::F32 | DType::C64) {
            2e-4
        } else {
            1e-9
        };
        let (w, v) = jnp::linalg::eig(x);
        let (want_w, want_v) = (array(&case.want[0]), array(&case.want[1]));
        assert_eq!(
            (w.shape(), v.shape()),
            (want_w.shape(), want_v.shape()),
            "{}",
            case.name
        );
        assert_eq!(w.dtype(), want_w.dtype(), "{}", case.name);
        // Jitted, the same values.
        let (jw, jv) = jit(|m: Array| jnp::linalg::eig(&m)).call(x.clone());
        assert_eq!(f64_parts(&jw), f64_parts(&w), "{}: jit", case.name);
        assert_eq!(f64_parts(&jv), f64_parts(&v), "{}: jit", case.name);
        let n = x.shape()[x.rank() - 1];
        // Eigenvalues as [batch][n], vectors as [batch][n*n] row-major (columns are vectors).
        let to_values = |w: &Array| {
            let p = f64_parts(w);
            p.chunks(2)
                .map(|c| (c[0], c[1]))
                .collect::<Vec<_>>()
                .chunks(n)
                .map(<[_]>::to_vec)
                .collect::<Vec<_>>()
        };
        let (ours_w, jax_w) = (to_values(&w), to_values(&want_w));
        let (ours_v, jax_v) = (complex_matrices(&v), complex_matrices(&want_v));
        // Our pairs are eigenpairs: |a v - v w| is rounding.
        let vw = &v * &w.expand_dims(-2);
        let av = x.astype(v.dtype()).matmul(&v);
        let residual = jnp::abs(&(&av - &vw)).max(None, false).to_f64_vec()[0];
        let size = jnp::abs(x).max(None, false).to_f64_vec()[0];
        assert!(
            residual <= 10.0 * tol * (1.0 + size),
            "{}: residual {residual}",
            case.name
        );
        for b in 0..ours_w.len() {
            let mut taken = vec![false; n];
            for (j, &(re, im)) in jax_w[b].iter().enumerate() {
                // Our eigenvalue nearest JAX's j-th, not yet paired.
                let k = (0..n)
                    .filter(|&k| !taken[k])
                    .min_by(|&p, &q| {
                        let d = |k: usize| (ours_w[b][k].0 - re).hypot(ours_w[b][k].1 - im);
                        d(p).total_cmp(&d(q))
                    })
                    .unwrap();
                taken[k] = true;
                let gap = (ours_w[b][k].0 - re).hypot(ours_w[b][k].1 - im);
                let scale = 1.0 + re.hypot(im);
                assert!(gap <= tol * scale, "{}: eigenvalue {j}: {gap}", case.name);
                // Column j of JAX's v against column k of ours: unit norm, and equal up to a
                // phase, |<v_jax, v_ours>| = 1.
                let col =
                    |m: &[(f64, f64)], c: usize| (0..n).map(|r| m[r * n + c]).collect::<Vec<_>>();
                let (ours, theirs) = (col(&ours_v[b], k), col(&jax_v[b], j));
                let norm: f64 = ours.iter().map(|(r, i)| r * r + i * i).sum::<f64>().sqrt();
                assert!((norm - 1.0).abs() <= tol, "{}: |v| = {norm}", case.name);
                let (mut dot_re, mut dot_im) = (0.0, 0.0);
                for ((ar, ai), (br, bi)) in theirs.iter().zip(&ours) {
                    // conj(a) * b
                    dot_re += ar * br + ai * bi;
                    dot_im += ar * bi - ai * br;
                }
                let overlap = dot_re.hypot(dot_im);
                assert!(
                    (overlap - 1.0).abs() <= 10.0 * tol,
                    "{}: vector {j}: overlap {overlap}",
                    case.name
                );
                // Our convention: the largest component is real and positive.
                let largest = ours
                    .iter()
                    .copied()
                    .max_by(|p, q| p.0.hypot(p.1).total_cmp(&q.0.hypot(q.1)))
                    .unwrap();
                assert!(
                    largest.0 > 0.0 && largest.1.abs() <= tol,
                    "{}: {largest:?}",
                    case.name
                );
            }
        }
    }
}

#[test]
fn eig_batches_under_vmap_and_its_vectors_refuse_derivatives() {
    let x = Array::from_vec(vec![2.0f64, 1.0, 0.5, -1.0, 0.0, 3.0, 1.0, 1.0], &[2, 2, 2]);
    let (w, v) = jnp::linalg::eig(&x);
    let mapped = vmap(|m: Array| jnp::linalg::eig(&m), 0, 0)(x.clone());
    assert_eq!(f64_parts(&mapped.0), f64_parts(&w));
    assert_eq!(f64_parts(&mapped.1), f64_parts(&v));
    // As JAX: the eigenvectors have no derivative.
    let msg = common::panic_message(|| {
        grad(|m: Array| jnp::linalg::eig(&m).1.real().sum(None, false))(x.clone());
    });
    assert!(
        msg.contains("derivatives of non-symmetric eigenvectors are not implemented"),
        "{msg}"
    );
}
