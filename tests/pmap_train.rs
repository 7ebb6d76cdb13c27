//! The seed's data-parallel train step: an MLP trained by SGD under `#[pmap]` over 8 CPU
//! devices, each taking a local batch of 2 rows, the loss and gradients averaged with `pmean`.
//! Its losses and parameters must equal JAX 0.10.2's `jax.pmap` of the same step
//! (`tests/golden/pmap_train.json`, made by `tests/golden/gen_pmap_train.py`), and its losses
//! the single-device step on the whole global batch; the parameters stay split over the
//! devices between steps, donated to each next step.

mod common;

use common::golden::{array, first_mismatch, number};
use jaxrs::prelude::*;
use serde_json::Value;

#[derive(Tree, Clone)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
}

const LR: f32 = 0.1;

fn loss(params: &Mlp, x: &Array, y: &Array) -> Array {
    let hidden = (x.matmul(&params.w1) + &params.b1).tanh();
    let pred = hidden.matmul(&params.w2) + &params.b2;
    (pred - y).powi(2).mean(None, false)
}

/// Each device's step on its local batch; `pmean` makes every device apply the same update.
#[pmap(axis_name = "d", donate = params)]
fn data_parallel_step(params: Mlp, x: &Array, y: &Array) -> (Mlp, Array) {
    let (value, grads) = value_and_grad(|p: Mlp| loss(&p, x, y))(params.clone());
    let grads = pmean(&grads, "d");
    (
        tree_map2(&params, &grads, |p, g| p - g * LR),
        pmean(&value, "d"),
    )
}

#[jit(donate = params)]
fn single_device_step(params: Mlp, x: &Array, y: &Array) -> (Mlp, Array) {
    let (value, grads) = value_and_grad(|p: Mlp| loss(&p, x, y))(params.clone());
    (tree_map2(&params, &grads, |p, g| p - g * LR), value)
}

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/pmap_train.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("pmap_train.json")).expect("JSON")
}

fn mlp(v: &Value) -> Mlp {
    Mlp {
        w1: array(&v["w1"]),
        b1: array(&v["b1"]),
        w2: array(&v["w2"]),
        b2: array(&v["b2"]),
    }
}

fn assert_close(what: &str, got: &[f64], want: &[f64], rtol: f64, atol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some((i, g, w)) = first_mismatch(got, want, rtol, atol) {
        panic!("{what}: element {i} is {g}, JAX gives {w}");
    }
}

#[test]
fn pmap_train_step_with_pmean_matches_jax_and_the_single_device_step() {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    let g = golden();
    let (devices, local) = (
        g["devices"].as_u64().unwrap() as usize,
        g["local_batch"].as_u64().unwrap() as usize,
    );
    let (rtol, atol) = (number(&g["rtol"]), number(&g["atol"]));
    let steps = g["steps"].as_u64().unwrap() as usize;
    let (x, y) = (array(&g["x"]), array(&g["y"]));
    // [devices, local batch, features]: device d takes rows 2d and 2d + 1.
    let xs = x.reshape([devices, local, 3]);
    let ys = y.reshape([devices, local, 1]);
    // One replica of the parameters per device, stacked as JAX's examples do.
    let init = mlp(&g["params"]);
    let mut params = tree_map(&init, |p| {
        let mut shape = vec![devices];
        shape.extend_from_slice(p.shape());
        p.broadcast_to(&shape)
    });
    let mut losses = Vec::new();
    for _ in 0..steps {
        let (p, loss) = data_parallel_step(params, &xs, &ys);
        params = p;
        let per_device = loss.to_vec::<f32>();
        assert_eq!(per_device.len(), devices);
        assert!(
            per_device.iter().all(|l| *l == per_device[0]),
            "{per_device:?}"
        );
        losses.push(per_device[0] as f64);
    }
    let want: Vec<f64> = g["losses"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(number)
        .collect();
    assert_close("losses", &losses, &want, rtol, atol);

    // Each leaf is split over the 8 devices, one replica each, all equal to JAX's.
    let finals = mlp(&g["final_params"]);
    for (name, got, want) in [
        ("w1", &params.w1, &finals.w1),
        ("b1", &params.b1, &finals.b1),
        ("w2", &params.w2, &finals.w2),
        ("b2", &params.b2, &finals.b2),
    ] {
        let shards = got.addressable_shards();
        assert_eq!(shards.len(), devices, "{name}: one shard per device");
        for (d, shard) in shards.iter().enumerate() {
            assert_eq!(
                shard.device,
                jaxrs::devices()[d],
                "{name}: shard {d}'s device"
            );
            assert_close(
                &format!("{name} on device {d}"),
                &shard.data.reshape(want.shape()).to_f64_vec(),
                &want.to_f64_vec(),
                rtol,
                atol,
            );
        }
    }
    let site = data_parallel_step::pmap_site();
    assert_eq!(site.cache_misses(), 1, "{:?}", site.last_miss_explanation());
    // The parameters were donated: four leaves on eight devices.
    assert_eq!(site.last_call_donated_buffers(), 4 * devices);

    // The same steps on one device over the whole global batch give the same losses.
    let mut single = init;
    let mut single_losses = Vec::new();
    for _ in 0..steps {
        let (p, loss) = single_device_step(single, &x, &y);
        single = p;
        single_losses.push(loss.item::<f32>() as f64);
    }
    assert_close("single-device losses", &single_losses, &losses, rtol, atol);
}

/// Each device's slice scaled by the norm of the whole array, summed across devices by `psum`.
#[pmap(axis_name = "d")]
fn scaled_by_global_norm(x: &Array) -> Array {
    let norm = psum(&x.powi(2).sum(None, false), "d").sqrt();
    x.tanh() * norm + axis_index("d").astype(DType::F64)
}

/// Gradients through a pmap with a collective inside, to second order: finite differences
/// run the compiled 8-device program, the derivatives run its transformed trace.
#[test]
fn check_grads_through_a_pmap_with_psum() {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    let x = Array::from_f64s(
        &(0..24).map(|i| (i as f64 * 0.37).sin()).collect::<Vec<_>>(),
        &[8, 3],
        DType::F64,
    );
    let y = scaled_by_global_norm(&x);
    assert_eq!(y.addressable_shards().len(), 8);
    check_grads(|x: Array| scaled_by_global_norm(&x), &x, 2);
}
