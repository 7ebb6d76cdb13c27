#!/usr/bin/env python3
"""JAX's programs for the models jaxrs compares its own programs against (tests/jax_programs.rs,
benches/remat.rs): the StableHLO text JAX hands XLA, and the op counts of that text.

Usage (from the repository root): /work/venv/bin/python tests/golden/gen_program_form.py
(writes tests/golden/programs/*.mlir and tests/golden/programs.json). JAX 0.10.2 and optax 0.2.8
on the CPU, x64 disabled (jaxrs follows JAX's default).

- `mnist_step.mlir`: the training step of examples/train_mnist.rs. A 784-128-10 MLP of dense
  layers (`x @ kernel + bias`), relu, softmax cross-entropy with integer labels
  (`optax.softmax_cross_entropy_with_integer_labels`), its mean over a batch of 100, the loss and
  gradient from `jax.value_and_grad`, then `optax.adam(1e-3, 0.9, 0.999, 1e-8)` and
  `optax.apply_updates`, with the parameters and the optimizer's state donated. f32 images,
  int32 labels.
- `remat_plain.mlir`, `remat_checkpoint.mlir`: benches/remat.rs's model, `jax.jit` of
  `jax.value_and_grad` of `mean(h * h)` after 12 residual blocks `x + gelu(x @ w1) @ w2`
  (B=512, D=256, f32; `jax.nn.gelu(approximate=True)`, the tanh form that jaxrs's `gelu` is),
  without and with `jax.checkpoint` (default policy: nothing saveable) on every block.

The Rust side compiles these texts through jaxrs's own PJRT layer and compile options, so both
programs meet the same XLA. The text is deterministic (no locations are printed); the JSON
holds, per program, the count of each StableHLO op in the text.
"""

import collections
import json
import os
import re

os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import jax.numpy as jnp
import optax

assert jax.__version__ == "0.10.2", jax.__version__
assert optax.__version__ == "0.2.8", optax.__version__

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "programs")

# examples/train_mnist.rs
PIXELS, HIDDEN, CLASSES, BATCH = 784, 128, 10, 100
LEARNING_RATE = 1e-3

# benches/remat.rs
BLOCKS, REMAT_BATCH, DIM = 12, 512, 256


def dense(layer, x):
    return x @ layer["kernel"] + layer["bias"]


def mnist_loss(params, x, labels):
    logits = dense(params["out"], jax.nn.relu(dense(params["hidden"], x)))
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


OPTIMIZER = optax.adam(LEARNING_RATE, b1=0.9, b2=0.999, eps=1e-8)


def mnist_step(params, opt_state, x, labels):
    value, grads = jax.value_and_grad(mnist_loss)(params, x, labels)
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, value


def mnist_text():
    f32 = jnp.float32
    params = {
        "hidden": {"kernel": jnp.zeros((PIXELS, HIDDEN), f32), "bias": jnp.zeros((HIDDEN,), f32)},
        "out": {"kernel": jnp.zeros((HIDDEN, CLASSES), f32), "bias": jnp.zeros((CLASSES,), f32)},
    }
    opt_state = OPTIMIZER.init(params)
    x = jax.ShapeDtypeStruct((BATCH, PIXELS), f32)
    labels = jax.ShapeDtypeStruct((BATCH,), jnp.int32)
    step = jax.jit(mnist_step, donate_argnums=(0, 1))
    return step.lower(params, opt_state, x, labels).as_text()


def block(x, w1, w2):
    return x + jax.nn.gelu(x @ w1, approximate=True) @ w2


def remat_loss(params, x, checkpoint):
    b = jax.checkpoint(block) if checkpoint else block
    h = x
    for w1, w2 in params:
        h = b(h, w1, w2)
    return (h * h).mean()


def remat_text(checkpoint):
    w = jax.ShapeDtypeStruct((DIM, DIM), jnp.float32)
    params = [(w, w) for _ in range(BLOCKS)]
    x = jax.ShapeDtypeStruct((REMAT_BATCH, DIM), jnp.float32)
    f = jax.jit(jax.value_and_grad(lambda p, x: remat_loss(p, x, checkpoint)))
    return f.lower(params, x).as_text()


def op_counts(text):
    """How many times each op appears in the text: the op a line defines (`%x = stablehlo.add`)
    or begins with (`stablehlo.return`, `func.func`); a reduce's body written inline
    (`applies stablehlo.add`) is not counted."""
    counts = collections.Counter()
    for line in text.splitlines():
        m = re.search(r"=\s*\"?((?:stablehlo|chlo)\.[a-z_]+)", line) or re.match(
            r"\s*\"?((?:stablehlo|chlo|func)\.[a-z_]+)", line
        )
        if m:
            counts[m.group(1)] += 1
    return dict(sorted(counts.items()))


def main():
    os.makedirs(OUT, exist_ok=True)
    programs = {
        "mnist_step": mnist_text(),
        "remat_plain": remat_text(False),
        "remat_checkpoint": remat_text(True),
    }
    summary = {"jax_version": jax.__version__, "optax_version": optax.__version__, "programs": {}}
    for name, text in programs.items():
        with open(os.path.join(OUT, name + ".mlir"), "w") as f:
            f.write(text)
        summary["programs"][name] = {"file": f"programs/{name}.mlir", "op_counts": op_counts(text)}
    with open(os.path.join(HERE, "programs.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
