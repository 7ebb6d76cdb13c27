"""Goldens for jaxrs-models: a byte-level BPE tokenizer and tiny random Hugging Face models.

Run from the repository root (the data file is read from the shared folder beside the repo,
never copied into it):

    /work/venv/bin/python jaxrs-models/tests/golden/gen_hf.py \
        --data ../shared/data/tinyshakespeare.txt
    # and, once, the small trained demo model of the examples (about 5 minutes of one core):
    /work/venv/bin/python jaxrs-models/tests/golden/gen_hf.py --train-demo

Made with transformers 5.25.0, torch 2.15.0 (CPU, one thread), tokenizers 0.23.3 and
safetensors 0.8.0; the versions used are also written into every JSON file this writes.
Python is only needed to regenerate these committed files; jaxrs never runs it.

What it writes under jaxrs-models/tests/golden/hf/:

* tokenizer/: a GPT-2 style byte-level BPE (ByteLevel pre-tokenizer and decoder, vocabulary
  1024, special token `<|endoftext|>` = id 0) trained on the first 90% of tiny Shakespeare,
  saved with `PreTrainedTokenizerFast.save_pretrained`; tokenizer_expected.json holds texts ->
  ids -> decoded text, as the Rust tokenizer must reproduce them.
* gpt2, llama, llama3, qwen2, mistral, llama-sharded, llama-bf16, gpt2-f16: tiny models
  initialised at random from fixed seeds, saved with `save_pretrained`, each with
  expected.safetensors (exact tensors: input_ids, attention_mask, logits_row0, logits_row1,
  greedy_prompt, greedy_tokens) and expected.json (metadata: texts, lengths, margins, notes).

Everything is deterministic: fixed seeds, one torch thread, eager attention, float32 math.
Weights are initialised with a larger std than Hugging Face's 0.02, and biases and norm
weights are randomised (HF initialises them to 0 and 1, which would let a loader that drops
them pass), so that the logits are far from uniform: the script asserts that at every greedy
step the top logit beats the second by at least MIN_MARGIN and records the smallest margin.
"""

import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import time

import numpy as np
import safetensors
import tokenizers
import torch
import transformers
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (
    AutoModelForCausalLM,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    PreTrainedTokenizerFast,
    Qwen2Config,
    Qwen2ForCausalLM,
)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "hf")
DEMO_OUT = os.path.normpath(os.path.join(HERE, "..", "..", "assets", "shakespeare-gpt2"))

VOCAB = 1024
EOT = "<|endoftext|>"
SEQ = 24  # length of the padded logits batch
GREEDY_NEW = 32
MIN_MARGIN = 1e-3

VERSIONS = {
    "transformers": transformers.__version__,
    "torch": torch.__version__,
    "tokenizers": tokenizers.__version__,
    "safetensors": safetensors.__version__,
    "numpy": np.__version__,
    "python": sys.version.split()[0],
}

# Texts the tokenizer must encode exactly as Hugging Face does.
TOKENIZER_TEXTS = [
    "First Citizen:\nBefore we proceed any further, hear me speak.",
    "ROMEO:\nBut, soft! what light through yonder window breaks?",
    "To be, or not to be, that is the question:",
    "JULIET:\nO Romeo, Romeo! wherefore art thou Romeo?",
    "Now is the winter of our discontent\nMade glorious summer by this sun of York;",
    "",
    " ",
    "   ",
    "\n",
    "\n\n\n",
    "  leading spaces",
    "trailing spaces   ",
    "multiple     spaces   inside",
    "tabs\tand\ttabs",
    "line one\r\nline two",
    "0123456789",
    "In 1623, 36 plays; 3.14159 and 2,718 and -42.",
    "Hello, world!?;:'\"()[]{}<>@#$%^&*_+=|\\/~`",
    "I'll we're they've don't it's o'er",
    "café — naïve 日本語 🙂",
    "Ünïcödé: Ελληνικά, Русский, עברית, العربية",
    "emoji only: 🙂🙃👍🏽👨‍👩‍👧",
    "a",
    "A",
    "KING RICHARD III",
    "Hello<|endoftext|>world",
    "<|endoftext|>",
    "end of text <|endoftext|> then more <|endoftext|>",
    "<|endoftext",
    "Thou art more lovely and more temperate:\nRough winds do shake the darling buds of May,",
]

