use jaxrs::prelude::*;

#[vmap(in_axes = (0, 0))]
fn scale(x: &Array, lr: f32) -> Array {
    x * lr
}

fn main() {
    let _: fn(&Array, f32) -> Array = scale;
}
