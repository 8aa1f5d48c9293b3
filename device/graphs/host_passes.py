"""Rewrites of the MTK-form ONNX graphs for ONNX Runtime on the host only; bundles for the board keep the
decomposed form check-dla accepts.

- `fuse_layer_norms`: MDLA has no LayerNorm op, so the graphs spell it out in nine nodes (two MEAN, SUB,
  MUL, ADD, SQRT, DIV, MUL, ADD). ONNX Runtime's own fusion does not recognise that spelling, and at
  ~600 nodes a decode step its per-node cost shows: one `LayerNormalization` node each.
- `attention_by_head`: the encoder's scores and softmax weights are [8, 1500, 1500] fp32, 72 MB each, and
  at its peak ONNX Runtime holds both beside the layer's other tensors. Run head by head, each head's
  9 MB are freed before the next starts. Each head's MatMul and Softmax are the batched ones' own slice;
  with query blocks, each block of a head's query rows too.
- `mlp_by_rows`: the encoder's MLP in blocks of rows, so its [T, 2048] hidden activations exist a block at
  a time (ONNX Runtime keeps a buffer of each size for reuse across layers, so every size counts at the peak).
- `cross_by_layer`: the cross K/V as one [T, L*d] projection, transposed to [L, 1, T, d], needs the
  projection, its transposed copy and the other output at once; per layer, each output can be written
  straight into the runner's array (OnnxBackend.encode).
- `head_major_kv`: each layer's cross K/V, and the self-attention cache, as [H, T, d/H] (the encoder
  writes the cross K/V so, the decoder graphs read both so). The decoder's one query per head against
  [T, H, d/H] keys made ONNX Runtime's MatMul walk 64 floats every 2 KB (a batch transposed in place);
  head-major, each head's keys and values are one contiguous [T, d/H] block, read at the memory's speed
  (the int8b step ~20 % faster, docs/benchmarks.md). Transposing the encoder's outputs once a window
  costs ~0.1 % of it; the cache is written head-major by the caller (core/model/kv_cache.py).
- `growing_cache`: the step takes a cache of any number of slots N (and a mask of N+1) instead of all 448,
  so the caller's cache can grow with the tokens (KVCache(grow_by=...)): at token 100 a step reads 128
  slots of keys and values, not 448 of which 348 are masked.
All of them keep every output the same to the bit (tests/device/graphs/test_host_passes.py, on real clips).
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


def _indexed_copy(model: onnx.ModelProto):
    """A copy of `model`, its graph, each tensor's users and producer, and its initializer names."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    return m, g, _users(g), {n.output[0]: n for n in g.node}, {i.name for i in g.initializer}


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
    m, g, users, made, inits = _indexed_copy(model)
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
    m, g, users, made, inits = _indexed_copy(model)
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


def layer_norm_count(model: onnx.ModelProto) -> int:
    return sum(n.op_type == "LayerNormalization" for n in model.graph.node)

