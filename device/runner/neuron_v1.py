"""Neuron Runtime V1 (RuntimeAPI.h, Types.h as the public ports ship them) for one compiled `.dla`.

The sequence of the public Genio 720 Whisper runner (hhlqwq/mtk_models whisper_tiny/deploy/board/
whisper_board_eval.cpp) and the MT8371 Android ports (superLin006/MTK_model_zoo): EnvOptions → `create` (the
ports' `create_with_options` with their option string, where exported) → `loadNetworkFromFile` → QoS → the slots
counted (device/runner/neuron_graph.py) → per run `setInput`/`setOutput` with `BufferAttribute{-1}` passed by
value, then `inference` → `release`.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

from device.runner.neuron_graph import DLA_FIX, RUN_FIX, NeuronError, RuntimeGraph, check_rc, contiguous

K_ENV_OPT_HARDWARE = 1 << 2          # deviceKind bit: run on the APU (Types.h)
MDLA_CORE_AUTO = 0
OPTIONS = b'--apusys-config "{ \\"high_addr\\": true }"'    # the Android ports' create_with_options string
CREATE_FIX = "check that the APU driver is loaded (/dev/apusys*) and that this is MediaTek's runtime for this SoC"


class EnvOptions(ctypes.Structure):
    _fields_ = [("deviceKind", ctypes.c_uint32), ("MDLACoreOption", ctypes.c_int), ("CPUThreadNum", ctypes.c_uint8),
                ("suppressInputConversion", ctypes.c_bool), ("suppressOutputConversion", ctypes.c_bool)]


class BufferAttribute(ctypes.Structure):
    _fields_ = [("ionFd", ctypes.c_int)]


NON_ION = BufferAttribute(-1)


def env_options(threads: int = 1) -> EnvOptions:
    """The APU, any MDLA core, `threads` CPU threads. Conversion stays ON (both suppress… false): our slots are
    fp32 or int as model.json records them and the runtime converts them to the MDLA's types and layout, so the
    buffers are the tensors' own sizes. The Genio 720 runner suppresses it because its graphs have fp16 slots in
    the NPU's native layout; a runtime with conversion suppressed takes buffers of the padded sizes instead."""
    return EnvOptions(K_ENV_OPT_HARDWARE, MDLA_CORE_AUTO, max(1, min(threads, 255)), False, False)


class V1Graph(RuntimeGraph):
    """One V1 runtime holding the loaded `.dla`; each run points its slots at the caller's arrays (no copy)."""

    api, prefix = "V1", "NeuronRuntime_"

    def __init__(self, lib, dla: Path, threads: int = 1):
        super().__init__(lib, dla)
        vp, p = ctypes.c_void_p, self.prefix
        buf = [vp, ctypes.c_uint64, vp, ctypes.c_size_t, BufferAttribute]
        self._set = {"setInput": lib.fn(p + "setInput", buf), "setOutput": lib.fn(p + "setOutput", buf)}
        self._inference = lib.fn(p + "inference", [vp])
        env, handle = env_options(threads), vp()
        if lib.has(p + "create_with_options"):
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
        """One synchronous inference: every array C-contiguous, in slot order, of the tensor's own size."""
        self._live()
        for name, arrays in (("setInput", inputs), ("setOutput", outputs)):
            for i, a in enumerate(arrays):
                check_rc(self._set[name](self.handle, i, *contiguous(a), NON_ION), self.prefix + name, self.file,
                         RUN_FIX)
        check_rc(self._inference(self.handle), self.prefix + "inference", self.file, RUN_FIX)
