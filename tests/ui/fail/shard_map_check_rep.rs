use jaxrs::prelude::*;

#[jaxrs::shard_map(in_specs = P!["dp"], out_specs = P!["dp"], check_rep = false)]
fn f(x: &Array) -> Array {
    x.clone()
}

fn main() {}
