//! `jax.numpy` for Rust: import it as `jnp` (`use jaxrs::numpy as jnp;`) and port by
//! rewriting, not redesigning: `jnp.concatenate([a, b], axis=0)` is
//! `jnp::concatenate(&[&a, &b], 0)`.
//!
//! The rules, said once:
//! - **Names** are JAX's. A name that is a Rust keyword takes a trailing underscore
//!   (`jnp.where` is [`where_`]); nothing else is renamed.
//! - **Arguments** come in JAX's order. An array argument is `&Array`; where JAX takes an
//!   array or a Python scalar (`jnp.maximum(x, 0)`), the argument is `impl IntoArg`, so a
//!   Rust scalar is a weakly typed operand, as a Python scalar is in JAX. A keyword argument
//!   with a default is an `Option` (or a type with a `None`-like default such as
//!   [`Axes`](crate::Axes) for `axis=None`) when a function has one or two of them, and an
//!   options struct implementing `Default` (`FooOptions { keepdims: true, ..Default::default() }`)
//!   when it has more.
//! - **Values** are JAX's with `jax_enable_x64` (float64 and int64 stay 64-bit), its type
//!   promotion and weak types included; each function is checked against JAX 0.10.2 by the
//!   golden files in `tests/golden/`.
//! - **One implementation**: where `jax.Array` has the same operation as a method
//!   (`x.sum()`, `x.reshape(..)`), the [`Array`](crate::Array) method and the function here
//!   are one implementation and a one-line call.
//!
//! These functions are composites written with the public array API, as JAX's `jnp` is
//! written over `lax`; the primitives they bind live in the runtime (`jaxrs-runtime/src/prims`).
//!
//! ```
//! use jaxrs::numpy as jnp;
//! use jaxrs::prelude::*;
//!
//! let x = Array::from_vec(vec![1.0f32, 4.0, 9.0], &[3]);
//! assert_eq!(jnp::sqrt(&x).to_vec::<f32>(), vec![1.0, 2.0, 3.0]);
//! ```

pub mod fft;
pub mod linalg;
mod manip;
mod math;
mod products;
mod reductions;
mod windows;

pub use manip::*;
pub use math::*;
pub use products::*;
pub use reductions::*;
pub use windows::*;

/// `jnp.result_type`: the dtype JAX's promotion gives the operands together.
pub use crate::result_type;
