"""Build the MTK-form graphs (core/model.py's math) as ONNX, straight from the NumPy weights.

Board graphs (static shapes, rank <= 4, no Gather/Trilu):
- `encoder.onnx`: mel [1,80,3000] -> cross_k, cross_v [L,1,1500,d];
- `decoder_step.onnx`: DESIGN.md §1's step signature.
Host-only graph (never deployed, not checked): `decoder_full`, the uncached reference over a
dynamic number of tokens.

Lowering choices, all for MDLA 5.3:
- Conv1d is written as a 2D Conv over [1,80,1,3000] (MDLA has CONV_2D, not CONV_1D).
- LayerNorm is decomposed into ReduceMean/Sub/Mul/Add/Sqrt/Div (MEAN, SUB, MUL, ADD, SQRT, DIV),
  the form the porting analysis lists; ONNX Runtime re-fuses it on the host.
- GELU is the opset-20 `Gelu` op (exact erf form), one MDLA GELU.
- Linear layers are MatMul with a constant [in, out] weight plus Add: FULLY_CONNECTED.
- Heads stay packed along d_model in every stored tensor; the per-head split is a
  Reshape/Transpose (rank 3) inside the graph.
Weight initializers keep their canonical names (`<param>` or `<param>_t` when transposed), so
`params_from_graph` can read the weights back out of a bundle.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from core.model.weights import ModelDims

OPSET = 20
NEG_INF = -1e9
_F32 = TensorProto.FLOAT


@dataclass
class GraphBuilder:
    """Collects nodes and initializers; every helper returns the name of its output."""

    name: str
    nodes: list = field(default_factory=list)
    inits: dict = field(default_factory=dict)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    _n: int = 0

    def input(self, name: str, shape) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, _F32, shape))
        return name

    def output(self, value: str, name: str, shape) -> None:
        self.nodes.append(helper.make_node("Identity", [value], [name], name=name + "_out"))
        self.outputs.append(helper.make_tensor_value_info(name, _F32, shape))

    def init(self, name: str, arr: np.ndarray) -> str:
        if name not in self.inits:
            self.inits[name] = numpy_helper.from_array(np.ascontiguousarray(arr), name)
        return name

    def ints(self, values) -> str:
        values = [int(v) for v in values]
        return self.init("i64_" + "_".join(str(v).replace("-", "m") for v in values), np.array(values, np.int64))

    def scalar(self, value: float) -> str:
        return self.init(f"f32_{value:g}", np.array(value, np.float32))

    def op(self, op_type: str, *inputs: str, n_out: int = 1, **attrs):
        self._n += 1
        outs = [f"{op_type.lower()}_{self._n}" + (f"_{i}" if n_out > 1 else "") for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=f"{op_type}_{self._n}", **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, doc: str = "") -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, list(self.inits.values()),
                                  doc_string=doc)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="whisperkv-studio")
        m.ir_version = 9  # onnxruntime >= 1.18 reads IR 9 (opset 20)
        return m

    # --- layers --------------------------------------------------------------------------------
    def reshape(self, x: str, shape) -> str:
        return self.op("Reshape", x, self.ints(shape))

    def linear(self, x: str, p: dict, name: str) -> str:
        y = self.op("MatMul", x, self.init(name + ".weight_t", p[name + ".weight"].T))
        if name + ".bias" in p:
            y = self.op("Add", y, self.init(name + ".bias", p[name + ".bias"]))
        return y

    def layer_norm(self, x: str, p: dict, name: str, eps: float = 1e-5) -> str:
        axes = self.ints([-1])
        xc = self.op("Sub", x, self.op("ReduceMean", x, axes))
        var = self.op("ReduceMean", self.op("Mul", xc, xc), axes)
        y = self.op("Div", xc, self.op("Sqrt", self.op("Add", var, self.scalar(eps))))
        return self.op("Add", self.op("Mul", y, self.init(name + ".weight", p[name + ".weight"])),
                       self.init(name + ".bias", p[name + ".bias"]))

    def gelu(self, x: str) -> str:
        return self.op("Gelu", x)

    def heads(self, x: str, n_head: int, d: int, perm) -> str:
        """[T, d] -> [H, T, d/H] (perm 1,0,2) or [H, d/H, T] (perm 1,2,0), rank 3."""
        return self.op("Transpose", self.reshape(x, [-1, n_head, d // n_head]), perm=list(perm))

    def attention(self, q: str, k: str, v: str, n_head: int, d: int, mask: str | None = None) -> str:
        """q [Tq,d], k/v [Tk,d], mask additive broadcastable to [H,Tq,Tk] -> [Tq,d]."""
        qh = self.heads(self.op("Mul", q, self.scalar((d // n_head) ** -0.5)), n_head, d, (1, 0, 2))
        scores = self.op("MatMul", qh, self.heads(k, n_head, d, (1, 2, 0)))
        if mask is not None:
            scores = self.op("Add", scores, mask)
        out = self.op("MatMul", self.op("Softmax", scores, axis=-1), self.heads(v, n_head, d, (1, 0, 2)))
        return self.reshape(self.op("Transpose", out, perm=[1, 0, 2]), [-1, d])

    def cached_attention(self, q: str, k_cache: str, v_cache: str, k: str, v: str, n_head: int, d: int,
                         n_cache: int, mask: str) -> str:
        """Attention of one query over the N cache slots plus its own key: the N+1 scores are
        concatenated, not the keys, so the [N, d] cache is never copied (the mask still covers N+1)."""
        qh = self.heads(self.op("Mul", q, self.scalar((d // n_head) ** -0.5)), n_head, d, (1, 0, 2))  # [H,1,dh]
        scores = self.op("Concat", self.op("MatMul", qh, self.heads(k_cache, n_head, d, (1, 2, 0))),
                         self.op("MatMul", qh, self.heads(k, n_head, d, (1, 2, 0))), axis=-1)   # [H,1,N+1]
        p = self.op("Softmax", self.op("Add", scores, mask), axis=-1)
        p_cache, p_new = self.op("Split", p, self.ints([n_cache, 1]), axis=-1, n_out=2)
        out = self.op("Add", self.op("MatMul", p_cache, self.heads(v_cache, n_head, d, (1, 0, 2))),
                      self.op("MatMul", p_new, self.heads(v, n_head, d, (1, 0, 2))))            # [H,1,dh]
        return self.reshape(self.op("Transpose", out, perm=[1, 0, 2]), [-1, d])

    def mlp(self, x: str, p: dict, blk: str) -> str:
        h = self.layer_norm(x, p, blk + ".mlp_ln")
        return self.linear(self.gelu(self.linear(h, p, blk + ".mlp.0")), p, blk + ".mlp.2")


def build_encoder(p: dict, dims: ModelDims) -> onnx.ModelProto:
    g = GraphBuilder("whisper_encoder")
    d, n_ctx, L = dims.n_audio_state, dims.n_audio_ctx, dims.n_text_layer
    mel = g.input("mel", [1, dims.n_mels, 2 * n_ctx])
    x = g.reshape(mel, [1, dims.n_mels, 1, 2 * n_ctx])
    for conv, stride in (("encoder.conv1", 1), ("encoder.conv2", 2)):
        w = p[conv + ".weight"]
        x = g.gelu(g.op("Conv", x, g.init(conv + ".weight", w.reshape(w.shape[0], w.shape[1], 1, w.shape[2])),
                        g.init(conv + ".bias", p[conv + ".bias"]), kernel_shape=[1, 3], pads=[0, 1, 0, 1],
                        strides=[1, stride]))
    x = g.op("Transpose", g.reshape(x, [d, n_ctx]), perm=[1, 0])  # [1500, d]
    x = g.op("Add", x, g.init("encoder.positional_embedding", p["encoder.positional_embedding"]))
    for i in range(dims.n_audio_layer):
        blk = f"encoder.blocks.{i}"
        h = g.layer_norm(x, p, blk + ".attn_ln")
        a = g.attention(g.linear(h, p, blk + ".attn.query"), g.linear(h, p, blk + ".attn.key"),
                        g.linear(h, p, blk + ".attn.value"), dims.n_audio_head, d)
        x = g.op("Add", x, g.linear(a, p, blk + ".attn.out"))
        x = g.op("Add", x, g.mlp(x, p, blk))
    feats = g.layer_norm(x, p, "encoder.ln_post")
    # Every decoder layer's cross K/V projection as one [d, L*d] fully connected layer.
    for kind, out in (("key", "cross_k"), ("value", "cross_v")):
        names = [f"decoder.blocks.{i}.cross_attn.{kind}" for i in range(L)]
        w = np.concatenate([p[n + ".weight"].T for n in names], axis=1)
        y = g.op("MatMul", feats, g.init(f"cross_attn.{kind}.all.weight_t", w))
        if names[0] + ".bias" in p:
            y = g.op("Add", y, g.init(f"cross_attn.{kind}.all.bias", np.concatenate([p[n + ".bias"] for n in names])))
        y = g.reshape(g.op("Transpose", g.reshape(y, [n_ctx, L, d]), perm=[1, 0, 2]), [L, 1, n_ctx, d])
        g.output(y, out, [L, 1, n_ctx, d])
    return g.model("mel [1,80,3000] -> cross_k, cross_v [L,1,1500,d]")


def _logits(g: GraphBuilder, p: dict, dims: ModelDims, x: str) -> None:
    emb_t = g.init("decoder.token_embedding.weight_t", p["decoder.token_embedding.weight"].T)
    logits = g.op("MatMul", g.layer_norm(x, p, "decoder.ln"), emb_t)  # tied LM head, no gather
    g.output(g.reshape(logits, [1, 1, dims.n_vocab]), "logits", [1, 1, dims.n_vocab])


def _split_layers(g: GraphBuilder, t: str, n_layer: int, rows: int, d: int) -> list[str]:
    return [g.reshape(s, [rows, d]) for s in g.op("Split", t, axis=0, num_outputs=n_layer, n_out=n_layer)]


def build_decoder_step(p: dict, dims: ModelDims) -> onnx.ModelProto:
    g = GraphBuilder("whisper_decoder_step")
    d, L, n_ctx, n_audio = dims.n_text_state, dims.n_text_layer, dims.n_text_ctx, dims.n_audio_ctx
    x = g.reshape(g.input("x", [1, 1, d]), [1, d])
    self_k = _split_layers(g, g.input("self_k", [L, 1, n_ctx, d]), L, n_ctx, d)
    self_v = _split_layers(g, g.input("self_v", [L, 1, n_ctx, d]), L, n_ctx, d)
    cross_k = _split_layers(g, g.input("cross_k", [L, 1, n_audio, d]), L, n_audio, d)
    cross_v = _split_layers(g, g.input("cross_v", [L, 1, n_audio, d]), L, n_audio, d)
    mask = g.reshape(g.input("mask", [1, 1, 1, n_ctx + 1]), [1, 1, n_ctx + 1])
    new_k, new_v = [], []
    for i in range(L):
        blk = f"decoder.blocks.{i}"
        h = g.layer_norm(x, p, blk + ".attn_ln")
        # The step's own key/value join the 448 cache slots (449 positions, the mask hides the
        # unused ones) and go back out for the runner to store at cache_len.
        k, v = g.linear(h, p, blk + ".attn.key"), g.linear(h, p, blk + ".attn.value")
        new_k.append(g.reshape(k, [1, 1, 1, d]))
        new_v.append(g.reshape(v, [1, 1, 1, d]))
        attn = g.cached_attention(g.linear(h, p, blk + ".attn.query"), self_k[i], self_v[i], k, v,
                                  dims.n_text_head, d, n_ctx, mask)
        x = _decoder_block_rest(g, p, dims, i, x, attn, cross_k[i], cross_v[i])
    _logits(g, p, dims, x)
    g.output(g.op("Concat", *new_k, axis=0), "new_k", [L, 1, 1, d])
    g.output(g.op("Concat", *new_v, axis=0), "new_v", [L, 1, 1, d])
    return g.model("x [1,1,d], self_k/v [L,1,448,d], cross_k/v [L,1,1500,d], mask [1,1,1,449] "
                   "-> logits [1,1,V], new_k/new_v [L,1,1,d]")


def _decoder_block_rest(g: GraphBuilder, p: dict, dims: ModelDims, i: int, x: str, attn: str, cross_k: str,
                        cross_v: str) -> str:
    """A decoder block after its self-attention: residual, cross-attention, MLP."""
    blk, d, h_n = f"decoder.blocks.{i}", dims.n_text_state, dims.n_text_head
    x = g.op("Add", x, g.linear(attn, p, blk + ".attn.out"))
    q = g.linear(g.layer_norm(x, p, blk + ".cross_attn_ln"), p, blk + ".cross_attn.query")
    x = g.op("Add", x, g.linear(g.attention(q, cross_k, cross_v, h_n, d), p, blk + ".cross_attn.out"))
    return g.op("Add", x, g.mlp(x, p, blk))


def build_decoder_full(p: dict, dims: ModelDims) -> onnx.ModelProto:
    """Host-only uncached reference: x [1,T,d], cross K/V, mask [1,1,T,T] -> logits of the last token."""
    g = GraphBuilder("whisper_decoder_full")
    d, L, n_audio = dims.n_text_state, dims.n_text_layer, dims.n_audio_ctx
    x = g.reshape(g.input("x", [1, "T", d]), [-1, d])
    cross_k = _split_layers(g, g.input("cross_k", [L, 1, n_audio, d]), L, n_audio, d)
    cross_v = _split_layers(g, g.input("cross_v", [L, 1, n_audio, d]), L, n_audio, d)
    mask = g.op("Squeeze", g.input("mask", [1, 1, "T", "T"]), g.ints([0]))  # [1,T,T]
    for i in range(L):
        blk = f"decoder.blocks.{i}"
        h = g.layer_norm(x, p, blk + ".attn_ln")
        attn = g.attention(g.linear(h, p, blk + ".attn.query"), g.linear(h, p, blk + ".attn.key"),
                           g.linear(h, p, blk + ".attn.value"), dims.n_text_head, d, mask)
        x = _decoder_block_rest(g, p, dims, i, x, attn, cross_k[i], cross_v[i])
    last = g.op("Slice", x, g.ints([-1]), g.ints([np.iinfo(np.int64).max]), g.ints([0]))
    _logits(g, p, dims, last)
    return g.model("host-only uncached reference")


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
