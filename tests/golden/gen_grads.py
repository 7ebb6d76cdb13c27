#!/usr/bin/env python3
"""Autodiff golden values for jaxrs: JAX's VJPs and JVPs of every differentiable op, and a few
end-to-end programs ("snippets") that combine grad with jit.

Usage (from the repository root):

    pip install jax==0.10.2 numpy      # CPU jax is enough
    python tests/golden/gen_grads.py   # rewrites tests/golden/grads.json and snippets.json

Same conventions as gen.py (whose helpers and op tables this script imports): JAX 0.10.2 on the
CPU backend, jax_enable_x64 on but every case in its own dtype, inputs drawn from numpy's
default_rng seeded with the crc32 of the case name, so the output is byte-identical across
runs. The file formats are described in tests/golden/README.md.

grads.json, one case per op/dtype/shape: for the function `f` = the op applied to `inputs` with
the inputs listed in `diff` as its arguments (the others, integer indices, conditions, Rust
scalars, are held fixed), JAX's `f(*primals)`, `jax.vjp(f, *primals)[1](ct)` for a random
cotangent `ct` shaped like the output, and `jax.jvp(f, primals, tangents)[1]` for random
tangents.

snippets.json: see gen_snippets() below and tests/snippets.rs.
"""

import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402  (sets JAX_PLATFORMS=cpu, checks the JAX version, enables x64)
from gen import (DTYPES, Scalar, arr, away_from_zero, enc, ints, rng_for, uniform,  # noqa: E402
                 sample, i32)

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

assert jax.config.jax_enable_x64

# ---------------------------------------------------------------------------------------------
# Tolerances for derivatives: (rtol, atol), |got - want| <= atol + rtol * |want|.
# Derivative rules are written independently in jaxrs (e.g. tanh' = 1 - y^2 from the output,
# pow' = y * x^(y-1)), so even "exact" ops allow a few roundings; a broadcasting operand's
# cotangent is a sum whose order may differ.

GTOL = {
    # rounding of a handful of arithmetic operations
    "arith": {"float32": (2e-6, 2e-6), "float64": (1e-12, 1e-12)},
    # derivatives of transcendental functions (a few ulps of exp/log/tanh/erf... each)
    "transc": {"float32": (5e-5, 5e-6), "float64": (1e-11, 1e-12)},
    # sums in a different order: reductions, softmax, matmul, broadcast cotangents
    "reduce": {"float32": (2e-5, 2e-5), "float64": (1e-11, 1e-11)},
}

CASES = []
NAMES = set()


def rand_like(rng, x):
    x = np.asarray(x)
    return np.asarray(rng.uniform(-1.0, 1.0, size=x.shape)).astype(x.dtype)


def gcase(name, op, params, inputs, fn, kind="arith", jvp=True):
    """Records JAX's value, VJP and JVP of `fn` at `inputs`.

    inputs: numpy arrays or gen.Scalar. The float arrays are differentiated; integer/bool
    arrays and scalars are held fixed. jvp=False: the op has no forward-mode rule in jaxrs;
    JAX's JVP is still recorded (the test checks that jaxrs refuses it with a clear message).
    """
    assert name not in NAMES, f"duplicate case name {name}"
    NAMES.add(name)
    args = [x.v if isinstance(x, Scalar) else jnp.asarray(x) for x in inputs]
    diff = [i for i, x in enumerate(inputs)
            if not isinstance(x, Scalar) and np.asarray(x).dtype.kind == "f"]
    assert diff, name
    dts = {gen.dname(np.asarray(inputs[i]).dtype) for i in diff}

    def f(*d):
        full = list(args)
        for i, v in zip(diff, d):
            full[i] = v
        return fn(*full)

    primals = [args[i] for i in diff]
    out, pullback = jax.vjp(f, *primals)
    out_dt = gen.dname(out.dtype)
    ct = rand_like(rng_for(name, 1), out)
    vjps = pullback(jnp.asarray(ct))
    rt = rng_for(name, 2)
    tangents = [rand_like(rt, p) for p in primals]
    out2, jv = jax.jvp(f, tuple(primals), tuple(jnp.asarray(t) for t in tangents))
    assert np.array_equal(np.asarray(out), np.asarray(out2), equal_nan=True), name
    for p, g in zip(primals, vjps):
        assert g.dtype == p.dtype and g.shape == p.shape, (name, g.dtype, p.dtype)
        assert np.all(np.isfinite(np.asarray(g))), (name, "non-finite VJP")
    assert jv.dtype == out.dtype and np.all(np.isfinite(np.asarray(jv))), name
    # The tolerance follows the output's and the inputs' dtypes (the coarser one).
    rtol, atol = max(GTOL[kind][d] for d in dts | {out_dt})
    c = {"name": name, "op": op, "params": params,
         "inputs": [{"scalar": x.v} if isinstance(x, Scalar) else enc(x) for x in inputs],
         "diff": diff, "output": enc(out), "ct": enc(ct), "vjp": [enc(g) for g in vjps],
         "tangents": [enc(t) for t in tangents], "jvp": enc(jv), "jvp_supported": jvp,
         "rtol": rtol, "atol": atol}
    CASES.append(c)
    return c


