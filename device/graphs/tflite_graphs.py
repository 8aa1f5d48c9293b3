"""The TFLite emitter: device/graphs/whisper.py's description as TFLite, for LiteRT and `ncc-tflite`.

Board graphs, with the step signature of docs/protocol.md and tensors named like it:
- `encoder.tflite`: mel [1,80,3000] -> cross_k, cross_v [L,1,1500,d] (absorbed form: F [1,1,1500,d]);
- `decoder_step.tflite`: x, self_k/v, cross_k/v (or F), mask -> logits, new_k, new_v.

Only builtin ops on MDLA 5.3's list (device/toolchain/mdla_ops.py), rank <= 4, static shapes,
int32 shape/axis/perm constants:
- linear is FULLY_CONNECTED with the canonical [out, in] weight (no transpose);
- conv1d is CONV_2D over NHWC [1, 1, T, C] with a [out, 1, k, in] filter; its zero padding is a
  CONCATENATION with zero constants and VALID padding (PAD is not on the list we target);
- layer_norm is MEAN, SUB, MUL (the square), MEAN, ADD eps, RSQRT, MUL, MUL, ADD;
- GELU is the exact (erf) form, SOFTMAX has beta 1, attention is BATCH_MATMUL on rank-3 heads;
- an uneven split is SLICEs (SPLIT only splits evenly).
`dtype="fp16"` stores each weight as an fp16 constant followed by a DEQUANTIZE to fp32: the
standard TFLite fp16-weights form, which `ncc-tflite --relax-fp32` computes in fp16 on the NPU.
Scalars (attention scale, eps) stay fp32: they are single values, and eps is subnormal in fp16.
"""
from __future__ import annotations

import numpy as np

from core.model.dims import FULL_WINDOW_S, ModelDims
from device.graphs import whisper
from device.graphs.ir import Graph, Node
from device.graphs.tflite_writer import TFLiteWriter, schema

DTYPES = ("fp32", "fp16")
_BINARY = {"add": "ADD", "sub": "SUB", "mul": "MUL", "div": "DIV"}
_DEQUANTIZE_FP16_VERSION = 3     # TFLite's op version for DEQUANTIZE of a float16 input


