use jaxrs::prelude::*;

#[jit(static = mask)]
fn f(x: Array, mask: Array) -> Array {
    let _ = mask;
    x
}

fn main() {}
