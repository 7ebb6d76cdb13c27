"""Writes lax_shape.json: jax.lax's shape functions on fixed inputs (see jaxcases.py for the
case format). Run with /work/venv/bin/python."""

import numpy as np
from jax import lax
import jax.numpy as jnp

from jaxcases import Cases

c = Cases("lax_shape")

x23 = c.normal((2, 3), "float64")
x234 = c.normal((2, 3, 4), "float32")
v3 = c.normal((3,), "float64")
i34 = c.ints((3, 4), -9, 9, "int32")

c.add("lax.broadcast", lambda x: lax.broadcast(x, (2, 1)), [v3], params={"sizes": [2, 1]})
c.add("lax.broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)), [v3],
      params={"shape": [2, 3, 4], "dims": [1]})
c.add("lax.broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 5, 3), (0, 2)), [c.normal((2, 1), "float64")],
      params={"shape": [2, 5, 3], "dims": [0, 2]})
c.add("lax.broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (4, 3, 4), (1, 2)), [i34],
      params={"shape": [4, 3, 4], "dims": [1, 2]})
c.add("lax.broadcast_like", lambda x, y: lax.broadcast_like(x, y), [v3, c.normal((2, 3), "float64")],
      wrt=[0])
c.add("lax.broadcast_like", lambda x, y: lax.broadcast_like(x, y), [c.ints((1, 4), 0, 9, "int32"), i34])
for shape in ((2, 3), (), (7,)):
    c.add("lax.shape_as_value", lambda: lax.shape_as_value(shape), [], params={"shape": list(shape)},
          grad=False, vmap=False)
# lax.dtype: the case's output is a zero of the dtype JAX names.
for x in (1.5, 3, True, i34, c.normal((2,), "float16")):
    c.add("lax.dtype", lambda x: jnp.zeros((), lax.dtype(x)), [x], grad=False, vmap=False)
c.add("lax.broadcast_to_rank", lambda x: lax.broadcast_to_rank(x, 4), [x23], params={"rank": 4})
c.add("lax.broadcast_shapes", lambda: np.asarray(lax.broadcast_shapes((2, 1), (1, 3)), dtype=np.int64), [],
      params={"shapes": [[2, 1], [1, 3]]}, grad=False, vmap=False)
c.add("lax.broadcasted_iota", lambda: lax.broadcasted_iota("int32", (2, 3), 1), [],
      params={"dtype": "int32", "shape": [2, 3], "dim": 1}, grad=False, vmap=False)
c.add("lax.broadcasted_iota", lambda: lax.broadcasted_iota("float32", (3, 2), 0), [],
      params={"dtype": "float32", "shape": [3, 2], "dim": 0}, grad=False, vmap=False)
c.add("lax.iota", lambda: lax.iota("int64", 5), [], params={"dtype": "int64", "size": 5}, grad=False, vmap=False)
c.add("lax.collapse", lambda x: lax.collapse(x, 1), [x234], params={"start": 1})
c.add("lax.collapse", lambda x: lax.collapse(x, 0, 2), [c.normal((2, 3, 2), "float64")], params={"start": 0, "stop": 2})
c.add("lax.concatenate", lambda a, b: lax.concatenate([a, b], 1), [x23, c.normal((2, 2), "float64")],
      params={"dim": 1})
c.add("lax.concatenate", lambda a, b: lax.concatenate([a, b], 0), [i34, c.ints((1, 4), 0, 9, "int32")],
      params={"dim": 0})
c.add("lax.stack", lambda a, b: lax.stack([a, b], 1), [x23, c.normal((2, 3), "float64")], params={"axis": 1})
c.add("lax.unstack", lambda x: lax.unstack(x, 1), [x23], params={"axis": 1})
c.add("lax.split", lambda x: lax.split(x, (1, 3, 0), axis=2), [x234], params={"sizes": [1, 3, 0], "axis": 2})
c.add("lax.split", lambda x: lax.split(x, (2, 1)), [c.normal((3, 2), "float64")], params={"sizes": [2, 1], "axis": 0})

for cfg in ([(1, 2, 0)], [(0, 0, 2)], [(-1, 2, 1)], [(2, -3, 3)]):
    c.add("lax.pad", lambda x, cfg=cfg: lax.pad(x, np.float64(0.5), cfg), [c.normal((4,), "float64")],
          params={"config": cfg, "value": 0.5})
