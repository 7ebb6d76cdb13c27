//! Every accepted form of #[vmap], alone and stacked with #[jit]. Compiled only; the runtime
//! behaviour is tested in tests/vmap.rs.
use jaxrs::prelude::*;

#[derive(Tree, Clone)]
pub struct Params {
    w: Array,
    b: Array,
}

/// Default: every parameter mapped along axis 0.
#[vmap]
fn plain(x: Array, y: &Array) -> Array {
    &x + y
}

#[vmap(in_axes = 1)]
fn one_axis_for_all(x: &Array, y: &Array) -> Array {
    x * y
}

#[vmap(in_axes = (None, 0, -1))]
pub fn loss(params: &Params, x: &Array, y: &Array) -> Array {
    x.matmul(&params.w) + &params.b - y
}

#[vmap(in_axes = (0, None, None, None), out_axes = (0, -1))]
fn unmapped_anything(x: Array, lr: f32, n: usize, name: &str) -> (Array, Array) {
    // Unmapped parameters are the caller's values, whatever their type.
    let _: (f32, usize, &str) = (lr, n, name);
    (x.clone(), x)
}

#[vmap(in_axes = (None,), axis_size = 4)]
fn nothing_mapped(x: &Array) -> Array {
    x.exp()
}

const BATCH: usize = 8;

#[vmap(in_axes = None, axis_size = BATCH)]
fn axis_size_from_a_const(x: Array) -> Array {
    x
}

#[vmap(in_axes = (0, None), out_axes = None)]
fn out_axes_none(x: &Array, c: &Array) -> Array {
    let _ = x;
    c.clone()
}

#[vmap(in_axes = (0, None))]
#[jit]
fn stacked_mut(mut x: Array, mut s: f32) -> Array {
    x = &x * 2.0;
    s = s.clone();
    &x * &s
}

#[vmap]
fn trees_slices_and_mut(
    params: Params,
    xs: &[Array],
    mut acc: Array,
    t: Option<Array>,
) -> Vec<Array> {
    acc = &acc + &params.w;
    let _ = t;
    let mut out = xs.to_vec();
    out.push(acc);
    out
}

#[vmap(in_axes = (None, 0, None))]
fn unmapped_patterns((a, b): (Array, Array), x: &Array, _: u8) -> Array {
    a + b + x
}

#[vmap(in_axes = (0, None))]
fn generic<T: Clone>(x: &Array, tag: T) -> Array {
    let _ = tag.clone();
    x.clone()
}

#[vmap]
fn opaque(x: Array) -> impl Tree {
    (x,)
}

pub struct Model {
    scale: f32,
}

impl Model {
    /// A method: `self` is captured, like an unmapped parameter.
    #[vmap(in_axes = 0)]
    pub fn apply(&self, x: &Array) -> Array {
        x * self.scale
    }
}

// Stacked: #[jit] outermost is jit(vmap(f)); a traced scalar is still `&Array` in the body.
#[jit]
#[vmap(in_axes = (None, 0, None))]
pub fn jit_of_vmap(params: &Params, x: &Array, lr: f32) -> Array {
    let lr: &Array = lr;
    x.matmul(&params.w) * lr
}

#[jit(static = n)]
#[vmap(in_axes = (0, None, None))]
fn jit_static_vmap(x: Array, n: usize, mut k: i32) -> Array {
    let _: usize = n;
    k = k.clone();
    let _ = k;
    x
}

// #[vmap] outermost is vmap(jit(f)).
#[vmap(in_axes = (None, 0))]
#[jit]
fn vmap_of_jit(params: &Params, x: &Array) -> Array {
    x.matmul(&params.w)
}

#[jaxrs::vmap(in_axes = (0, 0))]
#[jaxrs::vmap(in_axes = (None, 0))]
fn nested(x: &Array, y: &Array) -> Array {
    x * y
}

// Two named batch axes; the inner function reduces over the outer one.
#[vmap(in_axes = (0, None), axis_name = "rows", out_axes = 0)]
#[vmap(in_axes = (0, None), axis_name = "cols")]
fn named(x: &Array, scale: f32) -> Array {
    psum(x, "rows") * scale + axis_index("cols")
}

fn main() {
    #[vmap(in_axes = (0,))]
    fn inner(x: Array) -> Array {
        x
    }

    // The functions keep their signatures.
    let _: fn(Array, &Array) -> Array = plain;
    let _: fn(&Array, &Array) -> Array = one_axis_for_all;
    let _: fn(&Params, &Array, &Array) -> Array = loss;
    let _: fn(Array, f32, usize, &str) -> (Array, Array) = unmapped_anything;
    let _: fn(&Array) -> Array = nothing_mapped;
    let _: fn(Array) -> Array = axis_size_from_a_const;
    let _: fn(&Array, &Array) -> Array = out_axes_none;
    let _: fn(Params, &[Array], Array, Option<Array>) -> Vec<Array> = trees_slices_and_mut;
    let _: fn((Array, Array), &Array, u8) -> Array = unmapped_patterns;
    let _: fn(&Array, u32) -> Array = generic::<u32>;
    let _ = opaque;
    let _: fn(&Model, &Array) -> Array = Model::apply;
    let _: fn(&Params, &Array, f32) -> Array = jit_of_vmap;
    let _: fn(Array, usize, i32) -> Array = jit_static_vmap;
    let _: fn(&Params, &Array) -> Array = vmap_of_jit;
    let _: fn(&Array, &Array) -> Array = nested;
    let _: fn(Array) -> Array = inner;
    let _: fn(Array, f32) -> Array = stacked_mut;
    let _: fn(&Array, f32) -> Array = named;
    // #[jit] keeps its companion module when stacked.
    assert_eq!(jit_of_vmap::jit_site().name(), "jit_of_vmap");
}
