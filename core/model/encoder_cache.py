"""Cross K/V reuse keyed by content: the sha256 of the mel window, not its position, and the layout it is kept in.

QA reruns and the cache on/off comparison send the same audio again; a hit skips the encoder.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from core.model.backend import cross_bytes, cross_form
from core.model.dims import FULL_WINDOW_S


def mel_key(mel: np.ndarray) -> str:
    mel = np.ascontiguousarray(mel)
    return hashlib.sha256(str(mel.dtype).encode() + str(mel.shape).encode() + mel.tobytes()).hexdigest()


def cross_key(backend, mel: np.ndarray, window_s: int = FULL_WINDOW_S) -> str:
    """The key of `mel`'s cross state as `backend` returns it: the mel's content, the encoder window and the state's
    layout (kv or absorbed, head-major or stacked, and fp16 where the backend keeps its cache so: the dla backend's
    native path), so that a cache two backends share never hands one the other's layout."""
    layout = "head-major" if getattr(backend, "head_major", False) else "stacked"
    dtype = np.dtype(getattr(backend, "cache_layout", {}).get("dtype", np.float32))
    return f"{mel_key(mel)}:{window_s}s:{cross_form(backend)}:{layout}:{dtype}"


class EncoderCache:
    """A bounded LRU of cross states, (cross_k, cross_v) or (F, None) (core/model/backend.py), by `cross_key`;
    `max_bytes=0` disables it."""

    def __init__(self, max_bytes: int = 256 << 20):
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @property
    def bytes_used(self) -> int:
        return sum(cross_bytes(k, v) for k, v in self._items.values())

    def get(self, key: str):
        item = self._items.get(key)
        if item is None:
            self.misses += 1
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return item

    def put(self, key: str, cross: tuple[np.ndarray, np.ndarray | None]) -> None:
        size = cross_bytes(*cross)
        if size > self.max_bytes:
            return
        self._items[key] = cross
        self._items.move_to_end(key)
        while self.bytes_used > self.max_bytes:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
