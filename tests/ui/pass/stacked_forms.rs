//! #[remat] and #[scan] stacked over other transformations, outermost first. Compiled only;
//! the runtime behaviour is in tests/remat.rs and tests/control.rs.
use jaxrs::prelude::*;

#[derive(Tree, Clone)]
struct Weights {
    w: Array,
}

/// `remat(vmap(f))`: a traced Rust scalar is still `&Array` in the body, `mut` bindings and
/// static parameters (with their `mut`) reach the inner function.
#[remat(static = times)]
#[vmap(in_axes = (0, None, None, None))]
fn remat_of_vmap(mut x: Array, w: &Array, scale: f32, mut times: usize) -> Array {
    let _: &Array = scale;
    while times > 0 {
        x = x.matmul(w).tanh() * scale;
        times -= 1;
    }
    x
}

#[remat(policy = dots_saveable)]
#[vmap(in_axes = 0)]
pub fn remat_of_vmap_one(x: &Array, y: &Array) -> Array {
    (x * y).sin()
}

/// Three deep: `remat(jit(vmap(f)))`.
#[remat]
#[jit]
#[vmap(in_axes = (0,))]
fn three(x: &Array) -> Array {
    x.exp()
}

/// `scan(remat(step))`: the carry, a slice, then loop invariants by reference and by value.
#[jaxrs::scan]
#[remat]
fn remat_cell(h: Array, x: &Array, weights: &Weights, mut bias: Array) -> (Array, Array) {
    bias = bias * 2.0;
    let h = (h.matmul(&weights.w) + x + bias).tanh();
    (h.clone(), h)
}

/// A tuple carry, scanned in reverse over a jitted step (the carry and the slice reach the
/// inner function under their own names).
#[jaxrs::scan(reverse, unroll = 2)]
#[jit]
fn jit_cell(carry: (Array, Array), x: Array) -> ((Array, Array), Array) {
    let (a, b) = carry;
    ((&a + &x, b.clone()), a)
}

/// A tuple carry and a slice by reference under a stacked #[remat].
#[jaxrs::scan]
#[remat]
fn remat_pair(carry: (Array, Array), x: &Array) -> ((Array, Array), Array) {
    let (a, b) = carry;
    ((&a * x, b.clone()), a)
}

fn main() {
    let _ = remat_of_vmap as fn(Array, &Array, f32, usize) -> Array;
    let _ = remat_of_vmap_one as fn(&Array, &Array) -> Array;
    let _ = three as fn(&Array) -> Array;
    let _ = remat_cell as fn(Array, &Array, &Weights, Array) -> (Array, Array);
    let _ = remat_pair as fn((Array, Array), &Array) -> ((Array, Array), Array);
    let _ = jit_cell as fn((Array, Array), Array) -> ((Array, Array), Array);
}
