"""A loaded model ready to decode: weights, backend and tokenizer together."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from core.decode.decoding import DecodeOptions, decode_windows
from core.decode.events import Event
from core.model.encoder_cache import EncoderCache
from core.model.tokenizer import WhisperTokenizer
from core.model.weights import WhisperWeights, load_model
from core.model.whisper import NumpyBackend


@dataclass
class LoadedModel:
    weights: WhisperWeights
    backend: object
    tokenizer: WhisperTokenizer

    @classmethod
    def load(cls, path: str | Path | None = None, backend_factory=NumpyBackend) -> "LoadedModel":
        weights = load_model(path)
        return cls(weights, backend_factory(weights), WhisperTokenizer.from_weights(weights))

    def transcribe(self, mels: np.ndarray, options: DecodeOptions,
                   should_cancel: Callable[[], bool] = lambda: False,
                   encoder_cache: EncoderCache | None = None, n_frames: int | None = None) -> Iterator[Event]:
        return decode_windows(self.backend, self.tokenizer, mels, options, should_cancel, encoder_cache, n_frames)
