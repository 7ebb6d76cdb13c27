use jaxrs::prelude::*;

#[jaxrs::scan(reversed, unroll = 0)]
fn cell(h: Array, x: Array) -> (Array, Array) {
    (&h + &x, x)
}

fn main() {}
