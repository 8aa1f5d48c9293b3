"""The TFLite interpreter the runner takes: the first of the spec's order (device/spec/backend_rows.py) that
imports."""
from __future__ import annotations

import importlib

from core.errors import WhisperKVError
from device.spec.backend_rows import TFLITE_INTERPRETERS


def load_interpreter():
    """(Interpreter, load_delegate, OpResolverType or None, package name) of the first of TFLITE_INTERPRETERS that
    imports."""
    for package in TFLITE_INTERPRETERS:
        try:    # ai_edge_litert takes ~1.2 s to import: only when a tflite backend is built
            m = importlib.import_module(package + ".interpreter")
        except ImportError:
            continue
        return m.Interpreter, m.load_delegate, getattr(m, "OpResolverType", None), package
    raise WhisperKVError("no TFLite interpreter here: neither tflite_runtime nor ai_edge_litert imports",
                         "install the board image's tflite_runtime, or pip install ai-edge-litert (x86_64/aarch64)")
