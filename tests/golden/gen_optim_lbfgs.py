#!/usr/bin/env python3
"""Golden values for `jaxrs::optim`'s L-BFGS and line searches: optax 0.2.8's `lbfgs`,
`scale_by_zoom_linesearch` and `scale_by_backtracking_linesearch`.

Usage (from the repository root): /work/venv/bin/python tests/golden/gen_optim_lbfgs.py
(writes tests/golden/optim_lbfgs.json). JAX on the CPU; the "f32" runs with x64 disabled, the
"f64" runs in a child process with x64 enabled.

Each case runs 10 steps of optax's documented loop

    value, grad = optax.value_and_grad_from_state(f)(params, state=opt_state)
    updates, opt_state = opt.update(grad, opt_state, params, value=value, grad=grad, value_fn=f)
    params = optax.apply_updates(params, updates)

and records the parameters and the value after each step ("sgd_backtracking", whose
state keeps no gradient, takes them from `jax.value_and_grad(f)` instead). The objectives are a 4-D
Rosenbrock function on one array and a logistic regression on a {"w", "b"} tree.
"""

import json
import os
import subprocess
import sys
import warnings

os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import jax.numpy as jnp
import numpy as np
import optax

assert optax.__version__ == "0.2.8", optax.__version__
warnings.simplefilter("ignore", DeprecationWarning)

STEPS = 10

ROSEN_X0 = [-1.2, 1.0, -1.2, 1.0]

# Logistic regression data: 8 samples of 3 features.
LOGREG_X = [
    [0.5, -1.0, 2.0],
    [1.5, 0.3, -0.7],
    [-0.2, 0.8, 1.1],
    [2.0, -1.5, 0.4],
    [-1.3, 0.6, -0.9],
    [0.7, 1.2, 0.1],
    [-0.8, -0.4, 1.6],
    [1.1, 0.9, -1.2],
]
LOGREG_Y = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
LOGREG_W0 = [0.1, -0.2, 0.3]
LOGREG_B0 = [0.05]
L2 = 0.1


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def logreg(params, dtype):
    x = jnp.asarray(LOGREG_X, dtype)
    y = jnp.asarray(LOGREG_Y, dtype)
    z = x @ params["w"] + params["b"]
    nll = jnp.mean(jnp.log1p(jnp.exp(z)) - y * z)
    return nll + 0.5 * L2 * jnp.sum(params["w"] ** 2)


def cases():
    return {
        "lbfgs": optax.lbfgs(),
        "lbfgs_memory3_noscale": optax.lbfgs(memory_size=3, scale_init_precond=False),
        "lbfgs_backtracking": optax.lbfgs(
            linesearch=optax.scale_by_backtracking_linesearch(
                max_backtracking_steps=15, store_grad=True
            )
        ),
        # 50 trials (0.8^50 ~ 1e-5): enough to find a decrease on Rosenbrock's steep walls.
        "sgd_backtracking": optax.chain(
            optax.sgd(1.0),
            optax.scale_by_backtracking_linesearch(max_backtracking_steps=50),
        ),
        "sgd_zoom": optax.chain(
            optax.sgd(1.0),
            optax.scale_by_zoom_linesearch(max_linesearch_steps=15),
        ),
    }


def tolist(tree):
    return jax.tree.map(lambda a: np.asarray(a).reshape(-1).tolist(), tree)


def run(opt, fn, params, from_state):
    value_and_grad = optax.value_and_grad_from_state(fn)
    state = opt.init(params)
    out = []
    for _ in range(STEPS):
        if from_state:
            value, grad = value_and_grad(params, state=state)
        else:
            value, grad = jax.value_and_grad(fn)(params)
        updates, state = opt.update(
            grad, state, params, value=value, grad=grad, value_fn=fn
        )
        params = optax.apply_updates(params, updates)
        out.append({"params": tolist(params), "value": float(fn(params))})
    return out


def record(dtype):
    rosen_x0 = jnp.asarray(ROSEN_X0, dtype)
    logreg_p0 = {
        "w": jnp.asarray(LOGREG_W0, dtype),
        "b": jnp.asarray(LOGREG_B0, dtype),
    }
    out = {}
    for name, opt in cases().items():
        # Without store_grad the backtracking search keeps no gradient to reuse.
        from_state = name != "sgd_backtracking"
        out[name] = {
            "rosenbrock": run(opt, rosenbrock, rosen_x0, from_state),
            "logreg": run(opt, lambda p: logreg(p, dtype), logreg_p0, from_state),
        }
    return out


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--f64":
        jax.config.update("jax_enable_x64", True)
        json.dump(record(jnp.float64), sys.stdout)
        return
    f64 = subprocess.run(
        [sys.executable, __file__, "--f64"], check=True, capture_output=True, text=True
    ).stdout
    out = {
        "rosenbrock_x0": ROSEN_X0,
        "logreg": {
            "x": LOGREG_X,
            "y": LOGREG_Y,
            "w0": LOGREG_W0,
            "b0": LOGREG_B0,
            "l2": L2,
        },
        "f32": record(jnp.float32),
        "f64": json.loads(f64),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim_lbfgs.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
