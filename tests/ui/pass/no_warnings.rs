//! Every macro's expansion compiles without a warning: one-line bodies, trailing expressions,
//! `return`, doc comments, `pub`, modules, `impl` blocks and stacked attributes, under
//! `#![deny(warnings)]` (a trybuild pass case fails on a warning only when it is denied).
#![deny(warnings)]

use jaxrs::prelude::*;

/// A tree with named fields.
#[derive(Tree, Clone)]
pub struct Params {
    /// The weights.
    pub w: Array,
    b: Array,
}

#[derive(Tree, Clone)]
struct Pair(Array, Array);

#[derive(Tree, Clone)]
struct Unit;

#[derive(Tree, Clone)]
struct Stack<L> {
    layers: Vec<L>,
}

// One-line functions, as people write them (rustfmt does not reach this file): before the
// expansions spliced the body's statements in, each of these got `unused_braces`.
#[jit] fn jit_line(x: &Array) -> Array { x + 1.0 }
#[jit] fn jit_line_owned(x: Array, lr: f32) -> Array { x * lr }
#[jit(static = n)] fn jit_line_static(x: Array, n: usize) -> Array { x * n as f32 }
#[vmap] fn vmap_line(x: &Array) -> Array { x + 1.0 }
#[vmap(in_axes = (0, None))] fn vmap_line_owned(x: Array, lr: f32) -> Array { x * lr }
#[remat] fn remat_line(x: &Array) -> Array { x.sin() }
#[remat(static = n)] fn remat_line_static(x: Array, n: usize) -> Array { x * n as f32 }
#[scan] fn scan_line(c: Array, x: &Array) -> (Array, Array) { (&c + x, c) }
#[scan] fn scan_line_owned(c: Array, x: Array) -> (Array, Array) { (&c + &x, x) }
#[jit] #[vmap] fn jit_vmap_line(x: Array) -> Array { x + 1.0 }
#[vmap] #[jit] fn vmap_jit_line(x: Array) -> Array { x + 1.0 }
#[jit] #[remat] fn jit_remat_line(x: &Array) -> Array { x.cos() }
#[remat] #[jit] fn remat_jit_line(x: &Array) -> Array { x.cos() }
#[scan] #[remat] fn scan_remat_line(c: Array, x: Array) -> (Array, Array) { (&c + &x, x) }
#[scan] #[jit] fn scan_jit_line(c: Array, x: &Array) -> (Array, Array) { (&c * x, c) }
#[jit] fn jit_return_line(x: Array) -> Array { return x; }
#[vmap] fn vmap_return_line(x: Array) -> Array { return x; }
#[remat] fn remat_return_line(x: Array) -> Array { return x; }
#[scan] fn scan_return_line(c: Array, x: Array) -> (Array, Array) { return (c, x); }
#[jit] fn jit_unused_line(x: Array, _unused: &Array) -> Array { x }

// #[jit]: statements and a trailing expression, `return`, doc comments, `pub`.
#[jit]
fn add_one(x: &Array) -> Array {
    x + 1.0
}

#[jit]
fn scale(x: Array, lr: f32) -> Array {
    x * lr
}

/// Documented and public.
#[jit(donate = params)]
pub fn step(params: Params, x: &Array, lr: f32) -> (Params, Array) {
    let y = x.matmul(&params.w) + &params.b;
    let loss = y.powi(2).mean(None, false);
    (tree_map(&params, |p| p * lr), loss)
}

#[jit(static = n)]
fn power(x: &Array, n: usize) -> Array {
    if n == 0 {
        return x.clone();
    }
    (1..n).fold(x.clone(), |y, _| &y * x)
}

#[jit]
fn early(x: &Array, flag: bool) -> Array {
    let _ = flag;
    return x.exp();
}

pub mod layers {
    use jaxrs::prelude::*;

    /// In a module.
    #[jit]
    pub fn relu(x: &Array) -> Array {
        x.relu()
    }

    #[vmap]
    pub fn double(x: &Array) -> Array {
        x * 2.0
    }

    #[remat]
    pub fn block(x: &Array, w: &Array) -> Array {
        x.matmul(w).tanh()
    }
}

// #[vmap]: one line, unmapped parameters, a Rust scalar left alone.
#[vmap]
fn negate(x: &Array) -> Array {
    -x
}

#[vmap(in_axes = (None, 0, None))]
fn affine(params: &Params, x: &Array, scale: f32) -> Array {
    (x.matmul(&params.w) + &params.b) * scale
}

#[vmap(in_axes = 0, out_axes = (0, 0))]
fn both(x: Array, y: Array) -> (Array, Array) {
    let s = &x + &y;
    return (s, x * y);
}

// #[remat]: one line, policies, statics.
#[remat]
fn res(x: &Array, w: &Array) -> Array {
    x + x.matmul(w).gelu()
}

#[remat(policy = dots_saveable, static = n)]
fn deep(x: &Array, w: &Array, n: usize, k: f32) -> Array {
    (0..n).fold(x.clone(), |h, _| h.matmul(w).tanh() * k)
}

// #[scan]: one line, reverse, length.
#[scan]
fn cumsum(total: Array, x: &Array) -> (Array, Array) {
    (&total + x, total)
}

/// Documented.
#[scan(reverse, unroll = 2)]
pub fn rnn(h: Array, x: &Array, w: &Array) -> (Array, Array) {
    let h = (h.matmul(w) + x).tanh();
    (h.clone(), h)
}

