"""Writes jnp_manip.json: jax.numpy's array creation and manipulation functions on fixed
inputs (see jaxcases.py for the case format). Run with /work/venv/bin/python."""

import numpy as np

from jaxcases import Cases, jnp

c = Cases("jnp_manip")
I64 = "int64"


def shape_of(v):
    return np.asarray(v, dtype=np.int64)


# ---- creation (no array inputs: values only) ---------------------------------------------
def const(op, fn, params, **kw):
    c.add(op, fn, [], params=params, grad=False, vmap=False, **kw)


const("jnp.zeros", lambda: jnp.zeros((2, 3)), {"shape": [2, 3]})
const("jnp.zeros", lambda: jnp.zeros((4,), "int32"), {"shape": [4], "dtype": "int32"})
const("jnp.ones", lambda: jnp.ones((3, 1)), {"shape": [3, 1]})
const("jnp.ones", lambda: jnp.ones((2,), "bool"), {"shape": [2], "dtype": "bool"})
const("jnp.empty", lambda: jnp.empty((2, 2), "float32"), {"shape": [2, 2], "dtype": "float32"})
const("jnp.full", lambda: jnp.full((2, 3), 2.5), {"shape": [2, 3], "fill": 2.5})
const("jnp.full", lambda: jnp.full((3,), 7), {"shape": [3], "fill_int": 7})
const("jnp.full", lambda: jnp.full((2,), 7, "uint8"), {"shape": [2], "fill_int": 7, "dtype": "uint8"})
const("jnp.arange", lambda: jnp.arange(5), {"start": 5})
const("jnp.arange", lambda: jnp.arange(2, 11, 3), {"start": 2, "stop": 11, "step": 3})
const("jnp.arange", lambda: jnp.arange(0.5, 3.0, 0.25), {"fstart": 0.5, "stop": 3.0, "step": 0.25})
const("jnp.arange", lambda: jnp.arange(0, 1, 0.3, dtype="float32"),
      {"fstart": 0.0, "stop": 1.0, "step": 0.3, "dtype": "float32"})
const("jnp.linspace", lambda: jnp.linspace(0.0, 1.0, 7), {"start": 0.0, "stop": 1.0, "num": 7, "endpoint": True})
const("jnp.linspace", lambda: jnp.linspace(-2.0, 3.0, 6, endpoint=False, dtype="float32"),
      {"start": -2.0, "stop": 3.0, "num": 6, "endpoint": False, "dtype": "float32"})
const("jnp.linspace", lambda: jnp.linspace(0, 10, 4, dtype="int32"),
      {"start": 0.0, "stop": 10.0, "num": 4, "endpoint": True, "dtype": "int32"})
const("jnp.logspace", lambda: jnp.logspace(0.0, 2.0, 5), {"start": 0.0, "stop": 2.0, "num": 5, "endpoint": True, "base": 10.0})
const("jnp.logspace", lambda: jnp.logspace(1.0, 3.0, 4, endpoint=False, base=2.0, dtype="float32"),
      {"start": 1.0, "stop": 3.0, "num": 4, "endpoint": False, "base": 2.0, "dtype": "float32"})
const("jnp.geomspace", lambda: jnp.geomspace(1.0, 1000.0, 4), {"start": 1.0, "stop": 1000.0, "num": 4, "endpoint": True})
const("jnp.geomspace", lambda: jnp.geomspace(-2.0, -32.0, 5, endpoint=False),
      {"start": -2.0, "stop": -32.0, "num": 5, "endpoint": False})
const("jnp.eye", lambda: jnp.eye(3), {"n": 3, "k": 0})
const("jnp.eye", lambda: jnp.eye(3, 4, k=1, dtype="int32"), {"n": 3, "m": 4, "k": 1, "dtype": "int32"})
const("jnp.eye", lambda: jnp.eye(4, 2, k=-1), {"n": 4, "m": 2, "k": -1})
const("jnp.identity", lambda: jnp.identity(3, "float32"), {"n": 3, "dtype": "float32"})
const("jnp.tri", lambda: jnp.tri(3, 4, 1), {"n": 3, "m": 4, "k": 1})
const("jnp.tri", lambda: jnp.tri(3, k=-1, dtype="int32"), {"n": 3, "k": -1, "dtype": "int32"})
const("jnp.tril_indices", lambda: jnp.tril_indices(3), {"n": 3, "k": 0})
const("jnp.tril_indices", lambda: jnp.tril_indices(3, 1, 4), {"n": 3, "k": 1, "m": 4})
const("jnp.triu_indices", lambda: jnp.triu_indices(4, -1), {"n": 4, "k": -1})
const("jnp.diag_indices", lambda: jnp.diag_indices(3, 2), {"n": 3, "ndim": 2})
const("jnp.mask_indices", lambda: jnp.mask_indices(3, jnp.triu, 1), {"n": 3, "k": 1}, jit=False)
const("jnp.indices", lambda: jnp.indices((2, 3)), {"dims": [2, 3]})
const("jnp.indices", lambda: jnp.indices((2, 1, 2), dtype="int32"), {"dims": [2, 1, 2], "dtype": "int32"})

