use jaxrs::prelude::*;

#[derive(Tree)]
struct Params {
    w: Array,
    name: String,
}

fn main() {}
