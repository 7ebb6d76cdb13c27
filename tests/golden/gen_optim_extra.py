#!/usr/bin/env python3
"""Golden values for the rest of `jaxrs::optim`: optax 0.2.8's other optimizers, wrappers,
schedules and losses.

Usage (from the repository root): /work/venv/bin/python tests/golden/gen_optim_extra.py
(writes tests/golden/optim_extra.json). JAX on the CPU, x64 disabled.

The parameters and the gradient at each step are those of gen_optim.py (the Rust test reads
them from optim.json). Each case records the parameters after each of 10 steps. The cases in
"nan_cases" see the same gradients except that w[0, 0] is NaN at the steps in NAN_STEPS (the
Rust test injects the same NaN). "lookahead" records the fast and the slow parameters. Each
schedule records its value at steps 0..24; each loss (and each tree utility) its inputs and
output.
"""

import json
import os
import warnings

os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import jax.numpy as jnp
import numpy as np
import optax

from gen_optim import PARAMS0, STEPS, grads_at, tolist

assert optax.__version__ == "0.2.8", optax.__version__
warnings.simplefilter("ignore", DeprecationWarning)

NAN_STEPS = (2, 3, 7)

WD_MASK = {"w": True, "b": False}

CASES = {
    # Optimizers.
    "adagrad": optax.adagrad(0.1),
    "adadelta": optax.adadelta(0.5, weight_decay=0.01),
    "adamax": optax.adamax(1e-2),
    "adamaxw": optax.adamaxw(1e-2, weight_decay=0.1),
    "amsgrad": optax.amsgrad(1e-2),
    "lion": optax.lion(1e-3),
    "lamb": optax.lamb(1e-2, weight_decay=0.01),
    "lars": optax.lars(0.1, weight_decay=0.01),
    "lars_nesterov": optax.lars(0.1, weight_decay=0.01, trust_coefficient=0.01, momentum=0.8, nesterov=True),
    "nadam": optax.nadam(1e-2),
    "nadamw": optax.nadamw(1e-2, weight_decay=0.1, mask=WD_MASK),
    "radam": optax.radam(1e-2),
    "adabelief": optax.adabelief(1e-2),
    "yogi": optax.yogi(1e-2),
    "novograd": optax.novograd(1e-2, weight_decay=0.01),
    "sm3": optax.sm3(0.1),
    "adafactor": optax.adafactor(1e-2),
    "adafactor_factored": optax.adafactor(
        1e-2, min_dim_size_to_factor=2, momentum=0.9, weight_decay_rate=0.01
    ),
    "rmsprop_centered": optax.rmsprop(1e-2, centered=True, momentum=0.9),
    "rmsprop_nesterov": optax.rmsprop(
        1e-2, momentum=0.9, nesterov=True, eps_in_sqrt=False, bias_correction=True
    ),
    "adan": optax.adan(1e-2, weight_decay=0.01),
    "fromage": optax.fromage(1e-2),
    "sign_sgd": optax.sign_sgd(1e-2),
    "signum": optax.signum(1e-2),
    "rprop": optax.rprop(1e-2),
    "optimistic_gradient_descent": optax.optimistic_gradient_descent(1e-2),
    "optimistic_adam": optax.optimistic_adam(1e-2),
    "optimistic_adam_v2": optax.optimistic_adam_v2(1e-2),
    "dog": optax.chain(optax.scale_by_distance_over_gradients(), optax.scale(-1.0)),
    "param_block_norm": optax.chain(optax.scale_by_param_block_norm(), optax.sgd(0.1)),
    # Transformations and wrappers.
    "clip": optax.chain(optax.clip(0.5), optax.sgd(0.1)),
    "clip_by_block_rms": optax.chain(optax.clip_by_block_rms(0.5), optax.sgd(0.1)),
    "adaptive_grad_clip": optax.chain(optax.adaptive_grad_clip(0.1), optax.sgd(0.1)),
    "trust_ratio": optax.chain(optax.scale_by_trust_ratio(), optax.sgd(0.1)),
    "centralize": optax.chain(optax.centralize(), optax.sgd(0.1)),
    "normalize_by_update_norm": optax.chain(optax.normalize_by_update_norm(), optax.sgd(0.1)),
    "keep_params_nonnegative": optax.chain(optax.sgd(0.5), optax.keep_params_nonnegative()),
    "apply_every": optax.chain(optax.apply_every(3), optax.sgd(0.1)),
    "ema": optax.chain(optax.ema(0.9), optax.sgd(0.1)),
    "ema_no_debias": optax.chain(optax.ema(0.9, debias=False), optax.sgd(0.1)),
    "masked_adam": optax.masked(optax.adam(1e-2), WD_MASK),
    "masked_clip": optax.chain(
        optax.masked(optax.clip_by_global_norm(1.0), WD_MASK), optax.sgd(0.1)
    ),
    "freeze": optax.chain(optax.freeze({"w": False, "b": True}), optax.sgd(0.1)),
    "selective_transform": optax.selective_transform(
        optax.adam(1e-2), freeze_mask={"w": True, "b": False}
    ),
    "multi_transform": optax.multi_transform(
        {"a": optax.adam(1e-2), "s": optax.sgd(0.1, momentum=0.9)}, {"w": "a", "b": "s"}
    ),
    "multi_steps": optax.MultiSteps(optax.adam(1e-2), every_k_schedule=3),
    "multi_steps_sum": optax.MultiSteps(optax.sgd(0.1), every_k_schedule=2, use_grad_mean=False),
    "inject_schedule": optax.inject_hyperparams(optax.adam)(
        learning_rate=optax.linear_schedule(1e-2, 1e-3, 6)
    ),
    "inject_constant": optax.inject_hyperparams(optax.sgd)(learning_rate=0.1),
    "conditionally_mask": optax.conditionally_mask(optax.sgd(0.1), lambda step: step % 3 != 1),
    "conditionally_transform": optax.chain(
        optax.conditionally_transform(optax.scale(0.1), lambda step: step >= 4), optax.sgd(1.0)
    ),
    "flatten_adam": optax.flatten(optax.adam(1e-2)),
    "identity": optax.chain(optax.identity(), optax.sgd(0.1)),
    "set_to_zero": optax.set_to_zero(),
    "scale": optax.scale(-0.05),
    "stateless_with_tree_map": optax.chain(
        optax.stateless_with_tree_map(lambda g, p: g * p), optax.sgd(0.1)
    ),
}

