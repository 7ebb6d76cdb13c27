"""JAX goldens for `jaxrs::nn` (tests/nn.rs): layers, attention, recurrent cells, losses,
activations and initialisers.

Run: /work/venv/bin/python tests/golden/gen_nn.py   (JAX 0.10.2; writes tests/golden/nn.json)

flax is not installed, so the reference layers below are written in plain jax.numpy following
flax's math and defaults (nn.Dense, nn.LayerNorm with use_fast_variance, nn.RMSNorm,
nn.dot_product_attention, nn.make_attention_mask / make_causal_mask / combine_masks,
nn.MultiHeadDotProductAttention, nn.GRUCell, nn.LSTMCell, nn.Conv) and optax's losses. Inputs are float32
from a fixed numpy seed; every value and gradient is JAX's. Initialisers are
jax.nn.initializers applied to fixed keys, stored as raw float32 bits.
"""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np

assert jax.__version__ == "0.10.2", jax.__version__
jax.config.update("jax_platforms", "cpu")

rng = np.random.default_rng(20261201)


def arr(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def enc(a):
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": [float(v) for v in a.ravel()]}


def bits(a):
    a = np.asarray(a)
    assert a.dtype == np.float32
    return {"shape": list(a.shape), "bits": [int(v) for v in a.view(np.uint32).ravel()]}


out = {"jax_version": jax.__version__}

# ---- flax's math, in jnp ----------------------------------------------------------------


def dense(x, kernel, bias=None):
    y = jax.lax.dot_general(x, kernel, (((x.ndim - 1,), (0,)), ((), ())))
    return y if bias is None else y + bias


def layer_norm(x, scale, bias, eps=1e-6):
    mean = jnp.mean(x, -1, keepdims=True)
    mean2 = jnp.mean(x * x, -1, keepdims=True)
    var = jnp.maximum(0.0, mean2 - mean * mean)
    mul = jax.lax.rsqrt(var + eps) * scale
    return (x - mean) * mul + bias


def rms_norm(x, scale, eps=1e-6):
    mean2 = jnp.mean(x * x, -1, keepdims=True)
    return x * (jax.lax.rsqrt(mean2 + eps) * scale)


def attention(q, k, v, mask=None):
    depth = q.shape[-1]
    q = q / jnp.sqrt(depth).astype(q.dtype)
    w = jnp.einsum("...qhd,...khd->...hqk", q, k)
    if mask is not None:
        w = jnp.where(mask, w, jnp.finfo(w.dtype).min)
    w = jax.nn.softmax(w)
    return jnp.einsum("...hqk,...khd->...qhd", w, v)


def make_attention_mask(qi, ki):
    m = jnp.multiply(jnp.expand_dims(qi, -1), jnp.expand_dims(ki, -2))
    return jnp.expand_dims(m, -3).astype(jnp.float32)


def make_causal_mask(x):
    idxs = jnp.broadcast_to(jnp.arange(x.shape[-1], dtype=jnp.int32), x.shape)
    m = jnp.greater_equal(jnp.expand_dims(idxs, -1), jnp.expand_dims(idxs, -2))
    return jnp.expand_dims(m, -3).astype(jnp.float32)


def mha(p, xq, xkv, mask):
    q = jnp.einsum("...f,fhd->...hd", xq, p["query_kernel"]) + p["query_bias"]
    k = jnp.einsum("...f,fhd->...hd", xkv, p["key_kernel"]) + p["key_bias"]
    v = jnp.einsum("...f,fhd->...hd", xkv, p["value_kernel"]) + p["value_bias"]
    x = attention(q, k, v, mask)
    return jnp.einsum("...hd,hdo->...o", x, p["out_kernel"]) + p["out_bias"]


def gru(p, h, x):
    r = jax.nn.sigmoid(dense(x, p["ir"]) + dense(h, p["hr"], p["hr_b"]))
    z = jax.nn.sigmoid(dense(x, p["iz"]) + dense(h, p["hz"], p["hz_b"]))
    n = jnp.tanh(dense(x, p["in"], p["in_b"]) + r * dense(h, p["hn"], p["hn_b"]))
    h = (1.0 - z) * n + z * h
    return h, h


def lstm(p, carry, x):
    c, h = carry
    i = jax.nn.sigmoid(dense(x, p["ii"]) + dense(h, p["hi"], p["hi_b"]))
    f = jax.nn.sigmoid(dense(x, p["if"]) + dense(h, p["hf"], p["hf_b"]))
    g = jnp.tanh(dense(x, p["ig"]) + dense(h, p["hg"], p["hg_b"]))
    o = jax.nn.sigmoid(dense(x, p["io"]) + dense(h, p["ho"], p["ho_b"]))
    c = f * c + i * g
    h = o * jnp.tanh(c)
    return (c, h), h


def ce_int(logits, labels):
    label_logits = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    return jax.nn.logsumexp(logits, axis=-1) - label_logits


def ce_masked(logits, labels, mask):
    losses = ce_int(logits, labels)
    kept = jnp.where(mask, losses, 0.0)
    return jnp.sum(kept) / jnp.maximum(jnp.sum(mask.astype(losses.dtype)), 1.0)


def bce(logits, labels):
    return -labels * jax.nn.log_sigmoid(logits) - (1.0 - labels) * jax.nn.log_sigmoid(-logits)


def val_grads(f, args, weight):
    """f(*args) and the gradients of sum(f(*args) * weight) with respect to every arg."""
    y = f(*args)
    g = jax.grad(lambda *a: jnp.sum(f(*a) * weight), argnums=tuple(range(len(args))))(*args)
    return y, g


# ---- norms ------------------------------------------------------------------------------
x = arr(3, 6)
x[1] = x[1] * 0.1 + 2.0  # an offset row: the fast variance cancels (mildly)
scale, bias, w = arr(6), arr(6), arr(3, 6)
y, (gx, gs, gb) = val_grads(layer_norm, (x, scale, bias), w)
out["layer_norm"] = {"x": enc(x), "scale": enc(scale), "bias": enc(bias), "w": enc(w),
                     "y": enc(y), "gx": enc(gx), "gscale": enc(gs), "gbias": enc(gb)}
y, (gx, gs) = val_grads(rms_norm, (x, scale), w)
out["rms_norm"] = {"y": enc(y), "gx": enc(gx), "gscale": enc(gs)}

# ---- dense and embed --------------------------------------------------------------------
x3 = arr(2, 3, 4)
kernel, b = arr(4, 5), arr(5)
table = arr(7, 3)
ids = np.array([[0, 6, 2], [3, 3, 1]], np.int32)
out["dense"] = {"x": enc(x3), "kernel": enc(kernel), "bias": enc(b), "y": enc(dense(x3, kernel, b)),
                "table": enc(table), "ids": enc(ids), "embed": enc(jnp.take(table, ids, axis=0))}

# ---- attention --------------------------------------------------------------------------
B, L, H, D = 2, 4, 2, 3
q, k, v = arr(B, L, H, D), arr(B, L, H, D), arr(B, L, H, D)
w_att = arr(B, L, H, D)
valid = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], np.int32)
causal = make_causal_mask(valid)
padding = make_attention_mask(valid, valid)
combined = jnp.logical_and(causal, padding).astype(jnp.float32)
att = {"q": enc(q), "k": enc(k), "v": enc(v), "w": enc(w_att), "valid": enc(valid),
       "causal_mask": enc(causal), "padding_mask": enc(padding)}
