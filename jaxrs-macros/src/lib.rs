//! The macros of jaxrs: `#[jit]`, `#[pmap]`, `#[vmap]`, `#[scan]`, `#[remat]`, `#[shard_map]` and
//! `#[derive(Tree)]`.
//!
//! Each parses its input into typed options, validates them (collecting every error, each at
//! its token), then expands into calls of the runtime through `::jaxrs::__private`. This crate
//! holds no runtime logic.

mod common;
mod ctxt;
mod jit;
mod pmap;
mod remat;
mod scan;
mod shard_map;
mod tree_derive;
mod vmap;

use proc_macro::TokenStream;

/// Jit-compiles a function: the first call for given input shapes and dtypes traces the body
/// into an XLA program and compiles it; later calls with the same shapes, dtypes and static
/// values run the compiled program directly.
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Params {
///     w: Array,
///     b: Array,
/// }
///
/// /// One step of gradient descent on a least-squares loss.
/// #[jit(donate = params)]
/// fn step(params: Params, x: &Array, y: &Array, lr: f32) -> (Params, Array) {
///     let loss = |p: Params| (x.matmul(&p.w) + &p.b - y).powi(2).mean(None, false);
///     let (value, grads) = value_and_grad(loss)(params.clone());
///     (tree_map2(&params, &grads, |p, g| p - g * lr), value)
/// }
///
/// /// `x` to the power `n`: each value of the static `n` compiles its own program.
/// #[jit(static = n)]
/// fn power(x: &Array, n: usize) -> Array {
///     (1..n).fold(x.clone(), |y, _| &y * x)
/// }
///
/// let x = Array::from_vec(vec![0.0f32, 1.0, 2.0, 3.0], &[4, 1]);
/// let y = Array::from_vec(vec![1.0f32, 3.0, 5.0, 7.0], &[4, 1]);
/// let (w, b) = (Array::zeros(&[1, 1], DType::F32), Array::zeros(&[1], DType::F32));
/// let mut params = Params { w, b };
/// for _ in 0..300 {
///     // `params` is donated: moved in, its buffers reused for the new ones.
///     let (new_params, _loss) = step(params, &x, &y, 0.05);
///     params = new_params;
/// }
/// assert!((params.w.item::<f32>() - 2.0).abs() < 0.05); // y = 2x + 1
/// assert_eq!(step::jit_site().cache_misses(), 1);
///
/// assert_eq!(power(&x, 3).to_vec::<f32>(), vec![0.0, 1.0, 8.0, 27.0]);
/// assert_eq!(power(&x, 2).to_vec::<f32>(), vec![0.0, 1.0, 4.0, 9.0]);
/// assert_eq!(power::jit_site().cache_misses(), 2);
/// ```
///
/// # Parameters
///
/// Every parameter is *traced* (the body sees an abstract [`Array`]-like value, not data)
/// unless it is `static`:
///
/// - an `Array` or any other `Tree` (a struct with `#[derive(Tree)]`, tuples, `Vec`, ...) is
///   traced leaf by leaf; take it by value or by shared reference (`&Array`, `&[Array]`).
///   Its non-array parts (Rust scalars, `bool`s, `String`s: `cfg.scale: f32`, a
///   `Vec<f32>` or `(f32, i32)` parameter) are static fields, as in equinox and flax's
///   `pytree_node=False`: the body reads their Rust values, and a new value recompiles, the
///   explanation naming the field (`the static field cfg.scale changed from 0.5 to 0.25`);
///   see the `Tree` trait;
/// - a top-level Rust scalar parameter (`f32 f64 i32 i64 u64 u32 i16 u16 u8 i8 bool`) is
///   traced as a weakly typed 0-d `Array`, as JAX does with a Python scalar passed to
///   `jax.jit`: inside the body `lr: f32` **is a `&Array`** (`Copy`, like the scalar it
///   stands for; a `mut lr` is an owned `Array`), and a new value of `lr` does not recompile.
///   `u64`, `i16` and `u16`, which have no dtype of their own in jaxrs, travel as a Python
///   int does under `jax_enable_x64` (a weak int64). `usize` and `isize` are refused with a
///   message: they are sizes and indices, which the body almost always needs as Rust values
///   (`static`); write `i64` for a traced one;
/// - a `static` parameter is part of the cache key: the body sees its Rust value (use it for
///   sizes, flags, loop counts), and each new value compiles anew. Its type must be
///   `Hash + Eq + Debug + Clone + Send + Sync + 'static`; `f32`/`f64` are compared by bits.
///
/// `&mut` parameters are rejected: a jitted function is pure, it returns its results.
///
/// ## A scalar parameter is an `&Array` in the body
///
/// So a helper that takes the Rust scalar does not accept it there: with
/// `fn decay(lr: f32) -> f32`, the body's `decay(lr)` is rustc's "mismatched types: expected
/// `f32`, found `&Array`" (E0308). Either
///
/// - let the helper take an array (`fn decay(lr: &Array) -> Array`), which keeps `lr` traced
///   (a new value runs the same program), or
/// - keep `lr` a Rust value with `#[jit(static = lr)]`: the body sees the `f32`, and each new
///   value compiles its own program.
///
/// ```
/// use jaxrs::prelude::*;
///
/// fn decay(lr: &Array) -> Array {
///     lr * 0.5
/// }
///
/// fn warmup(steps: u32) -> f32 {
///     (steps as f32 / 10.0).min(1.0)
/// }
///
/// #[jit(static = steps)]
/// fn update(w: &Array, g: &Array, lr: f32, steps: u32) -> Array {
///     w - g * decay(lr) * warmup(steps) // `lr` is traced, `steps` a Rust `u32`
/// }
///
/// let (w, g) = (Array::ones(&[2], DType::F32), Array::ones(&[2], DType::F32));
/// assert_eq!(update(&w, &g, 0.2, 5).to_vec::<f32>(), vec![0.95, 0.95]);
/// ```
///
/// # Options
///
/// - `donate = <params>`: XLA may reuse these arguments' buffers for the outputs. A donated
///   parameter is taken by value, so Rust itself stops the caller from using it again. As in
///   JAX, passing one array twice in a call with a donated occurrence is an
///   `Error::DonatedBufferUsed` naming both parameters; a donated array whose clone is alive is
///   not donated, and the first such call warns (`log::warn!`, target `jaxrs::jit`).
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
/// ```
/// use jaxrs::prelude::*;
///
/// /// An RNN: the carry `h`, one time step `x` of the input, then the weights.
/// #[jaxrs::scan]
/// fn rnn_cell(h: Array, x: &Array, w_hh: &Array, w_xh: &Array) -> (Array, Array) {
///     let h = (h.matmul(w_hh) + x.matmul(w_xh)).tanh();
///     (h.clone(), h)
/// }
///
/// /// Suffix sums: the same kind of step, scanned from the last element to the first.
/// #[jaxrs::scan(reverse)]
/// fn suffix_sums(total: Array, x: &Array) -> (Array, Array) {
///     let total = &total + x;
///     (total.clone(), total)
/// }
///
/// let (t, b, d, n) = (5, 2, 3, 4);
/// let xs = Array::ones(&[t, b, d], DType::F32); // [time, batch, features]
/// let h0 = Array::zeros(&[b, n], DType::F32);
/// let (w_hh, w_xh) = (Array::eye(n, DType::F32), Array::zeros(&[d, n], DType::F32));
/// let (h_final, hs) = rnn_cell(h0, &xs, &w_hh, &w_xh);
/// assert_eq!((h_final.shape(), hs.shape()), (&[b, n][..], &[t, b, n][..]));
///
/// let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
/// let (total, sums) = suffix_sums(Array::scalar(0.0f32), &xs);
/// assert_eq!(total.item::<f32>(), 6.0);
/// assert_eq!(sums.to_vec::<f32>(), vec![6.0, 5.0, 3.0]);
/// ```
///
/// Options: `reverse` (scan from the last slice to the first), `length = N` (required when the
/// input is `()`: `fn step(c: C, _: ()) -> (C, Y)`), `unroll = K` (steps per loop iteration).
///
/// The carry and the slice are traced: arrays or trees of arrays. A loop-invariant parameter
/// is captured as it is, so a Rust scalar (`scale: f32`) stays a Rust value in the body, fixed
/// while the loop is traced. Under a stacked `#[jit]` or `#[remat]`, that attribute traces the
/// step's Rust scalars: in the body they are `&Array`, and a helper taking `f32` does not
/// accept them (see `#[jit]`'s "A scalar parameter is an `&Array` in the body"; `static = name`
/// on that attribute keeps one a Rust value).
#[proc_macro_attribute]
pub fn scan(attr: TokenStream, item: TokenStream) -> TokenStream {
    scan::scan(attr.into(), item.into()).into()
}

/// Rematerialises a function (gradient checkpointing, `jax.checkpoint`): it computes the
/// same values, but under `grad`/`vjp` its intermediate values are recomputed in the backward
/// pass instead of being kept alive from the forward pass, trading compute for memory.
///
/// ```
/// use jaxrs::prelude::*;
///
/// /// One residual block: only its inputs are kept for the backward pass.
/// #[remat]
/// fn block(x: &Array, w1: &Array, w2: &Array) -> Array {
///     x + x.matmul(w1).gelu().matmul(w2)
/// }
///
/// /// Keeps the matrix products, recomputes the elementwise work.
/// #[remat(policy = dots_saveable)]
/// fn cheaper(x: &Array, w: &Array) -> Array {
///     x.matmul(w).tanh()
/// }
///
/// /// Keeps the values marked "hidden"; `n`, the number of layers, is a Rust value.
/// #[remat(policy = save_only_these_names("hidden"), static = n)]
/// fn deep(x: &Array, w: &Array, n: usize) -> Array {
///     (0..n).fold(x.clone(), |h, _| checkpoint_name(&h.matmul(w), "hidden").relu())
/// }
///
/// let x = Array::ones(&[1, 2], DType::F32);
/// let zeros = Array::zeros(&[2, 2], DType::F32);
/// assert_eq!(block(&x, &zeros, &zeros).to_vec::<f32>(), vec![1.0, 1.0]);
/// assert_eq!(cheaper(&x, &zeros).to_vec::<f32>(), vec![0.0, 0.0]);
///
/// // The derivative of sum(x w w) at w = I: the same as without remat.
/// let dw = grad(|w: Array| deep(&x, &w, 2).sum(None, false))(Array::eye(2, DType::F32));
/// assert_eq!(dw.to_vec::<f32>(), vec![2.0; 4]);
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
/// by shared reference; a Rust scalar (`f32 f64 i32 i64 u64 u32 i16 u16 u8 i8 bool`)
/// becomes a weakly typed 0-d `Array` inside the body: `scale: f32` **is a `&Array`** there, so a helper taking
/// `f32` does not accept it (rustc's E0308, "expected `f32`, found `&Array`"); list it in
/// `static` to keep the Rust value, or let the helper take `&Array`. `&mut` parameters are
/// rejected (a rematerialised function is pure), and so are methods and
/// `async`/`const`/`extern` functions; generic functions are fine (nothing is cached per
/// function).
///
/// The function keeps its name, visibility, attributes and signature; its body becomes a call
/// of the runtime's `remat_call`. The function twin is `jaxrs::remat(f)`. Stacked with
/// `#[jit]` in either order, it gives the same program (a jitted function inlines into
/// transformations that trace it).
#[proc_macro_attribute]
pub fn remat(attr: TokenStream, item: TokenStream) -> TokenStream {
    remat::remat(attr.into(), item.into()).into()
}

/// Maps a function over the shards of its arguments on every device of a mesh, as
/// `jax.shard_map` used as a decorator: the body sees one device's pieces (local shapes) and
/// communicates with collectives over the mesh's axes (`psum(&x, "mp")`, `all_gather`,
/// `ppermute`, `axis_index`, ...); the results are put together from the devices' pieces.
///
/// ```
/// use jaxrs::prelude::*;
/// use jaxrs::P;
///
/// /// A matmul with the contraction split over "mp": each device multiplies its blocks, then
/// /// the partial products are summed over "mp".
/// #[jaxrs::shard_map(in_specs = (P!["dp", "mp"], P!["mp", None]), out_specs = P!["dp", None])]
/// fn matmul(x: &Array, w: &Array) -> Array {
///     psum(&x.matmul(w), "mp")
/// }
///
/// jaxrs::set_cpu_device_count(8)?;
/// let mesh = jaxrs::make_mesh(&[2, 4], &["dp", "mp"])?;
/// let _in_scope = jaxrs::set_mesh(&mesh); // or `mesh = mesh` in the attribute
/// let x = Array::arange(0.0, 32.0, 1.0, DType::F32).reshape([4, 8]);
/// let w = Array::ones(&[8, 3], DType::F32);
/// assert_eq!(matmul(&x, &w).to_vec::<f32>(), x.matmul(&w).to_vec::<f32>());
/// # Ok::<(), jaxrs::Error>(())
/// ```
///
/// # Options
///
/// Each takes a Rust expression, evaluated at each call (as JAX's arguments are Python
/// values):
///
/// - `in_specs = (spec, ...)`: one `PartitionSpec` (or a tree of them) per traced
///   parameter, in order, or one for all; `P![]` for a value every device holds whole;
/// - `out_specs = spec`: a prefix of the result tree;
/// - `mesh = m` (a `Mesh` or `&Mesh`): else the mesh in scope (`jaxrs::set_mesh`);
/// - `check_vma = false`: turns off the check that a result replicated over an axis does not
///   vary over it (JAX's `check_vma=False`);
/// - `static = <params>`: parameters the body sees as Rust values, as under `#[remat]`.
///
/// Parameters are traced as under `#[jit]` (arrays and trees by value or by reference, Rust
/// scalars as weakly typed arrays). It expands into `jaxrs::shard_map(closure).in_specs(..)
/// .out_specs(..).call(args)`: inside a `#[jit]` it is part of that program; outside, it runs
/// as a program of its own over the mesh (traced again at each call). Transformation
/// attributes below it apply inside it. Each misuse is a compile error at its token.
#[proc_macro_attribute]
pub fn shard_map(attr: TokenStream, item: TokenStream) -> TokenStream {
    shard_map::shard_map(attr.into(), item.into()).into()
}

/// Vectorizes a function over a batch, like `jax.vmap` as a decorator: the function keeps its
/// name and signature and takes batches where it took examples. It is traced once per call
/// for one example's shapes, and the whole batch runs as one program (matrix products
/// become batched products; no loop over the examples).
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Params {
///     w: Array,
///     b: Array,
/// }
///
/// /// The loss of one example; with #[vmap], the losses of a batch.
/// #[vmap(in_axes = (None, 0, 0))]
/// fn example_loss(params: &Params, x: &Array, y: &Array) -> Array {
///     let pred = x.matmul(&params.w) + &params.b;
///     (pred - y).powi(2).mean(None, false)
/// }
///
/// let params = Params { w: Array::ones(&[2, 1], DType::F32), b: Array::zeros(&[1], DType::F32) };
/// let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]); // [batch, in]
/// let ys = Array::from_vec(vec![3.0f32, 5.0, 10.0], &[3, 1]); // [batch, out]
/// let losses = example_loss(&params, &xs, &ys);
/// assert_eq!(losses.to_vec::<f32>(), vec![0.0, 4.0, 1.0]);
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
///
/// Under `#[jit] #[vmap(..)]`, `#[jit]` traces the function first: an unmapped Rust scalar
/// (`lr: f32`) is then an `&Array` in the body, not the `f32` (see `#[jit]`'s "A scalar
/// parameter is an `&Array` in the body"; `#[jit(static = lr)]` keeps it a Rust value).
#[proc_macro_attribute]
pub fn vmap(attr: TokenStream, item: TokenStream) -> TokenStream {
    vmap::vmap(attr.into(), item.into()).into()
}

/// Maps a function over devices, like `jax.pmap` as a decorator: the function keeps its name
/// and signature; its arguments' mapped axis (by default the leading one) is split over the
/// devices, one slice per device, each device runs the body on its slice, and the results
/// come back stacked along `out_axes` and **split over the devices** (one buffer per device,
/// a `NamedSharding` over a 1-D mesh named `axis_name`). The body is traced once per input
/// shapes and compiled as one program of one replica per device; a call is one launch over
/// all the devices.
///
/// ```
/// use jaxrs::prelude::*;
///
/// jaxrs::set_cpu_device_count(8)?;
///
/// #[derive(Tree, Clone)]
/// struct Params {
///     w: Array,
/// }
///
/// /// Each device's loss and gradient on its own slice of the batch; `params` is the same
/// /// on every device.
/// #[pmap(axis_name = "d", in_axes = (None, 0, 0))]
/// fn local_grads(params: &Params, x: &Array, y: &Array) -> (Array, Params) {
///     let loss = |p: Params| (x.matmul(&p.w) - y).powi(2).mean(None, false);
///     let (value, grads) = value_and_grad(loss)(params.clone());
///     (value, grads)
/// }
///
/// let params = Params { w: Array::ones(&[2, 1], DType::F32) };
/// let x = Array::ones(&[8, 4, 2], DType::F32); // [devices, local batch, features]
/// let y = Array::zeros(&[8, 4, 1], DType::F32);
/// let (losses, grads) = local_grads(&params, &x, &y);
/// assert_eq!(losses.shape(), &[8]); // one loss per device, each on its device
/// assert_eq!(losses.addressable_shards()[5].device, jaxrs::devices()[5]);
/// assert_eq!(grads.w.shape(), &[8, 2, 1]);
/// assert_eq!(grads.w.to_vec::<f32>(), vec![4.0; 16]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
///
/// # Options
///
/// - `axis_name = "d"`: the name of the device axis, for collectives in the body and for the
///   results' mesh.
/// - `in_axes = (None, 0, 0)`: one entry per parameter: the axis split over the devices, or
///   `None` for a parameter every device gets whole (a Rust scalar must be `None`). One axis
///   alone applies to every parameter; the default splits every parameter along axis 0
///   (static ones are never split).
/// - `out_axes = 0`: where the devices' results are stacked (a parenthesised list for a
///   tuple result; `None` for one the body makes equal on every device, e.g. by a `psum`).
/// - `donate = <params>`, `static = <params>`: as in `#[jit]`; a donated argument's buffer is
///   reused on each device.
///
/// The mapped size is the number of devices used: the first `n` local devices. The function
/// twin, with a `devices(..)` choice, is `jaxrs::pmap(f)`. `#[pmap]` applies to the same
/// functions as `#[jit]`, with the same parameter rules (a Rust scalar is traced, and is an
/// `&Array` in the body); its compile cache is `name::pmap_site()`.
#[proc_macro_attribute]
pub fn pmap(attr: TokenStream, item: TokenStream) -> TokenStream {
    pmap::pmap(attr.into(), item.into()).into()
}

/// Derives `jaxrs::Tree` for a struct: its leaves are its fields' leaves, in field order.
///
/// Works for structs with named fields, tuple structs (fields named `0`, `1`, ...) and unit
/// structs, generic ones included (each type parameter gets a `Tree` bound). Every field must
/// be a `Tree`. The structure records the struct's name and field names, and rebuilding checks
/// them.
///
/// Fields that are not arrays (Rust scalars, `bool`, `String`, and `Vec`s, tuples and
/// `Option`s of them) are static metadata, like equinox's non-array fields and flax's
/// `pytree_node=False`: they are part of the structure, not leaves, so jit compiles once per
/// value and the traced function reads them as plain Rust values; grad and vmap leave them
/// alone. Make a field an `Array` to have it traced.
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Dropout {
///     rate: f32,            // static: a Rust value inside jit
///     deterministic: bool,  // static
/// }
///
/// let d = Dropout { rate: 0.1, deterministic: true };
/// assert!(jaxrs::tree_leaves(&d).is_empty());
/// assert_eq!(d.structure().to_string(), "Dropout { rate: 0.1, deterministic: true }");
/// ```
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[derive(Tree, Clone)]
/// struct Linear {
///     w: Array,
///     b: Array,
/// }
///
/// #[derive(Tree, Clone)]
/// struct Mlp<L> {
///     layers: Vec<L>,
///     scale: Option<Array>,
/// }
///
/// let layer = Linear { w: Array::eye(2, DType::F32), b: Array::zeros(&[2], DType::F32) };
/// let def = layer.structure();
/// assert_eq!(
///     def,
///     jaxrs::TreeDef::Struct {
///         name: "Linear",
///         fields: vec![("w", jaxrs::TreeDef::Leaf), ("b", jaxrs::TreeDef::Leaf)],
///     }
/// );
///
/// let mlp = Mlp { layers: vec![layer.clone(), layer], scale: None };
/// let (leaves, def) = mlp.flatten();
/// assert_eq!(leaves.len(), 4);
/// // Transformations take and return the struct: here its leaves doubled.
/// let doubled: Mlp<Linear> = tree_map(&mlp, |leaf| leaf * 2.0);
/// assert_eq!(doubled.layers[1].w.to_vec::<f32>(), vec![2.0, 0.0, 0.0, 2.0]);
/// assert_eq!(doubled.structure(), def);
/// ```
///
/// Enums and unions are rejected: implement `Tree` by hand for them.
#[proc_macro_derive(Tree)]
pub fn derive_tree(item: TokenStream) -> TokenStream {
    tree_derive::derive(item.into()).into()
}
