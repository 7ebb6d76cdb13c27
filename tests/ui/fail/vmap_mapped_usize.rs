use jaxrs::prelude::*;

#[vmap(in_axes = (0, 0))]
fn repeat(x: &Array, n: usize) -> Array {
    x.broadcast_to(&[n, 3])
}

fn main() {
    let _: fn(&Array, usize) -> Array = repeat;
}
