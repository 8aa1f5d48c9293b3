"""native-int8b: the decoder step in C (device/runner/native/step.py) beside an onnx-int8b backend that serves the
rest (the encoder, the batched prefill, the uncached reference `full`).

The same int8 weights as onnx-int8b, bit for bit, so onnx-int8b's graphs serve what is not a step. The step
computes in fp32 over those weights (onnx-int8b quantises its activations too) and reads the cross K/V in int8, a
scale per position and head. `auto` prefers it where it runs (tests/device/runner/test_auto_backend.py holds it to
the reference's tokens on every bundled clip).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from core.errors import ModelError
from device.runner.cache_paths import cache_home
from device.runner.native.library import build_library
from device.runner.native.step import NativeStep, load_weights, native_weights, save_weights
from device.runner.onnx import onnx_build
from device.runner.onnx.onnx_backend import OnnxBackend
from device.spec.runtime_config import RuntimeConfig

NAME = "native-int8b"


class NativeBackend:
    """`onnx`: an onnx-int8b backend without a step session; `native`: the C step over the same weights."""

    name = NAME

    def __init__(self, onnx: OnnxBackend, native: NativeStep):
        self.onnx, self._native = onnx, native

    # What the decoder reads about the model and its cache: the ONNX backend's, whose graphs made the cross K/V.
    dims = property(lambda self: self.onnx.dims)
    sha256 = property(lambda self: self.onnx.sha256)
    dtype = property(lambda self: self.onnx.dtype)
    cross = property(lambda self: self.onnx.cross)
    cache_layout = property(lambda self: self.onnx.cache_layout)
    head_major = property(lambda self: self.onnx.head_major)
    token_embedding = property(lambda self: self.onnx.token_embedding)
    positional_embedding = property(lambda self: self.onnx.positional_embedding)
    alignment_heads = property(lambda self: self.onnx.alignment_heads)
    windows = property(lambda self: self.onnx.windows)

    def adopt_cache(self, directory: Path, tables) -> None:
        self.onnx.adopt_cache(directory, tables)

    def encode(self, mel):
        return self.onnx.encode(mel)

    def encode_window(self, mel, window_s: int):
        return self.onnx.encode_window(mel, window_s)

    def prefill(self, x, cross_k, cross_v, mask, attention: bool = False):
        return self.onnx.prefill(x, cross_k, cross_v, mask, attention)

    def full(self, x, cross_k, cross_v, mask):
        return self.onnx.full(x, cross_k, cross_v, mask)

    def end_profiling(self) -> str:
        raise ModelError("the native step has no ONNX Runtime profile", "profile --backend onnx-int8b instead")

    def _cache(self, t: np.ndarray) -> np.ndarray:
        """The KV cache head-major and contiguous: as KVCache keeps it for this backend, or a copy of a stacked one."""
        return t if t.shape[1] != 1 else np.ascontiguousarray(self.onnx._head_major(t))

    def step(self, x, self_k, self_v, cross_k, cross_v, mask):
        return self._native(x, self._cache(self_k), self._cache(self_v), cross_k, cross_v, mask)

    def step_with_attention(self, x, self_k, self_v, cross_k, cross_v, mask):
        logits, new_k, new_v, weights = self._native(x, self._cache(self_k), self._cache(self_v), cross_k, cross_v,
                                                     mask, attention=True)
        heads = self.alignment_heads
        return logits, new_k, new_v, weights[[l for l, _ in heads], [h for _, h in heads]][:, None]


def _check_cross(cross: str) -> None:
    if cross != "kv":
        raise ModelError(f"the native step reads per-layer cross K/V, not {cross} cross-attention",
                         "drop --cross absorbed, or use --backend onnx-int8b")


def _native(arrays: dict[str, np.ndarray], onnx: OnnxBackend, config: RuntimeConfig) -> NativeStep:
    return NativeStep(arrays, onnx.dims, build_library(cache_home()), config.team)


def build(source, *, config: RuntimeConfig, cross: str = "kv", save_dir: Path | None = None, **_) -> NativeBackend:
    """The registry's factory: from WhisperWeights or a bundle, as onnx-int8b's without its step graph."""
    _check_cross(cross)
    onnx = onnx_build.build(source, config=config, cross=cross, dtype="int8b", save_dir=save_dir, step=False)
    arrays = native_weights(onnx._full_params(), onnx.dims)
    if save_dir is not None:
        save_weights(arrays, save_dir)
        arrays = load_weights(save_dir)        # the file's pages from now on, not a second copy
    return NativeBackend(onnx, _native(arrays, onnx, config))


def open_cached(directory: Path, *, config: RuntimeConfig, cross: str = "kv", **kwargs) -> NativeBackend:
    """From the start-up cache: onnx-int8b's optimised encoder and the step's memory-mapped weights."""
    _check_cross(cross)
    arrays = load_weights(directory)
    if not arrays:
        raise ModelError(f"the start-up cache {directory} has no native weights", "it is rebuilt")
    onnx = onnx_build.open_cached(directory, config=config, cross=cross, **{**kwargs, "dtype": "int8b"}, step=False)
    return NativeBackend(onnx, _native(arrays, onnx, config))
