"""Goldens for `jaxrs::shard_map(..).axis_names(..)` (partial manual axes) on 8 CPU devices
(tests/shard_map.rs).

Run: python tests/golden/gen_shard_map_partial.py   (rewrites tests/golden/shard_map_partial.json)

Each case of "values" is `jax.jit(jax.shard_map(f, mesh=, in_specs=, out_specs=,
axis_names={'x'}), in_shardings=)` over a 2x4 mesh ('x', 'y') of Auto axes: the body is
manual over 'x' only and sees its values whole along 'y', which the jit's in_shardings shard
and XLA's partitioner keeps sharding. Inputs are `(arange(n) - n / 2) / n` in each shape.
"grads" holds the gradient of a scalar loss around such a shard_map with respect to every
argument. "hlo" says which collectives JAX's compiled module of each value case has.
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def small(*shape):
    n = np.prod(shape)
    return ((np.arange(n, dtype=np.float32) - n / 2) / n).reshape(shape)


def matmul_body(a, w):
    h = jnp.tanh(a @ w)
    return h, lax.psum(h.sum(0), "x")


CASES = {
    # name: (function, in_specs, out_specs, jit in_shardings, argument shapes)
    "psum_x": (lambda a: lax.psum(a, "x") * 2.0, P("x"), P(), (P(None, "y"),), [(4, 8)]),
    "axis_index_x": (
        lambda a: a + lax.axis_index("x").astype(jnp.float32),
        P("x"),
        P("x"),
        (P(None, "y"),),
        [(4, 8)],
    ),
    "all_gather_x": (
        lambda a: lax.all_gather(jnp.sin(a), "x", axis=0, tiled=True),
        P("x"),
        P("x"),
        (P("x"),),
        [(4, 8)],
    ),
    "matmul_auto_y": (
        matmul_body,
        (P("x"), P()),
        (P("x"), P()),
        (P("x"), P(None, "y")),
        [(4, 8), (8, 12)],
    ),
}


def program(name):
    f, ins, outs, shardings, _ = CASES[name]
    mapped = jax.shard_map(f, mesh=mesh, in_specs=ins, out_specs=outs, axis_names={"x"})
    return jax.jit(mapped, in_shardings=tuple(NamedSharding(mesh, s) for s in shardings))


def leaves(out):
    return [
        {"shape": list(np.shape(x)), "values": np.asarray(x, np.float64).ravel().tolist()}
        for x in jax.tree.leaves(out)
    ]


def collectives(name):
    args = [small(*s) for s in CASES[name][4]]
    text = program(name).lower(*args).compile().as_text()
    kinds = ["all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all"]
    return sorted(k for k in kinds if f" {k}(" in text or f" {k}-start(" in text)


def loss(a, w):
    h, total = program("matmul_auto_y")(a, w)
    return (h * h).sum() + (total * jnp.arange(12.0)).sum()


def main():
    values = {}
    hlo = {}
    for name, (_, _, _, _, shapes) in CASES.items():
        values[name] = leaves(program(name)(*[small(*s) for s in shapes]))
        hlo[name] = collectives(name)
    a, w = small(4, 8), small(8, 12)
    grads = {"matmul_auto_y": leaves(jax.jit(jax.grad(loss, argnums=(0, 1)))(a, w))}
    out = {"values": values, "grads": grads, "hlo": hlo}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shard_map_partial.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", path, {k: len(v) for k, v in out.items()}, hlo)


if __name__ == "__main__":
    main()