# ---------------------------------------------------------------------------------------------
# Elementwise

DTS_SHAPES_1 = [("float32", "0d", []), ("float32", "2d_3x4", [3, 4]), ("float64", "1d_5", [5])]


def gen_unary():
    for op, (fn, kind, (lo, hi), _) in gen.UNARY.items():
        kind = "arith" if kind == "exact" else kind
        for dt, sname, s in DTS_SHAPES_1:
            name = f"{op}/{dt}/{sname}"
            gcase(name, op, {}, [uniform(rng_for(name), s, dt, lo, hi)], fn, kind)
    # kinks: JAX's abs'(0) = abs'(-0) = 1 (select(x >= 0, t, -t)); relu'(0) = 0 (jax.nn.relu
    # has a custom JVP: select(x > 0, t, 0)), while maximum(x, 0) splits a tie: 0.5.
    for dt in ("float32", "float64"):
        gcase(f"abs/{dt}/at_zero", "abs", {}, [arr([0.0, -0.0, 1.5, -2.0], dt)], jnp.abs)
        gcase(f"relu/{dt}/at_zero", "relu", {}, [arr([0.0, -0.0, 1.0, -1.0], dt)], jax.nn.relu)


BIN_SHAPES = [("float32", "2d_3x4", [3, 4], [3, 4]), ("float32", "bcast_3x1_4", [3, 1], [4]),
              ("float64", "bcast_0d_2x3", [], [2, 3]),
              ("float64", "bcast_2x1x3_1x4x1", [2, 1, 3], [1, 4, 1])]


def gen_binary():
    for op, (fn, _) in gen.BINARY.items():
        for dt, sname, sa, sb in BIN_SHAPES:
            name = f"{op}/{dt}/{sname}"
            r = rng_for(name)
            if op in ("maximum", "minimum"):
                # small integer values: many ties, whose derivative JAX splits evenly
                x = ints(r, sa, "int32", -2, 2).astype(DTYPES[dt])
                y = ints(r, sb, "int32", -2, 2).astype(DTYPES[dt])
            else:
                x, y = gen.binary_inputs(op, dt, r, sa, sb)
            kind = "transc" if op == "pow" else ("arith" if sa == sb else "reduce")
            gcase(name, op, {}, [x, y], fn, kind)
    # A Rust scalar literal on one side: only the array is differentiated.
    S = Scalar
    specs = [
        ("mul/float32/weak_scalar_right", "mul", lambda r: [uniform(r, [4], "float32"), S(2.5)],
         jnp.multiply, "arith"),
        ("sub/float32/weak_scalar_left", "sub", lambda r: [S(1.0), uniform(r, [4], "float32")],
         jnp.subtract, "arith"),
        ("div/float64/weak_scalar_left", "div",
         lambda r: [S(2.0), away_from_zero(r, [2, 3], "float64")], jnp.divide, "arith"),
        ("pow/float32/weak_exponent", "pow", lambda r: [uniform(r, [5], "float32", 0.2, 3.0), S(2.5)],
         jnp.power, "transc"),
        ("maximum/float32/weak_zero_with_ties", "maximum",
         lambda r: [arr([0.0, -1.0, 2.0, 0.0, -0.0], "float32"), S(0.0)], jnp.maximum, "arith"),
        ("minimum/float64/weak_scalar_with_ties", "minimum",
         lambda r: [arr([1.0, -1.0, 2.0, 1.0], "float64"), S(1.0)], jnp.minimum, "arith"),
    ]
    for name, op, mk, fn, kind in specs:
        gcase(name, op, {}, mk(rng_for(name)), fn, kind)


def gen_integer_pow():
    for dt, sname, s, ns in [("float32", "1d_6", [6], (-2, 0, 1, 2, 3)),
                             ("float64", "2d_2x3", [2, 3], (-2, 3))]:
        for n in ns:
            name = f"integer_pow/{dt}/n{n}/{sname}"
            f = (lambda n: lambda x: lax.integer_pow(x, n))(n)
            gcase(name, "integer_pow", {"n": n}, [away_from_zero(rng_for(name), s, dt, 0.3, 2.5)],
                  f, "arith")


def gen_where():
    for dt, sname, sc, sx, sy in [("float32", "2d_3x4", [3, 4], [3, 4], [3, 4]),
                                  ("float32", "bcast_c3x1_x4_y0d", [3, 1], [4], []),
                                  ("float64", "bcast_c2x1x3_x1x4x1_y2x4x3", [2, 1, 3], [1, 4, 1],
                                   [2, 4, 3])]:
        name = f"where/{dt}/{sname}"
        r = rng_for(name)
        c = gen.bools(r, sc)
        gcase(name, "where", {}, [c, uniform(r, sx, dt), uniform(r, sy, dt)], jnp.where,
              "arith" if sx == sy == sc else "reduce")


