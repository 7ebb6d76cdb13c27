"""`transformers`' side of benches/generate.rs: `model.generate` (greedy, KV cache) on CPU over
the same model folders, with `torch.set_num_threads(--threads)` (the cores XLA's CPU client
uses).

Prefill is the first-token time (`generate` with `max_new_tokens=1`, best of `--prefill-rounds`, after a
warm-up); decode is `(n - 1) / (time(n new tokens) - time(1 new token))`. f32 and bf16 rows
(`from_pretrained(dtype=...)`); int8 rows are left out: transformers has no CPU weight-only
int8 of its own (its quantizers are separate packages, and torch's `quantize_dynamic` does not
reach GPT-2's `Conv1D` layers).

Prints `ROW_prefill_ms`, `ROW_decode1_tps`, `ROW_decodeB_tps` and `ROW_tokens: ids`.
"""
import argparse
import os
import sys
import time

import torch
from transformers import AutoModelForCausalLM


def timed(model, ids, new_tokens):
    with torch.inference_mode():
        t = time.perf_counter()
        out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                             max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             pad_token_id=0, use_cache=True)
        return time.perf_counter() - t, out


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
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    folders = dict(m.split("=", 1) for m in a.model)
    rows = a.rows.split(",")
    # As many tokens as jaxrs's batch-1 run draws: the first, 2 warm-up steps, the timed steps.
    n = a.steps + 3
    for name, folder in folders.items():
        with open(os.path.join(folder, "prompts.txt")) as f:
            prompts = [[int(t) for t in line.split()] for line in f if line.strip()]
        for row in rows:
            model_name, dtype = row.rsplit("_", 1)
            if model_name != name or dtype not in ("f32", "bf16"):
                continue
            print(f"transformers {row} (threads {torch.get_num_threads()}) ...",
                  file=sys.stderr, flush=True)
            torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
            model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch_dtype).eval()
            one = torch.tensor(prompts[:1])
            timed(model, one, 2)
            first = min(timed(model, one, 1)[0] for _ in range(a.prefill_rounds))
            total, out = timed(model, one, n)
            decode1 = (n - 1) / (total - first)
            batch = torch.tensor(prompts[:a.batch])
            timed(model, batch, 2)
            first_b = timed(model, batch, 1)[0]
            total_b, _ = timed(model, batch, n)
            decode_b = (n - 1) * a.batch / (total_b - first_b)
            print(f"  prefill {first * 1e3:.1f} ms, decode {decode1:.1f} tok/s (batch 1), "
                  f"{decode_b:.1f} tok/s (batch {a.batch})", file=sys.stderr, flush=True)
            print(f"{row}_prefill_ms: {first * 1e3:.4f}")
            print(f"{row}_decode1_tps: {decode1:.4f}")
            print(f"{row}_decode{a.batch}_tps: {decode_b:.4f}")
            toks = out[0, len(prompts[0]):].tolist()
            print(f"{row}_tokens: {' '.join(map(str, toks))}", flush=True)
            del model


if __name__ == "__main__":
    sys.exit(main())
