"""The ONNX emitter: device/graphs/whisper.py's description as ONNX, and the ONNX graphs' entry points.

Board graphs (static shapes, rank <= 4, no Gather/Trilu):
- `encoder.onnx`: mel [1,80,3000] -> cross_k, cross_v [L,1,1500,d] (absorbed form: F [1,1,1500,d]);
- `decoder_step.onnx`: the step signature in docs/protocol.md.
Host-only graphs (never deployed, not checked), over a dynamic number of tokens: `decoder_full`, the
uncached reference, and `decoder_prefill`, a window's first tokens in one call.

Lowering choices, all for MDLA 5.3:
- conv1d is a 2D Conv over [1,C,1,T] (MDLA has CONV_2D, not CONV_1D), its padding on the node.
- LayerNorm is decomposed into ReduceMean/Sub/Mul/Add/Sqrt/Div (MEAN, SUB, MUL, ADD, SQRT, DIV),
  the MDLA form (docs/architecture.md); ONNX Runtime re-fuses exactly this pattern on the host.
- GELU is the opset-20 `Gelu` op (exact erf form), one MDLA GELU.
- Linear layers are MatMul with a constant [in, out] weight plus Add: FULLY_CONNECTED.
Weight initializers keep their canonical names (`<param>` or `<param>_t` when transposed), so
`params_from_graph` can read the weights back out of a bundle.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from core.model.dims import ModelDims
from device.graphs import whisper
from device.graphs.ir import Graph, Node

OPSET = 20
_F32 = TensorProto.FLOAT
_SIMPLE = {"gelu": "Gelu", "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div"}


class _Emitter:
    """Writes one IR graph's nodes as ONNX nodes; initializers are made on first use."""

    def __init__(self, g: Graph):
        self.g, self.nodes, self.inits, self._n = g, [], {}, 0

    def init(self, name: str, arr: np.ndarray) -> str:
        if name not in self.inits:
            self.inits[name] = numpy_helper.from_array(np.ascontiguousarray(arr), name)
        return name

    def const(self, name: str) -> str:
        return self.init(name, self.g.consts[name]) if name in self.g.consts else name

    def ints(self, values) -> str:
        values = [int(v) for v in values]
        return self.init("i64_" + "_".join(str(v).replace("-", "m") for v in values), np.array(values, np.int64))

    def node(self, op_type: str, inputs, out: str | list[str] | None = None, **attrs) -> str:
        self._n += 1
        outs = out if isinstance(out, list) else [out or f"onnx_{op_type.lower()}_{self._n}"]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=f"{op_type}_{self._n}", **attrs))
        return outs[0]

    def emit(self, n: Node) -> None:
        x, a, out = n.inputs, n.attrs, n.outputs[0]
        if n.op == "linear":
            w = self.init(x[1] + "_t", self.g.consts[x[1]].T)
            if len(x) == 2:
                self.node("MatMul", [x[0], w], out)
            else:
                self.node("Add", [self.node("MatMul", [x[0], w]), self.const(x[2])], out)
        elif n.op == "conv1d":
            self.conv1d(n)
        elif n.op == "layer_norm":
            axes = self.ints([-1])
            xc = self.node("Sub", [x[0], self.node("ReduceMean", [x[0], axes])])
            var = self.node("ReduceMean", [self.node("Mul", [xc, xc]), axes])
            eps = self.init(f"f32_{a['eps']:g}", np.array(a["eps"], np.float32))
            y = self.node("Div", [xc, self.node("Sqrt", [self.node("Add", [var, eps])])])
            self.node("Add", [self.node("Mul", [y, self.const(x[1])]), self.const(x[2])], out)
        elif n.op in _SIMPLE:
            self.node(_SIMPLE[n.op], [self.const(i) for i in x], out)
        elif n.op == "matmul":
            self.node("MatMul", [self.const(i) for i in x], out)   # a constant: the absorbed per-head weights
        elif n.op == "softmax":
            self.node("Softmax", x, out, axis=-1)
        elif n.op == "reshape":
            self.node("Reshape", [x[0], self.ints(a["shape"])], out)
        elif n.op == "transpose":
            self.node("Transpose", x, out, perm=a["perm"])
        elif n.op == "concat":
            self.node("Concat", x, out, axis=a["axis"])
        elif n.op == "split":
            self.node("Split", [x[0], self.ints(a["sizes"])], list(n.outputs), axis=a["axis"])
        elif n.op == "slice":
            end = np.iinfo(np.int64).max if a["end"] is None else a["end"]
            self.node("Slice", [x[0], self.ints([a["start"]]), self.ints([end]), self.ints([a["axis"]])], out)
        elif n.op == "squeeze":
            self.node("Squeeze", [x[0], self.ints([a["axis"]])], out)
        else:
            raise ValueError(f"the ONNX emitter has no lowering for {n.op!r}")

    def conv1d(self, n: Node) -> None:
        """[T, C] rows -> ONNX's NCHW [1, C, 1, T], a [1, k] kernel, and back to [T_out, C_out]."""
        x, w, b = n.inputs
        wt = self.g.consts[w]
        c_in, c_out = self.g.shapes[x][1], self.g.shapes[n.outputs[0]][1]
        nchw = self.node("Reshape", [self.node("Transpose", [x], perm=[1, 0]), self.ints([1, c_in, 1, -1])])
        y = self.node("Conv", [nchw, self.init(w, wt.reshape(wt.shape[0], wt.shape[1], 1, wt.shape[2])),
                               self.const(b)], kernel_shape=[1, wt.shape[2]],
                      pads=[0, n.attrs["pad"], 0, n.attrs["pad"]], strides=[1, n.attrs["stride"]])
        self.node("Transpose", [self.node("Reshape", [y, self.ints([c_out, -1])])], n.outputs[0], perm=[1, 0])