# ---------------------------------------------------------------------------------------------
# Reductions


RED = [("float32", "1d_5/all", [5], None, False),
       ("float32", "2d_3x4/axis-1_keep", [3, 4], [-1], True),
       ("float32", "3d_2x3x4/axes0_2", [2, 3, 4], [0, 2], False),
       ("float64", "2d_3x4/axis0", [3, 4], [0], False)]


def gen_reduce():
    for op, mk in gen.REDUCE.items():
        for dt, sname, s, axes, kd in RED:
            name = f"{op}/{dt}/{sname}"
            r = rng_for(name)
            if op in ("max", "min"):
                # small integer values: ties, whose derivative JAX splits evenly
                x = ints(r, s, "int32", -2, 2).astype(DTYPES[dt])
            elif op == "prod":
                x = away_from_zero(r, s, dt, 0.5, 1.5)
            else:
                x = uniform(r, s, dt)
            gcase(name, op, {"axes": axes, "keepdims": kd}, [x], mk(axes, kd), "reduce")
    # prod with zeros: the derivative at a zero is the product of the others; with two zeros in
    # a row every derivative of that row is zero.
    gcase("prod/float32/1d_5_one_zero/all", "prod", {"axes": None, "keepdims": False},
          [arr([1.5, -0.5, 0.0, 2.0, 0.75], "float32")], gen.REDUCE["prod"](None, False), "reduce")
    gcase("prod/float64/2d_3x4_zeros/axis1", "prod", {"axes": [1], "keepdims": False},
          [arr([[1.5, 0.0, 2.0, -0.5], [0.0, 3.0, 0.0, 1.25], [0.5, 2.0, -1.5, 1.1]], "float64")],
          gen.REDUCE["prod"]([1], False), "reduce")
    for op, f in (("softmax", jax.nn.softmax), ("log_softmax", jax.nn.log_softmax)):
        for dt, sname, s, axis in [("float32", "2d_3x4/axis-1", [3, 4], -1),
                                   ("float32", "3d_2x3x4/axis1", [2, 3, 4], 1),
                                   ("float64", "2d_3x4/axis0", [3, 4], 0)]:
            name = f"{op}/{dt}/{sname}"
            gcase(name, op, {"axis": axis}, [uniform(rng_for(name), s, dt)],
                  (lambda axis, f=f: lambda x: f(x, axis=axis))(axis), "reduce")


# ---------------------------------------------------------------------------------------------
# Linear algebra


def gen_linalg():
    for dt, sname, sa, sb in [("float32", "1d_x_1d", [3], [3]),
                              ("float32", "1d_x_2d", [3], [3, 4]),
                              ("float32", "2d_x_2d", [3, 4], [4, 5]),
                              ("float32", "bcast_batch_2x1x3x4_5x4x2", [2, 1, 3, 4], [5, 4, 2]),
                              ("float64", "3d_x_2d", [2, 3, 4], [4, 2])]:
        name = f"matmul/{dt}/{sname}"
        r = rng_for(name)
        gcase(name, "matmul", {}, [uniform(r, sa, dt, -1, 1), uniform(r, sb, dt, -1, 1)],
              jnp.matmul, "reduce")
    for dt, sname, sa, sb, contr, batch in [
        ("float32", "outer_3_4", [3], [4], [[], []], [[], []]),
        ("float32", "batch_not_leading_3x2x4_4x2x5", [3, 2, 4], [4, 2, 5], [[2], [0]], [[1], [1]]),
        ("float32", "two_contracting_2x3x4_3x4x5", [2, 3, 4], [3, 4, 5], [[1, 2], [0, 1]], [[], []]),
        ("float64", "batched_2x3x4_2x4x5", [2, 3, 4], [2, 4, 5], [[2], [1]], [[0], [0]]),
        ("float64", "lhs_transposed_4x3_4x5", [4, 3], [4, 5], [[0], [0]], [[], []]),
    ]:
        name = f"dot_general/{dt}/{sname}"
        r = rng_for(name)
        dn = ((tuple(contr[0]), tuple(contr[1])), (tuple(batch[0]), tuple(batch[1])))
        gcase(name, "dot_general", {"contracting": contr, "batch": batch},
              [uniform(r, sa, dt, -1, 1), uniform(r, sb, dt, -1, 1)],
              (lambda dn: lambda a, b: lax.dot_general(a, b, dn))(dn), "reduce")


# ---------------------------------------------------------------------------------------------
# Shape ops


