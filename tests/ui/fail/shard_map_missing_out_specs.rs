use jaxrs::prelude::*;

#[jaxrs::shard_map(in_specs = P!["dp"])]
fn f(x: &Array) -> Array {
    x.clone()
}

fn main() {}
