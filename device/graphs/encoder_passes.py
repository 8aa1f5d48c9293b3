"""Rewrites of the encoder graph for ONNX Runtime on the host only, to hold less memory at its peak; like
device/graphs/host_passes.py, they keep every output the same to the bit and bundles for the board keep the
MTK form.

- `attention_by_head`: the encoder's scores and softmax weights are [8, 1500, 1500] fp32, 72 MB each, and
  at its peak ONNX Runtime holds both beside the layer's other tensors. Run head by head, each head's
  9 MB are freed before the next starts. Each head's MatMul and Softmax are the batched ones' own slice;
  with query blocks, each block of a head's query rows too.
- `mlp_by_rows`: the encoder's MLP in blocks of rows, so its [T, 2048] hidden activations exist a block at
  a time (ONNX Runtime keeps a buffer of each size for reuse across layers, so every size counts at the peak).
- `cross_by_layer`: the cross K/V as one [T, L*d] projection, transposed to [L, 1, T, d], needs the
  projection, its transposed copy and the other output at once; per layer, each output can be written
  straight into the runner's array (OnnxBackend.encode).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from device.graphs.host_passes import indexed_copy


def _head_attention_at(softmax: onnx.NodeProto, users: dict, made: dict, inits: set):
    """(scores MatMul, softmax, attend MatMul) of one unmasked attention whose softmax is `softmax`, or None."""
    scores = made.get(softmax.input[0])
    after = users.get(softmax.output[0], [])
    axis = next((a.i for a in softmax.attribute if a.name == "axis"), -1)
    if (scores is None or scores.op_type != "MatMul" or len(users[scores.output[0]]) != 1 or axis not in (-1, 2)
            or len(after) != 1 or after[0].op_type != "MatMul" or after[0].input[0] != softmax.output[0]
            or any(x in inits for x in (*scores.input, after[0].input[1]))):
        return None
    return scores, softmax, after[0]


def attention_by_head(model: onnx.ModelProto, n_head: int, query_blocks: int = 1) -> onnx.ModelProto:
    """A copy of `model` where each MatMul -> Softmax -> MatMul over [H, Tq, Tk] (two activations, no mask)
    runs as H slices along the head axis, concatenated after the second MatMul. The slices go where the
    second MatMul was: by then Q, K and V all exist. With `query_blocks` > 1 each head's queries run in
    that many equal blocks of rows too (Tq must divide): softmax is per row, so each block is the head's own slice."""
    m, g, users, made, inits = indexed_copy(model)
    found = [f for n in g.node if n.op_type == "Softmax" and (f := _head_attention_at(n, users, made, inits))]
    if not found:
        return m
    ones = "i64_ones_heads"
    g.initializer.append(numpy_helper.from_array(np.ones(n_head, np.int64), ones))
    dropped = {id(x) for scores, softmax, _ in found for x in (scores, softmax)}
    at = {id(attend): (scores, attend) for scores, _, attend in found}
    out: list[onnx.NodeProto] = []
    for n in g.node:
        if id(n) in dropped:
            continue
        if id(n) not in at:
            out.append(n)
            continue
        scores, attend = at[id(n)]
        (q, k), v = scores.input, attend.input[1]
        heads = {name: [f"{name}.h{h}" for h in range(n_head)] for name in (q, k, v)}
        out += [helper.make_node("Split", [name, ones], parts, axis=0) for name, parts in heads.items()]
        for h in range(n_head):
            head = f"{attend.output[0]}.h{h}"
            tags = [head] if query_blocks == 1 else [f"{head}.b{b}" for b in range(query_blocks)]
            if query_blocks > 1:
                out.append(_split_equal(m, heads[q][h], [t + ".q" for t in tags], axis=1))
            for tag in tags:
                query = heads[q][h] if query_blocks == 1 else tag + ".q"
                out.append(helper.make_node("MatMul", [query, heads[k][h]], [tag + ".scores"]))
                out.append(helper.make_node("Softmax", [tag + ".scores"], [tag + ".probs"], axis=-1))
                out.append(helper.make_node("MatMul", [tag + ".probs", heads[v][h]], [tag]))
            if query_blocks > 1:
                out.append(helper.make_node("Concat", tags, [head], axis=1))
        out.append(helper.make_node("Concat", [f"{attend.output[0]}.h{h}" for h in range(n_head)],
                                    [attend.output[0]], axis=0))
    del g.node[:]
    g.node.extend(out)
    return m


