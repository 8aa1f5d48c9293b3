"""One way to name a device in every report: where it is, what it is (its SoC and NPU, or this PC and its CPU),
what ran the graphs and where, the model's form. The doctor's report, the QA report, the studio's status bar and
`device-info` read it here, from what a run keeps of its device (`Decoder.meta()`, hello's fields). A field that
says nothing is left out; a machine whose SoC is unknown is named by what it is, never "unknown"."""
from __future__ import annotations

import os
import platform

from core.model.placement import RanOn

ARCH_WORDS = {"x86_64": "x86-64", "amd64": "x86-64", "aarch64": "arm64", "arm64": "arm64"}
THIS_PC = ("local", "in-process", "inprocess")
SILENT = (None, "", "unknown", "?", "-")


def _local(meta: dict) -> bool:
    return str(meta.get("device") or "").split("?")[0] in THIS_PC


def machine_words(meta: dict) -> str:
    """"MT8371 (MDLA 5.3)", or "this PC (x86-64, 2 cores)", "an emulated board (arm64, 8 cores)", "a board"."""
    soc = meta.get("soc") if isinstance(meta.get("soc"), dict) else {}
    if soc.get("name") not in SILENT:
        return soc["name"] + (f" ({soc['npu']})" if soc.get("npu") not in SILENT else "")
    machine = meta.get("machine") if isinstance(meta.get("machine"), dict) else {}
    if not machine and _local(meta):
        machine = {"arch": platform.machine(), "cores": os.cpu_count()}
    arch = ARCH_WORDS.get(str(machine.get("arch") or "").lower(), machine.get("arch"))
    detail = ", ".join(x for x in (arch, f"{machine['cores']} cores" if machine.get("cores") else "") if x)
    kind = meta.get("runner_kind") or ("pc" if _local(meta) else None)
    who = {"pc": "this PC", "emulated": "an emulated board"}.get(kind, "a board")
    return f"{who} ({detail})" if detail else who


def ran_words(meta: dict) -> str:
    """"onnx on the CPU", "dla on the NPU (encoder.dla, …) (Neuron runtime V2 7.0.0 (/usr/lib/…))": the backend,
    where its graphs ran and, on the Neuron runtime, the library, its version and API (core/model/placement.py)."""
    ran = RanOn.from_dict(meta.get("ran_on"))
    backend = meta.get("backend") if meta.get("backend") not in SILENT else ""
    label = (ran.label + (f" ({ran.runtime})" if ran.runtime else "")) if ran is not None else ""
    return " on ".join(x for x in (backend, label) if x)


def device_words(meta: dict) -> str:
    """The whole line: "local · this PC (x86-64, 2 cores) · onnx on the CPU · fp32 · kv cross · cache on"."""
    parts = [str(meta.get("device") or ""), machine_words(meta), ran_words(meta),
             str(meta.get("dtype") or ""), f"{meta['cross']} cross" if meta.get("cross") not in SILENT else "",
             f"cache {meta['cache']}" if meta.get("cache") not in SILENT else ""]
    return " · ".join(p for p in parts if p and p not in SILENT)


DEVICE_KEYS = ("device", "backend", "ran_on", "soc", "machine", "runner_kind", "dtype", "cross", "cache")


def meta_words(meta: dict, with_device: bool = True) -> str:
    """A report's header: the device's line, then its other fields as `name value` (lists joined), empty ones left
    out."""
    rest = [f"{k} {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in meta.items()
            if k not in DEVICE_KEYS and v not in SILENT and v != []]
    line = device_words(meta if with_device else {k: v for k, v in meta.items() if k != "device"})
    return " · ".join(x for x in (line, *rest) if x)
