//! The engine of jaxrs: arrays, the IR, transformations, StableHLO lowering and PJRT.
//!
//! Users depend on the `jaxrs` facade crate, which re-exports the public items below; its
//! front page is the guide. The engine's modules are private: the public API is the list of
//! `pub use`s in this file, so moving an internal is never a breaking change.
//!
//! # Layers
//!
//! A user function is traced (`core/trace.rs`) into a jaxpr (`core/ir.rs`), transformed by
//! interpreters, lowered (`core/lower.rs`) to StableHLO and run through PJRT (`pjrt/`).
//! Imports point down this list (checked by `tests/layers.rs`); cycles are accepted only inside
//! `core/` and between `prims/` and `ops/`:
//!
//! | folder | what it holds |
//! |---|---|
//! | `export/` | `jax.export`'s artifacts read, run and written (`jaxrs::export`) |
//! | `random.rs` | `jax.random` on raw threefry keys, bit for bit, built on the Array API |
//! | `transforms/` | the user API: `jit` and its compile cache, `pmap`, `grad` and friends, `vmap`, loops and branches, `remat`, inspection, `check_grads` |
//! | `higher_order/` | primitives holding jaxprs (scan, while, cond, custom_jvp, custom_vjp, remat), each with all its rules |
//! | `prims/` + `ops/` | first-order primitives (one `impl Primitive` with every rule) and the numpy-style Array API built on them |
//! | `interpreters/` | the generic forward/reverse-mode and batching interpreters and the toolkits rules share |
//! | `tree.rs` | pytrees: the `Tree` trait over arrays |
//! | `core/` | the IR, the `Primitive` trait, tracing, `Array`, eager execution, lowering, the PJRT client |
//! | `error.rs`, `dtype.rs`, `aval.rs` | vocabulary |
//! | `pjrt/` | the PJRT C API (raw declarations and owned handles) and plugin provisioning |

mod aval;
mod coordination;
mod core;
mod dtype;
mod error;
pub mod export;
pub mod fs_safety;
mod higher_order;
mod interpreters;
mod kernels;
mod mesh;
mod ops;
mod pjrt;
mod prims;
pub mod random;
mod transforms;
mod tree;

// Arrays and their element types.
pub use crate::core::array::{Array, HostArray};
pub use aval::{Aval, MAX_ARRAY_BYTES};
pub use dtype::{result_type, DType, DTypeKind, Element, C128, C64};
pub use ops::{
    complex, einsum, fft, index, promote_args, promote_args_inexact, sort_multi, stop_gradient,
    where_, AtIndex, AtIndexArg, Axes, Dims, DotDims, Ellipsis, Index, IndexExpr, IndexMode,
    IntoArg, IntoIndex, IntoIndexExpr, NewAxis, SliceBound, TakeMode,
};

// `lax.gather` and `lax.scatter*` with JAX's dimension numbers and modes.
pub use ops::{
    gather, scatter, scatter_add, scatter_max, scatter_min, scatter_mul, scatter_sub,
    GatherDimensionNumbers, GatherOptions, GatherScatterMode, ScatterDimensionNumbers,
    ScatterOptions,
};
// The special functions JAX computes with loops (`jax.lax.igamma`, ...; `jaxrs::lax` has them).
pub use higher_order::special::{betainc, igamma, igamma_grad_a, igammac, random_gamma_grad};

// Convolution and pooling (`jax.lax` style; flax's pooling).
pub use ops::{
    avg_pool, conv_dimension_numbers, conv_general_dilated, conv_general_dilated_grouped,
    conv_general_permutations, max_pool, reduce_window_max, reduce_window_monoid,
    reduce_window_sum, ConvDimensionNumbers, ConvGeneralDilatedDimensionNumbers, Monoid, Padding,
};

