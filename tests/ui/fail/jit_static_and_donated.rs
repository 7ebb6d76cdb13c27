use jaxrs::prelude::*;

#[jit(donate = x, static = 0)]
fn f(x: Array) -> Array {
    x
}

fn main() {}