for name, mask in [("none", None), ("causal", causal), ("padding", padding), ("combined", combined)]:
    y, (gq, gk, gv) = val_grads(lambda q, k, v: attention(q, k, v, mask), (q, k, v), w_att)
    att[name] = {"y": enc(y), "gq": enc(gq), "gk": enc(gk), "gv": enc(gv)}
out["attention"] = att

F, O = 6, 5
p_mha = {"query_kernel": arr(F, H, D, scale=0.4), "query_bias": arr(H, D, scale=0.1),
         "key_kernel": arr(F, H, D, scale=0.4), "key_bias": arr(H, D, scale=0.1),
         "value_kernel": arr(F, H, D, scale=0.4), "value_bias": arr(H, D, scale=0.1),
         "out_kernel": arr(H, D, O, scale=0.4), "out_bias": arr(O, scale=0.1)}
xq, xkv = arr(B, L, F), arr(B, L + 1, F)
valid_kv = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]], np.int32)
mask_mha = make_attention_mask(valid, valid_kv)
w_mha = arr(B, L, O)
y = mha(p_mha, xq, xkv, mask_mha)
g = jax.grad(lambda p, xq: jnp.sum(mha(p, xq, xkv, mask_mha) * w_mha), argnums=(0, 1))(p_mha, xq)
out["mha"] = {"params": {kk: enc(vv) for kk, vv in p_mha.items()}, "xq": enc(xq), "xkv": enc(xkv),
              "valid_kv": enc(valid_kv), "w": enc(w_mha), "y": enc(y),
              "gparams": {kk: enc(vv) for kk, vv in g[0].items()}, "gxq": enc(g[1])}

