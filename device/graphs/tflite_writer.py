"""A TFLite flatbuffer, written with the schema's object API (no TensorFlow needed).

`ai_edge_litert.schema_py_generated` is the TFLite schema (ModelT, SubGraphT, TensorT, …); a
model is one subgraph with a `serving_default` signature, buffer 0 empty, packed with the
`TFL3` file identifier. Only builtin ops are written (never MediaTek-only custom ops), so stock
LiteRT, the Neuron delegate and `ncc-tflite` all read the same file.
"""
from __future__ import annotations

import numpy as np

SCHEMA_VERSION = 3
SIGNATURE = "serving_default"
# Constant data aligned like TFLite's own converter writes it (SIMD loads, DMA on the board).
BUFFER_ALIGN = 16


def schema():
    # LiteRT's schema (~0.2 s; absent from a NumPy-only board): only when a graph is read or written
    import ai_edge_litert.schema_py_generated as S

    return S


def tensor_type(dtype: np.dtype) -> int:
    S = schema()
    return {np.dtype(np.float32): S.TensorType.FLOAT32, np.dtype(np.float16): S.TensorType.FLOAT16,
            np.dtype(np.int32): S.TensorType.INT32, np.dtype(np.int64): S.TensorType.INT64,
            np.dtype(np.int8): S.TensorType.INT8, np.dtype(np.uint8): S.TensorType.UINT8,
            np.dtype(np.int16): S.TensorType.INT16}[np.dtype(dtype)]


def builtin_name(code: int) -> str:
    names = {v: k for k, v in vars(schema().BuiltinOperator).items() if not k.startswith("_")}
    return names.get(code, f"BUILTIN_{code}")


class _AlignedBuffer:
    """A BufferT whose data starts on a BUFFER_ALIGN boundary (the object API aligns to 1)."""

    def __init__(self, data: np.ndarray | None):
        self.data = data

    def Pack(self, builder):  # noqa: N802 (the schema's object API calls this name)
        S = schema()
        data = None
        if self.data is not None:
            raw = np.ascontiguousarray(self.data).tobytes()
            builder.StartVector(1, len(raw), BUFFER_ALIGN)
            builder.head -= len(raw)
            builder.Bytes[builder.head:builder.head + len(raw)] = raw
            data = builder.EndVector()
        S.BufferStart(builder)
        if data is not None:
            S.BufferAddData(builder, data)
        return S.BufferEnd(builder)


class TFLiteWriter:
    """Tensors, constant buffers, operator codes and operators of one subgraph; `finish()` packs."""

    def __init__(self, name: str):
        self.name = name
        self.tensors: list = []
        self.index: dict[str, int] = {}
        self.buffers: list[_AlignedBuffer] = [_AlignedBuffer(None)]       # buffer 0: empty, by convention
        self.codes: dict[int, object] = {}                                 # builtin code -> OperatorCodeT
        self.operators: list = []
        self.nbytes = 0

    def tensor(self, name: str, shape, dtype=np.float32, data: np.ndarray | None = None) -> int:
        if name in self.index:
            raise ValueError(f"tensor {name!r} written twice")
        S = schema()
        t = S.TensorT()
        t.name, t.shape, t.type = name, np.asarray(shape, np.int32), tensor_type(dtype)
        if data is not None:
            t.buffer = len(self.buffers)
            self.buffers.append(_AlignedBuffer(np.ascontiguousarray(data, dtype).reshape(-1).view(np.uint8)))
            self.nbytes += data.nbytes
        self.index[name] = len(self.tensors)
        self.tensors.append(t)
        return self.index[name]

    def const(self, name: str, arr: np.ndarray) -> int:
        """A constant tensor, written once per name."""
        if name in self.index:
            return self.index[name]
        arr = np.asarray(arr)
        return self.tensor(name, arr.shape, arr.dtype, arr)

    def ints(self, values, scalar: bool = False) -> int:
        values = np.array(values, np.int32).reshape(() if scalar else (-1,))
        tag = "_".join(str(int(v)).replace("-", "m") for v in values.reshape(-1))
        return self.const(f"i32_{'s' if scalar else ''}{tag}", values)

    def op(self, builtin: str, inputs, outputs, options=None, version: int = 1) -> None:
        """One builtin operator; `options` is the schema's `<Op>OptionsT` (its type is derived)."""
        S = schema()
        code = getattr(S.BuiltinOperator, builtin)
        oc = self.codes.get(code)
        if oc is None:
            # Codes above 127 only fit the new field; the old one then holds PLACEHOLDER_FOR_GREATER_OP_CODES.
            oc = self.codes[code] = S.OperatorCodeT(deprecatedBuiltinCode=min(code, 127), builtinCode=code)
            oc.version = version
        oc.version = max(oc.version, version)
        o = S.OperatorT()
        o.opcodeIndex = list(self.codes).index(code)
        o.inputs, o.outputs = np.asarray(inputs, np.int32), np.asarray(outputs, np.int32)
        if options is not None:
            o.builtinOptionsType = getattr(S.BuiltinOptions, type(options).__name__[:-1])
            o.builtinOptions = options
        self.operators.append(o)

    def finish(self, inputs: list[str], outputs: list[str], description: str = "") -> bytes:
        import flatbuffers  # comes with LiteRT: only when a graph is written

        S = schema()
        sg = S.SubGraphT()
        sg.tensors, sg.operators, sg.name = self.tensors, self.operators, self.name
        sg.inputs = np.array([self.index[n] for n in inputs], np.int32)
        sg.outputs = np.array([self.index[n] for n in outputs], np.int32)
        sig = S.SignatureDefT()
        sig.signatureKey, sig.subgraphIndex = SIGNATURE, 0
        sig.inputs = [_tensor_map(S, n, self.index[n]) for n in inputs]
        sig.outputs = [_tensor_map(S, n, self.index[n]) for n in outputs]
        m = S.ModelT()
        m.version, m.description, m.subgraphs = SCHEMA_VERSION, description or self.name, [sg]
        m.operatorCodes, m.buffers, m.signatureDefs = list(self.codes.values()), self.buffers, [sig]
        builder = flatbuffers.Builder(self.nbytes + (1 << 20))
        builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())


def _tensor_map(S, name: str, index: int):
    t = S.TensorMapT()
    t.name, t.tensorIndex = name, index
    return t
