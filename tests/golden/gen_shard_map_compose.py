"""Goldens for `jaxrs::shard_map` composed with the rest (tests/shard_map_compose.rs):
`all_to_all` inside it, `jax.vmap` of it, `scan` / `checkpoint` (remat) inside its body,
`lax.pcast` inside it, `jax.smap` (the single-axis form), and `jax.custom_vjp` /
`jax.custom_jvp` functions with collectives in their rules inside it, on 8 CPU devices.

Run: python tests/golden/gen_shard_map_compose.py   (rewrites tests/golden/shard_map_compose.json)

The mesh is 2x4 ('x', 'y') of Auto axes, as in gen_shard_map.py. Every argument is
`small(shape)`: `(arange - size / 2) / size` in float32. "values" holds each program's
outputs (`jax.jit` of it), "grads" the gradient of a scalar loss with respect to every
argument (`jax.grad`, argnums all). Each leaf is stored as its shape and values.

JAX 0.10.2 cannot transpose an untiled `all_to_all` whose two axes differ (its transpose
re-applies the untiled reshapes to the reshaped cotangent and fails with "Expected cotangent
type float32[1,2,3] but got ..."); the gradient case "a2a_untiled" is therefore computed with
the same exchange written as JAX's `all_to_all` writes it (a new axis, the tiled exchange,
the old axis dropped), whose values are checked equal to the untiled call's.
"""

import contextlib
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


def sm(f, in_specs, out_specs):
    return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)


def small(*shape):
    n = int(np.prod(shape))
    return ((np.arange(n, dtype=np.float32) - n / 2) / n).reshape(shape)


def weights(shape):
    """Distinct weights for a loss, so that a misplaced element changes it."""
    n = int(np.prod(shape))
    return jnp.asarray(np.sin(np.arange(n) * 0.7).reshape(shape), jnp.float32)


def untiled_a2a_reference(x, name, split, concat):
    s, c = split, concat
    if s < c:
        c += 1
    else:
        s += 1
    y = lax.all_to_all(jnp.expand_dims(x, c), name, s, c, tiled=True)
    return jnp.squeeze(y, s)


# all_to_all inside shard_map.
a2a_cols_to_rows = sm(lambda a: lax.all_to_all(a, "y", 0, 1, tiled=True), P(None, "y"), P("y"))
a2a_untiled_x = sm(lambda a: lax.all_to_all(a, "x", 1, 0), P("x"), P(None, "x"))
a2a_untiled_x_ref = sm(lambda a: untiled_a2a_reference(a, "x", 1, 0), P("x"), P(None, "x"))
a2a_same_axis = sm(lambda a: lax.all_to_all(a, "y", 0, 0), P("y", "x"), P("y", "x"))
a2a_tiled_x = sm(lambda a: lax.all_to_all(a, "x", 1, 1, tiled=True) * 2.0, P("y", "x"),
                 P("y", "x"))

# vmap of shard_map.
vm_psum = jax.vmap(sm(lambda a: lax.psum(a, "y") * a, P("x", "y"), P("x", "y")))
vm_matmul = jax.vmap(sm(lambda x, w: lax.psum(x @ w, "y"), (P("x", "y"), P("y", None)),
                        P("x", None)), in_axes=(1, None))
ring = [(j, (j + 1) % 4) for j in range(4)]
vm_gather_permute = jax.vmap(
    sm(lambda b, a: (lax.all_gather(b, "x", tiled=True), lax.ppermute(a, "y", ring)
                     * lax.axis_index("y")),
       (P("x"), P("x", "y")), (P("x"), P("x", "y"))),
    in_axes=(0, 2), out_axes=(1, 0))
vm_a2a = jax.vmap(sm(lambda a: lax.all_to_all(a, "y", 0, 1, tiled=True), P(None, "y"), P("y")))
vm_vm = jax.vmap(jax.vmap(sm(lambda a: lax.psum(a, "x"), P("x"), P())))


# scan and remat inside shard_map.
def layers(ws, x):
    """A scan over layers; the per-step output is summed over "x" outside the loop."""
    def body(h, w):
        h = jnp.tanh(h @ w)
        return h, jnp.sum(h)
    h, ys = lax.scan(body, x, ws)
    return h, lax.psum(ys, "x")


scan_layers = sm(layers, (P(), P("x")), (P("x"), P()))


