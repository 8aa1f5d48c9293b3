"""MDLA 5.3 compatibility check of ONNX graphs: what each op lowers to, and what cannot run.

Violations (any one fails the check):
- an op with no MDLA lowering: GATHER (embedding lookups), Trilu (causal masks), dynamic
  quantisation, or any op missing from the table below;
- a tensor of rank > 4 (MDLA 5.3 has no rank-5 tensors);
- a dynamic or unknown dimension (the Neuron compiler needs static shapes).
The table follows the porting analysis (§3) and NeuroPilot's op names.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from core.errors import WhisperKVError

MAX_RANK = 4

# ONNX op -> the MDLA (TFLite-style) op it becomes. MatMul is decided per node (see _lower).
LOWERING = {
    "Conv": "CONV_2D", "Gemm": "FULLY_CONNECTED", "Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "DIV",
    "Sqrt": "SQRT", "Reciprocal": "DIV", "Pow": "POW", "ReduceMean": "MEAN", "ReduceSum": "SUM",
    "ReduceMax": "REDUCE_MAX", "Softmax": "SOFTMAX", "Gelu": "GELU", "Tanh": "TANH", "Relu": "RELU",
    "Sigmoid": "LOGISTIC", "Exp": "EXP", "Transpose": "TRANSPOSE", "Reshape": "RESHAPE", "Squeeze": "RESHAPE",
    "Unsqueeze": "RESHAPE", "Flatten": "RESHAPE", "Concat": "CONCATENATION", "Split": "SPLIT",
    "Slice": "STRIDED_SLICE", "Pad": "PAD", "Max": "MAXIMUM", "Min": "MINIMUM", "Neg": "NEG",
    "QuantizeLinear": "QUANTIZE", "DequantizeLinear": "DEQUANTIZE", "Cast": "CAST",
    "LayerNormalization": "MEAN+SUB+MUL+ADD+RSQRT (decomposed by the converter)",
    "Identity": "(none: elided)",
}
# Ops with a known reason and fix; anything else missing from LOWERING is reported as unknown.
UNSUPPORTED = {
    "Gather": "GATHER is not supported: look embeddings up on the runner CPU and feed the result",
    "GatherElements": "GATHER is not supported: index on the runner CPU",
    "GatherND": "GATHER is not supported: index on the runner CPU",
    "Trilu": "tril/triu are not supported: precompute the causal mask and feed it as an additive input",
    "Erf": "ERF is not supported: use the Gelu op (opset 20) so it lowers to one GELU",
    "DynamicQuantizeLinear": "dynamic quantisation is not supported: use static int8 (calibrated QUANTIZE/DEQUANTIZE)",
    "MatMulInteger": "dynamic quantisation is not supported: use static int8 (calibrated QUANTIZE/DEQUANTIZE)",
    "DynamicQuantizeMatMul": "dynamic quantisation is not supported: use static int8 (calibrated QUANTIZE/DEQUANTIZE)",
    "ConvInteger": "dynamic quantisation is not supported: use static int8 (calibrated QUANTIZE/DEQUANTIZE)",
    "NonZero": "data-dependent shapes are not supported",
    "Loop": "control flow is not supported: unroll it on the host",
    "If": "control flow is not supported: decide on the host",
}
_DTYPE_NAMES = {1: "float32", 10: "float16", 3: "int8", 2: "uint8", 6: "int32", 7: "int64", 9: "bool"}
_DTYPE_BYTES = {1: 4, 10: 2, 3: 1, 2: 1, 6: 4, 7: 8, 9: 1}


@dataclass
class Violation:
    kind: str        # unsupported_op | rank | dynamic_dim
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
    ops: list[dict] = field(default_factory=list)      # [{onnx, mdla, count}]
    nodes: list[dict] = field(default_factory=list)    # [{name, onnx, mdla}]
    inputs: list[TensorInfo] = field(default_factory=list)
    outputs: list[TensorInfo] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


class CheckError(WhisperKVError):
    code = "bad_request"


def _dims(vi) -> list:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]


def _tensor_info(vi) -> TensorInfo:
    shape = _dims(vi)
    et = vi.type.tensor_type.elem_type
    static = shape is not None and all(isinstance(d, int) and d > 0 for d in shape)
    nbytes = int(np.prod(shape)) * _DTYPE_BYTES.get(et, 0) if static else None
    return TensorInfo(vi.name, shape, _DTYPE_NAMES.get(et, str(et)), nbytes)


def _lower(node, consts: set[str], ranks: dict[str, int]) -> str | None:
    if node.op_type == "MatMul":
        # A constant 2D weight is a fully connected layer; two activations are a batch matmul.
        const_b = node.input[1] in consts and ranks.get(node.input[1]) == 2
        return "FULLY_CONNECTED" if const_b else "BATCH_MATMUL"
    if node.op_type == "Conv":
        return "CONV_2D" if ranks.get(node.input[1]) == 4 else None
    return LOWERING.get(node.op_type)


def check_graph(path: str | Path, graph: str | None = None) -> GraphReport:
    import onnx

    path = Path(path)
    try:
        model = onnx.load(str(path))
    except Exception as exc:
        raise CheckError(f"cannot read {path} as ONNX ({exc})", "pass an exported bundle directory or a .onnx file") from exc
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:        # an unreadable shape is reported per tensor below
        inferred = model
    g = inferred.graph
    rep = GraphReport(graph=graph or g.name or path.stem, file=path.name)
    consts = {t.name for t in g.initializer} | {o for n in g.node if n.op_type == "Constant" for o in n.output}
    values = {vi.name: vi for vi in (*g.input, *g.output, *g.value_info)}
    ranks = {t.name: len(t.dims) for t in g.initializer}
    ranks |= {name: len(_dims(vi)) for name, vi in values.items() if _dims(vi) is not None}

    counts: dict[tuple[str, str], int] = {}
    for node in g.node:
        if node.domain not in ("", "ai.onnx"):
            mdla = None
        else:
            mdla = _lower(node, consts, ranks)
        rep.nodes.append({"name": node.name, "onnx": node.op_type, "mdla": mdla or "UNSUPPORTED"})
        counts[(node.op_type, mdla or "UNSUPPORTED")] = counts.get((node.op_type, mdla or "UNSUPPORTED"), 0) + 1
        if mdla is None:
            fix = UNSUPPORTED.get(node.op_type) or (
                "a 1D Conv: reshape to [N,C,1,T] and use a [1,k] kernel (CONV_2D)" if node.op_type == "Conv"
                else f"{node.op_type} ({node.domain or 'ai.onnx'}) has no MDLA 5.3 lowering here: rewrite it "
                     "with the ops this checker lists")
            rep.violations.append(Violation("unsupported_op", node.name or node.op_type, node.op_type, fix))
    rep.ops = [{"onnx": k[0], "mdla": k[1], "count": n} for k, n in sorted(counts.items())]

    tensors = {vi.name: _dims(vi) for vi in values.values()}
    tensors |= {t.name: list(t.dims) for t in g.initializer}
    for node in g.node:
        for out in node.output:
            tensors.setdefault(out, None)
    for name, shape in tensors.items():
        if shape is None:
            rep.violations.append(Violation("dynamic_dim", name, "shape unknown after shape inference",
                                            "make every Reshape target and input shape a constant"))
            continue
        if len(shape) > MAX_RANK:
            rep.violations.append(Violation("rank", name, f"rank {len(shape)} {shape}",
                                            "fold dimensions together (e.g. heads into d_model) to stay at rank <= 4"))
        bad = [d for d in shape if not (isinstance(d, int) and d > 0)]
        if bad:
            rep.violations.append(Violation("dynamic_dim", name, f"shape {shape}",
                                            "export with static shapes (pad to the maximum length, mask the rest)"))
    rep.inputs = [_tensor_info(vi) for vi in model.graph.input]
    rep.outputs = [_tensor_info(vi) for vi in model.graph.output]
    return rep


def graphs_of(target: str | Path) -> list[tuple[str, Path]]:
    """(name, path) of the graphs to check: a bundle's graphs, every .onnx in a directory, or one file."""
    target = Path(target)
    if target.is_file():
        return [(target.stem, target)]
    if (target / "model.json").is_file():
        doc = json.loads((target / "model.json").read_text())
        return [(name, target / g["file"]) for name, g in doc.get("graphs", {}).items()]
    if target.is_dir():
        found = sorted(target.glob("*.onnx"))
        if found:
            return [(p.stem, p) for p in found]
    raise CheckError(f"no ONNX graphs at {target}", "pass a bundle made by `whisperkv export --out DIR`, or a .onnx file")


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
        lines.append(f"  {'ONNX op':<22} {'MDLA op':<52} {'count':>5}")
        for o in r.ops:
            lines.append(f"  {o['onnx']:<22} {o['mdla']:<52} {o['count']:>5}")
        for label, ts in (("in ", r.inputs), ("out", r.outputs)):
            for t in ts:
                size = f"{t.bytes / 1e6:9.3f} MB" if t.bytes is not None else "  dynamic"
                lines.append(f"  {label} {t.name:<12} {_shape(t.shape):<22} {t.dtype:<8} {size}")
        for v in r.violations[:50]:
            lines.append(f"  VIOLATION {v.kind}: {v.where}: {v.detail} -> {v.fix}")
        if len(r.violations) > 50:
            lines.append(f"  ... and {len(r.violations) - 50} more violations (see --json)")
    n = sum(len(r.violations) for r in reports)
    lines.append("MDLA 5.3 check: " + ("PASS" if n == 0 else f"FAIL ({n} violations)"))
    return "\n".join(lines)
