use jaxrs::prelude::*;

#[derive(Tree)]
struct Params {
    w: Array,
    timeout: std::time::Duration,
}

fn main() {}
