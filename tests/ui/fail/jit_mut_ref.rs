use jaxrs::prelude::*;

#[jit]
fn update(params: &mut Array, grad: &Array) -> Array {
    *params = grad.clone();
    grad.clone()
}

fn main() {}