class _Lowering:
    """Writes one IR graph's nodes as TFLite operators."""

    def __init__(self, g: Graph, dtype: str):
        self.g, self.w, self.fp16, self.S = g, TFLiteWriter(g.name), dtype == "fp16", schema()
        self.public = {v: name for name, v in g.outputs.items()}
        self.weights: dict[str, int] = {}
        for name in g.inputs:
            self.w.tensor(name, self.shape(name))

    def shape(self, v: str) -> tuple:
        shape = self.g.shapes[v]
        if any(d is None for d in shape):
            raise ValueError(f"{self.g.name}: {v} has a dynamic shape {shape}; TFLite board graphs are static")
        return shape

    def t(self, v: str) -> int:
        """The tensor of an IR value; a constant becomes a weight on first use."""
        return self.weight(v, self.g.consts[v]) if v in self.g.consts else self.w.index[self.public.get(v, v)]

    def out(self, v: str) -> int:
        return self.w.tensor(self.public.get(v, v), self.shape(v))

    def weight(self, name: str, arr: np.ndarray) -> int:
        if name not in self.weights:
            if self.fp16 and arr.dtype == np.float32 and arr.size > 1:
                q = self.w.const(name, arr.astype(np.float16))
                self.weights[name] = self.w.tensor(name + "_dequantized", arr.shape)
                self.w.op("DEQUANTIZE", [q], [self.weights[name]], version=_DEQUANTIZE_FP16_VERSION)
            else:
                self.weights[name] = self.w.const(name, arr)
        return self.weights[name]

    def tmp(self, base: str, tag: str, shape) -> int:
        return self.w.tensor(f"{base}/{tag}", shape)

    def emit(self, n: Node) -> None:
        S, w, a, x = self.S, self.w, n.attrs, n.inputs
        if n.op == "linear":
            keep = len(self.shape(x[0])) > 2
            bias = self.t(x[2]) if len(x) > 2 else -1
            w.op("FULLY_CONNECTED", [self.t(x[0]), self.t(x[1]), bias], [self.out(n.outputs[0])],
                 S.FullyConnectedOptionsT(keepNumDims=keep), version=5 if keep else 1)
        elif n.op == "conv1d":
            self.conv1d(n)
        elif n.op == "layer_norm":
            self.layer_norm(n)
        elif n.op in _BINARY:
            opts = getattr(S, _BINARY[n.op].title() + "OptionsT")()
            w.op(_BINARY[n.op], [self.t(i) for i in x], [self.out(n.outputs[0])], opts)
        elif n.op == "matmul":
            w.op("BATCH_MATMUL", [self.t(i) for i in x], [self.out(n.outputs[0])], S.BatchMatMulOptionsT())
        elif n.op == "gelu":
            w.op("GELU", [self.t(x[0])], [self.out(n.outputs[0])], S.GeluOptionsT(approximate=False))
        elif n.op == "softmax":
            w.op("SOFTMAX", [self.t(x[0])], [self.out(n.outputs[0])], S.SoftmaxOptionsT(beta=1.0))
        elif n.op in ("reshape", "squeeze"):
            self.reshape(self.t(x[0]), self.out(n.outputs[0]), self.shape(n.outputs[0]))
        elif n.op == "transpose":
            w.op("TRANSPOSE", [self.t(x[0]), w.ints(a["perm"])], [self.out(n.outputs[0])], S.TransposeOptionsT())
        elif n.op == "concat":
            axis = a["axis"] % len(self.shape(x[0]))
            w.op("CONCATENATION", [self.t(i) for i in x], [self.out(n.outputs[0])],
                 S.ConcatenationOptionsT(axis=axis))
        elif n.op == "split":
            self.split(n)
        elif n.op == "slice":
            shape = self.shape(x[0])
            axis = a["axis"] % len(shape)
            begin = [0] * len(shape)
            begin[axis] = range(shape[axis])[slice(a["start"], a["end"])].start
            self.slice(self.t(x[0]), self.out(n.outputs[0]), begin, self.shape(n.outputs[0]))
        else:
            raise ValueError(f"the TFLite emitter has no lowering for {n.op!r}")

    def reshape(self, src: int, dst: int, shape) -> None:
        self.w.op("RESHAPE", [src, self.w.ints(shape)], [dst], self.S.ReshapeOptionsT(newShape=list(shape)))

    def slice(self, src: int, dst: int, begin, size) -> None:
        self.w.op("SLICE", [src, self.w.ints(begin), self.w.ints(size)], [dst], self.S.SliceOptionsT())

    def split(self, n: Node) -> None:
        shape, sizes = self.shape(n.inputs[0]), n.attrs["sizes"]
        axis = n.attrs["axis"] % len(shape)
        outs = [self.out(o) for o in n.outputs]
        if len(set(sizes)) == 1:
            self.w.op("SPLIT", [self.w.ints(axis, scalar=True), self.t(n.inputs[0])], outs,
                      self.S.SplitOptionsT(numSplits=len(sizes)))
            return
        offset = 0
        for out, o, size in zip(outs, n.outputs, sizes):
            begin = [0] * len(shape)
            begin[axis] = offset
            self.slice(self.t(n.inputs[0]), out, begin, self.shape(o))
            offset += size

    def conv1d(self, n: Node) -> None:
        """[T, C] rows -> NHWC [1, 1, T, C]; zero rows concatenated for the padding; VALID CONV_2D."""
        S, w, (x, wname, b), v = self.S, self.w, n.inputs, n.outputs[0]
        (t, c), (t_out, c_out), pad = self.shape(x), self.shape(v), n.attrs["pad"]
        x4 = self.tmp(v, "nhwc", [1, 1, t, c])
        self.reshape(self.t(x), x4, [1, 1, t, c])
        if pad:
            zeros = w.const(f"f32_zeros_1x1x{pad}x{c}", np.zeros((1, 1, pad, c), np.float32))
            padded = self.tmp(v, "padded", [1, 1, t + 2 * pad, c])
            w.op("CONCATENATION", [zeros, x4, zeros], [padded], S.ConcatenationOptionsT(axis=2))
            x4 = padded
        filt = self.weight(wname, np.ascontiguousarray(self.g.consts[wname].transpose(0, 2, 1)[:, None]))
        y4 = self.tmp(v, "conv", [1, 1, t_out, c_out])
        w.op("CONV_2D", [x4, filt, self.t(b)], [y4],
             S.Conv2DOptionsT(padding=S.Padding.VALID, strideW=n.attrs["stride"], strideH=1))
        self.reshape(y4, self.out(v), [t_out, c_out])

    def layer_norm(self, n: Node) -> None:
        S, w, (x, gamma, beta), v = self.S, self.w, n.inputs, n.outputs[0]
        shape = self.shape(x)
        stat = shape[:-1] + (1,)
        axis, keep = w.ints([len(shape) - 1]), S.ReducerOptionsT(keepDims=True)
        eps = w.const(f"f32_{n.attrs['eps']:g}", np.array(n.attrs["eps"], np.float32))
        mean, sq, var = self.tmp(v, "mean", stat), self.tmp(v, "square", shape), self.tmp(v, "var", stat)
        var_eps, rstd = self.tmp(v, "var_eps", stat), self.tmp(v, "rstd", stat)
        xc, y, yw = self.tmp(v, "centered", shape), self.tmp(v, "normed", shape), self.tmp(v, "scaled", shape)
        w.op("MEAN", [self.t(x), axis], [mean], keep)
        w.op("SUB", [self.t(x), mean], [xc], S.SubOptionsT())
        # centered², not SQUARED_DIFFERENCE: ai-edge-quantizer has no integer SQUARED_DIFFERENCE, and MUL it has.
        w.op("MUL", [xc, xc], [sq], S.MulOptionsT())
        w.op("MEAN", [sq, axis], [var], keep)
        w.op("ADD", [var, eps], [var_eps], S.AddOptionsT())
        w.op("RSQRT", [var_eps], [rstd])
        w.op("MUL", [xc, rstd], [y], S.MulOptionsT())
        w.op("MUL", [y, self.t(gamma)], [yw], S.MulOptionsT())
        w.op("ADD", [yw, self.t(beta)], [self.out(v)], S.AddOptionsT())


