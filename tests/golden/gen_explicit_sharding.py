"""Explicit sharding (sharding in types) on 8 CPU devices, for tests/explicit_sharding.rs.

Run: python tests/golden/gen_explicit_sharding.py   (rewrites tests/golden/explicit_sharding.json)

A 2 x 4 ("dp", "mp") mesh with Explicit axes (jax.make_mesh's default). Inputs: x f32[8,16]
sharded P("dp", None), y f32[8,16] unsharded, w f32[16,32] sharded P(None, "mp"), all
small exact sequences rebuilt the same way in Rust.
- "types": per case, the type JAX gives the result of one operation inside jit (as
  jaxrs prints it: f32[8@dp,16]), or "error" where JAX refuses to type it.
- "program": the sdy.sharding_constraint specs of f's StableHLO, in order, and its results'
  types, for f(x, w) = (sum(sin(x @ w), 1), transpose(x @ w)).
- "grad": loss(x, w) = sum(sin(x @ w)): the loss, the gradients' types and values.
- "vmap": the type of the example inside vmap over x's axis 0 and axis 1.
- "auto_axes": x f32[8,16] split P("dp", "mp") times w f32[16,4] split P("mp", None) inside
  auto_axes(out_sharding=P("dp", None)) (ambiguous over explicit axes): the argument's type
  inside, the result's type, values and the program's constraints; and the type inside
  auto_axes over "mp" alone.
- "explicit_axes": on a mesh of Auto axes, x f32[8,16] and w f32[16,4] (unsharded) through
  explicit_axes(in_sharding=(P("dp", None), P(None, "mp"))) computing sin(x @ w): the types
  inside and of the result outside, the program's constraints, the values.
"""

import json
import os
import re
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AxisType, PartitionSpec as P  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")


def seq(shape, mod, shift, scale):
    """((arange(n) % mod) - shift) * scale, f32, row-major: exact in f32."""
    n = int(np.prod(shape))
    return (((np.arange(n) % mod) - shift) * scale).astype(np.float32).reshape(shape)


def short(t):
    """JAX's type string as jaxrs prints it: float32[8@dp,16] -> f32[8@dp,16]."""
    return re.sub(r"^float32", "f32", re.sub(r"^int32", "i32", str(t)))


mesh = jax.make_mesh((2, 4), ("dp", "mp"))
assert all(t == jax.sharding.AxisType.Explicit for t in mesh.axis_types)

CASES = {
    "sin": lambda x, y, w: jnp.sin(x),
    "add_unsharded": lambda x, y, w: x + y,
    "select": lambda x, y, w: lax.select(x > 0, x, y),
    "slice_sharded_dim": lambda x, y, w: lax.slice(x, (0, 0), (4, 16)),
    "slice_other_dim": lambda x, y, w: lax.slice(x, (0, 2), (8, 10)),
    "concatenate_0": lambda x, y, w: lax.concatenate([x, x], 0),
    "concatenate_1": lambda x, y, w: lax.concatenate([x, y], 1),
    "reshape_merge": lambda x, y, w: lax.reshape(x, (128,)),
    "reshape_split": lambda x, y, w: lax.reshape(x, (2, 4, 16)),
    "reshape_split_minor": lambda x, y, w: lax.reshape(x, (8, 4, 4)),
    "reshape_regroup": lambda x, y, w: lax.reshape(x, (4, 32)),
    "transpose": lambda x, y, w: lax.transpose(x, (1, 0)),
    "broadcast_in_dim": lambda x, y, w: lax.broadcast_in_dim(x, (8, 3, 16), (0, 2)),
    "reduce_sum_1": lambda x, y, w: lax.reduce_sum(x, (1,)),
    "reduce_sum_0": lambda x, y, w: lax.reduce_sum(x, (0,)),
    "reduce_max_1": lambda x, y, w: lax.reduce_max(x, (1,)),
    "cumsum_1": lambda x, y, w: lax.cumsum(x, 1),
    "cumsum_0": lambda x, y, w: lax.cumsum(x, 0),
    "sort_1": lambda x, y, w: lax.sort(x, dimension=1),
    "sort_0": lambda x, y, w: lax.sort(x, dimension=0),
    "pad_1": lambda x, y, w: lax.pad(x, 0.0, ((0, 0, 0), (1, 1, 0))),
    "dot_x_w": lambda x, y, w: lax.dot_general(x, w, (((1,), (0,)), ((), ()))),
    "dot_yT_x": lambda x, y, w: lax.dot_general(y, x, (((0,), (0,)), ((), ()))),
    "dot_x_xT": lambda x, y, w: lax.dot_general(x, x, (((1,), (1,)), ((), ()))),
    "dot_contract_both": lambda x, y, w: lax.dot_general(x, x, (((0,), (0,)), ((), ()))),
    "dot_out_sharding": lambda x, y, w: lax.dot_general(
        x, x, (((0,), (0,)), ((), ())), out_sharding=P(None, "mp")
    ),
    "convert": lambda x, y, w: lax.convert_element_type(x, jnp.int32),
    "reshard": lambda x, y, w: jax.sharding.reshard(x, P(None, "mp")),
    "take_1": lambda x, y, w: jnp.take(x, jnp.array([0, 5, 2]), axis=1),
    "take_0": lambda x, y, w: jnp.take(x, jnp.array([0, 5, 2]), axis=0),
    "take_sharded_indices": lambda x, y, w: jnp.take(w, sharded_ids(), axis=0),
    "take_along_1": lambda x, y, w: jnp.take_along_axis(x, ids(), axis=1),
    "take_along_1_sharded": lambda x, y, w: jnp.take_along_axis(x, sharded_ids(), axis=1),
    "take_along_0": lambda x, y, w: jnp.take_along_axis(x, jnp.zeros((2, 16), jnp.int32), axis=0),
}


