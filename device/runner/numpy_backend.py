"""The registry's factory for `numpy`, the reference (core/model/whisper.py): from weights, or the params read back
out of a bundle's graphs."""
from __future__ import annotations

from pathlib import Path

from core.model.weights import WhisperWeights
from core.model.whisper import NumpyBackend


def build(source: WhisperWeights | str | Path, *, cross: str = "kv", **_) -> NumpyBackend:
    from device.runner.bundle import weights_from_bundle  # a bundle's graphs are read with onnx: only for one

    return NumpyBackend(source if isinstance(source, WhisperWeights) else weights_from_bundle(source), cross)