# ---- like-creation and conversions -----------------------------------------------------------
x23 = c.normal((2, 3), "float32")
i23 = c.ints((2, 3), -5, 5, "int32")
for x in (x23, i23):
    c.add("jnp.zeros_like", jnp.zeros_like, [x], grad=False)
    c.add("jnp.ones_like", jnp.ones_like, [x], grad=False)
    c.add("jnp.empty_like", jnp.empty_like, [x], grad=False)
    c.add("jnp.full_like", lambda x: jnp.full_like(x, 3), [x], params={"fill": 3.0}, grad=False)
c.add("jnp.ones_like", lambda x: jnp.ones_like(x, dtype="int8"), [x23], params={"dtype": "int8"}, grad=False)
c.add("jnp.full_like", lambda x: jnp.full_like(x, 1.5, dtype="float64"), [i23],
      params={"fill": 1.5, "dtype": "float64"}, grad=False)
c.add("jnp.array", lambda x: jnp.array(x), [c.normal((3,), "float64")])
c.add("jnp.array", lambda x: jnp.array(x, dtype="float32"), [i23], params={"dtype": "float32"})
c.add("jnp.asarray", lambda x: jnp.asarray(x), [c.normal((2, 2), "float64")])
c.add("jnp.asarray", lambda x: jnp.asarray(x, dtype="int32"), [c.bools((4,))], params={"dtype": "int32"})
c.add("jnp.copy", jnp.copy, [c.normal((3, 2), "float64")])
c.add("jnp.copy", jnp.copy, [c.ints((5,), 0, 200, "uint8")])

# ---- shape queries (returned as int64 arrays) ---------------------------------------------
x234 = c.normal((2, 3, 4), "float32")
c.add("jnp.shape", lambda x: shape_of(jnp.shape(x)), [x234], grad=False, vmap=False)
c.add("jnp.ndim", lambda x: shape_of(jnp.ndim(x)), [x234], grad=False, vmap=False)
c.add("jnp.size", lambda x: shape_of(jnp.size(x)), [x234], grad=False, vmap=False)

# ---- reshaping -----------------------------------------------------------------------------
c.add("jnp.reshape", lambda x: jnp.reshape(x, (4, -1)), [x234], params={"shape": [4, -1]})
c.add("jnp.reshape", lambda x: jnp.reshape(x, (3, 2)), [c.normal((6,), "float64")], params={"shape": [3, 2]})
c.add("jnp.ravel", jnp.ravel, [x234])
c.add("jnp.ravel", jnp.ravel, [c.normal((2, 3), "float64")])
c.add("jnp.ravel", jnp.ravel, [c.ints((2, 2), 0, 9, "int8")])
c.add("jnp.transpose", jnp.transpose, [x234])
c.add("jnp.transpose", lambda x: jnp.transpose(x, (1, 0, 2)), [c.normal((2, 3, 2), "float64")], params={"axes": [1, 0, 2]})
c.add("jnp.permute_dims", lambda x: jnp.permute_dims(x, (2, 0, 1)), [x234], params={"axes": [2, 0, 1]})
c.add("jnp.matrix_transpose", jnp.matrix_transpose, [c.normal((2, 3, 4), "float64")])
c.add("jnp.swapaxes", lambda x: jnp.swapaxes(x, 0, -1), [x234], params={"a": 0, "b": -1})
c.add("jnp.moveaxis", lambda x: jnp.moveaxis(x, 0, -1), [x234], params={"src": [0], "dst": [-1]})
c.add("jnp.moveaxis", lambda x: jnp.moveaxis(x, (0, 1), (2, 0)), [c.normal((2, 3, 4), "float64")],
      params={"src": [0, 1], "dst": [2, 0]})
