"""Whisper in "MTK form", in NumPy: the reference for what the MT8371 graphs compute.

MDLA 5.3 has no GATHER, no tril/triu, no rank-5 tensors and no dynamic shapes, so:
- token and positional embeddings are looked up on the CPU by the caller (`embed()`);
- the self-attention cache is 4D, [layers, 1, 448, d_model], heads packed along d_model;
- the step graph sees all 448 cache slots plus the current token (449 keys) and an
  additive mask (0 allowed, -1e9 hidden) hides the unused slots;
- cross-attention K/V are computed once per 30 s window by the encoder graph; or, in the absorbed
  form (`cross="absorbed"`), the encoder's output F is the only cross state and the step folds the
  key and value projections into the query and output sides (core/model/layers.py, AbsorbedCross);
- the LM head is a fully connected layer with the tied embedding matrix.
"""
from __future__ import annotations

import numpy as np

from core.model.alignment import alignment_heads
from core.model.backend import Backend, check_cross
from core.model.dims import FULL_WINDOW_S, WINDOWS_S, ModelDims
from core.model.layers import (
    Conv1d,
    DecoderBlock,
    EncoderBlock,
    LayerNorm,
    Linear,
    gelu,
    rounded,
)
from core.model.weights import WhisperWeights

NEG_INF = np.float32(-1e9)


