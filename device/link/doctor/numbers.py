"""The numbers rung's measure: the board's encoder outputs and first-step logits (a `probe` event,
device/runner/probe.py) against the PC's run of the same bundle, and the thresholds by bundle dtype.

The PC's side is the NumPy reference (core/model/whisper.py) for a float bundle. An integer bundle's quantization
is part of its model: against fp32, the a16w8 graphs in LiteRT are further off (cross V cosine 0.989) than fp32
outputs with noise of standard deviation 0.05 (0.995), so no floor against fp32 could pass one and fail the other.
Its side is then its own integer TFLite graphs in LiteRT on this PC, what the NPU must reproduce, and the NumPy
comparison is kept as figures (docs/doctor.md, "The numbers' thresholds", says how the floors were chosen).
"""
from __future__ import annotations

import numpy as np

from device.runner.probe import sample_positions, unpack

# the lowest cosine similarity each output may have with the PC's side, by the bundle's dtype: float bundles
# against the NumPy reference, integer ones against their own graphs in LiteRT
COSINE = {"fp32": 0.9999, "fp16": 0.9999, "a16w8": 0.999, "a8w8": 0.999, "mixed": 0.999}
FLOAT_DTYPES = ("fp32", "fp16")
# an integer bundle held against fp32 (its .tflite graphs are not on this PC): below the a16w8 graphs' 0.989
INTEGER_AGAINST_FP32 = 0.98


def threshold(dtype: str) -> float:
    return COSINE.get(dtype or "fp32", min(COSINE.values()))


def against_own_graphs(dtype: str) -> bool:
    """An integer bundle is held against its own TFLite graphs on this PC, not against fp32."""
    return (dtype or "fp32") not in FLOAT_DTYPES


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b / (na * nb)) if na and nb else (1.0 if na == nb else 0.0)


def compare(board: dict, pc: dict, dtype: str, floor: float | None = None) -> tuple[list[dict], list[str]]:
    """Per output {name, shape, max_abs, cosine, ok} (and the logits' top-1 agreement), and the problems found,
    against `floor` (default: the dtype's)."""
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