/// The matrix decompositions (`jax.lax.linalg`'s primitives, with their JVP, VJP and batching
/// rules; host kernels on CPU). `jaxrs::lax::linalg`, `jaxrs::numpy::linalg` and
/// `jaxrs::scipy::linalg` give them JAX's signatures.
pub mod decompositions {
    pub use crate::prims::decompositions::{
        broadcast_batch, cholesky, eig, eigh, eigh_of_hermitian_part, eigvals, eye, hermitian_part,
        hessenberg, lu, lu_solve, mh, mt, qr, schur, svd, svdvals, triangular_recurrence,
        triangular_solve, TriangularRecurrence,
    };
}

// Devices and how arrays lie on them.
pub use crate::core::client::{
    current_default_device, default_device, device_count, devices, local_device_count,
    local_devices, process_count, process_index, set_cpu_device_count, DefaultDeviceGuard,
};
// JAX's deprecated aliases of the process counts: they warn where used, not here.
#[allow(deprecated)]
pub use crate::core::client::{host_count, host_id, host_ids};
pub use crate::core::compile_cache::{compile_cache_stats, CompileCacheStats};
pub use crate::core::mesh_api::{
    get_abstract_mesh, get_mesh, make_array_from_callback, make_array_from_process_local_data,
    make_array_from_single_device_arrays, make_mesh, make_mesh_from, make_single_device_sharding,
    process_indices, set_mesh, use_mesh, AbstractDevice, AbstractMesh,
};
pub use crate::core::sharding::{
    device_put, try_device_put, AxisType, Mesh, MeshGuard, NamedSharding, PartitionDim,
    PartitionSpec, Shard, Sharding, Shardings,
};
pub use crate::core::sharding_types::typeof_;
pub use pjrt::Device;
pub use prims::sharding::{
    auto_axes, explicit_axes, reshard, with_out_sharding, with_sharding_constraint,
};

/// Many processes, in the style of `jax.distributed`: [`initialize`](distributed::initialize)
/// joins this process to a program of several (process 0 serves a coordination key-value
/// store over TCP, every process connects to it), and creates the PJRT client for this process
/// with the store behind the plugin's key-value callbacks, as XLA's GPU plugin needs for
/// `num_nodes` > 1. The store ([`KeyValueStore`](distributed::KeyValueStore): put, blocking
/// get with a timeout, try_get, delete, barriers; keys and values are bytes) is the program's
/// too. Every connection proves a shared secret (`JAXRS_COORDINATOR_TOKEN`, or
/// [`Config`](distributed::Config)) before its first request; frames, connections and the
/// store are bounded; a process that dies makes the others' waits end at once with
/// [`Error::PeerFailed`].
///
/// XLA's CPU plugin has no cross-process collectives: there, `initialize` with more than one
/// process is [`Error::MultiProcessUnsupported`]; use one process with several CPU devices.
///
/// ```
/// use std::time::Duration;
///
/// // Process `id` of `n`, all given the same coordinator address (here: one process).
/// let (address, n, id) = ("127.0.0.1:0", 1, 0);
/// jaxrs::distributed::initialize(address, n, id)?;
/// let store = jaxrs::distributed::key_value_store().unwrap();
/// store.put(format!("hello/{id}"), b"\0binary\xff")?;
/// for other in 0..n {
///     let value = store.get(format!("hello/{other}"), Duration::from_secs(60))?;
///     assert_eq!(value, b"\0binary\xff");
/// }
/// jaxrs::distributed::shutdown()?;
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub mod distributed {
    pub use crate::coordination::distributed::{
        initialize, initialize_with_config, initialize_with_timeout, key_value_store, shutdown,
    };
    #[doc(hidden)]
    pub use crate::coordination::kv_store::authenticated_connection;
    pub use crate::coordination::kv_store::{Config, KeyValueStore, Service};
}

