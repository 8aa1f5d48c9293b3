"""Reading a TFLite flatbuffer without running it: its tensors, operators, signature and weights.

Used by the bundle export (I/O in model.json), the MDLA check (device/toolchain/check_tflite.py) and
runners that want the weights back (`params_from_tflite`). Reads the flatbuffer in place: no
buffer data is copied except the weights asked for.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from device.graphs.ir import AUX_PREFIXES
from device.graphs.tflite_writer import builtin_name, schema

_NP = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "INT64": np.int64, "INT8": np.int8,
       "UINT8": np.uint8, "INT16": np.int16}


@dataclass
class TensorView:
    index: int
    name: str
    shape: list[int]
    signature: list[int] | None      # shape_signature: -1 marks a dynamic dimension
    dtype: str                       # TensorType name, e.g. FLOAT32
    const: bool                      # backed by a non-empty buffer

    @property
    def nbytes(self) -> int | None:
        item = np.dtype(_NP[self.dtype]).itemsize if self.dtype in _NP else None
        static = self.signature is None or -1 not in self.signature
        return int(np.prod(self.shape, dtype=np.int64)) * item if item and static else None


@dataclass
class OpView:
    op: str                          # builtin name (FULLY_CONNECTED, …) or CUSTOM:<code>
    inputs: list[int]
    outputs: list[int]


def _model(buf: bytes):
    S = schema()
    if not S.Model.ModelBufferHasIdentifier(buf, 0):
        raise ValueError("not a TFLite flatbuffer (no TFL3 identifier)")
    return S.Model.GetRootAs(buf, 0)


def _type_names() -> dict[int, str]:
    return {v: k for k, v in vars(schema().TensorType).items() if not k.startswith("_")}


def tensors(buf: bytes, subgraph: int = 0) -> list[TensorView]:
    m = _model(buf)
    sg, types = m.Subgraphs(subgraph), _type_names()
    out = []
    for i in range(sg.TensorsLength()):
        t = sg.Tensors(i)
        sig = t.ShapeSignatureAsNumpy().tolist() if t.ShapeSignatureLength() else None
        b = m.Buffers(t.Buffer()) if t.Buffer() > 0 else None
        # A buffer's bytes are inline (data) or, as ai-edge-quantizer writes them, after the flatbuffer (offset).
        const = b is not None and (b.DataLength() > 0 or b.Offset() > 1)
        out.append(TensorView(i, (t.Name() or b"").decode(), t.ShapeAsNumpy().tolist() if t.ShapeLength() else [],
                              sig, types.get(t.Type(), str(t.Type())), const))
    return out


def operators(buf: bytes, subgraph: int = 0) -> list[OpView]:
    m = _model(buf)
    sg, out = m.Subgraphs(subgraph), []
    for i in range(sg.OperatorsLength()):
        o = sg.Operators(i)
        code = m.OperatorCodes(o.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        name = builtin_name(builtin)
        if name == "CUSTOM":
            name = f"CUSTOM:{(code.CustomCode() or b'').decode()}"
        ins = o.InputsAsNumpy().tolist() if o.InputsLength() else []
        outs = o.OutputsAsNumpy().tolist() if o.OutputsLength() else []
        out.append(OpView(name, ins, outs))
    return out


def io(buf: bytes, subgraph: int = 0) -> dict:
    """{"inputs": {name: shape}, "outputs": {name: shape}} of a model, in signature order."""
    m = _model(buf)
    sg, ts = m.Subgraphs(subgraph), tensors(buf, subgraph)
    ins = sg.InputsAsNumpy().tolist() if sg.InputsLength() else []
    outs = sg.OutputsAsNumpy().tolist() if sg.OutputsLength() else []
    return {"inputs": {ts[i].name: ts[i].shape for i in ins}, "outputs": {ts[i].name: ts[i].shape for i in outs}}


def slots(buf: bytes, subgraph: int = 0) -> dict[str, list[dict]]:
    """The graph's input and output slots in order, as a compiled `.dla` keeps them:
    {"inputs": [{name, shape, dtype, bytes}], "outputs": [...]}, dtype the TensorType name; an integer slot
    also has its one scale and zero_point (real = (q - zero_point) * scale)."""
    m = _model(buf)
    sg, ts = m.Subgraphs(subgraph), tensors(buf, subgraph)

    def describe(indices) -> list[dict]:
        return [{"name": ts[i].name, "shape": ts[i].shape, "dtype": ts[i].dtype, "bytes": ts[i].nbytes,
                 **_scale(sg.Tensors(i))} for i in indices]

    return {"inputs": describe(sg.InputsAsNumpy().tolist() if sg.InputsLength() else []),
            "outputs": describe(sg.OutputsAsNumpy().tolist() if sg.OutputsLength() else [])}


def _scale(t) -> dict:
    q = t.Quantization()
    if q is None or q.ScaleLength() != 1:
        return {}
    return {"scale": float(q.ScaleAsNumpy()[0]),
            "zero_point": int(q.ZeroPointAsNumpy()[0]) if q.ZeroPointLength() else 0}


def params_from_tflite(buf: bytes) -> dict[str, np.ndarray]:
    """The weights of a graph from device/graphs/tflite_graphs.py, as float32, keyed and laid out
    like `onnx_graphs.params_from_graph` returns them for the same graph: canonical names, linear
    weights [out, in], conv filters [out, in, 1, k], cross K/V as `cross_attn.{key,value}.all.*`."""
    m, out = _model(buf), {}
    for t in tensors(buf):
        if not t.const or t.dtype not in ("FLOAT32", "FLOAT16") or t.name.startswith(AUX_PREFIXES):
            continue
        data = m.Buffers(m.Subgraphs(0).Tensors(t.index).Buffer()).DataAsNumpy()
        arr = np.frombuffer(data.tobytes(), _NP[t.dtype]).reshape(t.shape).astype(np.float32)
        if arr.ndim == 4:   # CONV_2D filter [out, 1, k, in] -> the ONNX Conv layout [out, in, 1, k]
            arr = np.ascontiguousarray(arr.transpose(0, 3, 1, 2))
        out[t.name] = arr
    return out