c.add("jnp.rollaxis", lambda x: jnp.rollaxis(x, 2), [x234], params={"axis": 2, "start": 0})
c.add("jnp.rollaxis", lambda x: jnp.rollaxis(x, 0, 2), [x234], params={"axis": 0, "start": 2})
c.add("jnp.expand_dims", lambda x: jnp.expand_dims(x, 1), [x23], params={"axis": [1]})
c.add("jnp.expand_dims", lambda x: jnp.expand_dims(x, (0, -1)), [c.normal((3,), "float64")], params={"axis": [0, -1]})
x131 = c.normal((1, 3, 1), "float64")
c.add("jnp.squeeze", jnp.squeeze, [x131])
c.add("jnp.squeeze", lambda x: jnp.squeeze(x, 2), [x131], params={"axis": [2]})
c.add("jnp.squeeze", lambda x: jnp.squeeze(x, (0, 2)), [c.ints((1, 2, 1), 0, 9, "int32")], params={"axis": [0, 2]})
for r in (0, 1, 2, 3):
    xr = c.normal((2, 3, 2)[:r], "float64") if r else np.float64(1.5)
    if r == 0:
        xr = np.asarray(1.5, dtype=np.float64)
    for op in ("atleast_1d", "atleast_2d", "atleast_3d"):
        c.add(f"jnp.{op}", getattr(jnp, op), [xr], vmap=r > 0)
c.add("jnp.broadcast_to", lambda x: jnp.broadcast_to(x, (2, 3, 3)), [c.normal((3, 1), "float64")],
      params={"shape": [2, 3, 3]})
c.add("jnp.broadcast_to", lambda x: jnp.broadcast_to(x, (4,)), [c.ints((1,), 0, 9, "uint32")], params={"shape": [4]})
c.add("jnp.broadcast_arrays", lambda a, b: jnp.broadcast_arrays(a, b),
      [c.normal((3, 1), "float64"), c.normal((4,), "float32")])
c.add("jnp.broadcast_shapes", lambda: shape_of(jnp.broadcast_shapes((3, 1), (2, 1, 4), (4,))), [],
      params={"shapes": [[3, 1], [2, 1, 4], [4]]}, grad=False, vmap=False)
c.add("jnp.resize", lambda x: jnp.resize(x, (3, 3)), [c.normal((2, 2), "float64")], params={"shape": [3, 3]})
c.add("jnp.resize", lambda x: jnp.resize(x, (2,)), [c.ints((5,), 0, 9, "int32")], params={"shape": [2]})

# ---- joining -------------------------------------------------------------------------------
a = c.normal((2, 3), "float64")
b = c.normal((2, 3), "float64")
v3 = c.normal((3,), "float64")
w3 = c.normal((3,), "float64")
c.add("jnp.concatenate", lambda a, b: jnp.concatenate([a, b]), [a, b], params={"axis": 0})
c.add("jnp.concatenate", lambda a, b: jnp.concatenate([a, b], axis=1), [a, c.normal((2, 1), "float32")], params={"axis": 1})
c.add("jnp.concatenate", lambda a, b: jnp.concatenate([a, b], axis=None), [a, v3], params={})
c.add("jnp.concatenate", lambda a, b: jnp.concatenate([a, b], axis=-1),
      [c.ints((2, 2), -9, 9, "int32"), c.ints((2, 3), -9, 9, "int32")], params={"axis": -1})
c.add("jnp.append", lambda a, b: jnp.append(a, b), [a, v3], params={})
c.add("jnp.append", lambda a, b: jnp.append(a, b, axis=1), [a, c.normal((2, 2), "float64")], params={"axis": 1})
c.add("jnp.concat", lambda a, b: jnp.concat([a, b], axis=0), [a, b], params={"axis": 0})
c.add("jnp.stack", lambda a, b: jnp.stack([a, b]), [a, b], params={"axis": 0})
c.add("jnp.stack", lambda a, b: jnp.stack([a, b], axis=-1), [a, b], params={"axis": -1})
c.add("jnp.stack", lambda a, b: jnp.stack([a, b], axis=1), [c.ints((3,), 0, 5, "int8"), c.ints((3,), 0, 5, "int8")],
      params={"axis": 1})
c.add("jnp.vstack", lambda a, b: jnp.vstack([a, b]), [v3, w3])
c.add("jnp.vstack", lambda a, b: jnp.vstack([a, b]), [a, v3])
c.add("jnp.hstack", lambda a, b: jnp.hstack([a, b]), [v3, w3])
c.add("jnp.hstack", lambda a, b: jnp.hstack([a, b]), [a, c.normal((2, 2), "float64")])
c.add("jnp.dstack", lambda a, b: jnp.dstack([a, b]), [a, b])
c.add("jnp.dstack", lambda a, b: jnp.dstack([a, b]), [v3, w3])
c.add("jnp.column_stack", lambda a, b: jnp.column_stack([a, b]), [v3, w3])
c.add("jnp.column_stack", lambda a, b: jnp.column_stack([a, b]), [c.normal((3, 2), "float64"), v3])
c.add("jnp.block", lambda p, q, r, s: jnp.block([[p, q], [r, s]]),
      [c.normal((2, 2), "float64"), c.normal((2, 1), "float64"), c.normal((1, 2), "float64"), c.normal((1, 1), "float64")])

