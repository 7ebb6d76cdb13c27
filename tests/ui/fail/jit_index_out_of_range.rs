use jaxrs::prelude::*;

#[jit(donate = 3)]
fn update(a: Array, b: Array) -> (Array, Array) {
    (a, b)
}

fn main() {}
