use jaxrs::prelude::*;

#[vmap(in_axes = [None, 0])]
fn predict(params: &Array, x: &Array) -> Array {
    x.matmul(params)
}

fn main() {
    let _: fn(&Array, &Array) -> Array = predict;
}
