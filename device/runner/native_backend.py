"""native-int8b: onnx-int8b's encoder under ONNX Runtime and its decoder step in C (device/runner/native_step.py).

The same int8 weights as onnx-int8b, bit for bit, so onnx-int8b's graphs serve what is not a step: the
uncached reference (`full`), the batched prefill and the encoder. The step computes in fp32 over those weights
(onnx-int8b quantises its activations too) and reads the cross K/V in int8, a scale per position and head.
`auto` prefers it where it runs (tests/device/runner/test_auto_backend.py holds it to the reference's tokens on
every bundled clip).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from core.errors import ModelError
from device.runner.native_step import NativeStep, build_library, load_weights, native_weights, save_weights
from device.runner.onnx_backend import OnnxBackend, SessionConfig

NAME = "native-int8b"
SLEEPY_SPINCOUNT = "1000"


class NativeBackend(OnnxBackend):
    builds_step = False

    def __init__(self, source, config: SessionConfig | None = None, save_dir: Path | None = None, cross: str = "kv"):
        if cross != "kv":
            raise ModelError(f"the native step reads per-layer cross K/V, not {cross} cross-attention",
                             "drop --cross absorbed, or use --backend onnx-int8b")
        super().__init__(source, "int8b", config=config, save_dir=save_dir, cross=cross)
        arrays = native_weights(self._full_params(), self.dims)
        if save_dir is not None:
            save_weights(arrays, save_dir)
            arrays = load_weights(save_dir)        # the file's pages from now on, not a second copy
        self._start(arrays)

    @classmethod
    def from_optimised(cls, directory: Path, dims, sha256: str, full_params, config: SessionConfig | None = None,
                       dtype: str = "int8b", cross: str = "kv"):
        self = super().from_optimised(directory, dims, sha256, full_params, config=config, dtype="int8b", cross=cross)
        arrays = load_weights(directory)
        if not arrays:
            raise ModelError(f"the start-up cache {directory} has no native weights", "it is rebuilt")
        self._start(arrays)
        return self

    def _start(self, arrays: dict[str, np.ndarray]) -> None:
        from device.runner.startup_cache import cache_home

        self.name = NAME
        if not self.config.spin:
            # OpenMP's workers spin ~10 ms after each parallel region by default: between tokens they would take the
            # cores other processes want (the studio, a live stream). 1000 turns keep the waits inside a step
            # spinning (the same step time) and sleep within microseconds after it. Read once, when libgomp loads.
            os.environ.setdefault("GOMP_SPINCOUNT", SLEEPY_SPINCOUNT)
        self._native = NativeStep(arrays, self.dims, build_library(cache_home()), self.config.threads)

    def end_profiling(self) -> str:
        raise ModelError("the native step has no ONNX Runtime profile", "profile --backend onnx-int8b instead")

    def _cache(self, t: np.ndarray) -> np.ndarray:
        """The KV cache head-major and contiguous: as KVCache keeps it for this backend, or a copy of a stacked one."""
        return t if t.shape[1] != 1 else np.ascontiguousarray(self._head_major(t))

    def step(self, x, self_k, self_v, cross_k, cross_v, mask):
        return self._native(x, self._cache(self_k), self._cache(self_v), cross_k, cross_v, mask)

    def step_with_attention(self, x, self_k, self_v, cross_k, cross_v, mask):
        logits, new_k, new_v, weights = self._native(x, self._cache(self_k), self._cache(self_v), cross_k, cross_v,
                                                     mask, attention=True)
        heads = self.alignment_heads
        return logits, new_k, new_v, weights[[l for l, _ in heads], [h for _, h in heads]][:, None]
