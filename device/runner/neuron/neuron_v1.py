"""Neuron Runtime V1 (RuntimeAPI.h, Types.h as the public ports ship them) for one compiled `.dla`.

The sequence of the public Genio 720 Whisper runner (hhlqwq/mtk_models whisper_tiny/deploy/board/
whisper_board_eval.cpp): EnvOptions{hardware, any MDLA core, threads, both conversions suppressed} → plain `create`
→ `loadNetworkFromFile` → QoS → the slots counted (device/runner/neuron/neuron_graph.py) → per run `setInput`/`setOutput`
with `BufferAttribute{-1}` passed by value, then `inference` → `release`. `?neuron_io=converted` leaves conversion
on; `?neuron_create=options` creates through `create_with_options` with the MT8371 Android ports' option string
(superLin006/MTK_model_zoo).
"""
from __future__ import annotations

import ctypes
from pathlib import Path

from core.errors import Fix, Setting
from device.runner.neuron.neuron_graph import NeuronError, RuntimeGraph, check_rc, contiguous
from device.spec.neuron_fixes import CREATE_FIX, DLA_FIX, RUN_FIX

K_ENV_OPT_HARDWARE = 1 << 2          # deviceKind bit: run on the APU (Types.h)
MDLA_CORE_AUTO = 0
OPTIONS = b'--apusys-config "{ \\"high_addr\\": true }"'    # the Android ports' create_with_options string


class EnvOptions(ctypes.Structure):
    _fields_ = [("deviceKind", ctypes.c_uint32), ("MDLACoreOption", ctypes.c_int), ("CPUThreadNum", ctypes.c_uint8),
                ("suppressInputConversion", ctypes.c_bool), ("suppressOutputConversion", ctypes.c_bool)]


class BufferAttribute(ctypes.Structure):
    _fields_ = [("ionFd", ctypes.c_int)]


NON_ION = BufferAttribute(-1)


def env_options(threads: int = 1, suppressed: bool = True) -> EnvOptions:
    """The APU, any MDLA core, `threads` CPU threads; `suppressed`: the runtime converts nothing, so each slot
    takes the NPU's native form (fp16, rows padded as get*PaddedSize says: device/runner/neuron/neuron_slots.py), as the
    Genio 720 runner feeds it. Not suppressed, the runtime converts the .tflite's own types and sizes."""
    return EnvOptions(K_ENV_OPT_HARDWARE, MDLA_CORE_AUTO, max(1, min(threads, 255)), suppressed, suppressed)


class V1Graph(RuntimeGraph):
    """One V1 runtime holding the loaded `.dla`; each run points its slots at the caller's arrays (no copy)."""

    api, prefix = "V1", "NeuronRuntime_"

    def __init__(self, lib, dla: Path, threads: int = 1):
        super().__init__(lib, dla)
        vp, p = ctypes.c_void_p, self.prefix
        buf = [vp, ctypes.c_uint64, vp, ctypes.c_size_t, BufferAttribute]
        self._set = {"setInput": lib.fn(p + "setInput", buf), "setOutput": lib.fn(p + "setOutput", buf)}
        self._inference = lib.fn(p + "inference", [vp])
        env, handle = env_options(threads, lib.suppressed), vp()
        if lib.create == "options":
            if not lib.has(p + "create_with_options"):
                raise NeuronError(f"{lib.path} does not export {p}create_with_options",
                                  Fix(Setting("neuron_create", "options", "drop")))
            call = p + "create_with_options"
            rc = lib.fn(call, [ctypes.c_char_p, ctypes.POINTER(EnvOptions), ctypes.POINTER(vp)])(
                OPTIONS, ctypes.byref(env), ctypes.byref(handle))
        else:
            call = p + "create"
            rc = lib.fn(call, [ctypes.POINTER(EnvOptions), ctypes.POINTER(vp)])(ctypes.byref(env), ctypes.byref(handle))
        if rc != 0 or not handle.value:
            raise NeuronError(f"{call} failed for {dla.name} with error code {rc} ({lib.path})", CREATE_FIX)
        self._adopt(handle)
        rc = lib.fn(p + "loadNetworkFromFile", [vp, ctypes.c_char_p])(handle, str(dla).encode())
        if rc != 0:
            self.release()
            raise NeuronError(f"{p}loadNetworkFromFile failed for {dla.name} with error code {rc} ({lib.path})",
                              DLA_FIX)
        self._loaded()

    def run(self, inputs: list, outputs: list) -> None:
        """One synchronous inference: every array C-contiguous, in slot order, of the size its slot takes."""
        self._live()
        for name, kind, arrays in (("setInput", "input", inputs), ("setOutput", "output", outputs)):
            for i, a in enumerate(arrays):
                check_rc(self._set[name](self.handle, i, *contiguous(a), NON_ION), self.prefix + name, self.file,
                         RUN_FIX, self.slot_name(kind, i, a))
        check_rc(self._inference(self.handle), self.prefix + "inference", self.file, RUN_FIX)
