"""A small neutral graph description: what a graph computes, not how a format spells it.

`device/graphs/whisper.py` describes Whisper on it once; `onnx_graphs.py` and `tflite_graphs.py`
emit it as ONNX and TFLite. Values are named strings; every value's shape is inferred here, so
emitters that need static shapes (TFLite) read them from `Graph.shapes`.

Ops, and their semantics (rows are the second-to-last axis, features the last):
- linear(x[..., in], w[out, in], b[out]?)      -> x @ w.T + b   (canonical PyTorch layout)
- matmul(a[..., m, k], b[..., k, n])           -> a @ b (batched)
- conv1d(x[T, C_in], w[out, in, k], b[out])    -> [T_out, out], zero `pad` each side, `stride`
  (time along rows, like every other activation here: the TFLite emitter then needs no transpose)
- layer_norm(x, w, b, eps) over the last axis; each emitter lowers it to its own decomposition
- gelu (exact, erf form), softmax (last axis), add/sub/mul/div (NumPy broadcasting)
- reshape(shape, -1 allowed), transpose(perm), concat(axis), split(axis, sizes),
  slice(axis, start, end: Python semantics), squeeze(axis)
Input dims may be strings (symbolic, e.g. "T"): such graphs are host-only (ONNX), and their
unknown inferred dims are None.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Constants that are not model parameters start with one of these (weights read back skip them).
AUX_PREFIXES = ("f32_", "i32_", "i64_")


@dataclass
class Node:
    op: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict = field(default_factory=dict)


def _broadcast(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1 or x is None:
            out.append(x if y == 1 else y)      # None (unknown) against 1 stays unknown
        elif y in (1, None, x):
            out.append(x)
        else:
            raise ValueError(f"shapes {a} and {b} do not broadcast")
    return tuple(out)


def _numel(shape) -> int | None:
    return None if any(d is None for d in shape) else int(np.prod(shape, dtype=np.int64))


def _reshape(shape: tuple, target) -> tuple:
    target = [int(d) for d in target]
    if -1 in target:
        known, total = -int(np.prod(target)), _numel(shape)
        return tuple((total // known if total is not None else None) if d == -1 else d for d in target)
    return tuple(target)


def _slice_len(dim: int | None, start: int, end: int | None) -> int | None:
    if dim is not None:
        return len(range(dim)[slice(start, end)])
    if start < 0 and (end is None or end < 0):
        return (end or 0) - start
    return None


@dataclass
class Graph:
    """Nodes in execution order, named inputs and outputs, and constants (parameters by name)."""

    name: str
    doc: str = ""
    inputs: dict[str, tuple] = field(default_factory=dict)    # name -> declared shape
    outputs: dict[str, str] = field(default_factory=dict)     # public name -> value
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    nodes: list[Node] = field(default_factory=list)
    shapes: dict[str, tuple] = field(default_factory=dict)    # every value's inferred shape
    _n: int = 0

    # --- values ----------------------------------------------------------------------------------
    def input(self, name: str, shape) -> str:
        self.inputs[name] = tuple(shape)
        self.shapes[name] = tuple(d if isinstance(d, int) else None for d in shape)
        return name

    def output(self, value: str, name: str) -> None:
        self.outputs[name] = value

    def const(self, name: str, arr: np.ndarray) -> str:
        if name not in self.consts:
            self.consts[name] = np.ascontiguousarray(arr)
            self.shapes[name] = tuple(self.consts[name].shape)
        return name

    def scalar(self, value: float) -> str:
        return self.const(f"f32_{value:g}", np.array(value, np.float32))

    def op(self, op: str, *inputs: str, n_out: int = 1, **attrs):
        self._n += 1
        outs = [f"{op}_{self._n}" + (f"_{i}" if n_out > 1 else "") for i in range(n_out)]
        node = Node(op, list(inputs), outs, attrs)
        for out, shape in zip(outs, self._infer(node)):
            self.shapes[out] = shape
        self.nodes.append(node)
        return outs[0] if n_out == 1 else outs

    # --- ops ---------------------------------------------------------------------------------------
    def linear(self, x: str, w: str, b: str | None = None) -> str:
        return self.op("linear", x, w, *([b] if b else []))

    def matmul(self, a: str, b: str) -> str:
        return self.op("matmul", a, b)

    def conv1d(self, x: str, w: str, b: str, stride: int = 1, pad: int = 0) -> str:
        return self.op("conv1d", x, w, b, stride=stride, pad=pad)

    def layer_norm(self, x: str, w: str, b: str, eps: float = 1e-5) -> str:
        return self.op("layer_norm", x, w, b, eps=eps)

    def gelu(self, x: str) -> str:
        return self.op("gelu", x)

    def softmax(self, x: str) -> str:
        return self.op("softmax", x)

    def add(self, a: str, b: str) -> str:
        return self.op("add", a, b)

    def sub(self, a: str, b: str) -> str:
        return self.op("sub", a, b)

    def mul(self, a: str, b: str) -> str:
        return self.op("mul", a, b)

    def div(self, a: str, b: str) -> str:
        return self.op("div", a, b)

    def reshape(self, x: str, shape) -> str:
        return self.op("reshape", x, shape=[int(d) for d in shape])

    def transpose(self, x: str, perm) -> str:
        return self.op("transpose", x, perm=[int(p) for p in perm])

    def concat(self, values, axis: int) -> str:
        return self.op("concat", *values, axis=axis)

    def split(self, x: str, sizes, axis: int) -> list[str]:
        outs = self.op("split", x, n_out=len(sizes), sizes=[int(s) for s in sizes], axis=axis)
        return outs if len(sizes) > 1 else [outs]

    def slice(self, x: str, axis: int, start: int, end: int | None = None) -> str:
        return self.op("slice", x, axis=axis, start=start, end=end)

    def squeeze(self, x: str, axis: int) -> str:
        return self.op("squeeze", x, axis=axis)

    # --- shape inference ---------------------------------------------------------------------------
    def _infer(self, node: Node) -> list[tuple]:
        s = [self.shapes[i] for i in node.inputs]
        a = node.attrs
        op = node.op
        if op == "linear":
            return [s[0][:-1] + (s[1][0],)]
        if op == "matmul":
            return [_broadcast(s[0][:-2], s[1][:-2]) + (s[0][-2], s[1][-1])]
        if op == "conv1d":
            t, k = s[0][0], s[1][2]
            t_out = None if t is None else (t + 2 * a["pad"] - k) // a["stride"] + 1
            return [(t_out, s[1][0])]
        if op in ("layer_norm", "gelu", "softmax"):
            return [s[0]]
        if op in ("add", "sub", "mul", "div"):
            return [_broadcast(s[0], s[1])]
        if op == "reshape":
            return [_reshape(s[0], a["shape"])]
        if op == "transpose":
            return [tuple(s[0][p] for p in a["perm"])]
        if op == "concat":
            ax = a["axis"] % len(s[0])
            total = None if any(x[ax] is None for x in s) else sum(x[ax] for x in s)
            return [s[0][:ax] + (total,) + s[0][ax + 1:]]
        if op == "split":
            ax = a["axis"] % len(s[0])
            return [s[0][:ax] + (n,) + s[0][ax + 1:] for n in a["sizes"]]
        if op == "slice":
            ax = a["axis"] % len(s[0])
            return [s[0][:ax] + (_slice_len(s[0][ax], a["start"], a["end"]),) + s[0][ax + 1:]]
        if op == "squeeze":
            ax = a["axis"] % len(s[0])
            return [s[0][:ax] + s[0][ax + 1:]]
        raise ValueError(f"unknown op {op!r}")
