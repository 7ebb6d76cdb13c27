use jaxrs::prelude::*;

// JAX's in_axes are positional: name-like entries are a mistake.
#[vmap(in_axes = (None, x))]
fn predict(params: &Array, x: &Array) -> Array {
    x.matmul(params)
}

fn main() {
    let _: fn(&Array, &Array) -> Array = predict;
}
