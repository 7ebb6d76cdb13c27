use jaxrs::prelude::*;

#[jit(static = ())]
fn f(x: Array) -> Array {
    x
}

fn main() {}
