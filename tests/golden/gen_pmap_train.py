"""The seed's data-parallel train step under pmap, in JAX, for tests/pmap_train.rs.

Run: python tests/golden/gen_pmap_train.py   (rewrites tests/golden/pmap_train.json)

An MLP (3 -> 4 tanh -> 1, mean squared error) trained by SGD for 10 steps with `jax.pmap`
over 8 CPU devices (`--xla_force_host_platform_device_count=8`): each device takes a local
batch of 2 rows of a global batch of 16, the loss and the gradients are averaged across
devices with `lax.pmean`, and every device applies the same update to its replica of the
parameters (stacked along a leading axis of 8, as JAX's examples replicate them). The file
holds the inputs, the per-step mean losses, the final parameters (replica 0; all replicas
are equal, which the script checks) and, for comparison, the single-device step on the whole
global batch, whose losses agree to float tolerance.
"""

import json
import os
import sys
import zlib

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")

DEVICES = 8
LOCAL_BATCH = 2
STEPS = 10
LR = 0.1


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    pred = h @ params["w2"] + params["b2"]
    return jnp.mean((pred - y) ** 2)


def pmap_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    loss = jax.lax.pmean(loss, "d")
    grads = jax.lax.pmean(grads, "d")
    return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), loss


def single_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), loss


def enc(a):
    a = np.asarray(a)
    return {"shape": list(a.shape), "dtype": str(a.dtype),
            "data": [float(v) for v in a.reshape(-1)]}


def main() -> None:
    assert jax.local_device_count() == DEVICES, jax.devices()
    rng = np.random.default_rng(zlib.crc32(b"pmap_train"))
    f32 = np.float32
    params = {
        "w1": rng.uniform(-1, 1, [3, 4]).astype(f32),
        "b1": np.zeros([4], f32),
        "w2": rng.uniform(-1, 1, [4, 1]).astype(f32),
        "b2": np.zeros([1], f32),
    }
    x = rng.uniform(-1, 1, [DEVICES * LOCAL_BATCH, 3]).astype(f32)
    y = (np.sin(x.sum(axis=1, keepdims=True)) * 0.5).astype(f32)

    step = jax.pmap(pmap_step, axis_name="d")
    replicated = {k: jnp.stack([jnp.asarray(v)] * DEVICES) for k, v in params.items()}
    xs = jnp.asarray(x).reshape(DEVICES, LOCAL_BATCH, 3)
    ys = jnp.asarray(y).reshape(DEVICES, LOCAL_BATCH, 1)
    losses = []
    p = replicated
    for _ in range(STEPS):
        p, loss = step(p, xs, ys)
        assert loss.shape == (DEVICES,)
        assert np.all(np.asarray(loss) == np.asarray(loss)[0])
        losses.append(np.asarray(loss)[0])
    for v in p.values():
        v = np.asarray(v)
        assert np.all(v == v[0]), "replicas diverged"

    single = jax.jit(single_step)
    q = {k: jnp.asarray(v) for k, v in params.items()}
    single_losses = []
    for _ in range(STEPS):
        q, loss = single(q, jnp.asarray(x), jnp.asarray(y))
        single_losses.append(np.asarray(loss))
    np.testing.assert_allclose(losses, single_losses, rtol=1e-5, atol=1e-6)

    out = {
        "jax_version": jax.__version__,
        "devices": DEVICES,
        "local_batch": LOCAL_BATCH,
        "steps": STEPS,
        "lr": LR,
        "params": {k: enc(v) for k, v in params.items()},
        "x": enc(x),
        "y": enc(y),
        "losses": enc(np.array(losses, f32)),
        "final_params": {k: enc(np.asarray(v)[0]) for k, v in p.items()},
        "single_device_losses": enc(np.array(single_losses, f32)),
        "rtol": 1e-5,
        "atol": 1e-6,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pmap_train.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
