use jaxrs::prelude::*;

// A sharding is a PartitionSpec, a NamedSharding, None, or a tuple of them.
#[jit(in_shardings = "dp")]
fn step(x: &Array) -> Array {
    x * 2.0
}

fn main() {
    let _ = step::jit_site();
}
