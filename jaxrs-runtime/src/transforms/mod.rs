//! The user API of transformations: [`jit`](jit) with its compile cache, [`grad`] and
//! friends, [`vmap`](vmap), loops and branches ([`loops`]), [`remat`](remat), inspection
//! ([`inspect`]) and [`check_grads`](check_grads). Each traces a function over trees into a
//! jaxpr and runs an interpreter or binds a higher-order primitive.

pub mod abstract_leaf;
pub mod aot;
pub mod check_grads;
pub mod grad;
pub mod inspect;
pub mod jacobian;
pub mod jit;
pub mod loops;
pub mod pmap;
pub mod remat;
pub mod shard_map;
pub(crate) mod traced;
pub mod vmap;
