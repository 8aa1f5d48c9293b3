"""MDLA 5.3 check of a TFLite graph, from the flatbuffer itself (nothing is run).

Violations (any one fails the check), each against device/toolchain/mdla_ops.py:
- an operator that is not a builtin on MDLA 5.3's list (a custom op always fails), named with
  the tensor it writes;
- a tensor of rank > 4;
- a dynamic dimension: -1 in `shape_signature`, or a shape entry below 1;
- a tensor type MDLA does not take: fp32 passes (relaxed to fp16 by `ncc-tflite --relax-fp32`),
  as do fp16, int8/uint8 and int16; int32 and int64 only as constants (shape, axis, perm, biases);
- an integer op with weights in a quantized form not in the table (activation × weight types); the
  report names each form, e.g. `FULLY_CONNECTED int16xint8`.
"""
from __future__ import annotations

from pathlib import Path

from device.graphs import tflite_read as R
from device.toolchain import mdla_ops
from device.toolchain.report import CheckError, GraphReport, TensorInfo, Violation


def _info(t) -> TensorInfo:
    return TensorInfo(t.name, t.signature or t.shape, t.dtype.lower(), t.nbytes)


def _tensor_violations(t) -> list[Violation]:
    out = []
    shape = t.signature if t.signature is not None else t.shape
    if len(shape) > mdla_ops.MAX_RANK:
        out.append(Violation("rank", t.name, f"rank {len(shape)} {shape}",
                             "fold dimensions together (e.g. heads into d_model) to stay at rank <= 4"))
    if any(d < 1 for d in shape):
        out.append(Violation("dynamic_dim", t.name, f"shape {shape}",
                             "write static shapes (pad to the maximum length, mask the rest)"))
    if t.dtype in mdla_ops.CONST_ONLY_TYPES:
        if not t.const:
            out.append(Violation("dtype", t.name, f"{t.dtype} activation",
                                 f"{t.dtype} only as a constant (shape, axis or perm operand); compute in fp16/int8"))
    elif t.dtype not in mdla_ops.ACTIVATION_TYPES:
        out.append(Violation("dtype", t.name, f"{t.dtype} tensor",
                             "use fp16, fp32 (relaxed to fp16), int8/uint8 or int16"))
    return out


def _quantized_form(op, ts) -> tuple[str, str] | None:
    """(activation type, weight type) of an integer op with weights; None for the rest."""
    if op.op not in mdla_ops.WEIGHTED_OPS or len(op.inputs) < 2 or op.inputs[1] < 0:
        return None
    act, weight = ts[op.inputs[0]].dtype, ts[op.inputs[1]].dtype
    return None if act in ("FLOAT32", "FLOAT16") else (act, weight)


def check_tflite(path: str | Path, graph: str | None = None) -> GraphReport:
    path = Path(path)
    try:
        buf = path.read_bytes()
        ts, ops, io = R.tensors(buf), R.operators(buf), R.io(buf)
    except Exception as exc:
        raise CheckError(f"cannot read {path} as TFLite ({exc})", "pass an exported bundle directory or a .tflite file") from exc
    rep = GraphReport(graph=graph or path.stem, file=path.name, format="tflite")
    counts: dict[tuple[str, str], int] = {}
    for op in ops:
        ok = mdla_ops.is_supported(op.op)
        mdla = op.op if ok else "UNSUPPORTED"
        where = ts[op.outputs[0]].name if op.outputs else f"#{len(rep.nodes)}"
        form = _quantized_form(op, ts)
        if ok and form:
            mdla = f"{op.op} {form[0].lower()}x{form[1].lower()}"
            if form not in mdla_ops.QUANTIZED_FORMS:
                rep.violations.append(Violation("quantized_form", where, mdla, "quantize with int8 or int16 "
                                                "activations and int8 weights (a8w8, a16w8)"))
        rep.nodes.append({"name": where, "tflite": op.op, "mdla": mdla})
        counts[(op.op, mdla)] = counts.get((op.op, mdla), 0) + 1
        if not ok:
            rep.violations.append(Violation("unsupported_op", where, op.op, mdla_ops.fix_for(op.op)))
    rep.ops = [{"tflite": k[0], "mdla": k[1], "count": n} for k, n in sorted(counts.items())]
    for t in ts:
        rep.violations.extend(_tensor_violations(t))
    by_name = {t.name: t for t in ts}
    rep.inputs = [_info(by_name[name]) for name in io["inputs"]]
    rep.outputs = [_info(by_name[name]) for name in io["outputs"]]
    return rep
