"""The MDLA check's report: one GraphReport per graph file, ONNX or TFLite."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import WhisperKVError


@dataclass
class Violation:
    kind: str        # unsupported_op | rank | dynamic_dim | dtype | quantized_form
    where: str       # node or tensor name
    detail: str
    fix: str


@dataclass
class TensorInfo:
    name: str
    shape: list
    dtype: str
    bytes: int | None


@dataclass
class GraphReport:
    graph: str
    file: str
    format: str = "onnx"                                 # onnx | tflite
    ops: list[dict] = field(default_factory=list)      # [{<format>, mdla, count}]
    nodes: list[dict] = field(default_factory=list)    # [{name, <format>, mdla}]
    inputs: list[TensorInfo] = field(default_factory=list)
    outputs: list[TensorInfo] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


class CheckError(WhisperKVError):
    code = "bad_request"
