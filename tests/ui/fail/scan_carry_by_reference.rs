use jaxrs::prelude::*;

#[jaxrs::scan]
fn cell(h: &Array, x: Array) -> (Array, Array) {
    (h + &x, x)
}

fn main() {}
