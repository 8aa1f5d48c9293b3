"""The numbers rung's measure: the board's encoder outputs and first-step logits (a `probe` event,
device/runner/serve/probe.py) against the PC's run of the same bundle, and the bounds by arithmetic: the numbers' cosine
floors and the tokens rung's error bound.

The PC's side is the NumPy reference (core/model/whisper.py) for a float bundle. An integer bundle's quantization
is part of its model: against fp32, the a16w8 graphs in LiteRT are further off (cross V cosine 0.989) than fp32
outputs with noise of standard deviation 0.05 (0.995), so no floor against fp32 could pass one and fail the other.
Its side is then its own integer TFLite graphs in LiteRT on this PC, what the NPU must reproduce, and the NumPy
comparison is kept as figures (docs/doctor.md, "The bounds", says how they were measured).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from device.runner.serve.probe import sample_positions, unpack


@dataclass(frozen=True)
class Bound:
    """What a board's arithmetic may move the numbers and the tokens by (docs/doctor.md, "The bounds")."""
    arithmetic: str     # in words, for the report
    cosine: float       # the numbers rung's floor: each sampled output's cosine with the PC's side
    wer: float          # the tokens rung: a difference up to this WER (CER for Chinese) warns, beyond it fails


# Measured with `python3 bench/doctor_bounds.py` on the 6 bundled clips and 6 espeak-ng utterances (docs/doctor.md,
# "The bounds"). fp16 arithmetic alone kept every probed output at a cosine of 0.99996 or more and moved one clip's
# WER by 0.014: its floor leaves 14x that distance and stays above the 0.999 that noise of standard deviation 0.05
# gives the cross K; its error bound is 7x. int8 weights on the host reached 0.9971 and a WER of 0.235 on one
# utterance: its floor (3x that distance) catches a layout bug or a broken graph, not noise as small as 0.05, and
# its error bound is 1.5x. The integer bundles' bound is from their agreement in docs/benchmarks.md (a16w8 kv and
# mixed token-identical with fp32 on test_en and test_zh), not re-measured here.
BOUNDS = {
    "fp32": Bound("fp32", 0.9999, 0.0),
    "fp16": Bound("fp16 values with fp32 accumulation (ncc-tflite --relax-fp32 on the MDLA, onnx-fp16)", 0.9995,
                  0.1),
    "int8-host": Bound("int8 weights on the host (native-int8b, onnx-int8b, onnx-int8)", 0.99, 0.35),
    "integer": Bound("an integer bundle's graphs (a16w8, a8w8, mixed) against their own .tflite in LiteRT", 0.999,
                     0.15),
}
FLOAT_DTYPES = ("fp32", "fp16")
INT8_HOST = ("native-int8b", "onnx-int8b", "onnx-int8")
# an integer bundle held against fp32 (its .tflite graphs are not on this PC): below the a16w8 graphs' 0.989
INTEGER_AGAINST_FP32 = 0.98


def arithmetic(backend: str, dtype: str) -> str:
    """The BOUNDS row for a runner's backend and its bundle's dtype: a float bundle compiled for the MDLA is
    computed in fp16 (--relax-fp32), as onnx-fp16 computes; an integer bundle is its own model."""
    if (dtype or "fp32") not in FLOAT_DTYPES:
        return "integer"
    if backend in INT8_HOST:
        return "int8-host"
    return "fp16" if backend in ("dla", "onnx-fp16") else "fp32"


def threshold(dtype: str, backend: str = "") -> float:
    return BOUNDS[arithmetic(backend, dtype)].cosine


def against_own_graphs(dtype: str) -> bool:
    """An integer bundle is held against its own TFLite graphs on this PC, not against fp32."""
    return (dtype or "fp32") not in FLOAT_DTYPES


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b / (na * nb)) if na and nb else (1.0 if na == nb else 0.0)


def compare(board: dict, pc: dict, dtype: str, floor: float | None = None) -> tuple[list[dict], list[str]]:
    """Per output {name, shape, max_abs, cosine, ok} (and the logits' top-1 agreement), and the problems found,
    against `floor` (default: the dtype's on an fp32 backend)."""
    floor = threshold(dtype) if floor is None else floor
    rows, problems = [], []
    pcs = {o["name"]: o for o in pc["outputs"]}
    for o in board.get("outputs") or []:
        ref = pcs.get(o.get("name"))
        if ref is None:
            problems.append(f"the board sent an output {o.get('name')!r} the reference has not")
            continue
        if list(o.get("shape") or []) != list(ref["shape"]):
            problems.append(f"{o['name']} is {o.get('shape')} on the board, {ref['shape']} on the PC")
            continue
        a, b = unpack(o["values"]), unpack(ref["values"])
        if a.size != sample_positions(ref["shape"]).size:
            problems.append(f"{o['name']}: the board sampled {a.size} values, not {b.size}")
            continue
        rows.append(_row(o["name"], ref["shape"], a, b, floor))
    a, b = unpack(board["logits"]), unpack(pc["logits"])
    if a.size != b.size:
        problems.append(f"the board's logits have {a.size} values, the PC's {b.size}")
    else:
        row = _row("logits", [int(b.size)], a, b, floor)
        top = int(a.argmax()), int(b.argmax())
        row |= {"top1_board": top[0], "top1_pc": top[1], "top1_agrees": top[0] == top[1]}
        rows.append(row)
        if not row["top1_agrees"]:
            problems.append(f"the first step's top token is {row['top1_board']} on the board, {row['top1_pc']} on "
                            "the PC")
    problems += [f"{r['name']}: values that are not finite" if r["cosine"] is None else
                 f"{r['name']}: cosine {r['cosine']:.6f} < {floor} (largest error {r['max_abs']:.3g})"
                 for r in rows if not r["ok"]]
    return rows, problems


def _row(name: str, shape, a: np.ndarray, b: np.ndarray, floor: float) -> dict:
    finite = bool(np.isfinite(a).all())
    cos = _cos(a.astype(np.float64), b.astype(np.float64)) if finite else float("nan")
    return {"name": name, "shape": list(shape), "max_abs": float(np.abs(a - b).max()) if finite else None,
            "cosine": round(cos, 7) if finite else None, "ok": finite and cos >= floor}