def _mlp_at(gelu: onnx.NodeProto, users: dict, made: dict, inits: set):
    """The five nodes (MatMul, bias Add, Gelu, MatMul, bias Add) of the MLP around `gelu`, or None."""
    def weighted(node, ops):
        return node is not None and node.op_type in ops and all(x in inits for x in node.input[1:])

    def only_user(name):
        found = users.get(name, [])
        return found[0] if len(found) == 1 else None

    bias1 = made.get(gelu.input[0])
    mm1 = bias1 and made.get(bias1.input[0])
    mm2 = only_user(gelu.output[0])
    bias2 = mm2 and only_user(mm2.output[0])
    chain = [mm1, bias1, gelu, mm2, bias2]
    if not (weighted(mm1, _MATMULS) and weighted(bias1, ("Add",)) and weighted(mm2, _MATMULS)
            and weighted(bias2, ("Add",)) and only_user(mm1.output[0]) is bias1 and only_user(bias1.output[0]) is gelu
            and mm2.input[0] == gelu.output[0]):
        return None
    return chain


_MATMULS = ("MatMul", "MatMulNBits")


def _split_equal(model: onnx.ModelProto, x: str, parts: list[str], axis: int) -> onnx.NodeProto:
    """Split `x` into len(parts) equal parts along `axis` (opset 18 made the count an attribute)."""
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    extra = {"num_outputs": len(parts)} if opset >= 18 else {}
    return helper.make_node("Split", [x], parts, axis=axis, **extra)


def mlp_by_rows(model: onnx.ModelProto, blocks: int) -> onnx.ModelProto:
    """A copy of `model` where each MLP (MatMul, bias, Gelu, MatMul, bias over rank-2 [T, d] rows) runs on
    `blocks` equal blocks of rows (T must divide), concatenated after. Each row's numbers are its own in
    every op, so the outputs are the same; the [T, 4d] hidden activations exist a block at a time."""
    m, g, users, made, inits = indexed_copy(model)
    found = [c for n in g.node if n.op_type == "Gelu" and (c := _mlp_at(n, users, made, inits))]
    if blocks < 2 or not found:
        return m
    dropped = {id(x) for chain in found for x in chain}
    at = {id(chain[-1]): chain for chain in found}
    out: list[onnx.NodeProto] = []
    for n in g.node:
        if id(n) not in dropped:
            out.append(n)
            continue
        if id(n) not in at:
            continue
        chain = at[id(n)]
        x, y = chain[0].input[0], chain[-1].output[0]
        rows = [f"{y}.r{b}" for b in range(blocks)]
        out.append(_split_equal(m, x, [r + ".x" for r in rows], axis=0))
        for r in rows:
            prev = r + ".x"
            for i, node in enumerate(chain):
                part = onnx.NodeProto()
                part.CopyFrom(node)
                part.name = f"{node.name or node.op_type}.{r}"
                part.input[0] = prev
                prev = r if i == len(chain) - 1 else f"{node.output[0]}.{r}"
                part.output[0] = prev
                out.append(part)
        out.append(helper.make_node("Concat", rows, [y], axis=0))
    del g.node[:]
    g.node.extend(out)
    return m


