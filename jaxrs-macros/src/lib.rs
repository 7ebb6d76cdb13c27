//! The macros of jaxrs: `#[jit]`, `#[vmap]`, `#[scan]`, `#[remat]` and `#[derive(Tree)]`.
//!
//! Each parses its input into typed options, validates them (collecting every error, each at
//! its token), then expands into calls of the runtime through `::jaxrs::__private`. This crate
//! holds no runtime logic.

mod common;
mod ctxt;
mod jit;
mod remat;
mod scan;
mod tree_derive;
mod vmap;

use proc_macro::TokenStream;

/// Jit-compiles a function: the first call for given input shapes and dtypes traces the body
/// into an XLA program and compiles it; later calls with the same shapes, dtypes and static
/// values run the compiled program directly.
///
/// ```ignore
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Params { w: Array, b: Array }
///
/// /// One step of training.
/// #[jit(donate = params, static = n)]
/// pub fn step(params: Params, x: &Array, lr: f32, n: usize) -> (Params, Array) {
///     // ...
/// #   unimplemented!()
/// }
///
/// let (params, loss) = step(params, &x, 0.1, 4);
/// println!("{}", step::jit_site().name());
/// ```
///
/// # Parameters
///
/// Every parameter is *traced* (the body sees an abstract [`Array`]-like value, not data)
/// unless it is `static`:
///
/// - an `Array` or any other `Tree` (a struct with `#[derive(Tree)]`, tuples, `Vec`, ...) is
///   traced leaf by leaf; take it by value or by shared reference (`&Array`, `&[Array]`);
/// - a Rust scalar (`f32 f64 i32 i64 u32 u8 i8 bool`) is traced as a weakly typed 0-d
///   `Array`, as JAX does with Python scalars: inside the body `lr: f32` **is an `Array`**, and
///   a new value of `lr` does not recompile;
/// - a `static` parameter is part of the cache key: the body sees its Rust value (use it for
///   sizes, flags, loop counts), and each new value compiles anew. Its type must be
///   `Hash + Eq + Debug + Clone + Send + Sync + 'static`; `f32`/`f64` are compared by bits.
///
/// `&mut` parameters are rejected: a jitted function is pure, it returns its results.
///
/// # Options
///
/// - `donate = <params>`: XLA may reuse these arguments' buffers for the outputs. A donated
///   parameter is taken by value, so Rust itself stops the caller from using it again.
/// - `static = <params>`: these arguments are static (see above).
///
/// `<params>` is one parameter, by position counted from 0 or by name, or a parenthesised list:
/// `#[jit(donate = 0)]`, `#[jit(donate = (params, opt_state))]`, `#[jit(static = (1, n))]`,
/// `#[jit(donate = params, static = n)]`.
///
/// # What it generates
///
/// The function keeps its name, visibility, attributes and signature; its body becomes a call
/// of the runtime's `jit_call` (the function is `#[track_caller]`, so the runtime sees the
/// caller's line). Next to it, a module of the same name gives the compile cache:
/// `step::jit_site()` returns the `JitSite` with its counters.
///
/// `#[jit]` applies to free functions with concrete types, at module level or nested in a
/// function body: not to methods or associated functions (an `impl` block cannot hold the
/// companion module), `async`/`const`/`extern` functions, or functions with type or const
/// parameters (the cache is one `static`). Each mistake is a compile error at its token.
///
/// [`Array`]: https://docs.rs/jaxrs/latest/jaxrs/struct.Array.html
#[proc_macro_attribute]
pub fn jit(attr: TokenStream, item: TokenStream) -> TokenStream {
    jit::jit(attr.into(), item.into()).into()
}

/// Turns a step function into a scan over its input, compiled as one XLA loop (`jax.lax.scan`).
///
/// The step takes the carry, then **one slice** of the scanned input, then any number of
/// loop-invariant parameters (weights: passed once, neither sliced nor carried), and returns
/// `(new_carry, y)`. The annotated function keeps its name and signature but now takes the
/// initial carry and the **whole** input (scanned along its leading axis) and returns
/// `(final_carry, ys)` with the `y`s stacked.
///
/// ```ignore
/// #[scan]
/// fn rnn_cell(h: Array, x: &Array, w_hh: &Array, w_xh: &Array) -> (Array, Array) {
///     let h = (h.matmul(w_hh) + x.matmul(w_xh)).tanh();
///     (h.clone(), h)
/// }
/// let (h_final, hs) = rnn_cell(h0, &xs, &w_hh, &w_xh);   // xs: [T, B, D]
/// ```
///
/// Options: `reverse` (scan from the last slice to the first), `length = N` (required when the
/// input is `()`: `fn step(c: C, _: ()) -> (C, Y)`), `unroll = K` (steps per loop iteration).
#[proc_macro_attribute]
pub fn scan(attr: TokenStream, item: TokenStream) -> TokenStream {
    scan::scan(attr.into(), item.into()).into()
}

