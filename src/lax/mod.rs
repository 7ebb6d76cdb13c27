//! `jax.lax` for Rust: import it as `lax` (`use jaxrs::lax;`). The primitives as JAX's `lax`
//! exposes them: no implicit promotion (operands of one dtype, as `lax.add` requires),
//! explicit dimension numbers, and the `*_in_dim` conveniences.
//!
//! The naming and argument rules are [`jaxrs::numpy`](crate::numpy)'s. Each function is
//! checked against JAX 0.10.2 by the golden files in `tests/golden/`.
//!
//! ```
//! use jaxrs::lax;
//! use jaxrs::prelude::*;
//!
//! let x = Array::from_vec(vec![1.0f32, -2.0], &[2]);
//! assert_eq!(lax::neg(&x).to_vec::<f32>(), vec![-1.0, 2.0]);
//! ```

mod control;
mod conv;
mod elementwise;
pub mod linalg;
mod reductions;
mod shape;
mod slicing;
mod solves;
mod special;

pub use control::*;
pub use conv::*;
pub use elementwise::*;
pub use reductions::*;
pub use shape::*;
pub use slicing::*;
pub use solves::*;
pub use special::*;

/// `lax.fft` and `lax.FftType`: the transform primitive, as the crate root exports it.
pub use crate::{fft, FftType};
