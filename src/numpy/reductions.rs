//! Reductions and statistics (`sum`, `mean`, `median`, `percentile`, the `nan*` forms),
//! cumulative functions, sorting, searching and set functions (`sort`, `argsort`,
//! `searchsorted`, `unique` with `size=`, `nonzero`), and products (`dot`, `einsum`,
//! `tensordot`, `outer`, ...).

use crate::{Array, Axes};

/// The sum over `axis` (`None`: every axis), keeping reduced axes as size 1 when `keepdims`
/// (`jnp.sum`).
#[track_caller]
pub fn sum(x: &Array, axis: impl Axes, keepdims: bool) -> Array {
    x.sum(axis, keepdims)
}
