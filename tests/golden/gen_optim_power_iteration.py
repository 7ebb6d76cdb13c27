#!/usr/bin/env python3
"""Golden values for `jaxrs::optim::power_iteration`: optax 0.2.8's `power_iteration`.

Usage (from the repository root): /work/venv/bin/python
tests/golden/gen_optim_power_iteration.py (writes tests/golden/optim_power_iteration.json).
JAX on the CPU, x64 disabled.

Cases: a symmetric 6x6 matrix with optax's default start (uniform from PRNGKey(0)), the same
with a given key, with a given v0 stopped after 3 iterations, and a callable product
(diagonal scaling) from a given v0.
"""

import json
import os
import warnings

os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import jax.numpy as jnp
import numpy as np
import optax

assert optax.__version__ == "0.2.8", optax.__version__
warnings.simplefilter("ignore", DeprecationWarning)

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 6)).astype(np.float32)
    m = (a + a.T) / 2 + 3 * np.eye(6, dtype=np.float32)
    v0 = rng.normal(size=(6,)).astype(np.float32)
    diag = np.asarray([0.5, -4.0, 2.0, 1.0, 3.5, -1.0], np.float32)
    cases = []

    def record(name, eig, vec, **extra):
        cases.append(
            {"name": name, "eig": float(eig), "vec": np.asarray(vec).tolist(), **extra}
        )

    eig, vec = optax.power_iteration(jnp.asarray(m))
    record("default", eig, vec)
    eig, vec = optax.power_iteration(jnp.asarray(m), key=jax.random.PRNGKey(7))
    record("key7", eig, vec)
    eig, vec = optax.power_iteration(jnp.asarray(m), v0=jnp.asarray(v0), num_iters=3)
    record("v0_3_iters", eig, vec)
    eig, vec = optax.power_iteration(
        lambda v: jnp.asarray(diag) * v, v0=jnp.asarray(v0), error_tolerance=1e-5
    )
    record("callable", eig, vec)
    out = {
        "matrix": m.reshape(-1).tolist(),
        "v0": v0.tolist(),
        "diag": diag.tolist(),
        "cases": cases,
    }
    with open(os.path.join(HERE, "optim_power_iteration.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
