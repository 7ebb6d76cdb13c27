//! # jaxrs
//!
//! JAX's composable transformations for Rust. Annotate plain Rust functions over arrays with
//! attribute macros, and they are traced into a small IR, transformed, lowered to StableHLO,
//! and compiled and run by XLA through a PJRT plugin (CPU by default; XLA's CPU plugin is
//! downloaded once, verified, and cached on first use).
//!
//! ## A tour
//!
//! A linear model trained by gradient descent. `sgd_step` is compiled once per input
//! signature; `params` is donated, so XLA reuses its buffers for the result and Rust's
//! ownership stops the caller from touching them again; `lr` is traced, so a new learning
//! rate does not recompile.
//!
//! ```
//! use jaxrs::prelude::*;
//!
//! #[derive(Tree, Clone)]
//! struct Params { w: Array, b: Array }
//!
//! fn loss(p: &Params, x: &Array, y: &Array) -> Array {
//!     (x.matmul(&p.w) + &p.b - y).powi(2).mean(None, false)
//! }
//!
//! #[jit(donate = params)]
//! fn sgd_step(params: Params, x: &Array, y: &Array, lr: f32) -> (Params, Array) {
//!     let (value, grads) = value_and_grad(|p: Params| loss(&p, x, y))(params.clone());
//!     (tree_map2(&params, &grads, |p, g| p - g * lr), value)
//! }
//!
//! // y = 2 x + 1 on four points.
//! let x = Array::from_vec(vec![0.0f32, 1.0, 2.0, 3.0], &[4, 1]);
//! let y = Array::from_vec(vec![1.0f32, 3.0, 5.0, 7.0], &[4, 1]);
//! let mut params = Params { w: Array::zeros(&[1, 1], DType::F32), b: Array::zeros(&[1], DType::F32) };
//! let mut first = None;
//! for _ in 0..200 {
//!     let (next, value) = sgd_step(params, &x, &y, 0.1);
//!     first.get_or_insert(value.item::<f32>());
//!     params = next;
//! }
//! let last = loss(&params, &x, &y).item::<f32>();
//! assert!(last < 1e-3 * first.unwrap(), "{last}");
//! assert!((params.w.item::<f32>() - 2.0).abs() < 0.05);
//! ```
//!
//! Attributes stack like decorators: `#[jit] #[vmap(in_axes = (None, 0))] fn f` is
//! `jit(vmap(f))`. Transformations compose at call sites too: `jit(vmap(grad(f)))`.
//!
//! ## Items by purpose
//!
//! - **Arrays**: [`Array`] (one type for device arrays and traced values: numpy broadcasting,
//!   JAX's weak types and promotion), [`DType`], [`where_`], [`stop_gradient`], [`DotDims`].
//! - **Indexing** as numpy's and JAX's: [`s!`] builds an [`IndexExpr`] of [`Index`] entries;
//!   [`Array::index`] (or [`index`]) reads `x[...]`, [`Array::at`] updates `x.at[...]` with
//!   an [`IndexMode`].
//! - **Convolution and pooling** (`jax.lax` style): [`conv_general_dilated`] with [`Padding`],
//!   [`reduce_window_max`], [`reduce_window_sum`]; flax's [`max_pool`] and [`avg_pool`].
//!   [`lax`] has the rest of lax's family with JAX's argument lists (`conv`,
//!   `conv_transpose`, `conv_general_dilated_patches`/`_local`, the dimension numbers and
//!   shape tuples, the generic `reduce_window`).
//! - **Compiling**: [`macro@jit`] and [`fn@jit`] (a compile cache keyed by shapes, dtypes and
//!   static arguments; donation), [`JitSite`] (cache counters and the reason of the last
//!   recompile), [`Jitted`].
//! - **Differentiating**: [`grad`], [`value_and_grad`], [`value_and_grad_aux`],
//!   [`value_and_grad_argnums`] with [`Argnum`], [`vjp`], [`jvp`], [`custom_jvp`], [`custom_vjp`],
//!   [`check_grads`].
//! - **Batching**: [`macro@vmap`] and [`fn@vmap`], [`vmap_sized`], [`vmap_named`] (a named
//!   batch axis), [`AxisSpec`] (`in_axes` / `out_axes`).
//! - **Collectives** over a named axis: [`psum`], [`pmean`], [`pmax`], [`pmin`],
//!   [`all_gather`], [`psum_scatter`], [`ppermute`], [`all_to_all`], [`axis_index`],
//!   [`axis_size`].
//! - **Loops and branches**: [`macro@scan`] and [`fn@scan`], [`scan_with`] ([`ScanOptions`]:
//!   reverse, length, unroll), [`fori_loop`], [`while_loop`], [`cond`], [`switch`].
//! - **Memory**: [`macro@remat`] and [`fn@remat`] with a [`RematPolicy`], [`checkpoint_name`].
//! - **Pytrees**: [`Tree`] and `#[derive(Tree)]`, [`tree_map`], [`tree_map2`],
//!   [`tree_map_n`], [`tree_paths`], [`tree_leaves`], [`tree_unflatten`], [`TreeDef`]; the
//!   rest of JAX's tree utilities in [`tree`] (`jax.tree`) and [`tree_util`]
//!   (`jax.tree_util`), over trees with leaves of any type ([`tree::TreeOf`]).
//! - **Devices**: [`devices`], [`local_devices`], [`device_count`],
//!   [`local_device_count`], [`process_index`], [`process_count`], [`set_cpu_device_count`]
//!   (or `JAXRS_CPU_DEVICES`), [`Device`]; meshes by [`make_mesh`], scoped by [`set_mesh`] /
//!   [`use_mesh`] ([`get_mesh`], [`get_abstract_mesh`]); lay arrays out with [`device_put`] /
//!   [`try_device_put`] and a [`Sharding`] ([`Mesh`] + [`PartitionSpec`], written [`P!`] =
//!   [`NamedSharding`]), or assemble them from pieces ([`make_array_from_callback`],
//!   [`make_array_from_single_device_arrays`]); read them back by
//!   [`Array::addressable_shards`] ([`Shard`]).
//!   [`macro@pmap`] and [`fn@pmap`] ([`Pmapped`], [`PmapSite`]) map a function over devices
//!   as one replica program, its results left split over them; inside, the collectives
//!   ([`psum`], [`pmean`], [`all_gather`], [`ppermute`], [`axis_index`], ...) work over its
//!   named axis, as they do over [`vmap_named`]'s.
//! - **pjit**: `#[jit(in_shardings = .., out_shardings = ..)]` and [`Jitted::in_shardings`] /
//!   [`Jitted::out_shardings`] / [`Jitted::mesh`] ([`Shardings`], a prefix of the argument
//!   tree) compile one SPMD program over a [`Mesh`] (Shardy annotations, one partition per
//!   device, XLA's collectives); a jit given sharded arrays runs SPMD over their mesh. Bare
//!   [`P!`] specs refer to the mesh in scope ([`set_mesh`]; [`Mesh::enter`] is JAX's older `with mesh:`);
//!   [`with_sharding_constraint`] pins a value's layout inside. An eager op on a sharded
//!   array runs SPMD over its mesh too, its result staying sharded.
//! - **Explicit sharding** (JAX's sharding in types): over a mesh's [`AxisType::Explicit`]
//!   axes ([`Mesh::with_axis_types`]) a traced value's sharding is part of its type
//!   ([`typeof_`], `f32[8@dp,4]`), each operation types its result by its sharding rule, an
//!   ambiguous one asks for [`reshard`] or an output sharding ([`lax::dot_general_sharded`],
//!   [`numpy::matmul_sharded`], [`numpy::einsum_sharded`], [`with_out_sharding`]).
//! - **Many processes**: [`distributed::initialize`] (as `jax.distributed.initialize`) and the
//!   coordination store [`distributed::KeyValueStore`].
//! - **Looking inside**: [`make_jaxpr`] (the IR), [`stablehlo`] (the program XLA compiles,
//!   each op located at its Rust line), [`JitSite::last_stablehlo`] and
//!   [`JitSite::last_optimized_program`] (what a jitted function compiled to).
//! - **Exporting**: [`export`] reads `jax.export`'s artifacts and runs them
//!   (`export::deserialize(&bytes)?.call(&args)`), and writes jaxrs functions as artifacts JAX
//!   loads and calls (`export::export(f, &args)?.serialize()`).
//! - **Ahead of time and profiling**: `jitted.lower(&shapes)?.compile()` ([`Lowered`],
//!   [`Compiled`]: `jax.stages`), and [`profiler`] (`jax.profiler`: host spans of trace,
//!   lower, compile, execute and transfers as a Perfetto trace, with a per-function summary).
//! - **Training data**: [`data`] (readers for MNIST-5k, UCI digits and tiny Shakespeare,
//!   key-shuffled batches, padding masks, host-to-device prefetch).
//! - **Randomness**: [`random`] (threefry keys; every draw equals `jax.random`'s bit for bit).
//! - **Training**: [`nn`] (initialisers, layers, attention, recurrent cells, losses, as flax
//!   and optax give them), [`optim`] (optax-style optimizers and schedules over trees),
//!   [`checkpoint`] (trees saved and loaded as safetensors).
//! - **Errors**: a programmer's mistake (shapes, dtypes, axes) panics with the op, the shapes
//!   and your source line; environmental failures (no plugin, compile failure, out of memory)
//!   are [`Error`] values, which [`try_run`] returns instead of panicking.
//!
//! [`prelude`] brings what a typical program uses into scope.

