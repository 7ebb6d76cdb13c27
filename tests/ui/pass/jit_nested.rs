//! Jitted functions in modules, nested in bodies, calling each other, under cfg.
use jaxrs::prelude::*;

#[derive(Tree, Clone)]
struct Params {
    w: Array,
}

mod model {
    use super::Params;
    use jaxrs::prelude::*;

    #[jit]
    pub(crate) fn predict(params: &Params, x: &Array) -> Array {
        let _ = params;
        x.clone()
    }

    /// Calls another jitted function: inside a trace the runtime inlines it.
    #[jit(donate = params)]
    pub fn train_step(params: Params, x: &Array) -> (Params, Array) {
        let y = predict(&params, x);
        (params, y)
    }
}

#[jit]
fn outer(x: Array) -> Array {
    // A jitted function nested in a jitted body.
    #[jit(static = n)]
    fn inner(x: Array, n: usize) -> Array {
        let _ = n;
        x
    }
    inner(x, 2)
}

// The cfg is seen by #[jit] and carried to the companion module, so both alternatives can be
// written; only the enabled one and its module exist.
#[jit]
#[cfg(not(any()))]
fn either(x: Array) -> Array {
    x
}

#[jit]
#[cfg(any())]
fn either(x: Array, y: Array) -> Array {
    let _ = y;
    x
}

#[jit]
unsafe fn raw(x: Array) -> Array {
    x
}

#[jit]
fn with_inner_attr(x: Array) -> Array {
    #![allow(unused_variables)]
    let unused = 1;
    x
}

fn main() {
    let _: fn(&Params, &Array) -> Array = model::predict;
    let _: fn(Params, &Array) -> (Params, Array) = model::train_step;
    let _: fn(Array) -> Array = outer;
    let _: fn(Array) -> Array = either;
    let _: unsafe fn(Array) -> Array = raw;
    let _: fn(Array) -> Array = with_inner_attr;
    assert_eq!(model::train_step::jit_site().name(), "train_step");
    assert_eq!(either::jit_site().name(), "either");
}
