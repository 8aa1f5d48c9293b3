"""MediaTek's Neuron runtime (RuntimeV2.h) through ctypes: one runtime per compiled `.dla`, run synchronously.

The C API (NeuroPilot's public RuntimeV2.h, docs/board.md):
    int  NeuronRuntimeV2_create(const char* dla, size_t nbThreads, void** runtime, size_t backlog);
    int  NeuronRuntimeV2_run(void* runtime, SyncInferenceRequest request);
    int  NeuronRuntimeV2_getInputNumber / getOutputNumber(void* runtime, size_t* n);
    int  NeuronRuntimeV2_getInputSize / getOutputSize(void* runtime, uint64_t handle, size_t* bytes);
    int  NeuronRuntimeV2_getInputPaddedSize / getOutputPaddedSize(void* runtime, uint64_t handle, size_t* bytes);
    void NeuronRuntimeV2_release(void* runtime);
    int  NeuronRuntime_getVersion(NeuronVersion* version);     (optional: {uint8 major, minor, patch})
Every int is a RuntimeAPI error code, 0 on success. Inputs and outputs are slots in the order the compiler
gave them (the TFLite graph's), each an IOBuffer over memory the caller owns.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np

from core.errors import WhisperKVError

# Where board images keep the library: Genio IoT Yocto, then Android vendor partitions.
KNOWN_PATHS = ("/usr/lib/libneuron_runtime.so", "/usr/lib64/libneuron_runtime.so",
               "/vendor/lib64/libneuronusdk_runtime.mtk.so", "/system/vendor/lib64/libneuronusdk_runtime.mtk.so",
               "/vendor/lib64/libneuron_runtime.so")
LIB_FIX = ("install MediaTek's Neuron runtime on the board, or name it with ?neuron_lib=PATH "
           "(e.g. /vendor/lib64/libneuronusdk_runtime.mtk.so)")
_SYMBOLS = ("create", "run", "getInputNumber", "getOutputNumber", "getInputSize", "getOutputSize", "release")


class NeuronError(WhisperKVError):
    code = "model_missing"


class IOBuffer(ctypes.Structure):
    _fields_ = [("buffer", ctypes.c_void_p), ("length", ctypes.c_size_t), ("fd", ctypes.c_int),
                ("offset", ctypes.c_int), ("reserved2_should_be_init_zero", ctypes.c_uint64),
                ("reserved3_should_be_init_zero", ctypes.c_uint64)]


class NeuronVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint8), ("minor", ctypes.c_uint8), ("patch", ctypes.c_uint8)]


class SyncInferenceRequest(ctypes.Structure):
    _fields_ = [("inputs", ctypes.POINTER(IOBuffer)), ("outputs", ctypes.POINTER(IOBuffer))]


def find_library(path: str | None = None) -> str:
    """The library to load: `path` when given, else the first known path that exists."""
    if path:
        if not os.path.isfile(path):
            raise NeuronError(f"the Neuron runtime library {path} does not exist", LIB_FIX)
        return path
    found = next((p for p in KNOWN_PATHS if os.path.isfile(p)), None)
    if found is None:
        raise NeuronError("no Neuron runtime library here (looked at " + ", ".join(KNOWN_PATHS) + ")", LIB_FIX)
    return found


def installed() -> bool:
    """A runtime library at one of the known paths: `auto` picks the dla backend only then (never on a PC)."""
    return any(os.path.isfile(p) for p in KNOWN_PATHS)


class NeuronLibrary:
    """The loaded library, its V2 functions typed once."""

    def __init__(self, path: str | None = None):
        self.path = find_library(path)
        try:
            lib = ctypes.CDLL(self.path)
        except OSError as exc:
            raise NeuronError(f"cannot load the Neuron runtime library {self.path} ({exc})", LIB_FIX) from None
        missing = [s for s in _SYMBOLS if not hasattr(lib, f"NeuronRuntimeV2_{s}")]
        if missing:
            raise NeuronError(f"{self.path} is not a Neuron runtime V2 library: it lacks "
                              + ", ".join(f"NeuronRuntimeV2_{s}" for s in missing), LIB_FIX)
        self.lib = lib
        vp, sz = ctypes.c_void_p, ctypes.c_size_t
        self._fn("create", [ctypes.c_char_p, sz, ctypes.POINTER(vp), sz])
        self._fn("run", [vp, SyncInferenceRequest])
        for name in ("getInputNumber", "getOutputNumber"):
            self._fn(name, [vp, ctypes.POINTER(sz)])
        for name in ("getInputSize", "getOutputSize", "getInputPaddedSize", "getOutputPaddedSize"):
            if hasattr(lib, f"NeuronRuntimeV2_{name}"):
                self._fn(name, [vp, ctypes.c_uint64, ctypes.POINTER(sz)])
        self._fn("release", [vp], restype=None)

    def version(self) -> str | None:
        """The library's version, "major.minor.patch", where it reports one (a .dla loads only on a runtime of
        its compiler's major version)."""
        get = getattr(self.lib, "NeuronRuntime_getVersion", None)
        if get is None:
            return None
        get.argtypes, get.restype = [ctypes.POINTER(NeuronVersion)], ctypes.c_int
        v = NeuronVersion()
        return f"{v.major}.{v.minor}.{v.patch}" if get(ctypes.byref(v)) == 0 else None

    def _fn(self, name: str, argtypes: list, restype=ctypes.c_int) -> None:
        f = getattr(self.lib, f"NeuronRuntimeV2_{name}")
        f.argtypes, f.restype = argtypes, restype

    def call(self, name: str, *args) -> int:
        return getattr(self.lib, f"NeuronRuntimeV2_{name}")(*args)

    def has(self, name: str) -> bool:
        return hasattr(self.lib, f"NeuronRuntimeV2_{name}")


