"""What both Neuron runtime APIs share for one graph (device/runner/neuron/neuron_v1.py, neuron_v2.py): QoS, counting the
slots and their sizes, the padded sizes, release. Each API's calls differ only by their prefix
("NeuronRuntime_" for V1, "NeuronRuntimeV2_" for V2), with the same signatures (RuntimeAPI.h, RuntimeV2.h).
"""
from __future__ import annotations

import ctypes
import weakref
from pathlib import Path

from core.errors import WhisperKVError

MAX_SLOTS = 256                      # probing stops here whatever the library answers
_SIZE_ARGS = [ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_size_t)]


class NeuronError(WhisperKVError):
    code = "model_missing"


def check_rc(rc: int, call: str, file: Path, fix: str = "the runtime library or the .dla is damaged: recompile "
             "and redeploy", slot: str = "") -> None:
    if rc != 0:
        raise NeuronError(f"{call} failed for {file.name}{slot} with error code {rc}", fix)


def contiguous(a) -> tuple[int, int]:
    """A NumPy array's address and byte length, for a buffer the runtime reads or writes in place."""
    if not a.flags.c_contiguous:
        raise ValueError("Neuron runtime buffers need C-contiguous arrays")
    return a.ctypes.data, a.nbytes


class QoSOptions(ctypes.Structure):
    _fields_ = [("preference", ctypes.c_int), ("priority", ctypes.c_int), ("boostValue", ctypes.c_uint8),
                ("maxBoostValue", ctypes.c_uint8), ("minBoostValue", ctypes.c_uint8), ("deadline", ctypes.c_uint16),
                ("abortTime", ctypes.c_uint16), ("delayedPowerOffTime", ctypes.c_int32),
                ("powerPolicy", ctypes.c_int), ("applicationType", ctypes.c_int),
                ("profiledQoSData", ctypes.c_void_p)]


# As the public MT8371 ports set it: prefer performance (0), high priority (2), boost 100, the default power-off
# delay (-1) and the sustainable power policy (1) (Types.h: RuntimeAPIQoS*; superLin006/MTK_model_zoo).
QOS = QoSOptions(0, 2, 100, 0, 0, 0, 0, -1, 1, 0, None)


class RuntimeGraph:
    """A created runtime (`handle`) for one `.dla`, driven through the functions named `prefix` + name."""

    prefix = ""

    def __init__(self, lib, dla: Path):
        self.lib, self.file, self.handle, self.qos = lib, dla, None, "off"
        self.names: dict[str, list[str]] = {"input": [], "output": []}   # the slots' names, for messages
        self._release = lib.fn(self.prefix + "release", [ctypes.c_void_p], restype=None)

    def _loaded(self) -> None:
        """After create (and load): QoS unless turned off, then the slots' sizes."""
        name = self.prefix + "setQoSOption"
        if self.lib.qos:
            self.qos = "not exported"
            if self.lib.has(name):
                rc = self.lib.fn(name, [ctypes.c_void_p, ctypes.POINTER(QoSOptions)])(self.handle, ctypes.byref(QOS))
                self.qos = "on" if rc == 0 else f"refused (error code {rc})"
        self.input_sizes = self._sizes("Input")
        self.output_sizes = self._sizes("Output")

    def _sizes(self, kind: str) -> list[int]:
        """Each slot's byte size: from get{kind}Number where exported, else (older V1 headers) by probing
        get{kind}Size by index until one fails, as the public ports do."""
        get, number = self.lib.fn(f"{self.prefix}get{kind}Size", _SIZE_ARGS), f"{self.prefix}get{kind}Number"
        n = ctypes.c_size_t(MAX_SLOTS)
        if self.lib.has(number):
            fn = self.lib.fn(number, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)])
            check_rc(fn(self.handle, ctypes.byref(n)), number, self.file)
        sizes = []
        for i in range(n.value):
            size = ctypes.c_size_t()
            rc = get(self.handle, i, ctypes.byref(size))
            if rc != 0 and not self.lib.has(number):
                break                # probing: the first index that fails is one past the last slot
            check_rc(rc, f"{self.prefix}get{kind}Size", self.file)
            sizes.append(size.value)
        return sizes

    def padded_sizes(self, kind: str) -> list[int] | None:
        """What get{kind}PaddedSize reports, where exported (the MDLA aligns widths). With conversion on they are
        not the buffers' sizes: only a V1 runtime with conversion suppressed takes buffers of the padded sizes."""
        name = f"{self.prefix}get{kind}PaddedSize"
        if not self.lib.has(name):
            return None
        get, out = self.lib.fn(name, _SIZE_ARGS), []
        for i in range(len(self.input_sizes if kind == "Input" else self.output_sizes)):
            size = ctypes.c_size_t()
            check_rc(get(self.handle, i, ctypes.byref(size)), name, self.file)
            out.append(size.value)
        return out

    def slot_name(self, kind: str, i: int, a) -> str:
        """A failing call's slot, in its message: ' input slot 4 (mask, 1856 bytes given)'."""
        names = self.names[kind]
        return f" {kind} slot {i}" + (f" ({names[i]}, {a.nbytes} bytes given)" if i < len(names) else
                                      f" ({a.nbytes} bytes given)")

    def _live(self) -> None:
        if not self.handle:
            raise NeuronError(f"the runtime of {self.file.name} was released and could not be created again",
                              "restart the runner; if it persists check the APU driver's log (dmesg) on the board")

    def _adopt(self, handle) -> None:
        """The created runtime, released when this graph goes if not before: a backend that is dropped (a model
        loaded anew, a load that failed part-way) frees what the runtime holds for it. Not at the interpreter's exit,
        when the process's end frees it and a call into the library could find Python half torn down."""
        self.handle = handle
        self._released = weakref.finalize(self, self._release, handle)
        self._released.atexit = False

    def release(self) -> None:
        if self.handle:
            self._released()
            self.handle = None