def gen_shape():
    for dt, sname, s, new in [("float32", "2x3x4_to_4x-1", [2, 3, 4], [4, -1]),
                              ("float64", "2x12_to_2x3x4", [2, 12], [2, 3, 4])]:
        name = f"reshape/{dt}/{sname}"
        gcase(name, "reshape", {"shape": new}, [sample(dt, name, s)],
              (lambda new: lambda x: jnp.reshape(x, new))(new))
    for dt, sname, s, perm in [("float32", "2x3x4_201", [2, 3, 4], [2, 0, 1]),
                               ("float64", "2x3_10", [2, 3], [1, 0])]:
        name = f"transpose/{dt}/{sname}"
        gcase(name, "transpose", {"perm": perm}, [sample(dt, name, s)],
              (lambda perm: lambda x: jnp.transpose(x, perm))(perm))
    for dt, sname, s, new in [("float32", "3x1_to_3x4", [3, 1], [3, 4]),
                              ("float32", "1x3_to_2x4x3", [1, 3], [2, 4, 3]),
                              ("float64", "0d_to_2x2", [], [2, 2]),
                              ("float64", "2x1x3_to_2x4x3", [2, 1, 3], [2, 4, 3])]:
        name = f"broadcast_to/{dt}/{sname}"
        gcase(name, "broadcast_to", {"shape": new}, [sample(dt, name, s)],
              (lambda new: lambda x: jnp.broadcast_to(x, new))(new), "reduce")
    for dt, sname, s, axis in [("float32", "2x3_axis1", [2, 3], 1),
                               ("float64", "2x3_axis-1", [2, 3], -1)]:
        name = f"expand_dims/{dt}/{sname}"
        gcase(name, "expand_dims", {"axis": axis}, [sample(dt, name, s)],
              (lambda axis: lambda x: jnp.expand_dims(x, axis))(axis))
    for dt, sname, s, axes in [("float32", "1x3x1_axes0_2", [1, 3, 1], [0, 2]),
                               ("float64", "2x1x3_axes1", [2, 1, 3], [1])]:
        name = f"squeeze/{dt}/{sname}"
        gcase(name, "squeeze", {"axes": axes}, [sample(dt, name, s)],
              (lambda axes: lambda x: jnp.squeeze(x, tuple(axes)))(axes))
    for dt, sname, shapes, axis in [("float32", "2x3_2x1_2x2_axis1", [[2, 3], [2, 1], [2, 2]], 1),
                                    ("float64", "2x3_4x3_axis0", [[2, 3], [4, 3]], 0)]:
        name = f"concatenate/{dt}/{sname}"
        xs = [sample(dt, f"{name}#{i}", s) for i, s in enumerate(shapes)]
        gcase(name, "concatenate", {"axis": axis}, xs,
              (lambda axis: lambda *a: jnp.concatenate(a, axis=axis))(axis))
    for dt, sname, s, n, axis in [("float32", "2x3_x3_axis1", [2, 3], 3, 1),
                                  ("float64", "3_x2_axis0", [3], 2, 0)]:
        name = f"stack/{dt}/{sname}"
        xs = [sample(dt, f"{name}#{i}", s) for i in range(n)]
        gcase(name, "stack", {"axis": axis}, xs,
              (lambda axis: lambda *a: jnp.stack(a, axis=axis))(axis))
    for dt, sname, s, start, limit, strides in [
        ("float32", "1d_8_1to7_stride2", [8], [1], [7], [2]),
        ("float32", "2d_4x5_strides2x2", [4, 5], [0, 1], [4, 5], [2, 2]),
        ("float64", "3d_2x3x4", [2, 3, 4], [1, 0, 1], [2, 3, 4], [1, 2, 2]),
    ]:
        name = f"slice/{dt}/{sname}"
        gcase(name, "slice", {"start": start, "limit": limit, "strides": strides},
              [sample(dt, name, s)],
              (lambda a, b, c: lambda x: lax.slice(x, a, b, c))(start, limit, strides))
    for dt, sname, s, low, high, interior, value in [
        ("float32", "1d_5_neg_low_interior", [5], [-1], [2], [1], -1.0),
        ("float32", "2d_2x3_mixed_neg", [2, 3], [-1, 2], [1, -1], [1, 0], -2.0),
        ("float64", "1d_5_neg_both_interior2", [5], [-3], [-2], [2], 7.0),
        ("float64", "3d_2x2x2", [2, 2, 2], [0, 1, 1], [1, 0, 1], [0, 0, 1], 3.0),
    ]:
        name = f"pad/{dt}/{sname}"
        cfg = list(zip(low, high, interior))
        # The padding value is a constant (a Rust scalar in jaxrs); x is differentiated.
        f = (lambda cfg, v, dt: lambda x: lax.pad(x, jnp.asarray(v, DTYPES[dt]), cfg))(cfg, value, dt)
        gcase(name, "pad", {"low": low, "high": high, "interior": interior, "value": value},
              [sample(dt, name, s)], f)
    for dt, sname, s, axis in [("float32", "2d_3x4_axis1", [3, 4], 1),
                               ("float32", "3d_2x3x4_axis1", [2, 3, 4], 1),
                               ("float64", "1d_6", [6], 0)]:
        name = f"cumsum/{dt}/{sname}"
        gcase(name, "cumsum", {"axis": axis}, [sample(dt, name, s)],
              (lambda axis: lambda x: jnp.cumsum(x, axis=axis, dtype=x.dtype))(axis), "reduce")


# ---------------------------------------------------------------------------------------------
# Index ops, casts, norm


