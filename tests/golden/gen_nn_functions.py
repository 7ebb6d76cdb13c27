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
}
for key, f in FNS.items():
    f, params = f if isinstance(f, tuple) else (f, {})
    op = key.split("/")[0]
    for dt in ("float32", "float64"):
        x = c.uniform((3, 4), 0.1, 3.0, dt) * np.where(c.bools((3, 4)), 1, -1).astype(dt)
        c.add(op, f, [x.astype(dt)], params=params, name=f"{key}/{dt}")
    c.add(op, f, [np.array([-2.0, -0.5, 0.0, 0.5, 2.0], np.float64)], params=params,
          grad=False, name=f"{key}/edges")

c.save()
