#!/usr/bin/env python3
"""Goldens for `jaxrs::numpy`'s elementwise functions (`tests/jnp_math.rs`):
`python tests/golden/gen_jnp_math.py` rewrites `tests/golden/jnp_math.json`. See jaxcases.py
for the format and what each case checks."""

from jaxcases import Cases, jnp

c = Cases("jnp_math")
for dt in ("float32", "float64"):
    c.add("jnp.sqrt", jnp.sqrt, [c.uniform((3, 4), 0.1, 4.0, dt)])
c.add("jnp.sqrt", jnp.sqrt, [c.uniform((), 0.1, 4.0, "float32")])
c.add("jnp.sqrt", jnp.sqrt, [c.ints((5,), 0, 9, "int32")])
c.save()
