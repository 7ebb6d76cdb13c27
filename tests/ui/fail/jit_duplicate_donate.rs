use jaxrs::prelude::*;

#[jit(donate = (0, params))]
fn f(params: Array, x: &Array) -> Array {
    let _ = x;
    params
}

fn main() {}
