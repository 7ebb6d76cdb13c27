//! Host kernels (the FFT's and the decompositions') inside programs over many devices: a jit
//! with shardings over a 2x4 mesh, a shard_map body and a pmap each call them on their pieces,
//! and give the single-device values.

mod common;

use jaxrs::numpy as jnp;
use jaxrs::prelude::*;
use jaxrs::{shard_map, Mesh, P};

fn mesh_2x4() -> Mesh {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"]).unwrap()
}

/// `[8, 16]` complex64 rows of a chirp.
fn signal() -> Array {
    let re = (Array::arange(0.0, 128.0, 1.0, DType::F32) * 0.07)
        .sin()
        .reshape([8, 16]);
    let im = (Array::arange(0.0, 128.0, 1.0, DType::F32) * 0.11)
        .cos()
        .reshape([8, 16]);
    jaxrs::lax::complex(&re, &im)
}

/// Eight symmetric positive definite 4x4 matrices.
fn spd() -> Array {
    let a = (Array::arange(0.0, 128.0, 1.0, DType::F64) * 0.3)
        .sin()
        .reshape([8, 4, 4]);
    a.matmul(&a.transpose([0, 2, 1])) + Array::eye(4, DType::F64) * 4.0
}

/// `got` equals `want` to 1e-5 (see `common::assert_agree`).
fn assert_close(what: &str, got: &Array, want: &Array) {
    common::assert_agree(what, got, want, "one device");
}

fn fft_rows(x: &Array) -> Array {
    jnp::real(&jnp::fft::fft(x, None, -1, None)) + jnp::imag(&jnp::fft::ifft(x, None, -1, None))
}

fn cholesky(a: &Array) -> Array {
    jnp::linalg::cholesky(a, false)
}

#[test]
fn kernels_run_on_the_pieces_of_a_sharded_jit() {
    let mesh = mesh_2x4();
    let want_fft = fft_rows(&signal());
    let got: Array = jit(|x: Array| fft_rows(&x))
        .in_shardings(P!["dp", "mp"])
        .out_shardings(P!["dp", None])
        .mesh(&mesh)
        .call(signal());
    assert_close(
        "fft, batch over dp, transformed axis over mp",
        &got,
        &want_fft,
    );
    let want_chol = cholesky(&spd());
    let got: Array = jit(|a: Array| cholesky(&a))
        .in_shardings(P!["dp", None, None])
        .out_shardings(P!["dp", None, None])
        .mesh(&mesh)
        .call(spd());
    assert_close("cholesky, batch over dp", &got, &want_chol);
}

#[test]
fn kernels_run_in_shard_map_and_pmap_bodies() {
    let mesh = mesh_2x4();
    let want = fft_rows(&signal());
    let got = shard_map(|x: Array| fft_rows(&x))
        .mesh(&mesh)
        .in_specs(P![("dp", "mp")])
        .out_specs(P![("dp", "mp")])
        .call(signal());
    assert_close("fft in shard_map", &got, &want);
    let got = pmap(|x: Array| fft_rows(&x)).call(signal());
    assert_close("fft in pmap", &got, &want);
    let got = pmap(|a: Array| cholesky(&a)).call(spd());
    assert_close("cholesky in pmap", &got, &cholesky(&spd()));
}
