"""The computing half of the STAND-IN Neuron runtime (neuron_runtime.c calls these, holding the GIL).

A stand-in `.dla` (the tests' stand-in ncc-tflite writes them) is b"STAND-IN DLA of " + the TFLite graph it
was compiled from, or a plain TFLite file (the flatbuffer's identifier b"TFL3" at bytes 4..8): each runtime runs
that graph in LiteRT, with its slots in the graph's input and output order. Every create and run is appended to
`<dla>.calls` ("create", "run"), so a test can check that the encoder ran once per window and the step once per
decoded position; the QoS a runtime was given goes to `<dla>.qos`. With conversion suppressed (V1's EnvOptions)
a graph with fp32 slots is refused, as the MDLA takes none then. Runs take buffers of the tensors' own sizes
only; the padded sizes (the last dimension rounded up to 16 elements, as the MDLA aligns widths) are reported,
never accepted. `APU` (set by the library from STANDIN_APU) names the unix socket of a STAND-IN APU (apu.py):
when set, every call below is computed in that process apart, not in the runner's.

The profiler, as MediaTek's runtime documents it: with MTKNN_ENABLE_PROFILER=1 at create, the report goes to the
MTKNN_PROFILER_LOG_PATH named then, written when the runtime is released. Its tables have the documented columns
(Time, Ratio, ExeTimes, Time/Inf., Description, GraphIdx, ExeIdx), but titles of its own, and LiteRT cannot time
single ops: its per-op table splits each run's measured time over the ops by their multiply-accumulates. So it
tests the path (board → PC → view), never the NPU's figures.

Two faults an NPU could show, read from the environment at each run (the doctor's numbers rung must catch both):
STANDIN_NOISE=0.05 adds Gaussian noise of that standard deviation to every float output, as an NPU computing
wrongly would; STANDIN_SWAP=cross_k,cross_v hands those two outputs (same size) back swapped, as a layout bug would.
"""
from __future__ import annotations

import csv
import ctypes
import functools
import io
import os
import time

import numpy as np

MAGIC = b"STAND-IN DLA of "
ALIGN = 16                             # elements: the MDLA's width alignment, as the padded sizes report it
APU = ""
_runtimes: dict[int, dict] = {}


def _on_apu(fn):
    """The call computed by the STAND-IN APU at APU when one is set (apu.py), else here."""
    @functools.wraps(fn)
    def call(*args):
        if APU:
            from apu import call as on_apu     # apu.py, beside this file on the library's sys.path

            return on_apu(APU, fn.__name__, args)
        return fn(*args)
    return call


def tflite_of(data: bytes) -> bytes | None:
    """The TFLite graph a .dla holds, or None when it holds none."""
    graph = data[len(MAGIC):] if data.startswith(MAGIC) else data
    return graph if graph[4:8] == b"TFL3" else None


@_on_apu
def create(path: str, threads: int, suppress_in: int = 0, suppress_out: int = 0) -> int:
    with open(path, "rb") as f:
        graph = tflite_of(f.read())
    if graph is None:
        return -1                      # not a .dla this stand-in can run: create fails with a code
    from ai_edge_litert.interpreter import Interpreter     # lazy: a runner whose APU computes needs no LiteRT

    interp = Interpreter(model_content=graph, num_threads=max(1, threads))
    interp.allocate_tensors()
    for suppressed, details in ((suppress_in, interp.get_input_details()), (suppress_out, interp.get_output_details())):
        if suppressed and any(d["dtype"] == np.float32 for d in details):
            print("STAND-IN Neuron runtime: fp32 slots with conversion suppressed", flush=True)
            return -4
    handle = len(_runtimes) + 1 + max(_runtimes, default=0)
    report = os.environ.get("MTKNN_PROFILER_LOG_PATH") if os.environ.get("MTKNN_ENABLE_PROFILER") == "1" else None
    _runtimes[handle] = {"interp": interp, "path": path, "inputs": interp.get_input_details(),
                         "outputs": interp.get_output_details(), "report": report, "run_ms": []}
    _log(path, "create")
    return handle


def _log(path: str, what: str) -> None:
    with open(path + ".calls", "a") as f:
        f.write(what + "\n")


