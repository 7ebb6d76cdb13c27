#!/usr/bin/env python3
"""Golden values for `jaxrs::optim`: optax 0.2.8 run for 10 steps on a two-leaf tree.

Usage (from the repository root): /work/venv/bin/python tests/golden/gen_optim.py
(writes tests/golden/optim.json). JAX on the CPU, x64 disabled (jaxrs follows JAX's default).

The tree is {"w": f32[2,3], "b": f32[3]}; the gradient at step t is fixed (it does not depend on
the parameters) and stored in the file, so the Rust test feeds exactly the same float32 values.
Each case records the parameters after every step; each schedule records its value at steps
0..12 (given an int32 count, as the optimizer state holds it).
"""

import json
import os

os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import jax.numpy as jnp
import numpy as np
import optax

assert optax.__version__ == "0.2.8", optax.__version__

STEPS = 10


def grads_at(t):
    w = np.cos(0.7 * t + 0.5 * np.arange(6, dtype=np.float64)).reshape(2, 3) * (1.0 + 0.3 * t)
    b = np.sin(1.3 * t + np.arange(3, dtype=np.float64)) * 0.5
    return {"w": jnp.asarray(w, jnp.float32), "b": jnp.asarray(b, jnp.float32)}


PARAMS0 = {
    "w": jnp.asarray(np.linspace(-1.0, 1.5, 6).reshape(2, 3), jnp.float32),
    "b": jnp.asarray([0.5, -0.25, 2.0], jnp.float32),
}

SCHEDULES = {
    "constant": optax.constant_schedule(0.05),
    "linear": optax.linear_schedule(0.1, 0.01, 5),
    "linear_begin": optax.linear_schedule(0.1, 0.01, 4, transition_begin=3),
    "exponential": optax.exponential_decay(0.1, 2, 0.5),
    "exponential_staircase": optax.exponential_decay(
        0.1, 3, 0.5, transition_begin=2, staircase=True, end_value=0.02
    ),
    "warmup_cosine": optax.warmup_cosine_decay_schedule(0.0, 1e-2, 3, 10, 1e-3),
}

CASES = {
    "sgd": optax.sgd(0.1),
    "momentum": optax.sgd(0.1, momentum=0.9),
    "nesterov": optax.sgd(0.1, momentum=0.9, nesterov=True),
    "adam": optax.adam(1e-2),
    "adam_b": optax.adam(3e-2, b1=0.8, b2=0.99, eps=1e-6),
    "adamw": optax.adamw(1e-2, weight_decay=0.1),
    "adamw_masked": optax.adamw(1e-2, weight_decay=0.1, mask={"w": True, "b": False}),
    "rmsprop": optax.rmsprop(1e-2),
    "clip_adam": optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-2)),
    "decayed_sgd": optax.chain(optax.add_decayed_weights(0.05), optax.sgd(0.1)),
    "adam_warmup_cosine": optax.adam(SCHEDULES["warmup_cosine"]),
    "sgd_exponential": optax.sgd(SCHEDULES["exponential"]),
    "sgd_exponential_staircase": optax.sgd(SCHEDULES["exponential_staircase"]),
    "sgd_linear": optax.sgd(SCHEDULES["linear"]),
    "sgd_constant": optax.sgd(SCHEDULES["constant"]),
    "scale_by_schedule": optax.chain(
        optax.scale_by_schedule(optax.linear_schedule(-0.1, -0.01, 5))
    ),
}


def tolist(tree):
    return {k: [float(x) for x in np.asarray(v, np.float32).reshape(-1)] for k, v in tree.items()}


def main():
    out = {
        "shapes": {"w": [2, 3], "b": [3]},
        "params0": tolist(PARAMS0),
        "grads": [tolist(grads_at(t)) for t in range(STEPS)],
        "cases": {},
        "schedules": {},
    }
    for name, opt in CASES.items():
        params = PARAMS0
        state = opt.init(params)
        trajectory = []
        for t in range(STEPS):
            updates, state = opt.update(grads_at(t), state, params)
            params = optax.apply_updates(params, updates)
            trajectory.append(tolist(params))
        out["cases"][name] = trajectory
    for name, schedule in SCHEDULES.items():
        out["schedules"][name] = [
            float(np.float32(schedule(jnp.asarray(c, jnp.int32)))) for c in range(13)
        ]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
