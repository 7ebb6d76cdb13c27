#!/usr/bin/env python3
"""Golden values for vmap: JAX's numbers for the seed's section 2 (per-example losses of a
linear model, over a batch and over [time, batch], per-example gradients), and a small MLP.

Usage (from the repository root):

    pip install jax==0.10.2 numpy      # CPU jax is enough
    python tests/golden/gen_vmap.py    # rewrites tests/golden/vmap.json

Generated with JAX 0.10.2 on the CPU backend, float32, x64 disabled (JAX's default). Like
gen.py: the script refuses another JAX version unless given --any-jax-version, and every case
draws its inputs from numpy's default_rng seeded with the crc32 of its name, so two runs give
byte-identical files. The format is described in tests/golden/README.md ("vmap.json").
"""

import json
import os
import sys
import zlib

os.environ["JAX_PLATFORMS"] = "cpu"

import numpy as np  # noqa: E402
import jax  # noqa: E402

JAX_VERSION = "0.10.2"
if jax.__version__ != JAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"gen_vmap.py: expected jax=={JAX_VERSION}, found {jax.__version__} "
             "(pass --any-jax-version to run anyway)")

import jax.numpy as jnp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# Batched and per-example programs add in different orders: a few float32 ulps apart.
RTOL, ATOL = 2e-5, 1e-6


def enc(a):
    a = np.asarray(a)
    assert a.dtype == np.float32, a.dtype
    return {"dtype": "float32", "shape": list(a.shape),
            "data": [float(x) for x in a.reshape(-1)]}


def enc_tree(t):
    if isinstance(t, dict):
        return {k: enc(v) for k, v in t.items()}
    if isinstance(t, (list, tuple)):
        return [enc_tree(v) for v in t]
    return enc(t)


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def normal(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# The seed's section 2: the loss of one example of a linear model.
def example_loss(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean((pred - y) ** 2)


# A two-layer MLP's loss on one example.
def mlp_loss(layers, x, y):
    h = x
    for i, layer in enumerate(layers):
        h = h @ layer["w"] + layer["b"]
        if i + 1 < len(layers):
            h = jnp.tanh(h)
    return jnp.mean((h - y) ** 2)


CASES = []


def case(name, fn, in_axes, out_axes, params, inputs, output):
    CASES.append({
        "name": name, "fn": fn, "in_axes": list(in_axes), "out_axes": out_axes,
        "params": enc_tree(params), "inputs": {k: enc(v) for k, v in inputs.items()},
        "output": enc_tree(output), "rtol": RTOL, "atol": ATOL,
    })


def linear_params(rng, n_in=3, n_out=2):
    return {"w": normal(rng, n_in, n_out, scale=0.5), "b": normal(rng, n_out, scale=0.5)}


def gen():
    # vmap(example_loss, in_axes=(None, 0, 0)): one loss per example.
    name = "example_loss/batch"
    rng = rng_for(name)
    p, x, y = linear_params(rng), normal(rng, 8, 3), normal(rng, 8, 2)
    out = jax.vmap(example_loss, in_axes=(None, 0, 0))(p, x, y)
    case(name, "example_loss", (None, 0, 0), 0, p, {"x": x, "y": y}, out)

    # The nested form: vmap over time of vmap over the batch, x: [T, B, in].
    name = "example_loss/time_batch"
    rng = rng_for(name)
    p, x, y = linear_params(rng), normal(rng, 4, 5, 3), normal(rng, 4, 5, 2)
    inner = jax.vmap(example_loss, in_axes=(None, 0, 0))
    out = jax.vmap(inner, in_axes=(None, 0, 0))(p, x, y)
    case(name, "example_loss_nested", (None, 0, 0), 0, p, {"x": x, "y": y}, out)

    # Examples along the last axis of x, the result's batch along axis 0 (negative in_axes).
    name = "example_loss/batch_last"
    rng = rng_for(name)
    p, x, y = linear_params(rng), normal(rng, 3, 6), normal(rng, 6, 2)
    out = jax.vmap(example_loss, in_axes=(None, -1, 0))(p, x, y)
    case(name, "example_loss", (None, -1, 0), 0, p, {"x": x, "y": y}, out)

    # Per-example gradients: vmap(grad(example_loss)).
    name = "example_loss/per_example_grads"
    rng = rng_for(name)
    p, x, y = linear_params(rng), normal(rng, 8, 3), normal(rng, 8, 2)
    out = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(p, x, y)
    case(name, "example_loss_grad", (None, 0, 0), 0, p, {"x": x, "y": y}, out)

    # The gradient of the batch's mean loss: grad(vmap(example_loss)).
    name = "example_loss/grad_of_mean"
    rng = rng_for(name)
    p, x, y = linear_params(rng), normal(rng, 8, 3), normal(rng, 8, 2)
    out = jax.grad(lambda p: jnp.mean(jax.vmap(example_loss, in_axes=(None, 0, 0))(p, x, y)))(p)
    case(name, "example_loss_mean_grad", (None, 0, 0), 0, p, {"x": x, "y": y}, out)

    # Predictions with the batch along axis 1 of the result.
    name = "predict/out_axes_1"
    rng = rng_for(name)
    p, x = linear_params(rng), normal(rng, 7, 3)
    out = jax.vmap(lambda p, x: x @ p["w"] + p["b"], in_axes=(None, 0), out_axes=1)(p, x)
    case(name, "predict", (None, 0), 1, p, {"x": x}, out)

    # A batched MLP: losses and per-example gradients.
    name = "mlp_loss/batch"
    rng = rng_for(name)
    layers = [linear_params(rng, 4, 8), linear_params(rng, 8, 2)]
    x, y = normal(rng, 16, 4), normal(rng, 16, 2)
    out = jax.vmap(mlp_loss, in_axes=(None, 0, 0))(layers, x, y)
    case(name, "mlp_loss", (None, 0, 0), 0, layers, {"x": x, "y": y}, out)
    name = "mlp_loss/per_example_grads"
    out = jax.vmap(jax.grad(mlp_loss), in_axes=(None, 0, 0))(layers, x, y)
    case(name, "mlp_loss_grad", (None, 0, 0), 0, layers, {"x": x, "y": y}, out)


def main():
    gen()
    path = os.path.join(HERE, "vmap.json")
    lines = [json.dumps(c, allow_nan=False) for c in CASES]
    text = ('{"jax_version": "%s", "cases": [\n' % jax.__version__
            + ",\n".join(lines) + "\n]}\n")
    with open(path, "w") as f:
        f.write(text)
    print(f"{os.path.relpath(path)}: {len(CASES)} cases, {len(text)} bytes")


if __name__ == "__main__":
    main()
