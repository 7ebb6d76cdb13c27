//! `jaxrs::lax`'s contractions and control (`dot_general` with `preferred_element_type`,
//! `associative_scan`, `map`, the loops and branches under lax's names) against JAX 0.10.2
//! (`tests/golden/lax_control.json`, written by `tests/golden/gen_lax_control.py`): values
//! eagerly and under `jit`, JVP and VJP, `check_grads`, and `vmap` with the batch axis first
//! and last (`tests/common/cases.rs`).

mod common;

use common::cases::{a, check_file, p_bool, p_i64s, p_opt_i64, p_str};
use common::golden::{dtype, In};
use jaxrs::lax;
// Not the prelude: these calls name lax's paths (`lax::scan`, `lax::psum`, ...).
use jaxrs::{vmap_named, Array, DType, DotDims};
use serde_json::Value;

fn pet(p: &Value) -> Option<DType> {
    p.get("preferred_element_type").map(dtype)
}

fn usizes(p: &Value, key: &str) -> Vec<usize> {
    p[key]
        .as_array()
        .unwrap_or_else(|| panic!("param {key}"))
        .iter()
        .map(|v| v.as_u64().expect("dim") as usize)
        .collect()
}

fn combine(name: &str, x: Array, y: Array) -> Array {
    match name {
        "add" => x + y,
        "mul" => x * y,
        "max" => x.maximum(&y),
        "or" => x.logical_or(&y),
        other => panic!("unknown fn {other}"),
    }
}

fn mapped(x: Array) -> Array {
    x.sin() * x.sum(None, false)
}

fn algorithm(name: &str) -> lax::RandomAlgorithm {
    match name {
        "default" => lax::RandomAlgorithm::RngDefault,
        "three_fry" => lax::RandomAlgorithm::RngThreeFry,
        "philox" => lax::RandomAlgorithm::RngPhilox,
        other => panic!("unknown algorithm {other}"),
    }
}

