use jaxrs::prelude::*;

#[jit(out_shardings =)]
fn step(x: &Array) -> Array {
    x * 2.0
}

fn main() {
    let _ = step::jit_site();
}
