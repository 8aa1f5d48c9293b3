"""Rewrites of the MTK-form ONNX graphs for ONNX Runtime on the host only; bundles for the board keep the
decomposed form check-dla accepts.

- `fuse_layer_norms`: MDLA has no LayerNorm op, so the graphs spell it out in nine nodes (two MEAN, SUB,
  MUL, ADD, SQRT, DIV, MUL, ADD). ONNX Runtime's own fusion does not recognise that spelling, and at
  ~600 nodes a decode step its per-node cost shows: one `LayerNormalization` node each.
- `attention_by_head`: the encoder's scores and softmax weights are [8, 1500, 1500] fp32, 72 MB each, and
  at its peak ONNX Runtime holds both beside the layer's other tensors. Run head by head, each head's
  9 MB are freed before the next starts. Each head's MatMul and Softmax are the batched ones' own slice.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _layer_norm_at(mean: onnx.NodeProto, users: dict, inits: dict):
    """The nine nodes of one decomposed LayerNorm that starts at ReduceMean `mean`, or None."""
    def only(name, op):
        nodes = users.get(name, [])
        return nodes[0] if len(nodes) == 1 and nodes[0].op_type == op else None

    def one_of(name, op):
        found = [n for n in users.get(name, []) if n.op_type == op]
        return found[0] if len(found) == 1 else None

    x = mean.input[0]
    sub = only(mean.output[0], "Sub")
    if sub is None or list(sub.input) != [x, mean.output[0]] or len(users.get(sub.output[0], [])) != 2:
        return None
    sq, div = one_of(sub.output[0], "Mul"), one_of(sub.output[0], "Div")
    if sq is None or div is None or list(sq.input) != [sub.output[0]] * 2:
        return None
    var = only(sq.output[0], "ReduceMean")
    add_eps = var and only(var.output[0], "Add")
    sqrt = add_eps and only(add_eps.output[0], "Sqrt")
    if sqrt is None or list(div.input) != [sub.output[0], sqrt.output[0]]:
        return None
    scale = only(div.output[0], "Mul")
    shift = scale and only(scale.output[0], "Add")
    if shift is None:
        return None
    eps, w, b = add_eps.input[1], scale.input[1], shift.input[1]
    if not all(name in inits for name in (eps, w, b)) or inits[w].dims != inits[b].dims or len(inits[w].dims) != 1:
        return None
    axes = [int(a) for a in numpy_helper.to_array(inits[mean.input[1]])] if len(mean.input) > 1 else [-1]
    if axes != [-1]:
        return None
    nodes = [mean, sub, sq, var, add_eps, sqrt, div, scale, shift]
    fused = helper.make_node("LayerNormalization", [x, w, b], [shift.output[0]], name=f"LayerNorm_{mean.name}",
                             axis=-1, epsilon=float(numpy_helper.to_array(inits[eps]).reshape(-1)[0]))
    return nodes, fused


def fuse_layer_norms(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` with each decomposed LayerNorm as one LayerNormalization node (same math; the
    rounding of the mean and variance may differ in the last bits)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    users = _users(g)
    replaced: dict[int, onnx.NodeProto | None] = {}
    for n in g.node:
        if n.op_type == "ReduceMean" and id(n) not in replaced:
            found = _layer_norm_at(n, users, inits)
            if found:
                nodes, fused = found
                replaced.update({id(k): None for k in nodes})
                replaced[id(nodes[-1])] = fused      # the fused node sits where the last one did
    kept = [replaced.get(id(n), n) if id(n) in replaced else n for n in g.node]
    del g.node[:]
    g.node.extend(n for n in kept if n is not None)
    used = {name for n in g.node for name in n.input}
    keep_inits = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep_inits)
    return m


def _users(g: onnx.GraphProto) -> dict[str, list]:
    users: dict[str, list] = {}
    for n in g.node:
        for name in dict.fromkeys(n.input):          # Mul(xc, xc) uses xc once
            users.setdefault(name, []).append(n)
    return users


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


def attention_by_head(model: onnx.ModelProto, n_head: int) -> onnx.ModelProto:
    """A copy of `model` where each MatMul -> Softmax -> MatMul over [H, Tq, Tk] (two activations, no mask)
    runs as H slices along the head axis, concatenated after the second MatMul. The slices go where the
    second MatMul was: by then Q, K and V all exist."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    users, made = _users(g), {n.output[0]: n for n in g.node}
    inits = {i.name for i in g.initializer}
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
            tag = f"{attend.output[0]}.h{h}"
            out.append(helper.make_node("MatMul", [heads[q][h], heads[k][h]], [tag + ".scores"]))
            out.append(helper.make_node("Softmax", [tag + ".scores"], [tag + ".probs"], axis=-1))
            out.append(helper.make_node("MatMul", [tag + ".probs", heads[v][h]], [tag]))
        out.append(helper.make_node("Concat", [f"{attend.output[0]}.h{h}" for h in range(n_head)],
                                    [attend.output[0]], axis=0))
    del g.node[:]
    g.node.extend(out)
    return m


def layer_norm_count(model: onnx.ModelProto) -> int:
    return sum(n.op_type == "LayerNormalization" for n in model.graph.node)

