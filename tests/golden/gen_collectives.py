#!/usr/bin/env python3
"""Golden values for the named-axis collectives under `jax.vmap(axis_name=...)`: for each of
psum, pmean, pmax, pmin, all_gather, psum_scatter, ppermute, all_to_all, axis_index, pshuffle,
pswapaxes and pbroadcast (from its definition: see pbroadcast_reference), the value, the
JVP and the VJP of the batched function, the JVP and VJP taken inside the vmap (which
exercise the collectives' own differentiation rules), and two nested vmaps with the
collective over the outer or the inner name.

Usage (from the repository root):

    pip install jax==0.10.2 numpy           # CPU jax is enough
    python tests/golden/gen_collectives.py  # rewrites tests/golden/collectives.json

Generated with JAX 0.10.2 on the CPU backend, float32. Deterministic: every case draws its
inputs from numpy's default_rng seeded with the crc32 of its name. The format is described in
tests/golden/README.md ("collectives.json").

JAX 0.10.2 has no differentiation rule for pmax/pmin ("Differentiation rule for 'pmax' not
implemented"). For them the derivatives come from the same program written with reduce_max /
reduce_min over the batch axis (what vmap makes of pmax), whose derivative goes to the
selected elements, split evenly between ties; the case says so (`"ad_reference"`), and the
inside-the-vmap VJP (psum's convention, no JAX equivalent) is left out.
"""

import json
import os
import sys
import zlib

os.environ["JAX_PLATFORMS"] = "cpu"
# jax.vmap asks ppermute for a whole permutation; a partial one is computed under jax.pmap.
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import numpy as np  # noqa: E402
import jax  # noqa: E402

JAX_VERSION = "0.10.2"
if jax.__version__ != JAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"gen_collectives.py: expected jax=={JAX_VERSION}, found {jax.__version__} "
             "(pass --any-jax-version to run anyway)")

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
N = 8  # the batch: the same size as the 8 replicas of the lowered test


def enc(a):
    a = np.asarray(a)
    if a.dtype != np.float32:
        a = a.astype(np.float32)
    return {"dtype": "float32", "shape": list(a.shape),
            "data": [float(x) for x in a.reshape(-1)]}


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def ring(n):
    return [(k, (k + 1) % n) for k in range(n)]


def collective(op, params, name):
    """The per-example function: the collective applied to sin(x) (axis_index: x * index)."""
    def f(x):
        y = jnp.sin(x)
        if op == "psum":
            return lax.psum(y, name)
        if op == "pmean":
            return lax.pmean(y, name)
        if op == "pmax":
            return lax.pmax(y, name)
        if op == "pmin":
            return lax.pmin(y, name)
        if op == "all_gather":
            return lax.all_gather(y, name, axis=params["axis"], tiled=params["tiled"])
        if op == "psum_scatter":
            return lax.psum_scatter(y, name, scatter_dimension=params["scatter_dimension"],
                                    tiled=params["tiled"])
        if op == "ppermute":
            return lax.ppermute(y, name, perm=[tuple(p) for p in params["perm"]])
        if op == "all_to_all":
            return lax.all_to_all(y, name, params["split_axis"], params["concat_axis"],
                                  tiled=params["tiled"])
        if op == "axis_index":
            return x * lax.axis_index(name)
        if op == "pshuffle":
            return lax.pshuffle(y, name, params["perm"])
        if op == "pswapaxes":
            return lax.pswapaxes(y, name, params["axis"])
        if op == "pbroadcast":
            return pbroadcast_reference(y, name, params["source"])
        raise ValueError(op)
    return f


def pbroadcast_reference(y, name, source):
    """lax.pbroadcast as its documentation defines it. JAX 0.10.2 lowers pbroadcast on GPU
    only, and its vmap rule fails (`v.take([source] * n, d)` hands jnp.take a list), so on
    CPU the goldens come from the definition: psum(where(axis_index == source, x, 0))."""
    return lax.psum(jnp.where(lax.axis_index(name) == source, y, jnp.zeros_like(y)), name)