# ---- splitting -----------------------------------------------------------------------------
x64 = c.normal((6, 4), "float64")
c.add("jnp.split", lambda x: jnp.split(x, 3), [x64], params={"sections": 3, "axis": 0})
c.add("jnp.split", lambda x: jnp.split(x, [1, 3], axis=1), [x64], params={"indices": [1, 3], "axis": 1})
c.add("jnp.split", lambda x: jnp.split(x, [2, 5]), [c.ints((6,), 0, 9, "int32")], params={"indices": [2, 5], "axis": 0})
c.add("jnp.array_split", lambda x: jnp.array_split(x, 4), [x64], params={"sections": 4, "axis": 0})
c.add("jnp.array_split", lambda x: jnp.array_split(x, 3, axis=1), [x64], params={"sections": 3, "axis": 1})
c.add("jnp.hsplit", lambda x: jnp.hsplit(x, 2), [x64], params={"sections": 2})
c.add("jnp.hsplit", lambda x: jnp.hsplit(x, [2]), [c.normal((5,), "float64")], params={"indices": [2]})
c.add("jnp.vsplit", lambda x: jnp.vsplit(x, 2), [x64], params={"sections": 2})
c.add("jnp.dsplit", lambda x: jnp.dsplit(x, [1]), [c.normal((2, 2, 3), "float64")], params={"indices": [1]})
c.add("jnp.unstack", lambda x: jnp.unstack(x), [c.normal((3, 2), "float64")], params={"axis": 0})
c.add("jnp.unstack", lambda x: jnp.unstack(x, axis=1), [c.normal((2, 3), "float32")], params={"axis": 1})

# ---- reordering ----------------------------------------------------------------------------
c.add("jnp.flip", jnp.flip, [c.normal((2, 3), "float64")], params={})
c.add("jnp.flip", lambda x: jnp.flip(x, 1), [x234], params={"axis": [1]})
c.add("jnp.flip", lambda x: jnp.flip(x, (0, 2)), [c.ints((2, 2, 2), 0, 9, "int32")], params={"axis": [0, 2]})
c.add("jnp.fliplr", jnp.fliplr, [c.normal((2, 3), "float64")])
c.add("jnp.flipud", jnp.flipud, [c.normal((3, 2), "float64")])
x33 = c.normal((3, 2), "float64")
for k in (1, 2, 3, -1):
    c.add("jnp.rot90", lambda x, k=k: jnp.rot90(x, k), [x33], params={"k": k, "axes": [0, 1]})
c.add("jnp.rot90", lambda x: jnp.rot90(x, 1, axes=(2, 0)), [x234], params={"k": 1, "axes": [2, 0]})
c.add("jnp.roll", lambda x: jnp.roll(x, 2), [c.normal((2, 3), "float64")], params={"shift": [2]})
c.add("jnp.roll", lambda x: jnp.roll(x, -1, axis=1), [x234], params={"shift": [-1], "axis": [1]})
c.add("jnp.roll", lambda x: jnp.roll(x, (1, 5), axis=(0, 2)), [x234], params={"shift": [1, 5], "axis": [0, 2]})
c.add("jnp.roll", lambda x: jnp.roll(x, 7, axis=0), [c.ints((4,), 0, 9, "int32")], params={"shift": [7], "axis": [0]})

# ---- repeat, tile ------------------------------------------------------------------------------
c.add("jnp.repeat", lambda x: jnp.repeat(x, 2), [c.normal((2, 2), "float64")], params={"repeats": 2})
c.add("jnp.repeat", lambda x: jnp.repeat(x, 3, axis=1), [x23], params={"repeats": 3, "axis": 1})
c.add("jnp.repeat", lambda x: jnp.repeat(x, np.array([1, 0, 2]), axis=1), [c.normal((2, 3), "float64")],
      params={"repeats_list": [1, 0, 2], "axis": 1})
c.add("jnp.repeat", lambda x: jnp.repeat(x, np.array([2, 1]), axis=0, total_repeat_length=5),
      [c.ints((2, 2), 0, 9, "int32")], params={"repeats_list": [2, 1], "axis": 0, "total": 5})
