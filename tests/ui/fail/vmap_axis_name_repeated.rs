use jaxrs::prelude::*;

#[vmap(axis_name = "i", in_axes = 0, axis_name = "j")]
fn share(x: &Array) -> Array {
    x / psum(x, "i")
}

fn main() {
    let _: fn(&Array) -> Array = share;
}
