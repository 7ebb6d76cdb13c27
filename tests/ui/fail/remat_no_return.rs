use jaxrs::prelude::*;

#[remat]
fn block(x: &Array, w: &Array) {
    let _ = x.matmul(w);
}

fn main() {
    let _: fn(&Array, &Array) = block;
}
