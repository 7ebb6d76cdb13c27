use jaxrs::prelude::*;

/// Not a `Tree`: no `#[derive(Tree)]`.
#[derive(Clone)]
struct Layer {
    w: Array,
}

#[remat]
fn block(layer: &Layer, x: &Array) -> Array {
    x.matmul(&layer.w).tanh()
}

fn main() {
    let _: fn(&Layer, &Array) -> Array = block;
}
