use jaxrs::prelude::*;

#[jit]
fn f(x: impl Tree) -> Array {
    let _ = x;
    unimplemented!()
}

fn main() {}
