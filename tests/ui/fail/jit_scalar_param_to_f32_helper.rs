// Inside a #[jit] body a Rust scalar parameter is traced: `lr` is an `&Array`, so a helper
// taking `f32` does not accept it. The error is rustc's, at the user's argument, naming
// `&Array` (the macro docs explain it and give the two ways out: a helper taking `&Array`, or
// `#[jit(static = lr)]`).
use jaxrs::prelude::*;

fn scaled(x: &Array, lr: f32) -> Array {
    x * lr
}

#[jit]
fn step(x: &Array, lr: f32) -> Array {
    scaled(x, lr)
}

fn main() {
    let _ = step;
}