# The two lines of the logits batch (row 1 is shorter than SEQ tokens: padded) and the prompt.
BATCH_TEXTS = [
    "KING HENRY V:\nOnce more unto the breach, dear friends, once more;\nOr close the wall up with our English dead.",
    "HAMLET:\nWhat a piece of work is a man!",
]
GREEDY_TEXT = "ROMEO:\nBut, soft! what light through yonder window"
GREEDY_PROMPT_LEN = 10


def log(*a):
    print(*a, flush=True)


def split_text(path):
    text = open(path, encoding="utf-8").read()
    cut = int(len(text) * 0.9)
    # Cut at a line break so that no line is split between train and held out.
    cut = text.index("\n", cut) + 1
    return text, text[:cut], text[cut:]


# ------------------------------------------------------------------------------------------
# Tokenizer


def train_tokenizer(train_text):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        min_frequency=2,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    # One "sentence" per line, as GPT-2's pre-tokenizer sees the text; the newlines stay.
    lines = train_text.splitlines(keepends=True)
    tok.train_from_iterator(lines, trainer=trainer, length=len(lines))
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    return tok


def save_tokenizer(tok, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=EOT, eos_token=EOT, unk_token=EOT, model_max_length=1024
    )
    fast.save_pretrained(out_dir)
    # transformers 5 names its class "TokenizersBackend", which transformers 4 does not know;
    # "PreTrainedTokenizerFast" loads the same tokenizer in both.
    path = os.path.join(out_dir, "tokenizer_config.json")
    cfg = json.load(open(path))
    cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    write_json(path, cfg)
    return fast


def tokenizer_goldens(out_dir):
    """Encodings by the saved file (as the Rust crate will read it), not the in-memory object."""
    tok = Tokenizer.from_file(os.path.join(out_dir, "tokenizer.json"))
    fast = PreTrainedTokenizerFast.from_pretrained(out_dir)
    cases = []
    for text in TOKENIZER_TEXTS:
        ids = tok.encode(text, add_special_tokens=True).ids
        ids_plain = tok.encode(text, add_special_tokens=False).ids
        # transformers' fast tokenizer gives the same ids (it wraps the same Rust tokenizer).
        assert fast(text)["input_ids"] == ids, text
        decoded = tok.decode(ids, skip_special_tokens=False)
        decoded_skip = tok.decode(ids, skip_special_tokens=True)
        tokens = tok.encode(text).tokens
        cases.append(
            {
                "text": text,
                "ids": ids,
                "ids_no_special": ids_plain,
                "tokens": tokens,
                "decoded": decoded,
                "decoded_skip_special": decoded_skip,
            }
        )
    eot_id = tok.token_to_id(EOT)
    doc = {
        "about": "texts -> ids by Hugging Face tokenizers from tokenizer/tokenizer.json; "
        "decoded = decode(ids, skip_special_tokens=False), decoded_skip_special = "
        "decode(ids, skip_special_tokens=True). gen_hf.py writes this file.",
        "versions": VERSIONS,
        "vocab_size": tok.get_vocab_size(with_added_tokens=True),
        "special_tokens": {EOT: eot_id},
        "eos_token_id": eot_id,
        "bos_token_id": eot_id,
        "tokenizer_json_sha256": sha256(os.path.join(out_dir, "tokenizer.json")),
        "cases": cases,
    }
    write_json(os.path.join(OUT, "tokenizer_expected.json"), doc)
    return tok


# ------------------------------------------------------------------------------------------
# Models


class MarginError(Exception):
    """A greedy step whose top two logits are too close for an exact golden."""