c.add("jnp.repeat", lambda x, r: jnp.repeat(x, r, axis=0, total_repeat_length=6),
      [c.normal((3,), "float64"), np.array([2, 0, 3], dtype=np.int32)], params={"axis": 0, "total": 6},
      vmap_axes=[0, None])
c.add("jnp.repeat", lambda x, r: jnp.repeat(x, r, axis=1, total_repeat_length=3),
      [c.normal((2, 3), "float32"), np.array([1, 2, 1], dtype=np.int64)], params={"axis": 1, "total": 3},
      vmap_axes=[0, 0])
c.add("jnp.tile", lambda x: jnp.tile(x, 2), [c.normal((3,), "float64")], params={"reps": [2]})
c.add("jnp.tile", lambda x: jnp.tile(x, (2, 1, 2)), [c.normal((2, 3), "float64")], params={"reps": [2, 1, 2]})
c.add("jnp.tile", lambda x: jnp.tile(x, (3,)), [c.ints((2, 2), 0, 9, "uint8")], params={"reps": [3]})

# ---- diagonals and triangles -----------------------------------------------------------------
v4 = c.normal((4,), "float64")
m34 = c.normal((3, 4), "float64")
for k in (0, 1, -2):
    c.add("jnp.diag", lambda v, k=k: jnp.diag(v, k), [v4], params={"k": k})
    c.add("jnp.diag", lambda v, k=k: jnp.diag(v, k), [m34], params={"k": k})
c.add("jnp.diag", lambda v: jnp.diag(v), [c.ints((3,), 0, 9, "int32")], params={"k": 0})
c.add("jnp.diagflat", lambda v: jnp.diagflat(v, 1), [c.normal((2, 2), "float64")], params={"k": 1})
c.add("jnp.diagonal", jnp.diagonal, [m34], params={"offset": 0, "axis1": 0, "axis2": 1})
c.add("jnp.diagonal", lambda x: jnp.diagonal(x, 1, 2, 0), [x234], params={"offset": 1, "axis1": 2, "axis2": 0})
c.add("jnp.diagonal", lambda x: jnp.diagonal(x, -1, 1, 2), [c.normal((2, 3, 4), "float64")],
      params={"offset": -1, "axis1": 1, "axis2": 2})
c.add("jnp.diagonal", lambda x: jnp.diagonal(x, 5), [m34], params={"offset": 5, "axis1": 0, "axis2": 1}, grad=False)
c.add("jnp.diag_indices_from", jnp.diag_indices_from, [c.normal((3, 3, 3), "float32")], grad=False, vmap=False)
c.add("jnp.fill_diagonal", lambda x: jnp.fill_diagonal(x, 9.0, inplace=False), [m34], params={"val": 9.0})
c.add("jnp.fill_diagonal", lambda x, v: jnp.fill_diagonal(x, v, inplace=False),
      [c.normal((4, 3), "float64"), c.normal((2,), "float64")], params={})
c.add("jnp.fill_diagonal", lambda x: jnp.fill_diagonal(x, 0, inplace=False), [c.ints((3, 3, 3), 1, 9, "int32")],
      params={"val": 0.0})
for k in (0, 1, -1):
    c.add("jnp.tril", lambda x, k=k: jnp.tril(x, k), [m34], params={"k": k})
    c.add("jnp.triu", lambda x, k=k: jnp.triu(x, k), [c.normal((2, 3, 3), "float64")], params={"k": k})
c.add("jnp.tril_indices_from", lambda x: jnp.tril_indices_from(x, -1), [m34], params={"k": -1}, grad=False, vmap=False)
c.add("jnp.triu_indices_from", lambda x: jnp.triu_indices_from(x, 1), [m34], params={"k": 1}, grad=False, vmap=False)

# ---- grids ---------------------------------------------------------------------------------
gx = c.normal((3,), "float64")
gy = c.normal((2,), "float64")
gz = c.normal((4,), "float64")
c.add("jnp.meshgrid", lambda x, y: jnp.meshgrid(x, y), [gx, gy], params={"indexing": "xy"})
c.add("jnp.meshgrid", lambda x, y, z: jnp.meshgrid(x, y, z, indexing="ij"), [gx, gy, gz], params={"indexing": "ij"})
c.add("jnp.meshgrid", lambda x, y, z: jnp.meshgrid(x, y, z, sparse=True), [gx, gy, gz],
      params={"indexing": "xy", "sparse": True})