class NumpyBackend:
    """The MTK-form graphs computed with NumPy in fp32 (satisfies core.model.backend.Backend)."""

    name = "numpy"
    windows = WINDOWS_S

    def __init__(self, weights: WhisperWeights, cross: str = "kv"):
        """`cross`: kv (encode gives cross_k, cross_v) or absorbed (encode gives F, None)."""
        self.cross = check_cross(cross)
        self.dims: ModelDims = weights.dims
        self.sha256 = weights.sha256
        p, d = weights.params, weights.dims
        self.token_embedding = p["decoder.token_embedding.weight"]
        self.positional_embedding = p["decoder.positional_embedding"]
        self.conv1 = Conv1d.from_params(p, "encoder.conv1", stride=1)
        self.conv2 = Conv1d.from_params(p, "encoder.conv2", stride=2)
        self.audio_positional_embedding = p["encoder.positional_embedding"]
        self.encoder_blocks = [EncoderBlock.from_params(p, f"encoder.blocks.{i}", d.n_audio_head)
                               for i in range(d.n_audio_layer)]
        self.ln_post = LayerNorm.from_params(p, "encoder.ln_post")
        self.decoder_blocks = [DecoderBlock.from_params(p, f"decoder.blocks.{i}", d.n_text_head, cross)
                               for i in range(d.n_text_layer)]
        self.ln = LayerNorm.from_params(p, "decoder.ln")
        self.lm_head = Linear(np.ascontiguousarray(self.token_embedding.T))   # tied: no gather
        self.alignment_heads = alignment_heads(d, weights.files)

    # --- encoder graph: mel [1, 80, 3000] -> cross_k, cross_v [L, 1, 1500, d] (absorbed: F, None) ---
    def encode_features(self, mel: np.ndarray) -> np.ndarray:
        """mel [1, 80, 2A'] -> [A', d]: a window of A' positions adds the positional table's first A' rows."""
        x = np.asarray(mel, dtype=np.float32).reshape(self.dims.n_mels, -1)
        x = gelu(self.conv1(x))
        x = gelu(self.conv2(x)).T
        x = rounded(x + self.audio_positional_embedding[:x.shape[0]])
        for block in self.encoder_blocks:
            x = block(x)
        return self.ln_post(x)  # [A', d]

    def encode(self, mel: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return self.encode_window(mel, FULL_WINDOW_S)

    def encode_window(self, mel: np.ndarray, window_s: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The cross state of the mel's first `window_s` (core.model.backend.WindowBackend): [L, 1, A', d]."""
        frames = self.dims.window_frames(window_s)
        feats = self.encode_features(np.asarray(mel).reshape(self.dims.n_mels, -1)[:, :frames])
        if self.cross == "absorbed":
            return feats[None, None], None                                      # F [1, 1, A, d]
        ks = [block.cross.attn.key(feats) for block in self.decoder_blocks]
        vs = [block.cross.attn.value(feats) for block in self.decoder_blocks]
        return np.stack(ks)[:, None], np.stack(vs)[:, None]

    def _cross_of(self, cross_k: np.ndarray, cross_v: np.ndarray | None, layer: int):
        """Layer `layer`'s view of the window's cross state: its K and V, or F (shared by every layer)."""
        if self.cross == "absorbed":
            return cross_k.reshape(cross_k.shape[-2], -1), None
        return cross_k[layer, 0], cross_v[layer, 0]

    def _logits(self, x: np.ndarray) -> np.ndarray:
        """The LM head: a fully connected layer with the tied embedding, [1,1,V]."""
        return self.lm_head(self.ln(x)).reshape(1, 1, -1)

    # --- decoder step graph ---------------------------------------------------------------------
    def step(self, x: np.ndarray, self_k: np.ndarray, self_v: np.ndarray, cross_k: np.ndarray,
             cross_v: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """x [1,1,d], self_k/v [L,1,448,d], cross_k/v [L,1,1500,d] (absorbed: F [1,1,1500,d], None),
        mask [1,1,1,449] -> logits [1,1,V], new_k/new_v [L,1,1,d]."""
        return self._step(x, self_k, self_v, cross_k, cross_v, mask, ())[:3]

    def step_with_attention(self, x: np.ndarray, self_k: np.ndarray, self_v: np.ndarray, cross_k: np.ndarray,
                            cross_v: np.ndarray, mask: np.ndarray):
        """step(), and the cross-attention weights of `alignment_heads`, [n_heads, 1, A] in (layer, head) order."""
        return self._step(x, self_k, self_v, cross_k, cross_v, mask, self.alignment_heads)

    def _step(self, x, self_k, self_v, cross_k, cross_v, mask, heads):
        x = x.reshape(1, -1).astype(np.float32)
        m = mask.reshape(1, -1)
        new_k = np.empty((len(self.decoder_blocks), 1, 1, x.shape[-1]), np.float32)
        new_v = np.empty_like(new_k)
        probs = []
        for i, block in enumerate(self.decoder_blocks):
            cross = self._cross_of(cross_k, cross_v, i)
            x, new_k[i, 0], new_v[i, 0], p = block.step(x, self_k[i, 0], self_v[i, 0], *cross, m)
            probs.append(p)
        attn = np.stack([probs[layer][head] for layer, head in heads]) if heads else None
        return self._logits(x), new_k, new_v, attn

    # --- uncached reference: the whole sequence every step ----------------------------------------
    def full(self, x: np.ndarray, cross_k: np.ndarray, cross_v: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """x [1,T,d] (embeddings of all tokens so far), mask [1,1,T,T] -> logits of the last token [1,1,V]."""
        x = x.reshape(x.shape[-2], -1).astype(np.float32)
        m = mask.reshape(x.shape[0], x.shape[0])
        for i, block in enumerate(self.decoder_blocks):
            x = block(x, *self._cross_of(cross_k, cross_v, i), m)
        return self._logits(x[-1:])


def embed(backend: Backend, tokens: list[int], start: int) -> np.ndarray:
    """CPU-side lookups: token embedding plus positional embedding, [1, len(tokens), d]."""
    ids = np.asarray(tokens)
    x = backend.token_embedding[ids] + backend.positional_embedding[start:start + len(ids)]
    return x[None].astype(np.float32)


def causal_mask(n_ctx: int) -> np.ndarray:
    """The precomputed [n_ctx, n_ctx] additive causal mask (no tril on the NPU)."""
    return np.triu(np.full((n_ctx, n_ctx), NEG_INF, np.float32), 1)
