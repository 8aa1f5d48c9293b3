"""Whisper in "MTK form", in NumPy: the reference for what the MT8371 graphs compute.

MDLA 5.3 has no GATHER, no tril/triu, no rank-5 tensors and no dynamic shapes, so:
- token and positional embeddings are looked up on the CPU by the caller (`embed()`);
- the self-attention cache is 4D, [layers, 1, 448, d_model], heads packed along d_model;
- the step graph sees all 448 cache slots plus the current token (449 keys) and an
  additive mask (0 allowed, -1e9 hidden) hides the unused slots;
- cross-attention K/V are computed once per 30 s window by the encoder graph;
- the LM head is a fully connected layer with the tied embedding matrix.
"""
from __future__ import annotations

import numpy as np

from core.model.weights import ModelDims, WhisperWeights

NEG_INF = np.float32(-1e9)


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7): keeps the runner on NumPy alone. In-place
    # float32 arithmetic because the encoder's GELU runs over 1500 x 2048 values per layer.
    f = np.float32
    a = np.abs(x)
    t = f(1.0) / (f(1.0) + f(0.3275911) * a)
    p = f(1.061405429) * t
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        p += f(c)
        p *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    p *= a
    np.subtract(f(1.0), p, out=p)
    p *= np.sign(x)
    return p


def gelu(x: np.ndarray) -> np.ndarray:
    e = _erf(x * np.float32(0.7071067811865476))
    e += np.float32(1.0)
    e *= x
    e *= np.float32(0.5)
    return e


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(-1, keepdims=True)
    return xc / np.sqrt(var + np.float32(eps)) * w + b


