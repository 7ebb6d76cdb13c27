use jaxrs::prelude::*;

// One sharding per traced parameter: `n` is static, so there are two.
#[jit(static = n, in_shardings = (jaxrs::P!["dp"], jaxrs::P![None, "mp"], jaxrs::P![]))]
fn step(x: &Array, w: &Array, n: usize) -> Array {
    let _ = n;
    x.matmul(w)
}

fn main() {
    let _ = step::jit_site();
}
