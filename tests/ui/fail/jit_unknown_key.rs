use jaxrs::prelude::*;

#[jit(donat = 0)]
fn step(params: Array, x: &Array) -> Array {
    let _ = x;
    params
}

fn main() {
    // No further errors here: the function and `step::jit_site()` still exist.
    let _: fn(Array, &Array) -> Array = step;
    let _ = step::jit_site();
}
