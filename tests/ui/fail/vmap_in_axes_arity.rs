use jaxrs::prelude::*;

#[vmap(in_axes = (None, 0))]
fn example_loss(params: &Array, x: &Array, y: &Array) -> Array {
    (x.matmul(params) - y).powi(2).mean(None, false)
}

fn main() {
    // No further errors here: the function still exists, with its signature.
    let _: fn(&Array, &Array, &Array) -> Array = example_loss;
}