// `#[derive(Tree)]` and the attribute macros name `::jaxrs`; this lets the facade's own
// modules (nn, optim, checkpoint, data) use them as a user would.
extern crate self as jaxrs;

pub use jaxrs_macros::{jit, pmap, remat, scan, shard_map, vmap, Tree};

pub use jaxrs_runtime::{
    // Collectives over named axes.
    all_gather,
    all_to_all,
    axis_index,
    axis_size,
    pmax,
    pmean,
    pmin,
    ppermute,
    psum,
    psum_scatter,
};
pub use jaxrs_runtime::{
    // Devices and shardings.
    auto_axes,
    current_default_device,
    default_device,
    device_count,
    device_put,
    devices,
    explicit_axes,
    get_abstract_mesh,
    get_mesh,
    local_device_count,
    local_devices,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
    make_mesh_from,
    make_single_device_sharding,
    process_count,
    process_index,
    process_indices,
    reshard,
    set_cpu_device_count,
    set_mesh,
    shard_map,
    smap,
    try_device_put,
    typeof_,
    use_mesh,
    with_out_sharding,
    with_sharding_constraint,
    AbstractDevice,
    AbstractMesh,
    AxisType,
    DefaultDeviceGuard,
    Device,
    Infer,
    Mesh,
    MeshGuard,
    NamedSharding,
    PartitionDim,
    PartitionSpec,
    Shard,
    ShardMap,
    Shardings,
    SmapInAxes,
    P,
};
pub use jaxrs_runtime::{
    // Convolution and pooling.
    avg_pool,
    conv_general_dilated,
    max_pool,
    reduce_window_max,
    reduce_window_sum,
    Padding,
};
pub use jaxrs_runtime::{
    block_until_ready, checkpoint_name, clear_caches, device_get, disable_jit, eval_shape,
    linear_transpose, linearize, make_jaxpr, named_call, named_scope, stablehlo, try_device_get,
    AbstractLeaf, ClosedJaxpr, Compiled, HostArray, Jaxpr, Linear, LinearTranspose, Lowered,
    ShapeDtypeStruct, ShardedShapeDtypeStruct,
};
pub use jaxrs_runtime::{
    // Transformations.
    check_grads,
    check_grads_with,
    cond,
    custom_jvp,
    custom_vjp,
    fori_loop,
    grad,
    grad_holomorphic,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jit,
    jvp,
    pmap,
    remat,
    scan,
    scan_with,
    switch,
    value_and_grad,
    value_and_grad_argnums,
    value_and_grad_aux,
    vjp,
    vmap,
    vmap_named,
    vmap_sized,
    while_loop,
    Argnum,
    Argnums,
    AxisSpec,
    CustomJvp,
    CustomVjp,
    JitSite,
    Jitted,
    Modes,
    PmapSite,
    Pmapped,
    Pullback,
    Remat,
    RematPolicy,
    ScanOptions,
    StaticArgs,
    TupleArgs,
};
pub use jaxrs_runtime::{compile_cache_stats, CompileCacheStats};
pub use jaxrs_runtime::{
    // Arrays.
    complex,
    einsum,
    fft,
    index,
    s,
    stop_gradient,
    where_,
    Array,
    AtIndex,
    AtIndexArg,
    Aval,
    Axes,
    DType,
    DTypeKind,
    Dims,
    DotDims,
    Element,
    Ellipsis,
    FftType,
    Index,
    IndexExpr,
    IndexMode,
    IntoArg,
    IntoIndex,
    IntoIndexExpr,
    NewAxis,
    Sharding,
    SliceBound,
    TakeMode,
    C128,
    C64,
    // The largest array any operation may make (bytes); past it, `Error::ShapeTooLarge`.
    MAX_ARRAY_BYTES,
};
// JAX's deprecated aliases of the process counts (`jax.host_count`, ...): they warn where used.
#[allow(deprecated)]
pub use jaxrs_runtime::{host_count, host_id, host_ids};
// JAX's promotion (`jnp.result_type`, x64 semantics): the dtype and weak type of an operation.
pub use jaxrs_runtime::result_type;
pub use jaxrs_runtime::{
    tree_leaves, tree_map, tree_map2, tree_map_n, tree_paths, tree_unflatten, try_tree_unflatten,
    StaticValue, Tree, TreeDef, TreeMismatch,
};
pub use jaxrs_runtime::{try_run, Error, ErrorCode, ExportError, Result};

