//! `jax.scipy`: SciPy's API over jaxrs arrays, as JAX gives it. So far part of [`special`]
//! and of [`stats`]; API.md lists every name of JAX's, and what is not here yet.

pub mod linalg;
pub mod special;
pub mod stats;
