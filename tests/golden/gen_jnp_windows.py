"""Writes jnp_windows.json: jnp's window functions and jnp.i0 (see jaxcases.py for the case
format). Run with /work/venv/bin/python."""

import numpy as np
import jax.numpy as jnp

from jaxcases import Cases

c = Cases("jnp_windows")
for name in ("bartlett", "blackman", "hamming", "hanning"):
    f = getattr(jnp, name)
    for m in (0, 1, 2, 7, 10):
        c.add(f"jnp.{name}", lambda m=m, f=f: f(m), [], params={"m": m}, vmap=False)
for m, beta in ((0, 1.0), (1, 3.0), (6, 0.0), (7, 2.5), (12, 8.6)):
    c.add("jnp.kaiser", lambda m=m, beta=beta: jnp.kaiser(m, beta), [], params={"m": m, "beta": beta},
          vmap=False)
x = c.normal((6,), "float64") * 3
x[2] = 0.0
c.add("jnp.i0", jnp.i0, [x])
c.add("jnp.i0", jnp.i0, [c.normal((2, 3), "float32") * 4])
c.add("jnp.i0", jnp.i0, [c.ints((4,), -6, 6, "int32")])
c.save()
