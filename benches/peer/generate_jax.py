"""The JAX twin of benches/generate.rs: the same GPT-2 / Llama architecture as jaxrs-models'
`Transformer`, written in JAX, over the same safetensors weights.

A jitted prefill (one prompt bucket, cache rows written with `dynamic_update_slice`, the first
token drawn from the last real position's logits) and a jitted decode step (one token per cache
slot, the cache donated and updated in place with a scatter, attention over the cache's whole
capacity under a mask, greedy argmax), each result brought to the host as jaxrs's Engine does.
f32, bf16 (every float parameter cast), int8 (int8 kernels with per-output-channel scales, each
activation row quantized to int8 on the fly, int8 x int8 -> int32 products; the tied output head
quantized as an untied copy), as jaxrs's Dense does it.

Run by the Rust bench with `--rows=gpt2_f32,... --model=gpt2=DIR ... --steps=N --prompt=128
--capacity=256 --batch=8 --threads=T`. Prints `ROW_prefill_ms`, `ROW_decode1_tps`,
`ROW_decodeB_tps` figures and `ROW_tokens: ids` (the batch-1 greedy tokens).
"""
import argparse
import json
import os
import sys
import time

os.environ["JAX_PLATFORMS"] = "cpu"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from safetensors.numpy import load_file  # noqa: E402


def dense(kernel, bias=None):
    return {"kernel": kernel, "bias": bias, "scale": None}


