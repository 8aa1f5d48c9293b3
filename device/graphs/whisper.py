"""Whisper in MTK form (core/model/whisper.py's math), described once on device/graphs/ir.py.

- `describe_encoder`: mel [1,80,3000] -> cross_k, cross_v [L,1,1500,d] (board graph);
- `describe_decoder_step`: the step signature in docs/protocol.md (board graph); given alignment
  heads, a variant that also outputs their cross-attention weights (`attention` [n_heads,1,1500]);
- `describe_decoder_full`: the host-only uncached reference over a symbolic number of tokens T;
- `describe_decoder_prefill`: host-only, a window's first T tokens at once (their logits and K/V).

Each takes `cross`, the form of the cross state (core/model/backend.py): "kv" as above, or
"absorbed", where the encoder outputs its final LayerNorm F [1,1,1500,d] instead of cross K/V and the
step takes F: per layer, q̃ = q·W_k per head (BATCH_MATMUL with a constant [H, dh, d] weight, the
attention scale folded in), scores q̃·Fᵀ and context softmax·F (one [H, d]x[d, A] and one [H, A]x[A, d]
matmul), then W_v per head ([H, d, dh]) plus b_v, then the output projection (core/model/layers.py,
AbsorbedCross, has the algebra). The per-head weights are ordinary constants, named
`<block>.cross_attn.{key,value}.absorbed`, so reading them back out of a graph works as for the others.

Every tensor stays rank <= 4 with static shapes (except decoder_full's T), and there is no
gather: embeddings are added on the runner CPU. Heads stay packed along d_model in every stored
tensor; the per-head split is a reshape/transpose to rank 3 inside the graph. Parameters keep
their canonical names and layouts (linear weights [out, in]), so both emitters and the weight
read-back agree on them.
"""
from __future__ import annotations

import numpy as np

from core.model.backend import check_cross
from core.model.dims import FULL_WINDOW_S, ModelDims
from core.model.layers import absorbed_weights
from device.graphs.ir import Graph


def _param(g: Graph, p: dict, name: str) -> str:
    return g.const(name, np.asarray(p[name], np.float32))


def _linear(g: Graph, x: str, p: dict, name: str) -> str:
    b = _param(g, p, name + ".bias") if name + ".bias" in p else None
    return g.linear(x, _param(g, p, name + ".weight"), b)


def _ln(g: Graph, x: str, p: dict, name: str) -> str:
    return g.layer_norm(x, _param(g, p, name + ".weight"), _param(g, p, name + ".bias"))


def _mlp(g: Graph, x: str, p: dict, blk: str) -> str:
    h = _ln(g, x, p, blk + ".mlp_ln")
    return _linear(g, g.gelu(_linear(g, h, p, blk + ".mlp.0")), p, blk + ".mlp.2")


