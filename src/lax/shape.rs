//! Shape primitives and their conveniences: `broadcast_in_dim`, `reshape`, `transpose`,
//! `pad` with interior padding, `slice`, `dynamic_slice`, the `*_in_dim` forms, `concatenate`,
//! `rev`, `squeeze`, `expand_dims`, `iota`, `full`, ...

use crate::{Array, Dims};

/// `x` with a new shape of the same size (`lax.reshape`, without `dimensions`).
#[track_caller]
pub fn reshape(x: &Array, new_sizes: impl Dims) -> Array {
    x.reshape(new_sizes)
}
