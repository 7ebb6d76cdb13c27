"""jax.export artifacts and their values, for tests/export.rs (`jaxrs::export`).

Run: python tests/golden/gen_export.py
     (rewrites tests/golden/export/*.jaxexp and tests/golden/export.json)

Each case is a function exported with `jax.export.export(jax.jit(f))(*args, **kwargs)` and
serialized with `Exported.serialize()` into `export/<case>.jaxexp`; export.json holds, per
case, the flat inputs and the flat outputs JAX computes by calling the deserialized artifact
(`jax.export.deserialize(bytes).call(...)`), and the trees as JAX prints them. Inputs are
small exact arithmetic sequences (`seq`), stored in full.

- "mlp": params a list of (w, b) tuples, tanh hidden layer.
- "cnn": a conv (NHWC, 3x3, SAME) + relu + 2x2 average pool + dense, params a nested dict.
- "rnn": an Elman RNN as lax.scan over time; returns (final h, all hs).
- "dict_tree": a dict tree with an int32 leaf and a list, a keyword argument, and a dict
  result holding a list and a None.
- "sharded": tanh(x @ w) on a 2 x 4 ("dp", "mp") mesh of 8 CPU devices, x P("dp", None),
  w P(None, "mp"), result P("dp", "mp").
- "train_step": one SGD step (lr 0.1) of an MLP regression: (new params, loss); "steps"
  holds the losses of three chained steps.
- "unused_arg": f(x, unused, y): module_kept_var_idx drops the unused argument.
- "mlp_vjp": the MLP serialized with vjp_order=1; "vjp" holds the flat inputs (primals, then
  the cotangent of the output) and the VJP's outputs (the primals' cotangents).
- "poly": the MLP exported with a symbolic batch dimension "b"; values for b = 3 and b = 5.
- "multi_platform": exported for ("cuda", "cpu"): the module takes a platform index first.
- "tpu_only": exported for ("tpu",) only: no CPU code path.
- "tpu_unchecked": exported for ("tpu",) with DisabledSafetyCheck.platform().

Hostile artifacts, written by JAX's own serializer from an edited `Exported`, which jaxrs must
refuse with a typed error (no values): "bad_cc_version" (calling convention 11),
"ordered_effect" and "unordered_effect" (a TestingEffect, defined here),
"custom_node" (a namedtuple registered for serialization), "float8" (a float8_e4m3fn input),
"garbage_module" and "truncated_module" (module bytes that are not MLIR, or half of JAX's).
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import collections  # noqa: E402
import dataclasses  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import export, lax  # noqa: E402
from jax._src import effects as jax_effects  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")

# No Python source locations in the modules: the artifacts do not depend on where the
# repository lies.
jax.config.update("jax_traceback_in_locations_limit", 0)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "export")


def seq(shape, mod, shift, scale, dtype=np.float32):
    """((arange(n) % mod) - shift) * scale, row-major: exact in f32."""
    n = int(np.prod(shape))
    return (((np.arange(n) % mod) - shift) * scale).astype(dtype).reshape(shape)


def mlp(params, x):
    (w1, b1), (w2, b2) = params
    return jnp.tanh(x @ w1 + b1) @ w2 + b2


def mlp_args(batch=4):
    params = [
        (seq([4, 8], 7, 3, 0.125), seq([8], 5, 2, 0.25)),
        (seq([8, 3], 9, 4, 0.0625), seq([3], 3, 1, 0.5)),
    ]
    return (params, seq([batch, 4], 11, 5, 0.25)), {}


def cnn(params, x):
    y = lax.conv_general_dilated(
        x, params["conv"]["w"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y + params["conv"]["b"])
    y = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    y = y.reshape(y.shape[0], -1)
    return y @ params["dense"]["w"] + params["dense"]["b"]


def cnn_args():
    params = {
        "conv": {"w": seq([3, 3, 1, 2], 5, 2, 0.25), "b": seq([2], 2, 0, 0.125)},
        "dense": {"w": seq([32, 3], 13, 6, 0.0625), "b": seq([3], 3, 1, 0.25)},
    }
    return (params, seq([2, 8, 8, 1], 9, 4, 0.125)), {}


def rnn(params, xs, h0):
    def cell(h, x):
        h = jnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h

    return lax.scan(cell, h0, xs)


def rnn_args():
    params = {"wx": seq([3, 5], 7, 3, 0.125), "wh": seq([5, 5], 11, 5, 0.0625),
              "b": seq([5], 3, 1, 0.25)}
    return (params, seq([6, 2, 3], 5, 2, 0.25), seq([2, 5], 4, 2, 0.25)), {}


def dict_tree(tree, *, scale):
    a = tree["a"] * scale
    c = tree["b"]["c"]
    d0, d1 = tree["b"]["d"]
    return {"total": a.sum() + c.astype(jnp.float32).sum() + d0.sum() * d1.sum(),
            "parts": [a, c * 2], "nothing": None}


def dict_tree_args():
    tree = {"b": {"d": [seq([3], 4, 1, 0.5), seq([2, 2], 3, 1, 0.25)],
                  "c": seq([2, 3], 5, 2, 1.0, np.int32)},
            "a": seq([2, 2], 5, 2, 0.5)}
    return (tree,), {"scale": np.float32(1.5)}


mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("dp", "mp"))


def sharded_fun():
    return jax.jit(lambda x, w: jnp.tanh(x @ w),
                   in_shardings=(NamedSharding(mesh, P("dp", None)),
                                 NamedSharding(mesh, P(None, "mp"))),
                   out_shardings=NamedSharding(mesh, P("dp", "mp")))


def sharded_args():
    return (seq([8, 16], 7, 3, 0.25), seq([16, 8], 5, 2, 0.125)), {}


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


def train_step(params, batch):
    x, y = batch
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), loss


def train_args():
    params = {"w1": seq([4, 6], 7, 3, 0.125), "b1": seq([6], 3, 1, 0.125),
              "w2": seq([6, 2], 5, 2, 0.25)}
    return (params, (seq([5, 4], 9, 4, 0.25), seq([5, 2], 3, 1, 0.5))), {}


def unused_arg(x, unused, y):
    return x * 2.0 + y


def unused_args():
    return (seq([3], 5, 2, 1.0), seq([7], 3, 1, 1.0), seq([3], 4, 1, 0.5)), {}


def flat_values(tree):
    leaves = jax.tree.leaves(tree)
    out = []
    for leaf in leaves:
        a = np.asarray(leaf)
        out.append({"dtype": str(a.dtype), "shape": list(a.shape),
                    "data": [v.item() for v in a.reshape(-1)]})
    return out


def write_case(name, exp, args, kwargs, extra=None, call=None):
    data = exp.serialize()
    with open(os.path.join(OUT_DIR, f"{name}.jaxexp"), "wb") as f:
        f.write(bytes(data))
    back = export.deserialize(data)
    case = {"in_tree": str(back.in_tree), "out_tree": str(back.out_tree),
            "platforms": list(back.platforms),
            "calling_convention_version": back.calling_convention_version,
            "module_kept_var_idx": list(back.module_kept_var_idx),
            "in_avals": [str(a) for a in back.in_avals],
            "out_avals": [str(a) for a in back.out_avals]}
    if args is not None:
        outs = (call or back.call)(*args, **kwargs)
        case["inputs"] = flat_values((args, kwargs))
        case["outputs"] = flat_values(outs)
    case.update(extra or {})
    return case


Point = collections.namedtuple("Point", ["x", "y"])


class TestingEffect(jax_effects.Effect):
    """An effect JAX can serialize: a nullary constructor giving equal, hashable objects."""

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


jax_effects.lowerable_effects.add_type(TestingEffect)


def write_hostile(cases):
    import ml_dtypes

    x = np.ones((2,), np.float32)
    exp = export.export(jax.jit(lambda x: x * 2))(x)
    edits = {
        "bad_cc_version": dict(calling_convention_version=11),
        "ordered_effect": dict(ordered_effects=(TestingEffect(),)),
        "unordered_effect": dict(unordered_effects=(TestingEffect(),)),
        "garbage_module": dict(mlir_module_serialized=b"not MLIR at all"),
        "truncated_module": dict(
            mlir_module_serialized=exp.mlir_module_serialized[:len(exp.mlir_module_serialized) // 2]),
    }
    for name, edit in edits.items():
        cases[name] = write_case(name, dataclasses.replace(exp, **edit), None, None)
    export.register_namedtuple_serialization(Point, serialized_name="gen_export.Point")
    cases["custom_node"] = write_case(
        "custom_node", export.export(jax.jit(lambda p: p.x + p.y))(Point(x, x)), None, None)
    f8 = np.ones((2,), ml_dtypes.float8_e4m3fn)
    cases["float8"] = write_case(
        "float8", export.export(jax.jit(lambda a: a.astype(jnp.float32)))(f8), None, None)


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    cases = {}

    args, kw = mlp_args()
    cases["mlp"] = write_case("mlp", export.export(jax.jit(mlp))(*args, **kw), args, kw)

    args, kw = cnn_args()
    cases["cnn"] = write_case("cnn", export.export(jax.jit(cnn))(*args, **kw), args, kw)

    args, kw = rnn_args()
    cases["rnn"] = write_case("rnn", export.export(jax.jit(rnn))(*args, **kw), args, kw)

    args, kw = dict_tree_args()
    cases["dict_tree"] = write_case(
        "dict_tree", export.export(jax.jit(dict_tree))(*args, **kw), args, kw)

    args, kw = sharded_args()
    exp = export.export(sharded_fun())(*args)
    shard_info = {"in_shardings": [str(s) for s in exp.in_shardings_jax(mesh)],
                  "out_shardings": [str(s) for s in exp.out_shardings_jax(mesh)]}
    back = export.deserialize(exp.serialize())
    # An 8-device artifact is called under a jit over the mesh it was exported for.
    call = jax.jit(back.call, in_shardings=back.in_shardings_jax(mesh),
                   out_shardings=back.out_shardings_jax(mesh)[0])
    cases["sharded"] = write_case("sharded", exp, args, kw, shard_info, call)

    args, kw = train_args()
    exp = export.export(jax.jit(train_step))(*args)
    params, batch = args
    losses = []
    back = export.deserialize(exp.serialize())
    for _ in range(3):
        params, loss = back.call(params, batch)
        losses.append(float(loss))
    cases["train_step"] = write_case("train_step", exp, args, kw,
                                     {"steps": {"losses": losses,
                                                "params": flat_values(params)}})

    args, kw = mlp_args()
    exp = export.export(jax.jit(mlp))(*args)
    data = exp.serialize(vjp_order=1)
    with open(os.path.join(OUT_DIR, "mlp_vjp.jaxexp"), "wb") as f:
        f.write(bytes(data))
    vjp = export.deserialize(data).vjp()
    cotangent = seq([4, 3], 5, 2, 0.5)
    vjp_inputs = jax.tree.leaves(args) + [cotangent]
    cases["mlp_vjp"] = {"vjp": {"in_tree": str(vjp.in_tree), "out_tree": str(vjp.out_tree),
                                "inputs": flat_values(vjp_inputs),
                                "outputs": flat_values(vjp.call(*vjp_inputs))}}

    args, kw = unused_args()
    cases["unused_arg"] = write_case(
        "unused_arg", export.export(jax.jit(unused_arg))(*args), args, kw)

    (params, x), kw = mlp_args()
    (b,) = export.symbolic_shape("b")
    exp = export.export(jax.jit(mlp))(params, jax.ShapeDtypeStruct((b, 4), jnp.float32))
    back = export.deserialize(exp.serialize())
    extra = {}
    for batch in (3, 5):
        (params, x), _ = mlp_args(batch)
        extra[f"batch{batch}"] = {"inputs": flat_values(((params, x), {})),
                                  "outputs": flat_values(back.call(params, x))}
    cases["poly"] = write_case("poly", exp, None, None, extra)

    args, kw = mlp_args()
    cases["multi_platform"] = write_case(
        "multi_platform",
        export.export(jax.jit(mlp), platforms=("cuda", "cpu"))(*args), args, kw)

    cases["tpu_only"] = write_case(
        "tpu_only", export.export(jax.jit(mlp), platforms=("tpu",))(*args), None, None)
    exp = export.export(jax.jit(mlp), platforms=("tpu",),
                        disabled_checks=[export.DisabledSafetyCheck.platform()])(*args)
    cases["tpu_unchecked"] = write_case("tpu_unchecked", exp, None, None)

    write_hostile(cases)

    with open(os.path.join(HERE, "export.json"), "w") as f:
        json.dump({"jax_version": jax.__version__, "cases": cases}, f, indent=1,
                  sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
