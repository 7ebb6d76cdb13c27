#!/usr/bin/env python3
"""Golden values for `jaxrs::optim`'s gradient noise: optax 0.2.8's `noisy_sgd` /
`add_noise`.

Usage (from the repository root): /work/venv/bin/python tests/golden/gen_optim_noise.py
(writes tests/golden/optim_noise.json). JAX on the CPU, x64 disabled.

Each case runs 10 steps of `grad = jax.grad(f)(params)`, `opt.update(grad, state, params)` on
the logistic regression of gen_optim_lbfgs.py (its data are read from optim_lbfgs.json) and
records the parameters after each step.
"""

import json
import os
import warnings

os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import numpy as np
import optax

from gen_optim_polyak import logreg_problem, tolist

assert optax.__version__ == "0.2.8", optax.__version__
warnings.simplefilter("ignore", DeprecationWarning)

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 10

CASES = {
    "noisy_sgd": optax.noisy_sgd(0.1, key=jax.random.key(0)),
    "noisy_sgd_eta": optax.noisy_sgd(0.05, eta=0.3, gamma=0.8, key=jax.random.key(42)),
}


def main():
    fn, p0 = logreg_problem()
    out = {}
    for name, opt in CASES.items():
        params, state, steps = p0, opt.init(p0), []
        for _ in range(STEPS):
            grad = jax.grad(fn)(params)
            updates, state = opt.update(grad, state, params)
            params = optax.apply_updates(params, updates)
            steps.append(tolist(params))
        out[name] = steps
    with open(os.path.join(HERE, "optim_noise.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
