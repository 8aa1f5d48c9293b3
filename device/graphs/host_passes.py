"""Rewrites of the MTK-form ONNX graphs for ONNX Runtime on the host only; bundles for the board keep the
decomposed form check-dla accepts.

- `fuse_layer_norms`: MDLA has no LayerNorm op, so the graphs spell it out in nine nodes (two MEAN, SUB,
  MUL, ADD, SQRT, DIV, MUL, ADD). ONNX Runtime's own fusion does not recognise that spelling, and at
  ~600 nodes a decode step its per-node cost shows: one `LayerNormalization` node each.
"""
from __future__ import annotations

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
    users: dict[str, list] = {}
    for n in g.node:
        for name in dict.fromkeys(n.input):          # Mul(xc, xc) uses xc once
            users.setdefault(name, []).append(n)
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


def layer_norm_count(model: onnx.ModelProto) -> int:
    return sum(n.op_type == "LayerNormalization" for n in model.graph.node)