def with_seeds(base, build):
    """`build(seed)` for seeds base, base + 100, ... until every greedy margin passes.

    The search is deterministic, so a rerun lands on the same seed; the seed is recorded.
    """
    for attempt in range(20):
        seed = base + 100 * attempt
        try:
            return build(seed)
        except MarginError as e:
            log(f"  seed {seed}: {e}; trying the next seed")
    raise RuntimeError(f"no seed from {base} gives greedy margins >= {MIN_MARGIN}")


def randomize_(model, seed, std):
    """Weights ~ N(0, std); biases ~ N(0, 0.1); norm scales ~ 1 + N(0, 0.1).

    Tied weights are one Parameter, so they are drawn once.
    """
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            is_norm = "norm" in name or ".ln_" in name or name.startswith("transformer.ln_f")
            if is_norm and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))


def encode(tok, text):
    return tok.encode(text).ids


@torch.no_grad()
def logits_of(model, ids):
    x = torch.tensor([ids], dtype=torch.long)
    return model(input_ids=x, attention_mask=torch.ones_like(x)).logits[0].float()


@torch.no_grad()
def greedy_reference(model, prompt):
    """A greedy loop without a cache (the full sequence each step), and each step's margin."""
    ids = list(prompt)
    margins = []
    for _ in range(GREEDY_NEW):
        last = logits_of(model, ids)[-1]
        top = torch.topk(last, 2).values
        margins.append(float(top[0] - top[1]))
        ids.append(int(torch.argmax(last)))
    return ids[len(prompt):], margins


@torch.no_grad()
def greedy_generate(model, prompt):
    x = torch.tensor([prompt], dtype=torch.long)
    out = model.generate(
        input_ids=x,
        attention_mask=torch.ones_like(x),
        do_sample=False,
        max_new_tokens=GREEDY_NEW,
        min_new_tokens=GREEDY_NEW,
        eos_token_id=None,
        pad_token_id=0,
    )
    new = out[0, len(prompt):].tolist()
    assert len(new) == GREEDY_NEW, len(new)
    return new


def batch_inputs(tok):
    rows = [encode(tok, t)[:SEQ] for t in BATCH_TEXTS]
    assert len(rows[0]) == SEQ, "row 0 must fill the batch"
    assert len(rows[1]) < SEQ, "row 1 must be padded"
    ids = np.zeros((2, SEQ), dtype=np.int32)
    mask = np.zeros((2, SEQ), dtype=np.int32)
    for r, row in enumerate(rows):
        ids[r, : len(row)] = row
        mask[r, : len(row)] = 1
    return rows, ids, mask