fn apply(op: &str, p: &Value, x: &[In]) -> Vec<Array> {
    if op == "lax.rng_bit_generator" {
        let shape: Vec<usize> = p_i64s(p, "shape").iter().map(|&d| d as usize).collect();
        let dtype = DType::from_name(p_str(p, "dtype")).expect("dtype");
        let (key, bits) =
            lax::rng_bit_generator(a(x, 0), &shape, dtype, algorithm(p_str(p, "algorithm")));
        return vec![key, bits];
    }
    if op == "lax.platform_dependent" {
        let (sin, tanh, cos) = (|x: Array| x.sin(), |x: Array| x.tanh(), |x: Array| x.cos());
        let x0 = a(x, 0).clone();
        return vec![match p_str(p, "branches") {
            "cpu,cuda" => {
                lax::platform_dependent(x0, Some(&cos), &[("cpu", &sin), ("cuda", &tanh)])
            }
            _ => lax::platform_dependent(x0, Some(&cos), &[("cuda", &sin)]),
        }];
    }
    vec![match op {
        "lax.dot" => lax::dot(a(x, 0), a(x, 1), None, pet(p)),
        "lax.dot_general" => {
            let dims = DotDims {
                lhs_contract: usizes(p, "lc"),
                rhs_contract: usizes(p, "rc"),
                lhs_batch: usizes(p, "lb"),
                rhs_batch: usizes(p, "rb"),
            };
            lax::dot_general(
                a(x, 0),
                a(x, 1),
                dims,
                Some(lax::Precision::Highest),
                pet(p),
            )
        }
        "lax.batch_matmul" => lax::batch_matmul(a(x, 0), a(x, 1), None),
        "lax.associative_scan" => {
            let (reverse, axis) = (Some(p_bool(p, "reverse")), p_opt_i64(p, "axis"));
            let name = p_str(p, "fn");
            if name == "linrec" {
                let linrec = |(a1, b1): (Array, Array), (a2, b2): (Array, Array)| {
                    (&a1 * &a2, &a2 * &b1 + &b2)
                };
                let (a_, b_) = lax::associative_scan(
                    linrec,
                    (a(x, 0).clone(), a(x, 1).clone()),
                    reverse,
                    axis,
                );
                return vec![a_, b_];
            }
            lax::associative_scan(|u, v| combine(name, u, v), a(x, 0).clone(), reverse, axis)
        }
        "lax.map" => {
            let bs = p_opt_i64(p, "batch_size").map(|b| b as usize);
            lax::map(mapped, a(x, 0).clone(), bs)
        }
        "lax.stop_gradient" => a(x, 0) * lax::stop_gradient(a(x, 0)),
        "lax.scan" => {
            let step = |c: Array, v: Array| (&c + &v, &c * &v);
            let (carry, ys) = if p_bool(p, "reverse") {
                let options = jaxrs::ScanOptions {
                    reverse: true,
                    ..Default::default()
                };
                jaxrs::scan_with(step, a(x, 0).clone(), a(x, 1).clone(), options)
            } else {
                lax::scan(step, a(x, 0).clone(), a(x, 1).clone())
            };
            return vec![carry, ys];
        }
        "lax.fori_loop" => {
            let v = a(x, 0);
            lax::fori_loop(0, 3, |i, c: Array| c * v + i, v.clone())
        }
        "lax.while_loop" => {
            let init = (Array::scalar(0i32), a(x, 0).clone());
            let cond = |c: &(Array, Array)| c.0.lt(4);
            let body = |(i, v): (Array, Array)| (i + 1, v * 1.5 + 1.0);
            lax::while_loop(cond, body, init).1
        }
        "lax.cond" => {
            let v = a(x, 0);
            lax::cond(
                &v.sum(None, false).gt(0.0),
                |v: Array| v.sin(),
                |v: Array| v * 2.0,
                v.clone(),
            )
        }
        "lax.switch" => {
            let (sin, cos) = (|v: Array| v.sin(), |v: Array| v.cos());
            let sq = |v: Array| &v * &v;
            lax::switch(a(x, 0), &[&sin, &cos, &sq], a(x, 1).clone())
        }
        "lax.conv_general_dilated" => lax::conv_general_dilated(
            a(x, 0),
            a(x, 1),
            &[1],
            lax::Padding::Same,
            &[],
            &[],
            None,
            1,
            1,
            None,
            None,
        ),
        "lax.psum" => vmap_named(
            |v: Array| lax::psum(&v.sin(), "i") * lax::axis_size("i") as f64,
            0,
            0,
            "i",
        )(a(x, 0).clone()),
        "lax.optimization_barrier" => match x.len() {
            1 => lax::optimization_barrier(a(x, 0).clone()) * 2.0,
            _ if a(x, 1).dtype() == DType::I32 => {
                lax::optimization_barrier((a(x, 0).clone(), a(x, 1).clone())).1
            }
            _ => {
                let (u, v) = lax::optimization_barrier((a(x, 0).clone(), a(x, 1).clone()));
                &u * &v + u.sin()
            }
        },
        other => panic!("unknown op {other}"),
    }]
}

#[test]
fn optimization_barrier_lowers_to_the_stablehlo_op() {
    let x = Array::zeros(&[3], DType::F32);
    let module = jaxrs::stablehlo(
        |x: Array| {
            let (a, b) = lax::optimization_barrier((x.sin(), x.cos()));
            a + b
        },
        &x,
    );
    assert!(
        module.contains("stablehlo.optimization_barrier"),
        "{module}"
    );
}

/// jaxrs batches the bit generator (JAX cannot): one generator per key, as a loop over the
/// keys would give.
#[test]
fn rng_bit_generator_under_vmap_runs_one_generator_per_key() {
    let keys = Array::from_vec((1u32..=12).collect::<Vec<_>>(), &[3, 4]);
    let gen = |k: Array| {
        let (k, b) = lax::rng_bit_generator(&k, &[5], DType::U32, lax::RandomAlgorithm::RngPhilox);
        (k, b)
    };
    let (new_keys, bits) = jaxrs::vmap(gen, 0, 0)(keys.clone());
    assert_eq!(bits.shape(), &[3, 5]);
    for i in 0..3 {
        let (k, b) = gen(keys.index(i as i64));
        assert_eq!(new_keys.index(i as i64).to_vec::<u32>(), k.to_vec::<u32>());
        assert_eq!(bits.index(i as i64).to_vec::<u32>(), b.to_vec::<u32>());
    }
}

#[test]
#[should_panic(expected = "no branch for platform \"cpu\"")]
fn platform_dependent_without_a_branch_or_default_names_the_platform() {
    let sin = |x: Array| x.sin();
    lax::platform_dependent(Array::zeros(&[1], DType::F32), None, &[("cuda", &sin)]);
}

#[test]
fn lax_control_matches_jax() {
    assert!(check_file("lax_control", apply) >= 40);
}