c.add("jnp.meshgrid", lambda x, y: jnp.meshgrid(x, y, indexing="ij", sparse=True),
      [c.ints((3,), 0, 9, "int32"), c.ints((2,), 0, 9, "int32")], params={"indexing": "ij", "sparse": True})
c.add("jnp.ix_", lambda a, b: jnp.ix_(a, b), [c.ints((3,), 0, 9, "int32"), c.ints((2,), 0, 9, "int32")], vmap=False)
c.add("jnp.vander", lambda x: jnp.vander(x), [c.uniform((4,), 0.5, 2.0, "float64")], params={})
c.add("jnp.vander", lambda x: jnp.vander(x, 3, increasing=True), [c.uniform((3,), 0.5, 2.0, "float32")],
      params={"n": 3, "increasing": True})

# ---- pad -----------------------------------------------------------------------------------
p1 = c.normal((5,), "float64")
p2 = c.normal((3, 4), "float64")
pi = c.ints((4,), -9, 9, "int32")
c.add("jnp.pad", lambda x: jnp.pad(x, 2), [p1], params={"width": [[2, 2]], "mode": "constant"})
c.add("jnp.pad", lambda x: jnp.pad(x, ((1, 2), (0, 3)), constant_values=1.5), [p2],
      params={"width": [[1, 2], [0, 3]], "mode": "constant", "constant_values": [[1.5, 1.5]]})
c.add("jnp.pad", lambda x: jnp.pad(x, ((1, 2), (2, 1)), constant_values=((1.0, 2.0), (3.0, 4.0))), [p2],
      params={"width": [[1, 2], [2, 1]], "mode": "constant", "constant_values": [[1.0, 2.0], [3.0, 4.0]]})
c.add("jnp.pad", lambda x: jnp.pad(x, (2, 1), constant_values=7), [pi],
      params={"width": [[2, 1]], "mode": "constant", "constant_values": [[7.0, 7.0]]})
c.add("jnp.pad", lambda x: jnp.pad(x, (2, 3), mode="empty"), [pi], params={"width": [[2, 3]], "mode": "empty"})
for mode in ("edge", "wrap", "reflect", "symmetric", "maximum", "minimum", "mean", "median"):
    c.add("jnp.pad", lambda x, mode=mode: jnp.pad(x, (3, 7), mode=mode), [p1], params={"width": [[3, 7]], "mode": mode})
    c.add("jnp.pad", lambda x, mode=mode: jnp.pad(x, ((1, 2), (4, 0)), mode=mode), [p2],
          params={"width": [[1, 2], [4, 0]], "mode": mode})
    c.add("jnp.pad", lambda x, mode=mode: jnp.pad(x, (2, 5), mode=mode), [pi], params={"width": [[2, 5]], "mode": mode})
for mode in ("reflect", "symmetric"):
    c.add("jnp.pad", lambda x, mode=mode: jnp.pad(x, (9, 6), mode=mode, reflect_type="odd"), [p1],
          params={"width": [[9, 6]], "mode": mode, "reflect_type": "odd"})
    c.add("jnp.pad", lambda x, mode=mode: jnp.pad(x, ((2, 3), (5, 1)), mode=mode, reflect_type="odd"), [p2],
          params={"width": [[2, 3], [5, 1]], "mode": mode, "reflect_type": "odd"})
    c.add("jnp.pad", lambda x, mode=mode: jnp.pad(x, (4, 4), mode=mode, reflect_type="odd"), [pi],
          params={"width": [[4, 4]], "mode": mode, "reflect_type": "odd"})
    c.add("jnp.pad", lambda x, mode=mode: jnp.pad(x, (3, 2), mode=mode), [np.array([2.5])],
          params={"width": [[3, 2]], "mode": mode})
for mode in ("maximum", "mean", "median", "minimum"):
    c.add("jnp.pad", lambda x, mode=mode: jnp.pad(x, ((2, 1), (1, 3)), mode=mode, stat_length=2), [p2],
          params={"width": [[2, 1], [1, 3]], "mode": mode, "stat_length": 2})
c.add("jnp.pad", lambda x: jnp.pad(x, (3, 2), mode="linear_ramp"), [p1],
      params={"width": [[3, 2]], "mode": "linear_ramp"})
c.add("jnp.pad", lambda x: jnp.pad(x, ((2, 1), (1, 3)), mode="linear_ramp", end_values=((1.0, -1.0), (5.0, 2.0))), [p2],
      params={"width": [[2, 1], [1, 3]], "mode": "linear_ramp", "end_values": [[1.0, -1.0], [5.0, 2.0]]})