// Transformations.
pub use transforms::check_grads::{check_grads, check_grads_with, Modes};
pub use transforms::grad::{
    custom_jvp, custom_vjp, grad, grad_holomorphic, jvp, linear_transpose, linearize,
    value_and_grad, value_and_grad_argnums, value_and_grad_aux, vjp, Argnum, Argnums, CustomJvp,
    CustomVjp, Linear, LinearTranspose, Pullback, TupleArgs,
};
pub use transforms::jacobian::{hessian, jacfwd, jacobian, jacrev};
pub use transforms::jit::{clear_caches, disable_jit, jit, JitSite, Jitted, StaticArgs};
pub use transforms::loops::{cond, fori_loop, scan, scan_with, switch, while_loop, ScanOptions};
pub use transforms::pmap::{pmap, PmapSite, Pmapped};
pub use transforms::remat::{checkpoint_name, remat, Remat, RematPolicy};
pub use transforms::shard_map::{shard_map, smap, Infer, ShardMap, SmapInAxes};
pub use transforms::vmap::{vmap, vmap_named, vmap_sized, AxisSpec};

// Collectives over named axes (vmap_named, pmap).
pub use prims::barrier::optimization_barrier;
pub use prims::collective::{
    all_gather, all_to_all, axis_index, axis_size, pbroadcast, pcast, pmax, pmean, pmin, ppermute,
    pshuffle, psum, psum_scatter, pswapaxes,
};
pub use prims::fft::FftType;
pub use prims::rng::{rng_bit_generator, RandomAlgorithm};

// Pytrees.
pub use tree::{
    block_until_ready, device_get, tree_leaves, tree_map, tree_map2, tree_map_n, tree_paths,
    tree_unflatten, try_device_get, try_tree_unflatten, StaticValue, Tree, TreeDef, TreeMismatch,
};

/// JAX's tree utilities over any leaf type, the facade's `jaxrs::tree` and `jaxrs::tree_util`.
pub mod tree_utils {
    pub use crate::tree::{
        all, all_leaves, broadcast, flatten, flatten_one_level, flatten_one_level_with_keys,
        flatten_up_to, flatten_with_path, keystr, keystr_simple, leaf_key_paths, leaves,
        leaves_with_path, map_is_leaf, map_to, map_with_path, reduce, reduce_associative,
        structure, transpose, tree_of, treedef_children, treedef_is_leaf, treedef_tuple,
        with_is_leaf, KeyEntry, KeyPath, Leaves, TreeOf, Truthy,
    };
}

pub mod profiler {
    //! The profiler (`jax.profiler`): host spans of what jaxrs does for each jitted function —
    //! trace, lower, compile (and whether the persistent compile cache answered), execute — and of
    //! eager operations and host-device transfers, written as a Chrome / Perfetto trace (JSON)
    //! with a per-function summary.
    //!
    //! Every span is also a `tracing` span (target `jaxrs::profile`), so a subscriber of the
    //! user's sees them too; the trace file needs none. Outside a trace a span costs one atomic
    //! load besides `tracing`'s own check.
    //!
    //! Device activity comes through PJRT's profiler extension where a plugin has it; XLA's CPU
    //! plugin (0.11.2) has none (its extensions are the FFI, layouts, memory descriptions and
    //! phase compile ones), so on CPU the trace holds the host's side only, where a program's
    //! execution shows as its `execute` span (a launch that waits for the device when the
    //! program is the first of its executable, else returns once it is queued).
    //!
    //! ```
    //! use jaxrs::prelude::*;
    //! use jaxrs::profiler::{self, TraceAnnotation};
    //!
    //! let dir = std::env::temp_dir().join(format!("jaxrs-profile-doc-{}", std::process::id()));
    //! let f = jit(|x: Array| x.sin().sum(None, false));
    //! let trace = profiler::trace(&dir)?;
    //! for step in 0..3 {
    //!     let _step = profiler::StepTraceAnnotation::new("train", step);
    //!     let _: Array = f.call(Array::ones(&[8], DType::F32));
    //! }
    //! {
    //!     let _eval = TraceAnnotation::new("eval");
    //!     let _: Array = f.call(Array::zeros(&[8], DType::F32));
    //! }
    //! let summary = trace.stop()?;
    //! let site = &summary.sites[&format!("jit `{}`", f.site().name())];
    //! assert_eq!((site.compiles, site.executes), (1, 4));
    //! assert!(std::fs::read_to_string(&summary.path)?.contains("\"traceEvents\""));
    //! # std::fs::remove_dir_all(&dir)?;
    //! # Ok::<(), Box<dyn std::error::Error>>(())
    //! ```

