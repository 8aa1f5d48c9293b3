"""The computing half of the STAND-IN Neuron runtime (neuron_runtime.c calls these, holding the GIL).

A stand-in `.dla` (the tests' stand-in ncc-tflite writes them) is b"STAND-IN DLA of " + the TFLite graph it
was compiled from, or a plain TFLite file (the flatbuffer's identifier b"TFL3" at bytes 4..8): each runtime runs
that graph in LiteRT, with its slots in the graph's input and output order. Every create and run is appended to
`<dla>.calls` ("create", "run"), so a test can check that the encoder ran once per window and the step once per
decoded position; the QoS a runtime was given goes to `<dla>.qos`.

The slots' form, as the one public Whisper runner on this family found MediaTek's runtime (hhlqwq/mtk_models
whisper_board_eval.cpp): with conversion suppressed (V1's EnvOptions) a float slot is fp16 in the NPU's form
(get*Size reports 2 bytes an element, whatever the .tflite's type) and each buffer must be the padded size, its
innermost rows `pitch` elements apart; the stand-in converts to and from the .tflite's own types for LiteRT. With
conversion on (and every V2 runtime) buffers are the .tflite's types at the tensors' own sizes, and the padded sizes
are reported, never accepted. The library's build decides what is padded (`pad`): nothing (0), the inputs' rows to
ALIGN elements (1: the outputs come unpadded, as that runner's logits did), or the outputs' rows too (2). A buffer
of another size is refused, at V1's setInput/setOutput (`accepts`) and at every run. No public record says the
runtime refuses fp32 .tflite slots with conversion suppressed, so this stand-in does not. `APU` (set by the library
from STANDIN_APU) names the unix socket of a STAND-IN APU (apu.py): when set, every call below is computed in that
process apart, not in the runner's.

The profiler, as MediaTek's runtime documents it: with MTKNN_ENABLE_PROFILER=1 at create, the report goes to the
MTKNN_PROFILER_LOG_PATH named then, written when the runtime is released. Its tables have the documented columns
(Time, Ratio, ExeTimes, Time/Inf., Description, GraphIdx, ExeIdx), but titles of its own, and LiteRT cannot time
single ops: its per-op table splits each run's measured time over the ops by their multiply-accumulates. So it
tests the path (board → PC → view), never the NPU's figures.

Faults an NPU could show, read from the environment at each run: STANDIN_NOISE=0.05 adds Gaussian noise of that
standard deviation to every float output, as an NPU computing wrongly would; STANDIN_SWAP=cross_k,cross_v hands
those two outputs (same size) back swapped, as a layout bug would (the doctor's numbers rung must catch both);
STANDIN_REL_NOISE=0.001 scales every float output by 1 + noise of that standard deviation, what fp16 rounding
could do (the doctor must pass it); STANDIN_EOT_FROM=N raises the end-of-text logit from the Nth step run after
each encoder run on (the numbers rung, which reads the first step, sees nothing; the tokens rung must fail).
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
HELD_BYTES = 1 << 20                   # inputs this large are compared with the last run's before converting
ALIGN = 16                             # elements: the MDLA's width alignment, as the padded sizes report it
APU = ""
_runtimes: dict[int, dict] = {}


def _on_apu(fn):
    """The call computed by the STAND-IN APU at APU when one is set (apu.py), else here."""
    @functools.wraps(fn)
    def call(*args):
        if APU:
            from apu import call as on_apu  # apu.py, beside this file on the library's sys.path

            return on_apu(APU, fn.__name__, args)
        return fn(*args)
    return call


def tflite_of(data: bytes) -> bytes | None:
    """The TFLite graph a .dla holds, or None when it holds none."""
    graph = data[len(MAGIC):] if data.startswith(MAGIC) else data
    return graph if graph[4:8] == b"TFL3" else None


@_on_apu
def create(path: str, threads: int, suppress_in: int = 0, suppress_out: int = 0, pad: int = 0) -> int:
    with open(path, "rb") as f:
        graph = tflite_of(f.read())
    if graph is None:
        return -1                      # not a .dla this stand-in can run: create fails with a code
    from ai_edge_litert.interpreter import Interpreter  # lazy: a runner whose APU computes needs no LiteRT

    interp = Interpreter(model_content=graph, num_threads=max(1, threads))
    interp.allocate_tensors()
    handle = len(_runtimes) + 1 + max(_runtimes, default=0)
    report = os.environ.get("MTKNN_PROFILER_LOG_PATH") if os.environ.get("MTKNN_ENABLE_PROFILER") == "1" else None
    _runtimes[handle] = {"interp": interp, "path": path, "inputs": interp.get_input_details(),
                         "outputs": interp.get_output_details(), "report": report, "run_ms": [],
                         "suppressed": {"inputs": bool(suppress_in), "outputs": bool(suppress_out)},
                         "pad": {"inputs": pad >= 1, "outputs": pad >= 2}}
    _log(path, "create")
    return handle


def _log(path: str, what: str) -> None:
    with open(path + ".calls", "a") as f:
        f.write(what + "\n")


def _native(rt: dict, kind: str, d: dict) -> np.dtype:
    """The element type a slot's buffer holds: fp16 for a float slot with conversion suppressed."""
    if rt["suppressed"][kind] and np.dtype(d["dtype"]).kind == "f":
        return np.dtype(np.float16)
    return np.dtype(d["dtype"])