# ---- recurrent cells, scanned ------------------------------------------------------------
T, IN, HID = 4, 3, 5
xs = arr(T, B, IN)
p_gru = {n: arr(IN, HID, scale=0.5) for n in ["ir", "iz", "in"]}
p_gru.update({n: arr(HID, HID, scale=0.5) for n in ["hr", "hz", "hn"]})
p_gru.update({n + "_b": arr(HID, scale=0.1) for n in ["in", "hr", "hz", "hn"]})
h0 = arr(B, HID, scale=0.5)
w_hs = arr(T, B, HID)


def gru_loss(p, h0, xs):
    return jnp.sum(jax.lax.scan(lambda h, x: gru(p, h, x), h0, xs)[1] * w_hs)


h_t, hs = jax.lax.scan(lambda h, x: gru(p_gru, h, x), h0, xs)
gp, gh0, gxs = jax.grad(gru_loss, argnums=(0, 1, 2))(p_gru, h0, xs)
out["gru"] = {"params": {kk: enc(vv) for kk, vv in p_gru.items()}, "h0": enc(h0), "xs": enc(xs),
              "w": enc(w_hs), "h_t": enc(h_t), "hs": enc(hs),
              "gparams": {kk: enc(vv) for kk, vv in gp.items()}, "gh0": enc(gh0), "gxs": enc(gxs)}

p_lstm = {n: arr(IN, HID, scale=0.5) for n in ["ii", "if", "ig", "io"]}
p_lstm.update({n: arr(HID, HID, scale=0.5) for n in ["hi", "hf", "hg", "ho"]})
p_lstm.update({n + "_b": arr(HID, scale=0.1) for n in ["hi", "hf", "hg", "ho"]})
c0 = arr(B, HID, scale=0.5)


def lstm_loss(p, c0, h0, xs):
    return jnp.sum(jax.lax.scan(lambda ch, x: lstm(p, ch, x), (c0, h0), xs)[1] * w_hs)


(c_t, h_t), hs = jax.lax.scan(lambda ch, x: lstm(p_lstm, ch, x), (c0, h0), xs)
gp, gc0, gh0, gxs = jax.grad(lstm_loss, argnums=(0, 1, 2, 3))(p_lstm, c0, h0, xs)
out["lstm"] = {"params": {kk: enc(vv) for kk, vv in p_lstm.items()}, "c0": enc(c0), "h0": enc(h0),
               "c_t": enc(c_t), "h_t": enc(h_t), "hs": enc(hs),
               "gparams": {kk: enc(vv) for kk, vv in gp.items()}, "gc0": enc(gc0), "gh0": enc(gh0),
               "gxs": enc(gxs)}

# ---- losses -----------------------------------------------------------------------------
logits = arr(6, 5, scale=3.0)
logits[0, 2] = 40.0  # a confident row
labels = np.array([2, 0, 4, 1, 1, 3], np.int32)
mask = np.array([True, True, False, True, False, True])
ce = ce_int(logits, labels)
g_ce = jax.grad(lambda l: jnp.mean(ce_int(l, labels)))(logits)
cem = ce_masked(logits, labels, mask)
g_cem = jax.grad(lambda l: ce_masked(l, labels, mask))(logits)
targets = arr(6, 5)
mse = jnp.mean((logits - targets) ** 2)
g_mse = jax.grad(lambda p: jnp.mean((p - targets) ** 2))(logits)
bce_logits = arr(6, 5, scale=3.0)
bce_logits[0, :2] = [60.0, -60.0]
bce_labels = rng.uniform(size=(6, 5)).astype(np.float32)
bce_labels[0, :2] = [0.0, 1.0]
bce_v = bce(bce_logits, bce_labels)
g_bce = jax.grad(lambda l: jnp.mean(bce(l, bce_labels)))(bce_logits)
acc = jnp.mean((jnp.argmax(logits, -1) == labels).astype(jnp.float32))
out["losses"] = {"logits": enc(logits), "labels": enc(labels), "mask": enc(mask),
                 "ce": enc(ce), "g_ce_mean": enc(g_ce), "ce_masked": enc(cem), "g_ce_masked": enc(g_cem),
                 "targets": enc(targets), "mse": enc(mse), "g_mse": enc(g_mse),
                 "bce_logits": enc(bce_logits), "bce_labels": enc(bce_labels), "bce": enc(bce_v),
                 "g_bce_mean": enc(g_bce), "accuracy": enc(acc)}

# ---- activations ------------------------------------------------------------------------
xa = np.concatenate([arr(10, scale=3.0), np.array([0.0, -30.0, 30.0, 1e-3], np.float32)])
acts = {"x": enc(xa)}
for name, f in [("silu", jax.nn.silu), ("leaky_relu", lambda x: jax.nn.leaky_relu(x, 0.1)),
                ("elu", lambda x: jax.nn.elu(x, 1.5)), ("log_sigmoid", jax.nn.log_sigmoid),
                ("gelu", lambda x: jax.nn.gelu(x, approximate=True)),
                ("gelu_exact", lambda x: jax.nn.gelu(x, approximate=False))]:
    acts[name] = {"y": enc(f(xa)), "g": enc(jax.grad(lambda x: jnp.sum(f(x)))(xa))}