def gen_index():
    for dt, sname, s, starts, sizes in [("float32", "2d_4x5", [4, 5], [1, 2], [2, 2]),
                                        ("float32", "1d_10_clamped_high", [10], [9], [3]),
                                        ("float64", "1d_10_negative_start_wraps", [10], [-2], [3])]:
        name = f"dynamic_slice/{dt}/{sname}"
        gcase(name, "dynamic_slice", {"sizes": sizes},
              [sample(dt, name, s)] + [i32(v) for v in starts],
              (lambda sizes: lambda x, *st: lax.dynamic_slice(x, st, sizes))(sizes))
    for dt, sname, s, us, starts in [("float32", "2d_4x5", [4, 5], [2, 2], [1, 2]),
                                     ("float32", "2d_4x5_clamped", [4, 5], [2, 3], [5, 5]),
                                     ("float64", "1d_10_at3", [10], [3], [3])]:
        name = f"dynamic_update_slice/{dt}/{sname}"
        gcase(name, "dynamic_update_slice", {},
              [sample(dt, name, s), sample(dt, name + "#update", us)] + [i32(v) for v in starts],
              lambda x, u, *st: lax.dynamic_update_slice(x, u, st))
    # repeated indices: their cotangents add up
    for dt, sname, s, idx, axis in [
        ("float32", "embed_5x3_idx_2x3_repeated", [5, 3], [[0, 1, 4], [4, 4, 2]], 0),
        ("float32", "2d_3x4_axis1_repeated", [3, 4], [3, 0, 0, 1, 2], 1),
        ("float64", "1d_6_repeated", [6], [5, 0, 5, 5], 0),
    ]:
        name = f"take/{dt}/{sname}"
        gcase(name, "take", {"axis": axis}, [sample(dt, name, s), i32(idx)],
              (lambda axis: lambda x, i: jnp.take(x, i, axis=axis))(axis), "reduce")
    # take_along_axis: repeated and negative indices (their cotangents add up)
    for dt, sname, s, idx, axis in [
        ("float32", "2d_3x4_axis1_repeated_negative", [3, 4], [[3, -1, 0], [1, 1, -4], [2, 0, 2]],
         1),
        ("float32", "3d_2x3x4_axis0", [2, 3, 4], None, 0),
        ("float64", "3d_2x3x4_axis1_negative", [2, 3, 4], None, 1),
        ("float32", "3d_2x3x4_axis2", [2, 3, 4], None, 2),
        ("float32", "3d_2x3x4_axis1_idx_broadcast_1x5x4", [2, 3, 4], None, 1),
    ]:
        name = f"take_along_axis/{dt}/{sname}"
        if idx is None:
            ishape = list(s)
            ishape[axis] = 5
            if "broadcast" in sname:
                ishape[0] = 1
            n = s[axis]
            idx = rng_for(name + "#idx").integers(-n, n, size=ishape)
        gcase(name, "take_along_axis", {"axis": axis}, [sample(dt, name, s), i32(idx)],
              (lambda axis: lambda x, i: jnp.take_along_axis(x, i, axis=axis))(axis), "reduce")
    for src, dst, s in [("float32", "float64", [2, 3]), ("float64", "float32", [4])]:
        name = f"astype/{src}_to_{dst}/{gen.shp(s)}"
        gcase(name, "astype", {"dtype": dst}, [sample(src, name, s)],
              (lambda dst: lambda x: lax.convert_element_type(x, DTYPES[dst]))(dst))


def jax_norm(x):
    return jnp.linalg.norm(x.ravel())


def gen_norm():
    for dt, sname, s in [("float32", "1d_5", [5]), ("float32", "2d_2x3", [2, 3]),
                         ("float64", "2d_3x4", [3, 4])]:
        name = f"norm/{dt}/{sname}"
        gcase(name, "norm", {}, [sample(dt, name, s)], jax_norm, "reduce")
    # At x = 0 JAX's gradient is NaN (the chain rule through sqrt: 0 * inf); jaxrs defines it
    # as 0 (Array::norm's double `where`, for gradient clipping of all-zero gradients), and its
    # JVP too. So the expected VJP and JVP below are written by hand: zeros. Output: see the
    # asserts.
    for dt, s in [("float32", [3]), ("float64", [2, 2])]:
        name = f"norm/{dt}/zero_{gen.shp(s)}"
        assert name not in NAMES
        NAMES.add(name)
        x = np.zeros(s, DTYPES[dt])
        out, pullback = jax.vjp(jax_norm, jnp.asarray(x))
        ct = rand_like(rng_for(name, 1), out)
        (g,) = pullback(jnp.asarray(ct))
        assert float(out) == 0.0 and np.all(np.isnan(np.asarray(g))), (name, g)
        tangent = rand_like(rng_for(name, 2), x)
        rtol, atol = GTOL["reduce"][dt]
        CASES.append({
            "name": name, "op": "norm", "params": {}, "inputs": [enc(x)], "diff": [0],
            "output": enc(out), "ct": enc(ct),
            "vjp": [enc(np.zeros(s, DTYPES[dt]))],  # by hand: JAX says NaN, jaxrs defines 0
            "vjp_note": "written by hand: JAX's VJP and JVP are NaN at x = 0, jaxrs defines them as 0",
            "tangents": [enc(tangent)], "jvp": enc(np.zeros((), DTYPES[dt])), "jvp_supported": True,
            "rtol": rtol, "atol": atol})


