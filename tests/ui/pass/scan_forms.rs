use jaxrs::prelude::*;

#[derive(Tree, Clone)]
struct Weights {
    w: Array,
}

/// Carry, slice, then loop-invariant parameters.
#[jaxrs::scan]
fn cell(h: Array, x: &Array, weights: &Weights, scale: f32) -> (Array, Array) {
    let h = (h.matmul(&weights.w) + x).tanh() * scale;
    (h.clone(), h)
}

#[jaxrs::scan(reverse, length = 4, unroll = 2)]
pub fn counter((a, b): (Array, Array), _: ()) -> ((Array, Array), Array) {
    ((&a + 1.0, b.clone()), a)
}

fn main() {
    let _ = cell;
    let _ = counter;
}
