use jaxrs::prelude::*;

#[pmap(axis_name = batch)]
fn double(x: &Array) -> Array {
    x * 2.0
}

fn main() {
    let _: fn(&Array) -> Array = double;
}
