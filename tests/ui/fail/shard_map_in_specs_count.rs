use jaxrs::prelude::*;

#[jaxrs::shard_map(in_specs = (P!["dp"], P![], P![]), out_specs = P!["dp"], static = n)]
fn f(x: &Array, w: &Array, n: usize) -> Array {
    x.matmul(w) * n as f32
}

fn main() {}