def goldens(model, tok, name, notes, reference_model=None, extra=None):
    """expected.safetensors + expected.json for a model computing in float32.

    `reference_model` (for the bf16/f16 variants) is the same model in its stored dtype: its
    own logits and greedy tokens are recorded beside the float32 goldens, for information.
    """
    model.eval()
    rows, ids, mask = batch_inputs(tok)
    prompt = encode(tok, GREEDY_TEXT)[:GREEDY_PROMPT_LEN]
    assert len(prompt) == GREEDY_PROMPT_LEN

    l0 = logits_of(model, rows[0])
    l1 = logits_of(model, rows[1])
    # The padded batch with its mask gives the unpadded rows' logits where the mask is 1.
    with torch.no_grad():
        lb = model(
            input_ids=torch.tensor(ids, dtype=torch.long),
            attention_mask=torch.tensor(mask, dtype=torch.long),
        ).logits.float()
    pad_diff = max(
        float((lb[0] - l0).abs().max()), float((lb[1, : len(rows[1])] - l1).abs().max())
    )
    assert pad_diff < 1e-4, pad_diff

    ref_tokens, margins = greedy_reference(model, prompt)
    gen_tokens = greedy_generate(model, prompt)
    assert gen_tokens == ref_tokens, (name, gen_tokens, ref_tokens)
    min_margin = min(margins)
    if min_margin < MIN_MARGIN:
        raise MarginError(f"{name}: greedy margin {min_margin:.3g} < {MIN_MARGIN}")

    tensors = {
        "input_ids": torch.tensor(ids),
        "attention_mask": torch.tensor(mask),
        "logits_row0": l0.contiguous(),
        "logits_row1": l1.contiguous(),
        "greedy_prompt": torch.tensor(prompt, dtype=torch.int32),
        "greedy_tokens": torch.tensor(gen_tokens, dtype=torch.int32),
    }
    meta = {
        "model": name,
        "versions": VERSIONS,
        "math": "float32, attn_implementation=eager, one torch thread",
        "batch_texts": BATCH_TEXTS,
        "row_lengths": [len(r) for r in rows],
        "padding": "right, with pad id 0 and attention_mask 0; logits_row0 [24, V] and "
        "logits_row1 [row_lengths[1], V] are each computed alone (batch 1, no padding)",
        "padded_batch_max_abs_diff": pad_diff,
        "logits_max_abs": max(float(l0.abs().max()), float(l1.abs().max())),
        "greedy_text": GREEDY_TEXT,
        "greedy_prompt_len": GREEDY_PROMPT_LEN,
        "greedy": "model.generate(do_sample=False, max_new_tokens=32, min_new_tokens=32, "
        "eos_token_id=None, pad_token_id=0): no stop token; equal to a cache-free greedy loop",
        "greedy_min_margin": min_margin,
        "greedy_margins": margins,
        "greedy_decoded": tok.decode(gen_tokens),
        "notes": notes,
    }
    if reference_model is not None:
        reference_model.eval()
        tensors["logits_row0_native"] = logits_of(reference_model, rows[0]).contiguous()
        tensors["logits_row1_native"] = logits_of(reference_model, rows[1]).contiguous()
        native_tokens = greedy_generate(reference_model, prompt)
        tensors["greedy_tokens_native"] = torch.tensor(native_tokens, dtype=torch.int32)
        meta["native"] = (
            "*_native: torch computing in the stored dtype (for information); the float32 "
            "goldens (logits_row0, logits_row1, greedy_tokens) are computed in float32 from the "
            "stored (rounded) weights and are the reference"
        )
        meta["native_max_abs_diff_row0"] = float(
            (tensors["logits_row0_native"] - l0).abs().max()
        )
        meta["native_greedy_equal"] = native_tokens == gen_tokens
    if extra:
        meta.update(extra)
    d = os.path.join(OUT, name)
    save_file(tensors, os.path.join(d, "expected.safetensors"))
    write_json(os.path.join(d, "expected.json"), meta)
    log(f"  {name}: min greedy margin {min_margin:.4g}, |logits| <= {meta['logits_max_abs']:.3g}")
    log(f"    greedy: {tok.decode(gen_tokens)!r}")
    return meta


def save_model(model, name, **kw):
    d = os.path.join(OUT, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    model.save_pretrained(d, **kw)
    return d


def reload(name, dtype=torch.float32):
    return AutoModelForCausalLM.from_pretrained(
        os.path.join(OUT, name), attn_implementation="eager", dtype=dtype
    ).eval()


def common(cfg):
    cfg.vocab_size = VOCAB
    cfg.bos_token_id = 0
    cfg.eos_token_id = 0
    cfg.pad_token_id = None
    cfg._attn_implementation = "eager"
    return cfg


def make(cls, cfg, seed, std):
    cfg.initializer_range = std  # what config.json then says is what was drawn
    torch.manual_seed(seed)
    model = cls(common(cfg)).eval()
    randomize_(model, seed, std)
    return model


def llama_cfg(**kw):
    base = dict(
        hidden_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=176,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        max_position_embeddings=256,
        tie_word_embeddings=False,
        hidden_act="silu",
    )
    base.update(kw)
    return base


def max_logit_diff(a, b, tok):
    rows, _, _ = batch_inputs(tok)
    return float((logits_of(a, rows[0]) - logits_of(b, rows[0])).abs().max())


def build_gpt2(tok, seed):
    """GPT-2: tied embeddings, Conv1D [in, out] kernels, learned positions, LayerNorm, gelu_new;
    and the same weights stored in float16."""
    gpt2 = make(
        GPT2LMHeadModel,
        GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=128, n_inner=None),
        seed=seed,
        std=0.3,
    )
    save_model(gpt2, "gpt2")
    metas = {}
    metas["gpt2"] = goldens(
        reload("gpt2"), tok, "gpt2", "GPT-2: tied wte/lm_head, Conv1D [in, out] kernels",
        extra={"seed": seed},
    )
    save_model(reload("gpt2").to(torch.float16), "gpt2-f16")
    metas["gpt2-f16"] = goldens(
        reload("gpt2-f16", torch.float32),
        tok,
        "gpt2-f16",
        "gpt2's weights stored in float16 (config dtype float16)",
        reference_model=reload("gpt2-f16", torch.float16),
        extra={
            "seed": seed,
            "f32_weights_max_abs_logit_diff_vs_gpt2": max_logit_diff(
                reload("gpt2-f16", torch.float32), reload("gpt2"), tok
            ),
        },
    )
    return metas