# ---------------------------------------------------------------------------------------------
# Numeric helpers (gen.gen_numeric): composites of the ops above, differentiated through them


def gen_numeric():
    for dt, sname, s in [("float32", "2d_3x4", [3, 4]), ("float64", "1d_5", [5])]:
        name = f"softplus/{dt}/{sname}"
        gcase(name, "softplus", {}, [uniform(rng_for(name), s, dt, -8, 8)], jax.nn.softplus,
              "transc")
    for dt, sname, sa, sb in [("float32", "2d_3x4", [3, 4], [3, 4]),
                              ("float32", "bcast_3x1_4", [3, 1], [4]),
                              ("float64", "1d_6", [6], [6])]:
        name = f"logaddexp/{dt}/{sname}"
        r = rng_for(name)
        gcase(name, "logaddexp", {}, [uniform(r, sa, dt, -5, 5), uniform(r, sb, dt, -5, 5)],
              jnp.logaddexp, "transc")
    # a tie: JAX's derivative is 0.5 on each side
    gcase("logaddexp/float32/ties", "logaddexp", {},
          [arr([1.0, -2.0, 0.0], "float32"), arr([1.0, -2.0, 0.0], "float32")], jnp.logaddexp,
          "transc")
    gcase("logaddexp/float32/weak_scalar_right", "logaddexp", {},
          [uniform(rng_for("logaddexp/float32/weak_scalar_right"), [5], "float32"), Scalar(0.5)],
          jnp.logaddexp, "transc")
    for dt, sname, x, lo, hi in [
        ("float32", "scalars", uniform(rng_for("clip/float32/scalars"), [3, 4], "float32"),
         Scalar(-1.0), Scalar(1.0)),
        ("float64", "ties_at_bounds", arr([-1.0, 1.0, 0.5, -3.0, 3.0], "float64"), Scalar(-1.0),
         Scalar(1.0)),
    ]:
        gcase(f"clip/{dt}/{sname}", "clip", {}, [x, lo, hi], lambda x, lo, hi: jnp.clip(x, lo, hi))
    r = rng_for("clip/float32/array_bounds")
    gcase("clip/float32/array_bounds", "clip", {},
          [uniform(r, [3, 4], "float32"), uniform(r, [4], "float32", -2, 0),
           uniform(r, [3, 1], "float32", 0, 2)], lambda x, lo, hi: jnp.clip(x, lo, hi), "reduce")
    for dt in ("float32", "float64"):
        gcase(f"nan_to_num/{dt}/specials", "nan_to_num",
              {"nan": 0.0, "posinf": None, "neginf": None},
              [arr([1.5, gen.NAN, gen.INF, -gen.INF, -2.0], dt)], jnp.nan_to_num)
    for op, f in (("var", jnp.var), ("std", jnp.std)):
        for dt, sname, s, axes, kd, ddof in [
            ("float32", "1d_6/all", [6], None, False, 0),
            ("float32", "2d_3x4/axis1_keep_ddof1", [3, 4], [1], True, 1),
            ("float32", "3d_2x3x4/axes0_2", [2, 3, 4], [0, 2], False, 0),
            ("float64", "2d_3x4/axis0", [3, 4], [0], False, 0),
        ]:
            name = f"{op}/{dt}/{sname}"
            g = (lambda f, axes, kd, ddof: lambda x: f(
                x, axis=None if axes is None else tuple(axes), keepdims=kd, ddof=ddof))(
                    f, axes, kd, ddof)
            gcase(name, op, {"axes": axes, "keepdims": kd, "ddof": ddof},
                  [uniform(rng_for(name), s, dt)], g, "reduce")
    for op, f in (("tril", jnp.tril), ("triu", jnp.triu)):
        for dt, sname, s, k in [("float32", "4x4_k0", [4, 4], 0),
                                ("float32", "2x3x4_k-1", [2, 3, 4], -1),
                                ("float64", "3x5_k2", [3, 5], 2)]:
            name = f"{op}/{dt}/{sname}"
            gcase(name, op, {"k": k}, [sample(dt, name, s)], (lambda f, k: lambda x: f(x, k))(f, k))


# ---------------------------------------------------------------------------------------------
# Sorting: the tangent follows its value through the permutation


