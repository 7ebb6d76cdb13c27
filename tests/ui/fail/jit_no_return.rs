use jaxrs::prelude::*;

#[jit]
fn log_it(x: &Array) {
    let _ = x;
}

fn main() {}