def _heads(g: Graph, x: str, n_head: int, d: int, perm) -> str:
    """[T, d] -> [H, T, d/H] (perm 1,0,2) or [H, d/H, T] (perm 1,2,0), rank 3."""
    return g.transpose(g.reshape(x, [-1, n_head, d // n_head]), perm)


def _merge_heads(g: Graph, x: str, d: int) -> str:
    return g.reshape(g.transpose(x, [1, 0, 2]), [-1, d])


def _scaled_heads(g: Graph, q: str, n_head: int, d: int) -> str:
    return _heads(g, g.mul(q, g.scalar((d // n_head) ** -0.5)), n_head, d, (1, 0, 2))


def _attention_probs(g: Graph, q: str, k: str, n_head: int, d: int, mask: str | None = None) -> str:
    """q [Tq,d], k [Tk,d], mask additive broadcastable to [H,Tq,Tk] -> softmax weights [H,Tq,Tk]."""
    scores = g.matmul(_scaled_heads(g, q, n_head, d), _heads(g, k, n_head, d, (1, 2, 0)))
    if mask is not None:
        scores = g.add(scores, mask)
    return g.softmax(scores)


def _attend(g: Graph, probs: str, v: str, n_head: int, d: int) -> str:
    return _merge_heads(g, g.matmul(probs, _heads(g, v, n_head, d, (1, 0, 2))), d)


def _attention(g: Graph, q: str, k: str, v: str, n_head: int, d: int, mask: str | None = None) -> str:
    """q [Tq,d], k/v [Tk,d], mask additive broadcastable to [H,Tq,Tk] -> [Tq,d]."""
    return _attend(g, _attention_probs(g, q, k, n_head, d, mask), v, n_head, d)


def _pick_heads(g: Graph, probs: str, heads: list[int], n_head: int) -> list[str]:
    """The listed heads of probs [H,1,A], [1,1,A] each, by one SPLIT along the head axis (no GATHER on
    MDLA; the plain step graph already has Split in ONNX, and TFLite lowers uneven ones to SLICEs)."""
    edges = sorted({0, n_head, *heads, *(h + 1 for h in heads)})
    pieces = g.split(probs, [b - a for a, b in zip(edges, edges[1:])], axis=0)
    return [piece for a, piece in zip(edges, pieces) if a in heads]


def _cached_attention(g: Graph, q: str, k_cache: str, v_cache: str, k: str, v: str, n_head: int, d: int,
                      n_cache: int, mask: str) -> str:
    """One query over the N cache slots plus its own key: the N+1 scores are concatenated, not the
    keys, so the [N, d] cache is never copied (the mask still covers N+1)."""
    qh = _scaled_heads(g, q, n_head, d)                                                  # [H,1,dh]
    scores = g.concat([g.matmul(qh, _heads(g, k_cache, n_head, d, (1, 2, 0))),
                       g.matmul(qh, _heads(g, k, n_head, d, (1, 2, 0)))], axis=-1)      # [H,1,N+1]
    p_cache, p_new = g.split(g.softmax(g.add(scores, mask)), [n_cache, 1], axis=-1)
    out = g.add(g.matmul(p_cache, _heads(g, v_cache, n_head, d, (1, 0, 2))),
                g.matmul(p_new, _heads(g, v, n_head, d, (1, 0, 2))))                    # [H,1,dh]
    return _merge_heads(g, out, d)


def _absorbed_cross(g: Graph, p: dict, blk: str, q: str, feats: str, feats_t: str, n_head: int, d: int,
                    cross_mask: str | None = None) -> tuple[str, str]:
    """q [Tq,d], F [A,d] and Fᵀ [d,A] -> (cross-attention context before the output projection [Tq,d],
    softmax weights [H*Tq, A] with rows in (head, query) order)."""
    wk, wv = absorbed_weights(p, blk + ".cross_attn", n_head)
    wk = g.const(blk + ".cross_attn.key.absorbed", wk)                                   # [H,dh,d]
    wv = g.const(blk + ".cross_attn.value.absorbed", wv)                                 # [H,d,dh]
    q_abs = g.matmul(_heads(g, q, n_head, d, (1, 0, 2)), wk)                             # [H,Tq,d]
    scores = g.matmul(g.reshape(q_abs, [-1, d]), feats_t)                                # [H*Tq,A]
    probs = g.softmax(g.add(scores, g.reshape(cross_mask, [1, -1])) if cross_mask else scores)
    ctx = g.reshape(g.matmul(probs, feats), [n_head, -1, d])                             # [H,Tq,d]
    y = _merge_heads(g, g.matmul(ctx, wv), d)                                            # [Tq,d]
    if blk + ".cross_attn.value.bias" in p:     # passes through: each head's weights sum to 1
        y = g.add(y, _param(g, p, blk + ".cross_attn.value.bias"))
    return y, probs


def _block_rest(g: Graph, p: dict, dims: ModelDims, i: int, x: str, attn: str, cross: tuple[str, str],
                form: str = "kv", heads: list[int] = (), cross_mask: str | None = None) -> tuple[str, list[str]]:
    """A decoder block after its self-attention: residual, cross-attention, MLP; and the
    cross-attention weights of `heads` (this layer's alignment heads), as [n,1,A] pieces.
    `cross`: this layer's (cross_k, cross_v) [A,d] in the kv form, (F [A,d], Fᵀ [d,A]) when absorbed.
    `cross_mask`: additive [1,1,A] over the audio positions (a shorter window's rest hidden), or None."""
    blk, d, n_head = f"decoder.blocks.{i}", dims.n_text_state, dims.n_text_head
    x = g.add(x, _linear(g, attn, p, blk + ".attn.out"))
    q = _linear(g, _ln(g, x, p, blk + ".cross_attn_ln"), p, blk + ".cross_attn.query")
    if form == "absorbed":
        ctx, probs = _absorbed_cross(g, p, blk, q, *cross, n_head, d, cross_mask)
        if heads:
            probs = g.reshape(probs, [n_head, -1, dims.n_audio_ctx])
    else:
        probs = _attention_probs(g, q, cross[0], n_head, d, cross_mask)
        ctx = _attend(g, probs, cross[1], n_head, d)
    x = g.add(x, _linear(g, ctx, p, blk + ".cross_attn.out"))
    return g.add(x, _mlp(g, x, p, blk)), (_pick_heads(g, probs, heads, n_head) if heads else [])


def _cross_inputs(g: Graph, dims: ModelDims, form: str) -> list[tuple[str, str]]:
    """The step's (and full decoder's) cross-state inputs, as each layer's pair for `_block_rest`."""
    L, n_audio, d = dims.n_text_layer, dims.n_audio_ctx, dims.n_text_state
    if form == "absorbed":
        feats = g.reshape(g.input("F", [1, 1, n_audio, d]), [n_audio, d])
        return [(feats, g.transpose(feats, [1, 0]))] * L        # Fᵀ once a step, shared by the layers
    cross_k = _split_layers(g, g.input("cross_k", [L, 1, n_audio, d]), L, n_audio, d)
    cross_v = _split_layers(g, g.input("cross_v", [L, 1, n_audio, d]), L, n_audio, d)
    return list(zip(cross_k, cross_v))


def _logits(g: Graph, p: dict, dims: ModelDims, x: str) -> None:
    # Tied LM head: a fully connected layer with the token embedding [V, d], no gather.
    logits = g.linear(_ln(g, x, p, "decoder.ln"), _param(g, p, "decoder.token_embedding.weight"))
    g.output(g.reshape(logits, [1, 1, dims.n_vocab]), "logits")


def _split_layers(g: Graph, t: str, n_layer: int, rows: int, d: int) -> list[str]:
    return [g.reshape(s, [rows, d]) for s in g.split(t, [1] * n_layer, axis=0)]


def describe_encoder(p: dict, dims: ModelDims, cross: str = "kv", window_s: int = FULL_WINDOW_S) -> Graph:
    """A `window_s` window (core/model/dims.py): the same weights over mel [1,80,2A'] and the positional table's
    first A' rows, its cross state of A' positions (the step takes it in its first positions, its cross mask
    hiding the rest)."""
    absorbed = check_cross(cross) == "absorbed"
    dims = dims.for_window(window_s)
    d, n_ctx, L = dims.n_audio_state, dims.n_audio_ctx, dims.n_text_layer
    suffix = ("_absorbed" if absorbed else "") + ("" if window_s == FULL_WINDOW_S else f"_{window_s}s")
    out = f"F [1,1,{n_ctx},d]" if absorbed else f"cross_k, cross_v [L,1,{n_ctx},d]"
    g = Graph("whisper_encoder" + suffix, f"mel [1,80,{2 * n_ctx}] -> {out}")
    mel = g.input("mel", [1, dims.n_mels, 2 * n_ctx])
    x = g.transpose(g.reshape(mel, [dims.n_mels, 2 * n_ctx]), [1, 0])                   # [3000, 80]
    x = g.gelu(g.conv1d(x, _param(g, p, "encoder.conv1.weight"), _param(g, p, "encoder.conv1.bias"), 1, 1))
    x = g.gelu(g.conv1d(x, _param(g, p, "encoder.conv2.weight"), _param(g, p, "encoder.conv2.bias"), 2, 1))
    x = g.add(x, g.const("encoder.positional_embedding",
                         np.asarray(p["encoder.positional_embedding"][:n_ctx], np.float32)))   # [A', d]
    for i in range(dims.n_audio_layer):
        blk = f"encoder.blocks.{i}"
        h = _ln(g, x, p, blk + ".attn_ln")
        a = _attention(g, _linear(g, h, p, blk + ".attn.query"), _linear(g, h, p, blk + ".attn.key"),
                       _linear(g, h, p, blk + ".attn.value"), dims.n_audio_head, d)
        x = g.add(x, _linear(g, a, p, blk + ".attn.out"))
        x = g.add(x, _mlp(g, x, p, blk))
    feats = _ln(g, x, p, "encoder.ln_post")
    if absorbed:
        g.output(g.reshape(feats, [1, 1, n_ctx, d]), "F")
        return g
    # Every decoder layer's cross K/V projection as one [L*d, d] fully connected layer.
    for kind, out in (("key", "cross_k"), ("value", "cross_v")):
        names = [f"decoder.blocks.{i}.cross_attn.{kind}" for i in range(L)]
        w = g.const(f"cross_attn.{kind}.all.weight", np.concatenate([p[n + ".weight"] for n in names]))
        b = (g.const(f"cross_attn.{kind}.all.bias", np.concatenate([p[n + ".bias"] for n in names]))
             if names[0] + ".bias" in p else None)
        y = g.transpose(g.reshape(g.linear(feats, w, b), [n_ctx, L, d]), [1, 0, 2])
        g.output(g.reshape(y, [L, 1, n_ctx, d]), out)
    return g


def describe_decoder_step(p: dict, dims: ModelDims, alignment_heads=(), cross: str = "kv",
                          cross_mask: bool = False) -> Graph:
    """`alignment_heads` ((layer, head) pairs): none gives the plain step graph; some give a separate
    variant, with one more output `attention` [n_heads,1,A], the cross-attention weights of those heads
    in (layer, head) order. A separate graph, not an optional output, so that ordinary steps run (and
    the NPU copies out) exactly what they did; the extra ops are SLICE and CONCATENATION only (and a
    RESHAPE per layer in the absorbed form). `cross`: kv (inputs cross_k/v) or absorbed (input F). `cross_mask`:
    one more input, `cross_mask` [1,1,1,1500], added to every layer's cross-attention scores: a shorter window's
    cross state fills the first positions and the mask hides the rest (whisper.cpp's `audio_ctx` attends to the
    window alone; -10000 in fp16, as the step's own mask)."""
    heads = sorted((int(a), int(b)) for a, b in alignment_heads)
    absorbed = check_cross(cross) == "absorbed"
    name = "whisper_decoder_step" + ("_absorbed" if absorbed else "") + ("_attention" if heads else "")
    g = Graph(name, "x [1,1,d], self_k/v [L,1,448,d], "
              + ("F [1,1,1500,d]" if absorbed else "cross_k/v [L,1,1500,d]") + ", "
              "mask [1,1,1,449] -> logits [1,1,V], new_k/new_v [L,1,1,d]"
              + (f", attention [{len(heads)},1,1500]" if heads else ""))
    d, L, n_ctx = dims.n_text_state, dims.n_text_layer, dims.n_text_ctx
    x = g.reshape(g.input("x", [1, 1, d]), [1, d])
    self_k = _split_layers(g, g.input("self_k", [L, 1, n_ctx, d]), L, n_ctx, d)
    self_v = _split_layers(g, g.input("self_v", [L, 1, n_ctx, d]), L, n_ctx, d)
    layer_cross = _cross_inputs(g, dims, cross)
    mask = g.reshape(g.input("mask", [1, 1, 1, n_ctx + 1]), [1, 1, n_ctx + 1])
    audio_mask = (g.reshape(g.input("cross_mask", [1, 1, 1, dims.n_audio_ctx]), [1, 1, dims.n_audio_ctx])
                  if cross_mask else None)
    new_k, new_v, picked = [], [], []
    for i in range(L):
        blk = f"decoder.blocks.{i}"
        h = _ln(g, x, p, blk + ".attn_ln")
        # The step's own key/value join the cache slots (N+1 positions, the mask hides the unused
        # ones) and go back out for the runner to store at cache_len.
        k, v = _linear(g, h, p, blk + ".attn.key"), _linear(g, h, p, blk + ".attn.value")
        new_k.append(g.reshape(k, [1, 1, 1, d]))
        new_v.append(g.reshape(v, [1, 1, 1, d]))
        attn = _cached_attention(g, _linear(g, h, p, blk + ".attn.query"), self_k[i], self_v[i], k, v,
                                 dims.n_text_head, d, n_ctx, mask)
        x, pieces = _block_rest(g, p, dims, i, x, attn, layer_cross[i], cross, [h for li, h in heads if li == i],
                                audio_mask)
        picked += pieces
    _logits(g, p, dims, x)
    g.output(g.concat(new_k, axis=0), "new_k")
    g.output(g.concat(new_v, axis=0), "new_v")
    if picked:
        g.output(g.concat(picked, axis=0) if len(picked) > 1 else picked[0], "attention")
    return g


def _causal_decoder(g: Graph, p: dict, dims: ModelDims, cross: str, heads=()) -> tuple[str, list, list, list]:
    """The decoder over a symbolic number of tokens T at once, causal: x [1,T,d], the cross state, mask
    [1,1,T,T] -> (the last block's output [T,d], each layer's keys and values [T,d], the alignment heads'
    cross-attention pieces [n,T,A])."""
    d, L = dims.n_text_state, dims.n_text_layer
    x = g.reshape(g.input("x", [1, "T", d]), [-1, d])
    layer_cross = _cross_inputs(g, dims, check_cross(cross))
    mask = g.squeeze(g.input("mask", [1, 1, "T", "T"]), 0)                              # [1,T,T]
    keys, values, picked = [], [], []
    for i in range(L):
        blk = f"decoder.blocks.{i}"
        h = _ln(g, x, p, blk + ".attn_ln")
        q, k, v = (_linear(g, h, p, f"{blk}.attn.{name}") for name in ("query", "key", "value"))
        keys.append(k)
        values.append(v)
        attn = _attention(g, q, k, v, dims.n_text_head, d, mask)
        x, pieces = _block_rest(g, p, dims, i, x, attn, layer_cross[i], cross, [h for li, h in heads if li == i])
        picked += pieces
    return x, keys, values, picked


def describe_decoder_full(p: dict, dims: ModelDims, cross: str = "kv") -> Graph:
    """Host-only uncached reference: x [1,T,d], cross K/V (or F), mask [1,1,T,T] -> logits of the last token."""
    g = Graph("whisper_decoder_full", "host-only uncached reference")
    x, _, _, _ = _causal_decoder(g, p, dims, cross)
    _logits(g, p, dims, g.slice(x, 0, -1))
    return g


def describe_decoder_prefill(p: dict, dims: ModelDims, alignment_heads=(), cross: str = "kv") -> Graph:
    """Host-only: the first T tokens of a window in one call instead of T steps (a prompt and the SOT
    sequence, or those and a draft to check): x [1,T,d], cross K/V (or F), mask [1,1,T,T] -> logits
    [1,T,V] of every position, new_k/new_v [L,1,T,d] (what the T steps would write into the cache); with
    `alignment_heads`, also their cross-attention [n_heads,T,A]."""
    heads = sorted((int(a), int(b)) for a, b in alignment_heads)
    g = Graph("whisper_decoder_prefill" + ("_attention" if heads else ""), "host-only batched prefill")
    d, V = dims.n_text_state, dims.n_vocab
    x, keys, values, picked = _causal_decoder(g, p, dims, cross, heads)
    logits = g.linear(_ln(g, x, p, "decoder.ln"), _param(g, p, "decoder.token_embedding.weight"))
    g.output(g.reshape(logits, [1, -1, V]), "logits")
    for name, rows in (("new_k", keys), ("new_v", values)):
        g.output(g.concat([g.reshape(r, [1, 1, -1, d]) for r in rows], axis=0), name)
    if picked:
        g.output(g.concat(picked, axis=0) if len(picked) > 1 else picked[0], "attention")
    return g
