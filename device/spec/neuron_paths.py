"""Where MediaTek's Neuron runtime library is looked for, which of its two C APIs it exports, and its version.

Stdlib only and no __future__ import: device-info sends this file's text ahead of its probe, which runs with
the board's own Python before any runner is deployed; the runner's dla backend reads the same table
(device/runner/neuron/neuron_runtime.py).

The search order, first match wins (`?neuron_lib=PATH` / `--neuron-lib` bypasses it):
- Genio IoT Yocto: `libneuronusdk_runtime.mtk.so.8` and its `.so` link (a Genio 720 rity v26.0 image ships
  Neuron 8.2.16 there: hhlqwq/mtk_models yoloworld_xl/deploy/stage_neuron_runtime.sh), then the older images'
  `libneuron_runtime.so`;
- Android MT8371 (NeuroPilot SDK 8.0.10): `/vendor/lib64/mt8189/libneuron_runtime.8.so`, then the loader order of
  the public ports (superLin006/MTK_model_zoo NeuronRuntimeLibrary.cpp): `libneuron_runtime.{8,7,6}.so`,
  `libneuron_runtime.so`, then `libneuronusdk_runtime.mtk.so`;
- a distribution's library folders (Ubuntu on Genio installs into its multiarch folder), then the loader's own
  lookup by soname (LD_LIBRARY_PATH, ld.so.cache), as the public runners' `dlopen("libneuron_runtime.8.so")` does.
"""
import ctypes
import os
import re

_YOCTO = ("libneuronusdk_runtime.mtk.so.8", "libneuronusdk_runtime.mtk.so")
SEARCH_ORDER = (
    "/usr/lib/" + _YOCTO[0], "/usr/lib/" + _YOCTO[1], "/usr/lib/libneuron_runtime.so",
    "/vendor/lib64/mt8189/libneuron_runtime.8.so", "/vendor/lib64/libneuron_runtime.8.so",
    "/vendor/lib64/libneuron_runtime.7.so", "/vendor/lib64/libneuron_runtime.6.so",
    "/vendor/lib64/libneuron_runtime.so", "/vendor/lib64/libneuronusdk_runtime.mtk.so",
    *[folder + name for folder in ("/usr/lib/aarch64-linux-gnu/", "/usr/lib64/") for name in _YOCTO])
LIB_FIX = ("install MediaTek's Neuron runtime on the board, or name it with ?neuron_lib=PATH "
           "(e.g. /usr/lib/libneuronusdk_runtime.mtk.so.8)")
SONAMES = ("libneuronusdk_runtime.mtk.so.8", "libneuron_runtime.8.so")   # asked of the loader last
# What each API needs exported to be used (RuntimeAPI.h = V1, RuntimeV2.h = V2); the rest is optional.
V1_NEEDS = tuple("NeuronRuntime_" + s for s in ("create", "loadNetworkFromFile", "setInput", "setOutput",
                                                "inference", "getInputSize", "getOutputSize", "release"))
V2_NEEDS = tuple("NeuronRuntimeV2_" + s for s in ("create", "run", "getInputNumber", "getOutputNumber",
                                                  "getInputSize", "getOutputSize", "release"))
APIS = {"V1": V1_NEEDS, "V2": V2_NEEDS}
PREFERRED = ("V1", "V2")   # V1 first: the API the one public MT8189-family Whisper runner calls (a Genio 720)


class NeuronVersion(ctypes.Structure):
    """Types.h's NeuronVersion, which NeuronRuntime_getVersion fills."""
    _fields_ = [("major", ctypes.c_uint8), ("minor", ctypes.c_uint8), ("patch", ctypes.c_uint8)]


def tried() -> list:
    """Every place the search looks, in order: the paths, then the sonames."""
    return list(SEARCH_ORDER) + ["%s (the loader's search)" % s for s in SONAMES]


def first_present(paths=SEARCH_ORDER):
    """The first of `paths` that is a file, or None."""
    return next((p for p in paths if os.path.isfile(p)), None)


def by_soname(sonames=SONAMES):
    """(soname, the loaded ctypes.CDLL) for the first soname the loader finds, else None."""
    for name in sonames:
        try:
            return name, ctypes.CDLL(name)
        except OSError:
            continue
    return None


def apis_of(lib) -> list:
    """The APIs a loaded library (a ctypes.CDLL) exports whole, in PREFERRED order."""
    return [api for api in PREFERRED if all(hasattr(lib, s) for s in APIS[api])]


def version_of(lib):
    """The library's NeuronRuntime_getVersion as "major.minor.patch", or None when it reports none. The one
    caller of that function: its ctypes signature is set here only."""
    get = getattr(lib, "NeuronRuntime_getVersion", None)
    if get is None:
        return None
    get.argtypes, get.restype = [ctypes.POINTER(NeuronVersion)], ctypes.c_int
    v = NeuronVersion()
    return "%d.%d.%d" % (v.major, v.minor, v.patch) if get(ctypes.byref(v)) == 0 else None


def runtime_probe(paths=SEARCH_ORDER):
    """What device-info reports: the first library of `paths` (else of the loader's sonames), its version, the
    APIs it exports and the one the runner would use; None when there is none."""
    path = first_present(paths)
    if path is None:
        found = by_soname() if tuple(paths) == SEARCH_ORDER else None
        if found is None:
            return None
        path, lib = found
    else:
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            return {"path": path, "error": str(exc).splitlines()[0] if str(exc) else "cannot load"}
    apis = apis_of(lib)
    return {"path": path, "version": version_of(lib), "apis": apis, "api": apis[0] if apis else None}


def major(version: str | None) -> int | None:
    """The major version in a version text ("8.2.16", "ncc-tflite version 8.0.10-rc"), None when none is found."""
    m = re.search(r"(\d+)\.\d+", version or "")
    return int(m.group(1)) if m else None


def version_warning(compiler: str | None, runtime: str | None) -> str:
    """"" when the compiler's and the runtime's major versions agree or either is unknown, else why the .dla
    may not load."""
    c, r = major(compiler), major(runtime)
    if c is None or r is None or c == r:
        return ""
    return (f"the .dla graphs were compiled by ncc-tflite {c}.x ({compiler}) but the Neuron runtime is {runtime}: "
            f"a .dla loads only on a runtime of its compiler's major version; recompile with an ncc-tflite {r}.x")
