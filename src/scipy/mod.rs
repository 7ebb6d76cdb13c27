//! `jax.scipy`: SciPy's API over jaxrs arrays, as JAX gives it. So far [`special`]; the
//! linear algebra, signal and stats namespaces are in the manifest (API.md) as not yet.

pub mod special;
