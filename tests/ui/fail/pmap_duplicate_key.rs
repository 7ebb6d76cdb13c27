use jaxrs::prelude::*;

#[pmap(axis_name = "d", in_axes = 0, axis_name = "e")]
fn double(x: &Array) -> Array {
    x * 2.0
}

fn main() {
    let _: fn(&Array) -> Array = double;
}
