"""The NumPy layers of Whisper in fp32: weight views built once at load, called like modules.

Each projection keeps its weight pre-transposed (`w_t`), so every linear layer is a plain `x @ w_t`.
The op order is the one the exported graphs use (device/graphs/onnx_graphs.py), which keeps the
NumPy reference and the board's tokens identical. Every op's output passes through `rounded`: unchanged in fp32,
and rounded to fp16 inside `core.model.fp16_reference.fp16_ops()`, as the MDLA computes a graph compiled with
--relax-fp32 (fp16 values, fp32 accumulation).
"""
from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

ROUNDING: ContextVar = ContextVar("rounding", default=None)   # None: fp32; else a function applied to op outputs


def rounded(x: np.ndarray) -> np.ndarray:
    """An op's output under the arithmetic in force (ROUNDING)."""
    f = ROUNDING.get()
    return x if f is None else f(x)


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
    return rounded(e)


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(-1, keepdims=True)
    return rounded(xc / np.sqrt(var + np.float32(eps)) * w + b)


def softmax(x: np.ndarray) -> np.ndarray:
    """In place over the last axis."""
    x -= x.max(-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(-1, keepdims=True)
    return rounded(x)


def _heads(x: np.ndarray, n_head: int) -> np.ndarray:
    """[T, d] -> [H, T, d/H]: heads are packed along d_model in the 4D cache."""
    t, d = x.shape
    return np.ascontiguousarray(x.reshape(t, n_head, d // n_head).transpose(1, 0, 2))


def attention_weights(q: np.ndarray, k: np.ndarray, n_head: int, mask: np.ndarray | None = None) -> np.ndarray:
    """q [Tq, d], k [Tk, d], mask additive [Tq, Tk] -> softmax weights [H, Tq, Tk]."""
    scale = np.float32((q.shape[-1] // n_head) ** -0.5)
    scores = rounded(_heads(q * scale, n_head) @ _heads(k, n_head).transpose(0, 2, 1))
    if mask is not None:
        scores += mask
    return softmax(scores)


def attend(probs: np.ndarray, v: np.ndarray) -> np.ndarray:
    """probs [H, Tq, Tk], v [Tk, d] -> [Tq, d]."""
    out = rounded(probs @ _heads(v, probs.shape[0]))
    return out.transpose(1, 0, 2).reshape(probs.shape[1], -1)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, n_head: int, mask: np.ndarray | None = None) -> np.ndarray:
    """q [Tq, d], k/v [Tk, d], mask additive [Tq, Tk] -> [Tq, d]."""
    return attend(attention_weights(q, k, n_head, mask), v)


@dataclass(frozen=True)
class Linear:
    w_t: np.ndarray               # [in, out]
    b: np.ndarray | None = None   # Whisper's attention keys have no bias

    @classmethod
    def from_params(cls, p: dict[str, np.ndarray], name: str) -> "Linear":
        return cls(np.ascontiguousarray(p[name + ".weight"].T), p.get(name + ".bias"))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        y = x @ self.w_t
        return rounded(y + self.b if self.b is not None else y)


@dataclass(frozen=True)
class LayerNorm:
    w: np.ndarray
    b: np.ndarray

    @classmethod
    def from_params(cls, p: dict[str, np.ndarray], name: str) -> "LayerNorm":
        return cls(p[name + ".weight"], p[name + ".bias"])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return layer_norm(x, self.w, self.b)


@dataclass(frozen=True)
class Conv1d:
    """Kernel 3, padding 1, as im2col and one matmul: x [in, T] -> [out, T / stride]."""
    w: np.ndarray                 # [out, in, 3]
    b: np.ndarray
    stride: int

    @classmethod
    def from_params(cls, p: dict[str, np.ndarray], name: str, stride: int) -> "Conv1d":
        return cls(p[name + ".weight"], p[name + ".bias"], stride)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        w, s = self.w, self.stride
        xp = np.pad(x, ((0, 0), (1, 1)))
        t_out = (xp.shape[1] - 3) // s + 1
        cols = np.stack([xp[:, k:k + s * (t_out - 1) + 1:s] for k in range(3)], axis=1)  # [in, 3, T]
        return rounded(w.reshape(w.shape[0], -1) @ cols.reshape(-1, t_out) + self.b[:, None])


@dataclass(frozen=True)
class MLP:
    fc1: Linear
    fc2: Linear

    @classmethod
    def from_params(cls, p: dict[str, np.ndarray], name: str) -> "MLP":
        return cls(Linear.from_params(p, name + ".0"), Linear.from_params(p, name + ".2"))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.fc2(gelu(self.fc1(x)))


@dataclass(frozen=True)
class Attention:
    query: Linear
    key: Linear
    value: Linear
    out: Linear
    n_head: int

    @classmethod
    def from_params(cls, p: dict[str, np.ndarray], name: str, n_head: int) -> "Attention":
        q, k, v, o = (Linear.from_params(p, f"{name}.{part}") for part in ("query", "key", "value", "out"))
        return cls(q, k, v, o, n_head)

    def attend(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        return self.out(attention(q, k, v, self.n_head, mask))

    def __call__(self, x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Self-attention over x [T, d]."""
        return self.attend(self.query(x), self.key(x), self.value(x), mask)


@dataclass(frozen=True)
class EncoderBlock:
    attn_ln: LayerNorm
    attn: Attention
    mlp_ln: LayerNorm
    mlp: MLP

    @classmethod
    def from_params(cls, p: dict[str, np.ndarray], name: str, n_head: int) -> "EncoderBlock":
        return cls(LayerNorm.from_params(p, name + ".attn_ln"), Attention.from_params(p, name + ".attn", n_head),
                   LayerNorm.from_params(p, name + ".mlp_ln"), MLP.from_params(p, name + ".mlp"))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = rounded(x + self.attn(self.attn_ln(x)))
        return rounded(x + self.mlp(self.mlp_ln(x)))


def absorbed_weights(p: dict[str, np.ndarray], name: str, n_head: int) -> tuple[np.ndarray, np.ndarray]:
    """The absorbed form's per-head weights of cross-attention `name` (e.g. decoder.blocks.0.cross_attn):
    `<name>.key.absorbed` [H, dh, d], W_k per head scaled by dh**-0.5 (a power of two for Whisper, so
    exact), and `<name>.value.absorbed` [H, d, dh], W_v per head transposed. Taken from `p` when it holds
    them (params read back from an absorbed bundle), else folded from the canonical key/value weights."""
    if name + ".key.absorbed" in p:
        return p[name + ".key.absorbed"], p[name + ".value.absorbed"]
    wk, wv = p[name + ".key.weight"], p[name + ".value.weight"]             # [d, d] each, [out, in]
    d = wk.shape[0]
    dh = d // n_head
    wk_heads = (wk.reshape(n_head, dh, d) * np.float32(dh ** -0.5)).astype(np.float32)
    wv_heads = np.ascontiguousarray(wv.reshape(n_head, dh, d).transpose(0, 2, 1), dtype=np.float32)
    return np.ascontiguousarray(wk_heads), wv_heads


@dataclass(frozen=True)
class KVCross:
    """Cross-attention to the window's cross K/V, which the encoder graph computed once per window."""
    attn: Attention              # its key/value projections run in the encoder, not here

    @classmethod
    def from_params(cls, p: dict[str, np.ndarray], name: str, n_head: int) -> "KVCross":
        return cls(Attention.from_params(p, name, n_head))

    def weights(self, h: np.ndarray, cross_k: np.ndarray) -> np.ndarray:
        """h [T, d] (after cross_attn_ln), cross_k [A, d] -> softmax weights [H, T, A]."""
        return attention_weights(self.attn.query(h), cross_k, self.attn.n_head)

    def context(self, probs: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray) -> np.ndarray:
        """probs [H, T, A], cross_v [A, d] -> the block's cross-attention output [T, d]."""
        return self.attn.out(attend(probs, cross_v))


@dataclass(frozen=True)
class AbsorbedCross:
    """Cross-attention over the encoder output F itself, not per-layer K/V (the MLA "absorb" form):
    per head, q_h·k_hᵀ = (q_h·W_k,h)·Fᵀ, and softmax·(F·W_v,hᵀ + b_v,h) = (softmax·F)·W_v,hᵀ + b_v,h
    because each head's weights sum to 1. A key bias would add q_h·b_k,h to all of a head's scores
    alike, which softmax ignores, so it is dropped (Whisper's keys have none anyway)."""
    query: Linear
    wk: np.ndarray               # [H, dh, d] scaled by dh**-0.5: absorbed_weights
    wv: np.ndarray               # [H, d, dh]
    bv: np.ndarray | None        # [d]
    out: Linear

    @classmethod
    def from_params(cls, p: dict[str, np.ndarray], name: str, n_head: int) -> "AbsorbedCross":
        wk, wv = absorbed_weights(p, name, n_head)
        return cls(Linear.from_params(p, name + ".query"), wk, wv, p.get(name + ".value.bias"),
                   Linear.from_params(p, name + ".out"))

    def weights(self, h: np.ndarray, feats: np.ndarray) -> np.ndarray:
        """h [T, d] (after cross_attn_ln), feats F [A, d] -> softmax weights [H, T, A]."""
        q_abs = rounded(_heads(self.query(h), self.wk.shape[0]) @ self.wk)          # [H, T, d]
        return softmax(rounded(q_abs @ feats.T))

    def context(self, probs: np.ndarray, feats: np.ndarray, cross_v: None = None) -> np.ndarray:
        """probs [H, T, A], F [A, d] (cross_v: None in this form) -> the block's cross-attention output [T, d]."""
        per_head = rounded(rounded(probs @ feats) @ self.wv)                          # [H, T, dh]
        y = per_head.transpose(1, 0, 2).reshape(probs.shape[1], -1)
        return self.out(y + self.bv if self.bv is not None else y)


CROSS_LAYERS = {"kv": KVCross, "absorbed": AbsorbedCross}


@dataclass(frozen=True)
class DecoderBlock:
    """Self-attention (over the KV cache in `step`, over the whole sequence when called), then
    cross-attention (to the window's cross K/V, or to F in the absorbed form), then the MLP.
    `cross_k`/`cross_v` below are the window's cross state as `encode` returned it: in the absorbed
    form cross_k is F [A, d] and cross_v is None."""
    attn_ln: LayerNorm
    attn: Attention
    cross_attn_ln: LayerNorm
    cross: KVCross | AbsorbedCross
    mlp_ln: LayerNorm
    mlp: MLP

    @classmethod
    def from_params(cls, p: dict[str, np.ndarray], name: str, n_head: int, cross: str = "kv") -> "DecoderBlock":
        return cls(LayerNorm.from_params(p, name + ".attn_ln"), Attention.from_params(p, name + ".attn", n_head),
                   LayerNorm.from_params(p, name + ".cross_attn_ln"),
                   CROSS_LAYERS[cross].from_params(p, name + ".cross_attn", n_head),
                   LayerNorm.from_params(p, name + ".mlp_ln"), MLP.from_params(p, name + ".mlp"))

    def __call__(self, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
        """x [T, d], cross_k/v [A, d], mask [T, T] -> [T, d]."""
        x = rounded(x + self.attn(self.attn_ln(x), mask))
        x = rounded(x + self.cross.context(self.cross.weights(self.cross_attn_ln(x), cross_k), cross_k, cross_v))
        return rounded(x + self.mlp(self.mlp_ln(x)))

    def step(self, x: np.ndarray, self_k: np.ndarray, self_v: np.ndarray, cross_k: np.ndarray,
             cross_v: np.ndarray | None, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """x [1, d], self_k/v [C, d] (all cache slots), mask [1, C+1] -> x, this token's k, v [1, d], and
        the cross-attention weights [H, 1, A]."""
        h = self.attn_ln(x)
        q, k, v = self.attn.query(h), self.attn.key(h), self.attn.value(h)
        keys = np.concatenate([self_k, k])  # every cache slot + the current token
        vals = np.concatenate([self_v, v])
        x = rounded(x + self.attn.attend(q, keys, vals, mask))
        probs = self.cross.weights(self.cross_attn_ln(x), cross_k)
        x = rounded(x + self.cross.context(probs, cross_k, cross_v))
        return rounded(x + self.mlp(self.mlp_ln(x))), k, v, probs
