#!/usr/bin/env python3
"""Goldens for `jaxrs::lax`'s reductions, cumulative reductions and sorts
(`tests/lax_reductions.rs`): `python tests/golden/gen_lax_reductions.py` rewrites
`tests/golden/lax_reductions.json`. See jaxcases.py for the format and what each case checks."""

import numpy as np
from jaxcases import Cases
import jax.numpy as jnp
from jax import lax

c = Cases("lax_reductions")

x34 = c.normal((3, 4), "float64")
x234 = c.normal((2, 3, 4), "float32")
for name, f in [("reduce_sum", lax.reduce_sum), ("reduce_prod", lax.reduce_prod),
                ("reduce_max", lax.reduce_max), ("reduce_min", lax.reduce_min)]:
    c.add(f"lax.{name}", lambda x, f=f: f(x, (1,)), [x34], params={"axes": [1]})
    c.add(f"lax.{name}", lambda x, f=f: f(x, (0, 2)), [x234], params={"axes": [0, 2]})
    c.add(f"lax.{name}", lambda x, f=f: f(x, (0,)), [c.ints((4, 3), -5, 6, "int32")], params={"axes": [0]})
for name, f in [("reduce_and", lax.reduce_and), ("reduce_or", lax.reduce_or), ("reduce_xor", lax.reduce_xor)]:
    c.add(f"lax.{name}", lambda x, f=f: f(x, (1,)), [c.bools((3, 5))], params={"axes": [1]})
    c.add(f"lax.{name}", lambda x, f=f: f(x, (0,)), [c.ints((4, 3), 0, 256, "uint8")], params={"axes": [0]})
    c.add(f"lax.{name}", lambda x, f=f: f(x, (0, 1)), [c.ints((2, 3), -99, 99, "int32")], params={"axes": [0, 1]})
for name, f in [("argmax", lax.argmax), ("argmin", lax.argmin)]:
    c.add(f"lax.{name}", lambda x, f=f: f(x, 1, jnp.int32), [x34], params={"axis": 1, "index_dtype": "int32"})
    c.add(f"lax.{name}", lambda x, f=f: f(x, 0, jnp.int64), [x234], params={"axis": 0, "index_dtype": "int64"})
    c.add(f"lax.{name}", lambda x, f=f: f(x, 0, jnp.uint8), [c.ints((5, 2), 0, 4, "int32")],
          params={"axis": 0, "index_dtype": "uint8"})

for name, f in [("cumsum", lax.cumsum), ("cumprod", lax.cumprod), ("cummax", lax.cummax),
                ("cummin", lax.cummin), ("cumlogsumexp", lax.cumlogsumexp)]:
    for rev in (False, True):
        c.add(f"lax.{name}", lambda x, f=f, r=rev: f(x, axis=1, reverse=r), [x34],
              params={"axis": 1, "reverse": rev})
    c.add(f"lax.{name}", lambda x, f=f: f(x, axis=0), [x234], params={"axis": 0, "reverse": False})
    if name != "cumlogsumexp":
        c.add(f"lax.{name}", lambda x, f=f: f(x, axis=0, reverse=True), [c.ints((4, 3), -4, 5, "int32")],
              params={"axis": 0, "reverse": True})
z = c.normal((2, 5), "float64")
z[0, 1] = 0.0
z[1, 3] = 0.0
for rev in (False, True):
    c.add("lax.cumprod", lambda x, r=rev: lax.cumprod(x, axis=1, reverse=r), [z],
          params={"axis": 1, "reverse": rev})

xs = c.normal((3, 5), "float32")
xs[0, 1] = np.nan
c.add("lax.sort", lambda x: lax.sort(x), [xs], params={"dimension": -1, "num_keys": 1})
c.add("lax.sort", lambda x: lax.sort(x, dimension=0), [x34], params={"dimension": 0, "num_keys": 1})
k1 = c.ints((3, 6), 0, 2, "int32")
k2 = c.normal((3, 6), "float64")
vals = c.normal((3, 6), "float32")
c.add("lax.sort", lambda a, b, v: lax.sort((a, b, v), num_keys=2), [k1, k2, vals],
      params={"dimension": -1, "num_keys": 2})