    pub use crate::core::profile::{
        start_trace, stop_trace, trace, SiteSummary, StepTraceAnnotation, TraceAnnotation,
        TraceGuard, TraceSummary,
    };
}

// Looking inside: the IR and the StableHLO of a function.
pub use crate::core::ir::{ClosedJaxpr, Jaxpr};
pub use crate::core::trace::{named_call, named_scope};
pub use transforms::aot::{Compiled, Lowered};
pub use transforms::inspect::{
    eval_shape, make_jaxpr, stablehlo, AbstractLeaf, ShapeDtypeStruct, ShardedShapeDtypeStruct,
};

// Environmental failures.
pub use crate::core::client::try_run;
pub use prims::debug::{debug_print, set_debug_print_hook, DebugPrintHook};

/// Process-wide switches, as JAX's `jax.config`.
pub mod config {
    pub use crate::core::debug_nans::{debug_nans, set_debug_nans};
}

/// JAX's `jax.debug.print`: prints the format string with each `{}` replaced by the next
/// value (an [`Array`] or `&Array`), at run time: eagerly at once, and inside `jit`, `vmap`
/// (once per example), `scan` (once per iteration) and `grad` (the primal values) each time
/// the compiled program runs, with that run's values. Lines go to stdout, or to
/// [`set_debug_print_hook`]'s hook.
///
/// ```
/// use jaxrs::prelude::*;
///
/// #[jit]
/// fn step(x: &Array) -> Array {
///     let y = x * 2.0;
///     debug_print!("y = {} from x = {}", y, x);
///     y
/// }
/// let y = step(&Array::from_vec(vec![1.0f32, 2.0], &[2]));
/// assert_eq!(y.to_vec::<f32>(), vec![2.0, 4.0]); // printed `y = [2. 4.] from x = [1. 2.]`
/// ```
#[macro_export]
macro_rules! debug_print {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        $crate::debug_print(
            $fmt,
            &[$(::std::borrow::Borrow::<$crate::Array>::borrow(&$arg)),*],
        )
    };
}
pub use error::{Error, ErrorCode, ExportError, Result};

/// The door to the engine for the macros' expansions, jaxrs's own tests and benches. Not part
/// of the public API: anything here may change in any release.
#[doc(hidden)]
pub mod internals {
    /// What the attribute macros' expansions call.
    pub mod macro_support {
        pub use crate::transforms::jit::{
            jit_call, jit_call_sharded, shardings, FloatKey, JitParams, JitShardings,
        };
        pub use crate::transforms::loops::scan_with;
        pub use crate::transforms::pmap::{pmap_call, PmapSpec};
        pub use crate::transforms::remat::remat_call;
        pub use crate::transforms::shard_map::shard_map;
        pub use crate::transforms::vmap::{vmap_call, VmapNames};
        pub use crate::tree::{next_leaf, TracedScalar};
    }
    /// Binding a primitive by hand (tests of batching rules).
    pub use crate::core::trace::{bind1, Operand};
    /// Primitives that tests bind directly.
    pub mod prims {
        pub use crate::prims::*;
    }
    /// Named axes in scope while tracing (the collectives' tests trace as pmap will).
    pub use crate::core::axes;
    /// Lowering a jaxpr by hand (the replica-lowered collectives' tests).
    pub use crate::core::client::client;
    pub use crate::core::lower::{compile_options, lower_jaxpr, LowerOptions};
    /// The PJRT layer under the engine (its own tests; the dispatch bench's raw floor).
    pub mod pjrt {
        pub use crate::pjrt::*;
    }
}
