#!/usr/bin/env python3
"""Goldens for `jaxrs::jacfwd`, `jacrev` and `hessian` (`tests/jacobian.rs`):
`python tests/golden/gen_jacobian.py` rewrites `tests/golden/jacobian.json`. Each case is a
Jacobian or Hessian of one of the named functions below (the Rust test writes the same
ones), with JAX's JVP and VJP of it (derivatives one order higher) and its vmap."""

import numpy as np

import jax
from jaxcases import Cases, jnp

c = Cases("jacobian")
M = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])

FUNCTIONS = {
    # vector -> vector
    "sin_times_sum": lambda x: jnp.sin(x) * jnp.sum(x),
    # vector -> vector of another length, through a matrix product
    "tanh_matvec": lambda x: jnp.tanh(jnp.asarray(M, x.dtype) @ x),
    # vector -> scalar
    "cubic_sum": lambda x: jnp.sum(x ** 3) + jnp.prod(x),
    # matrix -> matrix
    "matrix_square": lambda x: x @ x,
    # matrix -> scalar
    "logdet_like": lambda x: jnp.sum(jnp.log1p(x * x)) * jnp.trace(x),
}
SHAPES = {"sin_times_sum": (4,), "tanh_matvec": (3,), "cubic_sum": (3,),
          "matrix_square": (2, 2), "logdet_like": (2, 2)}

for name, f in FUNCTIONS.items():
    for dt in ("float32", "float64"):
        x = c.normal(SHAPES[name], dt)
        for t in ("jacfwd", "jacrev", "hessian"):
            c.add(f"jax.{t}", getattr(jax, t)(f), [x], params={"fn": name},
                  name=f"jax.{t}/{name}/{dt}")
c.save()
