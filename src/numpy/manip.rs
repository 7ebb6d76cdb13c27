//! Creating arrays, and changing their shape, order and layout: `reshape`, `concatenate`,
//! `stack` and its `vstack`/`hstack` family, `split`, `repeat`, `tile`, `roll`, `pad`,
//! `diag`, `meshgrid`, `where_`, ...

use crate::{Array, Dims};

/// `x` with a new shape of the same size; one entry may be `-1`, inferred (`jnp.reshape`).
#[track_caller]
pub fn reshape(x: &Array, shape: impl Dims) -> Array {
    x.reshape(shape)
}
