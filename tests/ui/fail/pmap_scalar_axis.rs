use jaxrs::prelude::*;

// A Rust scalar has rank 0: there is no axis 0 to split over the devices.
#[pmap(axis_name = "d", in_axes = (0, 0))]
fn scale(x: &Array, by: f32) -> Array {
    x * by
}

fn main() {
    let _: fn(&Array, f32) -> Array = scale;
}
