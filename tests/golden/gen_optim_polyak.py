#!/usr/bin/env python3
"""Golden values for `jaxrs::optim`'s Polyak step sizes and per-example clipping: optax
0.2.8's `polyak_sgd` / `scale_by_polyak`, `per_example_global_norm_clip` and
`per_example_layer_norm_clip`.

Usage (from the repository root): /work/venv/bin/python tests/golden/gen_optim_polyak.py
(writes tests/golden/optim_polyak.json). JAX on the CPU, x64 disabled.

Each Polyak case runs 10 steps of `value, grad = jax.value_and_grad(f)(params)`,
`opt.update(grad, state, params, value=value)` on the logistic regression of
gen_optim_lbfgs.py (its data are read from optim_lbfgs.json) and records the parameters
after each step. Each clipping case records its per-example gradients, the clip and the
clipped sum and count.
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
STEPS = 10


def tolist(tree):
    return jax.tree.map(lambda a: np.asarray(a).reshape(-1).tolist(), tree)


def logreg_problem():
    with open(os.path.join(HERE, "optim_lbfgs.json")) as f:
        d = json.load(f)["logreg"]
    x = jnp.asarray(d["x"], jnp.float32)
    y = jnp.asarray(d["y"], jnp.float32)

    def fn(params):
        z = x @ params["w"] + params["b"]
        nll = jnp.mean(jnp.log1p(jnp.exp(z)) - y * z)
        return nll + 0.5 * d["l2"] * jnp.sum(params["w"] ** 2)

    p0 = {
        "w": jnp.asarray(d["w0"], jnp.float32),
        "b": jnp.asarray(d["b0"], jnp.float32),
    }
    return fn, p0


POLYAK = {
    "polyak_sgd": optax.polyak_sgd(),
    "polyak_sgd_plus": optax.polyak_sgd(
        max_learning_rate=2.0, scaling=0.5, f_min=0.4, eps=1e-3, variant="sps+"
    ),
    "polyak_sgd_fmin": optax.polyak_sgd(max_learning_rate=5.0, f_min=0.3),
}


def polyak_runs():
    fn, p0 = logreg_problem()
    out = {}
    for name, opt in POLYAK.items():
        params, state, steps = p0, opt.init(p0), []
        for _ in range(STEPS):
            value, grad = jax.value_and_grad(fn)(params)
            updates, state = opt.update(grad, state, params, value=value)
            params = optax.apply_updates(params, updates)
            steps.append(tolist(params))
        out[name] = steps
    return out


def clip_cases():
    rng = np.random.default_rng(0)
    grads = {
        "a": rng.normal(size=(5, 3)).astype(np.float32),
        "b": rng.normal(size=(5, 2, 2)).astype(np.float32),
    }
    grads["a"][2] = 0.0
    grads["b"][2] = 0.0
    out = []
    for clip in [0.0, 0.5, 1.5, 3.0, float("inf")]:
        total, num = optax.per_example_global_norm_clip(
            [jnp.asarray(grads["a"]), jnp.asarray(grads["b"])], clip
        )
        out.append(
            {
                "clip": "inf" if clip == float("inf") else clip,
                "a": grads["a"].reshape(-1).tolist(),
                "b": grads["b"].reshape(-1).tolist(),
                "sum_a": np.asarray(total[0]).reshape(-1).tolist(),
                "sum_b": np.asarray(total[1]).reshape(-1).tolist(),
                "num_clipped": int(num),
            }
        )
    return out


def layer_clip_cases():
    rng = np.random.default_rng(1)
    grads = {
        "a": rng.normal(size=(4, 3)).astype(np.float32),
        "b": rng.normal(size=(4, 2, 5)).astype(np.float32),
    }
    out = []
    for clip, uniform in [(1.0, True), (2.5, True), (1.0, False), (4.0, False)]:
        total, num = optax.per_example_layer_norm_clip(
            [jnp.asarray(grads["a"]), jnp.asarray(grads["b"])], clip, uniform
        )
        out.append(
            {
                "clip": clip,
                "uniform": uniform,
                "a": grads["a"].reshape(-1).tolist(),
                "b": grads["b"].reshape(-1).tolist(),
                "sum_a": np.asarray(total[0]).reshape(-1).tolist(),
                "sum_b": np.asarray(total[1]).reshape(-1).tolist(),
                "num_clipped": [int(n) for n in num],
            }
        )
    return out


def main():
    out = {
        "polyak": polyak_runs(),
        "per_example_global_norm_clip": clip_cases(),
        "per_example_layer_norm_clip": layer_clip_cases(),
    }
    with open(os.path.join(HERE, "optim_polyak.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
