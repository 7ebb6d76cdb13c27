use jaxrs::prelude::*;

#[vmap(out_axes = (0, 1, 0))]
fn both(x: Array) -> (Array, Array) {
    (x.clone(), x)
}

fn main() {
    let _: fn(Array) -> (Array, Array) = both;
}