class NeuronGraph:
    """One compiled graph: a runtime created once, its slots' byte sizes, and synchronous runs into buffers the
    caller keeps (no copy: each IOBuffer points at a NumPy array's memory)."""

    def __init__(self, lib: NeuronLibrary, dla: Path, threads: int = 1):
        self.lib, self.file = lib, Path(dla)
        handle = ctypes.c_void_p()
        rc = lib.call("create", str(self.file).encode(), threads, ctypes.byref(handle), 1)
        if rc != 0 or not handle.value:
            raise NeuronError(f"NeuronRuntimeV2_create failed for {self.file.name} with error code {rc} "
                              f"({lib.path})", "check that the .dla was compiled for this SoC "
                              "(`whisperkv compile --soc auto --device URL`) and that the APU driver is loaded")
        self.handle = handle
        self.input_sizes = self._sizes("Input")
        self.output_sizes = self._sizes("Output")

    def _sizes(self, kind: str) -> list[int]:
        n = ctypes.c_size_t()
        self._check(self.lib.call(f"get{kind}Number", self.handle, ctypes.byref(n)), f"get{kind}Number")
        sizes = []
        for i in range(n.value):
            size = ctypes.c_size_t()
            self._check(self.lib.call(f"get{kind}Size", self.handle, i, ctypes.byref(size)), f"get{kind}Size")
            sizes.append(size.value)
        return sizes

    def padded_sizes(self, kind: str) -> list[int] | None:
        """What getInputPaddedSize/getOutputPaddedSize report, where the library has them."""
        name = f"get{kind}PaddedSize"
        if not self.lib.has(name):
            return None
        out = []
        for i in range(len(self.input_sizes if kind == "Input" else self.output_sizes)):
            size = ctypes.c_size_t()
            self._check(self.lib.call(name, self.handle, i, ctypes.byref(size)), name)
            out.append(size.value)
        return out

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise NeuronError(f"NeuronRuntimeV2_{what} failed for {self.file.name} with error code {rc}",
                              "the runtime library or the .dla is damaged: recompile and redeploy")

    def run(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> None:
        """One synchronous inference: every array C-contiguous, in slot order."""
        if not self.handle:
            raise NeuronError(f"the runtime of {self.file.name} was released and could not be created again",
                              "restart the runner; if it persists check the APU driver's log (dmesg) on the board")
        ins = (IOBuffer * len(inputs))(*[_buffer(a) for a in inputs])
        outs = (IOBuffer * len(outputs))(*[_buffer(a) for a in outputs])
        rc = self.lib.call("run", self.handle, SyncInferenceRequest(ins, outs))
        if rc != 0:
            raise NeuronError(f"NeuronRuntimeV2_run failed for {self.file.name} with error code {rc}",
                              "the decode stopped here; retry, and if it persists check the APU driver's log "
                              "(dmesg) on the board")

    def release(self) -> None:
        if self.handle:
            self.lib.call("release", self.handle)
            self.handle = None


def _buffer(a: np.ndarray) -> IOBuffer:
    if not a.flags.c_contiguous:
        raise ValueError("Neuron IOBuffers need C-contiguous arrays")
    return IOBuffer(a.ctypes.data, a.nbytes, -1, 0, 0, 0)