def softmax(x: np.ndarray) -> np.ndarray:
    """In place over the last axis."""
    x -= x.max(-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(-1, keepdims=True)
    return x


def _heads(x: np.ndarray, n_head: int) -> np.ndarray:
    """[T, d] -> [H, T, d/H]: heads are packed along d_model in the 4D cache."""
    t, d = x.shape
    return np.ascontiguousarray(x.reshape(t, n_head, d // n_head).transpose(1, 0, 2))


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, n_head: int, mask: np.ndarray | None = None) -> np.ndarray:
    """q [Tq, d], k/v [Tk, d], mask additive [Tq, Tk] -> [Tq, d]."""
    scale = np.float32((q.shape[-1] // n_head) ** -0.5)
    scores = _heads(q * scale, n_head) @ _heads(k, n_head).transpose(0, 2, 1)
    if mask is not None:
        scores += mask
    out = softmax(scores) @ _heads(v, n_head)
    return out.transpose(1, 0, 2).reshape(q.shape[0], -1)


class NumpyBackend:
    """The MTK-form graphs computed with NumPy in fp32."""

    name = "numpy"

    def __init__(self, weights: WhisperWeights):
        self.dims: ModelDims = weights.dims
        self.sha256 = weights.sha256
        p = weights.params
        self.p = p
        self.token_embedding = p["decoder.token_embedding.weight"]
        self.positional_embedding = p["decoder.positional_embedding"]
        self._lm_head = np.ascontiguousarray(self.token_embedding.T)
        # Pre-transposed so every projection is a plain x @ W.
        self._w = {k: np.ascontiguousarray(v.T) for k, v in p.items() if k.endswith(".weight") and v.ndim == 2}

    def _lin(self, x: np.ndarray, name: str) -> np.ndarray:
        y = x @ self._w[name + ".weight"]
        b = self.p.get(name + ".bias")
        return y + b if b is not None else y

    def _mlp(self, x: np.ndarray, blk: str) -> np.ndarray:
        h = layer_norm(x, self.p[blk + ".mlp_ln.weight"], self.p[blk + ".mlp_ln.bias"])
        return self._lin(gelu(self._lin(h, blk + ".mlp.0")), blk + ".mlp.2")

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        return layer_norm(x, self.p[name + ".weight"], self.p[name + ".bias"])

    # --- encoder graph: mel [1, 80, 3000] -> cross_k, cross_v [L, 1, 1500, d] -------------------
    def _conv1d(self, x: np.ndarray, name: str, stride: int) -> np.ndarray:
        w, b = self.p[name + ".weight"], self.p[name + ".bias"]  # [out, in, 3]
        xp = np.pad(x, ((0, 0), (1, 1)))
        t_out = (xp.shape[1] - 3) // stride + 1
        cols = np.stack([xp[:, k:k + stride * (t_out - 1) + 1:stride] for k in range(3)], axis=1)  # [in, 3, T]
        return w.reshape(w.shape[0], -1) @ cols.reshape(-1, t_out) + b[:, None]

    def encode_features(self, mel: np.ndarray) -> np.ndarray:
        x = np.asarray(mel, dtype=np.float32).reshape(self.dims.n_mels, -1)
        x = gelu(self._conv1d(x, "encoder.conv1", 1))
        x = gelu(self._conv1d(x, "encoder.conv2", 2)).T + self.p["encoder.positional_embedding"]
        h_n = self.dims.n_audio_head
        for i in range(self.dims.n_audio_layer):
            blk = f"encoder.blocks.{i}"
            h = self._ln(x, blk + ".attn_ln")
            x = x + self._lin(attention(self._lin(h, blk + ".attn.query"), self._lin(h, blk + ".attn.key"),
                                        self._lin(h, blk + ".attn.value"), h_n), blk + ".attn.out")
            x = x + self._mlp(x, blk)
        return self._ln(x, "encoder.ln_post")  # [1500, d]

    def encode(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        feats = self.encode_features(mel)
        ks, vs = [], []
        for i in range(self.dims.n_text_layer):
            blk = f"decoder.blocks.{i}.cross_attn"
            ks.append(self._lin(feats, blk + ".key"))
            vs.append(self._lin(feats, blk + ".value"))
        return np.stack(ks)[:, None], np.stack(vs)[:, None]

    # --- decoder: the pieces the step graph and the uncached reference share ------------------------
    def _cross_attention_and_mlp(self, x: np.ndarray, i: int, cross_k: np.ndarray, cross_v: np.ndarray) -> np.ndarray:
        blk = f"decoder.blocks.{i}"
        h = self._ln(x, blk + ".cross_attn_ln")
        q = self._lin(h, blk + ".cross_attn.query")
        x = x + self._lin(attention(q, cross_k[i, 0], cross_v[i, 0], self.dims.n_text_head), blk + ".cross_attn.out")
        return x + self._mlp(x, blk)

    def _logits(self, x: np.ndarray) -> np.ndarray:
        """The LM head: a fully connected layer with the tied embedding (no gather), [1,1,V]."""
        return (self._ln(x, "decoder.ln") @ self._lm_head).reshape(1, 1, -1)

    # --- decoder step graph ---------------------------------------------------------------------
    def step(self, x: np.ndarray, self_k: np.ndarray, self_v: np.ndarray, cross_k: np.ndarray,
             cross_v: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """x [1,1,d], self_k/v [L,1,448,d], cross_k/v [L,1,1500,d], mask [1,1,1,449]
        -> logits [1,1,V], new_k/new_v [L,1,1,d]."""
        h_n, n_layer = self.dims.n_text_head, self.dims.n_text_layer
        x = x.reshape(1, -1).astype(np.float32)
        m = mask.reshape(1, -1)
        new_k = np.empty((n_layer, 1, 1, x.shape[-1]), np.float32)
        new_v = np.empty_like(new_k)
        for i in range(n_layer):
            blk = f"decoder.blocks.{i}"
            h = self._ln(x, blk + ".attn_ln")
            q, k, v = (self._lin(h, blk + ".attn.query"), self._lin(h, blk + ".attn.key"),
                       self._lin(h, blk + ".attn.value"))
            new_k[i, 0], new_v[i, 0] = k, v
            keys = np.concatenate([self_k[i, 0], k])  # 448 cache slots + the current token
            vals = np.concatenate([self_v[i, 0], v])
            x = x + self._lin(attention(q, keys, vals, h_n, m), blk + ".attn.out")
            x = self._cross_attention_and_mlp(x, i, cross_k, cross_v)
        return self._logits(x), new_k, new_v

    # --- uncached reference: the whole sequence every step ----------------------------------------
    def full(self, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """x [1,T,d] (embeddings of all tokens so far), mask [1,1,T,T] -> logits of the last token [1,1,V]."""
        h_n = self.dims.n_text_head
        x = x.reshape(x.shape[-2], -1).astype(np.float32)
        m = mask.reshape(x.shape[0], x.shape[0])
        for i in range(self.dims.n_text_layer):
            blk = f"decoder.blocks.{i}"
            h = self._ln(x, blk + ".attn_ln")
            x = x + self._lin(attention(self._lin(h, blk + ".attn.query"), self._lin(h, blk + ".attn.key"),
                                        self._lin(h, blk + ".attn.value"), h_n, m), blk + ".attn.out")
            x = self._cross_attention_and_mlp(x, i, cross_k, cross_v)
        return self._logits(x[-1:])


def embed(backend, tokens: list[int], start: int) -> np.ndarray:
    """CPU-side lookups: token embedding plus positional embedding, [1, len(tokens), d]."""
    ids = np.asarray(tokens)
    x = backend.token_embedding[ids] + backend.positional_embedding[start:start + len(ids)]
    return x[None].astype(np.float32)


def causal_mask(n_ctx: int) -> np.ndarray:
    """The precomputed [n_ctx, n_ctx] additive causal mask (no tril on the NPU)."""
    return np.triu(np.full((n_ctx, n_ctx), NEG_INF, np.float32), 1)
