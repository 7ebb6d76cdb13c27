//! Elementwise primitives: arithmetic, comparisons, transcendental functions, bitwise ops and
//! shifts, `population_count`, `clz`, `nextafter`, `reduce_precision`, conversions, `select_n`.

use crate::Array;

/// `-x` (`lax.neg`).
#[track_caller]
pub fn neg(x: &Array) -> Array {
    -x
}
