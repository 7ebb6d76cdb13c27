use jaxrs::prelude::*;

#[jit(donate = 1.5)]
fn f(a: Array, b: Array) -> Array {
    let _ = b;
    a
}

fn main() {}
