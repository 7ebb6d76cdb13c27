"""pmap results JAX gives on 8 CPU devices, for tests/pmap.rs.

Run: python tests/golden/gen_pmap.py   (rewrites tests/golden/pmap.json)

Each case names a per-device function (written the same way in tests/pmap.rs), its inputs
(shape and float32 data, deterministic), in_axes and out_axes, and records each output of
`jax.pmap(f, axis_name="d", in_axes=..., out_axes=...)`: shape, data (row-major) and, per
shard in device order, the device id and the index ranges ([start, stop] per dimension)
that device holds, as `addressable_shards` gives them.

No case uses a negative axis: JAX 0.10.2's pmap mishandles them (`in_axes=-1` fails with an
IndivisibleError, `out_axes=-1` stacks a [2] result of 8 devices as [16, 1]). tests/pmap.rs
checks negative axes against their positive spelling instead.
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")


def data(shape, seed):
    """sin(0.37 i + seed): the same in tests/pmap.rs."""
    n = int(np.prod(shape))
    return np.sin(np.arange(n, dtype=np.float64) * 0.37 + seed).astype(np.float32).reshape(shape)


def elementwise(x):
    return jnp.sin(x) * 2.0 + x.sum()


def matmul_tanh(x, w):
    return jnp.tanh(x @ w)


def row_stats(x):
    return x.sum(axis=0), x.max()


def tree_in(p, x):
    return {"y": x @ p["w"] + p["b"], "n": jnp.sum(x * x)}


def loss_and_grads(w, b, x, y):
    def loss(params):
        w, b = params
        return jnp.mean((jnp.tanh(x @ w) + b - y) ** 2)

    value, (gw, gb) = jax.value_and_grad(loss)((w, b))
    return value, (gw, gb)


def vmap_inside(w, x):
    return jax.vmap(lambda r: jnp.tanh(r @ w).sum())(x)


CASES = [
    # name, function, inputs [(shape, seed)], in_axes, out_axes
    ("elementwise", elementwise, [([8, 3], 0.0)], 0, 0),
    ("matmul_tanh", matmul_tanh, [([8, 4, 3], 1.0), ([3, 2], 2.0)], (0, None), 0),
    ("axis1_out1", matmul_tanh, [([4, 8, 3], 3.0), ([3, 2], 4.0)], (1, None), 1),
    ("two_outputs", row_stats, [([8, 5, 2], 6.0)], 0, (1, 0)),
    ("tree_in", tree_in, [([3, 2], 7.0), ([2], 8.0), ([8, 4, 3], 9.0)], None, 0),
    ("grads", loss_and_grads,
     [([3, 1], 10.0), ([1], 11.0), ([8, 4, 3], 12.0), ([8, 4, 1], 13.0)],
     (None, None, 0, 0), 0),
    ("vmap_inside", vmap_inside, [([3, 2], 14.0), ([8, 5, 3], 15.0)], (None, 0), 0),
]


def record(out):
    shards = []
    by_device = {s.device.id: s for s in out.addressable_shards}
    for d in sorted(by_device):
        s = by_device[d]
        index = [[sl.start or 0, out.shape[i] if sl.stop is None else sl.stop]
                 if isinstance(sl, slice) else [sl, sl + 1]
                 for i, sl in enumerate(s.index)]
        shards.append({"device": d, "index": index})
    return {
        "shape": list(out.shape),
        "data": np.asarray(out, dtype=np.float32).reshape(-1).tolist(),
        "shards": shards,
    }


def main():
    assert len(jax.devices()) == 8, jax.devices()
    out = []
    for name, f, inputs, in_axes, out_axes in CASES:
        args = [data(shape, seed) for shape, seed in inputs]
        if name == "tree_in":
            # p = {"w", "b"} unmapped, x mapped: in_axes (None, 0) over (p, x).
            p = {"w": args[0], "b": args[1]}
            res = jax.pmap(f, axis_name="d", in_axes=(None, 0), out_axes=out_axes)(p, args[2])
            leaves = [res["n"], res["y"]]  # sorted keys, as jax flattens dicts
        else:
            res = jax.pmap(f, axis_name="d", in_axes=in_axes, out_axes=out_axes)(*args)
            leaves = jax.tree_util.tree_leaves(res)
        out.append({
            "name": name,
            "inputs": [{"shape": s, "seed": seed} for s, seed in inputs],
            "outputs": [record(leaf) for leaf in leaves],
        })
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pmap.json")
    with open(path, "w") as fh:
        json.dump({"jax": jax.__version__, "cases": out}, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