def gen_sort():
    for dt, sname, s, axis in [("float32", "2d_3x5_axis1", [3, 5], 1),
                               ("float32", "3d_2x3x4_axis0", [2, 3, 4], 0),
                               ("float64", "1d_6", [6], 0)]:
        name = f"sort/{dt}/{sname}"
        gcase(name, "sort", {"axis": axis}, [sample(dt, name, s)],
              (lambda a: lambda x: jnp.sort(x, axis=a))(axis))
    for dt, sname, s, k in [("float32", "2d_3x5_k2", [3, 5], 2), ("float64", "1d_6_k3", [6], 3),
                            ("float32", "3d_2x3x4_k4", [2, 3, 4], 4)]:
        name = f"top_k/{dt}/{sname}"
        gcase(name, "top_k_values", {"k": k}, [sample(dt, name, s)],
              (lambda k: lambda x: lax.top_k(x, k)[0])(k))


# ---------------------------------------------------------------------------------------------
# Indexed updates (x.at[idx]...): integer indices held fixed


def gen_scatter():
    at = gen.at_fn
    for op, dt, sname, s, idx, us in [
        ("set", "float32", "2d_5x3_idx2x2", [5, 3], [[0, 4], [2, 3]], [2, 2, 3]),
        ("set", "float64", "1d_6_oob", [6], [1, 3, -1, 10, -9], [5]),
        ("set", "float32", "1d_6_repeated", [6], [2, 2, 0, 2], [4]),
        ("add", "float32", "1d_6_repeated_oob", [6], [1, 3, -1, 10, 3], [5]),
        ("add", "float64", "2d_5x3_row_bcast", [5, 3], [0, 2, 0], [3]),
        # in range: out of range, JAX's JVP reads the clamped row but its VJP drops it
        ("get", "float32", "2d_5x3_idx2x2", [5, 3], [[0, 4], [2, -1]], None),
    ]:
        name = f"at_{op}/{dt}/{sname}"
        x = sample(dt, name, s)
        ins = [x, i32(idx)] + ([] if us is None else [sample(dt, name + "#v", us)])
        gcase(name, f"at_{op}", {}, ins, at(op), "reduce")
    gcase("at_mul/float32/1d_6_repeated_scalar", "at_mul", {},
          [sample("float32", "at_mul/float32/1d_6", [6]), i32([1, 3, 1, 10]), Scalar(2.5)],
          at("mul"))
    for op in ("min", "max"):
        for dt in ("float32", "float64"):
            name = f"at_{op}/{dt}/ties"
            gcase(name, f"at_{op}", {},
                  [arr([1.0, 2.0, 3.0, 4.0, -1.0], dt), i32([0, 1, 1, 3, 2, 9]),
                   arr([1.0, 5.0, 5.0, 0.0, 3.0, 7.0] if op == "max" else
                       [1.0, -5.0, -5.0, 9.0, 3.0, 7.0], dt)], at(op))


# ---------------------------------------------------------------------------------------------
# einsum