def layers_psum_inside(ws, x):
    """A scan whose body sums over "x" (a psum inside the loop)."""
    def body(h, w):
        h = jnp.tanh(h @ w)
        s = lax.psum(jnp.sum(h * h), "x")
        return h / (1.0 + s), s
    return lax.scan(body, x, ws)


scan_psum = sm(layers_psum_inside, (P(), P("x")), (P("x"), P()))


def mlp_block(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


remat_body = sm(lambda w, x: lax.psum(jax.checkpoint(mlp_block)(w, x), "x"), (P(), P("x")), P())
remat_psum = sm(jax.checkpoint(lambda w, x: lax.psum(x @ w, "y")), (P("y", None), P("x", "y")),
                P("x", None))
remat_scan = sm(lambda ws, x: jax.checkpoint(layers)(ws, x), (P(), P("x")), (P("x"), P()))

# lax.pcast inside shard_map: a value every device holds the same, used as a per-device one
# (its gradient is summed over the devices).
pcast_x = sm(lambda w, x: lax.pcast(w, "x", to="varying") * x, (P(), P("x")), P("x"))
pcast_xy = sm(lambda w, x: jnp.tanh(lax.pcast(w, ("x", "y"), to="varying") * x),
              (P(), P("x", "y")), P("x", "y"))
pcast_psum = sm(lambda w, x: lax.psum(lax.pcast(jnp.sin(w), "y", to="varying") * x, "y"),
                (P(), P(None, "y")), P())

# jax.smap: a shard_map over one mesh axis, with vmap's axes (the mesh from the scope).
smap_rows = jax.smap(lambda w, x: jnp.tanh(x @ w), in_axes=(None, 0), out_axes=0, axis_name="x")
smap_psum = jax.smap(lambda x: lax.psum(jnp.sum(x * x, axis=1), "y"), in_axes=1, out_axes=None,
                     axis_name="y")
smap_cols = jax.smap(lambda a, b: (a * lax.axis_index("y"), jnp.cos(b)), in_axes=(1, 0),
                     out_axes=(1, 0), axis_name="y")


# Custom rules with collectives inside a shard_map body.
@jax.custom_vjp
def sin_total(x):
    """sum over "x" of sin(x), its gradient from a residual."""
    return lax.psum(jnp.sin(x), "x")


sin_total.defvjp(lambda x: (sin_total(x), jnp.cos(x)), lambda c, g: (c * g,))


@jax.custom_vjp
def normalize(x):
    """x over the norm of the whole row of devices along "y"; the backward pass sums too."""
    return x / jnp.sqrt(lax.psum(jnp.sum(x * x), "y"))


def normalize_fwd(x):
    n = jnp.sqrt(lax.psum(jnp.sum(x * x), "y"))
    return x / n, (x / n, n)


def normalize_bwd(res, g):
    y, n = res
    return ((g - y * lax.psum(jnp.sum(y * g), "y")) / n,)


normalize.defvjp(normalize_fwd, normalize_bwd)


@jax.custom_jvp
def softplus_total(x):
    """sum over "x" of softplus(x), its JVP a psum of tangents."""
    return lax.psum(jnp.log1p(jnp.exp(x)), "x")


@softplus_total.defjvp
def softplus_total_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus_total(x), lax.psum(jax.nn.sigmoid(x) * t, "x")


custom_vjp_psum = sm(lambda x: sin_total(x) * 2.0, P("x", "y"), P(None, "y"))
custom_vjp_norm = sm(lambda x: jnp.tanh(normalize(x)), P("x", "y"), P("x", "y"))
custom_jvp_psum = sm(lambda w, x: softplus_total(x * w), (P(), P("x")), P())


def scope(name):
    """The smap programs run with the mesh in scope (jax.smap reads it from there)."""
    return jax.set_mesh(mesh) if name.startswith("smap") else contextlib.nullcontext()


A48 = (4, 8)
VALUES = {
    "a2a_cols_to_rows": (a2a_cols_to_rows, [(4, 16)]),
    "a2a_untiled_x": (a2a_untiled_x, [(2, 2, 3)]),
    "a2a_same_axis": (a2a_same_axis, [(16, 6)]),
    "a2a_tiled_x": (a2a_tiled_x, [(4, 4)]),
    "vmap_psum": (vm_psum, [(3, 4, 8)]),
    "vmap_matmul": (vm_matmul, [(4, 3, 8), (8, 3)]),
    "vmap_gather_permute": (vm_gather_permute, [(3, 2, 3), (4, 8, 3)]),
    "vmap_a2a": (vm_a2a, [(2, 4, 16)]),
    "vmap_vmap": (vm_vm, [(2, 3, 4, 5)]),
    "scan_layers": (scan_layers, [(3, 8, 8), A48]),
    "scan_psum": (scan_psum, [(3, 8, 8), A48]),
    "remat_body": (remat_body, [(8, 3), A48]),
    "remat_psum": (remat_psum, [(8, 3), A48]),
    "remat_scan": (remat_scan, [(3, 8, 8), A48]),
    "pcast_x": (pcast_x, [(3,), (4, 3)]),
    "pcast_xy": (pcast_xy, [(4,), (2, 4)]),
    "pcast_psum": (pcast_psum, [(3, 1), (3, 8)]),
    "smap_rows": (smap_rows, [(3, 5), (4, 3)]),
    "smap_psum": (smap_psum, [(3, 8)]),
    "smap_cols": (smap_cols, [(3, 8), (4, 2)]),
    "custom_vjp_psum": (custom_vjp_psum, [(4, 8)]),
    "custom_vjp_norm": (custom_vjp_norm, [(4, 8)]),
    "custom_jvp_psum": (custom_jvp_psum, [(3,), (4, 3)]),
}


def loss_of(f):
    """sum(sin(out) * weights) over every output leaf."""
    def loss(*args):
        outs = jax.tree.leaves(f(*args))
        return sum(jnp.sum(jnp.sin(o) * weights(o.shape)) for o in outs)
    return loss


GRADS = {
    "a2a_cols_to_rows": (loss_of(a2a_cols_to_rows), [(4, 16)]),
    "a2a_untiled": (loss_of(a2a_untiled_x_ref), [(2, 2, 3)]),
    "a2a_same_axis": (loss_of(a2a_same_axis), [(16, 6)]),
    "vmap_psum": (loss_of(vm_psum), [(3, 4, 8)]),
    "vmap_matmul": (loss_of(vm_matmul), [(4, 3, 8), (8, 3)]),
    "vmap_gather_permute": (loss_of(vm_gather_permute), [(3, 2, 3), (4, 8, 3)]),
    "scan_layers": (loss_of(scan_layers), [(3, 8, 8), A48]),
    "scan_psum": (loss_of(scan_psum), [(3, 8, 8), A48]),
    "remat_body": (loss_of(remat_body), [(8, 3), A48]),
    "remat_psum": (loss_of(remat_psum), [(8, 3), A48]),
    "remat_scan": (loss_of(remat_scan), [(3, 8, 8), A48]),
    "pcast_x": (loss_of(pcast_x), [(3,), (4, 3)]),
    "pcast_xy": (loss_of(pcast_xy), [(4,), (2, 4)]),
    "pcast_psum": (loss_of(pcast_psum), [(3, 1), (3, 8)]),
    "smap_rows": (loss_of(smap_rows), [(3, 5), (4, 3)]),
    "smap_psum": (loss_of(smap_psum), [(3, 8)]),
    "smap_cols": (loss_of(smap_cols), [(3, 8), (4, 2)]),
    "custom_vjp_psum": (loss_of(custom_vjp_psum), [(4, 8)]),
    "custom_vjp_norm": (loss_of(custom_vjp_norm), [(4, 8)]),
    "custom_jvp_psum": (loss_of(custom_jvp_psum), [(3,), (4, 3)]),
}


def flat(x):
    return [{"shape": list(np.shape(l)), "values": np.asarray(l, np.float64).reshape(-1).tolist()}
            for l in jax.tree.leaves(x)]


def main():
    x = small(2, 2, 3)
    np.testing.assert_array_equal(jax.jit(a2a_untiled_x)(x), jax.jit(a2a_untiled_x_ref)(x))
    values = {}
    for name, (f, shapes) in VALUES.items():
        with scope(name):
            values[name] = flat(jax.jit(f)(*[small(*s) for s in shapes]))
    grads = {}
    for name, (loss, shapes) in GRADS.items():
        args = [small(*s) for s in shapes]
        with scope(name):
            grads[name] = flat(jax.jit(jax.grad(loss, argnums=tuple(range(len(args)))))(*args))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shard_map_compose.json")
    with open(path, "w") as fh:
        json.dump({"jax_version": jax.__version__, "values": values, "grads": grads}, fh,
                  indent=1, sort_keys=True)
        fh.write("\n")
    print(f"wrote {path}: {len(values)} values, {len(grads)} grads")


if __name__ == "__main__":
    main()