out["activations"] = acts

# ---- initialisers -----------------------------------------------------------------------
I = jax.nn.initializers
inits = {
    "glorot_normal": I.glorot_normal(), "glorot_uniform": I.glorot_uniform(),
    "lecun_normal": I.lecun_normal(), "lecun_uniform": I.lecun_uniform(),
    "he_normal": I.he_normal(), "he_uniform": I.he_uniform(),
    "normal_0.02": I.normal(0.02), "uniform_0.5": I.uniform(0.5),
    "truncated_normal_0.1": I.truncated_normal(0.1),
    "variance_scaling_2_fan_out_normal": I.variance_scaling(2.0, "fan_out", "normal"),
    "variance_scaling_0.5_fan_avg_uniform": I.variance_scaling(0.5, "fan_avg", "uniform"),
    "embed": I.variance_scaling(1.0, "fan_in", "normal", out_axis=0),
}
init_cases = []
for seed, shape in [(0, (4, 6)), (7, (3, 3, 2, 8))]:
    for name, f in inits.items():
        init_cases.append({"name": name, "seed": seed, "value": bits(f(jax.random.PRNGKey(seed), shape, jnp.float32))})
# orthogonal goes through a QR factorisation: values, not bits.
for seed, scale, shape in [(3, 1.0, (5, 5)), (4, 2.0, (3, 6)), (5, 1.0, (6, 3))]:
    init_cases.append({"name": "orthogonal", "seed": seed, "scale": scale,
                       "value": enc(I.orthogonal(scale)(jax.random.PRNGKey(seed), shape, jnp.float32))})
# delta_orthogonal: orthogonal at the kernel's centre; constant, ones and zeros by value.
for seed, scale, shape in [(6, 1.0, (3, 4, 4)), (8, 2.0, (3, 2, 3, 5)), (9, 1.0, (2, 3, 1, 2, 2))]:
    init_cases.append({"name": "delta_orthogonal", "seed": seed, "scale": scale,
                       "value": enc(I.delta_orthogonal(scale)(jax.random.PRNGKey(seed), shape, jnp.float32))})
for name, f in [("zeros", I.zeros), ("ones", I.ones), ("constant_0.25", I.constant(0.25)),
                ("constant_-3", I.constant(-3.0))]:
    init_cases.append({"name": name, "seed": 0, "value": bits(f(jax.random.PRNGKey(0), (2, 3), jnp.float32))})
out["initializers"] = init_cases

# dropout: flax's nn.Dropout body on a fixed key.
xd = arr(4, 8)
dkey = jax.random.PRNGKey(11)
keep = jax.random.bernoulli(dkey, 1.0 - 0.25, xd.shape)
out["dropout"] = {"x": enc(xd), "seed": 11, "rate": 0.25,
                  "y": bits(jax.lax.select(keep, xd / (1.0 - 0.25), jnp.zeros_like(xd)))}

# ---- conv2d (flax nn.Conv: NHWC, HWIO, SAME and stride 1 by default) ----------------------
xc = arr(2, 6, 5, 3)
kc, bc = arr(3, 3, 3, 4, scale=0.3), arr(4, scale=0.1)
wc_same, wc_valid = arr(2, 6, 5, 4), arr(2, 2, 2, 4)


def conv(x, k, b, strides, padding):
    return jax.lax.conv_general_dilated(x, k, strides, padding,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC")) + b


convs = {"x": enc(xc), "kernel": enc(kc), "bias": enc(bc), "w_same": enc(wc_same), "w_valid": enc(wc_valid)}
for name, strides, padding, wc in [("same", (1, 1), "SAME", wc_same), ("valid_s2", (2, 2), "VALID", wc_valid)]:
    f = lambda x, k, b: conv(x, k, b, strides, padding)
    y, (gx, gk, gb) = val_grads(f, (xc, kc, bc), wc)
    convs[name] = {"y": enc(y), "gx": enc(gx), "gkernel": enc(gk), "gbias": enc(gb)}
convs["init_seed"] = 9
convs["init_kernel"] = bits(I.lecun_normal()(jax.random.PRNGKey(9), (3, 3, 3, 4), jnp.float32))
out["conv2d"] = convs

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn.json")
with open(path, "w") as f:
    json.dump(out, f, indent=None, separators=(",", ":"))
    f.write("\n")
print("wrote", path)
