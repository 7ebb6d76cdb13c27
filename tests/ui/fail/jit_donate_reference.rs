use jaxrs::prelude::*;

#[jit(donate = x)]
fn f(x: &Array) -> Array {
    x.clone()
}

fn main() {}
