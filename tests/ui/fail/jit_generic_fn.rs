use jaxrs::prelude::*;

#[jit]
fn f<T: Tree>(x: T) -> T {
    x
}

fn main() {}
