use jaxrs::prelude::*;

// Without in_axes every parameter is mapped along axis 0, and `lr` has no axes.
#[vmap]
fn scale(x: &Array, lr: f64) -> Array {
    x * lr
}

fn main() {
    let _: fn(&Array, f64) -> Array = scale;
}
