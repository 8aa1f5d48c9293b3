"""The computing half of the STAND-IN Neuron runtime (neuron_runtime.c calls these, holding the GIL).

A stand-in `.dla` (the tests' stand-in ncc-tflite writes them) is b"STAND-IN DLA of " + the TFLite graph it
was compiled from: each runtime runs that graph in LiteRT, with its slots in the graph's input and output order.
Every create and run is appended to `<dla>.calls` ("create", "run"), so a test can check that the encoder ran
once per window and the step once per decoded position.
"""
from __future__ import annotations

import ctypes

import numpy as np

MAGIC = b"STAND-IN DLA of "
_runtimes: dict[int, dict] = {}


def create(path: str, threads: int) -> int:
    from ai_edge_litert.interpreter import Interpreter

    data = open(path, "rb").read()
    if not data.startswith(MAGIC):
        return -1                      # not a .dla this stand-in can run: create fails with a code
    interp = Interpreter(model_content=data[len(MAGIC):], num_threads=max(1, threads))
    interp.allocate_tensors()
    handle = len(_runtimes) + 1 + max(_runtimes, default=0)
    _runtimes[handle] = {"interp": interp, "path": path, "inputs": interp.get_input_details(),
                         "outputs": interp.get_output_details()}
    _log(path, "create")
    return handle


def _log(path: str, what: str) -> None:
    with open(path + ".calls", "a") as f:
        f.write(what + "\n")


def size(handle: int, kind: str, slot: int) -> int:
    details = _runtimes[handle][kind]
    if slot < 0:
        return len(details)
    d = details[slot]
    return int(np.prod(d["shape"], dtype=np.int64)) * np.dtype(d["dtype"]).itemsize


count = lambda handle, kind: size(handle, kind, -1)  # noqa: E731


def _view(address: int, length: int, detail: dict) -> np.ndarray:
    raw = (ctypes.c_char * length).from_address(address)
    return np.frombuffer(raw, dtype=detail["dtype"]).reshape(detail["shape"])


def run(handle: int, inputs: list, outputs: list) -> int:
    rt = _runtimes[handle]
    interp = rt["interp"]
    for (address, length), d in zip(inputs, rt["inputs"]):
        if length != size(handle, "inputs", rt["inputs"].index(d)):
            return 3                   # a buffer of the wrong size: the real runtime refuses it too
        interp.set_tensor(d["index"], _view(address, length, d))
    interp.invoke()
    for (address, length), d in zip(outputs, rt["outputs"]):
        out = np.ascontiguousarray(interp.get_tensor(d["index"]))
        if length != out.nbytes:
            return 3
        ctypes.memmove(address, out.ctypes.data, out.nbytes)
    _log(rt["path"], "run")
    return 0


def release(handle: int) -> int:
    _runtimes.pop(handle, None)
    return 0
