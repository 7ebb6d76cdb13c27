use jaxrs::prelude::*;

#[jit(donate = 0 static = 1)]
fn f(x: Array, n: usize) -> Array {
    let _ = n;
    x
}

fn main() {}
