"""The fp16 reference: the NumPy MTK-form model (core/model/whisper.py) computed as the MDLA computes a graph
compiled with `ncc-tflite --relax-fp32` (MediaTek: fp32 data computed in fp16): weights held in fp16 and every op's
output rounded to fp16, its accumulation in fp32. Not LiteRT, which computes fp16-weight graphs in fp32.

The doctor's bounds for a board computing in fp16 are measured against it (bench/doctor_bounds.py,
docs/doctor.md): what fp16 arithmetic alone moves the numbers and the tokens by.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

import numpy as np

from core.model.layers import ROUNDING
from core.model.weights import WhisperWeights
from core.model.whisper import NumpyBackend

FP16_MAX = np.float32(65504.0)


def to_fp16(x: np.ndarray) -> np.ndarray:
    """Values as fp16 holds them, kept in fp32 arrays; beyond fp16's range they saturate (the mask's -1e9 too),
    as the MDLA's fp16 arithmetic does."""
    return np.clip(x, -FP16_MAX, FP16_MAX).astype(np.float16).astype(np.float32)


@contextmanager
def fp16_ops():
    """Every op of core/model/layers.py inside rounds its output to fp16."""
    token = ROUNDING.set(to_fp16)
    try:
        yield
    finally:
        ROUNDING.reset(token)


class Fp16Reference(NumpyBackend):
    """NumpyBackend with fp16 weights and every op's output rounded to fp16."""

    name = "numpy-fp16"

    def __init__(self, weights: WhisperWeights, cross: str = "kv"):
        super().__init__(replace(weights, params={k: to_fp16(v) if v.dtype.kind == "f" else v
                                                  for k, v in weights.params.items()}), cross)

    def encode_window(self, mel, window_s: int):
        with fp16_ops():
            return tuple(None if a is None else to_fp16(a)
                         for a in super().encode_window(to_fp16(np.asarray(mel)), window_s))

    def step(self, *args):
        with fp16_ops():
            return super().step(*(to_fp16(np.asarray(a)) if a is not None else a for a in args))

    def step_with_attention(self, *args):
        with fp16_ops():
            return super().step_with_attention(*(to_fp16(np.asarray(a)) if a is not None else a for a in args))

    def full(self, *args):
        with fp16_ops():
            return super().full(*(to_fp16(np.asarray(a)) if a is not None else a for a in args))
