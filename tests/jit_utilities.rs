//! `disable_jit`, `clear_caches` and `block_until_ready` over trees, as JAX's
//! `jax.disable_jit`, `jax.clear_caches` and `jax.block_until_ready`. `clear_caches` is
//! process-wide, so these tests have a binary of their own: no other test counts misses here.

use jaxrs::prelude::*;

#[jit]
fn scaled(x: &Array, s: f32) -> Array {
    // Concrete only when jit is off: the body then runs eagerly.
    if x.is_concrete() {
        assert_eq!(x.to_vec::<f32>(), vec![1.0, 2.0]);
    }
    x * s
}

#[test]
fn disable_jit_runs_the_body_eagerly_and_is_restored() {
    let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    let before = scaled::jit_site().cache_misses();
    let y = jaxrs::disable_jit(|| scaled(&x, 3.0));
    assert_eq!(y.to_vec::<f32>(), vec![3.0, 6.0]);
    assert_eq!(
        scaled::jit_site().cache_misses(),
        before,
        "nothing compiled"
    );
    // Restored after a panic inside, too.
    let caught = std::panic::catch_unwind(|| jaxrs::disable_jit(|| panic!("inside")));
    assert!(caught.is_err());
    let y = scaled(&x, 3.0);
    assert_eq!(y.to_vec::<f32>(), vec![3.0, 6.0]);
    assert!(
        scaled::jit_site().cache_misses() > before,
        "jit is on again"
    );
    // grad inside disable_jit: the jitted body is differentiated eagerly.
    let g = jaxrs::disable_jit(|| grad(|x: Array| scaled(&x, 3.0).sum(None, false))(x.clone()));
    assert_eq!(g.to_vec::<f32>(), vec![3.0, 3.0]);
}

#[jit]
fn cubed(x: &Array) -> Array {
    x * x * x
}

#[test]
fn clear_caches_makes_every_jitted_function_compile_again() {
    let x = Array::from_vec(vec![2.0f32], &[1]);
    assert_eq!(cubed(&x).to_vec::<f32>(), vec![8.0]);
    let jitted = jit(|x: Array| &x + 1.0);
    assert_eq!(jitted.call(x.clone()).to_vec::<f32>(), vec![3.0]);
    let (m1, j1) = (
        cubed::jit_site().cache_misses(),
        jitted.site().cache_misses(),
    );
    cubed(&x);
    jitted.call(x.clone());
    assert_eq!(
        cubed::jit_site().cache_misses(),
        m1,
        "a hit before clearing"
    );
    jaxrs::clear_caches();
    assert_eq!(cubed(&x).to_vec::<f32>(), vec![8.0]);
    assert_eq!(jitted.call(x.clone()).to_vec::<f32>(), vec![3.0]);
    assert_eq!(cubed::jit_site().cache_misses(), m1 + 1);
    assert_eq!(jitted.site().cache_misses(), j1 + 1);
    // And the new program is cached again.
    cubed(&x);
    assert_eq!(cubed::jit_site().cache_misses(), m1 + 1);
}

#[test]
fn block_until_ready_waits_on_every_leaf_of_a_tree() {
    let x = Array::ones(&[4], DType::F32);
    let tree = (&x * &x * 8.0, vec![&x + 1.0, x.exp()]);
    let (a, rest) = jaxrs::block_until_ready(tree);
    assert_eq!(a.to_vec::<f32>(), vec![8.0; 4]);
    assert_eq!(rest[0].to_vec::<f32>(), vec![2.0; 4]);
    assert_eq!(rest.len(), 2);
}
