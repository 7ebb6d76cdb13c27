use jaxrs::prelude::*;

// Under #[jit] a scalar is traced, but still has rank 0.
#[jit]
#[vmap(in_axes = (0, -1))]
fn scale(x: &Array, lr: f32) -> Array {
    x * lr
}

fn main() {
    let _: fn(&Array, f32) -> Array = scale;
}
