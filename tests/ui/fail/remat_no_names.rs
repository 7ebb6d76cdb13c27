use jaxrs::prelude::*;

#[remat(policy = save_only_these_names())]
fn block(x: &Array, w: &Array) -> Array {
    x.matmul(w).tanh()
}

fn main() {
    let _: fn(&Array, &Array) -> Array = block;
}
