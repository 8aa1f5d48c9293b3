"""How the decoder advances one token: through the step graph and the KV cache, or (the uncached
reference) through the full causal decoder over every token so far. Both give the same logits."""
from __future__ import annotations

import numpy as np

from core.model.backend import Backend
from core.model.kv_cache import KVCache
from core.model.whisper import causal_mask, embed


class CachedStepper:
    """Advances the decoder one token at a time through the step graph and the KV cache."""

    def __init__(self, backend: Backend, cross_k: np.ndarray, cross_v: np.ndarray, attention: bool = False):
        """`attention`: step through `backend.step_with_attention` (core.model.backend.AttentionBackend)
        and keep the last step's alignment-head weights in `attention`, float16 [heads, A]."""
        d = backend.dims
        self.backend, self.cross_k, self.cross_v = backend, cross_k, cross_v
        self.cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state)
        self.want_attention, self.attention = attention, None
        self._x = np.empty((1, 1, d.n_text_state), np.float32)   # the step's input, rewritten in place

    @property
    def length(self) -> int:
        return self.cache.cache_len

    @property
    def full(self) -> bool:
        return self.cache.full

    @property
    def bytes_used(self) -> int:
        return self.cache.bytes_used

    def advance(self, token: int) -> np.ndarray:
        # embed() for one token, into a reused buffer: the same sum without three temporaries a step.
        x = np.add(self.backend.token_embedding[token], self.backend.positional_embedding[self.cache.cache_len],
                   out=self._x[0, 0], dtype=np.float32)[None, None]
        args = (x, self.cache.k, self.cache.v, self.cross_k, self.cross_v, self.cache.mask())
        if self.want_attention:
            logits, new_k, new_v, attn = self.backend.step_with_attention(*args)
            self.attention = np.asarray(attn, np.float16).reshape(attn.shape[0], -1)
        else:
            logits, new_k, new_v = self.backend.step(*args)
        self.cache.write(new_k, new_v)
        return logits.reshape(-1)


class UncachedStepper:
    """Reference mode: the full causal decoder over all tokens so far, at every step."""

    def __init__(self, backend: Backend, cross_k: np.ndarray, cross_v: np.ndarray):
        self.backend, self.cross_k, self.cross_v = backend, cross_k, cross_v
        self.max_len = backend.dims.n_text_ctx
        self.mask = causal_mask(self.max_len)
        self.tokens: list[int] = []

    @property
    def length(self) -> int:
        return len(self.tokens)

    @property
    def full(self) -> bool:
        return len(self.tokens) >= self.max_len

    bytes_used = 0
    attention = None          # the full decoder graph has no attention output

    def advance(self, token: int) -> np.ndarray:
        self.tokens.append(token)
        n = len(self.tokens)
        x = embed(self.backend, self.tokens, 0)
        return self.backend.full(x, self.cross_k, self.cross_v, self.mask[None, None, :n, :n]).reshape(-1)


Stepper = CachedStepper | UncachedStepper
