use jaxrs::prelude::*;

#[jit(in_sharding = jaxrs::P!["dp"])]
fn step(x: &Array) -> Array {
    x * 2.0
}

fn main() {
    let _ = step::jit_site();
}
