"""Writes lax_slicing.json: jax.lax.gather and the lax.scatter* family with explicit dimension
numbers and each out-of-bounds mode (see jaxcases.py for the case format). Run with
/work/venv/bin/python.

The dimension numbers travel in params as {"offset_dims": [..], ...}; modes as JAX's strings.
Indices of the "oob" cases reach past the operand on purpose, to tell the modes apart.
"""

import numpy as np
from jax import lax

from jaxcases import Cases

c = Cases("lax_slicing")

GD = lax.GatherDimensionNumbers
SD = lax.ScatterDimensionNumbers


def gdims(offset, collapsed, start_map, ob=(), sb=()):
    return GD(offset_dims=tuple(offset), collapsed_slice_dims=tuple(collapsed),
              start_index_map=tuple(start_map), operand_batching_dims=tuple(ob),
              start_indices_batching_dims=tuple(sb))


def sdims(window, inserted, to_operand, ob=(), sb=()):
    return SD(update_window_dims=tuple(window), inserted_window_dims=tuple(inserted),
              scatter_dims_to_operand_dims=tuple(to_operand), operand_batching_dims=tuple(ob),
              scatter_indices_batching_dims=tuple(sb))


def gparams(d, slice_sizes, mode=None, fill_value=None):
    p = {"offset_dims": list(d.offset_dims), "collapsed_slice_dims": list(d.collapsed_slice_dims),
         "start_index_map": list(d.start_index_map),
         "operand_batching_dims": list(d.operand_batching_dims),
         "start_indices_batching_dims": list(d.start_indices_batching_dims),
         "slice_sizes": list(slice_sizes)}
    if mode is not None:
        p["mode"] = mode
    if fill_value is not None:
        p["fill_value"] = fill_value
    return p


def sparams(d, mode=None, unique=False):
    p = {"update_window_dims": list(d.update_window_dims),
         "inserted_window_dims": list(d.inserted_window_dims),
         "scatter_dims_to_operand_dims": list(d.scatter_dims_to_operand_dims),
         "operand_batching_dims": list(d.operand_batching_dims),
         "scatter_indices_batching_dims": list(d.scatter_indices_batching_dims)}
    if mode is not None:
        p["mode"] = mode
    if unique:
        p["unique_indices"] = True
    return p


def add_gather(x, idx, d, sizes, mode=None, fill_value=None, vmap_axes=None, grad=None,
               check_grads=None):
    c.add("lax.gather",
          lambda x, i: lax.gather(x, i, d, sizes, mode=mode, fill_value=fill_value),
          [x, idx], params=gparams(d, sizes, mode, fill_value), vmap_axes=vmap_axes, grad=grad,
          check_grads=check_grads)


# Rows of a matrix (x[idx]), in bounds, in each mode.
x34 = c.normal((3, 4), "float64")
rows = np.array([[2], [0], [1], [2]], np.int32)
for mode in (None, "clip", "fill", "promise_in_bounds"):
    add_gather(x34, rows, gdims([1], [0], [0]), (1, 4), mode)
# Out of bounds: clip clamps, fill gives NaN (or the fill value), windows partly outside too.
# A broken promise (mode None is promise_in_bounds for gather) reads clamped rows but, as
# JAX's rule says, drops their gradient: the derivative is JAX's, not finite differences'.
oob = np.array([[3], [-1], [1], [7]], np.int32)
add_gather(x34, oob, gdims([1], [0], [0]), (1, 4), None, check_grads=False)
add_gather(x34, oob, gdims([1], [0], [0]), (1, 4), "clip")
add_gather(x34, oob, gdims([1], [0], [0]), (1, 4), "fill", fill_value=-5.0)
add_gather(c.normal((5, 4), "float32"), np.array([[0, 1], [3, 2], [4, 0]], np.int32),
           gdims([1, 2], [], [0, 1]), (2, 3), None)
add_gather(c.normal((5, 4), "float32"), np.array([[0, 1], [3, 2], [4, 0]], np.int32),
           gdims([1, 2], [], [0, 1]), (2, 3), "clip")
# Points of a matrix (x[i, j]) with the index vector in a [2, 2, 2] batch.
add_gather(x34, np.array([[[0, 1], [2, 3]], [[1, 1], [2, 0]]], np.int64),
           gdims([], [0, 1], [0, 1]), (1, 1))
# The start map in the other order, a window over the last two dims of a rank-3 operand.
add_gather(c.normal((2, 3, 4), "float32"), np.array([[1, 0], [2, 1]], np.int32),
           gdims([1, 2], [0], [2, 1]), (1, 2, 3))
# Batching dims: one index per example of the leading dim.
add_gather(c.normal((3, 5), "float64"), np.array([[4], [0], [2]], np.int32),
           gdims([], [1], [1], ob=[0], sb=[0]), (1, 1))
# Integer operands: fill gives the dtype's minimum (int32) and maximum (uint8).
add_gather(c.ints((4, 2), -9, 9, "int32"), np.array([[1], [5]], np.int32),
           gdims([1], [0], [0]), (1, 2), "fill")
add_gather(c.ints((4, 2), 0, 9, "uint8"), np.array([[1], [-2]], np.int32),
           gdims([1], [0], [0]), (1, 2), None)
# The batch axis of vmap on the operand only, and on the indices only.
add_gather(x34, rows, gdims([1], [0], [0]), (1, 2), None, vmap_axes=[0, None])
add_gather(x34, rows, gdims([1], [0], [0]), (1, 2), "clip", vmap_axes=[None, 0])


