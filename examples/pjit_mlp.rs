//! A 2 x 4 (dp x mp) sharded MLP train step with pjit: the batch is split over "dp", the
//! hidden layer over "mp" (w1's columns, b1, w2's rows), and XLA inserts the collectives
//! (the all-reduce that sums the dp-sharded gradients). Each step is one SPMD program over
//! 8 CPU devices; the same step unsharded on one device gives the same losses and parameters
//! to float tolerance, which this example checks and says.
//!
//! Run: `cargo run --release --example pjit_mlp`

use jaxrs::prelude::*;
use jaxrs::{Mesh, Shardings, P};

#[derive(Tree, Clone)]
struct Params {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
}

/// How the parameters lie on the mesh, field by field (JAX's pytree of shardings).
fn param_shardings() -> Shardings {
    (P![None, "mp"], P!["mp"], P!["mp", None], P![]).into()
}

fn loss(p: &Params, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p.w1) + &p.b1).tanh();
    (h.matmul(&p.w2) + &p.b2 - y).powi(2).mean(None, false)
}

fn sgd(params: Params, x: &Array, y: &Array, lr: &Array) -> (Params, Array) {
    let (value, grads) = value_and_grad(|p: Params| loss(&p, x, y))(params.clone());
    (tree_map2(&params, &grads, |p, g| p - g * lr), value)
}

/// The sharded step: one program over the mesh in scope.
#[jit(
    donate = params,
    in_shardings = (param_shardings(), P!["dp", None], P!["dp", None], P![]),
    out_shardings = (param_shardings(), P![]),
)]
fn sharded_step(params: Params, x: &Array, y: &Array, lr: f32) -> (Params, Array) {
    sgd(params, x, y, lr)
}

/// The same step on one device.
#[jit(donate = params)]
fn plain_step(params: Params, x: &Array, y: &Array, lr: f32) -> (Params, Array) {
    sgd(params, x, y, lr)
}

/// ((arange(n) % modulus) - shift) * scale: deterministic data with no random generator.
fn seq(shape: &[usize], modulus: usize, shift: f32, scale: f32) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i % modulus) as f32 - shift) * scale)
        .collect();
    Array::from_vec(v, shape)
}

fn init() -> Params {
    Params {
        w1: seq(&[16, 32], 9, 4.0, 0.0625),
        b1: Array::zeros(&[32], DType::F32),
        w2: seq(&[32, 4], 11, 5.0, 0.0625),
        b2: Array::zeros(&[4], DType::F32),
    }
}

fn main() -> jaxrs::Result<()> {
    jaxrs::set_cpu_device_count(8)?;
    let mesh = Mesh::new(&jaxrs::devices(), &[2, 4], &["dp", "mp"])?;
    let _m = mesh.enter();

    let x = seq(&[16, 16], 7, 3.0, 0.25);
    let y = x.matmul(&seq(&[16, 4], 5, 2.0, 0.125)).sin();
    let xs = jaxrs::device_put(&x, jaxrs::NamedSharding::new(mesh.clone(), P!["dp", None])?);
    let ys = jaxrs::device_put(&y, jaxrs::NamedSharding::new(mesh.clone(), P!["dp", None])?);

    let (mut sharded, mut plain) = (init(), init());
    let lr = 0.1;
    let mut max_loss_diff = 0f32;
    for step in 0..20 {
        let (next, loss_s) = sharded_step(sharded, &xs, &ys, lr);
        let (next_plain, loss_p) = plain_step(plain, &x, &y, lr);
        sharded = next;
        plain = next_plain;
        // Only these scalars come back to the host inside the loop.
        let (ls, lp) = (loss_s.item::<f32>(), loss_p.item::<f32>());
        max_loss_diff = max_loss_diff.max((ls - lp).abs());
        if step % 5 == 0 || step == 19 {
            println!("step {step:2}: loss sharded {ls:.6}  unsharded {lp:.6}");
        }
        assert!(
            (ls - lp).abs() <= 1e-5 * (1.0 + lp.abs()),
            "step {step}: sharded loss {ls} vs unsharded {lp}"
        );
    }
    println!(
        "compiled the sharded step {} time(s), the unsharded one {}",
        sharded_step::jit_site().cache_misses(),
        plain_step::jit_site().cache_misses()
    );

    println!("\nparameters after 20 steps:");
    let names = ["w1", "b1", "w2", "b2"];
    let (got, want) = (jaxrs::tree_leaves(&sharded), jaxrs::tree_leaves(&plain));
    let mut max_param_diff = 0f32;
    for ((name, s), p) in names.iter().zip(&got).zip(&want) {
        let sharding = s.sharding().expect("a concrete array");
        let shapes: Vec<String> = s
            .addressable_shards()
            .iter()
            .map(|sh| format!("{:?}", sh.data.shape()))
            .collect();
        println!(
            "  {name}: {:?} as {sharding}\n      shard shapes per device: {}",
            s.shape(),
            shapes.join(" ")
        );
        for (a, b) in s.to_vec::<f32>().iter().zip(p.to_vec::<f32>()) {
            max_param_diff = max_param_diff.max((a - b).abs());
        }
    }
    println!(
        "\nsharded vs unsharded: largest loss difference {max_loss_diff:.2e}, largest parameter \
         difference {max_param_diff:.2e}"
    );
    assert!(
        max_param_diff < 1e-5,
        "parameters differ by {max_param_diff}"
    );
    println!("the sharded step matches the unsharded one to float tolerance");
    Ok(())
}