def build_llama(tok, seed):
    """Llama: grouped-query attention (4 heads, 2 KV heads), untied lm_head, RMSNorm, SwiGLU;
    the same weights sharded, and stored in bfloat16."""
    llama = make(LlamaForCausalLM, LlamaConfig(**llama_cfg()), seed=seed, std=0.3)
    save_model(llama, "llama")
    llama = reload("llama")
    metas = {}
    metas["llama"] = goldens(
        llama, tok, "llama", "config.json as transformers 5 writes it: rope in rope_parameters",
        extra={"seed": seed},
    )

    d = save_model(llama, "llama-sharded", max_shard_size="300KB")
    shards = sorted(f for f in os.listdir(d) if f.startswith("model-"))
    assert len(shards) >= 3 and os.path.exists(os.path.join(d, "model.safetensors.index.json"))
    assert max_logit_diff(reload("llama-sharded"), llama, tok) == 0.0
    write_json(
        os.path.join(d, "expected.json"),
        {
            "model": "llama-sharded",
            "versions": VERSIONS,
            "seed": seed,
            "same_weights_as": "llama",
            "expected": "../llama/expected.safetensors (the same weights: logits equal exactly)",
            "shards": shards,
        },
    )

    save_model(reload("llama").to(torch.bfloat16), "llama-bf16")
    metas["llama-bf16"] = goldens(
        reload("llama-bf16", torch.float32),
        tok,
        "llama-bf16",
        "llama's weights stored in bfloat16 (config dtype bfloat16)",
        reference_model=reload("llama-bf16", torch.bfloat16),
        extra={
            "seed": seed,
            "f32_weights_max_abs_logit_diff_vs_llama": max_logit_diff(
                reload("llama-bf16", torch.float32), llama, tok
            ),
        },
    )
    return metas


def build_llama3(tok, seed):
    """Llama 3.1 style: llama3 rope scaling, tied embeddings. original_max_position_embeddings
    is small so that the scaling reaches the frequencies the test positions use."""
    scaling = {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 16,
        "rope_type": "llama3",
    }
    cfg3 = llama_cfg(tie_word_embeddings=True, rope_theta=500000.0, rope_scaling=scaling)
    llama3 = make(LlamaForCausalLM, LlamaConfig(**cfg3), seed=seed, std=0.3)
    d = save_model(llama3, "llama3")
    # Published Llama 3.1 configs carry `rope_theta` and `rope_scaling` (transformers 4); this
    # transformers writes `rope_parameters`. Rewrite it the published way, so that the goldens
    # cover both spellings, and check that transformers reads it back to the same model.
    cpath = os.path.join(d, "config.json")
    cj = json.load(open(cpath))
    rp = cj.pop("rope_parameters")
    cj["rope_theta"] = rp.pop("rope_theta")
    cj["rope_scaling"] = rp
    write_json(cpath, cj)
    llama3_back = reload("llama3")
    assert max_logit_diff(llama3_back, llama3, tok) == 0.0
    unscaled = LlamaForCausalLM(
        common(LlamaConfig(**llama_cfg(tie_word_embeddings=True, rope_theta=500000.0)))
    ).eval()
    unscaled.load_state_dict(llama3.state_dict())
    scaling_effect = max_logit_diff(unscaled, llama3, tok)
    assert scaling_effect > 1e-2, scaling_effect
    return {
        "llama3": goldens(
            llama3_back,
            tok,
            "llama3",
            "Llama 3.1 style: config.json in the published spelling (rope_theta and "
            "rope_scaling with rope_type llama3), tied embeddings",
            extra={"seed": seed, "rope_scaling_max_abs_logit_effect": scaling_effect},
        )
    }


