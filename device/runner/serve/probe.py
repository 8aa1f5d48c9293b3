"""The `probe` request (docs/protocol.md): what the board's graphs compute for one window, for the doctor's
numbers rung to hold against the PC's reference run of the same model (device/doctor/numbers.py).

The encoder runs on the window; the decoder runs its first step (<|startoftranscript|> alone, an empty cache).
Each encoder output comes back as its shape and its values at SAMPLE positions of its flat form, the first step's
logits whole. The positions are a function of the shape alone (`sample_positions`), so the PC samples its own
outputs at the same places. Values travel as base64 of little-endian float32.
"""
from __future__ import annotations

import base64

import numpy as np

from core.decode.steppers import CachedStepper
from core.model.kv_cache import to_stacked

SAMPLE = 4096
_GOLDEN = 0.6180339887498949


def sample_positions(shape, k: int = SAMPLE) -> np.ndarray:
    """Up to `k` distinct flat indices spread over an array of `shape`: a golden-ratio sequence started at a
    point seeded by the shape. Plain arithmetic, not a random generator, so that any NumPy on either side
    picks the same places."""
    size = int(np.prod(shape, dtype=np.int64))
    if size <= k:
        return np.arange(size, dtype=np.int64)
    seed = (sum((i + 1) * int(n) for i, n in enumerate(shape)) * _GOLDEN) % 1.0
    idx = np.floor(((seed + np.arange(k) * _GOLDEN) % 1.0) * size).astype(np.int64)
    return np.unique(idx)


def pack(values: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(values, "<f4").tobytes()).decode()


def unpack(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), "<f4")


def probe(backend, sot: int, mel: np.ndarray) -> dict:
    """{"outputs": [{name, shape, values}], "logits": …}: the encoder's outputs sampled, the first step's logits."""
    cross = backend.encode(mel.reshape(1, *mel.shape[-2:]))
    names = ("cross_k", "cross_v") if cross[1] is not None else ("F",)
    # a host backend's head-major cross K/V [L, H, T, d/H] in the board's packed form [L, 1, T, d] (the same values)
    packed = [to_stacked(np.asarray(a)) for a in cross if a is not None]
    outputs = [{"name": n, "shape": list(a.shape), "values": pack(a.reshape(-1)[sample_positions(a.shape)])}
               for n, a in zip(names, packed)]
    logits = np.asarray(CachedStepper(backend, *cross).advance(sot), np.float32).reshape(-1)
    return {"outputs": outputs, "logits": pack(logits), "n_logits": int(logits.size)}