def ids():
    """i32[8,4] indices, unsharded."""
    return jnp.asarray((np.arange(32) % 5).reshape(8, 4), jnp.int32)


def sharded_ids():
    return jax.sharding.reshard(ids(), P("dp", None))


def inputs():
    x = jax.device_put(seq((8, 16), 7, 3.0, 0.25), P("dp", None))
    y = jax.device_put(seq((8, 16), 5, 2.0, 0.5), P(None, None))
    w = jax.device_put(seq((16, 32), 11, 5.0, 0.125), P(None, "mp"))
    return x, y, w


def types():
    x, y, w = inputs()
    out = {}
    for name, f in CASES.items():
        try:
            out[name] = short(jax.typeof(jax.jit(f)(x, y, w)))
        except Exception as e:  # noqa: BLE001
            assert "Sharding" in type(e).__name__ or "shard" in str(e).lower(), (name, e)
            out[name] = "error"
    return out


def program():
    x, _, w = inputs()

    def f(x, w):
        h = x @ w
        return jnp.sum(jnp.sin(h), axis=1), h.T

    text = jax.jit(f).lower(x, w).as_text()
    specs = re.findall(r"sdy\.sharding_constraint %\w+ <@mesh, (\[[^\]]*\])>", text)
    results = [short(jax.typeof(r)) for r in jax.jit(f)(x, w)]
    return {"constraints": specs, "results": results}


def grad():
    x, _, w = inputs()

    def loss(x, w):
        return jnp.sum(jnp.sin(x @ w))

    value, (dx, dw) = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))(x, w)
    return {
        "loss": float(value),
        "dx_type": short(jax.typeof(dx)),
        "dw_type": short(jax.typeof(dw)),
        "dx": np.asarray(dx).ravel().tolist(),
        "dw": np.asarray(dw).ravel().tolist(),
    }


def vmapped():
    x, _, _ = inputs()
    seen = {}

    def example(name):
        def f(r):
            seen[name] = short(jax.typeof(r))
            return r * 2.0

        return f

    jax.jit(jax.vmap(example("axis_0"), in_axes=0))(x)
    jax.jit(jax.vmap(example("axis_1"), in_axes=1))(x)
    return seen


def auto():
    x = jax.device_put(seq((8, 16), 7, 3.0, 0.25), P("dp", "mp"))
    w = jax.device_put(seq((16, 4), 11, 5.0, 0.125), P("mp", None))
    seen = {}

    def inner(x, w):
        seen["inside"] = short(jax.typeof(x))
        return x @ w

    def f(x, w):
        return jax.sharding.auto_axes(inner, out_sharding=P("dp", None))(x, w)

    text = jax.jit(f).lower(x, w).as_text()
    y = jax.jit(f)(x, w)

    def partial_inner(x):
        seen["partial_inside"] = short(jax.typeof(x))
        return x * 2.0

    partial = jax.sharding.auto_axes(partial_inner, axes="mp", out_sharding=P("dp", "mp"))
    z = jax.jit(partial)(x)
    return {
        "inside": seen["inside"],
        "result": short(jax.typeof(y)),
        "constraints": re.findall(
            r"sdy\.sharding_constraint %\w+ <@mesh, (\[[^\]]*\])>", text
        ),
        "values": np.asarray(y).ravel().tolist(),
        "partial_inside": seen["partial_inside"],
        "partial_result": short(jax.typeof(z)),
    }


def explicit():
    auto_mesh = jax.make_mesh((2, 4), ("dp", "mp"), axis_types=(AxisType.Auto,) * 2)
    seen = {}

    def inner(x, w):
        h = x @ w
        seen.update(x=short(jax.typeof(x)), w=short(jax.typeof(w)), h=short(jax.typeof(h)))
        return jnp.sin(h)

    def f(x, w):
        y = jax.sharding.explicit_axes(inner, in_sharding=(P("dp", None), P(None, "mp")))(x, w)
        seen["out"] = short(jax.typeof(y))
        return y

    x, w = seq((8, 16), 7, 3.0, 0.25), seq((16, 4), 11, 5.0, 0.125)
    with jax.set_mesh(auto_mesh):
        text = jax.jit(f).lower(x, w).as_text()
        y = jax.jit(f)(x, w)
    return {
        "types": seen,
        "constraints": re.findall(
            r"sdy\.sharding_constraint %\w+ <@mesh, (\[[^\]]*\])>", text
        ),
        "values": np.asarray(y).ravel().tolist(),
    }


explicit_axes_golden = explicit()
with jax.set_mesh(mesh):
    golden = {
        "types": types(),
        "program": program(),
        "grad": grad(),
        "vmap": vmapped(),
        "auto_axes": auto(),
        "explicit_axes": explicit_axes_golden,
    }

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "explicit_sharding.json")
with open(path, "w") as f:
    json.dump(golden, f, indent=1)
    f.write("\n")
print(f"wrote {path}")