def untiled_all_to_all_reference(params, name):
    """An untiled all_to_all with two different axes, written as JAX's all_to_all writes it
    (a new axis, the tiled exchange, the split axis dropped) but with the tiled form, whose
    transpose JAX 0.10.2 gets right: its untiled transpose re-applies the untiled reshapes to
    the already reshaped cotangent ("Expected cotangent type float32[8,3,1] but got
    float32[8,1,3]")."""
    split, concat = params["split_axis"], params["concat_axis"]

    def f(x):
        y = jnp.sin(x)
        s, c = split, concat
        if s < c:
            c += 1
        else:
            s += 1
        y = lax.all_to_all(jnp.expand_dims(y, c), name, s, c, tiled=True)
        return jnp.squeeze(y, s)
    return f


def reduce_reference(op):
    """pmax/pmin as vmap makes them: reduce over the batch axis, broadcast back."""
    red = jnp.max if op == "pmax" else jnp.min

    def g(xs):
        y = jnp.sin(xs)
        return jnp.broadcast_to(red(y, axis=0), y.shape)
    return g


def case(name, op, params, example_shape, ints=False, via_pmap=False):
    r = rng(name)
    shape = (N, *example_shape)
    if ints:
        # Few distinct values: ties between the members.
        x = r.integers(0, 3, size=shape).astype(np.float32)
    else:
        x = r.normal(size=shape).astype(np.float32)
    f = collective(op, params, "i")
    mapper = jax.pmap if via_pmap else jax.vmap
    batched = mapper(f, axis_name="i")
    value = batched(x)
    t = r.normal(size=shape).astype(np.float32)
    ct = r.normal(size=value.shape).astype(np.float32)
    out = {"name": name, "op": op, "params": params, "x": enc(x), "t": enc(t), "ct": enc(ct),
           "value": enc(value)}
    if op in ("pmax", "pmin"):
        ref = reduce_reference(op)
        np.testing.assert_allclose(ref(x), value, rtol=0, atol=0)
        out["ad_reference"] = "reduce_" + op[1:]
        out["jvp"] = enc(jax.jvp(ref, (x,), (t,))[1])
        out["vjp"] = enc(jax.vjp(ref, x)[1](ct)[0])
        out["jvp_inside"] = out["jvp"]
        return out
    f_ad = f
    if op == "all_to_all" and not params["tiled"] and params["split_axis"] != params["concat_axis"]:
        f_ad = untiled_all_to_all_reference(params, "i")
        np.testing.assert_array_equal(mapper(f_ad, axis_name="i")(x), value)
        out["ad_reference"] = "tiled all_to_all"
    batched_ad = mapper(f_ad, axis_name="i")
    out["jvp"] = enc(jax.jvp(batched, (x,), (t,))[1])
    out["vjp"] = enc(jax.vjp(batched_ad, x)[1](ct)[0])
    out["jvp_inside"] = enc(mapper(lambda x, t: jax.jvp(f, (x,), (t,))[1],
                                   axis_name="i")(x, t))
    out["vjp_inside"] = enc(mapper(lambda x, c: jax.vjp(f_ad, x)[1](c)[0],
                                   axis_name="i")(x, ct))
    if via_pmap:
        out["via"] = "pmap"
    return out


def nested(name, op, params_for, example_shape):
    """vmap over "i" (outer, 2) of vmap over "j" (inner, 4), the collective over `over`."""
    outer, inner = 2, 4
    r = rng(name)
    x = r.normal(size=(outer, inner, *example_shape)).astype(np.float32)
    cases = []
    for over, size in (("i", outer), ("j", inner)):
        params = params_for(size)
        f = collective(op, params, over)
        batched = jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i")
        value = batched(x)
        ct = rng(name + over).normal(size=value.shape).astype(np.float32)
        cases.append({"name": f"{name}/over_{over}", "op": op, "params": params, "over": over,
                      "x": enc(x), "ct": enc(ct), "value": enc(value),
                      "vjp": enc(jax.vjp(batched, x)[1](ct)[0])})
    return cases


def data_parallel_grad():
    """The pmap training pattern on one device: per-example gradients averaged with pmean."""
    r = rng("dp_grad")
    w = r.normal(size=(3, 2)).astype(np.float32)
    xs = r.normal(size=(N, 3)).astype(np.float32)

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    def step(x):
        g = jax.grad(loss)(w, x)
        return lax.pmean(g, "i"), lax.psum(loss(w, x), "i")

    g, total = jax.vmap(step, axis_name="i")(xs)
    return {"name": "dp_grad", "w": enc(w), "x": enc(xs), "grad": enc(g[0]),
            "total_loss": float(total[0])}


