"""Where a backend's graphs ran: the NPU, a delegate's share of the ops, or the CPU (and in which TFLite interpreter).

Read from the backend's name and what its `describe()` reports (hello's `backend_detail`): the dla backend's
graphs each say `runs_on: dla`, with the runtime library, its version, the API it was driven through and how its
slots were fed (`io`: native, the runtime's conversion suppressed, or converted); the
tflite backend counts, per graph, the ops its delegate took and those left on the CPU; a backend that says
nothing runs on the CPU. One reading for the CLI's stop line, the studio's
status bar and each QA row (device.link.runner_info.RunnerInfo.ran_on on the host).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

PLACES = ("npu", "split", "cpu")


@dataclass(frozen=True)
class RanOn:
    where: str          # "npu": every graph on the NPU; "split": a delegate took some ops; "cpu": none of it
    label: str          # in words, for the stop line and the status bar
    ops: int = 0        # ops the delegate's graphs hold (0: not counted, e.g. a .dla or the CPU backends)
    cpu_ops: int = 0    # of those, the ops left on the CPU
    library: str = ""   # the Neuron runtime library a .dla ran on, its version and the API ("V1", "V2") in use
    library_version: str = ""
    api: str = ""
    io: str = ""        # native (the runtime's conversion suppressed) or converted

    @property
    def runtime(self) -> str:
        """The Neuron runtime in words, for the stop line ("" off the Neuron runtime)."""
        if not self.library:
            return ""
        io = f", {self.io} I/O" if self.io else ""
        return f"Neuron runtime {self.api or '?'} {self.library_version or 'version unknown'}{io} ({self.library})"

    @property
    def short(self) -> str:
        """A table cell: NPU, CPU, or the delegate's share (e.g. "NPU 400/412")."""
        if self.where == "split":
            return f"NPU {self.ops - self.cpu_ops}/{self.ops}"
        return self.where.upper()

    def npu_shortfall(self) -> str:
        """Why this run fails a requirement to run on the NPU ("" when it ran there)."""
        if self.where == "npu":
            return ""
        if self.where == "split":
            return f"{self.cpu_ops} of {self.ops} ops ran on the CPU"
        return "ran on the CPU where the NPU was required"

    def to_dict(self) -> dict:
        return asdict(self) | {"short": self.short}

    @classmethod
    def from_dict(cls, d: dict | None) -> RanOn | None:
        if not isinstance(d, dict) or d.get("where") not in PLACES:
            return None
        return cls(d["where"], str(d.get("label", "")), int(d.get("ops") or 0), int(d.get("cpu_ops") or 0),
                   *(str(d.get(k) or "") for k in ("library", "library_version", "api", "io")))


CPU = RanOn("cpu", "the CPU")


def ran_on(backend: str, detail: dict | None) -> RanOn:
    """Where a runner's graphs run, from hello's `backend` and `backend_detail`; the TFLite interpreter, when
    the backend names one (tflite_runtime or ai_edge_litert), is said after the place."""
    detail = detail if isinstance(detail, dict) else {}
    place = _place(detail)
    if detail.get("interpreter"):
        return replace(place, label=f"{place.label}, in {detail['interpreter']}")
    return place


def _place(detail: dict) -> RanOn:
    graphs = [g for g in detail.get("graphs") or () if isinstance(g, dict)]
    if graphs and all(g.get("runs_on") == "dla" for g in graphs):
        files = ", ".join(str(g.get("file") or g.get("graph")) for g in graphs)
        return RanOn("npu", f"the NPU ({files} on the Neuron runtime)",
                     **{k: str(detail.get(k) or "") for k in ("library", "library_version", "api", "io")})
    counts = [g for g in detail.get("ops") or () if isinstance(g, dict)]
    if detail.get("delegate") and counts:
        total = sum(int(g.get("ops") or 0) for g in counts)
        cpu = sum(int(g.get("cpu") or 0) for g in counts)
        if cpu == 0:
            return RanOn("npu", f"the NPU through the delegate (all {total} ops)", total, 0)
        if cpu < total:
            return RanOn("split", f"the NPU through the delegate ({total - cpu} of {total} ops; {cpu} on the CPU)",
                         total, cpu)
        return RanOn("cpu", f"the CPU (the delegate took none of {total} ops)", total, cpu)
    return CPU


def of_backend(backend) -> RanOn:
    """An in-process backend's placement, read as a runner's hello would report it."""
    return ran_on(backend.name, backend.describe() if hasattr(backend, "describe") else None)
