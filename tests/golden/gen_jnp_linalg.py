"""Writes jnp_linalg.json: jax.numpy.linalg's norms and array-API products on fixed inputs
(see jaxcases.py for the case format). Run with /work/venv/bin/python.

`ord` travels as a number, "inf"/"-inf", or a name ("fro"); `axis` as an int, a list, or
absent (None)."""

import numpy as np
import jax.numpy as jnp

from jaxcases import Cases

c = Cases("jnp_linalg")
L = jnp.linalg


def ord_param(o):
    if o is None:
        return None
    if o == np.inf:
        return "inf"
    if o == -np.inf:
        return "-inf"
    return o


def add_norm(x, ord=None, axis=None, keepdims=False, **kw):
    p = {"keepdims": keepdims}
    if ord is not None:
        p["ord"] = ord_param(ord)
    if axis is not None:
        p["axis"] = list(axis) if isinstance(axis, tuple) else axis
    c.add("jnp.linalg.norm", lambda x: L.norm(x, ord=ord, axis=axis, keepdims=keepdims), [x],
          params=p, **kw)


v = c.normal((5,), "float64")
m = c.normal((3, 4), "float64")
t = c.normal((2, 3, 4), "float32")
add_norm(v)
add_norm(m)
add_norm(t, keepdims=True)
for o in (None, 1, 2, 3.5, 0.5, np.inf, -np.inf, 0):
    # ord 0 counts non-zeros: piecewise constant, no gradient worth checking.
    add_norm(v, ord=o, axis=0, grad=False if o == 0 else None)
for o in (1, np.inf, -np.inf, -1):
    add_norm(m, ord=o)
add_norm(m, ord="fro")
for o in (None, "fro", 1, -1, np.inf, -np.inf):
    add_norm(t, ord=o, axis=(2, 0))
    add_norm(t, ord=o, axis=(0, 2), keepdims=True)
add_norm(t, ord=1, axis=-1)
add_norm(t, ord=3, axis=1, keepdims=True)
add_norm(c.ints((3, 4), -5, 5, "int32"), grad=False)
add_norm(c.ints((4,), -5, 5, "int64"), ord=1, axis=0, grad=False)


def add_vnorm(x, ord=None, axis=None, keepdims=False):
    p = {"keepdims": keepdims}
    if ord is not None:
        p["ord"] = ord_param(ord)
    if axis is not None:
        p["axis"] = list(axis) if isinstance(axis, tuple) else axis
    c.add("jnp.linalg.vector_norm", lambda x: L.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord if ord is not None else 2),
          [x], params=p)


add_vnorm(t)
add_vnorm(t, ord=1, axis=(0, 2))
add_vnorm(t, ord=np.inf, axis=1, keepdims=True)
add_vnorm(m, ord=2.5, axis=-1)


def add_mnorm(x, ord="fro", keepdims=False):
    c.add("jnp.linalg.matrix_norm", lambda x: L.matrix_norm(x, keepdims=keepdims, ord=ord), [x],
          params={"keepdims": keepdims, "ord": ord_param(ord)})


for o in ("fro", 1, -1, np.inf, -np.inf):
    add_mnorm(t, o)
add_mnorm(m, 1, keepdims=True)

a34, b45 = c.normal((3, 4), "float64"), c.normal((4, 5), "float64")
c.add("jnp.linalg.matmul", L.matmul, [a34, b45])
c.add("jnp.linalg.matmul", L.matmul, [c.normal((2, 3, 4), "float32"), c.normal((4,), "float32")])
c.add("jnp.linalg.matrix_transpose", L.matrix_transpose, [t])
c.add("jnp.linalg.diagonal", lambda x: L.diagonal(x, offset=1), [t], params={"offset": 1})
c.add("jnp.linalg.diagonal", lambda x: L.diagonal(x), [m], params={"offset": 0})
c.add("jnp.linalg.trace", lambda x: L.trace(x, offset=-1), [t], params={"offset": -1})
c.add("jnp.linalg.trace", lambda x: L.trace(x), [c.normal((4, 4), "float64")], params={"offset": 0})
c.add("jnp.linalg.outer", L.outer, [c.normal((3,), "float64"), c.normal((4,), "float64")])
c.add("jnp.linalg.vecdot", lambda x, y: L.vecdot(x, y, axis=0), [c.normal((3, 2), "float64"), c.normal((3, 2), "float64")],
      params={"axis": 0})
c.add("jnp.linalg.vecdot", lambda x, y: L.vecdot(x, y), [c.normal((2, 3), "float32"), c.normal((3,), "float32")],
      params={"axis": -1})
c.add("jnp.linalg.tensordot", lambda x, y: L.tensordot(x, y, axes=2), [t, c.normal((3, 4, 2), "float32")])
c.add("jnp.linalg.cross", lambda x, y: L.cross(x, y), [c.normal((2, 3), "float64"), c.normal((2, 3), "float64")],
      params={"axis": -1})
c.add("jnp.linalg.cross", lambda x, y: L.cross(x, y, axis=0), [c.normal((3, 2), "float64"), c.normal((3, 2), "float64")],
      params={"axis": 0})
c.add("jnp.linalg.multi_dot", lambda a, b, x: L.multi_dot([a, b, x]),
      [c.normal((2, 3), "float64"), c.normal((3, 4), "float64"), c.normal((4,), "float64")])
c.add("jnp.linalg.multi_dot", lambda a, b: L.multi_dot([a, b]),
      [c.normal((3,), "float64"), c.normal((3, 2), "float64")])
sq = c.normal((3, 3), "float64", scale=0.6)
for n in (0, 1, 2, 5):
    c.add("jnp.linalg.matrix_power", lambda x, n=n: L.matrix_power(x, n), [sq], params={"n": n})
c.add("jnp.linalg.matrix_power", lambda x: L.matrix_power(x, 3), [c.normal((2, 2, 2), "float32", scale=0.6)],
      params={"n": 3})
c.save()
