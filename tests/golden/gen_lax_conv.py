"""Writes lax_conv.json: jax.lax's convolution family, its dimension-number helpers, the
shape tuples and the generic reduce_window on fixed inputs (see jaxcases.py for the case
format). Run with /work/venv/bin/python.

Params the Rust side (tests/lax_conv.rs) reads: strides, padding (a string or [lo, hi]
pairs), lhs_dilation / rhs_dilation (empty = None), dn (null, three strings, or
{"lhs_spec", "rhs_spec", "out_spec"}), fgc / bgc, preferred (a dtype name), and per op the
rest."""

import math

import jax
import numpy as np
from jax import lax

from jaxcases import Cases, encode

c = Cases("lax_conv")

NCHW = ("NCHW", "OIHW", "NCHW")
NHWC = ("NHWC", "HWIO", "NHWC")
F32_TOL = (2e-5, 2e-5)
F32_GRAD = (1e-4, 1e-4)


def pads(p):
    return p if isinstance(p, str) else [tuple(x) for x in p]


def pjson(p):
    return p if isinstance(p, str) else [list(x) for x in p]


def dnjson(dn):
    if dn is None:
        return None
    if isinstance(dn, lax.ConvDimensionNumbers):
        return {"lhs_spec": list(dn.lhs_spec), "rhs_spec": list(dn.rhs_spec),
                "out_spec": list(dn.out_spec)}
    return list(dn)


def tol_of(dtype):
    return (F32_TOL, F32_GRAD) if dtype == "float32" else (None, None)


# ---- conv_general_dilated ---------------------------------------------------------------------
def cgd(lhs_shape, rhs_shape, strides, padding, lhs_dil=(), rhs_dil=(), dn=None, fgc=1, bgc=1,
        preferred=None, dtype="float64", op="lax.conv_general_dilated"):
    x, w = c.normal(lhs_shape, dtype), c.normal(rhs_shape, dtype)
    tol, gtol = tol_of(dtype)
    if preferred is not None:
        tol, gtol = (1e-6, 1e-6), (1e-6, 1e-6)

    def f(a, b):
        return lax.conv_general_dilated(
            a, b, strides, pads(padding), lhs_dilation=tuple(lhs_dil) or None,
            rhs_dilation=tuple(rhs_dil) or None, dimension_numbers=dn, feature_group_count=fgc,
            batch_group_count=bgc, preferred_element_type=preferred)

    params = {"strides": list(strides), "padding": pjson(padding), "lhs_dilation": list(lhs_dil),
              "rhs_dilation": list(rhs_dil), "dn": dnjson(dn), "fgc": fgc, "bgc": bgc}
    if preferred is not None:
        params["preferred"] = preferred
    c.add(op, f, [x, w], params=params, tol=tol, grad_tol=gtol)


cgd((2, 2, 6, 5), (3, 2, 3, 2), (2, 1), "SAME")
cgd((2, 5, 6, 3), (2, 3, 3, 4), (1, 2), "VALID", rhs_dil=(2, 1), dn=NHWC, dtype="float32")
cgd((1, 4, 5, 2), (4, 2, 3, 3), (1, 1), [(1, 0), (2, 1)], lhs_dil=(2, 1), dn=NCHW, fgc=2)
cgd((4, 2, 5), (6, 2, 2), (1,), "SAME_LOWER", bgc=2)
cgd((2, 3, 5), (4, 3, 3), (2,), "SAME", preferred="float64", dtype="float32")
cgd((2, 4, 4, 3), (3, 2, 3, 4), (1, 1), [(0, 1), (1, 1)],
    dn=("NWHC", "WHIO", "NHWC"))
# The dimension-number forms: a ConvDimensionNumbers, and the three forms of the union.
cgd((2, 5, 6, 3), (3, 2, 3, 4), (1, 1), "SAME",
    dn=lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)), op="lax.ConvDimensionNumbers")
cgd((1, 2, 5, 4), (3, 2, 2, 2), (1, 1), "VALID", dn=None, op="lax.ConvGeneralDilatedDimensionNumbers")
cgd((1, 5, 4, 2), (2, 2, 2, 3), (1, 1), "VALID", dn=NHWC, op="lax.ConvGeneralDilatedDimensionNumbers")
cgd((1, 5, 4, 2), (3, 2, 2, 2), (2, 1), "SAME",
    dn=lax.ConvDimensionNumbers((0, 3, 1, 2), (0, 1, 2, 3), (0, 3, 1, 2)),
    op="lax.ConvGeneralDilatedDimensionNumbers")

