"""Which TFLite interpreter the runner takes: the board image's own `tflite_runtime` before `ai_edge_litert`.

A stock Genio 520 EVK image (IoT Yocto Rity 25.1.1, recorded in bbudaedu/talkybuddy `edge/`) has tflite_runtime
2.16.1 in its system Python; ai_edge_litert is the wheel pip installs elsewhere. The backend registry's `needs`,
device-info and the tflite backend read this one order.
"""
from __future__ import annotations

import importlib

from core.errors import WhisperKVError

TFLITE_INTERPRETERS = ("tflite_runtime", "ai_edge_litert")


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
