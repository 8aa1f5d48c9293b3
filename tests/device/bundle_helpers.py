"""One exported fp32 bundle per test process and cross form: exporting writes ~400 MB, so the test modules
share it."""
from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache, lru_cache, partial
from pathlib import Path
from unittest import mock

# a16w8's tests hold the bundle against itself (the dla backend against the tflite one on its graphs, the doctor's
# numbers rung against its own graphs) and read its structure, never its calibration's quality: the first 4 of the
# calibration's 12 utterances (both languages) calibrate it in about a third of the time. mixed's tests hold it to
# fp32's tokens, so it gets all 12, as `whisperkv export` does.
CALIBRATION_LIMIT = {"a16w8": 4}


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
    from device.toolchain import calibration
    from device.toolchain.export import export_bundle

    out = Path(tempfile.mkdtemp(prefix="whisperkv-int-bundle-"))
    atexit.register(shutil.rmtree, out, True)
    limit = CALIBRATION_LIMIT.get(dtype)      # None: every utterance, samples()'s default
    with mock.patch.object(calibration, "samples", partial(calibration.samples, limit=limit)):
        export_bundle(load_model(), out / dtype, dtype, ("tflite",), cross)
    return out / dtype


@lru_cache(maxsize=1)
def compiled_integer_bundle() -> Path:
    """The a16w8 bundle (integer_bundle) compiled by the STAND-IN ncc-tflite, once per test process: its .dla's
    have int16 slots, and its .tflite graphs stay beside them (each module clears the `.calls` files it reads)."""
    from device.toolchain.compile import compile_bundle
    from tests.device.toolchain.ncc_standin import write_ncc

    root = Path(tempfile.mkdtemp(prefix="whisperkv-int-dla-"))
    atexit.register(shutil.rmtree, root, True)
    shutil.copytree(integer_bundle("a16w8", "kv"), root / "a16w8")
    compile_bundle(root / "a16w8", ncc=write_ncc(root, root / "ncc.log"))
    return root / "a16w8"


WINDOWS = (10, 20, 30)


@lru_cache(maxsize=1)
def compiled_windowed_bundle() -> Path:
    """The installed weights' fp32 TFLite bundle with an encoder per window (`whisperkv export --windows 10,20,30`),
    compiled by the STAND-IN ncc-tflite, once per test process."""
    from core.model.weights import load_model
    from device.toolchain.compile import compile_bundle
    from device.toolchain.export import export_bundle
    from tests.device.toolchain.ncc_standin import write_ncc

    root = Path(tempfile.mkdtemp(prefix="whisperkv-windows-"))
    atexit.register(shutil.rmtree, root, True)
    export_bundle(load_model(), root / "bundle", "fp32", ("tflite",), windows=WINDOWS)
    compile_bundle(root / "bundle", ncc=write_ncc(root, root / "ncc.log"))
    return root / "bundle"


@lru_cache(maxsize=1)
def compiled_dla_bundle() -> Path:
    """The installed weights' TFLite bundle compiled by the STAND-IN ncc-tflite, once per test process: the dla
    tests of every module share it (each clears the `.calls` files it reads)."""
    from device.deploy.deploy import cached_tflite_bundle
    from device.toolchain.compile import compile_bundle
    from tests.device.toolchain.ncc_standin import write_ncc

    root = Path(tempfile.mkdtemp(prefix="whisperkv-dla-"))
    atexit.register(shutil.rmtree, root, True)
    shutil.copytree(cached_tflite_bundle(), root / "bundle")
    compile_bundle(root / "bundle", ncc=write_ncc(root, root / "ncc.log"))
    return root / "bundle"


# The STAND-IN Neuron runtime's builds the tests run (tests/device/runner/standin/neuron_runtime.c), none with the
# marker MediaTek's library lacks: V1 only and both APIs (V1 is then used), their inputs' rows padded, as a runtime
# with conversion suppressed reports them; V2 only (conversion on: no padding applies); and both with every row
# padded, outputs too, and without V1's get*Number (older headers).
STANDIN_BUILDS = {"v1": ("WITH_V1", "PADDED"), "v2": ("WITH_V2",), "v1+v2": ("PADDED",),
                  "padded": ("PADDED", "PAD_OUTPUTS", "NO_NUMBER")}
YOCTO_NAME = "libneuronusdk_runtime.mtk.so.8"     # the name a Genio IoT Yocto image gives the library


@cache
def standin_library(build: str = "v1+v2", own_python: bool = False) -> Path:
    """One STAND-IN runtime build per test process, in its own folder, named as the Yocto image names it.
    `own_python`: the build for a process without Python, the native runner (OWN_PYTHON: it starts its own
    interpreter to compute; neuron_runtime.c)."""
    from tests.device.runner.standin.build import build_standin

    out = Path(tempfile.mkdtemp(prefix=f"whisperkv-standin-{build.replace('+', '-')}-"))
    atexit.register(shutil.rmtree, out, True)
    return build_standin(out, *STANDIN_BUILDS[build], *(["OWN_PYTHON"] if own_python else []), name=YOCTO_NAME)