def build_qwen2(tok, seed):
    """Qwen2: q/k/v biases (randomised), tied embeddings, no sliding window."""
    qcfg = Qwen2Config(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=176,
        rms_norm_eps=1e-6,
        rope_theta=1000000.0,
        max_position_embeddings=256,
        tie_word_embeddings=True,
        use_sliding_window=False,
    )
    qwen2 = make(Qwen2ForCausalLM, qcfg, seed=seed, std=0.3)
    save_model(qwen2, "qwen2")
    qwen2 = reload("qwen2")
    biases = [k for k in qwen2.state_dict() if k.endswith("_proj.bias")]
    assert any("q_proj.bias" in k for k in biases), biases
    return {
        "qwen2": goldens(
            qwen2, tok, "qwen2", "Qwen2: q/k/v biases (random, non-zero), tied embeddings",
            extra={"seed": seed},
        )
    }


def build_mistral(tok, seed):
    """Mistral: a sliding window shorter than the test sequences."""
    window = 8
    mcfg = MistralConfig(
        **llama_cfg(num_hidden_layers=2, sliding_window=window, tie_word_embeddings=False)
    )
    mistral = make(MistralForCausalLM, mcfg, seed=seed, std=0.3)
    save_model(mistral, "mistral")
    mistral = reload("mistral")
    semantics = window_semantics(mcfg)
    assert semantics["applied"], semantics
    full = MistralForCausalLM(
        common(
            MistralConfig(
                **llama_cfg(num_hidden_layers=2, sliding_window=None, tie_word_embeddings=False)
            )
        )
    ).eval()
    full.load_state_dict(mistral.state_dict())
    window_effect = max_logit_diff(full, mistral, tok)
    assert window_effect > 1e-2, window_effect
    return {
        "mistral": goldens(
            mistral,
            tok,
            "mistral",
            f"Mistral with sliding_window {window} < the test sequences (24 and 10 + 32)",
            extra={
                "seed": seed,
                "sliding_window": window,
                "sliding_window_applied": True,
                "sliding_window_semantics": semantics["rule"],
                "sliding_window_max_abs_logit_effect": window_effect,
            },
        )
    }


def build_models(tok):
    metas = {}
    for base, name, build in [
        (1, "gpt2", build_gpt2),
        (2, "llama", build_llama),
        (3, "llama3", build_llama3),
        (4, "qwen2", build_qwen2),
        (5, "mistral", build_mistral),
    ]:
        log(name)
        metas.update(with_seeds(base, lambda seed, b=build: b(tok, seed)))
    return metas


@torch.no_grad()
def window_semantics(mcfg_template):
    """Which keys a query sees under HF's sliding window, found with a one-layer model.

    With one layer, the logits at position q depend on the token at position k < q only
    through attention; perturb each earlier token and see which change the last logits.
    """
    cfg = MistralConfig(**{**mcfg_template.to_dict(), "num_hidden_layers": 1})
    torch.manual_seed(0)
    m = MistralForCausalLM(common(cfg)).eval()
    randomize_(m, 0, 0.3)
    n, w = 16, cfg.sliding_window
    base = list(range(10, 10 + n))
    last = logits_of(m, base)[-1]
    seen = []
    for k in range(n - 1):
        pert = list(base)
        pert[k] = 500
        if float((logits_of(m, pert)[-1] - last).abs().max()) > 0:
            seen.append(k)
    q = n - 1
    expected = list(range(q - w + 1, q))  # q - w < k < q (and k = q itself)
    return {
        "applied": seen == expected,
        "seen_by_last": seen,
        "rule": f"query i attends to key j iff i - {w} < j <= i (the window holds {w} "
        "positions, the query's own included)",
    }