c.add("jnp.pad", lambda x: jnp.pad(x, (4, 4), mode="linear_ramp", end_values=(20, -10)), [pi],
      params={"width": [[4, 4]], "mode": "linear_ramp", "end_values": [[20.0, -10.0]]})
c.add("jnp.pad", lambda x: jnp.pad(x, (2, 2), mode="linear_ramp", end_values=3.0), [c.normal((3,), "float32")],
      params={"width": [[2, 2]], "mode": "linear_ramp", "end_values": [[3.0, 3.0]]})

# ---- inserting, removing, selecting --------------------------------------------------------
d5 = c.normal((5, 3), "float64")
c.add("jnp.delete", lambda x: jnp.delete(x, 1, axis=0), [d5], params={"obj": [1], "axis": 0})
c.add("jnp.delete", lambda x: jnp.delete(x, np.array([0, 2]), axis=1), [d5], params={"obj": [0, 2], "axis": 1})
c.add("jnp.delete", lambda x: jnp.delete(x, np.array([-1, 3])), [c.ints((2, 3), 0, 9, "int32")], params={"obj": [-1, 3]})
c.add("jnp.insert", lambda x: jnp.insert(x, 1, 5.0, axis=0), [d5], params={"obj": [1], "value": 5.0, "axis": 0})
c.add("jnp.insert", lambda x, v: jnp.insert(x, 2, v, axis=1), [d5, c.normal((5,), "float64")],
      params={"obj": [2], "axis": 1})
c.add("jnp.insert", lambda x, v: jnp.insert(x, np.array([0, 2, 2]), v), [c.normal((4,), "float64"), c.normal((3,), "float64")],
      params={"obj": [0, 2, 2]})
c.add("jnp.insert", lambda x: jnp.insert(x, np.array([3, 0]), 9, axis=1), [c.ints((2, 3), 0, 5, "int32")],
      params={"obj": [3, 0], "value": 9.0, "axis": 1})
tz = np.array([0.0, 0.0, 1.5, 0.0, 2.0, 0.0], dtype=np.float64)
c.add("jnp.trim_zeros", lambda x: jnp.trim_zeros(x), [tz], params={"trim": "fb"}, jit=False, grad=False)
c.add("jnp.trim_zeros", lambda x: jnp.trim_zeros(x, "f"), [tz], params={"trim": "f"}, jit=False, grad=False)
c.add("jnp.trim_zeros", lambda x: jnp.trim_zeros(x, "b"), [np.array([0, 3, 0, 0], dtype=np.int32)], params={"trim": "b"}, jit=False)
cond = np.array([True, False, True, True])
c.add("jnp.compress", lambda x: jnp.compress(cond, x, axis=0), [c.normal((4, 2), "float64")],
      params={"cond": [1, 0, 1, 1], "axis": 0})
c.add("jnp.compress", lambda x: jnp.compress(cond[:3], x, axis=1), [c.normal((2, 3), "float64")],
      params={"cond": [1, 0, 1], "axis": 1})
c.add("jnp.compress", lambda x: jnp.compress(cond, x), [c.ints((2, 3), 0, 9, "int32")], params={"cond": [1, 0, 1, 1]})
em = np.array([[True, False, True], [False, True, True]])
c.add("jnp.extract", lambda x: jnp.extract(em, x), [c.normal((2, 3), "float64")], params={"cond": [1, 0, 1, 0, 1, 1], "shape": [2, 3]})
wc = c.bools((2, 3))
c.add("jnp.where", lambda m, x, y: jnp.where(m, x, y), [wc, c.normal((2, 3), "float64"), c.normal((3,), "float64")])
c.add("jnp.where", lambda m, x: jnp.where(m, x, 0), [wc, c.ints((2, 3), -9, 9, "int32")])
ch = c.ints((2, 3), 0, 3, "int32")
c.add("jnp.choose", lambda i, a, b, d: jnp.choose(i, [a, b, d], mode="clip"),
      [ch, c.normal((2, 3), "float64"), c.normal((3,), "float64"), c.normal((2, 3), "float64")],
      params={"mode": "clip"}, vmap_axes=[None, 0, 0, 0])
c.add("jnp.choose", lambda i, a, b: jnp.choose(i, [a, b], mode="wrap"),
      [c.ints((4,), -3, 5, "int32"), c.ints((4,), 0, 9, "int32"), c.ints((4,), 10, 19, "int32")],
      params={"mode": "wrap"})
c.add("jnp.choose", lambda i, a, b: jnp.choose(i, [a, b], mode="clip"),
      [c.ints((4,), -3, 5, "int32"), c.normal((4,), "float32"), c.normal((4,), "float32")], params={"mode": "clip"})
