// #[jit] on an associated function: the companion module cannot live in an `impl` block.
// The error is rustc's; #[jit] cannot see that it is inside an impl.
use jaxrs::prelude::*;

struct Model;

impl Model {
    #[jit]
    fn forward(x: Array) -> Array {
        x
    }
}

fn main() {}
