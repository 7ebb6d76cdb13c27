#!/usr/bin/env python3
"""Golden values for convolution and pooling: `lax.conv_general_dilated` over strides,
SAME/VALID/explicit padding, lhs/rhs dilation, feature groups and the NCHW/OIHW and
NHWC/HWIO layouts (values, JVP, VJP for both operands, vmap over lhs, rhs and both), and
`lax.reduce_window` max/sum with flax's `max_pool`/`avg_pool` (values, JVP, VJP, vmap).

Usage (from the repository root):

    python tests/golden/gen_conv.py    # rewrites tests/golden/conv.json

Generated with JAX 0.10.2 on the CPU backend, float32, x64 disabled. Inputs come from numpy's
default_rng seeded with the crc32 of each case's name; max-pool inputs are permutations of
distinct values, so no window holds a tie (JAX and jaxrs may route a tie's gradient to
different elements).
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
    sys.exit(f"gen_conv.py: expected jax=={JAX_VERSION}, found {jax.__version__} "
             "(pass --any-jax-version to run anyway)")

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
VMAP = 3


def enc(a):
    a = np.asarray(a)
    assert a.dtype == np.float32, a.dtype
    return {"dtype": "float32", "shape": list(a.shape),
            "data": [float(x) for x in a.reshape(-1)]}


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def normal(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def conv_case(name, lhs_shape, rhs_shape, strides, padding, lhs_dil, rhs_dil, dn, groups):
    rng = rng_for(name)
    lhs, rhs = normal(rng, lhs_shape), normal(rng, rhs_shape)
    tl, tr = normal(rng, lhs_shape), normal(rng, rhs_shape)
    pad = padding if isinstance(padding, str) else [tuple(p) for p in padding]

    def f(a, b):
        return lax.conv_general_dilated(
            a, b, strides, pad, lhs_dilation=lhs_dil or None, rhs_dilation=rhs_dil or None,
            dimension_numbers=dn, feature_group_count=groups)

    out = f(lhs, rhs)
    _, tangent = jax.jvp(f, (lhs, rhs), (tl, tr))
    ct = normal(rng, out.shape)
    _, pullback = jax.vjp(f, lhs, rhs)
    ct_lhs, ct_rhs = pullback(ct)
    vlhs = normal(rng, (VMAP,) + tuple(lhs_shape))
    vrhs = normal(rng, (VMAP,) + tuple(rhs_shape))
    return {
        "name": name, "strides": strides,
        "padding": padding, "lhs_dilation": lhs_dil, "rhs_dilation": rhs_dil,
        "dimension_numbers": list(dn) if dn else None, "feature_group_count": groups,
        "lhs": enc(lhs), "rhs": enc(rhs), "tlhs": enc(tl), "trhs": enc(tr),
        "out": enc(out), "tangent": enc(tangent),
        "ct": enc(ct), "ct_lhs": enc(ct_lhs), "ct_rhs": enc(ct_rhs),
        "vlhs": enc(vlhs), "vrhs": enc(vrhs),
        "vmap_lhs": enc(jax.vmap(f, (0, None))(vlhs, rhs)),
        "vmap_rhs": enc(jax.vmap(f, (None, 0))(lhs, vrhs)),
        "vmap_both": enc(jax.vmap(f, (0, 0))(vlhs, vrhs)),
    }


def distinct(rng, shape):
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float32) * 0.25 - n / 8).reshape(shape)


def pool_case(name, kind, shape, window, strides, padding):
    rng = rng_for(name)
    x = distinct(rng, shape)
    t = normal(rng, shape)
    pad = padding if isinstance(padding, str) else tuple(tuple(p) for p in padding)
    if kind == "max_pool":
        f = lambda a: flax_pool(a, -jnp.inf, lax.max, window, strides, pad)
    elif kind == "avg_pool":
        f = lambda a: flax_pool(a, 0.0, lax.add, window, strides, pad) / np.prod(window)
    elif kind == "reduce_window_max":
        f = lambda a: lax.reduce_window(a, -jnp.inf, lax.max, window, strides, pad)
    else:
        f = lambda a: lax.reduce_window(a, 0.0, lax.add, window, strides, pad)
    out = f(x)
    _, tangent = jax.jvp(f, (x,), (t,))
    ct = normal(rng, out.shape)
    (ct_x,) = jax.vjp(f, x)[1](ct)
    vx = np.stack([distinct(rng, shape) for _ in range(VMAP)])
    return {
        "name": name, "kind": kind, "window": window, "strides": strides,
        "padding": padding, "x": enc(x), "t": enc(t), "out": enc(out),
        "tangent": enc(tangent), "ct": enc(ct), "ct_x": enc(ct_x),
        "vx": enc(vx), "vmap": enc(jax.vmap(f)(vx)),
    }


def flax_pool(inputs, init, op, window_shape, strides, padding):
    """flax.linen.pooling.pool, for inputs with batch dims (as flax's layers see them)."""
    window_shape = tuple(window_shape)
    strides = tuple(strides) if strides else (1,) * len(window_shape)
    nb = inputs.ndim - (len(window_shape) + 1)
    dims = (1,) * nb + window_shape + (1,)
    strides = (1,) * nb + strides + (1,)
    if not isinstance(padding, str):
        padding = ((0, 0),) * nb + tuple(padding) + ((0, 0),)
    return lax.reduce_window(inputs, init, op, dims, strides, padding)


NCHW = ("NCHW", "OIHW", "NCHW")
NHWC = ("NHWC", "HWIO", "NHWC")


def main():
    convs = [
        conv_case("nchw_valid", [2, 3, 6, 5], [4, 3, 3, 2], [1, 1], "VALID", [], [], None, 1),
        conv_case("nchw_strided_same", [2, 2, 7, 6], [3, 2, 3, 3], [2, 2], "SAME", [], [], NCHW, 1),
        conv_case("nhwc_same", [2, 5, 5, 3], [3, 3, 3, 4], [1, 1], "SAME", [], [], NHWC, 1),
        conv_case("nhwc_strided_valid", [2, 8, 7, 2], [3, 3, 2, 3], [2, 3], "VALID", [], [], NHWC, 1),
        conv_case("explicit_pad", [1, 2, 5, 4], [2, 2, 2, 3], [1, 2], [[1, 2], [0, 1]], [], [], NCHW, 1),
        conv_case("rhs_dilation", [2, 6, 7, 2], [2, 2, 2, 3], [1, 1], "SAME", [], [2, 2], NHWC, 1),
        conv_case("lhs_dilation", [1, 2, 4, 3], [3, 2, 3, 2], [1, 1], [[2, 2], [1, 1]], [2, 2], [], NCHW, 1),
        conv_case("feature_groups", [2, 4, 5, 5], [6, 2, 3, 3], [1, 1], "SAME", [], [], NCHW, 2),
        conv_case("depthwise_nhwc", [2, 5, 6, 3], [3, 3, 1, 6], [2, 1], "SAME", [], [], NHWC, 3),
        conv_case("conv1d_nwc", [2, 9, 3], [3, 3, 2], [2], "SAME", [], [], ("NWC", "WIO", "NWC"), 1),
        conv_case("conv3d", [1, 2, 4, 4, 3], [2, 2, 2, 2, 2], [1, 2, 1], "VALID", [], [], None, 1),
        conv_case("mixed_layouts", [2, 5, 4, 3], [2, 3, 3, 2], [1, 1], "SAME", [], [],
                  ("NHWC", "OIHW", "NCHW"), 1),
    ]
    pools = [
        pool_case("max_pool_2x2", "max_pool", [2, 4, 6, 3], [2, 2], [2, 2], "VALID"),
        pool_case("max_pool_3x3_same", "max_pool", [2, 5, 5, 2], [3, 3], [2, 2], "SAME"),
        pool_case("max_pool_overlap", "max_pool", [1, 5, 4, 2], [2, 3], [1, 1], "VALID"),
        pool_case("max_pool_explicit", "max_pool", [2, 4, 4, 1], [2, 2], [1, 2], [[1, 0], [1, 1]]),
        pool_case("max_pool_unbatched_1d", "max_pool", [7, 2], [3], [2], "SAME"),
        pool_case("avg_pool_2x2", "avg_pool", [2, 4, 6, 3], [2, 2], [2, 2], "VALID"),
        pool_case("avg_pool_same", "avg_pool", [2, 5, 5, 2], [3, 3], [2, 2], "SAME"),
        pool_case("avg_pool_explicit", "avg_pool", [1, 4, 5, 2], [2, 2], [1, 1], [[0, 1], [1, 1]]),
        pool_case("reduce_window_max_nchw", "reduce_window_max", [2, 3, 5, 4], [1, 1, 2, 2], [1, 1, 2, 1], "SAME"),
        pool_case("reduce_window_sum_1d", "reduce_window_sum", [9], [3], [2], "VALID"),
        pool_case("reduce_window_sum_same", "reduce_window_sum", [3, 5, 4], [1, 3, 2], [1, 2, 2], "SAME"),
    ]
    out = {"jax_version": jax.__version__, "vmap": VMAP, "conv": convs, "pool": pools}
    path = os.path.join(HERE, "conv.json")
    with open(path, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
        fh.write("\n")
    print(f"wrote {path}: {len(convs)} conv cases, {len(pools)} pool cases")


if __name__ == "__main__":
    main()
