//! Elementwise functions (numpy's ufuncs), comparisons, bitwise and logical functions,
//! rounding, and the dtype helpers (`finfo`, `iinfo`, `promote_types`, `can_cast`, ...).

use crate::Array;

/// The square root (`jnp.sqrt`); integer inputs are promoted to the default float.
#[track_caller]
pub fn sqrt(x: &Array) -> Array {
    x.sqrt()
}