NAN_CASES = {
    "apply_if_finite": optax.apply_if_finite(optax.adam(1e-2), max_consecutive_errors=2),
    "zero_nans": optax.chain(optax.zero_nans(), optax.adam(1e-2)),
    "multi_steps_skip": optax.MultiSteps(
        optax.sgd(0.1), every_k_schedule=2, should_skip_update_fn=optax.skip_not_finite
    ),
    "multi_steps_skip_large": optax.MultiSteps(
        optax.sgd(0.1),
        every_k_schedule=2,
        should_skip_update_fn=lambda u, s, p: optax.skip_large_updates(u, s, p, 4.0),
    ),
}

SCHEDULES = {
    "polynomial": optax.polynomial_schedule(0.1, 0.01, 2.0, 10, 3),
    "piecewise_constant": optax.piecewise_constant_schedule(0.1, {3: 0.5, 8: 0.1}),
    "piecewise_interpolate_linear": optax.piecewise_interpolate_schedule(
        "linear", 0.1, {4: 0.5, 10: 0.2}
    ),
    "piecewise_interpolate_cosine": optax.piecewise_interpolate_schedule(
        "cosine", 0.1, {4: 0.5, 10: 0.2}
    ),
    "warmup_constant": optax.warmup_constant_schedule(0.0, 0.1, 5),
    "warmup_exponential_decay": optax.warmup_exponential_decay_schedule(
        0.0, 0.1, 4, 3, 0.5, transition_begin=2, staircase=True, end_value=0.01
    ),
    "warmup_cosine_exponent": optax.warmup_cosine_decay_schedule(0.0, 0.1, 3, 20, 0.01, exponent=2.0),
    "cosine_decay_exponent": optax.cosine_decay_schedule(0.1, 15, 0.1, exponent=0.5),
    "sgdr": optax.sgdr_schedule(
        [
            dict(init_value=0.0, peak_value=0.1, warmup_steps=2, decay_steps=8, end_value=0.01),
            dict(init_value=0.01, peak_value=0.05, warmup_steps=3, decay_steps=10, end_value=0.0),
        ]
    ),
    "linear_onecycle": optax.linear_onecycle_schedule(20, 0.1),
    "cosine_onecycle": optax.cosine_onecycle_schedule(20, 0.1, pct_start=0.25),
}


def arr(values, shape, dtype=np.float32):
    return np.asarray(values, dtype).reshape(shape)