def _cross_tail(out: str, made: dict, inits: dict):
    """(nodes to drop, MatMul, bias or None, T, L, d) of the encoder output `out` built as
    MatMul [T, L*d] (+ bias) -> Reshape [T, L, d] -> Transpose (1, 0, 2) -> Reshape [L, 1, T, d], or None."""
    ident = made.get(out)
    r2 = ident and (made.get(ident.input[0]) if ident.op_type == "Identity" else ident)
    t = r2 and r2.op_type == "Reshape" and made.get(r2.input[0])
    r1 = t and t.op_type == "Transpose" and made.get(t.input[0])
    if not r1 or r1.op_type != "Reshape" or r1.input[1] not in inits:
        return None
    perm = next((list(a.ints) for a in t.attribute if a.name == "perm"), None)
    shape = [int(x) for x in numpy_helper.to_array(inits[r1.input[1]])]
    src = made.get(r1.input[0])
    bias = src if src is not None and src.op_type == "Add" and src.input[1] in inits else None
    mm = made.get(bias.input[0]) if bias is not None else src
    if perm != [1, 0, 2] or len(shape) != 3 or mm is None or mm.op_type not in _MATMULS:
        return None
    if not all(x in inits for x in mm.input[1:]):
        return None
    drop = [n for n in (ident, r2, t, r1, bias, mm) if n is not None]
    return drop, mm, bias, *shape


def cross_by_layer(model: onnx.ModelProto, outputs=("cross_k", "cross_v")) -> onnx.ModelProto:
    """A copy of the encoder where each of `outputs` ([L, 1, T, d], one [T, L*d] projection transposed)
    becomes L outputs `<name>.<layer>` [T, d], each its own projection by that layer's columns of the
    weights (int8b: the same blocks and scales), so the runner can have ONNX Runtime write them straight
    into one [L, 1, T, d] array (OnnxBackend.encode): no [T, L*d] and transposed copies beside it."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    made = {o: n for n in g.node for o in n.output}
    inits = {i.name: i for i in g.initializer}
    tails = {out: _cross_tail(out, made, inits) for out in outputs}
    if not all(tails.values()) or len({id(n) for t in tails.values() for n in t[0]}) != sum(len(t[0]) for t in tails.values()):
        return m
    dropped = {id(n) for t in tails.values() for n in t[0]}
    elem_type = {o.name: o.type.tensor_type.elem_type for o in g.output}     # fp32, or fp16 for onnx-fp16
    new_nodes, new_inits, new_outputs = [], [], []
    for out, (_, mm, bias, T, L, d) in tails.items():
        for layer in range(L):
            cols = slice(layer * d, (layer + 1) * d)
            name = f"{out}.{layer}"
            part = onnx.NodeProto()
            part.CopyFrom(mm)
            part.name, part.output[0] = f"{mm.name or mm.op_type}.{name}", name if bias is None else name + ".mm"
            for i, w in enumerate(mm.input[1:], 1):
                arr = numpy_helper.to_array(inits[w])
                # MatMulNBits holds B as [N, blocks, blob] and its scales as [N, blocks]; MatMul as [K, N]
                arr = arr[cols] if mm.op_type == "MatMulNBits" else arr[:, cols]
                new_inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), f"{w}.{name}"))
                part.input[i] = f"{w}.{name}"
            for a in part.attribute:
                if a.name == "N":
                    a.i = d
            new_nodes.append(part)
            if bias is not None:
                b = numpy_helper.to_array(inits[bias.input[1]])[cols]
                new_inits.append(numpy_helper.from_array(np.ascontiguousarray(b), f"{bias.input[1]}.{name}"))
                new_nodes.append(helper.make_node("Add", [name + ".mm", f"{bias.input[1]}.{name}"], [name]))
            new_outputs.append(helper.make_tensor_value_info(name, elem_type[out], [T, d]))
    kept = [n for n in g.node if id(n) not in dropped] + new_nodes
    del g.node[:]
    g.node.extend(kept)
    kept_outputs = [o for o in g.output if o.name not in tails]
    del g.output[:]
    g.output.extend(kept_outputs + new_outputs)
    used = {name for n in g.node for name in n.input}
    kept_inits = [i for i in g.initializer if i.name in used] + new_inits
    del g.initializer[:]
    g.initializer.extend(kept_inits)
    return m
