use jaxrs::prelude::*;

#[pmap(axis_name = "d", devices = 8)]
fn double(x: &Array) -> Array {
    x * 2.0
}

fn main() {
    // No further errors here: the function and its cache still exist.
    let _: fn(&Array) -> Array = double;
    let _ = double::pmap_site();
}