def gen_einsum():
    for dt, spec, shapes in [("float32", "ij,jk->ik", [[2, 3], [3, 4]]),
                             ("float32", "bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
                             ("float32", "ij->j", [[2, 3]]),
                             ("float64", "ij,kj->ik", [[2, 3], [4, 3]]),
                             ("float64", "i,i->", [[5], [5]]),
                             ("float32", "bij,jk->bki", [[2, 3, 4], [4, 5]]),
                             ("float32", "ij,kl->", [[2, 3], [4, 5]])]:
        name = f"einsum/{dt}/{spec}"
        xs = [sample(dt, f"{name}#{i}", s) for i, s in enumerate(shapes)]
        gcase(name, "einsum", {"spec": spec}, xs,
              (lambda spec: lambda *a: jnp.einsum(spec, *a))(spec), "reduce")


# ---------------------------------------------------------------------------------------------
# Snippets: whole programs (see tests/snippets.rs)


def enc_tree(t):
    return {k: enc(v) for k, v in t.items()}


def mlp_loss_with_aux(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    pred = h @ params["w2"] + params["b2"]
    mse = jnp.mean((pred - y) ** 2)
    return mse, {"mse": mse, "mean_pred": jnp.mean(pred)}


def sgd_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    pred = h @ params["w2"] + params["b2"]
    return jnp.mean((pred - y) ** 2)


SGD_LR = 0.1


def sgd_step(params, x, y):
    loss, g = jax.value_and_grad(sgd_loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, d: p - SGD_LR * d, params, g), loss


def hvp_f(x):
    return jnp.sum(jnp.tanh(x) ** 3 * x)


def scalar_g(s):
    return jnp.sin(s) * s ** 3 + jnp.exp(-s * s)


def inner_jitted(x):
    return jnp.sin(x) * x


def gen_snippets():
    f32 = "float32"
    out = {}

    # (a) snippet 7: a jitted value_and_grad with aux of a small MLP
    r = rng_for("snippet7_mlp_aux")
    params = {"w1": uniform(r, [3, 5], f32, -1, 1), "b1": uniform(r, [5], f32, -0.5, 0.5),
              "w2": uniform(r, [5, 2], f32, -1, 1), "b2": uniform(r, [2], f32, -0.5, 0.5)}
    x = uniform(r, [4, 3], f32)
    y = uniform(r, [4, 2], f32)
    jp = {k: jnp.asarray(v) for k, v in params.items()}
    (loss, aux), grads = jax.jit(jax.value_and_grad(mlp_loss_with_aux, has_aux=True))(
        jp, jnp.asarray(x), jnp.asarray(y))
    assert loss.dtype == jnp.float32 and all(g.dtype == jnp.float32 for g in grads.values())
    out["mlp_aux"] = {"params": enc_tree(params), "x": enc(x), "y": enc(y), "loss": enc(loss),
                      "aux": enc_tree(aux), "grads": enc_tree(grads), "rtol": 1e-5, "atol": 1e-6}

    # (b) snippet 1: 20 jitted SGD steps with donated parameters
    r = rng_for("snippet1_sgd")
    params = {"w1": uniform(r, [3, 4], f32, -1, 1), "b1": np.zeros([4], np.float32),
              "w2": uniform(r, [4, 1], f32, -1, 1), "b2": np.zeros([1], np.float32)}
    x = uniform(r, [8, 3], f32, -1, 1)
    y = (np.sin(x.sum(axis=1, keepdims=True)) * 0.5).astype(np.float32)
    step = jax.jit(sgd_step, donate_argnums=0)
    p = {k: jnp.asarray(v) for k, v in params.items()}
    losses = []
    for _ in range(20):
        p, loss = step(p, jnp.asarray(x), jnp.asarray(y))
        assert loss.dtype == jnp.float32
        losses.append(loss)
    assert float(losses[-1]) < float(losses[0])
    out["sgd"] = {"params": enc_tree(params), "x": enc(x), "y": enc(y), "lr": SGD_LR,
                  "steps": 20, "losses": enc(jnp.stack(losses)), "final_params": enc_tree(p),
                  "rtol": 1e-4, "atol": 1e-6}

    # (c) Hessian-vector product and grad(grad(.)) in float64
    r = rng_for("hvp")
    x = uniform(r, [5], "float64", -1.5, 1.5)
    v = uniform(r, [5], "float64", -1, 1)
    g, hv = jax.jvp(jax.grad(hvp_f), (jnp.asarray(x),), (jnp.asarray(v),))
    out["hvp"] = {"x": enc(x), "v": enc(v), "grad": enc(g), "hvp": enc(hv),
                  "rtol": 1e-12, "atol": 1e-12}
    s = np.asarray(0.7, np.float64)
    d1 = jax.grad(scalar_g)(s)
    d2 = jax.grad(jax.grad(scalar_g))(s)
    d3 = jax.grad(jax.grad(jax.grad(scalar_g)))(s)
    out["grad_grad"] = {"s": enc(s), "value": enc(scalar_g(s)), "d1": enc(d1), "d2": enc(d2),
                        "d3": enc(d3), "rtol": 1e-12, "atol": 1e-12}

    # (d) grad inside jit, jit inside grad
    r = rng_for("grad_jit")
    x = uniform(r, [2, 3], "float64", -2, 2)
    jx = jnp.asarray(x)
    inner = jax.jit(inner_jitted)

    def outer(x):
        return jnp.sum(inner(x) ** 2)

    def softplus_sum(x):
        return jnp.sum(jnp.log1p(jnp.exp(x)) * x)

    out["grad_jit"] = {
        "x": enc(x),
        # jax.jit(jax.grad(sum(log1p(exp(x)) * x)))
        "grad_in_jit": enc(jax.jit(jax.grad(softplus_sum))(jx)),
        # jax.grad(sum(jit(sin(x) * x) ** 2))
        "jit_in_grad": enc(jax.grad(outer)(jx)),
        "jit_in_grad_value": enc(outer(jx)),
        # jax.jit(jax.grad(sum(jit(sin(x) * x) ** 2))): both at once
        "jit_grad_jit": enc(jax.jit(jax.grad(outer))(jx)),
        "rtol": 1e-12, "atol": 1e-12}
    return out


# ---------------------------------------------------------------------------------------------
# Main


def main():
    gen_unary()
    gen_binary()
    gen_integer_pow()
    gen_where()
    gen_reduce()
    gen_linalg()
    gen_shape()
    gen_index()
    gen_norm()
    gen_numeric()
    gen_sort()
    gen_scatter()
    gen_einsum()
    path = os.path.join(HERE, "grads.json")
    lines = [json.dumps(c, allow_nan=False) for c in CASES]
    text = ('{"jax_version": "%s", "cases": [\n' % jax.__version__ + ",\n".join(lines) + "\n]}\n")
    with open(path, "w") as f:
        f.write(text)
    print(f"{os.path.relpath(path)}: {len(CASES)} cases, {len(text)} bytes")

    snippets = gen_snippets()
    path = os.path.join(HERE, "snippets.json")
    lines = [f"{json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in snippets.items()]
    text = ('{"jax_version": "%s", "snippets": {\n' % jax.__version__ + ",\n".join(lines)
            + "\n}}\n")
    with open(path, "w") as f:
        f.write(text)
    print(f"{os.path.relpath(path)}: {len(snippets)} snippets, {len(text)} bytes")


if __name__ == "__main__":
    main()