// `jax.export`'s artifacts, both ways: `jaxrs::export::deserialize(bytes)?.call(&args)` and
// `jaxrs::export::export(f, &args)?.serialize()`.
pub use jaxrs_runtime::export;

// `jax.profiler`: `profiler::trace(dir)`, `TraceAnnotation`, `StepTraceAnnotation`.
pub use jaxrs_runtime::profiler;

// Looking inside compiled code: `debug_print!` (JAX's `jax.debug.print`) and the NaN checker
// (`jaxrs::config::set_debug_nans`, JAX's `jax_debug_nans`).
pub use jaxrs_runtime::{config, debug_print, set_debug_print_hook, DebugPrintHook};

// Many processes: `jaxrs::distributed::initialize` and the coordination store.
pub use jaxrs_runtime::distributed;

// Pseudo-random numbers, bit for bit as `jax.random`: `jaxrs::random::uniform(&key, ...)`.
pub use jaxrs_runtime::random;

// The training kit, as flax and optax give it to JAX users, written with the public API above.
pub mod checkpoint;
pub mod data;
pub mod lax;
pub mod nn;
pub mod numpy;
pub mod optim;
pub mod scipy;
pub mod tree;
pub mod tree_util;

/// Everything a typical program needs, and everything the README uses:
/// `use jaxrs::prelude::*;`.
pub mod prelude {
    pub use crate::{
        all_gather, all_to_all, axis_index, axis_size, check_grads, checkpoint_name, cond,
        custom_jvp, custom_vjp, debug_print, fori_loop, grad, jit, jvp, make_jaxpr, pmap, pmax,
        pmean, pmin, ppermute, psum, psum_scatter, remat, s, scan, stablehlo, stop_gradient,
        switch, tree_map, tree_map2, tree_map_n, try_run, value_and_grad, value_and_grad_argnums,
        value_and_grad_aux, vjp, vmap, vmap_named, vmap_sized, where_, while_loop, Argnum, Array,
        DType, Index, IndexMode, NewAxis, RematPolicy, TakeMode, Tree,
    };
}

