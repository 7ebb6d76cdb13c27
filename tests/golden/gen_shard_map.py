"""Goldens for `jaxrs::shard_map` on 8 CPU devices (tests/shard_map.rs).

Run: python tests/golden/gen_shard_map.py   (rewrites tests/golden/shard_map.json)

Each case of "values" is a small program run with `jax.jit(jax.shard_map(f, mesh=,
in_specs=, out_specs=))` over a 2x4 mesh ('x', 'y') of JAX 0.10.2's Auto axes, on arange
inputs; the Rust test runs the program of the same name and compares every output's shape and
values. Each case of "grads" is the gradient of a scalar loss around a shard_map with respect
to every argument (`jax.grad`, argnums all), and "jvps" the JVP of one with ones as tangents.
The mesh's axes are Auto because jaxrs's are (Explicit axes would only add type checks).
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
from jax.sharding import AxisType, PartitionSpec as P  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def arange(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


W = arange(8, 3) / 10.0

CASES = {
    # name: (function, in_specs, out_specs, argument shapes)
    "psum_y": (lambda a: lax.psum(a, "y"), P("x", "y"), P("x", None), [(4, 8)]),
    "psum_x": (lambda a: lax.psum(a, "x"), P("x", "y"), P(None, "y"), [(4, 8)]),
    "pmax_pmin": (lambda a: (lax.pmax(a, "y"), lax.pmin(a, "x")), P("x", "y"),
                  (P("x", None), P(None, "y")), [(4, 8)]),
    "pmean_y": (lambda a: lax.pmean(a * a, "y"), P("x", "y"), P("x"), [(4, 8)]),
    "all_gather_x_tiled": (lambda b: lax.all_gather(b, "x", tiled=True), P("x"), P("x"), [(2, 3)]),
    "all_gather_y_stacked": (lambda b: lax.all_gather(b, "y", axis=1), P(None, "y"),
                             P(None, None, "y"), [(3, 8)]),
    "psum_scatter_y": (lambda a: lax.psum_scatter(a, "y", scatter_dimension=1, tiled=True),
                       P("x"), P("x", "y"), [(4, 8)]),
    "axis_index": (lambda a: a + lax.axis_index("x") * 10 + lax.axis_index("y"),
                   P("x", "y"), P("x", "y"), [(4, 8)]),
    "ppermute_y": (lambda a: lax.ppermute(a, "y", [(j, (j + 1) % 4) for j in range(4)]),
                   P("x", "y"), P("x", "y"), [(4, 8)]),
    "ppermute_x_partial": (lambda a: lax.ppermute(a, "x", [(0, 1)]), P("x", "y"), P("x", "y"),
                           [(4, 8)]),
    # A collective matmul: the contraction split over "y", the partial products summed.
    "matmul_psum": (lambda x, w: lax.psum(x @ w, "y"), (P("x", "y"), P("y", None)),
                    P("x", None), [(4, 8), (8, 3)]),
    # A captured array (replicated into every device) and a replicated scalar result.
    "captured_and_scalar": (lambda a: (a @ jnp.asarray(W), lax.psum(lax.psum(a.sum(), "x"), "y")),
                            P("x"), (P("x"), P()), [(4, 8)]),
    # Tree arguments and results, and a result computed from collectives over both axes.
    "tree": (lambda t: {"sum": lax.psum(t["u"], "x") + t["v"], "idx": lax.axis_index("y") + 0.0 * t["v"]},
             {"u": P("x", "y"), "v": P(None, "y")}, {"sum": P(None, "y"), "idx": P(None, "y")},
             [{"u": (2, 8), "v": (1, 8)}]),
}


def make_args(shapes):
    out = []
    for s in shapes:
        if isinstance(s, dict):
            out.append({k: arange(*v) for k, v in s.items()})
        else:
            out.append(arange(*s))
    return out


def flat(x):
    leaves = jax.tree.leaves(x)
    return [{"shape": list(np.shape(l)), "values": np.asarray(l, np.float64).reshape(-1).tolist()}
            for l in leaves]


results = {}
for name, (f, in_specs, out_specs, shapes) in CASES.items():
    args = make_args(shapes)
    specs = in_specs if isinstance(in_specs, tuple) else (in_specs,)
    mapped = jax.shard_map(f, mesh=mesh, in_specs=specs, out_specs=out_specs)
    out = jax.jit(mapped)(*args)
    results[name] = flat(out)


def sm(f, in_specs, out_specs):
    return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)


def small(*shape):
    return (arange(*shape) - np.prod(shape) / 2) / np.prod(shape)


perm = [(j, (j + 1) % 4) for j in range(4)]
GRAD_CASES = {
    # Data parallel: w every device's whole, x's rows over "x"; the loss summed over "x".
    "dp_loss": (lambda w, x: sm(lambda w, x: lax.psum(jnp.sum(jnp.tanh(x @ w)), "x"),
                                (P(), P("x")), P())(w, x), [(8, 3), (4, 8)]),
    # The collective matmul, its result used outside.
    "matmul_psum": (lambda x, w: jnp.sum(jnp.sin(sm(lambda x, w: lax.psum(x @ w, "y"),
                                                    (P("x", "y"), P("y", None)), P("x", None))(x, w))),
                    [(4, 8), (8, 3)]),
    # An invariant value meeting a varying one (an implicit pvary, transposed to a psum).
    "broadcast_add": (lambda b, a: jnp.sum(sm(lambda b, a: jnp.cos(a + b), (P(None, "y"), P("x", "y")),
                                               P("x", "y"))(b, a) ** 2), [(1, 8), (4, 8)]),
    "all_gather": (lambda b: jnp.sum(sm(lambda b: lax.all_gather(b, "x", tiled=True) * (jnp.arange(2.0)[:, None] + 1.0),
                                        P("x"), P("x"))(b) ** 2), [(2, 3)]),
    "ppermute": (lambda a: jnp.sum(sm(lambda a: lax.ppermute(a, "y", perm) * lax.axis_index("y"),
                                      P("x", "y"), P("x", "y"))(a) ** 2), [(4, 8)]),
    "psum_scatter": (lambda a: jnp.sum(sm(lambda a: lax.psum_scatter(a * a, "y", scatter_dimension=1, tiled=True),
                                          P("x"), P("x", "y"))(a) ** 3), [(4, 8)]),
    # psum of a value already the same along the axis (JAX casts it to varying first).
    "psum_of_invariant": (lambda w: sm(lambda w: lax.psum(w * w, "y"), P("x"), P("x"))(w).sum(),
                          [(4, 2)]),
}

grads = {}
for name, (loss, shapes) in GRAD_CASES.items():
    args = [small(*s) for s in shapes]
    g = jax.jit(jax.grad(loss, argnums=tuple(range(len(args)))))(*args)
    grads[name] = flat(g)

jvps = {}
for name in ["matmul_psum", "broadcast_add", "dp_loss"]:
    loss, shapes = GRAD_CASES[name]
    args = [small(*s) for s in shapes]
    tangents = [np.ones_like(a) for a in args]
    _, t = jax.jit(lambda *a: jax.jvp(loss, a[: len(a) // 2], a[len(a) // 2:]))(*args, *tangents)
    jvps[name] = flat(t)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shard_map.json")
with open(path, "w") as fh:
    json.dump({"values": results, "grads": grads, "jvps": jvps}, fh, indent=1, sort_keys=True)
    fh.write("\n")
print(f"wrote {path}")