# ------------------------------------------------------------------------------------------
# The trained demo model


def train_demo(tok, train_text, held_text, tok_dir, budget_s, steps):
    torch.manual_seed(1234)
    g = torch.Generator().manual_seed(1234)
    train_ids = torch.tensor(tok.encode(train_text).ids, dtype=torch.long)
    held_ids = torch.tensor(tok.encode(held_text).ids, dtype=torch.long)
    log(f"demo: {len(train_ids)} train tokens, {len(held_ids)} held-out tokens")
    block, batch = 128, 32
    cfg = common(GPT2Config(n_layer=4, n_embd=128, n_head=4, n_positions=256,
                            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))
    model = GPT2LMHeadModel(cfg)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    warmup = 20

    def lr_at(step):
        if step < warmup:
            return 3e-3 * (step + 1) / warmup
        t = (step - warmup) / max(1, steps - warmup)
        return 1e-4 + 0.5 * (3e-3 - 1e-4) * (1 + math.cos(math.pi * min(1.0, t)))

    def batch_of(ids, gen):
        ix = torch.randint(len(ids) - block - 1, (batch,), generator=gen)
        x = torch.stack([ids[i: i + block] for i in ix])
        y = torch.stack([ids[i + 1: i + 1 + block] for i in ix])
        return x, y

    @torch.no_grad()
    def held_loss(ids, n=8):
        model.eval()
        gen = torch.Generator().manual_seed(99)
        losses = [float(model(input_ids=x, labels=x).loss) for x, _ in
                  (batch_of(ids, gen) for _ in range(n))]
        model.train()
        return sum(losses) / len(losses)

    # The budget is this process's CPU time (one thread), so that other work on the machine
    # slows the run down without cutting it short; it is only a safety cap: the step count
    # is fixed, so a rerun gives the same model.
    t0 = time.time()
    c0 = time.process_time()
    model.train()
    recent = []
    step = 0
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        x, y = batch_of(train_ids, g)
        logits = model(input_ids=x).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent = (recent + [loss.item()])[-20:]
        if step % 25 == 0:
            log(f"  step {step}: loss {loss.item():.3f} ({time.process_time() - c0:.0f}s CPU, "
                f"{time.time() - t0:.0f}s)")
        if time.process_time() - c0 > budget_s:
            log(f"  CPU budget reached at step {step}")
            break
    steps_done = step + 1
    elapsed = time.process_time() - c0
    train_loss = held_loss(train_ids)
    val_loss = held_loss(held_ids)
    log(f"demo: {steps_done} steps in {elapsed:.0f}s, train loss {train_loss:.3f}, "
        f"held-out loss {val_loss:.3f}")

    model.eval()
    if os.path.isdir(DEMO_OUT):
        shutil.rmtree(DEMO_OUT)
    model.save_pretrained(DEMO_OUT)
    for f in os.listdir(tok_dir):
        shutil.copy(os.path.join(tok_dir, f), os.path.join(DEMO_OUT, f))
    model = AutoModelForCausalLM.from_pretrained(DEMO_OUT, attn_implementation="eager").eval()
    prompt = tok.encode("ROMEO:").ids
    with torch.no_grad():
        x = torch.tensor([prompt])
        out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), do_sample=False,
                             max_new_tokens=64, min_new_tokens=64, eos_token_id=None,
                             pad_token_id=0)
    new = out[0, len(prompt):].tolist()
    margins = []
    ids = list(prompt)
    for t in new:
        last = logits_of(model, ids)[-1]
        top = torch.topk(last, 2).values
        margins.append(float(top[0] - top[1]))
        assert int(torch.argmax(last)) == t
        ids.append(t)
    sample = tok.decode(new)
    log("demo greedy sample:\n" + "ROMEO:" + sample)
    meta = {
        "model": "shakespeare-gpt2",
        "versions": VERSIONS,
        "prompt": "ROMEO:",
        "prompt_ids": prompt,
        "greedy_tokens": new,
        "greedy_decoded": sample,
        "greedy_min_margin": min(margins),
        "greedy": "model.generate(do_sample=False, max_new_tokens=64, min_new_tokens=64, "
        "eos_token_id=None, pad_token_id=0), float32, eager attention",
        "steps": steps_done,
        "train_cpu_seconds": round(elapsed),
        "train_loss": train_loss,
        "held_out_loss": val_loss,
    }
    write_json(os.path.join(DEMO_OUT, "expected.json"), meta)
    write_readme(meta, n_params, len(train_ids), len(held_ids), block, batch)


