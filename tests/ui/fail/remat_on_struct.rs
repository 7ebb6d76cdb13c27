use jaxrs::prelude::*;

#[remat]
struct Block {
    w: Array,
}

fn main() {
    let _ = |b: Block| b.w;
}
