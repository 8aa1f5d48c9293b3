"""MDLA 5.3 check of an ONNX graph: what each op lowers to, and what cannot run.

Violations (any one fails the check):
- an op whose lowering is not on MDLA 5.3's list (device/toolchain/mdla_ops.py): GATHER (embedding
  lookups), Trilu (causal masks), dynamic quantisation, or any op this map does not know;
- a tensor of rank > 4;
- a dynamic or unknown dimension (the Neuron compiler needs static shapes).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from device.toolchain import mdla_ops
from device.toolchain.report import CheckError, GraphReport, TensorInfo, Violation

# ONNX op -> the TFLite builtin op(s) a converter lowers it to; () is elided. MatMul and Conv are
# decided per node (see _lower).
LOWERING: dict[str, tuple[str, ...]] = {
    "Gemm": ("FULLY_CONNECTED",), "Add": ("ADD",), "Sub": ("SUB",), "Mul": ("MUL",), "Div": ("DIV",),
    "Sqrt": ("SQRT",), "Reciprocal": ("DIV",), "Pow": ("POW",), "ReduceMean": ("MEAN",), "ReduceSum": ("SUM",),
    "ReduceMax": ("REDUCE_MAX",), "Softmax": ("SOFTMAX",), "Gelu": ("GELU",), "Tanh": ("TANH",),
    "Relu": ("RELU",), "Sigmoid": ("LOGISTIC",), "Exp": ("EXP",), "Transpose": ("TRANSPOSE",),
    "Reshape": ("RESHAPE",), "Squeeze": ("RESHAPE",), "Unsqueeze": ("RESHAPE",), "Flatten": ("RESHAPE",),
    "Concat": ("CONCATENATION",), "Split": ("SPLIT",), "Slice": ("STRIDED_SLICE",), "Pad": ("PAD",),
    "Max": ("MAXIMUM",), "Min": ("MINIMUM",), "Neg": ("NEG",), "QuantizeLinear": ("QUANTIZE",),
    "DequantizeLinear": ("DEQUANTIZE",), "Cast": ("CAST",),
    "LayerNormalization": ("MEAN", "SUB", "MUL", "ADD", "RSQRT"),
    "Gather": ("GATHER",), "GatherElements": ("GATHER",), "GatherND": ("GATHER_ND",), "Where": ("SELECT_V2",),
    "Equal": ("EQUAL",), "Less": ("LESS",), "Greater": ("GREATER",), "TopK": ("TOPK_V2",),
    "LogSoftmax": ("LOG_SOFTMAX",), "Log": ("LOG",), "Identity": (),
}
# ONNX ops with no TFLite lowering at all, with the way round them.
_DYNAMIC_Q = "dynamic quantisation is not supported: use static int8 (calibrated QUANTIZE/DEQUANTIZE)"
ONNX_FIXES = {
    "Trilu": "tril/triu are not supported: precompute the causal mask and feed it as an additive input",
    "Erf": "ERF is not supported: use the Gelu op (opset 20) so it lowers to one GELU",
    "DynamicQuantizeLinear": _DYNAMIC_Q, "MatMulInteger": _DYNAMIC_Q, "DynamicQuantizeMatMul": _DYNAMIC_Q,
    "ConvInteger": _DYNAMIC_Q,
    "NonZero": "data-dependent shapes are not supported",
    "Loop": "control flow is not supported: unroll it on the host",
    "If": "control flow is not supported: decide on the host",
}
_DTYPE_NAMES = {1: "float32", 10: "float16", 3: "int8", 2: "uint8", 6: "int32", 7: "int64", 9: "bool"}
_DTYPE_BYTES = {1: 4, 10: 2, 3: 1, 2: 1, 6: 4, 7: 8, 9: 1}


def _dims(vi) -> list | None:
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


def _lower(node, consts: set[str], ranks: dict[str, int]) -> tuple[str, ...] | None:
    if node.domain not in ("", "ai.onnx"):
        return None
    if node.op_type == "MatMul":
        # A constant 2D weight is a fully connected layer; two activations are a batch matmul.
        const_b = node.input[1] in consts and ranks.get(node.input[1]) == 2
        return ("FULLY_CONNECTED",) if const_b else ("BATCH_MATMUL",)
    if node.op_type == "Conv":
        return ("CONV_2D",) if ranks.get(node.input[1]) == 4 else None
    return LOWERING.get(node.op_type)


def _op_violation(node, lowered: tuple[str, ...] | None) -> Violation | None:
    if lowered is not None and all(mdla_ops.is_supported(op) for op in lowered):
        return None
    if lowered:
        fix = "; ".join(mdla_ops.fix_for(op) for op in lowered if not mdla_ops.is_supported(op))
    elif node.op_type == "Conv":
        fix = "a 1D Conv: reshape to [N,C,1,T] and use a [1,k] kernel (CONV_2D)"
    else:
        fix = ONNX_FIXES.get(node.op_type) or (
            f"{node.op_type} ({node.domain or 'ai.onnx'}) has no MDLA 5.3 lowering here: rewrite it "
            "with the ops this checker lists")
    return Violation("unsupported_op", node.name or node.op_type, node.op_type, fix)


def check_onnx(path: str | Path, graph: str | None = None) -> GraphReport:
    import onnx  # ~0.1 s: only for an ONNX graph; `whisperkv --help` imports this module

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
    rep = GraphReport(graph=graph or g.name or path.stem, file=path.name, format="onnx")
    consts = {t.name for t in g.initializer} | {o for n in g.node if n.op_type == "Constant" for o in n.output}
    values = {vi.name: vi for vi in (*g.input, *g.output, *g.value_info)}
    ranks = {t.name: len(t.dims) for t in g.initializer}
    ranks |= {name: len(_dims(vi)) for name, vi in values.items() if _dims(vi) is not None}

    counts: dict[tuple[str, str], int] = {}
    for node in g.node:
        lowered = _lower(node, consts, ranks)
        bad = _op_violation(node, lowered)
        mdla = "UNSUPPORTED" if bad else ("+".join(lowered) or "(none: elided)")
        rep.nodes.append({"name": node.name, "onnx": node.op_type, "mdla": mdla})
        counts[(node.op_type, mdla)] = counts.get((node.op_type, mdla), 0) + 1
        if bad:
            rep.violations.append(bad)
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
        if len(shape) > mdla_ops.MAX_RANK:
            rep.violations.append(Violation("rank", name, f"rank {len(shape)} {shape}",
                                            "fold dimensions together (e.g. heads into d_model) to stay at rank <= 4"))
        if [d for d in shape if not (isinstance(d, int) and d > 0)]:
            rep.violations.append(Violation("dynamic_dim", name, f"shape {shape}",
                                            "export with static shapes (pad to the maximum length, mask the rest)"))
    rep.inputs = [_tensor_info(vi) for vi in model.graph.input]
    rep.outputs = [_tensor_info(vi) for vi in model.graph.output]
    return rep