/// Rematerialises a function (gradient checkpointing, `jax.checkpoint`): it computes the
/// same values, but under `grad`/`vjp` its intermediate values are recomputed in the backward
/// pass instead of being kept alive from the forward pass, trading compute for memory.
///
/// ```ignore
/// use jaxrs::prelude::*;
///
/// /// One residual block: only `x` is kept for the backward pass.
/// #[remat]
/// fn block(x: &Array, w1: &Array, w2: &Array) -> Array {
///     x + x.matmul(w1).gelu().matmul(w2)
/// }
///
/// /// Keeps the matrix products, recomputes the elementwise work.
/// #[remat(policy = dots_saveable)]
/// fn cheaper(x: &Array, w: &Array) -> Array { x.matmul(w).tanh() }
///
/// /// Keeps the values marked with `checkpoint_name(&h, "hidden")`; `n` is a Rust value.
/// #[remat(policy = save_only_these_names("hidden"), static = n)]
/// fn named(x: &Array, n: usize) -> Array { .. }
/// ```
///
/// # Options
///
/// - `policy = <policy>`: what the forward pass keeps: `nothing_saveable` (the default),
///   `dots_saveable`, `everything_saveable`, `save_only_these_names("a", "b", ...)`.
/// - `static = <params>`: parameters the body sees as Rust values (sizes, flags) instead of
///   traced arrays: one parameter, by position from 0 or by name, or a parenthesised list.
///
/// # Parameters
///
/// Every other parameter is traced, as with `#[jit]`: an `Array` or any `Tree`, by value or
/// by shared reference; a Rust scalar (`f32 f64 i32 i64 u32 u8 i8 bool`) becomes a weakly
/// typed 0-d `Array` inside the body. `&mut` parameters are rejected (a rematerialised
/// function is pure), and so are methods and `async`/`const`/`extern` functions; generic
/// functions are fine (nothing is cached per function).
///
/// The function keeps its name, visibility, attributes and signature; its body becomes a call
/// of the runtime's `remat_call`. The function twin is `jaxrs::remat(f)`. Stacked with
/// `#[jit]` in either order, it gives the same program (a jitted function inlines into
/// transformations that trace it).
#[proc_macro_attribute]
pub fn remat(attr: TokenStream, item: TokenStream) -> TokenStream {
    remat::remat(attr.into(), item.into()).into()
}

/// Vectorizes a function over a batch, like `jax.vmap` as a decorator: the function keeps its
/// name and signature and takes batches where it took examples. It is traced once per call
/// for one example's shapes, and the whole batch runs as one program (matrix products
/// become batched products; no loop over the examples).
///
/// ```ignore
/// use jaxrs::prelude::*;
///
/// /// The loss of one example; with #[vmap], the losses of a batch.
/// #[vmap(in_axes = (None, 0, 0))]
/// fn example_loss(params: &Params, x: &Array, y: &Array) -> Array {
///     let pred = x.matmul(&params.w) + &params.b;
///     (pred - y).powi(2).mean(None, false)
/// }
///
/// let losses = example_loss(&params, &xs, &ys); // xs: [batch, in], ys: [batch, out]
/// ```
///
/// # Options
///
/// - `in_axes = (None, 0, -1)`: one entry per parameter, the axis along which its examples
///   are stacked (negative counts from the end), or `None` for a parameter that is the same
///   for every example. One axis alone (`in_axes = 1`) applies to every parameter. A tree
///   parameter (a struct, a tuple, a `Vec`) is mapped along the same axis in every leaf.
///   Default: every parameter along axis 0.
/// - `out_axes = 0`: where the examples' results are stacked in the result (a parenthesised
///   list for a tuple result). Default: 0.
/// - `axis_size = 8`: the batch size, needed when no parameter is mapped.
///
/// An unmapped parameter is passed to the body as is, like a value the body captures: any
/// type works, and a Rust scalar stays a Rust scalar. A mapped parameter is an array or a
/// tree of arrays (by value or by `&`); a Rust scalar has no axis to map, which is a compile
/// error, as is an `in_axes` list whose length is not the number of parameters.
///
/// # Stacking
///
/// Attributes compose like decorators, outermost first: `#[jit] #[vmap(..)] fn f` is
/// `jit(vmap(f))`, compiled as one batched program; `#[vmap(..)] #[jit] fn f` is
/// `vmap(jit(f))`. The runtime's `vmap(f, in_axes, out_axes)` does the same for closures.
#[proc_macro_attribute]
pub fn vmap(attr: TokenStream, item: TokenStream) -> TokenStream {
    vmap::vmap(attr.into(), item.into()).into()
}

/// Derives `jaxrs::Tree` for a struct: its leaves are its fields' leaves, in field order.
///
/// Works for structs with named fields, tuple structs (fields named `0`, `1`, ...) and unit
/// structs, generic ones included (each type parameter gets a `Tree` bound). Every field must
/// be a `Tree`. The structure records the struct's name and field names, and rebuilding checks
/// them.
///
/// ```ignore
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Linear { w: Array, b: Array }
///
/// #[derive(Tree, Clone)]
/// struct Mlp<L> { layers: Vec<L>, scale: Option<Array> }
///
/// // TreeDef::Struct { name: "Linear", fields: vec![("w", TreeDef::Leaf), ("b", TreeDef::Leaf)] }
/// let def = layer.structure();
/// ```
///
/// Enums and unions are rejected: implement `Tree` by hand for them.
#[proc_macro_derive(Tree)]
pub fn derive_tree(item: TokenStream) -> TokenStream {
    tree_derive::derive(item.into()).into()
}