# ---- conv, conv_with_general_padding ----------------------------------------------------------
for shape_l, shape_r, strides, padding, dtype in [
        ((2, 2, 6, 5), (3, 2, 3, 3), (2, 1), "SAME", "float64"),
        ((2, 3, 7), (2, 3, 3), (2,), "VALID", "float32")]:
    tol, gtol = tol_of(dtype)
    c.add("lax.conv", lambda a, b, s=strides, p=padding: lax.conv(a, b, s, p),
          [c.normal(shape_l, dtype), c.normal(shape_r, dtype)],
          params={"strides": list(strides), "padding": padding}, tol=tol, grad_tol=gtol)

for shape_l, shape_r, strides, padding, ld, rd in [
        ((2, 2, 5, 4), (3, 2, 3, 2), (1, 2), [(2, 1), (0, 1)], (2, 1), (1, 2)),
        ((1, 2, 6), (2, 2, 3), (2,), "SAME", (), (2,))]:
    c.add("lax.conv_with_general_padding",
          lambda a, b, s=strides, p=padding, ld=ld, rd=rd: lax.conv_with_general_padding(
              a, b, s, pads(p), tuple(ld) or None, tuple(rd) or None),
          [c.normal(shape_l, "float64"), c.normal(shape_r, "float64")],
          params={"strides": list(strides), "padding": pjson(padding), "lhs_dilation": list(ld),
                  "rhs_dilation": list(rd)})

# ---- conv_transpose ---------------------------------------------------------------------------
for shape_l, shape_r, strides, padding, rd, dn, tk, consistent, dtype in [
        ((1, 3, 4, 2), (3, 3, 2, 3), (2, 2), "SAME", (), None, False, False, "float64"),
        ((2, 5, 2), (3, 2, 2), (2,), "VALID", (), None, False, False, "float32"),
        ((1, 4, 3, 2), (2, 3, 2, 2), (3, 2), "SAME", (), None, False, False, "float64"),
        ((1, 4, 4, 2), (3, 2, 2, 3), (2, 1), [(1, 2), (0, 1)], (1, 2), None, False, False, "float64"),
        ((2, 2, 3, 4), (2, 3, 3, 2), (2, 2), "SAME", (), NCHW, True, False, "float64"),
        ((1, 4, 4, 2), (3, 3, 2, 2), (2, 2), [(1, 1), (0, 1)], (), None, False, True, "float64"),
        ((1, 3, 4, 2), (3, 2, 3, 2), (2, 3), "VALID", (2, 1), None, True, True, "float64")]:
    tol, gtol = tol_of(dtype)
    c.add("lax.conv_transpose",
          lambda a, b, s=strides, p=padding, rd=rd, dn=dn, tk=tk, cp=consistent:
              lax.conv_transpose(a, b, s, pads(p), rhs_dilation=tuple(rd) or None,
                                 dimension_numbers=dn, transpose_kernel=tk,
                                 use_consistent_padding=cp),
          [c.normal(shape_l, dtype), c.normal(shape_r, dtype)],
          params={"strides": list(strides), "padding": pjson(padding), "rhs_dilation": list(rd),
                  "dn": dnjson(dn), "transpose_kernel": tk, "consistent": consistent},
          tol=tol, grad_tol=gtol)

# ---- patches and local ------------------------------------------------------------------------
for shape, fs, strides, padding, ld, rd, dn, dtype in [
        ((2, 2, 5, 4), (2, 3), (1, 2), "SAME", (), (), None, "float64"),
        ((1, 5, 4, 3), (3, 2), (2, 1), "VALID", (), (1, 2), NHWC, "float32"),
        ((2, 3, 6), (3,), (2,), [(1, 2)], (2,), (), None, "float64")]:
    tol, gtol = tol_of(dtype)
    c.add("lax.conv_general_dilated_patches",
          lambda a, fs=fs, s=strides, p=padding, ld=ld, rd=rd, dn=dn:
              lax.conv_general_dilated_patches(a, fs, s, pads(p), tuple(ld) or None,
                                               tuple(rd) or None, dn),
          [c.normal(shape, dtype)],
          params={"filter_shape": list(fs), "strides": list(strides), "padding": pjson(padding),
                  "lhs_dilation": list(ld), "rhs_dilation": list(rd), "dn": dnjson(dn)},
          tol=tol, grad_tol=gtol)

