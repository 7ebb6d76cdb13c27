use jaxrs::prelude::*;

#[jit(donate = "params")]
fn f(params: Array) -> Array {
    params
}

fn main() {}
