"""What a runner backend provides: the MTK-form graphs behind one interface (docs/architecture.md).

A new backend is one file whose class satisfies `Backend`; NumpyBackend (core/model/whisper.py) is
the reference and OnnxBackend (device/runner/onnx/onnx_backend.py) runs the exported graphs. The decoder
(core/decode/decoding.py) only ever calls what is written here.

Shapes use L = dims.n_text_layer, d = dims.n_text_state, V = dims.n_vocab, C = dims.n_text_ctx and
A = dims.n_audio_ctx (Whisper base: 6, 512, 51865, 448, 1500). Every array is float32.

The cross state. What `encode` returns is a pair the decoder hands back to `step`, `full` and
`step_with_attention` unchanged, once per window. A backend's `cross` attribute (absent means "kv")
says which form it is:
- "kv": (cross_k, cross_v), each [L, 1, A, d], the per-layer cross-attention keys and values; a backend
  whose `head_major` attribute is true keeps them as [L, H, A, d/H] instead (H = dims.n_text_head;
  OnnxBackend, for its step's memory reads), and still takes the [L, 1, A, d] form (core/model/kv_cache.py:
  to_head_major, to_stacked);
- "absorbed": (F, None), F [1, 1, A, d] the encoder output, which every layer attends to directly
  (core/model/layers.py, AbsorbedCross): 12x less to keep, more arithmetic per step.

The KV cache is a core/model/kv_cache.KVCache made with the backend's `cache_layout` (absent: {}, the
board's [L, 1, C, d]); OnnxBackend's is head-major and grows with the tokens.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from core.errors import ModelError
from core.model.dims import FULL_WINDOW_S, ModelDims


@runtime_checkable
class Backend(Protocol):
    name: str
    """Reported in `hello` and the CLI: "numpy", "onnx", "onnx-fp16", ..."""
    dims: ModelDims
    token_embedding: np.ndarray
    """[V, d]: looked up on the CPU by the caller (`core.model.whisper.embed`), never by a graph (no GATHER)."""
    positional_embedding: np.ndarray
    """[C, d]: indexed by the runtime position on the CPU too, since a slice by position is a gather."""

    def encode(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The encoder graph, once per 30 s window: mel [1, n_mels, 2*A] -> the cross state (see above):
        cross_k, cross_v, each [L, 1, A, d] (or head-major); or F [1, 1, A, d], None."""
        ...

    def step(self, x: np.ndarray, self_k: np.ndarray, self_v: np.ndarray, cross_k: np.ndarray,
             cross_v: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The decoder step graph, one token:
        x [1, 1, d] (token plus positional embedding), self_k/self_v [L, 1, C, d] (the KV cache),
        cross_k/cross_v the cross state from `encode`, mask [1, 1, 1, C+1] (additive: 0 visible, -1e9
        hidden; the last position is the current token) -> logits [1, 1, V], new_k/new_v [L, 1, 1, d] (the caller writes
        them into the cache at cache_len)."""
        ...

    def full(self, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The uncached reference: x [1, T, d] (embeddings of all T tokens so far), cross_k/cross_v
        the cross state, mask [1, 1, T, T] (additive causal) -> logits of the last token [1, 1, V]."""
        ...


@runtime_checkable
class AttentionBackend(Protocol):
    """A backend that can also report where the decoder looks (word timings, the studio's heatmap).
    Kept apart from `Backend` so that a backend without it still runs every ordinary decode."""
    alignment_heads: tuple[tuple[int, int], ...]
    """(layer, head) pairs, sorted: core/model/alignment.py."""

    def step_with_attention(self, x: np.ndarray, self_k: np.ndarray, self_v: np.ndarray, cross_k: np.ndarray,
                            cross_v: np.ndarray, mask: np.ndarray
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`step`, and the softmax cross-attention weights of the alignment heads, [n_heads, 1, A]
        (each row sums to 1). Backends build the graph variant that outputs them on first call."""
        ...


@runtime_checkable
class PrefillBackend(Protocol):
    """A backend that can feed a window's first T tokens in one call instead of T steps (the prompt and the
    SOT sequence of a live stream's pass, and a draft to check: core/decode/steppers.py). Optional: the
    decoder steps through them one by one on a backend without it."""

    def prefill(self, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray, mask: np.ndarray,
                attention: bool = False) -> tuple[np.ndarray, ...]:
        """x [1, T, d] (embeddings of the tokens at positions 0..T-1), the cross state, mask [1, 1, T, T]
        (additive causal) -> logits [1, T, V] (each position's), new_k/new_v [L, 1, T, d] (what T steps would
        write into the cache); with `attention`, also the alignment heads' cross-attention [n_heads, T, A]."""
        ...


@runtime_checkable
class WindowBackend(Protocol):
    """A backend whose encoder also takes windows shorter than 30 s (core/model/dims.py, WINDOWS_S): the same
    weights over the mel's first frames and the positional table's first rows; and whose step, prefill and `full`
    take that window's cross state, of A' = dims.audio_positions(window_s) positions, and attend to those alone:
    what an additive cross-attention mask over the rest computes in a graph of fixed shapes (whisper.cpp's
    `audio_ctx`; docs/benchmarks.md, "Encoder windows", measured it against zero-padding, which changes the
    words). Optional: a backend without it serves 30 s windows only."""
    windows: tuple[int, ...]
    """The lengths it encodes, in seconds, shortest first (30 among them)."""

    def encode_window(self, mel: np.ndarray, window_s: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The encoder over the first `window_s` of mel [1, n_mels, 2*A]: the cross state (as `encode`'s) of A'
        positions."""
        ...


CROSS_FORMS = ("kv", "absorbed")


def windows_of(backend) -> tuple[int, ...]:
    """The window lengths `backend` encodes: its `windows`, else 30 s alone."""
    return tuple(getattr(backend, "windows", (FULL_WINDOW_S,)))


def encode_sized(backend, mel: np.ndarray, window_s: int = FULL_WINDOW_S) -> tuple[np.ndarray, np.ndarray | None]:
    """The cross state of the mel's first `window_s`: `encode`'s for 30 s, else `encode_window`'s."""
    if window_s == FULL_WINDOW_S:
        return backend.encode(mel)
    if window_s not in windows_of(backend):
        raise ModelError(f"the {getattr(backend, 'name', 'backend')} backend has no {window_s} s window",
                         f"ask for one of: {', '.join(map(str, windows_of(backend)))} s")
    return backend.encode_window(mel, window_s)


def check_cross(cross: str) -> str:
    if cross not in CROSS_FORMS:
        raise ModelError(f"unknown cross-attention form {cross!r}", f"use one of: {', '.join(CROSS_FORMS)}")
    return cross


def cross_form(backend) -> str:
    """"kv" or "absorbed": the form of the cross state `backend.encode` returns."""
    return getattr(backend, "cross", "kv")


def cross_bytes(cross_k: np.ndarray, cross_v: np.ndarray | None) -> int:
    """Bytes of a window's cross state as held: cross K and V, or F alone."""
    return int(cross_k.nbytes + (cross_v.nbytes if cross_v is not None else 0))

