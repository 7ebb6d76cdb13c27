use jaxrs::prelude::*;

#[remat]
fn block((x, w): (Array, Array)) -> Array {
    x.matmul(&w).tanh()
}

fn main() {
    let _: fn((Array, Array)) -> Array = block;
}
