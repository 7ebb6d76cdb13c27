use jaxrs::prelude::*;

#[jit(static = rate)]
fn sgd(params: Array, grad: &Array, lr: f32) -> Array {
    let _ = (grad, lr);
    params
}

fn main() {}
