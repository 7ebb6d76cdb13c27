//! The coordination service beside the engine, as JAX's: many processes of one program meet
//! through a key-value store that process 0 serves over TCP ([`kv_store`]), and
//! `jaxrs::distributed::initialize` sets each process up over it ([`distributed`]).
//!
//! A folder of its own because it talks to the network: it is written as untrusted-input
//! code (sizes bounded before allocation, every wait timed out, every connection
//! authenticated), and it needs nothing of the engine's kernel (only errors and the PJRT
//! client's options), so nothing here can reach a trace or an array.

pub mod distributed;
pub mod kv_store;
