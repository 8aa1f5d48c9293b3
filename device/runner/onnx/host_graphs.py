"""The onnx backends' graphs built on first use from the canonical params: the attention variant of the step, the
batched prefill and the encoders of windows shorter than 30 s (core/model/dims.py, WINDOWS_S). Each is quantised like
the step (an encoder like the encoder) and kept in the start-up cache for the next start.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from core.model.dims import ModelDims
from device.runner.cache_paths import staged
from device.runner.onnx.ort_session import open_session
from device.spec.runtime_config import RuntimeConfig

ATTENTION_GRAPH = "decoder_step_attention.onnx"   # in the start-up cache, once a runner was asked for attention
PREFILL_GRAPHS = {"plain": "decoder_prefill.onnx", "attention": "decoder_prefill_attention.onnx"}   # likewise
ENCODER_ROW_BLOCKS = 4


def window_graph(window_s: int) -> str:
    """The start-up cache's file of the `window_s` encoder, once a runner was asked for that window."""
    return f"encoder_{window_s}s.onnx"


def host_encoder(encoder, dims: ModelDims):
    """Attention and MLP over blocks of rows, and the cross K/V written per layer, head-major, into the arrays
    encode() returns: the encoder's peak holds [375, 1500] and [375, 2048] activations instead of [1500, ...] ones
    and no [T, L*d] copy of the cross K/V (same values to the bit; docs/benchmarks.md)."""
    from device.graphs.encoder_passes import attention_by_head, cross_by_layer, mlp_by_rows  # onnx: to build only
    from device.graphs.host_passes import fuse_layer_norms, head_major_kv

    blocks = ENCODER_ROW_BLOCKS if dims.n_audio_ctx % ENCODER_ROW_BLOCKS == 0 else 1
    encoder = mlp_by_rows(attention_by_head(fuse_layer_norms(encoder), dims.n_audio_head, blocks), blocks)
    return head_major_kv(cross_by_layer(encoder), dims.n_text_head)


def prepack_encoder(config: RuntimeConfig, dtype: str) -> bool:
    # Unpacked MatMulNBits blocks are repacked at every call: int8b's encoder is ~25 % slower without it.
    return config.prepack_encoder or dtype == "int8b"


def host_session(backend, filename: str, build: Callable):
    """A session of a host graph made from `backend`'s canonical params by `build(params)` and quantised like its
    step: from the start-up cache when an earlier runner left it there (`backend.cache_dir`), else built and left
    there for the next start."""
    def make():
        # onnx and the graph builders: imported only when a graph is built, never for a start from the cache
        from device.graphs.host_passes import host_decoder
        from device.graphs.quantize import quantize_model

        return host_decoder(quantize_model(build(backend._full_params()), backend.dtype), backend.dims.n_text_head)
    return _cached_session(backend, filename, make, backend.config.prepack_step)


def window_encoder_session(backend, window_s: int):
    """The session of `backend`'s encoder of a `window_s` window: the 30 s encoder's weights, its positional table's
    first rows, quantised as the 30 s one was (a deterministic pass from the fp32 params: device/graphs/quantize.py)."""
    def make():
        from device.graphs import onnx_graphs as G  # onnx: only when a window's encoder is first built
        from device.graphs.quantize import quantize_model

        dims = backend.dims.for_window(window_s)
        p = backend._full_params()
        p = {**p, "encoder.positional_embedding": p["encoder.positional_embedding"][:dims.n_audio_ctx]}
        return host_encoder(quantize_model(G.build_encoder(p, dims, cross=backend.cross), backend.dtype), dims)
    return _cached_session(backend, window_graph(window_s), make, prepack_encoder(backend.config, backend.dtype))


def _cached_session(backend, filename: str, make: Callable, prepack: bool):
    """`filename` from the start-up cache, else the ModelProto `make()` gives, opened and left there."""
    cfg = replace(backend.config, profile=None)
    directory = backend.cache_dir
    cached = directory / filename if directory is not None else None
    if cached is not None and cached.is_file():
        try:
            return open_session(cached, replace(cfg, optimization="disable"), prepack=prepack)
        except Exception:      # truncated or foreign: build it again below
            pass
    graph = make().SerializeToString()
    if cached is None:
        return open_session(graph, cfg, prepack=prepack)
    try:    # the graph file published last: a runner that finds it finds its initializers too
        with staged(directory, merge=True, last=(filename,)) as tmp:
            session = open_session(graph, cfg, tmp / filename, prepack=prepack)
    except OSError:              # a read-only or full cache only means building it again next time
        session = open_session(graph, cfg, prepack=prepack)
    return session
