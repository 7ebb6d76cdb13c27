use jaxrs::prelude::*;

#[jit(donate)]
fn f(params: Array) -> Array {
    params
}

fn main() {}
