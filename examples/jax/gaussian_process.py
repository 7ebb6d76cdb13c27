#!/usr/bin/env python3
"""The JAX twin of examples/gaussian_process.rs: the same data (jax.random, key 0), kernel,
marginal likelihood, Adam (optax) and prediction, printing the same figures.

Run: python examples/jax/gaussian_process.py [--golden]   (needs jax==0.10.2, optax==0.2.8)
`--golden` rewrites tests/golden/gaussian_process.json, which tests/gaussian_process.rs
checks the Rust example against.
"""
import json
import math
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as sla  # noqa: E402
import optax  # noqa: E402

N_TRAIN, N_TEST, STEPS, LEARNING_RATE, JITTER = 64, 200, 300, 0.05, 1e-6


def truth(x):
    return jnp.sin(x * 2.0) + jnp.cos(x * 5.0) * 0.3


def data():
    kx, kn = jax.random.split(jax.random.key(0))
    x = jax.random.uniform(kx, (N_TRAIN,), jnp.float64, -3.0, 3.0)
    y = truth(x) + jax.random.normal(kn, (N_TRAIN,), jnp.float64) * 0.1
    x_test = jnp.linspace(-3.0, 3.0, N_TEST, dtype=jnp.float64)
    return x, y, x_test, truth(x_test)


def rbf(h, a, b):
    d = a[:, None] - b[None, :]
    ls = jnp.exp(h["log_length_scale"])
    amp2 = jnp.exp(h["log_amplitude"] * 2.0)
    return amp2 * jnp.exp(-(d * d) / (ls ** 2 * 2.0))


def factor(h, x):
    noise2 = jnp.exp(h["log_noise"] * 2.0)
    eye = jnp.eye(x.shape[0], dtype=jnp.float64)
    return sla.cholesky(rbf(h, x, x) + eye * (noise2 + JITTER), lower=True)


def nll(h, x, y):
    lf = factor(h, x)
    alpha = sla.solve_triangular(lf, y, lower=True)
    n = x.shape[0]
    return ((alpha * alpha).sum() * 0.5 + jnp.log(jnp.diagonal(lf)).sum()
            + 0.5 * n * math.log(2.0 * math.pi))


opt = optax.adam(LEARNING_RATE, 0.9, 0.999, 1e-8)


@jax.jit
def train_step(h, opt_state, x, y):
    loss, grads = jax.value_and_grad(nll)(h, x, y)
    updates, opt_state = opt.update(grads, opt_state, h)
    return optax.apply_updates(h, updates), opt_state, loss


@jax.jit
def predict(h, x, y, x_test):
    lf = factor(h, x)
    k_star = rbf(h, x, x_test)
    mean = k_star.T @ sla.cho_solve((lf, True), y)
    v = sla.solve_triangular(lf, k_star, lower=True)
    var = jnp.exp(h["log_amplitude"] * 2.0) - (v * v).sum(0)
    return mean, jnp.sqrt(jnp.maximum(var, 0.0))


def main():
    x, y, x_test, f_test = data()
    h = {"log_amplitude": jnp.float64(0.0), "log_length_scale": jnp.float64(0.0),
         "log_noise": jnp.float64(math.log(0.5))}
    opt_state = opt.init(h)
    losses = []
    for _ in range(STEPS):
        h, opt_state, loss = train_step(h, opt_state, x, y)
        losses.append(float(loss))
    mean, std = predict(h, x, y, x_test)
    err = mean - f_test
    figures = {
        "losses": losses,
        "amplitude": float(jnp.exp(h["log_amplitude"])),
        "length_scale": float(jnp.exp(h["log_length_scale"])),
        "noise": float(jnp.exp(h["log_noise"])),
        "final_nll": float(nll(h, x, y)),
        "test_rmse": float(jnp.sqrt((err * err).mean())),
        "mean_std": float(std.mean()),
        "coverage": float((jnp.abs(err) <= std * 2.0).astype(jnp.float64).mean()),
    }
    for step, loss in enumerate(losses):
        if step % 50 == 0 or step == STEPS - 1:
            print(f"step {step:>3}: negative log marginal likelihood {loss:.6f}")
    print(f"final nll       {figures['final_nll']:.6f}")
    print(f"amplitude       {figures['amplitude']:.6f}")
    print(f"length scale    {figures['length_scale']:.6f}")
    print(f"noise           {figures['noise']:.6f}  (the data's: 0.1)")
    print(f"test rmse       {figures['test_rmse']:.6f}  (posterior mean vs the noiseless function)")
    print(f"mean std        {figures['mean_std']:.6f}")
    print(f"2-sigma cover   {figures['coverage']:.3f}")
    if "--golden" in sys.argv:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "tests", "golden", "gaussian_process.json")
        with open(path + ".tmp", "w") as f:
            json.dump({"jax_version": jax.__version__, **figures}, f, indent=1)
            f.write("\n")
        os.replace(path + ".tmp", path)
        print(f"wrote {os.path.normpath(path)}")


if __name__ == "__main__":
    sys.exit(main())
