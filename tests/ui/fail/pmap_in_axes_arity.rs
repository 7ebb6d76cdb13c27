use jaxrs::prelude::*;

#[pmap(axis_name = "d", in_axes = (None, 0))]
fn local_loss(params: &Array, x: &Array, y: &Array) -> Array {
    (x.matmul(params) - y).powi(2).mean(None, false)
}

fn main() {
    let _: fn(&Array, &Array, &Array) -> Array = local_loss;
}
