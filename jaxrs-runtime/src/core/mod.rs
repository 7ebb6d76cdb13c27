//! The kernel of the engine: the IR ([`ir`]), the primitive trait ([`primitive`]), tracing
//! ([`trace`]), the one `Array` type ([`array`]), eager execution ([`eager`]), StableHLO
//! lowering ([`lower`]), the process-wide PJRT client ([`client`]), how arrays lie on
//! devices ([`sharding`]) and JAX's mesh scopes and arrays made of pieces ([`mesh_api`]), the named axes in scope while tracing ([`axes`]) the array
//! printer (`print`) and the profiler's host spans ([`profile`]).
//!
//! These modules import each other (an `Array` op binds a primitive, which records into the
//! trace or runs eagerly, which lowers and executes): the one accepted import cycle, as in
//! JAX's `core.py` and `dispatch.py`. Nothing here knows a specific primitive.

pub mod array;
pub mod axes;
pub mod client;
pub mod compile_cache;
pub mod debug_nans;
pub mod eager;
pub mod ir;
pub mod lower;
pub mod mesh_api;
pub mod primitive;
pub(crate) mod print;
pub mod profile;
pub mod sharding;
pub mod sharding_types;
pub(crate) mod spmd;
pub mod trace;
