//! Higher-order primitives: primitives that hold jaxprs of their own (loop bodies, branches,
//! a user's forward and backward functions, a rematerialised function), each with all its
//! rules (inference, lowering, JVP, VJP, `linearize`, batching) in its file. They run the
//! interpreters of [`crate::interpreters`] over their bodies.

pub mod control;
pub mod custom_jvp;
pub mod custom_vjp;
pub mod remat;
pub mod shard_map;
pub mod special;
