use jaxrs::prelude::*;

#[jaxrs::scan]
fn cell(h: Array, x: Array) -> ((Array, Array), Array) {
    ((h.clone(), h), x)
}

fn main() {}
