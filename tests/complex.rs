//! Complex numbers against JAX 0.10.2 (`tests/golden/complex.json`, written by
//! `tests/golden/gen_complex.py`): complex64 and complex128 through jnp's and lax's functions,
//! eagerly and under `jit`, their JVP and VJP (JAX's convention for complex cotangents), and
//! `vmap` (`tests/common/cases.rs`); then `grad` of real functions of complex inputs,
//! `grad_holomorphic`, and what complex numbers refuse.

mod common;

use common::cases::{a, check_file, p_bool, p_str};
use common::golden::In;
use common::panic_message;
use jaxrs::numpy as jnp;
use jaxrs::prelude::*;
use jaxrs::{lax, C128, C64};
use serde_json::Value;

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    let x0 = || a(x, 0);
    let x1 = || a(x, 1);
    let unary: Option<fn(&Array) -> Array> = match op {
        "lax.real" => Some(lax::real),
        "lax.imag" => Some(lax::imag),
        "lax.conj" => Some(lax::conj),
        "jnp.real" => Some(jnp::real),
        "jnp.imag" => Some(jnp::imag),
        "jnp.conj" => Some(jnp::conj),
        "jnp.conjugate" => Some(jnp::conjugate),
        "jnp.abs" => Some(jnp::abs),
        "jnp.negative" => Some(jnp::negative),
        "jnp.square" => Some(jnp::square),
        "jnp.sign" => Some(jnp::sign),
        "jnp.exp" => Some(jnp::exp),
        "jnp.log" => Some(jnp::log),
        "jnp.sqrt" => Some(jnp::sqrt),
        "jnp.sin" => Some(jnp::sin),
        "jnp.cos" => Some(jnp::cos),
        "jnp.tan" => Some(jnp::tan),
        "jnp.tanh" => Some(jnp::tanh),
        "jnp.sinh" => Some(jnp::sinh),
        "jnp.cosh" => Some(jnp::cosh),
        "jnp.log1p" => Some(jnp::log1p),
        "jnp.expm1" => Some(jnp::expm1),
        "jnp.reciprocal" => Some(jnp::reciprocal),
        "jnp.isfinite" => Some(jnp::isfinite),
        "jnp.iscomplex" => Some(jnp::iscomplex),
        "jnp.isreal" => Some(jnp::isreal),
        _ => None,
    };
    if let Some(f) = unary {
        return vec![f(x0())];
    }
    vec![match op {
        "jnp.angle" => jnp::angle(x0(), p_bool(p, "deg")),
        "lax.complex" => lax::complex(x0(), x1()),
        "jnp.add" => match &x[1] {
            In::Float(s) => jnp::add(x0(), *s),
            _ => jnp::add(x0(), x1()),
        },
        "jnp.subtract" => jnp::subtract(x0(), x1()),
        "jnp.multiply" => jnp::multiply(x0(), x1()),
        "jnp.divide" => jnp::divide(x0(), x1()),
        "jnp.power" => jnp::power(x0(), x1()),
        "jnp.sum" => jnp::sum(x0(), 1, false),
        "jnp.prod" => jnp::prod(x0(), 0, false),
        "jnp.mean" => jnp::mean(x0(), None, false),
        "jnp.matmul" => jnp::matmul(x0(), x1(), None),
        "jnp.vdot" => jnp::vdot(x0(), x1(), None),
        "jnp.equal" => jnp::equal(x0(), x1()),
        "astype" => x0().astype(DType::from_name(p_str(p, "dtype")).expect("dtype")),
        "real∘mul" => jnp::real(&(x0() * jnp::conj(x1()))),
        "abs∘exp" => jnp::abs(&jnp::exp(x0())),
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn complex_functions_match_jax() {
    check_file("complex", apply);
}

#[test]
fn grad_of_a_real_function_of_complex_inputs_is_jaxs() {
    let z = Array::from_vec(vec![C64::new(1.0, 2.0), C64::new(-0.5, 3.0)], &[2]);
    // JAX: grad(|z|²) = 2 conj(z); grad(re z²) = 2z; grad(3 im z) = -3i.
    let g = grad(|z: Array| (z.abs() * z.abs()).sum(None, false))(z.clone());
    assert_eq!(
        g.to_vec::<C64>(),
        vec![C64::new(2.0, -4.0), C64::new(-1.0, -6.0)]
    );
    let g = grad(|z: Array| (&z * &z).real().sum(None, false))(z.clone());
    assert_eq!(
        g.to_vec::<C64>(),
        vec![C64::new(2.0, 4.0), C64::new(-1.0, 6.0)]
    );
    let g = grad(|z: Array| (z.imag() * 3.0).sum(None, false))(z.clone());
    assert_eq!(g.to_vec::<C64>(), vec![C64::new(0.0, -3.0); 2]);
}

#[test]
fn grad_holomorphic_is_the_complex_derivative() {
    // d/dz exp(z) = exp(z); d/dz z³ = 3z².
    let z = Array::from_vec(vec![C128::new(0.3, -1.2), C128::new(2.0, 0.5)], &[2]);
    let g = jaxrs::grad_holomorphic(|z: Array| z.exp().sum(None, false))(z.clone());
    let want = z.exp().to_vec::<C128>();
    for (g, w) in g.to_vec::<C128>().iter().zip(&want) {
        assert!((g - w).norm() < 1e-12, "{g} vs {w}");
    }
    let g = jaxrs::grad_holomorphic(|z: Array| z.powi(3).sum(None, false))(z.clone());
    for (g, z) in g.to_vec::<C128>().iter().zip(z.to_vec::<C128>()) {
        assert!((g - z * z * 3.0).norm() < 1e-12);
    }
}

#[test]
fn complex_numbers_refuse_what_jax_refuses() {
    let z = Array::from_vec(vec![C64::new(1.0, 2.0)], &[1]);
    let msg = panic_message(|| {
        grad(|z: Array| z.sum(None, false))(z.clone());
    });
    assert!(
        msg.contains("real-valued outputs") && msg.contains("grad_holomorphic"),
        "{msg}"
    );
    let msg = panic_message(|| {
        z.lt(&z);
    });
    assert!(
        msg.contains("not ordered") && msg.contains("complex.rs"),
        "{msg}"
    );
    let msg = panic_message(|| {
        jnp::floor(&z);
    });
    assert!(
        msg.contains("jnp.floor") && msg.contains("complex"),
        "{msg}"
    );
    let msg = panic_message(|| {
        z.to_f64_vec();
    });
    assert!(msg.contains("to_vec::<C64>"), "{msg}");
    let msg = panic_message(|| {
        lax::complex(&Array::scalar(1i32), &Array::scalar(2i32));
    });
    assert!(msg.contains("lax.complex"), "{msg}");
}

#[test]
fn complex_promotion_follows_jaxs_lattice() {
    let c64 = Array::zeros(&[2], DType::C64);
    assert_eq!((&c64 + Array::zeros(&[2], DType::F32)).dtype(), DType::C64);
    assert_eq!((&c64 + Array::zeros(&[2], DType::F64)).dtype(), DType::C128);
    assert_eq!((&c64 + 1.0).dtype(), DType::C64);
    // JAX, unlike numpy, keeps an integer's sum with complex64 at complex64.
    assert_eq!((&c64 + Array::zeros(&[2], DType::I64)).dtype(), DType::C64);
    assert_eq!(jnp::abs(&c64).dtype(), DType::F32);
    assert_eq!(c64.real().dtype(), DType::F32);
}
