//! Top-level Rust scalar parameters of `#[jit]` are traced, whatever their integer type, as
//! JAX traces a Python int: five calls with five values compile once. `u64`, `i16` and `u16`,
//! which have no dtype of their own in jaxrs, travel as a weak int64 (a Python int under
//! `jax_enable_x64`).

use jaxrs::prelude::*;

#[jit]
fn shift_u64(x: &Array, t: u64) -> Array {
    x + t
}

#[jit]
fn shift_i16(x: &Array, t: i16) -> Array {
    x + t
}

#[jit]
fn shift_u16(x: &Array, t: u16) -> Array {
    x * t
}

#[jit]
fn shift_i64(x: &Array, t: i64) -> Array {
    x - t
}

#[test]
fn integer_parameters_of_every_type_are_traced_with_one_compile() {
    let x = Array::from_vec(vec![1i32, 2], &[2]);
    let f = Array::from_vec(vec![0.5f32, 1.5], &[2]);
    for t in 3..8u64 {
        assert_eq!(
            shift_u64(&x, t).to_vec::<i32>(),
            vec![1 + t as i32, 2 + t as i32]
        );
        // Weak: the array's dtype wins, as with a Python int.
        assert_eq!(shift_u64(&f, t).dtype(), DType::F32);
        let s = t as i16 - 5;
        assert_eq!(
            shift_i16(&x, s).to_vec::<i32>(),
            vec![1 + s as i32, 2 + s as i32]
        );
        assert_eq!(
            shift_u16(&x, t as u16).to_vec::<i32>(),
            vec![t as i32, 2 * t as i32]
        );
        let big = (1i64 << 40) + t as i64;
        let y = shift_i64(&Array::scalar(0i64), big);
        assert_eq!(y.item::<i64>(), -big, "an i64 keeps all its bits");
    }
    assert_eq!(
        shift_u64::jit_site().cache_misses(),
        2,
        "one per array dtype"
    );
    assert_eq!(shift_i16::jit_site().cache_misses(), 1);
    assert_eq!(shift_u16::jit_site().cache_misses(), 1);
    assert_eq!(shift_i64::jit_site().cache_misses(), 1);
}

#[test]
fn a_u64_too_large_for_int64_stops_with_a_message() {
    let x = Array::from_vec(vec![1i32], &[1]);
    let err = std::panic::catch_unwind(|| shift_u64(&x, u64::MAX)).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("does not fit in int64"), "{msg}");
}

#[test]
fn block_until_ready_returns_the_array() {
    let y = jit(|x: Array| &x * 2.0).call(Array::from_vec(vec![1.0f32, 2.0], &[2]));
    let ready: &Array = y.block_until_ready();
    assert_eq!(ready.to_vec::<f32>(), vec![2.0, 4.0]);
    // As a statement, as in JAX, with nothing to unwrap.
    (&y + 1.0).block_until_ready();
    assert!(try_run(|| y.block_until_ready().to_vec::<f32>()).is_ok());
}
