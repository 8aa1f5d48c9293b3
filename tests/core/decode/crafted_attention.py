"""Crafted cross-attention for tests: one step's alignment heads all looking around one audio position."""
from __future__ import annotations

import numpy as np


def attention_at(position: int, scale: float = 1.0, heads: int = 8, spread: int = 2) -> np.ndarray:
    """fp16 [heads, 1500] as on the wire, each head's weight on position ± spread (20 ms a position)."""
    a = np.full((heads, 1500), 1e-4, np.float32)
    a[:, max(0, position - spread):position + spread + 1] = 1.0
    return (scale * a / a.sum(-1, keepdims=True)).astype(np.float16)
