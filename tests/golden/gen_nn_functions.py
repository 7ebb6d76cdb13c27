#!/usr/bin/env python3
"""Goldens for `jaxrs::nn`'s jax.nn activations (`tests/nn_functions.rs`):
`python tests/golden/gen_nn_functions.py` rewrites `tests/golden/nn_functions.json`. See
jaxcases.py for the format (values eagerly and jitted, JVP/VJP, check_grads, vmap). Inputs
for derivative cases keep away from the kinks at 0 of relu-likes; an edge case with 0 checks
values only.
"""

import numpy as np

from jaxcases import Cases
import jax.nn as nn

c = Cases("nn_functions")

FNS = {
    "nn.relu": nn.relu,
    "nn.sigmoid": nn.sigmoid,
    "nn.log_sigmoid": nn.log_sigmoid,
    "nn.silu": nn.silu,
    "nn.swish": nn.swish,
    "nn.softplus": nn.softplus,
    "nn.tanh": nn.tanh,
    "nn.identity": nn.identity,
    "nn.gelu": (lambda x: nn.gelu(x, approximate=True), {"approximate": True}),
    "nn.gelu/exact": (lambda x: nn.gelu(x, approximate=False), {"approximate": False}),
    "nn.leaky_relu": (lambda x: nn.leaky_relu(x, negative_slope=0.2), {"negative_slope": 0.2}),
    "nn.elu": (lambda x: nn.elu(x, alpha=0.7), {"alpha": 0.7}),
    "nn.relu6": nn.relu6,
    "nn.hard_tanh": nn.hard_tanh,
    "nn.hard_sigmoid": nn.hard_sigmoid,
    "nn.hard_silu": nn.hard_silu,
    "nn.hard_swish": nn.hard_swish,
    "nn.soft_sign": nn.soft_sign,
    "nn.celu": (lambda x: nn.celu(x, alpha=0.7), {"alpha": 0.7}),
    "nn.selu": nn.selu,
    "nn.mish": nn.mish,
    "nn.squareplus": (lambda x: nn.squareplus(x, b=3.0), {"b": 3.0}),
    "nn.sparse_plus": nn.sparse_plus,
    "nn.sparse_sigmoid": nn.sparse_sigmoid,
}
for key, f in FNS.items():
    f, params = f if isinstance(f, tuple) else (f, {})
    op = key.split("/")[0]
    for dt in ("float32", "float64"):
        x = c.uniform((3, 4), 0.1, 3.0, dt) * np.where(c.bools((3, 4)), 1, -1).astype(dt)
        c.add(op, f, [x.astype(dt)], params=params, name=f"{key}/{dt}")
    c.add(op, f, [np.array([-2.0, -0.5, 0.0, 0.5, 2.0], np.float64)], params=params,
          grad=False, name=f"{key}/edges")

# log1mexp is defined for x > 0, on both sides of its switch at ln 2.
for dt in ("float32", "float64"):
    c.add("nn.log1mexp", nn.log1mexp, [c.uniform((3, 4), 0.05, 3.0, dt)])
# The reductions: several axes, where masks, keepdims.
for dt in ("float32", "float64"):
    x = c.normal((3, 4, 5), dt)
    keep = c.bools((3, 4, 5))
    keep[:, :, 0] = True  # every row keeps an element
    c.add("nn.glu", lambda x: nn.glu(x, axis=-1), [c.normal((3, 6), dt)], params={"axis": -1})
    c.add("nn.glu", lambda x: nn.glu(x, axis=0), [c.normal((4, 3), dt)], params={"axis": 0})
    for axes in ([-1], [0, 2], None):
        ax = tuple(axes) if axes else None
        c.add("nn.softmax", lambda x, ax=ax: nn.softmax(x, axis=ax), [x], params={"axes": axes})
        c.add("nn.log_softmax", lambda x, ax=ax: nn.log_softmax(x, axis=ax), [x],
              params={"axes": axes})
        c.add("nn.logmeanexp", lambda x, ax=ax: nn.logmeanexp(x, axis=ax), [x],
              params={"axes": axes, "keepdims": False})
        c.add("nn.standardize", lambda x, ax=ax: nn.standardize(x, axis=ax), [x],
              params={"axes": axes}, grad_tol=(1e-4, 1e-4) if dt == "float32" else None)
    c.add("nn.softmax", lambda x, w: nn.softmax(x, axis=-1, where=w), [x, keep],
          params={"axes": [-1], "where": True})
    c.add("nn.log_softmax", lambda x, w: nn.log_softmax(x, axis=(0, 2), where=w), [x, keep],
          params={"axes": [0, 2], "where": True}, grad=False)
    c.add("nn.logmeanexp", lambda x, w: nn.logmeanexp(x, axis=1, where=w, keepdims=True),
          [x, keep], params={"axes": [1], "where": True, "keepdims": True})
    c.add("nn.standardize", lambda x, w: nn.standardize(x, axis=-1, where=w), [x, keep],
          params={"axes": [-1], "where": True},
          grad_tol=(1e-4, 1e-4) if dt == "float32" else None)
    c.add("nn.logsumexp", lambda x: nn.logsumexp(x, axis=(0, 1)), [x],
          params={"axes": [0, 1]})
    b = c.normal((3, 4, 5), dt)
    c.add("nn.logsumexp", lambda x, b: nn.logsumexp(x, axis=-1, b=b, keepdims=True), [x, b],
          params={"axes": [-1], "b": True, "keepdims": True}, wrt=[0])
    c.add("logsumexp_sign", lambda x, b: nn.logsumexp(x, axis=-1, b=b, return_sign=True),
          [x, b], params={"axes": [-1]}, wrt=[0])
c.add("nn.one_hot", lambda x: nn.one_hot(x, 4), [np.array([0, 3, 1, 7, -1], np.int32)],
      params={"n": 4, "axis": -1, "dtype": "float64"})
c.add("nn.one_hot", lambda x: nn.one_hot(x, 3, dtype=np.float32, axis=0),
      [np.array([[0, 2], [1, 1]], np.int32)], params={"n": 3, "axis": 0, "dtype": "float32"})
c.save()
