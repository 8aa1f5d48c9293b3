"""One exported fp32 bundle per test process and cross form: exporting writes ~400 MB, so the test modules
share it."""
from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=2)
def exported_bundle(cross: str = "kv") -> Path:
    from core.model.weights import load_model
    from device.toolchain.export import export_bundle

    out = Path(tempfile.mkdtemp(prefix="whisperkv-bundle-"))
    atexit.register(shutil.rmtree, out, True)
    export_bundle(load_model(), out / "fp32", cross=cross)
    return out / "fp32"


@lru_cache(maxsize=3)
def integer_bundle(dtype: str = "a16w8", cross: str = "kv") -> Path:
    """One integer TFLite bundle per test process (calibrating and quantizing take minutes)."""
    from core.model.weights import load_model
    from device.toolchain.export import export_bundle

    out = Path(tempfile.mkdtemp(prefix="whisperkv-int-bundle-"))
    atexit.register(shutil.rmtree, out, True)
    export_bundle(load_model(), out / dtype, dtype, ("tflite",), cross)
    return out / dtype
