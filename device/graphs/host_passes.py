"""Rewrites of the MTK-form ONNX graphs for ONNX Runtime on the host only; bundles for the board keep the
decomposed form check-dla accepts.

- `fuse_layer_norms`: MDLA has no LayerNorm op, so the graphs spell it out in nine nodes (two MEAN, SUB,
  MUL, ADD, SQRT, DIV, MUL, ADD). ONNX Runtime's own fusion does not recognise that spelling, and at
  ~600 nodes a decode step its per-node cost shows: one `LayerNormalization` node each.
- `head_major_kv`: each layer's cross K/V, and the self-attention cache, as [H, T, d/H] (the encoder
  writes the cross K/V so, the decoder graphs read both so). The decoder's one query per head against
  [T, H, d/H] keys made ONNX Runtime's MatMul walk 64 floats every 2 KB (a batch transposed in place);
  head-major, each head's keys and values are one contiguous [T, d/H] block, read at the memory's speed
  (the int8b step ~20 % faster, docs/benchmarks.md). Transposing the encoder's outputs once a window
  costs ~0.1 % of it; the cache is written head-major by the caller (core/model/kv_cache.py).
- `growing_cache`: the step takes a cache of any number of slots N (and a mask of N+1) instead of all 448,
  so the caller's cache can grow with the tokens (KVCache(grow_by=...)): at token 100 a step reads 128
  slots of keys and values, not 448 of which 348 are masked.
The encoder's own rewrites are in device/graphs/encoder_passes.py. All of them keep every output the same to the bit
(tests/device/graphs/test_host_passes.py, on real clips).
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from device.graphs.onnx_graphs import per_layer_inputs


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


def indexed_copy(model: onnx.ModelProto):
    """A copy of `model`, its graph, each tensor's users and producer, and its initializer names."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    return m, g, _users(g), {n.output[0]: n for n in g.node}, {i.name for i in g.initializer}


def _const(g: onnx.GraphProto, name: str, values) -> str:
    g.initializer.append(numpy_helper.from_array(np.asarray(values, np.int64), name))
    return name


def _set_shape(value: onnx.ValueInfoProto, dims) -> None:
    value.type.tensor_type.ClearField("shape")
    for x in dims:
        value.type.tensor_type.shape.dim.add().dim_value = x


def _per_layer(values, names) -> list:
    """The graph inputs or outputs named `<name>.<layer>` (onnx_graphs.per_layer_inputs, cross_by_layer)."""
    return [v for v in values if v.name.rsplit(".", 1)[0] in names and v.name.rsplit(".", 1)[-1].isdigit()]


