use jaxrs::prelude::*;

#[jit]
struct Params {
    w: Array,
}

fn main() {}
