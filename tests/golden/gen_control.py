"""JAX goldens for control flow: the RNN of the seed's section 3, scanned.

Run: python tests/golden/gen_control.py   (JAX 0.10.2; writes tests/golden/control.json)
h_t = tanh(h_{t-1} @ W_hh + x_t @ W_xh + b), y_t = h_t @ W_hy, T=7, B=3; the loss is
sum(ys**2). Float32 inputs from a fixed seed; outputs are JAX's.
"""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np

assert jax.__version__ == "0.10.2", jax.__version__
jax.config.update("jax_platforms", "cpu")

T, B, D_IN, H, D_OUT = 7, 3, 4, 5, 2
rng = np.random.default_rng(1234)


def arr(*shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


params = {"w_hh": arr(H, H), "w_xh": arr(D_IN, H), "b": arr(H, scale=0.1), "w_hy": arr(H, D_OUT)}
h0 = arr(B, H)
xs = arr(T, B, D_IN, scale=1.0)


def rnn(params, h0, xs):
    def cell(h, x):
        h = jnp.tanh(h @ params["w_hh"] + x @ params["w_xh"] + params["b"])
        return h, h @ params["w_hy"]

    return jax.lax.scan(cell, h0, xs)


def loss(params, h0, xs):
    _, ys = rnn(params, h0, xs)
    return jnp.sum(ys**2)


h_t, ys = jax.jit(rnn)(params, h0, xs)
(g_params, g_h0) = jax.jit(jax.grad(loss, argnums=(0, 1)))(params, h0, xs)


def enc(a):
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": [float(v) for v in a.ravel()]}


out = {
    "jax_version": jax.__version__,
    "inputs": {**{k: enc(v) for k, v in params.items()}, "h0": enc(h0), "xs": enc(xs)},
    "h_t": enc(h_t),
    "ys": enc(ys),
    "grads": {**{k: enc(v) for k, v in g_params.items()}, "h0": enc(g_h0)},
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "control.json")
with open(path, "w") as f:
    json.dump(out, f, indent=None, separators=(",", ":"))
    f.write("\n")
print("wrote", path)