def main():
    cases = [
        case("psum", "psum", {}, (3,)),
        case("pmean", "pmean", {}, (3,)),
        case("pmax", "pmax", {}, (3,), ints=True),
        case("pmin", "pmin", {}, (3,), ints=True),
        case("all_gather/axis0", "all_gather", {"axis": 0, "tiled": False}, (3,)),
        case("all_gather/axis1", "all_gather", {"axis": 1, "tiled": False}, (3,)),
        case("all_gather/tiled", "all_gather", {"axis": 1, "tiled": True}, (2, 3)),
        case("psum_scatter/untiled", "psum_scatter",
             {"scatter_dimension": 0, "tiled": False}, (N, 3)),
        case("psum_scatter/tiled", "psum_scatter",
             {"scatter_dimension": 1, "tiled": True}, (3, 2 * N)),
        case("ppermute/ring", "ppermute", {"perm": ring(N)}, (3,)),
        case("ppermute/partial", "ppermute", {"perm": [(0, 3), (5, 1), (2, 2)]}, (3,),
             via_pmap=True),
        case("axis_index", "axis_index", {}, (3,)),
        case("all_to_all/untiled", "all_to_all",
             {"split_axis": 0, "concat_axis": 1, "tiled": False}, (N, 3)),
        case("all_to_all/same_axis", "all_to_all",
             {"split_axis": 1, "concat_axis": 1, "tiled": False}, (3, N)),
        case("all_to_all/concat_before", "all_to_all",
             {"split_axis": 1, "concat_axis": 0, "tiled": False}, (3, N, 2)),
        case("all_to_all/tiled", "all_to_all",
             {"split_axis": 1, "concat_axis": 0, "tiled": True}, (3, 2 * N)),
        case("all_to_all/tiled_same_axis", "all_to_all",
             {"split_axis": 0, "concat_axis": 0, "tiled": True}, (2 * N, 3)),
        # Under jax.pmap: the 8 devices exchange blocks.
        case("all_to_all/pmap", "all_to_all",
             {"split_axis": 0, "concat_axis": 1, "tiled": False}, (N, 2), via_pmap=True),
        case("all_to_all/pmap_tiled", "all_to_all",
             {"split_axis": 1, "concat_axis": 0, "tiled": True}, (2, N), via_pmap=True),
        case("pshuffle", "pshuffle", {"perm": [3, 7, 0, 2, 6, 1, 5, 4]}, (3,)),
        case("pswapaxes", "pswapaxes", {"axis": 1}, (3, N)),
        case("pbroadcast", "pbroadcast", {"source": 5}, (3,)),
    ]
    nests = []
    for op, params_for, shape in [
        ("psum", lambda n: {}, (3,)),
        ("pmean", lambda n: {}, (3,)),
        ("pmax", lambda n: {}, (3,)),
        ("pmin", lambda n: {}, (3,)),
        ("all_gather", lambda n: {"axis": 0, "tiled": False}, (3,)),
        ("psum_scatter", lambda n: {"scatter_dimension": 0, "tiled": True}, (8,)),
        ("ppermute", lambda n: {"perm": ring(n)}, (3,)),
        ("axis_index", lambda n: {}, (3,)),
        ("all_to_all", lambda n: {"split_axis": 0, "concat_axis": 1, "tiled": True}, (8, 3)),
        ("pshuffle", lambda n: {"perm": list(range(n))[::-1]}, (3,)),
        ("pbroadcast", lambda n: {"source": 1}, (3,)),
    ]:
        if op in ("pmax", "pmin"):
            # Only values: JAX cannot differentiate them.
            nests.extend(nested_values("nested/" + op, op, shape))
        else:
            nests.extend(nested("nested/" + op, op, params_for, shape))
    out = {"jax_version": jax.__version__, "axis_size": N, "cases": cases, "nested": nests,
           "dp_grad": data_parallel_grad()}
    path = os.path.join(HERE, "collectives.json")
    with open(path, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
        fh.write("\n")
    print(f"wrote {path}: {len(cases)} cases, {len(nests)} nested")


def nested_values(name, op, example_shape):
    outer, inner = 2, 4
    x = rng(name).normal(size=(outer, inner, *example_shape)).astype(np.float32)
    cases = []
    for over in ("i", "j"):
        f = collective(op, {}, over)
        value = jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i")(x)
        cases.append({"name": f"{name}/over_{over}", "op": op, "params": {}, "over": over,
                      "x": enc(x), "value": enc(value)})
    return cases


if __name__ == "__main__":
    main()
