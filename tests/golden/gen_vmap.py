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
from jax import lax  # noqa: E402

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


# ---------------------------------------------------------------------------------------------
# Batching of single ops (ops_vmap.json): jax.vmap(op, in_axes)(*inputs) for one op of the Array
# API at a time, its op names and params as in ops_*.json (tests/common/golden.rs maps them).

OP_CASES = []
NAN, INF = float("nan"), float("inf")


def enc_any(a):
    a = np.asarray(a)
    name = {"float32": "float32", "int32": "int32", "bool": "bool"}[str(a.dtype)]
    conv = {"float32": float, "int32": int, "bool": bool}[name]

    def one(x):
        x = conv(x)
        if name == "float32" and (x != x or x in (INF, -INF)):
            return "nan" if x != x else ("inf" if x > 0 else "-inf")
        return x
    return {"dtype": name, "shape": list(a.shape), "data": [one(x) for x in a.reshape(-1)]}


def op_case(name, op, params, inputs, in_axes, fn, scalars=()):
    """inputs: arrays, batched as in_axes says (None: shared); scalars: Rust scalars appended
    after the arrays, held fixed (never batched)."""
    args = [jnp.asarray(x) for x in inputs]
    out = jax.vmap(lambda *a: fn(*a, *scalars), in_axes=tuple(in_axes))(*args)
    ins = [enc_any(x) for x in inputs] + [{"scalar": v} for v in scalars]
    OP_CASES.append({"name": name, "op": op, "params": params, "inputs": ins,
                     "in_axes": list(in_axes), "output": enc_any(out), "rtol": RTOL,
                     "atol": ATOL})


