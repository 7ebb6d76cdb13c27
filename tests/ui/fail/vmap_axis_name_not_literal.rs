use jaxrs::prelude::*;

const NAME: &str = "i";

#[vmap(axis_name = NAME)]
fn share(x: &Array) -> Array {
    x / psum(x, NAME)
}

fn main() {
    let _: fn(&Array) -> Array = share;
}