for shape, fs, out_ch, strides, padding, rd, dn, dtype in [
        ((2, 2, 5, 4), (2, 3), 3, (1, 1), "VALID", (), None, "float64"),
        ((1, 5, 4, 2), (3, 2), 2, (2, 1), "SAME", (1, 2), NHWC, "float32"),
        ((2, 3, 7), (3,), 2, (2,), [(1, 0)], (), ("NCH", "OIH", "NCH"), "float64")]:
    lhs = c.normal(shape, dtype)
    patches = lax.conv_general_dilated_patches(lhs, fs, strides, pads(padding), None,
                                               tuple(rd) or None, dn)
    # The kernel has the layout of dn's rhs string: O, I = C * prod(filter), spatial = the output's.
    pdn = lax.conv_dimension_numbers(lhs.shape, (1, 1) + tuple(fs), dn)
    canonical = [out_ch, shape[pdn.lhs_spec[1]] * math.prod(fs)] + [
        patches.shape[d] for d in pdn.out_spec[2:]]
    rshape = [0] * len(shape)
    for i, d in enumerate(pdn.rhs_spec):
        rshape[d] = canonical[i]
    tol, gtol = tol_of(dtype)
    c.add("lax.conv_general_dilated_local",
          lambda a, b, fs=fs, s=strides, p=padding, rd=rd, dn=dn:
              lax.conv_general_dilated_local(a, b, s, pads(p), fs, None, tuple(rd) or None, dn),
          [lhs, c.normal(rshape, dtype)],
          params={"filter_shape": list(fs), "strides": list(strides), "padding": pjson(padding),
                  "rhs_dilation": list(rd), "dn": dnjson(dn)},
          tol=tol, grad_tol=gtol)


# ---- dimension numbers and shape tuples (values JAX gave, as int64 arrays) --------------------
def ints(xs):
    return np.asarray(xs, dtype=np.int64)


def helper(op, fn, params):
    c.add(op, fn, [], params=params, grad=False, vmap=False)


for ls, rs, dn in [((2, 3, 5, 5), (4, 3, 2, 2), None),
                   ((1, 5, 4, 3), (3, 3, 3, 8), NHWC),
                   ((1, 5, 4, 3), (3, 2, 4, 8), ("NHWC", "IOWH", "NWHC")),
                   ((2, 3, 9), (4, 3, 2), ("NCH", "OIH", "NHC"))]:
    helper("lax.conv_dimension_numbers",
           lambda ls=ls, rs=rs, dn=dn: tuple(ints(s) for s in lax.conv_dimension_numbers(ls, rs, dn)),
           {"lhs_shape": list(ls), "rhs_shape": list(rs), "dn": dnjson(dn)})
for dn in [NHWC, NCHW, ("NWHC", "HWOI", "CNHW"), ("NDHWC", "DHWIO", "NCDHW"), ("CN", "IO", "NC")]:
    helper("lax.conv_general_permutations",
           lambda dn=dn: tuple(ints(s) for s in lax.conv_general_permutations(dn)),
           {"dn": list(dn)})
for ls, rs, strides, padding, bgc in [((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), "SAME", 1),
                                      ((4, 3, 9, 8), (4, 3, 3, 2), (2, 3), "VALID", 2),
                                      ((2, 3, 9), (4, 3, 4), (3,), [(2, -1)], 1)]:
    helper("lax.conv_shape_tuple",
           lambda ls=ls, rs=rs, s=strides, p=padding, b=bgc:
               ints(lax.conv_shape_tuple(ls, rs, s, pads(p), b)),
           {"lhs_shape": list(ls), "rhs_shape": list(rs), "strides": list(strides),
            "padding": pjson(padding), "bgc": bgc})
for ls, rs, strides, padding, dn in [((2, 9, 8, 3), (3, 2, 3, 4), (2, 1), "SAME", NHWC),
                                     ((2, 3, 9, 8), (4, 3, 3, 2), (1, 2), [(1, 1), (0, 2)], NCHW),
                                     ((2, 8, 9, 3), (2, 3, 3, 4), (3, 1), "VALID", ("NWHC", "HWIO", "NCHW"))]:
    helper("lax.conv_general_shape_tuple",
           lambda ls=ls, rs=rs, s=strides, p=padding, dn=dn:
               ints(lax.conv_general_shape_tuple(ls, rs, s, pads(p), dn)),
           {"lhs_shape": list(ls), "rhs_shape": list(rs), "strides": list(strides),
            "padding": pjson(padding), "dn": list(dn)})
for ls, rs, strides, padding, dn in [((1, 3, 3, 2), (3, 3, 2, 4), (2, 2), "SAME", NHWC),
                                     ((1, 3, 4, 2), (2, 3, 2, 4), (3, 2), "VALID", NHWC),
                                     ((2, 3, 5, 4), (2, 3, 3, 2), (2, 1), [(1, 2), (0, 1)], NCHW)]:
    helper("lax.conv_transpose_shape_tuple",
           lambda ls=ls, rs=rs, s=strides, p=padding, dn=dn:
               ints(lax.conv_transpose_shape_tuple(ls, rs, s, pads(p), dn)),
           {"lhs_shape": list(ls), "rhs_shape": list(rs), "strides": list(strides),
            "padding": pjson(padding), "dn": list(dn)})
