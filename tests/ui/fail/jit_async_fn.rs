use jaxrs::prelude::*;

#[jit]
async fn f(x: Array) -> Array {
    x
}

fn main() {}