s1 = c.normal((2, 3), "float64")
c.add("jnp.select", lambda x, y, z: jnp.select([x > 0.5, x < -0.5], [y, z], -1.0),
      [s1, c.normal((2, 3), "float64"), c.normal((2, 3), "float64")], params={"default": -1.0})
c.add("jnp.select", lambda x, y: jnp.select([x > 0, x < -1], [y, y * 2], 0),
      [c.ints((5,), -3, 3, "int32"), c.ints((5,), 0, 9, "int32")], params={"default": 0})
mi = [c.ints((4,), 0, 3, "int32"), c.ints((4,), 0, 4, "int32")]
c.add("jnp.ravel_multi_index", lambda i, j: jnp.ravel_multi_index((i, j), (3, 4)), mi,
      params={"dims": [3, 4], "mode": "raise"}, jit=False)
c.add("jnp.ravel_multi_index", lambda i, j: jnp.ravel_multi_index((i, j), (2, 3), mode="clip"),
      [c.ints((5,), -2, 5, "int32"), c.ints((5,), -2, 6, "int32")], params={"dims": [2, 3], "mode": "clip"})
c.add("jnp.ravel_multi_index", lambda i, j: jnp.ravel_multi_index((i, j), (2, 3), mode="wrap"),
      [c.ints((5,), -4, 5, "int64"), c.ints((5,), -7, 6, "int64")], params={"dims": [2, 3], "mode": "wrap"})
c.add("jnp.unravel_index", lambda i: jnp.unravel_index(i, (3, 4)), [c.ints((5,), 0, 12, "int32")], params={"shape": [3, 4]})
c.add("jnp.unravel_index", lambda i: jnp.unravel_index(i, (2, 3, 2)), [c.ints((2, 2), -14, 14, "int64")],
      params={"shape": [2, 3, 2]})

# ---- take and take_along_axis (mode and fill_value) ------------------------------------------
t23 = c.normal((2, 3), "float32")
c.add("jnp.take", lambda x, i: jnp.take(x, i, axis=1), [t23, c.ints((2, 2), -3, 3, "int32")],
      params={"axis": 1})
c.add("jnp.take", lambda x, i: jnp.take(x, i), [t23, c.ints((4,), -6, 6, "int32")], params={"axis": None})
c.add("jnp.take", lambda x, i: jnp.take(x, i, axis=0), [c.normal((3, 2), "float64"), c.ints((4,), -5, 5, "int64")],
      params={"axis": 0})
c.add("jnp.take", lambda x, i: jnp.take(x, i, axis=0, fill_value=-2.5),
      [c.normal((3, 2), "float64"), c.ints((4,), -5, 5, "int64")], params={"axis": 0, "fill_value": -2.5})
for mode in ("clip", "wrap"):
    c.add("jnp.take", lambda x, i, mode=mode: jnp.take(x, i, axis=-1, mode=mode),
          [t23, c.ints((5,), -7, 7, "int32")], params={"axis": -1, "mode": mode})
c.add("jnp.take", lambda x, i: jnp.take(x, i, axis=0), [c.ints((4,), -9, 9, "int32"), c.ints((3,), -6, 6, "int32")],
      params={"axis": 0})
c.add("jnp.take", lambda x, i: jnp.take(x, i, axis=0, fill_value=7),
      [c.ints((4,), -9, 9, "int32"), c.ints((3,), -6, 6, "int32")], params={"axis": 0, "fill_value": 7.0})
ta = c.normal((3, 4), "float32")
c.add("jnp.take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1),
      [ta, c.ints((3, 2), -4, 4, "int32")], params={"axis": 1})
c.add("jnp.take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=0),
      [ta, c.ints((1, 4), -5, 5, "int32")], params={"axis": 0})
c.add("jnp.take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=None),
      [ta, c.ints((5,), -12, 12, "int64")], params={"axis": None})
c.add("jnp.take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1, mode="clip"),
      [ta, c.ints((3, 3), -9, 9, "int32")], params={"axis": 1, "mode": "clip"})
c.add("jnp.take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=-1, fill_value=0.5),
      [c.normal((2, 3), "float64"), c.ints((2, 4), -5, 5, "int32")], params={"axis": -1, "fill_value": 0.5})

# One numerical check per name: check_grads compiles several programs per case, and the other
# cases of a name are still checked against JAX's own JVP and VJP.
_checked = set()
for case in c.cases:
    if case.pop("check_grads", False) and case["op"] not in _checked:
        _checked.add(case["op"])
        case["check_grads"] = True

c.save()
