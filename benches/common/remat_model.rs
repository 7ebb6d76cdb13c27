//! The model of the remat bench and of its test against JAX (tests/jax_programs.rs): a
//! 12-block residual MLP, `x + gelu(x W1) W2` with B=512, D=256, f32, whose jitted
//! value-and-gradient is compiled with and without remat on every block, beside JAX's
//! programs of the same model (`tests/golden/programs/remat_*.mlir`, from
//! `tests/golden/gen_program_form.py`) compiled through the same PJRT layer.
// The bench and the tests each use part of this file (tests/remat.rs only `rand`).
#![allow(dead_code)]

use jaxrs::prelude::*;
use jaxrs::Jitted;

pub const BLOCKS: usize = 12;
pub const BATCH: usize = 512;
pub const DIM: usize = 256;

pub type Params = Vec<(Array, Array)>;

/// Deterministic values in [-scale, scale] (an xorshift of `seed`), as `dtype`.
pub fn rand(shape: &[usize], seed: u64, scale: f64, dtype: DType) -> Array {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let v: Vec<f64> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            scale * (2.0 * ((s >> 11) as f64 / (1u64 << 53) as f64) - 1.0)
        })
        .collect();
    Array::from_f64s(&v, shape, dtype)
}

fn block_plain(x: &Array, w1: &Array, w2: &Array) -> Array {
    x + x.matmul(w1).gelu().matmul(w2)
}

#[remat]
fn block_remat(x: &Array, w1: &Array, w2: &Array) -> Array {
    x + x.matmul(w1).gelu().matmul(w2)
}

fn loss(p: &Params, x: &Array, remat: bool) -> Array {
    let mut h = x.clone();
    for (w1, w2) in p {
        h = if remat {
            block_remat(&h, w1, w2)
        } else {
            block_plain(&h, w1, w2)
        };
    }
    (&h * &h).mean(None, false)
}

/// The value-and-gradient function, boxed so that both variants share one type.
pub type StepFn = Box<dyn Fn((Params, Array)) -> (Array, Params)>;
pub type Step = Jitted<StepFn>;

/// The jitted step, compiled (one call made), and its temp bytes.
pub fn step(remat: bool, p: &Params, x: &Array) -> (Step, i64) {
    let f: StepFn =
        Box::new(move |(p, x): (Params, Array)| value_and_grad(|p: Params| loss(&p, &x, remat))(p));
    let f = jit(f);
    run(&f, p, x);
    let temp = f
        .site()
        .last_compiled_memory_stats()
        .expect("memory stats")
        .temp_bytes;
    (f, temp)
}

pub fn run(f: &Step, p: &Params, x: &Array) {
    let (loss, grads): (Array, Params) = f.call((p.clone(), x.clone()));
    loss.block_until_ready();
    for (a, b) in &grads {
        a.block_until_ready();
        b.block_until_ready();
    }
}

pub fn inputs() -> (Params, Array) {
    let p = (0..BLOCKS)
        .map(|i| {
            let s = (1.0 / DIM as f64).sqrt();
            (
                rand(&[DIM, DIM], 100 + 2 * i as u64, s, DType::F32),
                rand(&[DIM, DIM], 101 + 2 * i as u64, s, DType::F32),
            )
        })
        .collect();
    (p, rand(&[BATCH, DIM], 7, 1.0, DType::F32))
}

/// The temp bytes of a StableHLO program compiled through jaxrs's PJRT client with the
/// compile options jaxrs's own programs get.
pub fn temp_bytes(text: &str) -> i64 {
    jaxrs::internals::client()
        .compile(text, &jaxrs::internals::compile_options())
        .expect("the program compiles")
        .compiled_memory_stats()
        .expect("memory stats")
        .temp_bytes
}

/// A committed JAX program, `tests/golden/programs/NAME.mlir`.
pub fn jax_program(name: &str) -> String {
    let path = format!(
        "{}/tests/golden/programs/{name}.mlir",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The StableHLO of the step without and with remat on every block: `[jaxrs's, JAX's]`.
pub fn remat_programs() -> [(String, String); 2] {
    let (p, x) = inputs();
    let text = |remat: bool| {
        let (f, _) = step(remat, &p, &x);
        f.site().last_stablehlo().expect("the step's StableHLO")
    };
    [
        (text(false), text(true)),
        (jax_program("remat_plain"), jax_program("remat_checkpoint")),
    ]
}

/// Each program pair's temp bytes, `(plain, remat)`.
pub fn remat_temp_bytes(programs: &[(String, String); 2]) -> [(i64, i64); 2] {
    programs
        .each_ref()
        .map(|(plain, remat)| (temp_bytes(plain), temp_bytes(remat)))
}