for shape, win, strides, padding, bd, wd in [((4, 6), (2, 3), (2, 1), [(0, 0), (1, 1)], None, None),
                                             ((5, 7, 3), (3, 2, 1), (1, 2, 1), [(1, 1), (0, 2), (0, 0)], (2, 1, 1), (1, 3, 1)),
                                             ((3,), (4,), (1,), [(-1, 0)], None, (2,))]:
    helper("lax.reduce_window_shape_tuple",
           lambda shape=shape, win=win, s=strides, p=padding, bd=bd, wd=wd:
               ints(lax.reduce_window_shape_tuple(shape, win, s, p, bd, wd)),
           {"shape": list(shape), "window": list(win), "strides": list(strides),
            "padding": pjson(padding), "base_dilation": list(bd or ()),
            "window_dilation": list(wd or ())})

# ---- reduce_window ----------------------------------------------------------------------------
COMPUTATIONS = {"add": lax.add, "mul": lax.mul, "max": lax.max, "min": lax.min,
                "or": lax.bitwise_or, "and": lax.bitwise_and}


def initjson(v):
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def reduce_window(x, init, comp, win, strides=None, padding="VALID", bd=None, wd=None,
                  jvp_only=False, tol=None):
    dt = np.asarray(x).dtype

    def f(a):
        return lax.reduce_window(a, np.asarray(init, dtype=dt), COMPUTATIONS[comp], win, strides,
                                 pads(padding), bd, wd)

    params = {"init": initjson(init), "computation": comp, "window": list(win),
              "strides": list(strides or ()), "padding": pjson(padding),
              "base_dilation": list(bd or ()), "window_dilation": list(wd or ())}
    if not jvp_only:
        return c.add("lax.reduce_window", f, [x], params=params, tol=tol)
    # JAX differentiates the generic reduce_window (mul, or a non-identity init value) in
    # forward mode only: record its JVP, and no VJP.
    case = c.add("lax.reduce_window", f, [x], params=params, grad=False, tol=tol)
    t = c.normal(x.shape, jax.numpy.dtype(dt).name)
    _, t_out = jax.jvp(f, (jax.numpy.asarray(x),), (jax.numpy.asarray(t),))
    case["jvp"] = {"wrt": [0], "tangents": [encode(t)], "outputs": [encode(t_out)],
                   "rtol": 1e-10, "atol": 1e-10}
    case["check_grads"] = True
    return case


def distinct(shape, dtype="float64"):
    n = int(np.prod(shape))
    return (c.rng.permutation(n) * 0.25 - n / 8).reshape(shape).astype(dtype)


reduce_window(c.normal((4, 5), "float64"), 0.0, "add", (2, 3), (1, 2), "SAME")
reduce_window(c.normal((5, 6), "float32"), 0.0, "add", (3, 2), (2, 2), [(1, 0), (-1, 2)], bd=(1, 2),
              wd=(2, 1), tol=F32_TOL)
reduce_window(distinct((5, 6)), -np.inf, "max", (2, 2), (1, 2), "SAME_LOWER", bd=(2, 1), wd=(1, 2),
              jvp_only=True)  # JAX has no VJP of max windows with window dilation
reduce_window(distinct((5, 6)), -np.inf, "max", (2, 3), (2, 1), [(1, 0), (0, 2)], bd=(2, 1))
reduce_window(distinct((2, 7), "float32"), np.inf, "min", (1, 3), (1, 2), [(0, 0), (1, 2)])
reduce_window(c.uniform((6,), 0.5, 1.5, "float64"), 1.0, "mul", (2,), jvp_only=True)
reduce_window(c.uniform((4, 5), 0.5, 1.5, "float64"), 1.0, "mul", (2, 2), (1, 2), [(1, 1), (0, 1)],
              bd=(2, 1), jvp_only=True)
reduce_window(c.normal((4, 5), "float64"), 1.5, "add", (2, 2), (2, 1), [(1, 1), (0, 1)], bd=(1, 2),
              jvp_only=True)
reduce_window(distinct((4, 5)), 0.0, "max", (2, 3), (1, 1), "SAME", jvp_only=True)
reduce_window(distinct((3, 6)), 0.5, "min", (2, 2), (1, 3), "VALID", wd=(1, 2), jvp_only=True)
reduce_window(c.ints((4, 5), -9, 9, "int32"), 0, "add", (2, 2), (1, 1), "SAME")
reduce_window(c.ints((4, 5), -9, 9, "int32"), np.iinfo(np.int32).min, "max", (3, 2), (1, 2), "VALID")
reduce_window(c.ints((6,), 0, 16, "int32"), 0, "or", (3,), (1,), "SAME")
reduce_window(c.bools((2, 5)), True, "and", (1, 2), None, "VALID")

c.save()