def load(folder):
    """The model's config (as the few numbers the twin needs) and its f32 parameters."""
    with open(os.path.join(folder, "config.json")) as f:
        c = json.load(f)
    w = load_file(os.path.join(folder, "model.safetensors"))
    if c["model_type"] == "gpt2":
        p = "transformer." if "transformer.wte.weight" in w else ""
        h = c["n_embd"]
        cfg = dict(gpt2=True, hidden=h, heads=c["n_head"], kv_heads=c["n_head"],
                   head_dim=h // c["n_head"], eps=c.get("layer_norm_epsilon", 1e-5),
                   vocab=c["vocab_size"])
        blocks = []
        for i in range(c["n_layer"]):
            lp = f"{p}h.{i}."
            qkv_w, qkv_b = w[lp + "attn.c_attn.weight"], w[lp + "attn.c_attn.bias"]
            blocks.append({
                "attention_norm": {"scale": w[lp + "ln_1.weight"], "bias": w[lp + "ln_1.bias"]},
                "mlp_norm": {"scale": w[lp + "ln_2.weight"], "bias": w[lp + "ln_2.bias"]},
                "q": dense(qkv_w[:, :h], qkv_b[:h]),
                "k": dense(qkv_w[:, h:2 * h], qkv_b[h:2 * h]),
                "v": dense(qkv_w[:, 2 * h:], qkv_b[2 * h:]),
                "o": dense(w[lp + "attn.c_proj.weight"], w[lp + "attn.c_proj.bias"]),
                "up": dense(w[lp + "mlp.c_fc.weight"], w[lp + "mlp.c_fc.bias"]),
                "gate": None,
                "down": dense(w[lp + "mlp.c_proj.weight"], w[lp + "mlp.c_proj.bias"]),
            })
        params = {
            "embedding": w[p + "wte.weight"], "positions": w[p + "wpe.weight"],
            "blocks": blocks,
            "final_norm": {"scale": w[p + "ln_f.weight"], "bias": w[p + "ln_f.bias"]},
            "lm_head": None, "inv_freq": None,
        }
        return cfg, params
    h, heads = c["hidden_size"], c["num_attention_heads"]
    head_dim = c.get("head_dim", h // heads)
    cfg = dict(gpt2=False, hidden=h, heads=heads,
               kv_heads=c.get("num_key_value_heads", heads), head_dim=head_dim,
               eps=c.get("rms_norm_eps", 1e-6), vocab=c["vocab_size"])

    def linear(name):
        return dense(np.ascontiguousarray(w[name + ".weight"].T))

    blocks = []
    for i in range(c["num_hidden_layers"]):
        lp = f"model.layers.{i}."
        blocks.append({
            "attention_norm": {"scale": w[lp + "input_layernorm.weight"], "bias": None},
            "mlp_norm": {"scale": w[lp + "post_attention_layernorm.weight"], "bias": None},
            "q": linear(lp + "self_attn.q_proj"), "k": linear(lp + "self_attn.k_proj"),
            "v": linear(lp + "self_attn.v_proj"), "o": linear(lp + "self_attn.o_proj"),
            "gate": linear(lp + "mlp.gate_proj"), "up": linear(lp + "mlp.up_proj"),
            "down": linear(lp + "mlp.down_proj"),
        })
    theta = np.float32(c.get("rope_theta", 10000.0))
    inv_freq = (np.float32(1.0) / theta ** (np.arange(0, head_dim, 2, dtype=np.float32)
                                            / np.float32(head_dim))).astype(np.float32)
    params = {
        "embedding": w["model.embed_tokens.weight"], "positions": None, "blocks": blocks,
        "final_norm": {"scale": w["model.norm.weight"], "bias": None},
        "lm_head": linear("lm_head") if "lm_head.weight" in w else None,
        "inv_freq": inv_freq,
    }
    return cfg, params


def quantize(d):
    """jaxrs's Dense::quantize_int8: symmetric per output channel, scale = max|k[:, j]| / 127."""
    k = d["kernel"].astype(np.float32)
    amax = np.abs(k).max(axis=0)
    scale = np.where(amax == 0, np.float32(1), amax / np.float32(127)).astype(np.float32)
    q = np.clip(np.round(k / scale), -127, 127).astype(np.int8)
    return {"kernel": q, "bias": d["bias"], "scale": scale}


def variant(params, dtype):
    """The f32 parameters as the row's model: cast to bf16, or int8 kernels."""
    dense_names = ("q", "k", "v", "o", "gate", "up", "down")
    if dtype == "int8":
        p = dict(params)
        p["blocks"] = [{k: (quantize(v) if k in dense_names and v is not None else v)
                        for k, v in b.items()} for b in params["blocks"]]
        head = params["lm_head"] or dense(np.ascontiguousarray(params["embedding"].T))
        p["lm_head"] = quantize(head)
        out = p
    elif dtype == "bf16":
        cast = (lambda x: x if x is None or x.dtype != np.float32
                else jnp.asarray(x, jnp.bfloat16))
        inv = params["inv_freq"]
        out = jax.tree.map(cast, {k: v for k, v in params.items() if k != "inv_freq"})
        out["inv_freq"] = inv
    else:
        out = params
    return jax.tree.map(jnp.asarray, out)


def matmul(a, b):
    """jaxrs's float dot: accumulated in f32 and rounded once to the operands' dtype (JAX's
    default bf16 dot on CPU rounds differently, which moves near-tied greedy tokens)."""
    return jnp.matmul(a, b, preferred_element_type=jnp.float32).astype(a.dtype)


def einsum(spec, a, b):
    return jnp.einsum(spec, a, b, preferred_element_type=jnp.float32).astype(a.dtype)


def apply(d, x):
    if d["scale"] is not None:
        # jaxrs's int8 Dense: rows of x quantized to int8 (one scale each), an int8 x int8 ->
        # int32 product, both scales applied in f32.
        xf = x.astype(jnp.float32)
        amax = jnp.max(jnp.abs(xf), -1, keepdims=True)
        row_scale = jnp.where(amax == 0, jnp.float32(1), amax / jnp.float32(127))
        xq = jnp.round(xf / row_scale).astype(jnp.int8)
        acc = jnp.matmul(xq, d["kernel"], preferred_element_type=jnp.int32)
        y = (acc.astype(jnp.float32) * row_scale * d["scale"].astype(jnp.float32)).astype(x.dtype)
    else:
        y = matmul(x, d["kernel"])
    return y if d["bias"] is None else y + d["bias"]


def norm(n, x, eps):
    dtype = x.dtype
    x32 = x.astype(jnp.float32)
    if n["bias"] is None:
        inv = jax.lax.rsqrt(jnp.mean(x32 * x32, -1, keepdims=True) + eps)
        return n["scale"] * (x32 * inv).astype(dtype)
    centered = x32 - jnp.mean(x32, -1, keepdims=True)
    var = jnp.mean(centered * centered, -1, keepdims=True)
    normed = centered * jax.lax.rsqrt(var + eps)
    return (normed * n["scale"].astype(jnp.float32) + n["bias"].astype(jnp.float32)).astype(dtype)


def rope(p, x, positions):
    if p["inv_freq"] is None:
        return x
    freqs = positions.astype(jnp.float32)[..., None] * p["inv_freq"]
    angles = jnp.concatenate([freqs, freqs], -1)[:, :, None, :]
    cos, sin = jnp.cos(angles).astype(x.dtype), jnp.sin(angles).astype(x.dtype)
    half = x.shape[-1] // 2
    rotated = jnp.concatenate([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


def attend(cfg, q, k, v, mask):
    """Grouped-query attention of q [B, T, H, D] over k, v [B, S, KV, D] where mask [B, T, S]."""
    b, t = q.shape[:2]
    kv, d = cfg["kv_heads"], cfg["head_dim"]
    q = q.reshape(b, t, kv, cfg["heads"] // kv, d)
    scores = einsum("btkgd,bskd->bktgs", q, k).astype(jnp.float32) / np.float32(np.sqrt(d))
    scores = jnp.where(mask[:, None, :, None, :], scores, jnp.finfo(jnp.float32).min)
    probs = jax.nn.softmax(scores, -1).astype(v.dtype)
    out = einsum("bktgs,bskd->btkgd", probs, v)
    return out.reshape(b, t, cfg["heads"] * d)


def layer(cfg, blk, p, x, positions, attention):
    """One block: `attention(q, k, v)` attends (over the prompt, or the cache)."""
    b, t = x.shape[:2]
    h = norm(blk["attention_norm"], x, cfg["eps"])
    q = apply(blk["q"], h).reshape(b, t, cfg["heads"], cfg["head_dim"])
    k = apply(blk["k"], h).reshape(b, t, cfg["kv_heads"], cfg["head_dim"])
    v = apply(blk["v"], h).reshape(b, t, cfg["kv_heads"], cfg["head_dim"])
    q, k = rope(p, q, positions), rope(p, k, positions)
    out, kv = attention(q, k, v)
    x = x + apply(blk["o"], out)
    h = norm(blk["mlp_norm"], x, cfg["eps"])
    act = (lambda y: jax.nn.gelu(y, approximate=True)) if cfg["gpt2"] else jax.nn.silu
    if blk["gate"] is not None:
        hidden = act(apply(blk["gate"], h)) * apply(blk["up"], h)
    else:
        hidden = act(apply(blk["up"], h))
    return x + apply(blk["down"], hidden), kv


def embed(p, tokens, positions):
    x = p["embedding"][tokens]
    return x if p["positions"] is None else x + p["positions"][positions]


def logits(cfg, p, x):
    h = norm(p["final_norm"], x, cfg["eps"])
    if p["lm_head"] is None:
        return matmul(h, p["embedding"].T).astype(jnp.float32)
    return apply(p["lm_head"], h).astype(jnp.float32)


def make_steps(cfg):
    def prefill(p, cache, tokens, lengths, slots):
        b, t = tokens.shape
        positions = jnp.broadcast_to(jnp.arange(t, dtype=jnp.int32), (b, t))
        mask = jnp.broadcast_to(jnp.tril(jnp.ones((t, t), bool)), (b, t, t))
        x = embed(p, tokens, positions)
        ks, vs = cache
        new_k, new_v = [], []
        for blk, ck, cv in zip(p["blocks"], ks, vs):
            x, (k, v) = layer(cfg, blk, p, x, positions,
                              lambda q, k, v: (attend(cfg, q, k, v, mask), (k, v)))
            for r in range(b):
                ck = jax.lax.dynamic_update_slice(ck, k[r:r + 1], (slots[r], 0, 0, 0))
                cv = jax.lax.dynamic_update_slice(cv, v[r:r + 1], (slots[r], 0, 0, 0))
            new_k.append(ck)
            new_v.append(cv)
        # Logits of each row's last real token only.
        last = jnp.take_along_axis(x, (lengths - 1)[:, None, None], 1)[:, 0]
        first = jnp.argmax(logits(cfg, p, last), -1).astype(jnp.int32)
        return (new_k, new_v), first

    def decode(p, cache, tokens, positions):
        slots = tokens.shape[0]
        capacity = cache[0][0].shape[1]
        pos = positions[:, None]
        mask = (jnp.arange(capacity, dtype=jnp.int32)[None, None, :] <= pos[:, :, None])
        x = embed(p, tokens[:, None], pos)
        rows = jnp.arange(slots)
        ks, vs = cache
        new_k, new_v = [], []
        for blk, ck, cv in zip(p["blocks"], ks, vs):
            def attention(q, k, v, ck=ck, cv=cv):
                ck = ck.at[rows, positions].set(k[:, 0])
                cv = cv.at[rows, positions].set(v[:, 0])
                return attend(cfg, q, ck, cv, mask), (ck, cv)
            x, (ck, cv) = layer(cfg, blk, p, x, pos, attention)
            new_k.append(ck)
            new_v.append(cv)
        nxt = jnp.argmax(logits(cfg, p, x)[:, 0], -1).astype(jnp.int32)
        return (new_k, new_v), nxt

    return (jax.jit(prefill, donate_argnums=1), jax.jit(decode, donate_argnums=1))


def new_cache(cfg, layers, slots, capacity, dtype):
    shape = (slots, capacity, cfg["kv_heads"], cfg["head_dim"])
    return ([jnp.zeros(shape, dtype) for _ in range(layers)],
            [jnp.zeros(shape, dtype) for _ in range(layers)])


def measure(cfg, p, prompts, steps, capacity, batch, prefill_rounds):
    prefill, decode = make_steps(cfg)
    dtype = p["embedding"].dtype
    layers = len(p["blocks"])
    t_len = len(prompts[0])
    # Batch 1: prefill (best of `prefill_rounds` after the compile), then decode.
    cache = new_cache(cfg, layers, 1, capacity, dtype)
    tokens = jnp.asarray([prompts[0]], jnp.int32)
    lengths, slots = jnp.asarray([t_len], jnp.int32), jnp.asarray([0], jnp.int32)
    best = float("inf")
    for i in range(prefill_rounds + 1):
        t = time.perf_counter()
        cache, first = prefill(p, cache, tokens, lengths, slots)
        first = np.asarray(first)
        if i > 0:
            best = min(best, time.perf_counter() - t)
    out = [int(first[0])]
    last, position = first, t_len

    def step(cache, last, position, rows):
        cache, nxt = decode(p, cache, jnp.asarray(last, jnp.int32),
                            jnp.full((rows,), position, jnp.int32))
        return cache, np.asarray(nxt)

    for _ in range(2):
        cache, last = step(cache, last, position, 1)
        position += 1
        out.append(int(last[0]))
    t = time.perf_counter()
    for _ in range(steps):
        cache, last = step(cache, last, position, 1)
        position += 1
        out.append(int(last[0]))
    decode1 = steps / (time.perf_counter() - t)
    del cache
    # Batch `batch`: all prompts prefilled at once, then decode.
    cache = new_cache(cfg, layers, batch, capacity, dtype)
    cache, last = prefill(p, cache, jnp.asarray(prompts[:batch], jnp.int32),
                          jnp.full((batch,), t_len, jnp.int32), jnp.arange(batch, dtype=jnp.int32))
    last, position = np.asarray(last), t_len
    for _ in range(2):
        cache, last = step(cache, last, position, batch)
        position += 1
    t = time.perf_counter()
    for _ in range(steps):
        cache, last = step(cache, last, position, batch)
        position += 1
    decode_b = steps * batch / (time.perf_counter() - t)
    return best * 1e3, decode1, decode_b, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", required=True)
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--capacity", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--prefill-rounds", type=int, default=3)
    a = ap.parse_args()
    folders = dict(m.split("=", 1) for m in a.model)
    rows = a.rows.split(",")
    for name, folder in folders.items():
        with open(os.path.join(folder, "prompts.txt")) as f:
            prompts = [[int(t) for t in line.split()] for line in f if line.strip()]
        cfg, params = load(folder)
        for row in rows:
            model, dtype = row.rsplit("_", 1)
            if model != name:
                continue
            print(f"JAX {row} ...", file=sys.stderr, flush=True)
            p = variant(params, dtype)
            prefill_ms, d1, db, toks = measure(cfg, p, prompts, a.steps, a.capacity, a.batch,
                                                 a.prefill_rounds)
            print(f"  prefill {prefill_ms:.1f} ms, decode {d1:.1f} tok/s (batch 1), "
                  f"{db:.1f} tok/s (batch {a.batch})", file=sys.stderr, flush=True)
            print(f"{row}_prefill_ms: {prefill_ms:.4f}")
            print(f"{row}_decode1_tps: {d1:.4f}")
            print(f"{row}_decode{a.batch}_tps: {db:.4f}")
            print(f"{row}_tokens: {' '.join(map(str, toks))}", flush=True)
            del p


if __name__ == "__main__":
    sys.exit(main())
