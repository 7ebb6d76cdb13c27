//! Every accepted form of #[shard_map]. Compiled only (the runtime behaviour is in
//! tests/shard_map.rs).
use jaxrs::prelude::*;
use jaxrs::{Mesh, P};

#[derive(Tree, Clone)]
pub struct Layer {
    w1: Array,
    w2: Array,
}

/// One spec for every parameter, the mesh from the scope.
#[jaxrs::shard_map(in_specs = P!["dp"], out_specs = P!["dp"])]
fn plain(x: Array) -> Array {
    x.sin()
}

/// One spec per parameter (a tree gets a tree of specs), the mesh given, the check off.
#[jaxrs::shard_map(
    in_specs = ((P![None, "mp"], P!["mp", None]), P!["dp"]),
    out_specs = P!["dp"],
    mesh = mesh,
    check_vma = false,
    static = mesh,
)]
pub fn block(layer: &Layer, x: &Array, mesh: &Mesh) -> Array {
    psum(&x.matmul(&layer.w1).gelu().matmul(&layer.w2), "mp")
}

/// Slices of arrays, a Rust scalar (traced), a static parameter, several results.
#[jaxrs::shard_map(in_specs = (P![], P![]), out_specs = (P![], P![]), static = n)]
fn many(xs: &[Array], lr: f32, n: usize) -> (Array, Array) {
    let total = xs.iter().fold(Array::zeros(&[], DType::F32), |a, x| a + x.sum(None, false));
    (total.clone() * lr, total * n as f32)
}

/// Stacked: a remat'd body inside, and a jit around.
#[jit]
#[jaxrs::shard_map(in_specs = P!["dp"], out_specs = P![])]
#[remat]
fn stacked(x: &Array) -> Array {
    psum(&x.tanh().sum(None, false), "dp")
}

fn main() {}
