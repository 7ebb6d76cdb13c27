"""JAX's side of benches/train_step.rs: the same training steps in JAX 0.10.2 and optax.

Run: python benches/peer/train_step_jax.py ROW [steady|first]   (needs jax==0.10.2 and optax)
ROW is one of mnist, big_mlp, cnn, char_rnn, transformer_f32, transformer_bf16, pmap. Prints
one `name: value` line per figure (milliseconds); the Rust bench parses them. As on the Rust
side, every figure comes from a fresh process (this script re-run with `--child ROW MODE`):

- `step_ms`: steady state, best of rounds after a warm-up, data on the device, the parameters
  and the optimizer state donated, one `float(loss)` per step.
- `compile_ms` = `trace_lower_ms` (`jax.jit(step).lower(..)`) + `xla_compile_ms`
  (`.compile()`), the persistent cache off; for pmap, the first call minus one steady step.
- `first_cold_ms` / `first_warm_ms`: just before the first call to its loss on the host, in a
  fresh process with the persistent compile cache in an empty folder, then in one over the
  folder the cold run filled.

The models are the math of benches/common/train_models.rs (flax's layer formulas, written out).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

# name: (steps per round, rounds, devices); the same as the Rust side's ROWS.
ROWS = {
    "mnist": (300, 5, 1),
    "big_mlp": (5, 3, 1),
    "cnn": (10, 3, 1),
    "char_rnn": (5, 3, 1),
    "transformer_f32": (4, 3, 1),
    "transformer_bf16": (1, 3, 1),
    "pmap": (20, 3, 8),
}
PIXELS, CLASSES, VOCAB = 784, 10, 65
DEVICES, LOCAL_BATCH = 8, 100


def build(row):
    """(step function, (params, opt_state), inputs) of `row`, everything on the device."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from jax import lax

    def dense(key, n_in, n_out, bias=True):
        p = {"kernel": jax.random.normal(key, (n_in, n_out), jnp.float32) / np.sqrt(n_in)}
        if bias:
            p["bias"] = jnp.zeros((n_out,), jnp.float32)
        return p

    def apply_dense(p, x):
        y = jnp.dot(x, p["kernel"])
        return y + p["bias"] if "bias" in p else y

    def xent(logits, labels):
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    key = jax.random.PRNGKey(0)
    kp, kd = jax.random.split(key)

    def images(k, batch):
        kx, ky = jax.random.split(k)
        return (jax.random.uniform(kx, (batch, PIXELS), jnp.float32),
                jax.random.randint(ky, (batch,), 0, CLASSES, jnp.int32))

    def tokens(k, batch, length):
        ki, kt = jax.random.split(k)
        return (jax.random.randint(ki, (batch, length), 0, VOCAB, jnp.int32),
                jax.random.randint(kt, (batch, length), 0, VOCAB, jnp.int32))

    def make_step(loss, opt, reduce=None):
        def step(params, opt_state, *batch):
            value, grads = jax.value_and_grad(loss)(params, *batch)
            if reduce:
                grads, value = reduce(grads), reduce(value)
            updates, opt_state = opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, value
        return step

    if row in ("mnist", "big_mlp", "pmap"):
        sizes = [PIXELS, 1024, 1024, CLASSES] if row == "big_mlp" else [PIXELS, 128, CLASSES]
        params = [dense(jax.random.fold_in(kp, i), a, b)
                  for i, (a, b) in enumerate(zip(sizes, sizes[1:]))]

        def logits(ps, x):
            for i, p in enumerate(ps):
                x = apply_dense(p, x)
                if i < len(ps) - 1:
                    x = jax.nn.relu(x)
            return x

        def loss(ps, x, y):
            return xent(logits(ps, x), y)
        opt = optax.adam(1e-3, 0.9, 0.999, 1e-8)
        state = (params, opt.init(params))
        if row != "pmap":
            batch = 1024 if row == "big_mlp" else 100
            return make_step(loss, opt), state, images(kd, batch)
        state = jax.tree.map(lambda a: jnp.broadcast_to(a, (DEVICES,) + a.shape), state)
        x, y = images(kd, DEVICES * LOCAL_BATCH)
        split = jax.pmap(lambda v: v)
        inputs = (split(x.reshape(DEVICES, LOCAL_BATCH, PIXELS)),
                  split(y.reshape(DEVICES, LOCAL_BATCH)))
        return make_step(loss, opt, lambda t: lax.pmean(t, "d")), state, inputs

    if row == "cnn":
        k1, k2, k3, k4 = jax.random.split(kp, 4)

        def conv(k, cin, cout):
            return {"kernel": jax.random.normal(k, (3, 3, cin, cout)) / np.sqrt(9 * cin),
                    "bias": jnp.zeros((cout,))}
        params = {"conv1": conv(k1, 1, 32), "conv2": conv(k2, 32, 64),
                  "hidden": dense(k3, 7 * 7 * 64, 128), "out": dense(k4, 128, CLASSES)}

        def apply_conv(p, x):
            y = lax.conv_general_dilated(x, p["kernel"], (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            return y + p["bias"]

        def pool(y):
            return lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

        def loss(p, x, labels):
            b = x.shape[0]
            y = x.reshape(b, 28, 28, 1)
            y = pool(jax.nn.relu(apply_conv(p["conv1"], y)))
            y = pool(jax.nn.relu(apply_conv(p["conv2"], y)))
            y = y.reshape(b, -1)
            return xent(apply_dense(p["out"], jax.nn.relu(apply_dense(p["hidden"], y))), labels)
        opt = optax.adam(optax.cosine_decay_schedule(1e-3, 450, alpha=0.1), 0.9, 0.999, 1e-8)
        return make_step(loss, opt), (params, opt.init(params)), images(kd, 50)

    if row == "char_rnn":
        k1, k2, k3 = jax.random.split(kp, 3)
        ks = jax.random.split(k2, 6)
        embed, hidden = 64, 256
        params = {
            "embed": jax.random.normal(k1, (VOCAB, embed)) / np.sqrt(embed),
            "cell": {"ir": dense(ks[0], embed, hidden, False),
                     "iz": dense(ks[1], embed, hidden, False),
                     "in": dense(ks[2], embed, hidden),
                     "hr": dense(ks[3], hidden, hidden),
                     "hz": dense(ks[4], hidden, hidden),
                     "hn": dense(ks[5], hidden, hidden)},
            "head": dense(k3, hidden, VOCAB),
        }

        def cell(c, h, x):
            r = jax.nn.sigmoid(apply_dense(c["ir"], x) + apply_dense(c["hr"], h))
            z = jax.nn.sigmoid(apply_dense(c["iz"], x) + apply_dense(c["hz"], h))
            n = jnp.tanh(apply_dense(c["in"], x) + r * apply_dense(c["hn"], h))
            new_h = (1.0 - z) * n + z * h
            return new_h, new_h

        def loss(p, inputs, targets):
            xs = jnp.take(p["embed"], inputs.T, axis=0)
            h0 = jnp.zeros((inputs.shape[0], hidden), jnp.float32)
            _, hs = lax.scan(lambda h, x: cell(p["cell"], h, x), h0, xs)
            return xent(apply_dense(p["head"], hs), targets.T)
        opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(3e-3, 0.9, 0.999, 1e-8))
        return make_step(loss, opt), (params, opt.init(params)), tokens(kd, 32, 64)

    # The transformer LM, f32 or bf16 compute over f32 master parameters.
    compute = jnp.bfloat16 if row == "transformer_bf16" else jnp.float32
    d, heads, layers, context = 128, 4, 2, 64

    def k(i):
        return jax.random.fold_in(kp, i)

    def layer_norm_params():
        return {"scale": jnp.ones((d,)), "bias": jnp.zeros((d,))}

    def attention_params(key):
        kq, kk, kv, ko = jax.random.split(key, 4)

        def proj(kk_):
            return (jax.random.normal(kk_, (d, d)) / np.sqrt(d)).reshape(d, heads, d // heads)
        return {"query_kernel": proj(kq), "query_bias": jnp.zeros((heads, d // heads)),
                "key_kernel": proj(kk), "key_bias": jnp.zeros((heads, d // heads)),
                "value_kernel": proj(kv), "value_bias": jnp.zeros((heads, d // heads)),
                "out_kernel": (jax.random.normal(ko, (d, d)) / np.sqrt(d)).reshape(
                    heads, d // heads, d),
                "out_bias": jnp.zeros((d,))}
    params = {
        "tokens": {"embedding": jax.random.normal(k(0), (VOCAB, d)) / np.sqrt(d)},
        "positions": 0.02 * jax.random.normal(k(1), (context, d)),
        "blocks": [{"ln_attention": layer_norm_params(),
                    "attention": attention_params(k(2 + 3 * i)),
                    "ln_mlp": layer_norm_params(),
                    "mlp_in": dense(k(3 + 3 * i), d, 4 * d),
                    "mlp_out": dense(k(4 + 3 * i), 4 * d, d)} for i in range(layers)],
        "ln_final": layer_norm_params(),
    }

    def layer_norm(p, x, eps=1e-6):
        mean = x.mean(-1, keepdims=True)
        mean2 = (x * x).mean(-1, keepdims=True)
        var = jnp.maximum(mean2 - mean * mean, 0.0)
        return (x - mean) * (lax.rsqrt(var + eps) * p["scale"]) + p["bias"]

    def attention(p, x, mask):
        q = jnp.einsum("bld,dhk->blhk", x, p["query_kernel"]) + p["query_bias"]
        kk_ = jnp.einsum("bld,dhk->blhk", x, p["key_kernel"]) + p["key_bias"]
        v = jnp.einsum("bld,dhk->blhk", x, p["value_kernel"]) + p["value_bias"]
        q = q / jnp.sqrt(q.shape[-1]).astype(q.dtype)
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, kk_)
        logits = jnp.where(mask, logits, jnp.finfo(logits.dtype).min)
        w = jax.nn.softmax(logits, axis=-1)
        out = jnp.einsum("bhqk,bkhd->bqhd", w, v)
        return jnp.einsum("bqhd,hdo->bqo", out, p["out_kernel"]) + p["out_bias"]

    @jax.checkpoint
    def block(p, x, mask):
        normed = layer_norm(p["ln_attention"], x)
        x = x + attention(p["attention"], normed, mask)
        hidden = jax.nn.gelu(apply_dense(p["mlp_in"], layer_norm(p["ln_mlp"], x)),
                             approximate=True)
        return x + apply_dense(p["mlp_out"], hidden)

    def loss(master, inputs, targets):
        model = jax.tree.map(lambda a: a.astype(compute), master)
        x = jnp.take(model["tokens"]["embedding"], inputs, axis=0) + model["positions"]
        idx = jnp.arange(context)
        mask = (idx[:, None] >= idx[None, :])[None, None]
        for p in model["blocks"]:
            x = block(p, x, mask)
        logits = jnp.dot(layer_norm(model["ln_final"], x), model["tokens"]["embedding"].T)
        return xent(logits.astype(jnp.float32), targets)

    def decayed(params):
        def is_decayed(path, _):
            name = getattr(path[-1], "key", None)
            return isinstance(name, str) and (
                name.endswith("kernel") or name.endswith("embedding") or name == "positions")
        return jax.tree_util.tree_map_with_path(is_decayed, params)
    schedule = optax.warmup_cosine_decay_schedule(0.0, 3e-3, 50, 1000, 3e-4)
    opt = optax.chain(optax.clip_by_global_norm(1.0),
                      optax.adamw(schedule, b1=0.9, b2=0.99, eps=1e-8, weight_decay=0.1,
                                  mask=decayed))
    return make_step(loss, opt), (params, opt.init(params)), tokens(kd, 32, context)


def ms_since(t):
    return (time.perf_counter() - t) * 1e3


def child(row, mode, cache_dir):
    steps_per_round, rounds, devices = ROWS[row]
    os.environ["JAX_PLATFORMS"] = "cpu"
    if devices > 1:
        os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    import jax
    if cache_dir and mode != "dump":
        jax.config.update("jax_compilation_cache_dir", cache_dir)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    else:
        jax.config.update("jax_enable_compilation_cache", False)
    step, (params, opt_state), inputs = build(row)
    jax.block_until_ready((params, opt_state, inputs))
    if devices > 1:
        assert jax.local_device_count() == devices, jax.devices()
        jitted = jax.pmap(step, axis_name="d", out_axes=(0, 0, None), donate_argnums=(0, 1))
    else:
        jitted = jax.jit(step, donate_argnums=(0, 1))
    if mode == "dump":
        # For comparing programs with jaxrs's: the lowered StableHLO and XLA's optimized HLO.
        lowered = jitted.lower(params, opt_state, *inputs)
        with open(os.path.join(cache_dir, f"{row}.jax.mlir"), "w") as f:
            f.write(lowered.as_text())
        with open(os.path.join(cache_dir, f"{row}.jax.hlo"), "w") as f:
            f.write(lowered.compile().as_text())
        return
    split = None
    if mode == "steady" and devices == 1:
        # Before any call, so no trace of this function is cached yet.
        t = time.perf_counter()
        lowered = jax.jit(step, donate_argnums=(0, 1)).lower(params, opt_state, *inputs)
        trace_lower = ms_since(t)
        t = time.perf_counter()
        lowered.compile()
        split = (trace_lower, ms_since(t))
    t = time.perf_counter()
    params, opt_state, loss = jitted(params, opt_state, *inputs)
    value = float(loss)
    first = ms_since(t)
    assert value == value, f"{row}: loss {value}"
    print(f"first_call_ms: {first:.3f}")
    if mode == "first":
        return
    for _ in range(2):
        params, opt_state, loss = jitted(params, opt_state, *inputs)
        float(loss)
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(steps_per_round):
            params, opt_state, loss = jitted(params, opt_state, *inputs)
            float(loss)
        best = min(best, ms_since(t) / steps_per_round)
    print(f"step_ms: {best:.4f}")
    if split:
        print(f"trace_lower_ms: {split[0]:.3f}")
        print(f"xla_compile_ms: {split[1]:.3f}")
        print(f"compile_ms: {split[0] + split[1]:.3f}")
    else:
        print(f"compile_ms: {first - best:.3f}")


def run_child(row, mode, cache_dir=None):
    args = [sys.executable, __file__, "--child", row, mode] + ([cache_dir] if cache_dir else [])
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        return {}
    figures = {}
    for line in out.stdout.splitlines():
        name, _, value = line.partition(": ")
        try:
            figures[name] = float(value)
        except ValueError:
            pass
    return figures


def main():
    if sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
        return
    row = sys.argv[1]
    what = sys.argv[2] if len(sys.argv) > 2 else "all"
    figures = {}
    if what in ("steady", "all"):
        figures = run_child(row, "steady")
        figures.pop("first_call_ms", None)
    if what in ("first", "all"):
        cache_dir = tempfile.mkdtemp(prefix=f"jax-train-step-{row}-")
        try:
            for temperature in ("cold", "warm"):
                first = run_child(row, "first", cache_dir).get("first_call_ms")
                if first is not None:
                    figures[f"first_{temperature}_ms"] = first
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
    for name, value in figures.items():
        print(f"{name}: {value:.4f}")


if __name__ == "__main__":
    main()
