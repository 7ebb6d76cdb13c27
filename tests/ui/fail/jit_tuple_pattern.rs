use jaxrs::prelude::*;

#[jit]
fn add((a, b): (Array, Array)) -> Array {
    let _ = b;
    a
}

fn main() {}
