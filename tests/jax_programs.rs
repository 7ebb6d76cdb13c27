//! jaxrs's programs against JAX's programs of the same models, both compiled through jaxrs's
//! PJRT layer with jaxrs's compile options, so that the same XLA optimizes both. JAX's
//! StableHLO is committed under `tests/golden/programs/` (made by
//! `tests/golden/gen_program_form.py`).
//!
//! - The MNIST training step of `examples/train_mnist.rs` (the very step the example jits:
//!   `value_and_grad` of the loss, Adam, `apply_updates`) has no more kernels than JAX's, no
//!   more `select`s in its StableHLO, and its temp memory (see below).
//! - remat on every block of the remat bench's MLP saves at least the temp memory that
//!   `jax.checkpoint` on every block saves in JAX's program.
//!
//! A *kernel* is a top-level instruction of the optimized entry computation that runs code:
//! every instruction but `parameter`, `constant`, `tuple`, `get-tuple-element` and `bitcast`,
//! which XLA's CPU backend resolves to buffer assignments and views. What is left (`fusion`,
//! `custom-call`, `dot`, `copy`, unfused elementwise or reduce ops, control flow) is what the
//! runtime launches one after the other, each reading its operands from memory and writing its
//! result back, so fewer kernels means fewer passes over memory.
//!
//! Both programs optimize into the same kernels; their temp memory then depends on the order
//! XLA's default CPU scheduler (`xla_cpu_enable_concurrency_optimized_scheduler`, a
//! breadth-first order) gives independent kernels: the order of each instruction's users, which
//! comes from the order and the form of the program's instructions (and from how XLA's passes
//! rewrite them). For the remat program, jaxrs's backward pass now has JAX's form where it
//! matters (tanh's derivative is `(t + t y) (1 - y)`, as in JAX, so that the recomputed `1 + y`
//! and the backward pass share `y`'s users in JAX's order), and jaxrs's temp memory is no more
//! than JAX's, with and without remat. The MNIST step's label gather and its transpose have
//! JAX's form (`take_along_axis`: a gather and a scatter-add batched over the rows), and the
//! parameters flatten in flax's order (a layer's fields are declared sorted by name, as flax's
//! dicts flatten: `bias` before `kernel`), so the step needs exactly JAX's temp memory
//! (453,252 B). In `kernel`-first order it needed one f32[128, 10] buffer more: the copy of the
//! donated output-layer kernel that Adam's update reads lived across the first layer's
//! backward pass, its update scheduled after it. With that scheduler off
//! (`XLA_FLAGS=--xla_cpu_enable_concurrency_optimized_scheduler=false`, a depth-first memory
//! scheduler) both steps need the same temp memory (517,928 B).

#[path = "../benches/common/remat_model.rs"]
mod remat_model;
#[path = "../examples/train_mnist.rs"]
mod train_mnist;

use jaxrs::internals::pjrt::{entry_instructions, HloInstruction};
use jaxrs::optim::GradientTransformation;
use jaxrs::prelude::*;
use jaxrs::random;
use remat_model::{jax_program, temp_bytes};
use std::collections::BTreeMap;

/// Instructions that do no work of their own on the CPU backend.
const FREE: [&str; 5] = [
    "parameter",
    "constant",
    "tuple",
    "get-tuple-element",
    "bitcast",
];

/// The kernels of a program as XLA optimizes it with jaxrs's compile options.
fn kernels(text: &str) -> Vec<HloInstruction> {
    let exe = jaxrs::internals::client()
        .compile(text, &jaxrs::internals::compile_options())
        .expect("the program compiles");
    let (format, program) = exe.optimized_program().expect("optimized program");
    entry_instructions(&format, &program)
        .expect("the optimized program decodes")
        .into_iter()
        .filter(|i| !FREE.contains(&i.opcode.as_str()))
        .collect()
}