def write_readme(meta, n_params, n_train, n_held, block, batch):
    text = f"""# shakespeare-gpt2

A small GPT-2 (4 layers, n_embd 128, 4 heads, n_positions 256, {n_params:,} parameters) trained
for the jaxrs-models examples, saved with `transformers`' `save_pretrained` in float32 together
with its tokenizer (a byte-level BPE of 1024 tokens, `<|endoftext|>` = id 0).

**Data.** Tiny Shakespeare (`tinyshakespeare.txt`, 1,115,394 bytes of Shakespeare's plays,
public domain; the corpus of Andrej Karpathy's char-rnn), read from `../shared/data/` beside
the repository, whose README gives its provenance and checksum; it is not copied here. The
tokenizer and the model were trained on its first 90% ({n_train:,} tokens); the last 10%
({n_held:,} tokens) is held out.

**Training.** `jaxrs-models/tests/golden/gen_hf.py --train-demo` (torch on CPU, one thread,
seed 1234): AdamW (lr 3e-3 with 20 warm-up steps and a cosine decay to 1e-4, betas 0.9/0.95,
weight decay 0.1, gradient clipping at 1.0), batches of {batch} random windows of {block}
tokens, no dropout, {meta['steps']} steps in {meta['train_cpu_seconds']} s of one CPU core.
Mean cross-entropy over 8 random batches after training: train {meta['train_loss']:.3f},
held out {meta['held_out_loss']:.3f} (nats per token; uniform would be {math.log(VOCAB):.3f}).

Made with transformers {VERSIONS['transformers']}, torch {VERSIONS['torch']},
tokenizers {VERSIONS['tokenizers']}.

**Greedy sample** (`expected.json` records these 64 tokens as a golden for the examples):

```
ROMEO:{meta['greedy_decoded']}
```

It is a toy: it has learnt the shape of a play (names, line breaks, Early Modern English
words), not their sense.
"""
    with open(os.path.join(DEMO_OUT, "README.md"), "w") as f:
        f.write(text)


# ------------------------------------------------------------------------------------------


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


def total_size(root):
    return sum(
        os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data/tinyshakespeare.txt",
                    help="tiny Shakespeare, relative to the repository root")
    ap.add_argument("--train-demo", action="store_true",
                    help="train assets/shakespeare-gpt2 instead of writing the goldens")
    ap.add_argument("--demo-seconds", type=float, default=330.0,
                    help="a cap on the demo's training, in seconds of CPU time")
    ap.add_argument("--demo-steps", type=int, default=450)
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    _, train_text, held_text = split_text(args.data)

    tok_dir = os.path.join(OUT, "tokenizer")
    tok = train_tokenizer(train_text)
    if args.train_demo:
        # The demo model uses the committed tokenizer (the same training gives the same file).
        committed = Tokenizer.from_file(os.path.join(tok_dir, "tokenizer.json"))
        assert committed.to_str() == tok.to_str(), "tokenizer changed: regenerate goldens first"
        train_demo(committed, train_text, held_text, tok_dir, args.demo_seconds, args.demo_steps)
        log(f"demo model: {total_size(DEMO_OUT) / 1e6:.2f} MB in {DEMO_OUT}")
        return

    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    save_tokenizer(tok, tok_dir)
    tok = tokenizer_goldens(tok_dir)
    metas = build_models(tok)
    log("min greedy margins: " + ", ".join(
        f"{k} {v['greedy_min_margin']:.3g}" for k, v in metas.items()))
    log(f"goldens: {total_size(OUT) / 1e6:.2f} MB in {OUT}")


if __name__ == "__main__":
    main()
