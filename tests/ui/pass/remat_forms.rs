//! Every accepted form of #[remat]. Compiled only (the runtime behaviour is in
//! tests/remat.rs).
use jaxrs::prelude::*;

#[derive(Tree, Clone)]
pub struct Layer {
    w1: Array,
    w2: Array,
}

#[remat]
fn plain(x: Array) -> Array {
    x.sin()
}

/// References, trees, and doc comments kept.
#[remat]
pub fn block(layer: &Layer, x: &Array) -> Array {
    x + x.matmul(&layer.w1).gelu().matmul(&layer.w2)
}

#[remat(policy = nothing_saveable)]
fn nothing(x: &Array) -> Array {
    x.tanh()
}

#[remat(policy = dots_saveable)]
fn dots(x: &Array, w: &Array) -> Array {
    x.matmul(w).tanh()
}

#[remat(policy = everything_saveable)]
fn everything(x: &Array) -> (Array, Array) {
    (x.exp(), x.cos())
}

#[remat(policy = save_only_these_names("hidden", "out"),)]
fn named(x: &Array, w: &Array) -> Array {
    let h = checkpoint_name(&x.matmul(w), "hidden");
    checkpoint_name(&h.tanh(), "out")
}

/// A traced Rust scalar is an `Array` inside the body; `mut` bindings stay usable.
#[remat]
fn scaled(x: Array, scale: f32, mut y: Array, mut bias: f64) -> Array {
    let _: &Array = &scale;
    y = y + 1.0;
    bias = bias * 2.0;
    x * scale + y + bias
}

/// Static parameters are Rust values, by index or by name, any type, `mut` allowed.
#[remat(static = (2, name), policy = dots_saveable)]
fn repeated(x: &Array, ws: &[Array], mut times: usize, name: &str) -> Array {
    let _: &str = name;
    let mut h = x.clone();
    while times > 0 {
        for w in ws {
            h = h.matmul(w).tanh();
        }
        times -= 1;
    }
    h
}

/// Generic functions are fine: nothing is cached per function.
#[remat]
fn generic<T: Tree + Clone>(tree: &T, x: &Array) -> Array {
    let n = tree.clone().flatten().0.len();
    x * n as f32
}

/// An opaque return type is inferred.
#[remat]
fn opaque(x: &Array) -> impl Tree {
    (x.sin(), x.cos())
}

/// Stacked with #[jit], in both orders: `jit(remat(f))`, then `remat(jit(f))`, whose #[jit]
/// is on an inner function (with its companion module there).
#[jit]
#[remat]
fn jit_of_remat(x: &Array) -> Array {
    x.sin()
}

#[remat]
#[jit]
fn remat_of_jit(x: &Array) -> Array {
    x.sin()
}

fn main() {
    #[remat(policy = dots_saveable)]
    fn nested(x: &Array) -> Array {
        x.exp()
    }
    let _ = (
        plain as fn(Array) -> Array,
        block as fn(&Layer, &Array) -> Array,
        nothing as fn(&Array) -> Array,
        dots as fn(&Array, &Array) -> Array,
        everything as fn(&Array) -> (Array, Array),
        named as fn(&Array, &Array) -> Array,
        scaled as fn(Array, f32, Array, f64) -> Array,
        repeated as fn(&Array, &[Array], usize, &str) -> Array,
        generic::<Layer> as fn(&Layer, &Array) -> Array,
        nested as fn(&Array) -> Array,
    );
    let _ = opaque;
    let _ = jit_of_remat::jit_site();
    let _ = remat_of_jit as fn(&Array) -> Array;
    // The function twin composes at call sites.
    let f = remat(|x: Array| x.sin()).policy(RematPolicy::DotsSaveable);
    let _ = move |x: Array| -> Array { f.call(x) };
}
