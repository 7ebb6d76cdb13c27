use jaxrs::prelude::*;

#[remat]
fn block(x: &mut Array, w: &Array) -> Array {
    *x = x.matmul(w);
    x.tanh()
}

fn main() {
    let _: fn(&mut Array, &Array) -> Array = block;
}
