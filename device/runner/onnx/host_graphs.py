"""The onnx backends' host-only graphs, built on first use from the canonical params: the attention variant of the
step and the batched prefill. Each is quantised like the step and kept in the start-up cache for the next start.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from device.runner.cache_paths import staged
from device.runner.onnx.ort_session import open_session

ATTENTION_GRAPH = "decoder_step_attention.onnx"   # in the start-up cache, once a runner was asked for attention
PREFILL_GRAPHS = {"plain": "decoder_prefill.onnx", "attention": "decoder_prefill_attention.onnx"}   # likewise


def host_session(backend, filename: str, build: Callable):
    """A session of a host graph made from `backend`'s canonical params by `build(params)` and quantised like its
    step: from the start-up cache when an earlier runner left it there (`backend.cache_dir`), else built and left
    there for the next start."""
    cfg = replace(backend.config, profile=None)
    directory = backend.cache_dir
    cached = directory / filename if directory is not None else None
    if cached is not None and cached.is_file():
        try:
            return open_session(cached, replace(cfg, optimization="disable"), prepack=cfg.prepack_step)
        except Exception:      # truncated or foreign: build it again below
            pass
    # onnx and the graph builders: imported only when a graph is built, never for a start from the cache
    from device.graphs.host_passes import host_decoder
    from device.graphs.quantize import quantize_model

    graph = host_decoder(quantize_model(build(backend._full_params()), backend.dtype), backend.dims.n_text_head)
    graph = graph.SerializeToString()
    if cached is None:
        return open_session(graph, cfg, prepack=cfg.prepack_step)
    try:    # the graph file published last: a runner that finds it finds its initializers too
        with staged(directory, merge=True, last=(filename,)) as tmp:
            session = open_session(graph, cfg, tmp / filename, prepack=cfg.prepack_step)
    except OSError:              # a read-only or full cache only means building it again next time
        session = open_session(graph, cfg, prepack=cfg.prepack_step)
    return session
