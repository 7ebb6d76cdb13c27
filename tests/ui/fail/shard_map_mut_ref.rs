use jaxrs::prelude::*;

#[jaxrs::shard_map(in_specs = P!["dp"], out_specs = P!["dp"])]
fn f(x: &mut Array) -> Array {
    x.clone()
}

fn main() {}