c.add("lax.pad", lambda x, v: lax.pad(x, v, [(1, -1, 1), (-2, 0, 2)]),
      [c.normal((3, 4), "float64"), np.asarray(1.5, dtype=np.float64)], params={"config": [(1, -1, 1), (-2, 0, 2)]},
      vmap_axes=[0, 0])
c.add("lax.pad", lambda x, v: lax.pad(x, v, [(0, 1, 1), (2, 0, 0)]),
      [c.normal((2, 3), "float32"), np.asarray(-1.0, dtype=np.float32)], params={"config": [(0, 1, 1), (2, 0, 0)]},
      vmap_axes=[0, None])
c.add("lax.pad", lambda x: lax.pad(x, np.int32(7), [(1, 1, 1), (0, -2, 1)]), [i34],
      params={"config": [(1, 1, 1), (0, -2, 1)], "value_int": 7})

c.add("lax.reshape", lambda x: lax.reshape(x, (4, 6)), [x234], params={"shape": [4, 6]})
c.add("lax.reshape", lambda x: lax.reshape(x, (6, 4), (2, 0, 1)), [x234], params={"shape": [6, 4], "dims": [2, 0, 1]})
c.add("lax.reshape", lambda x: lax.reshape(x, (3, 2), (1, 0)), [x23], params={"shape": [3, 2], "dims": [1, 0]})
c.add("lax.rev", lambda x: lax.rev(x, (0, 2)), [x234], params={"dims": [0, 2]})
c.add("lax.rev", lambda x: lax.rev(x, (1,)), [i34], params={"dims": [1]})
c.add("lax.slice", lambda x: lax.slice(x, (0, 1, 1), (2, 3, 4)), [x234],
      params={"start": [0, 1, 1], "limit": [2, 3, 4]})
c.add("lax.slice", lambda x: lax.slice(x, (0, 1), (3, 4), (2, 2)), [c.normal((3, 4), "float64")],
      params={"start": [0, 1], "limit": [3, 4], "strides": [2, 2]})
c.add("lax.slice_in_dim", lambda x: lax.slice_in_dim(x, 1, None, 2, axis=1), [c.normal((2, 5), "float64")],
      params={"start": 1, "stride": 2, "axis": 1})
c.add("lax.slice_in_dim", lambda x: lax.slice_in_dim(x, -3, -1), [c.normal((4, 2), "float64")],
      params={"start": -3, "limit": -1, "stride": 1, "axis": 0})
c.add("lax.index_in_dim", lambda x: lax.index_in_dim(x, -1, 1), [x23], params={"index": -1, "axis": 1, "keepdims": True})
c.add("lax.index_in_dim", lambda x: lax.index_in_dim(x, 1, 0, keepdims=False), [i34],
      params={"index": 1, "axis": 0, "keepdims": False})

idx = lambda v: np.asarray(v, dtype=np.int32)  # noqa: E731
c.add("lax.dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)),
      [c.normal((4, 5), "float64"), idx(1), idx(2)], params={"sizes": [2, 2]}, vmap_axes=[0, 0, 0],
      batch=[c.normal((3, 4, 5), "float64"), idx([0, 3, 1]), idx([4, -1, 2])])
c.add("lax.dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (3, 1)),
      [c.ints((3, 4), 0, 9, "int32"), idx(-1), idx(7)], params={"sizes": [3, 1]}, vmap_axes=[None, 0, 0],
      batch=[c.ints((3, 4), 0, 9, "int32"), idx([0, 1, -2]), idx([3, 0, 2])])
c.add("lax.dynamic_slice_in_dim", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1),
      [c.normal((3, 4), "float64"), idx(1)], params={"size": 2, "axis": 1}, vmap_axes=[0, 0],
      batch=[c.normal((3, 3, 4), "float64"), idx([0, 2, 3])])
c.add("lax.dynamic_slice_in_dim", lambda x: lax.dynamic_slice_in_dim(x, 2, 2), [c.normal((5,), "float32")],
      params={"start": 2, "size": 2, "axis": 0})
c.add("lax.dynamic_index_in_dim", lambda x, i: lax.dynamic_index_in_dim(x, i, 0, keepdims=False),
      [c.normal((4, 3), "float64"), idx(2)], params={"axis": 0, "keepdims": False}, vmap_axes=[0, 0],
      batch=[c.normal((3, 4, 3), "float64"), idx([0, 3, -1])])
