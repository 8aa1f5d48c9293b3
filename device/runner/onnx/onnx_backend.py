"""The runner's ONNX Runtime backend: the exported MTK-form graphs behind core.model.backend.Backend.

An OnnxBackend is given its sessions (device/runner/onnx/onnx_build.py makes them from weights, a bundle or the
start-up cache) and runs them: the encoder, the decoder step with its inputs kept bound, and the host-only graphs
built on first use from the step's weights (the attention variant, the batched prefill, the uncached reference
`full()`; device/runner/onnx/host_graphs.py).
`cross` is the form of the cross state (core/model/backend.py): a bundle's own, else "kv" unless asked.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from core.model.alignment import alignment_heads
from core.model.dims import FULL_WINDOW_S, ModelDims
from core.model.kv_cache import to_head_major
from device.graphs.dtypes import FROM_FP32
from device.runner.onnx.host_graphs import ATTENTION_GRAPH, PREFILL_GRAPHS, host_session, window_encoder_session
from device.runner.onnx.ort_session import NP_DTYPES, BoundRuns, open_session
from device.spec.runtime_config import RuntimeConfig

# The KV cache grows by this many slots (core/model/kv_cache.py): a step reads at most 63 empty ones, and a
# window's ~7 regrowths copy what the cache holds (under 10 MB at the last).
CACHE_GROW_BY = 64


def _cache_layout(step) -> dict:
    """KVCache's arguments for the cache a step session reads: head-major ([1, H, N, d/H] a layer) and of any
    length N after device/graphs/host_passes.py, else stacked and 448 slots."""
    shape = next(i.shape for i in step.get_inputs() if i.name == "self_k.0")
    return {"n_head": shape[1], "grow_by": CACHE_GROW_BY if isinstance(shape[2], str) else 0}


def _takes_any_window(step) -> bool:
    """Whether a step session reads a shorter window's cross K/V (device/graphs/host_passes.py, any_window)."""
    shape = next((i.shape for i in step.get_inputs() if i.name == "cross_k.0"), [0, 0, 0])
    return isinstance(shape[2], str)