#[scan(length = 3)]
fn count(c: Array, _: ()) -> (Array, Array) {
    (&c + 1.0, c)
}

// Stacked, outermost first.
#[jit]
#[vmap(in_axes = (0, None))]
fn jit_vmap(x: &Array, lr: f32) -> Array {
    x * lr
}

#[vmap(in_axes = 0)]
#[jit]
fn vmap_jit(x: &Array) -> Array {
    x.sin()
}

#[jit(static = n)]
#[remat(static = n)]
fn jit_remat(x: &Array, n: usize) -> Array {
    (0..n).fold(x.clone(), |h, _| h.cos())
}

#[remat]
#[vmap(in_axes = (0, None))]
fn remat_vmap(x: &Array, w: &Array) -> Array {
    x.matmul(w)
}

#[scan]
#[remat]
fn remat_cell(h: Array, x: &Array, w: &Array) -> (Array, Array) {
    let h = (h.matmul(w) + x).tanh();
    (h.clone(), h)
}

#[scan]
#[jit]
fn jit_cell(c: Array, x: Array) -> (Array, Array) {
    (&c + &x, c)
}

// In `impl` blocks, where supported: #[vmap] on methods and associated functions, #[remat]
// and #[scan] on associated functions.
pub struct Model {
    w: Array,
}

impl Model {
    #[vmap]
    fn apply(&self, x: &Array) -> Array {
        x.matmul(&self.w)
    }

    #[vmap(in_axes = (0, None))]
    fn shift(x: &Array, by: f32) -> Array {
        x + by
    }

    #[remat]
    pub fn block(x: &Array, w: &Array) -> Array {
        x.matmul(w).relu()
    }

    #[scan]
    fn cell(c: Array, x: &Array) -> (Array, Array) {
        (&c * x, c)
    }

    /// #[jit] on a function nested in a method's body.
    fn run(&self, x: &Array) -> Array {
        #[jit] fn apply(w: &Array, x: &Array) -> Array { x.matmul(w) }
        apply(&self.w, x)
    }
}

fn main() {
    // A jitted function nested in a body.
    #[jit]
    fn local(x: &Array) -> Array {
        x.abs()
    }

    let _ = (Pair::structure, Unit::structure, Stack::<Params>::structure);
    let _: fn(&Array) -> Array = add_one;
    let _: fn(Array, f32) -> Array = scale;
    let _: fn(Params, &Array, f32) -> (Params, Array) = step;
    let _: fn(&Array, usize) -> Array = power;
    let _: fn(&Array, bool) -> Array = early;
    let _: fn(&Array) -> Array = layers::relu;
    let _: fn(&Array) -> Array = layers::double;
    let _: fn(&Array, &Array) -> Array = layers::block;
    let _: fn(&Array) -> Array = negate;
    let _: fn(&Params, &Array, f32) -> Array = affine;
    let _: fn(Array, Array) -> (Array, Array) = both;
    let _: fn(&Array, &Array) -> Array = res;
    let _: fn(&Array, &Array, usize, f32) -> Array = deep;
    let _: fn(Array, &Array) -> (Array, Array) = cumsum;
    let _: fn(Array, &Array, &Array) -> (Array, Array) = rnn;
    let _: fn(Array, ()) -> (Array, Array) = count;
    let _: fn(&Array, f32) -> Array = jit_vmap;
    let _: fn(&Array) -> Array = vmap_jit;
    let _: fn(&Array, usize) -> Array = jit_remat;
    let _: fn(&Array, &Array) -> Array = remat_vmap;
    let _: fn(Array, &Array, &Array) -> (Array, Array) = remat_cell;
    let _: fn(Array, Array) -> (Array, Array) = jit_cell;
    let _: fn(&Model, &Array) -> Array = Model::apply;
    let _: fn(&Array, f32) -> Array = Model::shift;
    let _: fn(&Array, &Array) -> Array = Model::block;
    let _: fn(Array, &Array) -> (Array, Array) = Model::cell;
    let _: fn(&Model, &Array) -> Array = Model::run;
    let _: fn(&Array) -> Array = local;
    let _: fn(&Array) -> Array = jit_line;
    let _: fn(Array, f32) -> Array = jit_line_owned;
    let _: fn(Array, usize) -> Array = jit_line_static;
    let _: fn(&Array) -> Array = vmap_line;
    let _: fn(Array, f32) -> Array = vmap_line_owned;
    let _: fn(&Array) -> Array = remat_line;
    let _: fn(Array, usize) -> Array = remat_line_static;
    let _: fn(Array, &Array) -> (Array, Array) = scan_line;
    let _: fn(Array, Array) -> (Array, Array) = scan_line_owned;
    let _: fn(Array) -> Array = jit_vmap_line;
    let _: fn(Array) -> Array = vmap_jit_line;
    let _: fn(&Array) -> Array = jit_remat_line;
    let _: fn(&Array) -> Array = remat_jit_line;
    let _: fn(Array, Array) -> (Array, Array) = scan_remat_line;
    let _: fn(Array, &Array) -> (Array, Array) = scan_jit_line;
    let _: fn(Array) -> Array = jit_return_line;
    let _: fn(Array) -> Array = vmap_return_line;
    let _: fn(Array) -> Array = remat_return_line;
    let _: fn(Array, Array) -> (Array, Array) = scan_return_line;
    let _: fn(Array, &Array) -> Array = jit_unused_line;
    let _ = step::jit_site();
    let _ = |w: Array| Model { w };
}
