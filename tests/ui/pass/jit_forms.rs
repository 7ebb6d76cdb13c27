//! Every accepted form of #[jit]. Compiled only; the functions are not called here (the
//! runtime's jit cache is exercised by the runtime's tests).
use jaxrs::prelude::*;

#[derive(Tree, Clone)]
pub struct Params {
    w: Array,
    b: Array,
}

#[jit]
fn plain(x: Array) -> Array {
    x
}

#[jit(donate = 0)]
fn donate_index(params: Params, x: &Array) -> (Params, Array) {
    (params, x.clone())
}

#[jit(donate = (0, 1))]
fn donate_list(a: Array, b: Array, c: &Array) -> (Array, Array, Array) {
    (a, b, c.clone())
}

#[jit(donate = params)]
fn donate_name(params: Params) -> Params {
    params
}

#[jit(static = lr)]
fn static_float(x: Array, lr: f32) -> Array {
    let _: f32 = lr;
    x
}

#[jit(static = (1, n))]
fn static_list(x: Array, flag: bool, n: usize) -> Array {
    let _: (bool, usize) = (flag, n);
    x
}

/// Doc comments and attributes stay on the function.
#[jit(donate = params, static = n)]
#[inline]
pub fn step(params: Params, x: &Array, lr: f32, n: usize) -> (Params, Array) {
    // Inside the body a traced scalar is an Array.
    let lr: &Array = &lr;
    let _: usize = n;
    let _: &Array = x;
    (params, lr.clone())
}

#[jit(static = (name, scale, shape, tag), donate = acc)]
pub(crate) fn statics_by_ref(
    acc: Array,
    name: &str,
    scale: &f64,
    shape: &[usize],
    tag: &'static str,
) -> Array {
    let _: (&str, &f64, &[usize], &'static str) = (name, scale, shape, tag);
    acc
}

#[jit]
fn refs_and_scalars(xs: &[Array], s: &f32, mut k: i32, t: Option<Array>) -> Vec<Array> {
    let _: &Array = s;
    k = k.clone();
    let _ = (k, t);
    xs.to_vec()
}

#[jit(static = 1)]
fn lifetimes<'a>(x: &'a Array, mode: u8) -> Array {
    let _: u8 = mode;
    x.clone()
}

/// No parameters: every argument tuple is `()`.
#[jit]
fn constant() -> Array {
    unimplemented!("needs the runtime's array constructors")
}

#[jit]
fn opaque(x: Array) -> impl Tree {
    (x,)
}

#[jit]
#[track_caller]
fn already_track_caller(r#in: Array) -> Array {
    r#in
}

pub mod layers {
    use jaxrs::prelude::*;

    #[jit]
    pub fn forward(x: &Array) -> Array {
        x.clone()
    }

    #[jit]
    pub(super) fn backward(x: &Array) -> Array {
        // Jitted functions nest: a call inside a trace is inlined by the runtime.
        fn helper(x: &Array) -> Array {
            x.clone()
        }
        helper(x)
    }
}

fn main() {
    #[jit(donate = 0)]
    fn inner(x: Array) -> Array {
        x
    }

    // The companion modules exist, and know the function's name and where it is.
    assert_eq!(step::jit_site().name(), "step");
    assert_eq!(inner::jit_site().name(), "inner");
    assert_eq!(
        already_track_caller::jit_site().name(),
        "already_track_caller"
    );
    assert_eq!(layers::forward::jit_site().name(), "forward");
    assert!(layers::backward::jit_site()
        .location()
        .contains("jit_forms.rs:"));
    assert!(std::ptr::eq(plain::jit_site(), plain::jit_site()));

    // The functions keep their signatures.
    let _: fn(Array) -> Array = plain;
    let _: fn(Params, &Array) -> (Params, Array) = donate_index;
    let _: fn(Array, Array, &Array) -> (Array, Array, Array) = donate_list;
    let _: fn(Params) -> Params = donate_name;
    let _: fn(Array, f32) -> Array = static_float;
    let _: fn(Array, bool, usize) -> Array = static_list;
    let _: fn(Params, &Array, f32, usize) -> (Params, Array) = step;
    let _: fn(Array, &str, &f64, &[usize], &'static str) -> Array = statics_by_ref;
    let _: fn(&[Array], &f32, i32, Option<Array>) -> Vec<Array> = refs_and_scalars;
    let _: for<'a> fn(&'a Array, u8) -> Array = lifetimes;
    let _ = opaque;
    let _: fn() -> Array = constant;
    let _: fn(Array) -> Array = inner;
    let _: fn(Array) -> Array = already_track_caller;
    let _: fn(&Array) -> Array = layers::backward;
}
