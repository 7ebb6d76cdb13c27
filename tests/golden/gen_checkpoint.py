#!/usr/bin/env python3
"""A safetensors file written by Python, for `tests/checkpoint.rs` to load into a Rust tree.

Usage (from the repository root): /work/venv/bin/python tests/golden/gen_checkpoint.py
(writes tests/golden/checkpoint.safetensors with safetensors 0.8.0's numpy API).

The tensors are named as `jaxrs::tree_paths` names the leaves of
`Model { layers: Vec<Layer { w, b }>, key: u32[2], step: i32 }` with two layers, and have
values the test recomputes: layers.{i}.w = arange(6).reshape(2, 3) * 0.25 + i (float32),
layers.{i}.b = [-1.5, 0.0, 1.5] * (i + 1) (bfloat16), key = [0, 4294967295] (uint32),
step = 123 (int32, 0-d).
"""

import os

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

tensors = {}
for i in range(2):
    tensors[f"layers.{i}.w"] = (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.25 + i).astype(
        np.float32
    )
    tensors[f"layers.{i}.b"] = (np.array([-1.5, 0.0, 1.5], np.float32) * (i + 1)).astype(
        ml_dtypes.bfloat16
    )
tensors["key"] = np.array([0, 4294967295], np.uint32)
tensors["step"] = np.array(123, np.int32)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkpoint.safetensors")
save_file(tensors, path, metadata={"step": "4000", "model": "mlp", "note": "written by numpy"})