class OnnxBackend:
    """Encoder and decoder step under ONNX Runtime; embeddings are looked up on the CPU."""

    def __init__(self, encoder, step, *, dims: ModelDims, sha256: str, dtype: str, cross: str,
                 tables: tuple[np.ndarray, np.ndarray], full_params: Callable[[], dict], config: RuntimeConfig,
                 alignment: tuple | None = None, cache_dir: Path | None = None,
                 windows: tuple[int, ...] = (FULL_WINDOW_S,)):
        """`encoder`, `step`: onnxruntime sessions (`step` None for a backend that runs the step itself,
        device/runner/native/backend.py). `tables`: the token and positional embeddings. `full_params()`: the
        canonical params the host-only graphs are built from, read only if one is asked for. `cache_dir`: the
        start-up cache the host-only graphs are kept in (None: built at each start). `windows`: the lengths it
        encodes (core.model.backend.WindowBackend); a shorter one's encoder is built on first use."""
        self._encoder, self._step = encoder, step
        self.dims, self.sha256, self.dtype, self.cross, self.config = dims, sha256, dtype, cross, config
        self.token_embedding, self.positional_embedding = tables
        self._full_params, self._alignment_heads, self.cache_dir = full_params, alignment, cache_dir
        self.name = "onnx" if dtype == "fp32" else f"onnx-{dtype}"
        self._full = self._step_attention = None
        self._prefill: dict = {}
        # A step of the board's fixed form (an older start-up cache's) serves 30 s only.
        self.windows = tuple(windows) if step is None or _takes_any_window(step) else (FULL_WINDOW_S,)
        self._encoders = {FULL_WINDOW_S: encoder}
        self._bound = BoundRuns(self._feeds_and_views)
        # The KV cache the step reads (core/model/backend.py); without a step session, the host graphs' layout.
        self.cache_layout = (_cache_layout(step) if step is not None
                             else {"n_head": dims.n_text_head, "grow_by": CACHE_GROW_BY})
        self._types = {i.name: NP_DTYPES[i.type] for s in (encoder, step) if s is not None for i in s.get_inputs()}

    def adopt_cache(self, directory: Path, tables: tuple[np.ndarray, np.ndarray]) -> None:
        """The start-up cache was written from this backend: keep the host-only graphs there, and read the
        embeddings from its memory-mapped files rather than hold a second fp32 copy."""
        self.cache_dir, (self.token_embedding, self.positional_embedding) = directory, tables

    @property
    def head_major(self) -> bool:
        """Whether the graphs read the cross K/V and the cache head-major (core/model/backend.py)."""
        return self.cache_layout["n_head"] != 1

    def end_profiling(self) -> str:
        """The step session's profile (JSON path), when RuntimeConfig.profile was set."""
        return self._step.end_profiling()

    def _feed(self, name: str, arr: np.ndarray) -> np.ndarray:
        dtype = self._types.get(name, np.float32)       # a prefill's inputs, when no step session names them
        if dtype == np.float16 and arr.dtype != np.float16:
            # fp16 graphs: the mask's -1e9 becomes fp16's lowest finite value, still exp() == 0.
            arr = np.clip(arr, np.finfo(np.float16).min, np.finfo(np.float16).max)
        return np.ascontiguousarray(arr, dtype=dtype)

    def encode(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return self.encode_window(mel, FULL_WINDOW_S)

    def encode_window(self, mel: np.ndarray, window_s: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The cross state of the mel's first `window_s` (core.model.backend.WindowBackend), of that window's
        positions; its encoder session built on first use (device/runner/onnx/host_graphs.py)."""
        if window_s not in self.windows:
            raise ValueError(f"the {self.name} backend has no {window_s} s window")
        encoder = self._encoders.get(window_s)
        if encoder is None:
            encoder = self._encoders[window_s] = window_encoder_session(self, window_s)
        self._bound.reset()      # the last window's K/V go before this one's are made
        d = self.dims
        mel = np.asarray(mel).reshape(d.n_mels, -1)[:, :d.window_frames(window_s)]
        mel = {"mel": self._feed("mel", mel[None])}
        if self.cross == "absorbed":
            return encoder.run(["F"], mel)[0].astype(np.float32, copy=False), None
        if "cross_k.0" in {o.name for o in encoder.get_outputs()}:
            k, v = self._encode_by_layer(encoder, mel["mel"])
        else:
            k, v = encoder.run(["cross_k", "cross_v"], mel)
        # An encoder host_passes could not rewrite (onnx-int8's quantised projection) writes them stacked: moved
        # once a window (~10 ms), not a layer at every step.
        return tuple(np.ascontiguousarray(self._head_major(t), np.float32) for t in (k, v))

    def _encode_by_layer(self, encoder, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """An encoder rewritten by cross_by_layer (and head_major_kv): each layer's [H, T, d/H] (or [T, d]) output
        bound to its slice of the [L, H, T, d/H] (or [L, 1, T, d]) arrays, which ONNX Runtime fills in place."""
        d = self.dims
        out = next(o for o in encoder.get_outputs() if o.name == "cross_k.0")
        dtype, shape = NP_DTYPES[out.type], list(out.shape)          # [H, T, d/H] head-major, else [T, d]
        stacked = (d.n_text_layer, *shape) if len(shape) == 3 else (d.n_text_layer, 1, *shape)
        k, v = (np.empty(stacked, dtype) for _ in range(2))
        io = encoder.io_binding()
        io.bind_cpu_input("mel", mel)
        for name, arr in (("cross_k", k), ("cross_v", v)):
            for layer in range(d.n_text_layer):
                io.bind_output(f"{name}.{layer}", "cpu", 0, dtype, shape, arr[layer].ctypes.data)
        encoder.run_with_iobinding(io)
        return k, v

    def _cross_feeds(self, cross_k, cross_v) -> tuple[dict, tuple]:
        """F as is (absorbed), or cross K/V to split into per-layer inputs."""
        if self.cross == "absorbed":
            return {"F": self._feed("F", cross_k)}, ()
        return {}, (("cross_k", cross_k), ("cross_v", cross_v))

    def _decoder_feeds(self, x, mask, cross_k, cross_v, self_k=None, self_v=None) -> dict:
        """The step's inputs (the prefill's without a cache): x, mask, and each stacked [L,...] input as L per-layer
        views, in the dtype of the graphs (float16 for onnx-fp16)."""
        return self._feeds_and_views(x, mask, cross_k, cross_v, self_k, self_v)[0]

    def _feeds_and_views(self, x, mask, cross_k, cross_v, self_k=None, self_v=None) -> tuple[dict, bool]:
        """_decoder_feeds, and whether every feed is a view of the array it came from (fp32 graphs, arrays in their
        layout) rather than a copy."""
        feeds, stacked = self._cross_feeds(cross_k, cross_v)
        feeds |= {"x": self._feed("x", x), "mask": self._feed("mask", mask)}
        views = all(np.may_share_memory(feeds[k], a) for k, a in (("x", x), ("mask", mask), ("F", cross_k))
                    if k in feeds)
        cache = (("self_k", self_k), ("self_v", self_v)) if self_k is not None else ()
        for name, source in (*cache, *stacked):
            t = self._head_major(source)
            for layer in range(t.shape[0]):
                key = f"{name}.{layer}"
                feeds[key] = self._feed(key, t[layer:layer + 1])
                views = views and np.may_share_memory(feeds[key], source)
        return feeds, views

    def _head_major(self, t: np.ndarray) -> np.ndarray:
        """K/V as the graphs read them. Stacked ones, [L,1,T,d] (another backend's encode() or cache, a test's
        reference), become a head-major view [L,H,T,d/H] for head-major graphs: not contiguous, so a copy per layer."""
        return to_head_major(t, self.dims.n_text_head) if self.head_major and t.shape[1] == 1 else t

    def step(self, x: np.ndarray, self_k: np.ndarray, self_v: np.ndarray, cross_k: np.ndarray,
             cross_v: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        logits, new_k, new_v = self._bound.run(self._step, ["logits", "new_k", "new_v"], x, mask, cross_k, cross_v,
                                               self_k, self_v)
        return (logits.astype(np.float32, copy=False), new_k.astype(np.float32, copy=False),
                new_v.astype(np.float32, copy=False))

    @property
    def alignment_heads(self) -> tuple[tuple[int, int], ...]:
        return self._alignment_heads or alignment_heads(self.dims)

    def step_with_attention(self, x, self_k, self_v, cross_k, cross_v, mask):
        """step() through the attention variant of the step graph (core.model.backend.AttentionBackend),
        built from the step's weights on first use: a second session, so ordinary steps pay nothing."""
        if self._step_attention is None:
            self._step_attention = self._attention_session()
        outs = self._bound.run(self._step_attention, ["logits", "new_k", "new_v", "attention"], x, mask, cross_k,
                               cross_v, self_k, self_v)
        return tuple(o.astype(np.float32, copy=False) for o in outs)

    def _attention_session(self):
        """The attention variant's session (built from the weights on first use, ~5 s, kept in the start-up cache)."""
        from device.graphs import onnx_graphs as G  # onnx: only when attention is first asked for

        return host_session(self, ATTENTION_GRAPH, lambda p: G.build_decoder_step(p, self.dims, self.alignment_heads,
                                                                                  self.cross))

    def prefill(self, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray, mask: np.ndarray, attention: bool = False):
        """A window's first T tokens in one call (core.model.backend.PrefillBackend): logits [1,T,V], new_k/new_v
        [L,1,T,d], and with `attention` the alignment heads' cross-attention [n_heads,T,A]. Its graph (with or
        without the attention output) is built on first use, like the attention step's."""
        key = "attention" if attention else "plain"
        sessions = self._prefill
        if key not in sessions:
            from device.graphs import onnx_graphs as G  # onnx: only when this graph is first asked for

            heads = self.alignment_heads if attention else ()
            sessions[key] = host_session(self, PREFILL_GRAPHS[key], lambda p: G.build_decoder_prefill(
                p, self.dims, heads, self.cross))
        outs = sessions[key].run(["logits", "new_k", "new_v", *(["attention"] if attention else [])],
                                 self._decoder_feeds(x, mask, cross_k, cross_v))
        return tuple(o.astype(np.float32, copy=False) for o in outs)

    def full(self, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self._full is None:
            # onnx and the graph builders: imported only if the uncached reference is asked for
            from device.graphs import onnx_graphs as G
            from device.graphs.host_passes import host_decoder
            from device.graphs.quantize import quantize_model

            full = G.build_decoder_full(self._full_params(), self.dims, self.cross)
            full = host_decoder(quantize_model(full, self.dtype) if self.dtype in FROM_FP32 else full,
                                self.dims.n_text_head)
            # Its arena on: over ~100 tokens its activations are MBs a call, which the runner's heap
            # (device/runner/serve/heap.py) would map and fault in afresh at every token, ~1.8x slower. The memory is
            # held only once uncached decoding is asked for.
            self._full = open_session(full.SerializeToString(), replace(self.config, profile=None, arena=True))
        feeds = {"x": np.ascontiguousarray(x, np.float32), "mask": np.ascontiguousarray(mask, np.float32)}
        if self.cross == "absorbed":
            feeds["F"] = np.ascontiguousarray(cross_k, np.float32)
        for name, t in (("cross_k", cross_k), ("cross_v", cross_v)) if self.cross == "kv" else ():
            t = self._head_major(t)
            for layer in range(t.shape[0]):
                feeds[f"{name}.{layer}"] = np.ascontiguousarray(t[layer:layer + 1], np.float32)
        return self._full.run(["logits"], feeds)[0]
