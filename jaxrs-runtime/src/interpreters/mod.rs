//! The generic interpreters over a jaxpr: forward and reverse mode ([`ad`]) and batching
//! ([`batching`]), with the toolkits their rules share. They know no specific primitive: each
//! primitive's rules live in its own `impl Primitive` (in `prims/` or `higher_order/`).

pub mod ad;
pub mod batching;
pub mod partial_eval;