c.add("lax.sort", lambda a, b: lax.sort((a, b), dimension=0, num_keys=1), [c.ints((5, 2), 0, 3, "int32"), c.normal((5, 2), "float64")],
      params={"dimension": 0, "num_keys": 1})
c.add("lax.sort_key_val", lambda k, v: lax.sort_key_val(k, v), [x34, c.normal((3, 4), "float64")],
      params={"dimension": -1})
c.add("lax.sort_key_val", lambda k, v: lax.sort_key_val(k, v, dimension=0), [c.ints((4, 3), 0, 3, "int32"),
      c.ints((4, 3), 0, 99, "int32")], params={"dimension": 0})
xt = c.normal((4, 6), "float64")
c.add("lax.top_k", lambda x: lax.top_k(x, 3), [xt], params={"k": 3, "axis": -1})
c.add("lax.top_k", lambda x: lax.top_k(x, 2, axis=0), [xt], params={"k": 2, "axis": 0})
c.add("lax.top_k", lambda x: lax.top_k(x, 4, axis=1), [c.ints((2, 5, 3), 0, 4, "int32")], params={"k": 4, "axis": 1})
c.add("lax.approx_max_k", lambda x: lax.approx_max_k(x, 2), [xt], params={"k": 2, "reduction_dimension": -1})
c.add("lax.approx_max_k", lambda x: lax.approx_max_k(x, 3, reduction_dimension=0), [xt],
      params={"k": 3, "reduction_dimension": 0})
c.add("lax.approx_min_k", lambda x: lax.approx_min_k(x, 2), [xt], params={"k": 2, "reduction_dimension": -1})
c.add("lax.approx_min_k", lambda x: lax.approx_min_k(x, 1, reduction_dimension=0),
      [c.normal((4, 3), "float32")], params={"k": 1, "reduction_dimension": 0})

# lax.reduce with a computation JAX recognises (add, max, min, mul: its monoid reductions)
# and generic ones (logaddexp, and a two-operand argmax), as JAX's generic reduce_p computes.
import numpy as np  # noqa: E402

COMPUTATIONS = {"add": (lax.add, 0.0), "max": (lax.max, -np.inf), "min": (lax.min, np.inf),
                "mul": (lax.mul, 1.0), "logaddexp": (jnp.logaddexp, -np.inf)}
xr = c.normal((3, 5, 2), "float64")
for name, (fn, init) in COMPUTATIONS.items():
    for dims in ((1,), (0, 2), (0, 1, 2)):
        c.add("lax.reduce", lambda x, fn=fn, init=init, dims=dims: lax.reduce(x, np.float64(init), fn, dims),
              [xr], params={"computation": name, "dimensions": list(dims)})
c.add("lax.reduce", lambda x: lax.reduce(x, np.float32(0), lax.add, (0,)), [c.normal((7, 3), "float32")],
      params={"computation": "add", "dimensions": [0]})
c.add("lax.reduce", lambda x: lax.reduce(x, np.int32(0), lax.add, (1,)), [c.ints((2, 6), -9, 9, "int32")],
      params={"computation": "add", "dimensions": [1]})
c.add("lax.reduce", lambda x: lax.reduce(x, np.float64(0), lax.add, (1,)), [c.normal((2, 0), "float64")],
      params={"computation": "add", "dimensions": [1]})


def _argmax(x):
    idx = lax.broadcasted_iota(np.int32, x.shape, 1)

    def comp(a, b):
        take_a = a[0] >= b[0]
        return (lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1]))

    return lax.reduce((x, idx), (np.float64(-np.inf), np.int32(0)), comp, (1,))


c.add("lax.reduce", _argmax, [c.normal((3, 6), "float64")], params={"computation": "argmax", "dimensions": [1]})
c.save()
