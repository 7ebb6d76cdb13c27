// The expansions keep the user's own warnings, at the user's tokens, with suggestions that
// apply to the code as written: an unused parameter under every macro, an unneeded `mut`, and
// braces the user wrote themselves.
#![deny(unused_variables, unused_mut, unused_braces)]

use jaxrs::prelude::*;

#[jit] fn jitted(x: &Array, unused: &Array) -> Array { x.clone() }

#[vmap(in_axes = (0, None))] fn vmapped(x: Array, unused: f32) -> Array { x }

#[remat] fn rematted(x: Array, unused: &Array) -> Array { x }

#[scan] fn scanned(c: Array, x: &Array, unused: &Array) -> (Array, Array) { (c, x.clone()) }

#[jit] fn needless_mut(mut x: Array) -> Array { x }

#[jit] fn own_braces(x: Array) -> Array { { x } }

fn main() {
    let _ = (jitted, vmapped, rematted, scanned, needless_mut, own_braces);
}
