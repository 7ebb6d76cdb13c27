"""The sharded transformer of examples/transformer_lm.rs (`--mesh dp=2,mp=4`) in JAX, for
tests/transformer_sharded.rs and benches/peer/sharded_jax.py.

Run: python tests/golden/gen_transformer_sharded.py   (rewrites tests/golden/transformer_sharded.json)

The model is the example's: token and learned position embeddings, pre-norm blocks of causal
multi-head self-attention (flax's MultiHeadDotProductAttention: kernels [d, heads, head_dim],
out kernel [heads, head_dim, d]) and a tanh-gelu MLP, a final LayerNorm and tied logits
(`embedding.attend`); the loss is the mean next-token cross-entropy. The step is the example's:
value_and_grad, optax's clip_by_global_norm then adamw (b1 0.9, b2 0.99, eps 1e-8, decoupled
weight decay on the kernels, embeddings and positions) on a warmup-cosine schedule.

It runs on a 2 x 4 ("dp", "mp") mesh of 8 CPU devices (Auto axes, as jaxrs's):
- FSDP: every kernel, embedding and position table is split over "dp" along its model
  dimension (d_model), and Adam's two moments lie as the parameters do;
- tensor parallelism: the attention's heads and the MLP's hidden units are split over "mp";
- the batch is split over "dp"; the activations are constrained with with_sharding_constraint
  (the residual stream P("dp", None, None), queries, keys and values P("dp", None, "mp", None));
- the MLP is a shard_map: each device all-gathers its FSDP pieces of the two kernels over
  "dp", multiplies its slice of the hidden units, and the partial products are summed over
  "mp" (a psum); its gradient reduce-scatters the kernels' gradients back over "dp".

The initial parameters are the example's `Model::init(random::key(0), ..)` (jax.random is
bit-equal in jaxrs; the initialisers are flax's), and the batches are closed-form windows of a
token sequence (see `batch`). Written: the config, each initial leaf's sum (by jaxrs's tree
path), the losses of `STEPS` steps of the sharded step and of the same step on one device, the
collectives of XLA's compiled module of the sharded step (instructions by opcode, as the
module's text has them), and the sharded step's output shardings.
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

CONFIG = {
    "vocab": 32,
    "d_model": 32,
    "heads": 4,
    "layers": 2,
    "context": 16,
    "batch": 8,
    "mlp_ratio": 4,
    "peak_lr": 1e-2,
    "warmup_steps": 2,
    "decay_steps": 10,
    "weight_decay": 0.1,
    "clip_norm": 1.0,
    "steps": 4,
    "seed": 0,
}

COLLECTIVES = [
    "all-gather",
    "all-reduce",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
]


def tokens(n, vocab):
    """The token sequence the batches are cut from: (7 i + i^2 // 3) mod vocab."""
    i = np.arange(n, dtype=np.int64)
    return ((7 * i + (i * i) // 3) % vocab).astype(np.int32)


def batch(step, c):
    """Step `step`'s windows: row b starts at 11 (step * batch + b)."""
    b, t = c["batch"], c["context"]
    stream = tokens(11 * (c["steps"] * b + b) + t + 1, c["vocab"])
    starts = [11 * (step * b + r) for r in range(b)]
    inputs = np.stack([stream[s : s + t] for s in starts])
    targets = np.stack([stream[s + 1 : s + t + 1] for s in starts])
    return inputs, targets


# ---------------------------------------------------------------------------------------------
# The model (dicts keyed as jaxrs's structs' fields).


def init(key, c):
    d, h, layers = c["d_model"], c["heads"], c["layers"]
    hidden = c["mlp_ratio"] * d
    keys = jax.random.split(key, 2 + 3 * layers)
    lecun = jax.nn.initializers.lecun_normal()
    embed = jax.nn.initializers.variance_scaling(1.0, "fan_in", "normal", out_axis=0)
    f32 = jnp.float32

    def ln():
        return {"bias": jnp.zeros((d,), f32), "scale": jnp.ones((d,), f32)}

    def attention(key):
        kq, kk, kv, ko = jax.random.split(key, 4)
        return {
            "key_bias": jnp.zeros((h, d // h), f32),
            "key_kernel": lecun(kk, (d, d), f32).reshape(d, h, d // h),
            "out_bias": jnp.zeros((d,), f32),
            "out_kernel": lecun(ko, (d, d), f32).reshape(h, d // h, d),
            "query_bias": jnp.zeros((h, d // h), f32),
            "query_kernel": lecun(kq, (d, d), f32).reshape(d, h, d // h),
            "value_bias": jnp.zeros((h, d // h), f32),
            "value_kernel": lecun(kv, (d, d), f32).reshape(d, h, d // h),
        }

    return {
        "tokens": {"embedding": embed(keys[0], (c["vocab"], d), f32)},
        "positions": jax.nn.initializers.normal(0.02)(keys[1], (c["context"], d), f32),
        "blocks": [
            {
                "ln_attention": ln(),
                "attention": attention(keys[2 + 3 * l]),
                "ln_mlp": ln(),
                "mlp_in": {
                    "bias": jnp.zeros((hidden,), f32),
                    "kernel": lecun(keys[3 + 3 * l], (d, hidden), f32),
                },
                "mlp_out": {
                    "bias": jnp.zeros((d,), f32),
                    "kernel": lecun(keys[4 + 3 * l], (hidden, d), f32),
                },
            }
            for l in range(layers)
        ],
        "ln_final": ln(),
    }


def layer_norm(p, x):
    """flax's LayerNorm (epsilon 1e-6, the variance as E[x^2] - E[x]^2), as jaxrs's."""
    mean = x.mean(-1, keepdims=True)
    mean2 = (x * x).mean(-1, keepdims=True)
    var = jnp.maximum(mean2 - mean * mean, 0.0)
    return (x - mean) * (lax.rsqrt(var + 1e-6) * p["scale"]) + p["bias"]


def gelu(x):
    return jax.nn.gelu(x, approximate=True)


def project_in(x, kernel, bias):
    return jnp.einsum("btf,fhd->bthd", x, kernel) + bias


def attention(p, x, mask, constrain):
    q = constrain(project_in(x, p["query_kernel"], p["query_bias"]), "heads")
    k = constrain(project_in(x, p["key_kernel"], p["key_bias"]), "heads")
    v = constrain(project_in(x, p["value_kernel"], p["value_bias"]), "heads")
    q = q / jnp.sqrt(jnp.float32(q.shape[-1]))
    logits = jnp.einsum("bqhd,bkhd->bhqk", q, k)
    logits = jnp.where(mask, logits, jnp.finfo(jnp.float32).min)
    weights = jax.nn.softmax(logits, axis=-1)
    out = constrain(jnp.einsum("bhqk,bkhd->bqhd", weights, v), "heads")
    return jnp.einsum("bqhd,hdf->bqf", out, p["out_kernel"]) + p["out_bias"]


def mlp_plain(p_in, p_out, x):
    return gelu(x @ p_in["kernel"] + p_in["bias"]) @ p_out["kernel"] + p_out["bias"]


def mlp_body(x, w_in, b_in, w_out, b_out):
    """One device's part: its FSDP pieces gathered over "dp", its hidden units, a psum over
    "mp" of the partial products."""
    w_in = lax.all_gather(w_in, "dp", axis=0, tiled=True)
    w_out = lax.all_gather(w_out, "dp", axis=1, tiled=True)
    h = gelu(x @ w_in + b_in)
    return lax.psum(h @ w_out, "mp") + b_out


def mlp_sharded(mesh):
    f = jax.shard_map(
        mlp_body,
        mesh=mesh,
        in_specs=(P("dp", None, None), P("dp", "mp"), P("mp"), P("mp", "dp"), P()),
        out_specs=P("dp", None, None),
    )
    return lambda p_in, p_out, x: f(x, p_in["kernel"], p_in["bias"], p_out["kernel"], p_out["bias"])


def logits_fn(params, inputs, constrain, mlp):
    t = inputs.shape[1]
    x = params["tokens"]["embedding"][inputs] + params["positions"][:t]
    x = constrain(x, "stream")
    idx = jnp.arange(t)
    mask = (idx[:, None] >= idx[None, :])[None, None]
    for p in params["blocks"]:
        x = constrain(x + attention(p["attention"], layer_norm(p["ln_attention"], x), mask, constrain), "stream")
        x = constrain(x + mlp(p["mlp_in"], p["mlp_out"], layer_norm(p["ln_mlp"], x)), "stream")
    return layer_norm(params["ln_final"], x) @ params["tokens"]["embedding"].T


def loss_fn(params, inputs, targets, constrain, mlp):
    logits = logits_fn(params, inputs, constrain, mlp)
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()


def decayed(path):
    last = path[-1].key
    return last.endswith("kernel") or last == "embedding" or last == "positions"


def optimizer(c):
    schedule = optax.warmup_cosine_decay_schedule(
        0.0, c["peak_lr"], c["warmup_steps"], c["decay_steps"], c["peak_lr"] / 10.0
    )
    mask = lambda params: jax.tree_util.tree_map_with_path(lambda p, _: decayed(p), params)
    return optax.chain(
        optax.clip_by_global_norm(c["clip_norm"]),
        optax.adamw(schedule, b1=0.9, b2=0.99, eps=1e-8, weight_decay=c["weight_decay"], mask=mask),
    )


def make_step(c, constrain, mlp):
    opt = optimizer(c)

    def step(params, opt_state, inputs, targets):
        value, grads = jax.value_and_grad(loss_fn)(params, inputs, targets, constrain, mlp)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    return opt, step


# ---------------------------------------------------------------------------------------------
# Shardings.


def spec_for(path):
    """A leaf's PartitionSpec from its last two keys (the same rule as the Rust example's)."""
    keys = [k.key for k in path if hasattr(k, "key")]
    name = keys[-1] if keys else ""
    parent = keys[-2] if len(keys) > 1 else ""
    if name == "embedding" or name == "positions":
        return P(None, "dp")
    if name in ("query_kernel", "key_kernel", "value_kernel"):
        return P("dp", "mp", None)
    if name in ("query_bias", "key_bias", "value_bias"):
        return P("mp", None)
    if name == "out_kernel":
        return P("mp", None, "dp")
    if parent == "mlp_in":
        return P("dp", "mp") if name == "kernel" else P("mp")
    if parent == "mlp_out" and name == "kernel":
        return P("mp", "dp")
    return P()


def make_mesh():
    return jax.make_mesh((2, 4), ("dp", "mp"), axis_types=(AxisType.Auto,) * 2)


def sharded_step(c, mesh, params, opt_state):
    """The jitted sharded step and the shardings of its parameters and optimizer state."""

    def constrain(x, what):
        spec = P("dp", None, None) if what == "stream" else P("dp", None, "mp", None)
        return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, spec))

    opt, step = make_step(c, constrain, mlp_sharded(mesh))
    shard = lambda tree: jax.tree_util.tree_map_with_path(
        lambda p, x: NamedSharding(mesh, spec_for(p) if jnp.ndim(x) > 0 else P()), tree
    )
    ps, ss = shard(params), shard(opt_state)
    data = NamedSharding(mesh, P("dp", None))
    jitted = jax.jit(
        step,
        in_shardings=(ps, ss, data, data),
        out_shardings=(ps, ss, NamedSharding(mesh, P())),
        donate_argnums=(0, 1),
    )
    return jitted, ps, ss


def plain_step(c):
    opt, step = make_step(c, lambda x, _: x, mlp_plain)
    return jax.jit(step, donate_argnums=(0, 1))


def collective_counts(hlo_text):
    counts = {}
    for op in COLLECTIVES:
        counts[op] = sum(
            1
            for line in hlo_text.splitlines()
            if f" {op}(" in line or f" {op}-start(" in line
        )
    return counts


def keystr(path):
    """jaxrs's tree path (`blocks.0.attention.key_kernel`) of a JAX key path."""
    return ".".join(str(k.key if hasattr(k, "key") else k.idx) for k in path)


def main():
    c = CONFIG
    mesh = make_mesh()
    params = init(jax.random.PRNGKey(c["seed"]), c)
    init_sums = {
        keystr(p): float(np.asarray(x, np.float64).sum())
        for p, x in jax.tree_util.tree_leaves_with_path(params)
    }
    init_abs_sums = {
        keystr(p): float(np.abs(np.asarray(x, np.float64)).sum())
        for p, x in jax.tree_util.tree_leaves_with_path(params)
    }
    batches = [batch(s, c) for s in range(c["steps"])]

    opt = optimizer(c)
    # One device.
    step1 = plain_step(c)
    p, s = jax.tree.map(jnp.copy, params), opt.init(params)
    plain_losses = []
    for inputs, targets in batches:
        p, s, l = step1(p, s, inputs, targets)
        plain_losses.append(float(l))

    # 2 x 4.
    state = opt.init(params)
    jitted, ps, ss = sharded_step(c, mesh, params, state)
    p = jax.device_put(params, ps)
    s = jax.device_put(state, ss)
    data = NamedSharding(mesh, P("dp", None))
    args0 = (p, s, jax.device_put(batches[0][0], data), jax.device_put(batches[0][1], data))
    hlo = jitted.lower(*args0).compile().as_text()
    if "--print-hlo" in sys.argv:
        print(hlo)
    sharded_losses = []
    for inputs, targets in batches:
        p, s, l = jitted(p, s, jax.device_put(inputs, data), jax.device_put(targets, data))
        sharded_losses.append(float(l))
    out_specs = {
        keystr(path): [None if e is None else e for e in x.sharding.spec]
        for path, x in jax.tree_util.tree_leaves_with_path(p)
    }
    shard_shapes = {
        keystr(path): list(x.addressable_shards[0].data.shape)
        for path, x in jax.tree_util.tree_leaves_with_path(p)
    }

    out = {
        "config": c,
        "init_sums": init_sums,
        "init_abs_sums": init_abs_sums,
        "first_batch": {
            "inputs": batches[0][0].ravel().tolist(),
            "targets": batches[0][1].ravel().tolist(),
        },
        "plain_losses": plain_losses,
        "sharded_losses": sharded_losses,
        "collectives": collective_counts(hlo),
        "param_specs": out_specs,
        "param_shard_shapes": shard_shapes,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "transformer_sharded.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    print(f"wrote {path}")
    print("losses, one device:", plain_losses)
    print("losses, 2 x 4 mesh:", sharded_losses)
    print("collectives:", out["collectives"])


if __name__ == "__main__":
    if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
        sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")
    main()
