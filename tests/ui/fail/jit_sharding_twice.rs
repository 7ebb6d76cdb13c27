use jaxrs::prelude::*;

#[jit(out_shardings = jaxrs::P!["dp"], out_shardings = jaxrs::P!["mp"])]
fn step(x: &Array) -> Array {
    x * 2.0
}

fn main() {
    let _ = step::jit_site();
}
