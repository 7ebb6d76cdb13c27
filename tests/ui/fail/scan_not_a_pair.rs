use jaxrs::prelude::*;

#[jaxrs::scan]
fn cell(h: Array, x: Array) -> Array {
    h + x
}

fn main() {}
