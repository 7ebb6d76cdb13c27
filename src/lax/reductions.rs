//! Reductions, cumulative reductions (`cumsum`, `cumprod`, `cummax`, `cummin`,
//! `cumlogsumexp`), `associative_scan`, `reduce`, sorting (multi-operand `sort`,
//! `sort_key_val`, `top_k`), `dot_general`, control flow re-exported (`map`, `scan`,
//! `fori_loop`, `while_loop`, `cond`, `switch`), `optimization_barrier`, `rng_bit_generator`.

use crate::Array;

/// The sum over `axes` (`lax.reduce_sum`).
#[track_caller]
pub fn reduce_sum(x: &Array, axes: &[i64]) -> Array {
    x.sum(axes, false)
}
