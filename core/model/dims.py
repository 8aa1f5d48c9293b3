"""The shape of a Whisper model: what every graph, cache and runner reads, without loading any weights."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelDims:
    n_mels: int = 80
    n_audio_ctx: int = 1500
    n_audio_state: int = 512
    n_audio_head: int = 8
    n_audio_layer: int = 6
    n_vocab: int = 51865
    n_text_ctx: int = 448
    n_text_state: int = 512
    n_text_head: int = 8
    n_text_layer: int = 6

    def cache_bytes_per_token(self, itemsize: int = 4) -> int:
        """Self-attention K and V of one token over every decoder layer (fp32 by default)."""
        return 2 * self.n_text_layer * self.n_text_state * itemsize
