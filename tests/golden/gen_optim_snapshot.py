#!/usr/bin/env python3
"""Golden values for `jaxrs::optim::snapshot`: optax 0.2.8's `snapshot` in its docstring's
chain (momentum SGD, the snapshot of the updates' norm, global-norm clipping).

Usage (from the repository root): /work/venv/bin/python tests/golden/gen_optim_snapshot.py
(writes tests/golden/optim_snapshot.json). JAX on the CPU, x64 disabled.

10 steps of `grad = jax.grad(f)(params)`, `opt.update(grad, state, params)` on the logistic
regression of gen_optim_lbfgs.py; records the measurement after init and the parameters and
the measurement after each step.
"""

import json
import os
import warnings

os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import optax

from gen_optim_polyak import logreg_problem, tolist

assert optax.__version__ == "0.2.8", optax.__version__
warnings.simplefilter("ignore", DeprecationWarning)

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 10


def main():
    fn, params = logreg_problem()
    opt = optax.chain(
        optax.sgd(learning_rate=0.1, momentum=0.9),
        optax.snapshot("norm_before_clip", optax.tree.norm),
        optax.clip_by_global_norm(0.05),
    )
    state = opt.init(params)
    out = {"init": float(optax.tree.get(state, "norm_before_clip")), "steps": []}
    for _ in range(STEPS):
        grad = jax.grad(fn)(params)
        updates, state = opt.update(grad, state, params)
        params = optax.apply_updates(params, updates)
        out["steps"].append(
            {
                "params": tolist(params),
                "measurement": float(optax.tree.get(state, "norm_before_clip")),
            }
        )
    with open(os.path.join(HERE, "optim_snapshot.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