def to_tflite(g: Graph, dtype: str = "fp32") -> bytes:
    """One static IR graph as a TFLite flatbuffer (inputs and outputs float32, named as in the IR)."""
    if dtype not in DTYPES:
        raise ValueError(f"TFLite graphs are built in {' or '.join(DTYPES)}, not {dtype!r}")
    low = _Lowering(g, dtype)
    for n in g.nodes:
        low.emit(n)
    return low.w.finish(list(g.inputs), list(g.outputs), g.doc)


def build_encoder_tflite(p: dict, dims: ModelDims, dtype: str = "fp32", cross: str = "kv",
                         window_s: int = FULL_WINDOW_S) -> bytes:
    """`cross`: kv or absorbed, the form of the cross state; `window_s`: the window it encodes
    (device/graphs/whisper.py)."""
    return to_tflite(whisper.describe_encoder(p, dims, cross, window_s), dtype)


def build_decoder_step_tflite(p: dict, dims: ModelDims, dtype: str = "fp32", alignment_heads=(),
                              cross: str = "kv", cross_mask: bool = False) -> bytes:
    """With `alignment_heads`, the attention variant; with `cross_mask`, the input that serves shorter windows
    (device/graphs/whisper.py)."""
    return to_tflite(whisper.describe_decoder_step(p, dims, alignment_heads, cross, cross_mask), dtype)