@_on_apu
def size(handle: int, kind: str, slot: int, padded: int = 0) -> int:
    """A slot's bytes (padded: its last dimension rounded up to ALIGN elements); the slot count for slot -1;
    -1 for a slot past the last."""
    details = _runtimes[handle][kind]
    if slot < 0:
        return len(details)
    if slot >= len(details):
        return -1
    d = details[slot]
    shape = [int(n) for n in d["shape"]]
    if padded and shape:
        shape[-1] = -(-shape[-1] // ALIGN) * ALIGN
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(d["dtype"]).itemsize


@_on_apu
def qos(handle: int, preference: int, priority: int, boost: int, policy: int) -> int:
    with open(_runtimes[handle]["path"] + ".qos", "a") as f:
        f.write(f"preference {preference} priority {priority} boost {boost} policy {policy}\n")
    return 0



def _view(address: int, length: int, detail: dict) -> np.ndarray:
    raw = (ctypes.c_char * length).from_address(address)
    return np.frombuffer(raw, dtype=detail["dtype"]).reshape(detail["shape"])


@_on_apu
def run(handle: int, inputs: list, outputs: list) -> int:
    rt = _runtimes[handle]
    interp = rt["interp"]
    for (address, length), d in zip(inputs, rt["inputs"]):
        if length != size(handle, "inputs", rt["inputs"].index(d)):
            return 3                   # a buffer of the wrong size: the real runtime refuses it too
        interp.set_tensor(d["index"], _view(address, length, d))
    t0 = time.perf_counter()
    interp.invoke()
    rt["run_ms"].append((time.perf_counter() - t0) * 1000)
    for (address, length), d in zip(outputs, _faulty(rt["outputs"])):
        out = _noisy(np.ascontiguousarray(interp.get_tensor(d["index"])))
        if length != out.nbytes:
            return 3
        ctypes.memmove(address, out.ctypes.data, out.nbytes)
    _log(rt["path"], "run")
    return 0


def _faulty(details: list) -> list:
    """The outputs in the order they are written back: STANDIN_SWAP's two exchanged (matched by name)."""
    names = [n for n in os.environ.get("STANDIN_SWAP", "").split(",") if n]
    found = [next((i for i, d in enumerate(details) if n in d["name"]), None) for n in names[:2]]
    if len(found) < 2 or None in found:
        return details
    out = list(details)
    out[found[0]], out[found[1]] = details[found[1]], details[found[0]]
    return out


def _noisy(out: np.ndarray) -> np.ndarray:
    std = float(os.environ.get("STANDIN_NOISE") or 0)
    if not std or out.dtype.kind != "f":
        return out
    noise = np.random.default_rng(_rng_calls.append(0) or len(_rng_calls)).normal(0, std, out.shape)
    return (out + noise).astype(out.dtype)


_rng_calls: list[int] = []


@_on_apu
def release(handle: int) -> int:
    rt = _runtimes.pop(handle, None)
    if rt and rt["report"] and rt["run_ms"]:
        with open(rt["report"], "w") as f:
            f.write(_report(rt["interp"], rt["run_ms"]))
    return 0


def _macs(interp, op: dict) -> int:
    """An op's multiply-accumulates (matrix products, convolutions), else its output's elements."""
    shape = lambda i: interp._get_tensor_details(int(i), 0)["shape"]  # noqa: E731
    out = int(np.prod(shape(op["outputs"][0]), dtype=np.int64))
    if op["op_name"] in ("FULLY_CONNECTED", "BATCH_MATMUL"):
        return out * int(shape(op["inputs"][0])[-1])
    if op["op_name"] == "CONV_2D":
        return out * int(np.prod(shape(op["inputs"][1])[1:], dtype=np.int64))
    return out


def _table(title: str, total: float, runs: int, rows: list[tuple[str, float, int]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    buf.write(f"{title}\nTotal Execution Time: {total} ms over {runs} times inference.\n")
    w.writerow(["Time", "Ratio", "ExeTimes", "Time/Inf.", "Description", "GraphIdx", "ExeIdx"])
    for name, ms, n in rows:
        w.writerow([round(ms, 4), round(ms / total, 6) if total else 0, n, round(ms / runs, 4) if runs > 1 else "",
                    name, 0, ""])
    return buf.getvalue() + "\n"


def _report(interp, run_ms: list[float]) -> str:
    total, runs = sum(run_ms), len(run_ms)
    ops = interp._get_ops_details()
    macs = [_macs(interp, op) for op in ops]
    share = total / max(1, sum(macs))
    return (_table("STAND-IN Inference (LEVEL 1) - Summary", total, runs, [("Inference", total, runs)])
            + _table("STAND-IN Operations (LEVEL 2) - Breakdown, split by multiply-accumulates", total, runs,
                     [(f"#{op['index']} {op['op_name']}", m * share, runs) for op, m in zip(ops, macs)]))
