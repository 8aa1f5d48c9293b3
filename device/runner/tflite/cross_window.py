"""A shorter encoder window's cross state in a board's fixed-shape step (the tflite and dla backends).

The step graph keeps its 1500 audio positions (MDLA: no dynamic shapes); a `window_s` window's cross state of
A' positions fills the first A', zeros the rest, and the step's `cross_mask` input, added to every layer's
cross-attention scores, hides the rest (device/graphs/whisper.py), so the step attends to the window alone as the
host backends do (core.model.backend.WindowBackend).
"""
from __future__ import annotations

import numpy as np


def padded(state: np.ndarray, positions: int) -> np.ndarray:
    """[L, 1, A', d] -> [L, 1, positions, d], zeros after A' (the array itself when A' is all of them)."""
    if state.shape[2] == positions:
        return state
    out = np.zeros(state.shape[:2] + (positions,) + state.shape[3:], state.dtype)
    out[:, :, :state.shape[2]] = state
    return out


class CrossWindow:
    """The padded cross state and its mask for the step, made once per window: the same arrays are handed back
    while the decoder passes the same cross state, so a backend that feeds it once per window still does."""

    def __init__(self, positions: int, hidden: float):
        self.positions, self.hidden = positions, np.float32(hidden)
        self._last: tuple | None = None

    def feed(self, cross_k: np.ndarray, cross_v: np.ndarray | None) -> tuple:
        """(cross_k, cross_v, cross_mask [1,1,1,positions]) for the step."""
        last = self._last
        if last is None or last[0] is not cross_k or last[1] is not cross_v:
            mask = np.zeros((1, 1, 1, self.positions), np.float32)
            mask[..., cross_k.shape[2]:] = self.hidden
            pads = tuple(None if a is None else padded(a, self.positions) for a in (cross_k, cross_v))
            self._last = last = (cross_k, cross_v, *pads, mask)
        return last[2:]
