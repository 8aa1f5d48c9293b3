"""`whisperkv check-dla`: every graph of a bundle (ONNX and TFLite) against MDLA 5.3.

The op table and limits live in device/toolchain/mdla_ops.py; device/toolchain/check_onnx.py and
device/toolchain/check_tflite.py apply them to each format. This module finds the graphs, runs the
right check per file and renders the reports.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from device.toolchain.check_onnx import check_onnx
from device.toolchain.check_tflite import check_tflite
from device.toolchain.mdla_ops import MAX_RANK
from device.toolchain.report import CheckError, GraphReport, TensorInfo, Violation

__all__ = ["CheckError", "GraphReport", "TensorInfo", "Violation", "check", "check_graph", "graphs_of",
           "to_json", "to_text"]
SUFFIXES = (".onnx", ".tflite")


def check_graph(path: str | Path, graph: str | None = None) -> GraphReport:
    """One graph file, checked as TFLite (`.tflite`) or ONNX (anything else)."""
    path = Path(path)
    return check_tflite(path, graph) if path.suffix == ".tflite" else check_onnx(path, graph)


def graphs_of(target: str | Path) -> list[tuple[str, Path]]:
    """(name, path) of the graphs to check: a bundle's graphs, every .onnx/.tflite in a directory, or one file."""
    target = Path(target)
    if target.is_file():
        return [(target.stem, target)]
    if (target / "model.json").is_file():
        doc = json.loads((target / "model.json").read_text())
        return [(name, target / g["file"]) for name, g in doc.get("graphs", {}).items()]
    if target.is_dir():
        found = sorted(p for p in target.iterdir() if p.suffix in SUFFIXES)
        if found:
            return [(p.stem + ("_tflite" if p.suffix == ".tflite" else ""), p) for p in found]
    raise CheckError(f"no ONNX or TFLite graphs at {target}",
                     "pass a bundle made by `whisperkv export --out DIR`, or a .onnx or .tflite file")


def check(target: str | Path) -> list[GraphReport]:
    return [check_graph(path, name) for name, path in graphs_of(target)]


def to_json(reports: list[GraphReport]) -> dict:
    return {"ok": all(r.ok for r in reports), "max_rank": MAX_RANK,
            "graphs": [asdict(r) | {"ok": r.ok} for r in reports]}


def _shape(s) -> str:
    return "?" if s is None else "[" + ",".join(str(d) for d in s) + "]"


def to_text(reports: list[GraphReport]) -> str:
    lines = []
    for r in reports:
        lines.append(f"== {r.graph} ({r.file}): {'PASS' if r.ok else 'FAIL'}")
        label = "ONNX op" if r.format == "onnx" else "TFLite op"
        lines.append(f"  {label:<22} {'MDLA op':<52} {'count':>5}")
        for o in r.ops:
            lines.append(f"  {o[r.format]:<22} {o['mdla']:<52} {o['count']:>5}")
        for tag, ts in (("in ", r.inputs), ("out", r.outputs)):
            for t in ts:
                size = f"{t.bytes / 1e6:9.3f} MB" if t.bytes is not None else "  dynamic"
                lines.append(f"  {tag} {t.name:<12} {_shape(t.shape):<22} {t.dtype:<8} {size}")
        for v in r.violations[:50]:
            lines.append(f"  VIOLATION {v.kind}: {v.where}: {v.detail} -> {v.fix}")
        if len(r.violations) > 50:
            lines.append(f"  ... and {len(r.violations) - 50} more violations (see --json)")
    n = sum(len(r.violations) for r in reports)
    lines.append("MDLA 5.3 check: " + ("PASS" if n == 0 else f"FAIL ({n} violations)"))
    return "\n".join(lines)
