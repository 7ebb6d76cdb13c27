use jaxrs::prelude::*;

#[jaxrs::scan]
fn cell(h: Array) -> (Array, Array) {
    (h.clone(), h)
}

fn main() {}