c.add("lax.dynamic_index_in_dim", lambda x: lax.dynamic_index_in_dim(x, 1, 1), [x23],
      params={"index": 1, "axis": 1, "keepdims": True})
c.add("lax.dynamic_update_slice", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
      [c.normal((4, 5), "float64"), c.normal((2, 3), "float64"), idx(1), idx(3)], params={},
      vmap_axes=[0, 0, 0, 0],
      batch=[c.normal((3, 4, 5), "float64"), c.normal((3, 2, 3), "float64"), idx([0, 3, 1]), idx([4, -1, 0])])
c.add("lax.dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
      [c.ints((6,), 0, 9, "int32"), c.ints((2,), 10, 19, "int32"), idx(4)], params={})
c.add("lax.dynamic_update_slice_in_dim", lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, 1),
      [c.normal((3, 5), "float64"), c.normal((3, 2), "float64"), idx(2)], params={"axis": 1},
      vmap_axes=[0, 0, 0], batch=[c.normal((3, 3, 5), "float64"), c.normal((3, 3, 2), "float64"), idx([0, 4, 2])])
c.add("lax.dynamic_update_index_in_dim", lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, 0),
      [c.normal((4, 3), "float64"), c.normal((3,), "float64"), idx(1)], params={"axis": 0},
      vmap_axes=[0, 0, 0], batch=[c.normal((3, 4, 3), "float64"), c.normal((3, 3), "float64"), idx([0, 3, 2])])
c.add("lax.dynamic_update_index_in_dim", lambda x, u: lax.dynamic_update_index_in_dim(x, u, 2, 1),
      [c.normal((2, 4), "float32"), c.normal((2, 1), "float32")], params={"index": 2, "axis": 1})

c.add("lax.expand_dims", lambda x: lax.expand_dims(x, (0, 2)), [x23], params={"dims": [0, 2]})
c.add("lax.squeeze", lambda x: lax.squeeze(x, (0, 2)), [c.normal((1, 3, 1), "float64")], params={"dims": [0, 2]})
c.add("lax.transpose", lambda x: lax.transpose(x, (2, 0, 1)), [x234], params={"perm": [2, 0, 1]})
c.add("lax.transpose", lambda x: lax.transpose(x, (1, 0)), [i34], params={"perm": [1, 0]})
c.add("lax.tile", lambda x: lax.tile(x, (2, 3)), [x23], params={"reps": [2, 3]})
c.add("lax.full", lambda: lax.full((2, 3), 1.5), [], params={"shape": [2, 3], "fill": 1.5}, grad=False, vmap=False)
c.add("lax.full", lambda: lax.full((3,), 4, "int32"), [], params={"shape": [3], "fill_int": 4, "dtype": "int32"},
      grad=False, vmap=False)
c.add("lax.full_like", lambda x: lax.full_like(x, 2), [x23], params={"fill": 2.0}, grad=False)
c.add("lax.full_like", lambda x: lax.full_like(x, 2, "int32", (4,)), [x23],
      params={"fill": 2.0, "dtype": "int32", "shape": [4]}, grad=False)
c.add("lax.empty", lambda: lax.full((2, 2), 0, "float32"), [], params={"shape": [2, 2], "dtype": "float32"},
      grad=False, vmap=False)
c.add("lax.index_take", lambda x, i, j: lax.index_take(x, (i, j), (0, 2)),
      [x234, np.array([0, 1, 1, -1], dtype=np.int32), np.array([1, 3, 5, 2], dtype=np.int32)],
      params={"axes": [0, 2]}, vmap_axes=[0, None, None])
c.add("lax.index_take", lambda x, i: lax.index_take(x, (i,), (1,)),
      [c.normal((2, 4), "float64"), np.array([3, 0, -3], dtype=np.int64)], params={"axes": [1]},
      vmap_axes=[0, None])
for pad in ("SAME", "VALID", "SAME_LOWER"):
    c.add("lax.padtype_to_pads",
          lambda pad=pad: np.asarray(lax.padtype_to_pads((7, 6), (3, 2), (2, 4), pad), dtype=np.int64), [],
          params={"in": [7, 6], "window": [3, 2], "strides": [2, 4], "padding": pad}, grad=False, vmap=False)

# One numerical check per name: check_grads compiles several programs per case, and the other
# cases of a name are still checked against JAX's own JVP and VJP.
_checked = set()
for case in c.cases:
    if case.pop("check_grads", False) and case["op"] not in _checked:
        _checked.add(case["op"])
        case["check_grads"] = True

c.save()
