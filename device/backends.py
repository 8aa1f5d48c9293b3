"""The runner's compute backends: the NumPy reference now, ONNX Runtime once the graphs are exported."""
from __future__ import annotations

import importlib

from core.errors import WhisperKVError

# name -> "module:Class"; each class takes WhisperWeights and offers encode/step/full like NumpyBackend.
BACKENDS = {
    "numpy": "core.model:NumpyBackend",
    "onnx": "device.onnx_backend:OnnxBackend",
}


class BackendError(WhisperKVError):
    code = "model_missing"


def make_backend(name: str, weights):
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}", f"use one of: {', '.join(BACKENDS)}")
    module, cls = BACKENDS[name].split(":")
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise BackendError(f"backend {name!r} is not available here ({exc})",
                           "use --backend numpy, or install what that backend needs") from exc
    return getattr(mod, cls)(weights)