def losses():
    rng = np.random.default_rng(0)
    p = arr(rng.normal(size=12), (3, 4))
    t = arr(rng.normal(size=12), (3, 4))
    probs = np.asarray(jax.nn.softmax(arr(rng.normal(size=12), (3, 4))))
    logp = np.asarray(jax.nn.log_softmax(arr(rng.normal(size=12), (3, 4))))
    pos = arr(rng.uniform(0.1, 2.0, size=12), (3, 4))
    binary = arr(rng.integers(0, 2, size=12), (3, 4))
    signs = binary * 2 - 1
    emb = arr(rng.normal(size=12), (6, 2))
    labels = np.asarray([0, 1, 0, 2, 1, 2], np.int32)
    # ctc: batch 2, 6 frames, 4 classes (0 is blank), labels of up to 3.
    ctc_logits = arr(rng.normal(size=48), (2, 6, 4))
    ctc_logit_pad = arr([[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1]], (2, 6))
    ctc_labels = np.asarray([[1, 2, 2], [3, 1, 0]], np.int32)
    ctc_label_pad = arr([[0, 0, 0], [0, 0, 1]], (2, 3))
    cases = {
        "l2_loss": ([p, t], optax.l2_loss(p, t)),
        "l2_loss_single": ([p], optax.l2_loss(p)),
        "squared_error": ([p, t], optax.squared_error(p, t)),
        "huber_loss": ([p, t], optax.huber_loss(p, t, delta=0.7)),
        "log_cosh": ([p, t], optax.log_cosh(p, t)),
        "cosine_similarity": ([p, t], optax.cosine_similarity(p, t, epsilon=1e-3)),
        "cosine_distance": ([p, t], optax.cosine_distance(p, t, epsilon=1e-3)),
        "kl_divergence": ([logp, probs], optax.kl_divergence(logp, probs)),
        "convex_kl_divergence": ([logp, probs], optax.convex_kl_divergence(logp, probs)),
        "generalized_kl_divergence": ([logp, pos], optax.losses.generalized_kl_divergence(logp, pos)),
        "hinge_loss": ([p, signs], optax.hinge_loss(p, signs)),
        "smooth_labels": ([probs], optax.smooth_labels(probs, 0.1)),
        "sigmoid_focal_loss": ([p, binary], optax.sigmoid_focal_loss(p, binary, alpha=0.25, gamma=2.0)),
        "sigmoid_focal_loss_no_alpha": ([p, binary], optax.sigmoid_focal_loss(p, binary, gamma=1.5)),
        "softmax_cross_entropy": ([p, probs], optax.softmax_cross_entropy(p, probs)),
        "safe_softmax_cross_entropy": ([p, probs], optax.safe_softmax_cross_entropy(p, probs)),
        "ntxent": ([emb, labels], optax.ntxent(emb, labels, 0.5)),
        "ctc_loss": (
            [ctc_logits, ctc_logit_pad, ctc_labels, ctc_label_pad],
            optax.ctc_loss(ctc_logits, ctc_logit_pad, ctc_labels, ctc_label_pad),
        ),
    }
    _, phi, emit = optax.ctc_loss_with_forward_probs(ctc_logits, ctc_logit_pad, ctc_labels, ctc_label_pad)
    ctc_inputs = cases["ctc_loss"][0]
    cases["ctc_forward_phi"] = (ctc_inputs, phi)
    cases["ctc_forward_emit"] = (ctc_inputs, emit)
    new = arr(rng.normal(size=6), (2, 3))
    old = arr(rng.normal(size=6), (2, 3))
    cases["incremental_update"] = ([new, old], optax.incremental_update(new, old, 0.3))
    cases["periodic_update_on"] = ([new, old], optax.periodic_update(new, old, jnp.int32(4), 2))
    cases["periodic_update_off"] = ([new, old], optax.periodic_update(new, old, jnp.int32(3), 2))
    cases["scale_gradient_value"] = ([new], optax.scale_gradient(new, 0.25))
    cases["scale_gradient_grad"] = (
        [new],
        jax.grad(lambda x: jnp.sum(optax.scale_gradient(x, 0.25) ** 3))(jnp.asarray(new)),
    )
    out = {}
    for name, (inputs, value) in cases.items():
        out[name] = {
            "inputs": [
                {"shape": list(x.shape), "dtype": str(x.dtype), "values": np.asarray(x).reshape(-1).tolist()}
                for x in inputs
            ],
            "shape": list(np.shape(value)),
            "values": np.asarray(value, np.float32).reshape(-1).tolist(),
        }
    return out


def nan_grads_at(t):
    g = grads_at(t)
    if t in NAN_STEPS:
        g = dict(g)
        g["w"] = g["w"].at[0, 0].set(jnp.nan)
    return g


def trajectory(opt, grads_fn):
    params = PARAMS0
    state = opt.init(params)
    out = []
    for t in range(STEPS):
        updates, state = opt.update(grads_fn(t), state, params)
        params = optax.apply_updates(params, updates)
        out.append(tolist(params))
    return out


def lookahead():
    opt = optax.lookahead(optax.adam(1e-2), sync_period=3, slow_step_size=0.5)
    params = optax.LookaheadParams.init_synced(PARAMS0)
    state = opt.init(params)
    out = []
    for t in range(STEPS):
        updates, state = opt.update(grads_at(t), state, params)
        params = optax.apply_updates(params, updates)
        out.append({"fast": tolist(params.fast), "slow": tolist(params.slow)})
    return out


def main():
    out = {
        "nan_steps": list(NAN_STEPS),
        "cases": {name: trajectory(opt, grads_at) for name, opt in CASES.items()},
        "nan_cases": {name: trajectory(opt, nan_grads_at) for name, opt in NAN_CASES.items()},
        "lookahead": lookahead(),
        "schedules": {
            name: [float(np.float32(s(jnp.asarray(c, jnp.int32)))) for c in range(25)]
            for name, s in SCHEDULES.items()
        },
        "losses": losses(),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim_extra.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
