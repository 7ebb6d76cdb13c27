use jaxrs::prelude::*;

#[jit]
const fn f(x: Array) -> Array {
    x
}

fn main() {}
