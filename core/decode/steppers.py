"""How the decoder advances one token: through the step graph and the KV cache, or (the uncached
reference) through the full causal decoder over every token so far. Both give the same logits.

A window's first tokens (a prompt and the SOT sequence) can go in at once: `feed` runs them through the
backend's batched prefill (core.model.backend.PrefillBackend) when it has one, with a draft of the tokens
expected next (the previous pass of a live stream). `advance` then serves each drafted token that is sampled
from what the prefill already computed, and drops the rest at the first one that differs: the tokens are those
of greedy decoding either way, only fewer graph calls make them."""
from __future__ import annotations

import numpy as np

from core.model.backend import Backend, PrefillBackend
from core.model.kv_cache import KVCache
from core.model.whisper import causal_mask, embed

# Fewer tokens than this step one by one: the prefill graph is another copy of the decoder's weights in memory,
# built on first use, and the ordinary SOT sequence (3-4 tokens) gains too little to pay for it.
PREFILL_MIN = 8


class CachedStepper:
    """Advances the decoder one token at a time through the step graph and the KV cache."""

    def __init__(self, backend: Backend, cross_k: np.ndarray, cross_v: np.ndarray, attention: bool = False):
        """`attention`: step through `backend.step_with_attention` (core.model.backend.AttentionBackend)
        and keep the last step's alignment-head weights in `attention`, float16 [heads, A]."""
        d = backend.dims
        self.backend, self.cross_k, self.cross_v = backend, cross_k, cross_v
        self.cache = KVCache(d.n_text_layer, d.n_text_ctx, d.n_text_state, **getattr(backend, "cache_layout", {}))
        self.want_attention, self.attention = attention, None
        self._x = np.empty((1, 1, d.n_text_state), np.float32)   # the step's input, rewritten in place
        # Drafted tokens already in the cache, not yet sampled: (token, logits after it, its attention) each.
        self._ahead: list[tuple[int, np.ndarray, np.ndarray | None]] = []
        self.from_draft = False      # the last logits `advance` gave came from the draft, not a graph call

    @property
    def length(self) -> int:
        """Tokens fed so far (drafted ones count once they are sampled)."""
        return self.cache.cache_len - len(self._ahead)

    @property
    def full(self) -> bool:
        return self.length >= self.cache.max_len

    @property
    def bytes_used(self) -> int:
        return self.length * self.cache.bytes_per_token

    def feed(self, tokens: list[int], draft: list[int] = ()) -> np.ndarray:
        """The logits after each of `tokens`, [len(tokens), V], as `advance` one by one would give them.
        In one backend call when it has a prefill, the cache is empty, and there are PREFILL_MIN tokens or
        more with `draft` (tokens expected to follow, fed in the same call: see the module docstring)."""
        draft = list(draft)[:max(0, self.cache.max_len - self.length - len(tokens))]
        if (not isinstance(self.backend, PrefillBackend) or self.length or not tokens
                or len(tokens) + len(draft) < PREFILL_MIN):
            return np.stack([self.advance(t) for t in tokens])
        ids = [*tokens, *draft]
        x = embed(self.backend, ids, 0)
        out = self.backend.prefill(x, self.cross_k, self.cross_v, causal_mask(len(ids))[None, None],
                                   attention=self.want_attention)
        logits, new_k, new_v = out[0].reshape(len(ids), -1), out[1], out[2]
        attention = np.asarray(out[3], np.float16).transpose(1, 0, 2) if self.want_attention else [None] * len(ids)
        self.cache.write_many(new_k, new_v)
        n = len(tokens)
        self.attention = attention[n - 1]
        self._ahead = [(ids[i], logits[i], attention[i]) for i in range(n, len(ids))]
        return logits[:n]

    def advance(self, token: int) -> np.ndarray:
        if self._ahead:
            drafted, logits, attention = self._ahead[0]
            if drafted == token:
                del self._ahead[0]
                self.attention, self.from_draft = attention, True
                return logits
            self.cache.truncate(self.length)       # the draft went another way: its K/V from here are dropped
            self._ahead = []
        self.from_draft = False
        # embed() for one token, into a reused buffer: the same sum without three temporaries a step, and the same
        # array at every call (a backend may keep it bound: device/runner/onnx/onnx_backend.py, _run_bound).
        np.add(self.backend.token_embedding[token], self.backend.positional_embedding[self.cache.cache_len],
               out=self._x[0, 0], dtype=np.float32)
        args = (self._x, self.cache.k, self.cache.v, self.cross_k, self.cross_v, self.cache.mask())
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
    from_draft = False

    def feed(self, tokens: list[int], draft: list[int] = ()) -> np.ndarray:
        """The logits after each of `tokens`, [len(tokens), V] (a draft is no use without a cache)."""
        return np.stack([self.advance(t) for t in tokens])

    def advance(self, token: int) -> np.ndarray:
        self.tokens.append(token)
        n = len(self.tokens)
        x = embed(self.backend, self.tokens, 0)
        return self.backend.full(x, self.cross_k, self.cross_v, self.mask[None, None, :n, :n]).reshape(-1)


Stepper = CachedStepper | UncachedStepper