/// `fusion(kLoop) x 3, dot x 2, ...`: what a failure message shows.
fn signature(kernels: &[HloInstruction]) -> String {
    let mut counts = BTreeMap::<String, usize>::new();
    for k in kernels {
        let key = if k.detail.is_empty() {
            k.opcode.clone()
        } else {
            format!("{}({})", k.opcode, k.detail)
        };
        *counts.entry(key).or_default() += 1;
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k} x {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The StableHLO of the example's own jitted step, traced on a batch of the example's shape.
fn jaxrs_mnist_step() -> String {
    let params = train_mnist::Mlp::init(&random::key(0), DType::F32);
    let opt_state = train_mnist::optimizer().init(&params);
    // examples/train_mnist.rs's batch: 100 flattened 28 x 28 images and their labels.
    let x = Array::zeros(&[100, 784], DType::F32);
    let labels = Array::zeros(&[100], DType::I32);
    let (_, _, loss) = train_mnist::train_step(params, opt_state, &x, &labels);
    loss.block_until_ready();
    train_mnist::train_step::jit_site()
        .last_stablehlo()
        .expect("the step's StableHLO")
}

#[test]
fn the_mnist_step_is_no_bigger_than_jaxs() {
    let ours = jaxrs_mnist_step();
    let theirs = jax_program("mnist_step");

    // The forms XLA handles worse, which issue 12 removed: relu as a select on a mask
    // (`select(x > 0 | x != x, x, 0)`) and a NaN-safe max (maximum, then compares and selects
    // to let NaN win), where JAX emits plain `maximum` with `xla_cpu_enable_fast_min_max=false`.
    // JAX's relu derivative is a select; so is jaxrs's, and the label gather and the
    // logsumexp's guard against infinite maxima are selects in both: no more than JAX's.
    // (This is what catches relu going back to the select form: XLA fuses the mask on this
    // plugin, so the kernel count and the temp memory below stay as they are.)
    let count = |text: &str, op: &str| text.matches(&format!("stablehlo.{op}")).count();
    let our_ops = |op| count(&ours, op);
    assert!(
        our_ops("select") <= count(&theirs, "select"),
        "{} selects in jaxrs's step, {} in JAX's",
        our_ops("select"),
        count(&theirs, "select")
    );
    assert!(our_ops("maximum") >= 1, "relu is a maximum");
    // The labels' logits: one gather batched over the rows and its scatter-add transpose, as
    // JAX's take_along_axis (not a gather from the flattened logits).
    for batched in ["operand_batching_dims = [0]", "input_batching_dims = [0]"] {
        assert!(ours.contains(batched), "no {batched} in jaxrs's step");
    }

    let (our_kernels, their_kernels) = (kernels(&ours), kernels(&theirs));
    let (our_temp, their_temp) = (temp_bytes(&ours), temp_bytes(&theirs));
    eprintln!(
        "MNIST step: jaxrs {} kernels, temp {our_temp} B [{}]\n            \
         JAX   {} kernels, temp {their_temp} B [{}]",
        our_kernels.len(),
        signature(&our_kernels),
        their_kernels.len(),
        signature(&their_kernels),
    );
    assert!(
        our_kernels.len() <= their_kernels.len(),
        "jaxrs's MNIST step has {} kernels, JAX's {}:\n  jaxrs: {}\n  JAX:   {}",
        our_kernels.len(),
        their_kernels.len(),
        signature(&our_kernels),
        signature(&their_kernels)
    );
    assert!(
        our_temp <= their_temp,
        "temp memory: jaxrs {our_temp} B, JAX {their_temp} B"
    );
}

#[test]
fn remat_saves_at_least_the_temp_memory_jax_checkpoint_saves() {
    let programs = remat_model::remat_programs();
    let [ours, theirs] = remat_model::remat_temp_bytes(&programs);
    let drop = |(plain, remat): (i64, i64)| plain - remat;
    eprintln!(
        "remat temp bytes (plain, remat): jaxrs {ours:?}, drop {}; JAX {theirs:?}, drop {}",
        drop(ours),
        drop(theirs),
    );
    // Without remat the two programs are the same dataflow and need the same temp memory.
    assert!(ours.0 <= theirs.0, "{ours:?} against JAX's {theirs:?}");
    assert!(ours.1 <= theirs.1, "{ours:?} against JAX's {theirs:?}");
    assert!(
        drop(ours) >= drop(theirs),
        "remat saves {} B in jaxrs's program, jax.checkpoint {} B in JAX's",
        drop(ours),
        drop(theirs)
    );
}