def _value_info(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, _F32, [d if d is not None else "?" for d in shape])


def to_onnx(g: Graph) -> onnx.ModelProto:
    """One IR graph as an opset-20 ONNX model (inputs and outputs float32, named as in the IR)."""
    e = _Emitter(g)
    for n in g.nodes:
        e.emit(n)
    for name, value in g.outputs.items():
        e.node("Identity", [value], name)
        e.nodes[-1].name = name + "_out"
    inputs = [_value_info(name, shape) for name, shape in g.inputs.items()]
    outputs = [_value_info(name, g.shapes[v]) for name, v in g.outputs.items()]
    graph = helper.make_graph(e.nodes, g.name, inputs, outputs, list(e.inits.values()), doc_string=g.doc)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="whisperkv-studio")
    m.ir_version = 9  # onnxruntime >= 1.18 reads IR 9 (opset 20)
    return m


def build_encoder(p: dict, dims: ModelDims, cross: str = "kv") -> onnx.ModelProto:
    """`cross`: kv or absorbed, the form of the cross state (device/graphs/whisper.py)."""
    return to_onnx(whisper.describe_encoder(p, dims, cross))


def build_decoder_step(p: dict, dims: ModelDims, alignment_heads=(), cross: str = "kv") -> onnx.ModelProto:
    """With `alignment_heads`, the attention variant (device/graphs/whisper.py)."""
    return to_onnx(whisper.describe_decoder_step(p, dims, alignment_heads, cross))


def build_decoder_full(p: dict, dims: ModelDims, cross: str = "kv") -> onnx.ModelProto:
    """Host-only uncached reference: x [1,T,d], cross K/V (or F), mask [1,1,T,T] -> logits of the last token."""
    return to_onnx(whisper.describe_decoder_full(p, dims, cross))


def build_decoder_prefill(p: dict, dims: ModelDims, alignment_heads=(), cross: str = "kv") -> onnx.ModelProto:
    """Host-only batched prefill: x [1,T,d] ... -> logits [1,T,V], new_k/new_v [L,1,T,d] (device/graphs/whisper.py)."""
    return to_onnx(whisper.describe_decoder_prefill(p, dims, alignment_heads, cross))


def params_from_graph(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Canonical fp32 params back out of a graph's initializers (`<name>_t` are transposed).
    fp16 initializers are widened; int8 ones (`<name>_quantized` + scale/zero point) are dequantized."""
    raw = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    out: dict[str, np.ndarray] = {}
    for name, arr in raw.items():
        if name.endswith("_quantized"):
            base = name[:-len("_quantized")]
            scale, zero = raw[base + "_scale"], raw.get(base + "_zero_point", np.zeros((), arr.dtype))
            arr, name = (arr.astype(np.float32) - zero.astype(np.float32)) * scale, base
        elif (arr.dtype not in (np.float16, np.float32) or name.endswith(("_scale", "_zero_point"))
              or name.startswith(("f32_", "i64_"))):
            continue
        arr = arr.astype(np.float32)
        if name.endswith("_t"):
            name, arr = name[:-2], np.ascontiguousarray(arr.T)
        out[name] = arr
    return out


def per_layer_inputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """Host variant of a graph: each stacked [L,1,N,d] input that feeds a Split becomes L inputs
    `<name>.<l>` [1,1,N,d]. ONNX Runtime copies every Split output (~47 MB a decode step for the
    cross and self K/V); NumPy views of the layers go in without a copy. Same math otherwise."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inputs = {i.name: i for i in g.input}
    rename: dict[str, str] = {}
    for node in list(g.node):
        if node.op_type != "Split" or node.input[0] not in inputs:
            continue
        src = inputs[node.input[0]]
        dims = [d.dim_value for d in src.type.tensor_type.shape.dim]
        for layer, out in enumerate(node.output):
            new = f"{src.name}.{layer}"
            rename[out] = new
            g.input.append(helper.make_tensor_value_info(new, src.type.tensor_type.elem_type, [1, *dims[1:]]))
        g.input.remove(src)
        g.node.remove(node)
    for node in g.node:
        for k, name in enumerate(node.input):
            if name in rename:
                node.input[k] = rename[name]
    return m
