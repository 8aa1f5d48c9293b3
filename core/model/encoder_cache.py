"""Cross K/V reuse keyed by content: the sha256 of the mel window, not its position, and the layout it is kept in.

QA reruns and the cache on/off comparison send the same audio again; a hit skips the encoder.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from core.model.backend import cross_bytes, cross_form
from core.model.dims import FULL_WINDOW_S


def mel_key(mel: np.ndarray) -> str:
    mel = np.ascontiguousarray(mel)
    return hashlib.sha256(str(mel.dtype).encode() + str(mel.shape).encode() + mel.tobytes()).hexdigest()


class CrossKey(NamedTuple):
    """What a cross state is: the mel's content, the encoder window, and the layout it is kept in."""
    mel: str
    window_s: int
    form: str          # kv or absorbed
    layout: str        # head-major or stacked (core/model/backend.py)
    dtype: str         # float16 where the backend keeps its cache so (the dla backend's native path)


def cross_key(backend, mel: np.ndarray, window_s: int = FULL_WINDOW_S) -> CrossKey:
    """The key of `mel`'s cross state as `backend` returns it, so that a cache two backends share never hands one
    the other's layout."""
    layout = "head-major" if getattr(backend, "head_major", False) else "stacked"
    dtype = np.dtype(getattr(backend, "cache_layout", {}).get("dtype", np.float32))
    return CrossKey(mel_key(mel), window_s, cross_form(backend), layout, str(dtype))


def layout_of(cross: tuple[np.ndarray, np.ndarray | None]) -> str:
    """The layout the arrays are in: head-major K/V are [L, H, A, d/H], stacked ones [L, 1, A, d]; F (absorbed) has
    one."""
    k, v = cross
    return "head-major" if v is not None and k.shape[1] != 1 else "stacked"


class EncoderCache:
    """A bounded LRU of cross states, (cross_k, cross_v) or (F, None) (core/model/backend.py), by `cross_key`;
    `max_bytes=0` disables it."""

    def __init__(self, max_bytes: int = 256 << 20):
        self.max_bytes = max_bytes
        self._items: OrderedDict[CrossKey, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @property
    def bytes_used(self) -> int:
        return sum(cross_bytes(k, v) for k, v in self._items.values())

    def get(self, key: CrossKey):
        item = self._items.get(key)
        if item is None:
            self.misses += 1
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return item

    def put(self, key: CrossKey, cross: tuple[np.ndarray, np.ndarray | None]) -> None:
        """Kept under `key` with the layout the arrays are in: a backend (or a wrapper of one) that says one layout
        and returns the other costs itself a miss, and never hands another backend arrays it cannot read."""
        size = cross_bytes(*cross)
        if size > self.max_bytes:
            return
        key = key._replace(layout=layout_of(cross))
        self._items[key] = cross
        self._items.move_to_end(key)
        while self.bytes_used > self.max_bytes:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
