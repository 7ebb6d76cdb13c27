"""pjit (jit with shardings) on 8 CPU devices, for tests/pjit.rs.

Run: python tests/golden/gen_pjit.py   (rewrites tests/golden/pjit.json)

Inputs are small exact arithmetic sequences (see `inputs`), rebuilt the same way in Rust.
- "section6": the seed's §6 program, tanh(x @ w) on a 2 x 4 ("dp", "mp") mesh, x sharded
  P("dp", None), w P(None, "mp"), out P("dp", "mp"): its values, its shard shape and each
  device's index ranges ([start, stop] per dimension), in the mesh's device order; and the
  result's spec when jit is given no shardings, only the sharded inputs.
- "mlp": a dp x mp MLP, loss = mean((tanh(x @ w1) @ w2 - y)^2) with x P("dp", None),
  w1 P(None, "mp"), w2 P("mp", None), y P("dp", None): the loss and both gradients, and how
  many all-reduce instructions XLA's compiled module of the gradient step has.
- "scan": three SGD steps (lr 0.1) of that MLP inside one sharded jit, as a lax.scan: the
  losses and the final parameters.
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")


def seq(shape, mod, shift, scale):
    """((arange(n) % mod) - shift) * scale, f32, row-major: exact in f32."""
    n = int(np.prod(shape))
    return (((np.arange(n) % mod) - shift) * scale).astype(np.float32).reshape(shape)


def inputs():
    return {
        "x": seq([8, 16], 7, 3, 0.25),
        "w": seq([16, 8], 5, 2, 0.125),
        "w1": seq([16, 32], 9, 4, 0.0625),
        "w2": seq([32, 4], 11, 5, 0.0625),
        "y": seq([8, 4], 3, 1, 0.5),
    }


mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("dp", "mp"))


def ns(*spec):
    return NamedSharding(mesh, P(*spec))


def ranges(index, shape):
    return [[s.start or 0, s.stop if s.stop is not None else n] for s, n in zip(index, shape)]


def loss_fn(w1, w2, x, y):
    return jnp.mean((jnp.tanh(x @ w1) @ w2 - y) ** 2)


def main():
    a = inputs()
    out = {}

    f = jax.jit(
        lambda x, w: jnp.tanh(x @ w),
        in_shardings=(ns("dp", None), ns(None, "mp")),
        out_shardings=ns("dp", "mp"),
    )
    y = f(a["x"], a["w"])
    out["section6"] = {
        "values": np.asarray(y).ravel().tolist(),
        "shape": list(y.shape),
        "shard_shape": list(y.sharding.shard_shape(y.shape)),
        "shards": [
            {"device": s.device.id, "index": ranges(s.index, y.shape)}
            for s in sorted(y.addressable_shards, key=lambda s: list(mesh.devices.flat).index(s.device))
        ],
    }

    # No shardings given: the program follows the inputs', and the result lies as XLA chose.
    follow = jax.jit(lambda x, w: jnp.tanh(x @ w))(
        jax.device_put(a["x"], ns("dp", None)), jax.device_put(a["w"], ns(None, "mp"))
    )
    out["section6"]["follow_inputs_spec"] = [
        None if e is None else e if isinstance(e, str) else list(e) for e in follow.sharding.spec
    ]

    step = jax.jit(
        jax.value_and_grad(loss_fn, argnums=(0, 1)),
        in_shardings=(ns(None, "mp"), ns("mp", None), ns("dp", None), ns("dp", None)),
        out_shardings=(ns(), (ns(None, "mp"), ns("mp", None))),
    )
    args = (a["w1"], a["w2"], a["x"], a["y"])
    loss, (g1, g2) = step(*args)
    hlo = step.lower(*args).compile().as_text()
    out["mlp"] = {
        "loss": float(loss),
        "g1": np.asarray(g1).ravel().tolist(),
        "g2": np.asarray(g2).ravel().tolist(),
        "all_reduce_count": sum(
            1 for line in hlo.splitlines() if " all-reduce(" in line or " all-reduce-start(" in line
        ),
    }

    def train(w1, w2, x, y):
        def body(carry, _):
            w1, w2 = carry
            loss, (g1, g2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w1, w2, x, y)
            return (w1 - 0.1 * g1, w2 - 0.1 * g2), loss

        (w1, w2), losses = jax.lax.scan(body, (w1, w2), jnp.arange(3))
        return w1, w2, losses

    train = jax.jit(
        train,
        in_shardings=(ns(None, "mp"), ns("mp", None), ns("dp", None), ns("dp", None)),
        out_shardings=(ns(None, "mp"), ns("mp", None), ns()),
    )
    w1, w2, losses = train(*args)
    out["scan"] = {
        "losses": np.asarray(losses).tolist(),
        "w1": np.asarray(w1).ravel().tolist(),
        "w2": np.asarray(w2).ravel().tolist(),
    }

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pjit.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    print(f"wrote {path}; all-reduce count {out['mlp']['all_reduce_count']}")


main()