/// The README's code blocks, compiled and run as this crate's doctests (`cargo test --doc`):
/// rustdoc tests every ```` ```rust ```` block and skips those fenced with another language.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The engine's internals, for jaxrs's own tests and benches. Not part of the public API.
#[doc(hidden)]
pub use jaxrs_runtime::internals;

/// Items the macros' expansions use. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use jaxrs_runtime::internals::macro_support::{
        jit_call, jit_call_sharded, next_leaf, pmap_call, remat_call, scan_with, shard_map,
        shardings, vmap_call, FloatKey, JitParams, JitShardings, PmapSpec, TracedScalar, VmapNames,
    };
    pub use jaxrs_runtime::{
        Array, JitSite, Mesh, PmapSite, RematPolicy, ScanOptions, Shardings, Tree, TreeDef,
        TreeMismatch,
    };

    /// The types of Rust-scalar parameters once a transformation traces them: `Array`s. A
    /// stacked attribute (`#[jit] #[vmap(..)] fn f(x: &Array, lr: f32)`) sees `lr` as
    /// `&traced_scalar::f32`, so it still knows `lr` is a scalar (rank 0).
    #[allow(non_camel_case_types)]
    pub mod traced_scalar {
        pub type f32 = jaxrs_runtime::Array;
        pub type f64 = jaxrs_runtime::Array;
        pub type i32 = jaxrs_runtime::Array;
        pub type i64 = jaxrs_runtime::Array;
        pub type u32 = jaxrs_runtime::Array;
        pub type u8 = jaxrs_runtime::Array;
        pub type i8 = jaxrs_runtime::Array;
        pub type bool = jaxrs_runtime::Array;
    }
}