SCATTERS = {"lax.scatter": lax.scatter, "lax.scatter_add": lax.scatter_add,
            "lax.scatter_sub": lax.scatter_sub, "lax.scatter_mul": lax.scatter_mul,
            "lax.scatter_min": lax.scatter_min, "lax.scatter_max": lax.scatter_max}


def add_scatter(op, x, idx, u, d, mode=None, unique=False, grad=None, vmap_axes=None, wrt=None,
                check_grads=None):
    f = SCATTERS[op]
    c.add(op, lambda x, i, u: f(x, i, u, d, mode=mode, unique_indices=unique),
          [x, idx, u], params=sparams(d, mode, unique), grad=grad, vmap_axes=vmap_axes, wrt=wrt,
          check_grads=check_grads)


row_d = sdims([1], [0], [0])
uniq = np.array([[2], [0]], np.int32)
dup = np.array([[2], [0], [2]], np.int32)
for op in SCATTERS:
    # Unique rows: every op differentiable (min/max on distinct values: no ties).
    add_scatter(op, c.normal((3, 4), "float64"), uniq, c.normal((2, 4), "float64"), row_d,
                unique=True)
for op in ("lax.scatter_add", "lax.scatter_sub", "lax.scatter_min", "lax.scatter_max"):
    # Repeated rows accumulate.
    add_scatter(op, c.normal((3, 4), "float32"), dup, c.normal((3, 4), "float32"), row_d)
# Out-of-bounds rows: dropped by default and by promise_in_bounds, clamped under clip. The
# broken promise's gradient is JAX's rule (a clamped read), not finite differences'.
oob_rows = np.array([[3], [-1], [1]], np.int32)
for mode in (None, "clip", "drop", "promise_in_bounds"):
    add_scatter("lax.scatter_add", c.normal((3, 4), "float64"), oob_rows,
                c.normal((3, 4), "float64"), row_d, mode=mode,
                check_grads=False if mode == "promise_in_bounds" else None)
add_scatter("lax.scatter", c.normal((3, 4), "float64"), np.array([[5], [1]], np.int32),
            c.normal((2, 4), "float64"), row_d, mode="clip", unique=True)
# Points, windows of a rank-3 operand, batching dims.
add_scatter("lax.scatter_add", c.normal((3, 4), "float64"),
            np.array([[[0, 1], [2, 3]], [[0, 1], [2, 0]]], np.int32),
            c.normal((2, 2), "float64"), sdims([], [0, 1], [0, 1]))
add_scatter("lax.scatter_max", c.normal((2, 3, 4), "float32"), np.array([[1, 0], [0, 2]], np.int32),
            c.normal((2, 2, 2, 2), "float32"), sdims([1, 2, 3], [], [2, 1]), grad=False)
add_scatter("lax.scatter", c.normal((3, 5), "float64"), np.array([[4], [0], [2]], np.int32),
            c.normal((3,), "float64"), sdims([], [1], [1], ob=[0], sb=[0]), unique=True)
# Integers: wrapped sums and differences.
add_scatter("lax.scatter_add", c.ints((3, 2), 100, 127, "int8"), dup, c.ints((3, 2), 100, 127, "int8"),
            row_d)
add_scatter("lax.scatter_sub", c.ints((3, 2), 0, 9, "uint8"), dup, c.ints((3, 2), 5, 200, "uint8"),
            row_d)
add_scatter("lax.scatter_mul", c.ints((3, 2), -5, 5, "int32"), dup, c.ints((3, 2), -3, 3, "int32"),
            row_d)
# The batch axis of vmap on the updates only, and on the operand and indices only.
add_scatter("lax.scatter_add", c.normal((3, 4), "float64"), dup, c.normal((3, 4), "float64"),
            row_d, vmap_axes=[None, None, 0])
add_scatter("lax.scatter_mul", c.normal((3, 4), "float64"), uniq, c.normal((2, 4), "float64"),
            row_d, unique=True, vmap_axes=[0, 0, None])


# scatter_apply: func at each place a window lands, once per window. JAX has no derivative
# rule for it (grad=False); the vmap is JAX's batching of the scatter.
FUNCS = {"sin": lambda v: lax.sin(v), "double": lambda v: v * 2, "neg": lambda v: -v}


def add_apply(fname, x, idx, d, update_shape, mode=None, unique=False, vmap_axes=None):
    f = FUNCS[fname]
    p = sparams(d, mode, unique)
    p.update({"func": fname, "update_shape": list(update_shape)})
    c.add("lax.scatter_apply",
          lambda x, i: lax.scatter_apply(x, i, f, d, update_shape=update_shape, mode=mode,
                                         unique_indices=unique),
          [x, idx], params=p, grad=False, vmap_axes=vmap_axes)


point_d = sdims([], [0], [0])
add_apply("sin", c.normal((5,), "float64"), np.array([[0], [3]], np.int32), point_d, (2,), unique=True)
add_apply("double", c.normal((5,), "float64"), np.array([[0], [3], [0], [0]], np.int32), point_d, (4,))
add_apply("double", c.normal((3,), "float32"), np.array([[5], [1]], np.int32), point_d, (2,), mode="clip")
add_apply("double", c.normal((3,), "float32"), np.array([[5], [1]], np.int32), point_d, (2,))
add_apply("neg", c.ints((3, 4), -9, 9, "int32"), np.array([[2], [0], [2]], np.int32), row_d, (3, 4))
add_apply("sin", c.normal((3, 4), "float64"), np.array([[2], [0]], np.int32), sdims([1], [0], [0]), (2, 2),
          vmap_axes=[0, None])
c.save()
