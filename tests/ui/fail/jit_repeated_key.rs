use jaxrs::prelude::*;

#[jit(donate = 0, donate = 1)]
fn update(a: Array, b: Array) -> (Array, Array) {
    (a, b)
}

fn main() {}
