use jaxrs::prelude::*;

#[derive(Tree)]
enum Layer {
    Dense { w: Array, b: Array },
    Identity,
}

fn main() {}
