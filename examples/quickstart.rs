//! A tour of jaxrs: arrays, `#[jit]` with a donated and a static argument, the compile cache,
//! and the IR and StableHLO a function becomes.
//!
//! Run: `cargo run --example quickstart`

use jaxrs::prelude::*;
use jaxrs::{make_jaxpr, stablehlo};

#[derive(Tree, Clone, Debug)]
struct Params {
    w: Array,
    b: Array,
}

/// A linear model's prediction, passed through `activation` (a static argument: each value
/// compiles its own program).
#[jit(static = activation)]
fn predict(params: &Params, x: &Array, activation: &'static str) -> Array {
    let y = x.matmul(&params.w) + &params.b;
    match activation {
        "relu" => y.relu(),
        "tanh" => y.tanh(),
        _ => y,
    }
}

/// Moves the parameters toward zero. `params` is donated: XLA may write the result into its
/// buffers, and Rust's ownership makes sure the caller cannot read them afterwards. `decay`
/// is traced, so new values do not recompile.
#[jit(donate = params)]
fn shrink(params: Params, decay: f32) -> Params {
    Params {
        w: &params.w * decay,
        b: &params.b * decay,
    }
}

fn main() {
    let x = Array::from_vec(vec![1.0f32, -2.0, 3.0, 0.5, 0.0, -1.0], &[2, 3]);
    let params = Params {
        w: Array::from_vec(vec![0.5f32, -1.0, 0.25, 2.0, -0.5, 1.0], &[3, 2]),
        b: Array::from_vec(vec![0.1f32, -0.1], &[2]),
    };

    println!("eager:  x @ w + b = {:?}", x.matmul(&params.w) + &params.b);
    println!("jit:    relu(...)  = {:?}", predict(&params, &x, "relu"));
    println!("jit:    tanh(...)  = {:?}", predict(&params, &x, "tanh"));
    println!("jit:    relu again = {:?}", predict(&params, &x, "relu"));
    let site = predict::jit_site();
    println!(
        "predict compiled {} times; last miss: {}",
        site.cache_misses(),
        site.last_miss_explanation().unwrap_or_default()
    );

    let mut p = params.clone();
    for step in 0..3 {
        p = shrink(p, 0.9 - step as f32 * 0.1);
    }
    println!("after shrinking: w = {:?}", p.w);
    println!(
        "shrink compiled {} time(s) for 3 different decays",
        shrink::jit_site().cache_misses()
    );
    if let Some(stats) = shrink::jit_site().last_compiled_memory_stats() {
        println!(
            "shrink reuses {} donated bytes for its outputs",
            stats.alias_bytes
        );
    }

    let example = (params.clone(), x.clone());
    println!(
        "\nThe IR of predict(relu):\n{}",
        make_jaxpr(|(p, x): (Params, Array)| predict(&p, &x, "relu"), &example)
    );
    println!(
        "\nIts StableHLO (each op located at its Rust line):\n{}",
        stablehlo(|(p, x): (Params, Array)| predict(&p, &x, "relu"), &example)
    );
}
