"""The decoder's self-attention KV cache, held by the runner on the CPU.

Layout [layers, 1, 448, d_model] (4D: MDLA 5.3 has no rank-5 tensors, so the 8 heads stay
packed along d_model). A host backend that reads it head-major (OnnxBackend) asks for `n_head` 8:
[layers, 8, 448, d_model/8], each head's slots one contiguous block. Slot `cache_len` is where the next
step's `new_k`/`new_v` ([layers, 1, 1, d_model] in either layout) go.
"""
from __future__ import annotations

import numpy as np

from core.model.dims import ModelDims
from core.model.whisper import NEG_INF


def to_head_major(kv: np.ndarray, n_head: int) -> np.ndarray:
    """Stacked K/V [L, 1, T, d] as a head-major view [L, H, T, d/H] (not contiguous)."""
    n_layer, _, n, d = kv.shape
    return kv.reshape(n_layer, n, n_head, d // n_head).transpose(0, 2, 1, 3)


def to_stacked(kv: np.ndarray) -> np.ndarray:
    """K/V in the stacked [L, 1, T, d] form, from either form (a copy when head-major)."""
    if kv.shape[1] == 1:
        return kv
    n_layer, n_head, n, d_head = kv.shape
    return kv.transpose(0, 2, 1, 3).reshape(n_layer, 1, n, n_head * d_head)


class CacheFull(Exception):
    """Raised on a write past the last slot; the decoder stops with reason `cache_full`."""


class KVCache:
    def __init__(self, n_layer: int = ModelDims.n_text_layer, max_len: int = ModelDims.n_text_ctx,
                 d_model: int = ModelDims.n_text_state, dtype=np.float32, n_head: int = 1, grow_by: int = 0,
                 mask_value: float | None = None):
        """`n_head` > 1: head-major. `grow_by` > 0: the arrays hold that many slots at first and grow by as many
        when full (up to max_len), for graphs that take any number of slots (device/graphs/host_passes.py,
        growing_cache); 0: all max_len from the start, as the board's graphs take them. `mask_value`: what the
        mask hides with, in the cache's dtype (an fp16 graph's -10000: fp16's -1e9 is -inf); None: -1e9, fp32."""
        self.max_len, self.grow_by = max_len, grow_by
        self._hide, self._mask_dtype = (NEG_INF, np.float32) if mask_value is None else (mask_value, dtype)
        self.k = np.zeros((n_layer, n_head, min(grow_by or max_len, max_len), d_model // n_head), dtype)
        self.v = np.zeros_like(self.k)
        self.cache_len = 0
        self._new_mask()

    @property
    def slots(self) -> int:
        """The slots the arrays hold now (max_len unless growing); the mask covers these and the current token."""
        return self.k.shape[2]

    def _new_mask(self) -> None:
        self._mask = np.full((1, 1, 1, self.slots + 1), self._hide, self._mask_dtype)
        self._mask[..., self.slots] = 0.0
        self._mask_len = 0

    def _make_room(self, n: int) -> None:
        """Grow the arrays to hold `n` slots (a multiple of grow_by, at most max_len), the filled ones copied."""
        if n <= self.slots:
            return
        slots = min(self.max_len, -(-n // self.grow_by) * self.grow_by)
        for name in ("k", "v"):
            old = getattr(self, name)
            new = np.zeros((*old.shape[:2], slots, old.shape[3]), old.dtype)
            new[:, :, :self.cache_len] = old[:, :, :self.cache_len]
            setattr(self, name, new)
        self._new_mask()

    def reset(self) -> None:
        self.k.fill(0)
        self.v.fill(0)
        self.cache_len = 0

    @property
    def full(self) -> bool:
        return self.cache_len >= self.max_len

    @property
    def bytes_per_token(self) -> int:
        return 2 * self.k.nbytes // self.slots

    @property
    def bytes_used(self) -> int:
        return self.cache_len * self.bytes_per_token

    @property
    def bytes_total(self) -> int:
        """What max_len slots take, whether or not a growing cache holds them yet."""
        return self.max_len * self.bytes_per_token

    def mask(self) -> np.ndarray:
        """[1,1,1,slots+1]: slots 0..cache_len-1 and the current token (last) are visible. The same array
        each call, valid until the cache changes: one slot is opened a step, not a new mask allocated."""
        m, n = self._mask, self.cache_len
        if n == self._mask_len + 1:
            m[..., n - 1] = 0.0
        elif n != self._mask_len:
            m[..., :n] = 0.0
            m[..., n:self.slots] = self._hide
        self._mask_len = n
        return m

    def write(self, new_k: np.ndarray, new_v: np.ndarray) -> None:
        """Store one step's [layers,1,1,d] keys and values at cache_len."""
        if self.full:
            raise CacheFull(f"KV cache is full at {self.max_len} tokens")
        self._make_room(self.cache_len + 1)
        self.k[:, :, self.cache_len] = new_k.reshape(self.k.shape[0], self.k.shape[1], -1)
        self.v[:, :, self.cache_len] = new_v.reshape(self.v.shape[0], self.v.shape[1], -1)
        self.cache_len += 1

    def write_many(self, new_k: np.ndarray, new_v: np.ndarray) -> None:
        """Store [layers,1,T,d] keys and values of T tokens from cache_len on (a batched prefill)."""
        n = new_k.shape[2]
        if self.cache_len + n > self.max_len:
            raise CacheFull(f"{n} more tokens do not fit the KV cache of {self.max_len}")
        self._make_room(self.cache_len + n)
        for cache, new in ((self.k, new_k), (self.v, new_v)):
            cache[:, :, self.cache_len:self.cache_len + n] = to_head_major(new, cache.shape[1])
        self.cache_len += n

    def truncate(self, length: int) -> None:
        """Forget every slot from `length` on; the mask hides them again (their values are overwritten later)."""
        self.cache_len = min(self.cache_len, length)


def uncached_by_steps(backend, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray | None) -> np.ndarray:
    """`full` for a backend with static graphs only (TFLite, a compiled .dla): every call recomputes all T positions
    from an empty cache through the step graph, so nothing computed earlier is reused."""
    d = backend.dims
    cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
    x = np.asarray(x, np.float32).reshape(-1, d.n_text_state)
    logits = None
    for t in range(x.shape[0]):
        logits, new_k, new_v = backend.step(x[t].reshape(1, 1, -1), cache.k, cache.v, cross_k, cross_v, cache.mask())
        cache.write(new_k, new_v)
    return logits