def uni(rng, *shape, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def gen_ops():
    name = "softplus/batch0"
    op_case(name, "softplus", {}, [uni(rng_for(name), 4, 3)], [0], jax.nn.softplus)
    name = "logaddexp/x0_y_shared"
    r = rng_for(name)
    op_case(name, "logaddexp", {}, [uni(r, 4, 3), uni(r, 3)], [0, None], jnp.logaddexp)
    name = "logaddexp/x1_y0"
    r = rng_for(name)
    op_case(name, "logaddexp", {}, [uni(r, 3, 5), uni(r, 5, 3)], [1, 0], jnp.logaddexp)
    name = "clip/x1_bounds_shared"
    r = rng_for(name)
    op_case(name, "clip", {}, [uni(r, 3, 4), uni(r, 3, lo=-2, hi=0), uni(r, 3, lo=0, hi=2)],
            [1, None, None], lambda x, lo, hi: jnp.clip(x, lo, hi))
    name = "clip/scalars"
    op_case(name, "clip", {}, [uni(rng_for(name), 2, 5)], [0],
            lambda x, lo, hi: jnp.clip(x, lo, hi), scalars=(-1.0, 1.0))
    specials = np.asarray([[NAN, 1.0, INF], [-INF, 0.0, NAN]], np.float32)
    for op, f in (("isnan", jnp.isnan), ("isinf", jnp.isinf), ("isfinite", jnp.isfinite)):
        op_case(f"{op}/batch1", op, {}, [specials], [1], f)
    op_case("nan_to_num/batch0", "nan_to_num", {"nan": 0.0, "posinf": None, "neginf": None},
            [specials], [0], jnp.nan_to_num)
    for op, f in (("var", jnp.var), ("std", jnp.std)):
        name = f"{op}/batch0_axis1_keep_ddof1"
        op_case(name, op, {"axes": [1], "keepdims": True, "ddof": 1}, [uni(rng_for(name), 3, 2, 5)],
                [0], lambda x, f=f: f(x, axis=1, keepdims=True, ddof=1))
        name = f"{op}/batch2_all"
        op_case(name, op, {"axes": None, "keepdims": False, "ddof": 0},
                [uni(rng_for(name), 3, 4, 2)], [2], lambda x, f=f: f(x))
    for op, f in (("tril", jnp.tril), ("triu", jnp.triu)):
        name = f"{op}/batch1_k1"
        op_case(name, op, {"k": 1}, [uni(rng_for(name), 4, 2, 3)], [1],
                lambda x, f=f: f(x, 1))


def gen_sort_ops():
    name = "sort/batch1_axis0"
    op_case(name, "sort", {"axis": 0}, [uni(rng_for(name), 5, 3, 2)], [1],
            lambda x: jnp.sort(x, axis=0))
    name = "argsort/batch0_axis-1"
    op_case(name, "argsort", {"axis": -1}, [uni(rng_for(name), 3, 2, 6)], [0],
            lambda x: jnp.argsort(x, axis=-1, stable=True))
    for part, i in (("values", 0), ("indices", 1)):
        name = f"top_k_{part}/batch1_k2"
        op_case(name, f"top_k_{part}", {"k": 2}, [uni(rng_for("top_k/batch1_k2"), 4, 3, 5)], [1],
                lambda x, i=i: lax.top_k(x, 2)[i])


def gen_take_along_axis_ops():
    def idx(r, shape, n):
        return r.integers(-n, n, size=shape).astype(np.int32)
    # x [B, 2, 3, 4] per example [2, 3, 4]; idx per example [2, 5, 4] along axis 1.
    name = "take_along_axis/x0_idx_shared_axis1"
    r = rng_for(name)
    op_case(name, "take_along_axis", {"axis": 1}, [uni(r, 3, 2, 3, 4), idx(r, (2, 5, 4), 3)],
            [0, None], lambda x, i: jnp.take_along_axis(x, i, axis=1))
    name = "take_along_axis/x_shared_idx2_axis0"
    r = rng_for(name)
    op_case(name, "take_along_axis", {"axis": 0}, [uni(r, 2, 3, 4), idx(r, (3, 3, 3, 4), 2)],
            [None, 2], lambda x, i: jnp.take_along_axis(x, i, axis=0))
    name = "take_along_axis/x2_idx0_axis-1"
    r = rng_for(name)
    op_case(name, "take_along_axis", {"axis": -1}, [uni(r, 2, 3, 3, 4), idx(r, (3, 2, 3, 6), 4)],
            [2, 0], lambda x, i: jnp.take_along_axis(x, i, axis=-1))
    name = "take_along_axis/both0_out_of_range"
    r = rng_for(name)
    op_case(name, "take_along_axis", {"axis": 1}, [uni(r, 2, 3, 4), idx(r, (2, 3, 2), 6)],
            [0, 0], lambda x, i: jnp.take_along_axis(x, i, axis=1))


def gen_scatter_ops():
    name = "at_add/x0_idx_shared_v0"
    r = rng_for(name)
    op_case(name, "at_add", {}, [uni(r, 3, 5, 2), np.asarray([0, 4, 0, 9], np.int32), uni(r, 3, 4, 2)],
            [0, None, 0], lambda x, i, v: x.at[i].add(v))
    name = "at_set/x_shared_idx0_v1"
    r = rng_for(name)
    op_case(name, "at_set", {}, [uni(r, 5), np.asarray([[1, 3], [4, -1], [0, 7]], np.int32),
                                 uni(r, 2, 3)],
            [None, 0, 1], lambda x, i, v: x.at[i].set(v))
    name = "at_max/all_batched"
    r = rng_for(name)
    op_case(name, "at_max", {}, [uni(r, 2, 4), np.asarray([[1, 1, 3], [0, 2, 2]], np.int32),
                                 uni(r, 2, 3)],
            [0, 0, 0], lambda x, i, v: x.at[i].max(v))
    name = "at_get/x1_idx_shared"
    r = rng_for(name)
    op_case(name, "at_get", {}, [uni(r, 5, 3), np.asarray([4, 0, 6], np.int32)], [1, None],
            lambda x, i: x.at[i].get())


def gen_einsum_ops():
    name = "einsum/ij,jk->ik/lhs0_rhs_shared"
    r = rng_for(name)
    op_case(name, "einsum", {"spec": "ij,jk->ik"}, [uni(r, 3, 2, 4), uni(r, 4, 5)], [0, None],
            lambda a, b: jnp.einsum("ij,jk->ik", a, b))
    name = "einsum/bij,bjk->bik/lhs2_rhs0"
    r = rng_for(name)
    op_case(name, "einsum", {"spec": "bij,bjk->bik"}, [uni(r, 2, 3, 4, 3), uni(r, 3, 2, 4, 5)],
            [3, 0], lambda a, b: jnp.einsum("bij,bjk->bik", a, b))
    name = "einsum/ij->ji/batch1"
    op_case(name, "einsum", {"spec": "ij->ji"}, [uni(rng_for(name), 2, 4, 3)], [1],
            lambda a: jnp.einsum("ij->ji", a))


def write_ops():
    path = os.path.join(HERE, "ops_vmap.json")
    lines = [json.dumps(c, allow_nan=False) for c in OP_CASES]
    text = ('{"jax_version": "%s", "cases": [\n' % jax.__version__
            + ",\n".join(lines) + "\n]}\n")
    with open(path, "w") as f:
        f.write(text)
    print(f"{os.path.relpath(path)}: {len(OP_CASES)} cases, {len(text)} bytes")


def main():
    gen()
    path = os.path.join(HERE, "vmap.json")
    lines = [json.dumps(c, allow_nan=False) for c in CASES]
    text = ('{"jax_version": "%s", "cases": [\n' % jax.__version__
            + ",\n".join(lines) + "\n]}\n")
    with open(path, "w") as f:
        f.write(text)
    print(f"{os.path.relpath(path)}: {len(CASES)} cases, {len(text)} bytes")
    gen_ops()
    gen_sort_ops()
    gen_take_along_axis_ops()
    gen_scatter_ops()
    gen_einsum_ops()
    write_ops()


if __name__ == "__main__":
    main()
