use jaxrs::prelude::*;

#[jaxrs::shard_map(in_specs = (P!["dp"], P![]), out_specs = P!["dp"])]
fn f(x: &Array, n: usize) -> Array {
    x * n as f32
}

fn main() {}
