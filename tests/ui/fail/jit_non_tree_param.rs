use jaxrs::prelude::*;

// Forgot `#[derive(Tree)]`.
struct Params {
    w: Array,
}

#[jit]
fn f(params: Params, x: &Array) -> Array {
    let _ = x;
    params.w
}

fn main() {}
