"""The numbers rung's measure: the board's encoder outputs and first-step logits (a `probe` event,
device/runner/probe.py) against the PC's NumPy reference run of the same model, and the thresholds by bundle dtype.

How the thresholds were chosen (docs/doctor.md): on this PC the NumPy reference against the bundle's graphs in
LiteRT, the stand-in for an NPU, on test_en.wav's first window. fp32 and fp16 TFLite graphs (Whisper base's
weights are fp16, so both hold the same numbers) agree to a cosine of 1 - 1e-7 and a largest error of 1.5e-4 on
the cross K/V; an integer graph (a16w8) to COSINE["a16w8"] and better. Gaussian noise of standard deviation 0.05
on the encoder's outputs brings the cross K to a cosine of 0.9990 and the cross V to 0.9948 (their values' standard
deviations are 1.15 and 0.49); the cross K and V swapped (same size: a layout bug) to -0.03. The float threshold
sits between the graphs and the noise with room for an NPU that computes in fp16 (relative errors of ~1e-3 keep a
cosine above 0.99995).
"""
from __future__ import annotations

import numpy as np

from device.runner.probe import sample_positions, unpack

# the lowest cosine similarity each output may have with the reference, by the bundle's dtype
COSINE = {"fp32": 0.9999, "fp16": 0.9999, "a16w8": 0.997, "a8w8": 0.99, "mixed": 0.997}
DEFAULT = 0.997


def threshold(dtype: str) -> float:
    return COSINE.get(dtype or "fp32", DEFAULT)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b / (na * nb)) if na and nb else (1.0 if na == nb else 0.0)


def compare(board: dict, pc: dict, dtype: str) -> tuple[list[dict], list[str]]:
    """Per output {name, shape, max_abs, cosine, ok} (and the logits' top-1 agreement), and the problems found."""
    floor = threshold(dtype)
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
