"""The shape of a Whisper model: what every graph, cache and runner reads, without loading any weights."""
from __future__ import annotations

from dataclasses import dataclass, replace

# The encoder windows a backend may serve, in seconds, shortest first: Whisper's own 30 s and shorter ones made with
# the same weights and the first rows of the positional table, as whisper.cpp's `audio_ctx` does
# (github.com/ggml-org/whisper.cpp, `whisper_full_params.audio_ctx`) and MTK_model_zoo's 10 s encoder
# (whisper/mtk/python/README.md). Every list of lengths (the runner's hello, the host's choice) reads this one.
WINDOWS_S = (10, 20, 30)
FULL_WINDOW_S = WINDOWS_S[-1]


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

    @property
    def frames_per_position(self) -> int:
        """Mel frames per encoder position: the encoder's second convolution has stride 2."""
        return 2

    def audio_positions(self, window_s: int) -> int:
        """Encoder positions of a `window_s` window: 50 a second for Whisper (1500 in 30 s)."""
        if window_s not in WINDOWS_S:
            raise ValueError(f"no {window_s} s window: the windows are {', '.join(map(str, WINDOWS_S))} s")
        return self.n_audio_ctx * window_s // FULL_WINDOW_S

    def window_frames(self, window_s: int) -> int:
        """Mel frames a `window_s` window encodes: the first of the [1, 80, 3000] window (100 a second)."""
        return self.frames_per_position * self.audio_positions(window_s)

    def for_window(self, window_s: int) -> "ModelDims":
        """These dims with the encoder's context cut to a `window_s` window (the graphs of that window)."""
        return replace(self, n_audio_ctx=self.audio_positions(window_s))

    def cache_bytes_per_token(self, itemsize: int = 4) -> int:
        """Self-attention K and V of one token over every decoder layer (fp32 by default)."""
        return 2 * self.n_text_layer * self.n_text_state * itemsize