def _head_major_output(g: onnx.GraphProto, out: onnx.ValueInfoProto, n_head: int) -> None:
    """Output `out` [T, d] is produced as [H, T, d/H] instead: Reshape [T, H, d/H] -> Transpose (1, 0, 2)."""
    T, d = (x.dim_value for x in out.type.tensor_type.shape.dim)
    rows = out.name + ".rows"
    for n in g.node:
        n.output[:] = [rows if o == out.name else o for o in n.output]
    shape = _const(g, out.name + ".heads_shape", [T, n_head, d // n_head])
    g.node.extend([helper.make_node("Reshape", [rows, shape], [out.name + ".heads"]),
                   helper.make_node("Transpose", [out.name + ".heads"], [out.name], perm=[1, 0, 2])])
    _set_shape(out, (n_head, T, d // n_head))


def _head_major_input(g: onnx.GraphProto, inp: onnx.ValueInfoProto, users: dict, inits: dict, n_head: int) -> bool:
    """Input `inp` [1, 1, T, d], used only as Reshape [T, d] -> Reshape [-1, H, d/H] -> Transpose (1, 0, 2) or
    (1, 2, 0), is taken as [1, H, T, d/H] instead: one Reshape [H, T, d/H], and for keys a Transpose (0, 2, 1)
    that ONNX Runtime folds into the MatMul as transB. False, graph untouched, for any other use."""
    def only(name, op):
        found = users.get(name, [])
        return found[0] if len(found) == 1 and found[0].op_type == op else None

    one, one_, T, d = (x.dim_value for x in inp.type.tensor_type.shape.dim)
    r1 = only(inp.name, "Reshape")
    r2 = r1 and only(r1.output[0], "Reshape")
    t = r2 and only(r2.output[0], "Transpose")
    perm = t and next((list(a.ints) for a in t.attribute if a.name == "perm"), None)
    split = r2 and r2.input[1] in inits and [int(x) for x in numpy_helper.to_array(inits[r2.input[1]])]
    if (one, one_) != (1, 1) or perm not in ([1, 0, 2], [1, 2, 0]) or split != [-1, n_head, d // n_head]:
        return False
    shape = _const(g, inp.name + ".heads_shape", [n_head, T, d // n_head])
    heads = inp.name + ".heads" if perm == [1, 2, 0] else t.output[0]
    new = [helper.make_node("Reshape", [inp.name, shape], [heads])]
    if perm == [1, 2, 0]:
        new.append(helper.make_node("Transpose", [heads], [t.output[0]], perm=[0, 2, 1]))
    at = list(g.node).index(r1)
    for n in (r1, r2, t):
        g.node.remove(n)
    for k, n in enumerate(new):
        g.node.insert(at + k, n)
    _set_shape(inp, (1, n_head, T, d // n_head))
    return True


def head_major_kv(model: onnx.ModelProto, n_head: int, names=("cross_k", "cross_v", "self_k", "self_v")) -> onnx.ModelProto:
    """A copy of an encoder after cross_by_layer, or of a decoder graph after per_layer_inputs, whose per-layer
    K/V (`<name>.<l>`) are [H, T, d/H] outputs, or [1, H, T, d/H] inputs. All or none: a graph with any of
    them in another form comes back unchanged. Same values, moved (tests/device/graphs)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    outs, ins = _per_layer(g.output, names), _per_layer(g.input, names)
    if outs and all(len(o.type.tensor_type.shape.dim) == 2 for o in outs):
        for o in outs:
            _head_major_output(g, o, n_head)
        return m
    users, inits = _users(g), {i.name: i for i in g.initializer}
    if ins and all(_head_major_input(g, i, users, inits, n_head) for i in ins):
        del g.value_info[:]          # shapes inferred before (the int8 quantiser's) name the stacked form
        return m
    m.CopyFrom(model)
    return m


def growing_cache(model: onnx.ModelProto, names=("self_k", "self_v")) -> onnx.ModelProto:
    """A copy of a decoder step after head_major_kv whose cache inputs `<name>.<l>` [1, H, N, d/H] and `mask`
    [1, 1, 1, N+1] take any N: the heads' Reshape and the mask's take -1 for N, and each Split of the
    softmax weights into [N, 1] (cache, current token) becomes two Slices. Unchanged if any is in another form."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    cache = _per_layer(g.input, names)
    mask = next((i for i in g.input if i.name == "mask"), None)
    if not cache or mask is None:
        return m
    n = cache[0].type.tensor_type.shape.dim[2].dim_value

    def ints(name):
        return [int(x) for x in numpy_helper.to_array(inits[name]).reshape(-1)] if name in inits else None

    names_in = {c.name for c in cache}
    heads = [nd for nd in g.node if nd.op_type == "Reshape" and nd.input[0] in names_in and (ints(nd.input[1]) or [0])[1:2] == [n]]
    masks = [nd for nd in g.node if nd.op_type == "Reshape" and nd.input[0] == "mask" and ints(nd.input[1]) == [1, 1, n + 1]]
    splits = [nd for nd in g.node if nd.op_type == "Split" and len(nd.input) > 1 and ints(nd.input[1]) == [n, 1]]
    if len(heads) != len(cache) or len(masks) != 1 or len(splits) != len(cache) // 2:
        m.CopyFrom(model)
        return m
    for nd in heads + masks:
        nd.input[1] = _const(g, nd.input[1] + ".any_n", [-1 if x in (n, n + 1) else x for x in ints(nd.input[1])])
    ends = {"start": _const(g, "growing_cache.start", [0]), "last": _const(g, "growing_cache.last", [-1]),
            "end": _const(g, "growing_cache.end", [np.iinfo(np.int64).max]), "axis": _const(g, "growing_cache.axis", [-1])}
    for nd in splits:
        at = list(g.node).index(nd)
        g.node.remove(nd)
        g.node.insert(at, helper.make_node("Slice", [nd.input[0], ends["last"], ends["end"], ends["axis"]], [nd.output[1]]))
        g.node.insert(at, helper.make_node("Slice", [nd.input[0], ends["start"], ends["last"], ends["axis"]], [nd.output[0]]))
    for i, k, name in [(c, 2, "cache_slots") for c in cache] + [(mask, 3, "cache_slots_and_token")]:
        i.type.tensor_type.shape.dim[k].ClearField("dim_value")
        i.type.tensor_type.shape.dim[k].dim_param = name
    # Shapes an earlier pass inferred (the int8 quantiser's) still say 448: ONNX Runtime would fuse the Slices
    # back into a Split of [448, 1].
    del g.value_info[:]
    used = {x for nd in g.node for x in nd.input}
    kept = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    return m


def any_window(model: onnx.ModelProto, names=("cross_k", "cross_v")) -> onnx.ModelProto:
    """A copy of a decoder graph after head_major_kv whose per-layer cross K/V inputs [1, H, A, d/H] take any A: a
    shorter encoder window's positions only (core/model/dims.py WINDOWS_S), which is what an additive mask over the
    rest computes, as whisper.cpp's audio_ctx attends to the window alone; a step then reads A/1500 of the cross
    K/V. Unchanged if any is in another form (the absorbed form's F)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits, users = {i.name: i for i in g.initializer}, _users(g)
    cross = _per_layer(g.input, names)
    found = []
    for c in cross:
        dims = [x.dim_value for x in c.type.tensor_type.shape.dim]
        uses = users.get(c.name, [])
        shape = uses[0].input[1] if len(uses) == 1 and uses[0].op_type == "Reshape" else None
        if len(dims) != 4 or shape not in inits or list(numpy_helper.to_array(inits[shape])) != dims[1:]:
            m.CopyFrom(model)
            return m
        found.append((c, uses[0], dims))
    for c, reshape, (_, n_head, _, d_head) in found:
        reshape.input[1] = _const(g, reshape.input[1] + ".any_window", [n_head, -1, d_head])
        _any_positions(c, 2)
    # The alignment heads' weights (the attention variants) are over the same positions: [n_heads, T, A].
    for o in g.output:
        if o.name == "attention" and found:
            _any_positions(o, len(o.type.tensor_type.shape.dim) - 1)
    del g.value_info[:]          # inferred shapes still say 1500
    used = {x for nd in g.node for x in nd.input}
    kept = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    return m


def _any_positions(value: onnx.ValueInfoProto, axis: int) -> None:
    dim = value.type.tensor_type.shape.dim[axis]
    dim.ClearField("dim_value")
    dim.dim_param = "audio_positions"


def layer_norm_count(model: onnx.ModelProto) -> int:
    return sum(n.op_type == "LayerNormalization" for n in model.graph.node)


def host_decoder(graph, n_head: int) -> onnx.ModelProto:
    """A decoder graph (step, prefill, full) as the onnx backends' sessions run it: stacked inputs per layer,
    LayerNorms fused, the cross K/V and the cache read head-major, the cache of any length, the cross K/V of any
    window."""
    return any_window(growing_cache(head_major_kv(fuse_layer_norms(per_layer_inputs(graph)), n_head)))
