"""The runner's compute backends by name, and how weights or a bundle become one (core.model.backend.Backend).

- `numpy`: core/model/whisper.py, the reference; needs nothing but NumPy.
- `onnx`: the exported fp32 graphs under ONNX Runtime; same tokens as numpy, logits within 1e-3: the exact one.
- `onnx-fp16`, `onnx-int8`: the quantised graphs (in memory from weights, or a quantised bundle).
- `onnx-int8b`: block-wise int8 weights, a scale per 16 (device/graphs/quantize.py), from weights or an fp32 bundle.
- `native-int8b`: onnx-int8b's weights with the decoder step in C (device/runner/native_backend.py), where the
  CPU has AVX-512 and a C compiler is installed; the fastest here, and its tokens equal the reference's.
- `tflite`: the TFLite graphs in the LiteRT interpreter, with an optional delegate (on a Genio board,
  MediaTek's Neuron delegate puts them on the MDLA).
Each runs either form of the cross state (core/model/backend.py): a bundle's own, or for weights the
`cross` asked for (kv by default).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from core.errors import ModelError, WhisperKVError
from core.model.backend import Backend, check_cross
from core.model.weights import WhisperWeights

ONNX_DTYPES = {"onnx": "fp32", "onnx-fp16": "fp16", "onnx-int8": "int8", "onnx-int8b": "int8b"}
NATIVE = "native-int8b"
BACKENDS = ("numpy", *ONNX_DTYPES, NATIVE, "tflite")
# Fastest first among the backends whose tokens equal the reference on every bundled clip, decoded whole and as
# the CLI feeds a file (tests/device/runner/test_auto_backend.py). onnx-int8 and onnx-fp16 differ on some, and
# onnx-int8b on demo-congrats as the CLI feeds it (a comma; its activations are quantised too): where the C step
# cannot run, the exact fp32 one does.
PREFERENCE = (NATIVE, "onnx", "numpy")


class BackendError(WhisperKVError):
    code = "model_missing"


def _installed(*modules: str) -> bool:
    """Found on the path, without importing: ai_edge_litert alone takes ~1.2 s to import, and every CLI
    and runner start asks which backends exist. The backend that is chosen imports for real."""
    return all(importlib.util.find_spec(m) is not None for m in modules)


def available_backends() -> list[str]:
    from device.runner.native_step import supported

    onnx = _installed("onnx", "onnxruntime")
    return (["numpy"] + (list(ONNX_DTYPES) if onnx else []) + ([NATIVE] if onnx and supported() else [])
            + (["tflite"] if _installed("ai_edge_litert") or _installed("tflite_runtime") else []))


def best_backend() -> str:
    avail = available_backends()
    if NATIVE in avail:
        from device.runner.native_step import usable
        from device.runner.startup_cache import cache_home

        if not usable(cache_home()):           # compiled once here; a compiler that fails is skipped
            avail.remove(NATIVE)
    return next(name for name in PREFERENCE if name in avail)


def resolve(name: str | None) -> str:
    """`auto`/None -> the best available; anything else must be a known, available backend."""
    if name in (None, "", "auto"):
        return best_backend()
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}", f"use auto or one of: {', '.join(BACKENDS)}")
    if name not in available_backends():
        if name == "tflite":
            raise BackendError("backend 'tflite' needs a TFLite interpreter, and neither ai_edge_litert nor "
                               "tflite_runtime imports here", "pip install ai-edge-litert, or use another --backend")
        if name == NATIVE and _installed("onnx", "onnxruntime"):
            from device.runner.native_step import INSTALL_FIX

            raise BackendError(f"backend {name!r} needs Linux on x86-64 with AVX-512 and a C compiler", INSTALL_FIX)
        raise BackendError(f"backend {name!r} needs onnx and onnxruntime, which are not installed here",
                           "pip install onnx onnxruntime, or use --backend numpy")
    return name


def _cross_for(source: WhisperWeights | str | Path, cross: str | None) -> str:
    """The form to build: a bundle's own (a different one asked for is an error), else `cross` or kv."""
    if isinstance(source, WhisperWeights):
        return check_cross(cross or "kv")
    from device.runner.bundle import read_bundle

    own = read_bundle(source).cross
    if cross not in (None, own):
        raise ModelError(f"the bundle at {source} has {own} cross-attention graphs, not {cross}",
                         f"export one with `whisperkv export --cross {cross} --out DIR`, or drop the request")
    return own


def make_backend(name: str | None, source: WhisperWeights | str | Path, delegate: str | None = None,
                 cross: str | None = None, onnx_config=None) -> Backend:
    """`source`: WhisperWeights, or the path of an exported bundle (device/toolchain/export.py).
    `delegate`: a TFLite delegate library to load (tflite only). `cross`: kv or absorbed
    (core/model/backend.py); None is a bundle's own form, or kv for weights. `onnx_config`: the onnx
    backends' SessionConfig (device/runner/onnx_backend.py; None: its defaults)."""
    name = resolve(name)
    cross = _cross_for(source, cross)
    if delegate and name != "tflite":
        raise BackendError(f"a delegate ({delegate}) needs the tflite backend, not {name!r}",
                           "add --backend tflite (or ?backend=tflite in the device URL)")
    if name == "tflite":
        from device.runner.tflite_backend import TfliteBackend

        if isinstance(source, WhisperWeights):
            return TfliteBackend.from_weights(source, delegate, cross=cross)
        return TfliteBackend.from_bundle(source, delegate)
    if name == "numpy":
        from core.model.whisper import NumpyBackend
        from device.runner.bundle import weights_from_bundle

        return NumpyBackend(source if not isinstance(source, (str, Path)) else weights_from_bundle(source), cross)
    if name == NATIVE:
        from device.runner.native_backend import NativeBackend

        return NativeBackend(source, config=onnx_config, cross=cross)
    from device.runner.onnx_backend import OnnxBackend

    return OnnxBackend(source, dtype=ONNX_DTYPES[name], config=onnx_config, cross=cross)
