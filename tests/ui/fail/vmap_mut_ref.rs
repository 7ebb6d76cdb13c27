use jaxrs::prelude::*;

#[vmap]
fn accumulate(acc: &mut Array, x: &Array) -> Array {
    *acc = &*acc + x;
    acc.clone()
}

fn main() {}
