"""Neuron Runtime V2 (RuntimeV2.h) for one compiled `.dla`: created from the file, run synchronously.

    int  NeuronRuntimeV2_create(const char* dla, size_t nbThreads, void** runtime, size_t backlog);
    int  NeuronRuntimeV2_run(void* runtime, SyncInferenceRequest request);      /* request by value */
    int  NeuronRuntimeV2_getInputNumber / getOutputNumber(void* runtime, size_t* n);
    int  NeuronRuntimeV2_getInputSize / getOutputSize / get…PaddedSize(void* runtime, uint64_t handle, size_t*);
    int  NeuronRuntimeV2_setQoSOption(void* runtime, const QoSOptions*);        (optional)
    void NeuronRuntimeV2_release(void* runtime);
Inputs and outputs are slots in the order the compiler gave them (the TFLite graph's), each an IOBuffer over memory
the caller owns, `fd` -1 for an ordinary buffer (MediaTek's "Neuron Runtime API V2" guide).
"""
from __future__ import annotations

import ctypes
from pathlib import Path

from device.runner.neuron.neuron_graph import NeuronError, RuntimeGraph, check_rc, contiguous
from device.spec.neuron_fixes import DLA_FIX, RUN_FIX


class IOBuffer(ctypes.Structure):
    _fields_ = [("buffer", ctypes.c_void_p), ("length", ctypes.c_size_t), ("fd", ctypes.c_int),
                ("offset", ctypes.c_int), ("reserved2_should_be_init_zero", ctypes.c_uint64),
                ("reserved3_should_be_init_zero", ctypes.c_uint64)]


class SyncInferenceRequest(ctypes.Structure):
    _fields_ = [("inputs", ctypes.POINTER(IOBuffer)), ("outputs", ctypes.POINTER(IOBuffer))]


class V2Graph(RuntimeGraph):
    """One runtime created from the `.dla`; each run hands it the caller's arrays without a copy."""

    api, prefix = "V2", "NeuronRuntimeV2_"

    def __init__(self, lib, dla: Path, threads: int = 1):
        super().__init__(lib, dla)
        vp, sz = ctypes.c_void_p, ctypes.c_size_t
        self._run = lib.fn(self.prefix + "run", [vp, SyncInferenceRequest])
        handle = vp()
        rc = lib.fn(self.prefix + "create", [ctypes.c_char_p, sz, ctypes.POINTER(vp), sz])(
            str(dla).encode(), threads, ctypes.byref(handle), 1)
        if rc != 0 or not handle.value:
            raise NeuronError(f"{self.prefix}create failed for {dla.name} with error code {rc} ({lib.path})", DLA_FIX)
        self._adopt(handle)
        self._loaded()

    def run(self, inputs: list, outputs: list) -> None:
        """One synchronous inference: every array C-contiguous, in slot order, of the tensor's own size."""
        self._live()
        ins = (IOBuffer * len(inputs))(*[IOBuffer(*contiguous(a), -1, 0, 0, 0) for a in inputs])
        outs = (IOBuffer * len(outputs))(*[IOBuffer(*contiguous(a), -1, 0, 0, 0) for a in outputs])
        check_rc(self._run(self.handle, SyncInferenceRequest(ins, outs)), self.prefix + "run", self.file, RUN_FIX)