def _pitch(rt: dict, kind: str, d: dict, padded: bool) -> int:
    row = int(d["shape"][-1]) if len(d["shape"]) else 1
    return -(-row // ALIGN) * ALIGN if padded and rt["pad"][kind] else row


@_on_apu
def size(handle: int, kind: str, slot: int, padded: int = 0) -> int:
    """A slot's bytes (padded: as get*PaddedSize reports them); the slot count for slot -1; -1 for a slot past
    the last."""
    rt = _runtimes[handle]
    details = rt[kind]
    if slot < 0:
        return len(details)
    if slot >= len(details):
        return -1
    d = details[slot]
    row = int(d["shape"][-1]) if len(d["shape"]) else 1
    elements = int(np.prod(d["shape"], dtype=np.int64))
    return elements // row * _pitch(rt, kind, d, bool(padded)) * _native(rt, kind, d).itemsize


def _expected(handle: int, kind: str, slot: int) -> int:
    """The bytes a buffer must have: the padded size with conversion suppressed, else the tensor's own size."""
    return size(handle, kind, slot, int(_runtimes[handle]["suppressed"][kind]))


@_on_apu
def accepts(handle: int, kind: str, slot: int, length: int) -> int:
    """1 when a buffer of `length` bytes is what the slot takes, else 0 (V1's setInput/setOutput refuse it)."""
    return int(slot < len(_runtimes[handle][kind]) and length == _expected(handle, kind, slot))


@_on_apu
def qos(handle: int, preference: int, priority: int, boost: int, policy: int) -> int:
    with open(_runtimes[handle]["path"] + ".qos", "a") as f:
        f.write(f"preference {preference} priority {priority} boost {boost} policy {policy}\n")
    return 0



def _rows(rt: dict, kind: str, d: dict, address: int, length: int) -> np.ndarray:
    """The buffer at `address` as [rows, pitch] of its native type."""
    raw = (ctypes.c_char * length).from_address(address)
    pitch = _pitch(rt, kind, d, rt["suppressed"][kind])
    return np.frombuffer(raw, dtype=_native(rt, kind, d)).reshape(-1, pitch)


@_on_apu
def run(handle: int, inputs: list, outputs: list) -> int:
    rt = _runtimes[handle]
    interp = rt["interp"]
    for i, ((address, length), d) in enumerate(zip(inputs, rt["inputs"])):
        if length != _expected(handle, "inputs", i):
            return 3                   # a buffer of the wrong size: the real runtime refuses it too
        raw = _rows(rt, "inputs", d, address, length)
        held = rt.setdefault("held", {}).get(i)
        if held is not None and np.array_equal(held, raw):
            continue        # LiteRT keeps an input between runs: a window's cross state is converted once
        if raw.nbytes >= HELD_BYTES:
            rt["held"][i] = raw.copy()
        row = int(d["shape"][-1]) if len(d["shape"]) else 1
        interp.set_tensor(d["index"], raw[:, :row].astype(d["dtype"]).reshape(d["shape"]))
    t0 = time.perf_counter()
    interp.invoke()
    rt["run_ms"].append((time.perf_counter() - t0) * 1000)
    details = rt["outputs"]
    _count_step(rt)
    for i, ((address, length), d) in enumerate(zip(outputs, details)):
        out = _noisy(np.ascontiguousarray(interp.get_tensor(_faulty(details)[i]["index"])))
        if "logits" in d["name"]:
            out = _eot_raised(out)
        if length != _expected(handle, "outputs", i):
            return 3
        rows = _rows(rt, "outputs", d, address, length)
        rows[:, :out.shape[-1] if out.ndim else 1] = out.reshape(rows.shape[0], -1).astype(rows.dtype)
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
    std, rel = (float(os.environ.get(k) or 0) for k in ("STANDIN_NOISE", "STANDIN_REL_NOISE"))
    if not (std or rel) or out.dtype.kind != "f":
        return out
    rng = np.random.default_rng(_rng_calls.append(0) or len(_rng_calls))
    if rel:
        out = out * (1 + rng.normal(0, rel, out.shape))
    return (out + rng.normal(0, std, out.shape) if std else out).astype(out.dtype)


EOT = 50257                           # <|endoftext|> in the multilingual vocabulary
_steps_since_encoder = [0]


def _count_step(rt: dict) -> None:
    if "encoder" in os.path.basename(rt["path"]):
        _steps_since_encoder[0] = 0
    else:
        _steps_since_encoder[0] += 1


def _eot_raised(logits: np.ndarray) -> np.ndarray:
    start = int(os.environ.get("STANDIN_EOT_FROM") or 0)
    if not start or _steps_since_encoder[0] < start or logits.shape[-1] <= EOT:
        return logits
    out = logits.copy()
    out[..., EOT] = out.max() + 10
    return out


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
